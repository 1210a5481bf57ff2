//! Small context and device entry points: `cuCtxGetId`, `cuGreenCtxGetId`,
//! `cuCtxSetFlags`, `cuCtxResetPersistingL2Cache`, `cuCtxGetExecAffinity`,
//! `cuDeviceGetExecAffinitySupport`, `cuDeviceComputeCapability`, `cuDeviceGetProperties`,
//! `cuDeviceGetTexture1DLinearMaxWidth`, `cuDeviceGetLuid`,
//! `cuDeviceGetHostAtomicCapabilities`, `cuDeviceGetP2PAtomicCapabilities` and
//! `cuFlushGPUDirectRDMAWrites`. The coredump, log and notification entries are in
//! `coredump_logs.rs`.
//!
//! Answers follow the CUDA documentation and the H200 (an H200 without MPS: execution
//! affinity is not supported); those not yet recorded on the H200 are pending conformance
//! cases (`conformance/src/cases/ctx_device_misc.rs`).

use std::ffi::{c_char, c_int, c_uint, c_ulonglong};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::model::context::Context;
use crate::model::device::{DEVICE_CC, DEVICE_SM_COUNT};
use crate::run::lock::lock;
use crate::world::World;

/// `ctx`, or the current context for NULL (CUDA_ERROR_INVALID_CONTEXT with none); a live
/// one (CUDA_ERROR_CONTEXT_IS_DESTROYED otherwise).
fn context_arg(w: &World, ctx: CUcontext) -> Result<Arc<Context>, CUresult> {
    let c = match from_ptr(ctx) {
        0 => w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?,
        h => w.contexts.lookup(h)?,
    };
    c.alive()?;
    Ok(c)
}

/// A context's ID: its handle, which no other object of the process ever has (handles are
/// never reused), so it is unique for the process's life as the documentation requires.
fn id_of(c: &Context) -> c_ulonglong {
    c.handle
}

/// `cuCtxGetId`: the ID of `ctx` (NULL: the current context). CUDA_ERROR_INVALID_VALUE for
/// a null `id`, CUDA_ERROR_INVALID_CONTEXT without a context, CUDA_ERROR_CONTEXT_IS_DESTROYED
/// for a destroyed one; nothing is written on error.
pub(crate) unsafe fn cu_ctx_get_id(w: &World, ctx: CUcontext, id: *mut c_ulonglong) -> CUresult {
    status(non_null(id).and_then(|()| write(id, id_of(&*context_arg(w, ctx)?))))
}

/// `cuGreenCtxGetId`: the ID of the green context's own context (what `cuCtxGetId` answers
/// for the context `cuCtxFromGreenCtx` gives). A null `id` is CUDA_ERROR_INVALID_VALUE; an
/// unknown or destroyed green context answers as `cuCtxFromGreenCtx` does.
pub(crate) unsafe fn cu_green_ctx_get_id(w: &World, g: CUgreenCtx, id: *mut c_ulonglong) -> CUresult {
    let r = non_null(id).and_then(|()| {
        if g.is_null() {
            // As the driver answered (`ctx_misc.green_id_null_green`).
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        let ctx = Arc::clone(&lock(&w.greens).greens.get(from_ptr(g))?.ctx);
        write(id, id_of(&ctx))
    });
    status(r)
}

/// `cuCtxSetFlags`: replaces the current context's flags, those `cuCtxGetFlags` reports, as
/// the driver does (`ctx_misc.set_flags_*`): `CU_CTX_MAP_HOST` is not taken (a created
/// context's flags read without it; a primary context reports it always), and a primary
/// context's device state (`cuDevicePrimaryCtxGetState`) keeps its flags. The flags change
/// nothing else: the stand-in has one way to wait. A flag outside `CU_CTX_FLAGS_MASK` or
/// two scheduling flags are CUDA_ERROR_INVALID_VALUE, changing nothing.
pub(crate) unsafe fn cu_ctx_set_flags(w: &World, flags: c_uint) -> CUresult {
    let r = w.contexts.current().and_then(|c| {
        let sched = flags & CUctx_flags::CU_CTX_SCHED_MASK.0;
        if flags & !CUctx_flags::CU_CTX_FLAGS_MASK.0 != 0 || sched.count_ones() > 1 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        c.set_flags(flags & !CUctx_flags::CU_CTX_MAP_HOST.0);
        Ok(())
    });
    status(r)
}

/// `cuCtxResetPersistingL2Cache`: succeeds in a usable current context; the stand-in keeps
/// no L2 lines, so there is nothing to reset.
pub(crate) unsafe fn cu_ctx_reset_persisting_l2_cache(w: &World) -> CUresult {
    status(w.contexts.current().map(|_| ()))
}

/// `cuCtxGetExecAffinity` (`CU_EXEC_AFFINITY_TYPE_SM_COUNT`, the only type): the SMs the
/// current context may use, all of the device's (132). As the driver answered
/// (`ctx_misc.exec_affinity_*`): a null `param` is CUDA_ERROR_INVALID_VALUE, another type
/// CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, and a green context's context
/// CUDA_ERROR_INVALID_CONTEXT; nothing is written on error.
pub(crate) unsafe fn cu_ctx_get_exec_affinity(
    w: &World,
    param: *mut CUexecAffinityParam,
    kind: CUexecAffinityType,
) -> CUresult {
    let r = non_null(param).and_then(|()| {
        let c = w.contexts.current()?;
        if kind != CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT {
            return Err(CUresult::CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
        }
        if lock(&w.greens).of_context(c.handle) != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        let sms = DEVICE_SM_COUNT.unsigned_abs();
        let param_value = CUexecAffinityParam_st__bindgen_ty_1 { smCount: CUexecAffinitySmCount { val: sms } };
        write(param, CUexecAffinityParam { type_: kind, param: param_value })
    });
    status(r)
}

/// `cuDeviceGetExecAffinitySupport`: 0, as an H200 without MPS answers (execution affinity
/// is an MPS feature), for an unknown type too (as the driver answered:
/// `device_misc.exec_affinity_support_bad_type`). CUDA_ERROR_INVALID_DEVICE for a device the
/// world lacks, CUDA_ERROR_INVALID_VALUE for a null `pi`.
pub(crate) unsafe fn cu_device_get_exec_affinity_support(
    w: &World,
    pi: *mut c_int,
    kind: CUexecAffinityType,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let _ = kind;
    status(write(pi, 0))
}

/// `cuDeviceComputeCapability` (deprecated, still answered by 13.0): 9.0.
pub(crate) unsafe fn cu_device_compute_capability(
    w: &World,
    major: *mut c_int,
    minor: *mut c_int,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let r = non_null(major).and_then(|()| {
        non_null(minor)?;
        write(major, DEVICE_CC.0)?;
        write(minor, DEVICE_CC.1)
    });
    status(r)
}

/// `cuDeviceGetProperties` (deprecated, still answered by 13.0): the matching device
/// attributes (`device_attributes.rs`), `SIMDWidth` being the warp size.
pub(crate) unsafe fn cu_device_get_properties(w: &World, prop: *mut CUdevprop, dev: CUdevice) -> CUresult {
    use CUdevice_attribute as A;
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let version = w.version.load(Ordering::Acquire);
    let a = |attribute: A| crate::device_attributes::value(version, attribute, dev).unwrap_or(0);
    let p = CUdevprop {
        maxThreadsPerBlock: a(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        maxThreadsDim: [
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X),
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
            a(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z),
        ],
        maxGridSize: [
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
            a(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z),
        ],
        sharedMemPerBlock: a(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
        totalConstantMemory: a(A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY),
        SIMDWidth: a(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE),
        memPitch: a(A::CU_DEVICE_ATTRIBUTE_MAX_PITCH),
        regsPerBlock: a(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK),
        clockRate: a(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
        textureAlign: a(A::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT),
    };
    status(write(prop, p))
}

/// The widest 1D texture bound to linear memory, in elements, as the driver answered
/// (`device_misc.texture1d_linear_max_width_*`, docs/gpu-runs/h100/
/// conformance-pending-2026-12-05.txt): 2^30 elements, and no more than 4 GiB, for an element
/// of `format` and `channels`.
fn texture1d_linear_max_width(format: CUarray_format, channels: c_uint) -> Option<usize> {
    use CUarray_format as F;
    // The normalised formats carry their channel count in their name; the driver accepts
    // the one-byte single-channel one with 1 channel (recorded) and is assumed to take its
    // kin alike.
    let bytes = match format {
        F::CU_AD_FORMAT_UNORM_INT8X1 | F::CU_AD_FORMAT_SNORM_INT8X1 => Some(1),
        F::CU_AD_FORMAT_UNORM_INT8X2
        | F::CU_AD_FORMAT_SNORM_INT8X2
        | F::CU_AD_FORMAT_UNORM_INT16X1
        | F::CU_AD_FORMAT_SNORM_INT16X1 => Some(2),
        F::CU_AD_FORMAT_UNORM_INT8X4
        | F::CU_AD_FORMAT_SNORM_INT8X4
        | F::CU_AD_FORMAT_UNORM_INT16X2
        | F::CU_AD_FORMAT_SNORM_INT16X2 => Some(4),
        F::CU_AD_FORMAT_UNORM_INT16X4 | F::CU_AD_FORMAT_SNORM_INT16X4 => Some(8),
        other => crate::model::array::format_bytes(other),
    }?;
    if !matches!(channels, 1 | 2 | 4) {
        return None;
    }
    let element = bytes * channels as usize;
    Some((1usize << 30).min((1usize << 32) / element))
}

/// `cuDeviceGetTexture1DLinearMaxWidth`: [`texture1d_linear_max_width`] for a known format
/// and 1, 2 or 4 channels; otherwise CUDA_ERROR_INVALID_VALUE, writing nothing.
pub(crate) unsafe fn cu_device_get_texture_1d_linear_max_width(
    w: &World,
    width: *mut usize,
    format: CUarray_format,
    channels: c_uint,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    match texture1d_linear_max_width(format, channels) {
        Some(max) => status(write(width, max)),
        None => CUresult::CUDA_ERROR_INVALID_VALUE,
    }
}

/// `cuDeviceGetLuid`: a LUID exists on Windows only (the documentation: it matches a device
/// with Direct3D); on Linux the driver answers CUDA_ERROR_NOT_SUPPORTED, after the usual
/// argument checks (CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_VALUE). Writes nothing.
pub(crate) unsafe fn cu_device_get_luid(w: &World, luid: *mut c_char, mask: *mut c_uint, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    if luid.is_null() || mask.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// The capabilities (`CUatomicOperationCapability` bits) of `op` over a link that carries
/// atomics natively: integer and bitwise operations signed and unsigned, 32 and 64 bits,
/// also as reductions; increment and decrement unsigned 32 bits; exchange and
/// compare-and-swap also 128 bits; float ones 32 and 64 bits. `None` for an unknown
/// operation.
fn native_capabilities(op: CUatomicOperation) -> Option<c_uint> {
    use CUatomicOperation as O;
    use CUatomicOperationCapability as C;
    let scalar = C::CU_ATOMIC_CAPABILITY_SCALAR_32.0 | C::CU_ATOMIC_CAPABILITY_SCALAR_64.0;
    let signed = C::CU_ATOMIC_CAPABILITY_SIGNED.0 | C::CU_ATOMIC_CAPABILITY_UNSIGNED.0;
    let reduction = C::CU_ATOMIC_CAPABILITY_REDUCTION.0;
    let caps = match op {
        O::CU_ATOMIC_OPERATION_INTEGER_ADD
        | O::CU_ATOMIC_OPERATION_INTEGER_MIN
        | O::CU_ATOMIC_OPERATION_INTEGER_MAX => signed | scalar | reduction,
        O::CU_ATOMIC_OPERATION_INTEGER_INCREMENT | O::CU_ATOMIC_OPERATION_INTEGER_DECREMENT => {
            C::CU_ATOMIC_CAPABILITY_UNSIGNED.0 | C::CU_ATOMIC_CAPABILITY_SCALAR_32.0 | reduction
        }
        O::CU_ATOMIC_OPERATION_AND | O::CU_ATOMIC_OPERATION_OR | O::CU_ATOMIC_OPERATION_XOR => {
            signed | scalar | reduction
        }
        O::CU_ATOMIC_OPERATION_EXCHANGE | O::CU_ATOMIC_OPERATION_CAS => {
            signed | scalar | C::CU_ATOMIC_CAPABILITY_SCALAR_128.0
        }
        O::CU_ATOMIC_OPERATION_FLOAT_ADD | O::CU_ATOMIC_OPERATION_FLOAT_MIN | O::CU_ATOMIC_OPERATION_FLOAT_MAX => {
            scalar | reduction
        }
        _ => return None,
    };
    Some(caps)
}

/// Writes, for each of the `count` operations, `native_capabilities` when `native` and
/// 0 otherwise (0 for an unknown operation too). CUDA_ERROR_INVALID_VALUE, writing nothing,
/// for null arrays or a count of 0; after writing, for an unknown operation (the driver
/// wrote 0 for one: `device_misc.host_atomic_capabilities_bad_op`).
///
/// # Safety
/// `caps` and `ops` are null or hold `count` elements.
unsafe fn put_capabilities(caps: *mut c_uint, ops: *const CUatomicOperation, count: c_uint, native: bool) -> CUresult {
    if caps.is_null() || ops.is_null() || count == 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let n = count as usize;
    // SAFETY: `ops` holds `count` operations (the caller's contract).
    let ops = unsafe { std::slice::from_raw_parts(ops, n) };
    // SAFETY: `caps` has room for `count` values (the caller's contract).
    let caps = unsafe { std::slice::from_raw_parts_mut(caps, n) };
    let mut unknown = false;
    for (c, &op) in caps.iter_mut().zip(ops) {
        let found = native_capabilities(op);
        unknown |= found.is_none();
        *c = if native { found.unwrap_or(0) } else { 0 };
    }
    if unknown {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    CUresult::CUDA_SUCCESS
}

/// `cuDeviceGetHostAtomicCapabilities` (13.0): none over the host link, as the H200's
/// `HOST_NATIVE_ATOMIC_SUPPORTED` reads 0 and the driver answered
/// (`device_misc.host_atomic_capabilities`).
pub(crate) unsafe fn cu_device_get_host_atomic_capabilities(
    w: &World,
    caps: *mut c_uint,
    ops: *const CUatomicOperation,
    count: c_uint,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    // SAFETY: the caller's arrays hold `count` elements.
    unsafe { put_capabilities(caps, ops, count, false) }
}

/// `cuDeviceGetP2PAtomicCapabilities` (13.0): between two different devices of the world,
/// the native capabilities (the stand-in reports peer native atomics supported,
/// `peer.rs`); the same device twice, or one the world lacks, is CUDA_ERROR_INVALID_DEVICE.
pub(crate) unsafe fn cu_device_get_p2p_atomic_capabilities(
    w: &World,
    caps: *mut c_uint,
    ops: *const CUatomicOperation,
    count: c_uint,
    src: CUdevice,
    dst: CUdevice,
) -> CUresult {
    if !valid_device(w, src) || !valid_device(w, dst) || src == dst {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    // SAFETY: the caller's arrays hold `count` elements.
    unsafe { put_capabilities(caps, ops, count, true) }
}

/// `cuFlushGPUDirectRDMAWrites`: the only target is the current context and the scopes are
/// "to owner" and "to all devices" (another is CUDA_ERROR_INVALID_VALUE); with a usable
/// current context it succeeds: no third party writes into the stand-in's memory, so there
/// is nothing to flush.
pub(crate) unsafe fn cu_flush_gpu_direct_rdma_writes(
    w: &World,
    target: CUflushGPUDirectRDMAWritesTarget,
    scope: CUflushGPUDirectRDMAWritesScope,
) -> CUresult {
    use CUflushGPUDirectRDMAWritesScope as S;
    if target != CUflushGPUDirectRDMAWritesTarget::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX
        || !matches!(
            scope,
            S::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER | S::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES
        )
    {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    status(w.contexts.current().map(|_| ()))
}

/// Whether `dev` is a device ordinal of `w` (as `device::valid_device`, which this file
/// does not import: `device.rs` reaches `table.rs`, which names this file).
fn valid_device(w: &World, dev: CUdevice) -> bool {
    (0..w.device_count()).contains(&dev)
}
