//! Issue 29 item 4, small context and device entries: context and green context IDs,
//! `cuCtxSetFlags`, `cuCtxResetPersistingL2Cache`, execution affinity, the deprecated
//! device queries, `cuDeviceGetTexture1DLinearMaxWidth`, `cuDeviceGetLuid`, the 13.0
//! atomic-capability queries, `cuFlushGPUDirectRDMAWrites`, coredump attributes, the error
//! log and asynchronous notifications. No case turns on user-triggered coredumps (the
//! driver would make a pipe) or creates a multicast object.

use std::ffi::c_void;

use cudrv::call;
use cudrv::sys::*;

use super::{case, made, number, number32, other_context, step, with, Case, Env, Out, UNTOUCHED};

type S = CUcoredumpSettings;
const SM_COUNT: CUexecAffinityType = CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT;
const TARGET: CUflushGPUDirectRDMAWritesTarget =
    CUflushGPUDirectRDMAWritesTarget::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX;
const TO_OWNER: CUflushGPUDirectRDMAWritesScope =
    CUflushGPUDirectRDMAWritesScope::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER;
const TO_ALL: CUflushGPUDirectRDMAWritesScope =
    CUflushGPUDirectRDMAWritesScope::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES;

/// A green context of at least 8 SMs on device 0.
fn green(e: &Env) -> Result<CUgreenCtx, Out> {
    let mut all = CUdevResource::default();
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuDeviceGetDevResource(e.dev, &mut all, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM) };
    made("cuDeviceGetDevResource", st, ())?;
    let (mut group, mut n) = (CUdevResource::default(), 1);
    // SAFETY: one result slot; valid pointers.
    let st = unsafe { e.p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), 0, 8) };
    made("cuDevSmResourceSplitByCount", st, ())?;
    let mut desc: CUdevResourceDesc = std::ptr::null_mut();
    // SAFETY: one resource; a valid out-pointer.
    made("cuDevResourceGenerateDesc", unsafe { e.p.cuDevResourceGenerateDesc(&mut desc, &mut group, 1) }, ())?;
    let mut g: CUgreenCtx = std::ptr::null_mut();
    let flags = CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0;
    // SAFETY: a descriptor from the driver; a valid out-pointer.
    made("cuGreenCtxCreate", unsafe { e.p.cuGreenCtxCreate(&mut g, desc, e.dev, flags) }, g)
}

/// The current context's flags (`cuCtxGetFlags`), or the call's error.
fn flags_now(e: &Env) -> String {
    let mut f = UNTOUCHED as u32;
    // SAFETY: a valid out-pointer.
    match unsafe { e.p.cuCtxGetFlags(&mut f) } {
        CUresult::CUDA_SUCCESS => number32(f),
        st => st.to_string(),
    }
}

/// `cuDeviceGetTexture1DLinearMaxWidth` of device 0 for `format` and `channels`.
fn tex_width(e: &Env, format: CUarray_format, channels: u32) -> Out {
    let mut w = UNTOUCHED as usize;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuDeviceGetTexture1DLinearMaxWidth(&mut w, format, channels, e.dev) };
    Out::of(st).eq("width", number(w as u64))
}

/// A boolean coredump attribute read into one byte (`global`: application-wide).
fn coredump_flag(e: &Env, attrib: S, global: bool) -> String {
    let (mut b, mut size) = (0x5eu8, 1usize);
    let v: *mut c_void = (&raw mut b).cast();
    // SAFETY: one byte at `v`.
    let st = unsafe {
        match global {
            true => e.p.cuCoredumpGetAttributeGlobal(attrib, v, &mut size),
            false => e.p.cuCoredumpGetAttribute(attrib, v, &mut size),
        }
    };
    match st {
        CUresult::CUDA_SUCCESS if b == 0x5e => "untouched".into(),
        CUresult::CUDA_SUCCESS => b.to_string(),
        st => st.to_string(),
    }
}

/// A coredump name attribute read into 1024 bytes.
fn coredump_name(e: &Env, attrib: S, global: bool) -> String {
    let mut buf = [0 as std::ffi::c_char; 1024];
    let mut size = buf.len();
    let v: *mut c_void = buf.as_mut_ptr().cast();
    // SAFETY: `size` bytes at `v`.
    let st = unsafe {
        match global {
            true => e.p.cuCoredumpGetAttributeGlobal(attrib, v, &mut size),
            false => e.p.cuCoredumpGetAttribute(attrib, v, &mut size),
        }
    };
    match st {
        // SAFETY: the driver wrote a NUL-terminated name; the buffer was zeroed.
        CUresult::CUDA_SUCCESS => unsafe { super::text(buf.as_ptr()) },
        st => st.to_string(),
    }
}

/// Sets a boolean coredump attribute to true.
fn set_true(e: &Env, attrib: S, global: bool) -> CUresult {
    let (mut b, mut size) = (1u8, 1usize);
    let v: *mut c_void = (&raw mut b).cast();
    // SAFETY: one byte at `v`.
    unsafe {
        match global {
            true => e.p.cuCoredumpSetAttributeGlobal(attrib, v, &mut size),
            false => e.p.cuCoredumpSetAttribute(attrib, v, &mut size),
        }
    }
}

/// The size the driver says `attrib` takes (value NULL).
fn coredump_size(e: &Env, attrib: S) -> String {
    let mut size = UNTOUCHED as usize;
    // SAFETY: a valid size pointer; value NULL asks for the size.
    match unsafe { e.p.cuCoredumpGetAttributeGlobal(attrib, std::ptr::null_mut(), &mut size) } {
        CUresult::CUDA_SUCCESS => number(size as u64),
        st => st.to_string(),
    }
}

const COREDUMP: &[cudrv::Call] = &[call::cuCoredumpGetAttribute, call::cuCoredumpGetAttributeGlobal];
const LOGS: &[cudrv::Call] = &[call::cuLogsCurrent, call::cuLogsDumpToMemory, call::cuLogsRegisterCallback];
const ASYNC: &[cudrv::Call] = &[call::cuDeviceRegisterAsyncNotification];

unsafe extern "C" fn log_callback(
    _data: *mut c_void,
    _level: CUlogLevel,
    _message: *mut std::ffi::c_char,
    _len: usize,
) {
}
unsafe extern "C" fn async_callback(
    _info: *mut CUasyncNotificationInfo,
    _data: *mut c_void,
    _h: CUasyncCallbackHandle,
) {
}

macro_rules! tex {
    ($name:literal, $format:ident, $channels:literal) => {
        case!($name, Init, |e| { tex_width(e, CUarray_format::$format, $channels) })
    };
}

pub fn cases() -> Vec<Case> {
    [context_cases(), device_cases(), coredump_cases(), log_cases()].concat()
}

fn context_cases() -> Vec<Case> {
    vec![
        case!("ctx_misc.get_id_null_is_current", Ctx, since 12000 &[call::cuCtxGetId], |e| {
            let (mut a, mut b) = (UNTOUCHED, UNTOUCHED);
            step!(e.p.cuCtxGetId(e.ctx, &mut a));
            let st = e.p.cuCtxGetId(std::ptr::null_mut(), &mut b);
            Out::of(st).eq("same", a == b).eq("nonzero", a != 0).info("id", a)
        }),
        case!("ctx_misc.get_id_two_contexts_differ", Ctx, since 12000 &[call::cuCtxGetId], |e| {
            let c = with!(other_context(e));
            let (mut a, mut b) = (UNTOUCHED, UNTOUCHED);
            step!(e.p.cuCtxGetId(e.ctx, &mut a));
            let st = e.p.cuCtxGetId(c, &mut b);
            Out::of(st).eq("differ", a != b).eq("second_greater", b > a).info("first", a).info("second", b)
        }),
        case!("ctx_misc.get_id_null_out", Ctx, since 12000 &[call::cuCtxGetId], |e| {
            Out::of(e.p.cuCtxGetId(e.ctx, std::ptr::null_mut()))
        }),
        case!("ctx_misc.get_id_no_context", Init, since 12000 &[call::cuCtxGetId], |e| {
            let mut id = UNTOUCHED;
            Out::of(e.p.cuCtxGetId(std::ptr::null_mut(), &mut id)).eq("id", number(id))
        }),
        case!("ctx_misc.get_id_destroyed", Ctx, since 12000 &[call::cuCtxGetId], |e| {
            let c = with!(other_context(e));
            step!(e.p.cuCtxDestroy(c));
            let mut id = UNTOUCHED;
            Out::of(e.p.cuCtxGetId(c, &mut id)).eq("id", number(id))
        }),
        case!("ctx_misc.green_id", Init, since 12090 &[call::cuGreenCtxGetId, call::cuGreenCtxCreate], |e| {
            let g = with!(green(e));
            let mut ctx = std::ptr::null_mut();
            step!(e.p.cuCtxFromGreenCtx(&mut ctx, g));
            let (mut gid, mut cid) = (UNTOUCHED, UNTOUCHED);
            step!(e.p.cuCtxGetId(ctx, &mut cid));
            let st = e.p.cuGreenCtxGetId(g, &mut gid);
            Out::of(st).eq("same_as_its_context", gid == cid).info("green", gid).info("context", cid)
        }),
        case!("ctx_misc.green_id_null_out", Init, since 12090 &[call::cuGreenCtxGetId, call::cuGreenCtxCreate], |e| {
            let g = with!(green(e));
            Out::of(e.p.cuGreenCtxGetId(g, std::ptr::null_mut()))
        }),
        case!("ctx_misc.green_id_null_green", Init, since 12090 &[call::cuGreenCtxGetId], |e| {
            let mut id = UNTOUCHED;
            Out::of(e.p.cuGreenCtxGetId(std::ptr::null_mut(), &mut id)).eq("id", number(id))
        }),
        case!("ctx_misc.set_flags_spin_primary", Ctx, since 12010 &[call::cuCtxSetFlags], |e| {
            let st = e.p.cuCtxSetFlags(CUctx_flags::CU_CTX_SCHED_SPIN.0);
            let (mut f, mut active) = (UNTOUCHED as u32, 0);
            let _ = e.p.cuDevicePrimaryCtxGetState(e.dev, &mut f, &mut active);
            Out::of(st).eq("get_flags", flags_now(e)).eq("primary_state_flags", number32(f))
        }),
        case!("ctx_misc.set_flags_created", Ctx, since 12010 &[call::cuCtxSetFlags], |e| {
            let c = with!(other_context(e));
            step!(e.p.cuCtxPushCurrent(c));
            let f = CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0 | CUctx_flags::CU_CTX_LMEM_RESIZE_TO_MAX.0;
            Out::of(e.p.cuCtxSetFlags(f)).eq("get_flags", flags_now(e))
        }),
        case!("ctx_misc.set_flags_map_host_sync_memops", Ctx, since 12010 &[call::cuCtxSetFlags], |e| {
            let c = with!(other_context(e));
            step!(e.p.cuCtxPushCurrent(c));
            let f = CUctx_flags::CU_CTX_MAP_HOST.0 | CUctx_flags::CU_CTX_SYNC_MEMOPS.0;
            Out::of(e.p.cuCtxSetFlags(f)).eq("get_flags", flags_now(e))
        }),
        case!("ctx_misc.set_flags_two_sched", Ctx, since 12010 &[call::cuCtxSetFlags], |e| {
            let f = CUctx_flags::CU_CTX_SCHED_SPIN.0 | CUctx_flags::CU_CTX_SCHED_YIELD.0;
            Out::of(e.p.cuCtxSetFlags(f)).eq("get_flags", flags_now(e))
        }),
        case!("ctx_misc.set_flags_unknown_bit", Ctx, since 12010 &[call::cuCtxSetFlags], |e| {
            Out::of(e.p.cuCtxSetFlags(0x1000)).eq("get_flags", flags_now(e))
        }),
        case!("ctx_misc.set_flags_no_context", Init, since 12010 &[call::cuCtxSetFlags], |e| {
            Out::of(e.p.cuCtxSetFlags(0))
        }),
        case!("ctx_misc.reset_persisting_l2", Ctx, |e| { Out::of(e.p.cuCtxResetPersistingL2Cache()) }),
        case!("ctx_misc.reset_persisting_l2_no_context", Init, |e| { Out::of(e.p.cuCtxResetPersistingL2Cache()) }),
        case!("ctx_misc.exec_affinity_sm_count", Ctx, since 11040 &[call::cuCtxGetExecAffinity], |e| {
            let mut p: CUexecAffinityParam = std::mem::zeroed();
            p.type_ = CUexecAffinityType(77);
            let st = e.p.cuCtxGetExecAffinity(&mut p, SM_COUNT);
            Out::of(st).eq("type", number32(p.type_.0)).eq("sms", p.param.smCount.val)
        }),
        case!("ctx_misc.exec_affinity_green", Init, since 12040 &[call::cuCtxGetExecAffinity, call::cuGreenCtxCreate], |e| {
            let g = with!(green(e));
            let mut ctx = std::ptr::null_mut();
            step!(e.p.cuCtxFromGreenCtx(&mut ctx, g));
            step!(e.p.cuCtxPushCurrent(ctx));
            let mut p: CUexecAffinityParam = std::mem::zeroed();
            Out::of(e.p.cuCtxGetExecAffinity(&mut p, SM_COUNT)).eq("sms", p.param.smCount.val)
        }),
        case!("ctx_misc.exec_affinity_bad_type", Ctx, since 11040 &[call::cuCtxGetExecAffinity], |e| {
            let mut p: CUexecAffinityParam = std::mem::zeroed();
            Out::of(e.p.cuCtxGetExecAffinity(&mut p, CUexecAffinityType(1)))
        }),
        case!("ctx_misc.exec_affinity_null", Ctx, since 11040 &[call::cuCtxGetExecAffinity], |e| {
            Out::of(e.p.cuCtxGetExecAffinity(std::ptr::null_mut(), SM_COUNT))
        }),
        case!("ctx_misc.exec_affinity_no_context", Init, since 11040 &[call::cuCtxGetExecAffinity], |e| {
            let mut p: CUexecAffinityParam = std::mem::zeroed();
            Out::of(e.p.cuCtxGetExecAffinity(&mut p, SM_COUNT))
        }),
        case!("ctx_misc.flush_rdma_to_owner", Ctx, |e| { Out::of(e.p.cuFlushGPUDirectRDMAWrites(TARGET, TO_OWNER)) }),
        case!("ctx_misc.flush_rdma_to_all", Ctx, |e| { Out::of(e.p.cuFlushGPUDirectRDMAWrites(TARGET, TO_ALL)) }),
        case!("ctx_misc.flush_rdma_bad_scope", Ctx, |e| {
            Out::of(e.p.cuFlushGPUDirectRDMAWrites(TARGET, CUflushGPUDirectRDMAWritesScope(7)))
        }),
        case!("ctx_misc.flush_rdma_bad_target", Ctx, |e| {
            Out::of(e.p.cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget(3), TO_OWNER))
        }),
        case!("ctx_misc.flush_rdma_no_context", Init, |e| {
            Out::of(e.p.cuFlushGPUDirectRDMAWrites(TARGET, TO_OWNER))
        }),
    ]
}

fn device_cases() -> Vec<Case> {
    vec![
        case!("device_misc.exec_affinity_support", Init, since 11040 &[call::cuDeviceGetExecAffinitySupport], |e| {
            let mut v = -7;
            Out::of(e.p.cuDeviceGetExecAffinitySupport(&mut v, SM_COUNT, e.dev)).eq("supported", v)
        }),
        case!("device_misc.exec_affinity_support_bad_type", Init, since 11040 &[call::cuDeviceGetExecAffinitySupport], |e| {
            let mut v = -7;
            Out::of(e.p.cuDeviceGetExecAffinitySupport(&mut v, CUexecAffinityType(1), e.dev)).eq("supported", v)
        }),
        case!("device_misc.exec_affinity_support_bad_device", Init, since 11040 &[call::cuDeviceGetExecAffinitySupport], |e| {
            let mut v = -7;
            Out::of(e.p.cuDeviceGetExecAffinitySupport(&mut v, SM_COUNT, 99))
        }),
        case!("device_misc.compute_capability", Init, |e| {
            let (mut major, mut minor) = (-7, -7);
            Out::of(e.p.cuDeviceComputeCapability(&mut major, &mut minor, e.dev)).eq("major", major).eq("minor", minor)
        }),
        case!("device_misc.compute_capability_null", Init, |e| {
            let mut minor = -7;
            Out::of(e.p.cuDeviceComputeCapability(std::ptr::null_mut(), &mut minor, e.dev)).eq("minor", minor)
        }),
        case!("device_misc.compute_capability_bad_device", Init, |e| {
            let (mut major, mut minor) = (-7, -7);
            Out::of(e.p.cuDeviceComputeCapability(&mut major, &mut minor, 99))
        }),
        case!("device_misc.properties", Init, |e| {
            let mut p: CUdevprop = std::mem::zeroed();
            let st = e.p.cuDeviceGetProperties(&mut p, e.dev);
            Out::of(st)
                .eq("max_threads_per_block", p.maxThreadsPerBlock)
                .eq("max_threads_dim", format!("{:?}", p.maxThreadsDim))
                .eq("max_grid_size", format!("{:?}", p.maxGridSize))
                .eq("shared_mem_per_block", p.sharedMemPerBlock)
                .eq("total_constant_memory", p.totalConstantMemory)
                .eq("simd_width", p.SIMDWidth)
                .eq("mem_pitch", p.memPitch)
                .eq("regs_per_block", p.regsPerBlock)
                .eq("clock_rate", p.clockRate)
                .eq("texture_align", p.textureAlign)
        }),
        case!("device_misc.properties_null", Init, |e| {
            Out::of(e.p.cuDeviceGetProperties(std::ptr::null_mut(), e.dev))
        }),
        case!("device_misc.properties_bad_device", Init, |e| {
            let mut p: CUdevprop = std::mem::zeroed();
            Out::of(e.p.cuDeviceGetProperties(&mut p, 99))
        }),
        tex!("device_misc.texture1d_linear_max_width_u8_1", CU_AD_FORMAT_UNSIGNED_INT8, 1),
        tex!("device_misc.texture1d_linear_max_width_u8_4", CU_AD_FORMAT_UNSIGNED_INT8, 4),
        tex!("device_misc.texture1d_linear_max_width_u16_1", CU_AD_FORMAT_UNSIGNED_INT16, 1),
        tex!("device_misc.texture1d_linear_max_width_u32_1", CU_AD_FORMAT_UNSIGNED_INT32, 1),
        tex!("device_misc.texture1d_linear_max_width_s8_1", CU_AD_FORMAT_SIGNED_INT8, 1),
        tex!("device_misc.texture1d_linear_max_width_s16_1", CU_AD_FORMAT_SIGNED_INT16, 1),
        tex!("device_misc.texture1d_linear_max_width_s32_1", CU_AD_FORMAT_SIGNED_INT32, 1),
        tex!("device_misc.texture1d_linear_max_width_half_1", CU_AD_FORMAT_HALF, 1),
        tex!("device_misc.texture1d_linear_max_width_float_1", CU_AD_FORMAT_FLOAT, 1),
        tex!("device_misc.texture1d_linear_max_width_float_2", CU_AD_FORMAT_FLOAT, 2),
        tex!("device_misc.texture1d_linear_max_width_float_4", CU_AD_FORMAT_FLOAT, 4),
        tex!("device_misc.texture1d_linear_max_width_float_3", CU_AD_FORMAT_FLOAT, 3),
        tex!("device_misc.texture1d_linear_max_width_float_0", CU_AD_FORMAT_FLOAT, 0),
        tex!("device_misc.texture1d_linear_max_width_nv12_1", CU_AD_FORMAT_NV12, 1),
        tex!("device_misc.texture1d_linear_max_width_unorm_int8x1_1", CU_AD_FORMAT_UNORM_INT8X1, 1),
        tex!("device_misc.texture1d_linear_max_width_bc1_1", CU_AD_FORMAT_BC1_UNORM, 1),
        case!("device_misc.texture1d_linear_max_width_bad_format", Init, |e| { tex_width(e, CUarray_format(0x77), 1) }),
        case!("device_misc.texture1d_linear_max_width_bad_device", Init, |e| {
            let mut w = UNTOUCHED as usize;
            Out::of(e.p.cuDeviceGetTexture1DLinearMaxWidth(&mut w, CUarray_format::CU_AD_FORMAT_FLOAT, 1, 99))
        }),
        case!("device_misc.luid", Init, |e| {
            let mut luid = [0x5e as std::ffi::c_char; 8];
            let mut mask = UNTOUCHED as u32;
            let st = e.p.cuDeviceGetLuid(luid.as_mut_ptr(), &mut mask, e.dev);
            Out::of(st).eq("luid_written", luid.iter().any(|&b| b != 0x5e)).eq("mask", number32(mask))
        }),
        case!("device_misc.luid_null", Init, |e| {
            let mut mask = 0u32;
            Out::of(e.p.cuDeviceGetLuid(std::ptr::null_mut(), &mut mask, e.dev))
        }),
        case!("device_misc.luid_bad_device", Init, |e| {
            let mut luid = [0 as std::ffi::c_char; 8];
            let mut mask = 0u32;
            Out::of(e.p.cuDeviceGetLuid(luid.as_mut_ptr(), &mut mask, 99))
        }),
        case!("device_misc.host_atomic_capabilities", Init, since 13000 &[call::cuDeviceGetHostAtomicCapabilities], |e| {
            let ops: Vec<CUatomicOperation> = (0..13).map(CUatomicOperation).collect();
            let mut caps = vec![UNTOUCHED as u32; ops.len()];
            let st = e.p.cuDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 13, e.dev);
            let caps: Vec<String> = caps.into_iter().map(number32).collect();
            Out::of(st).eq("caps", caps.join(","))
        }),
        case!("device_misc.host_atomic_capabilities_count_0", Init, since 13000 &[call::cuDeviceGetHostAtomicCapabilities], |e| {
            let ops = [CUatomicOperation::CU_ATOMIC_OPERATION_INTEGER_ADD];
            let mut caps = [0u32];
            Out::of(e.p.cuDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 0, e.dev))
        }),
        case!("device_misc.host_atomic_capabilities_bad_op", Init, since 13000 &[call::cuDeviceGetHostAtomicCapabilities], |e| {
            let ops = [CUatomicOperation(99)];
            let mut caps = [UNTOUCHED as u32];
            let st = e.p.cuDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 1, e.dev);
            Out::of(st).eq("cap", number32(caps[0]))
        }),
        case!("device_misc.p2p_atomic_capabilities_same_device", Init, since 13000 &[call::cuDeviceGetP2PAtomicCapabilities], |e| {
            let ops = [CUatomicOperation::CU_ATOMIC_OPERATION_INTEGER_ADD];
            let mut caps = [UNTOUCHED as u32];
            let st = e.p.cuDeviceGetP2PAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 1, e.dev, e.dev);
            Out::of(st).eq("cap", number32(caps[0]))
        }),
        case!("async_notification.register_unregister", Init, since 12040 ASYNC, |e| {
            let mut h: CUasyncCallbackHandle = super::sentinel();
            let st = e.p.cuDeviceRegisterAsyncNotification(e.dev, Some(async_callback), std::ptr::null_mut(), &mut h);
            let handle = super::handle(h);
            let un = e.p.cuDeviceUnregisterAsyncNotification(e.dev, h);
            let again = e.p.cuDeviceUnregisterAsyncNotification(e.dev, h);
            Out::of(st).eq("handle", handle).eq("unregister", un).eq("unregister_again", again)
        }),
        case!("async_notification.register_null_callback", Init, since 12040 ASYNC, |e| {
            let mut h: CUasyncCallbackHandle = super::sentinel();
            let st = e.p.cuDeviceRegisterAsyncNotification(e.dev, None, std::ptr::null_mut(), &mut h);
            Out::of(st).eq("handle", super::handle(h))
        }),
        case!("async_notification.register_bad_device", Init, since 12040 ASYNC, |e| {
            let mut h: CUasyncCallbackHandle = super::sentinel();
            Out::of(e.p.cuDeviceRegisterAsyncNotification(99, Some(async_callback), std::ptr::null_mut(), &mut h))
        }),
    ]
}

fn coredump_cases() -> Vec<Case> {
    vec![
        case!("coredump.global_defaults", Init, since 12010 COREDUMP, |e| {
            let mut flags = UNTOUCHED as u32;
            let mut size = 4usize;
            let st = e.p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_GENERATION_FLAGS, (&raw mut flags).cast(), &mut size);
            let file = coredump_name(e, S::CU_COREDUMP_FILE, true);
            let pipe = coredump_name(e, S::CU_COREDUMP_PIPE, true);
            let pid = std::process::id().to_string();
            Out::of(st)
                .eq("on_exception", coredump_flag(e, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, true))
                .eq("trigger_host", coredump_flag(e, S::CU_COREDUMP_TRIGGER_HOST, true))
                .eq("lightweight", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, true))
                .eq("user_trigger", coredump_flag(e, S::CU_COREDUMP_ENABLE_USER_TRIGGER, true))
                .eq("generation_flags", number32(flags))
                .eq("file_prefix", file.starts_with("core.cuda."))
                .eq("file_ends_with_pid", file.ends_with(&pid))
                .eq("pipe_prefix", pipe.starts_with("corepipe.cuda."))
                .info("file", file)
                .info("pipe", pipe)
        }),
        case!("coredump.sizes", Init, since 12010 COREDUMP, |e| {
            let st = e.p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_ENABLE_ON_EXCEPTION, std::ptr::null_mut(), &mut 0);
            Out::of(st)
                .eq("on_exception", coredump_size(e, S::CU_COREDUMP_ENABLE_ON_EXCEPTION))
                .eq("trigger_host", coredump_size(e, S::CU_COREDUMP_TRIGGER_HOST))
                .eq("lightweight", coredump_size(e, S::CU_COREDUMP_LIGHTWEIGHT))
                .eq("user_trigger", coredump_size(e, S::CU_COREDUMP_ENABLE_USER_TRIGGER))
                .eq("file", coredump_size(e, S::CU_COREDUMP_FILE))
                .eq("pipe", coredump_size(e, S::CU_COREDUMP_PIPE))
                .eq("generation_flags", coredump_size(e, S::CU_COREDUMP_GENERATION_FLAGS))
        }),
        case!("coredump.bad_attribute", Init, since 12010 COREDUMP, |e| {
            let mut size = 4usize;
            let mut v = 0u32;
            Out::of(e.p.cuCoredumpGetAttributeGlobal(CUcoredumpSettings_enum(99), (&raw mut v).cast(), &mut size))
        }),
        case!("coredump.get_null_size", Init, since 12010 COREDUMP, |e| {
            let mut b = 0u8;
            Out::of(e.p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_LIGHTWEIGHT, (&raw mut b).cast(), std::ptr::null_mut()))
        }),
        case!("coredump.get_file_small_buffer", Init, since 12010 COREDUMP, |e| {
            let mut buf = [0x5eu8; 8];
            let mut size = 4usize;
            let st = e.p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_FILE, buf.as_mut_ptr().cast(), &mut size);
            Out::of(st).eq("size_after", size).eq("byte_4_untouched", buf[4] == 0x5e)
        }),
        case!("coredump.get_no_context", Init, since 12010 COREDUMP, |e| {
            let mut b = 0u8;
            let mut size = 1usize;
            Out::of(e.p.cuCoredumpGetAttribute(S::CU_COREDUMP_LIGHTWEIGHT, (&raw mut b).cast(), &mut size))
        }),
        case!("coredump.context_defaults", Ctx, since 12010 COREDUMP, |e| {
            let file = coredump_name(e, S::CU_COREDUMP_FILE, false);
            Out::of(CUresult::CUDA_SUCCESS)
                .eq("on_exception", coredump_flag(e, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, false))
                .eq("trigger_host", coredump_flag(e, S::CU_COREDUMP_TRIGGER_HOST, false))
                .eq("lightweight", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, false))
                .eq("user_trigger", coredump_flag(e, S::CU_COREDUMP_ENABLE_USER_TRIGGER, false))
                .eq("file_same_as_global", file == coredump_name(e, S::CU_COREDUMP_FILE, true))
        }),
        case!("coredump.context_created_with_coredump_enable", Ctx, since 12010 COREDUMP, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuCtxCreate_v3020(&mut c, CUctx_flags::CU_CTX_COREDUMP_ENABLE.0, e.dev));
            Out::of(CUresult::CUDA_SUCCESS)
                .eq("on_exception", coredump_flag(e, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, false))
                .eq("global_on_exception", coredump_flag(e, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, true))
        }),
        case!("coredump.set_context_lightweight", Ctx, since 12010 COREDUMP, |e| {
            let st = set_true(e, S::CU_COREDUMP_LIGHTWEIGHT, false);
            Out::of(st)
                .eq("context", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, false))
                .eq("global", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, true))
        }),
        case!("coredump.set_global_lightweight_seen_by_context", Ctx, since 12010 COREDUMP, |e| {
            let st = set_true(e, S::CU_COREDUMP_LIGHTWEIGHT, true);
            Out::of(st)
                .eq("context", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, false))
                .eq("global", coredump_flag(e, S::CU_COREDUMP_LIGHTWEIGHT, true))
        }),
        case!("coredump.set_context_file", Ctx, since 12010 COREDUMP, |e| {
            let mut path = *b"/tmp/cudrv-conformance-core\0";
            let mut size = path.len();
            let st = e.p.cuCoredumpSetAttribute(S::CU_COREDUMP_FILE, path.as_mut_ptr().cast(), &mut size);
            Out::of(st)
                .eq("context", coredump_name(e, S::CU_COREDUMP_FILE, false))
                .eq("global_changed", coredump_name(e, S::CU_COREDUMP_FILE, true) == "/tmp/cudrv-conformance-core")
        }),
        case!("coredump.set_context_pipe", Ctx, since 12010 COREDUMP, |e| {
            let mut path = *b"/tmp/cudrv-conformance-pipe\0";
            let mut size = path.len();
            Out::of(e.p.cuCoredumpSetAttribute(S::CU_COREDUMP_PIPE, path.as_mut_ptr().cast(), &mut size))
        }),
        case!("coredump.set_context_user_trigger_false", Ctx, since 12010 COREDUMP, |e| {
            let (mut b, mut size) = (0u8, 1usize);
            Out::of(e.p.cuCoredumpSetAttribute(S::CU_COREDUMP_ENABLE_USER_TRIGGER, (&raw mut b).cast(), &mut size))
        }),
        case!("coredump.set_global_null_value", Init, since 12010 COREDUMP, |e| {
            let mut size = 1usize;
            Out::of(e.p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_LIGHTWEIGHT, std::ptr::null_mut(), &mut size))
        }),
        case!("coredump.set_global_generation_flags", Init, since 12010 COREDUMP, |e| {
            let mut f = CUCoredumpGenerationFlags::CU_COREDUMP_SKIP_GLOBAL_MEMORY.0;
            let mut size = 4usize;
            let st = e.p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_GENERATION_FLAGS, (&raw mut f).cast(), &mut size);
            let mut back = UNTOUCHED as u32;
            let _ = e.p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_GENERATION_FLAGS, (&raw mut back).cast(), &mut size);
            Out::of(st).eq("read_back", number32(back))
        }),
    ]
}

fn log_cases() -> Vec<Case> {
    vec![
        case!("logs.current", Init, since 12090 LOGS, |e| {
            let mut it: CUlogIterator = 0x5eed;
            let st = e.p.cuLogsCurrent(&mut it, 0);
            Out::of(st).eq("written", it != 0x5eed).info("iterator", it)
        }),
        case!("logs.current_flags_1", Init, since 12090 LOGS, |e| {
            let mut it: CUlogIterator = 0;
            Out::of(e.p.cuLogsCurrent(&mut it, 1))
        }),
        case!("logs.current_null", Init, since 12090 LOGS, |e| { Out::of(e.p.cuLogsCurrent(std::ptr::null_mut(), 0)) }),
        case!("logs.current_before_init", Bare, since 12090 LOGS, |e| {
            let mut it: CUlogIterator = 0;
            Out::of(e.p.cuLogsCurrent(&mut it, 0))
        }),
        case!("logs.dump_to_memory_nothing_new", Init, since 12090 LOGS, |e| {
            let mut it: CUlogIterator = 0;
            step!(e.p.cuLogsCurrent(&mut it, 0));
            let mut buf = [0x5e as std::ffi::c_char; 64];
            let mut size = buf.len();
            let st = e.p.cuLogsDumpToMemory(&mut it, buf.as_mut_ptr(), &mut size, 0);
            Out::of(st).eq("size", size).eq("first_byte", buf[0])
        }),
        // The stand-in logs nothing: a driver that logs the failed call differs here.
        case!("logs.dump_to_memory_after_error", Init, since 12090 LOGS, |e| {
            let mut it: CUlogIterator = 0;
            step!(e.p.cuLogsCurrent(&mut it, 0));
            let mut d = 0;
            let _ = e.p.cuDeviceGet(&mut d, 99);
            let mut buf = [0 as std::ffi::c_char; 4096];
            let mut size = buf.len();
            let st = e.p.cuLogsDumpToMemory(&mut it, buf.as_mut_ptr(), &mut size, 0);
            Out::of(st).eq("logged", size > 0).info("size", size).info("text", super::text(buf.as_ptr()))
        }),
        case!("logs.dump_to_memory_null_size", Init, since 12090 LOGS, |e| {
            let mut buf = [0 as std::ffi::c_char; 16];
            Out::of(e.p.cuLogsDumpToMemory(std::ptr::null_mut(), buf.as_mut_ptr(), std::ptr::null_mut(), 0))
        }),
        case!("logs.dump_to_file", Init, since 12090 LOGS, |e| {
            let path = std::env::temp_dir().join(format!("cudrv-conformance-logs-{}", std::process::id()));
            let Ok(c) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {
                return Out::setup_failed("CString::new", CUresult::CUDA_ERROR_INVALID_VALUE);
            };
            let st = e.p.cuLogsDumpToFile(std::ptr::null_mut(), c.as_ptr(), 0);
            let made = path.exists();
            let _ = std::fs::remove_file(&path);
            Out::of(st).eq("file_made", made)
        }),
        case!("logs.dump_to_file_null_path", Init, since 12090 LOGS, |e| {
            Out::of(e.p.cuLogsDumpToFile(std::ptr::null_mut(), std::ptr::null(), 0))
        }),
        case!("logs.register_unregister", Init, since 12090 LOGS, |e| {
            let mut h: CUlogsCallbackHandle = super::sentinel();
            let st = e.p.cuLogsRegisterCallback(Some(log_callback), std::ptr::null_mut(), &mut h);
            let handle = super::handle(h);
            let un = e.p.cuLogsUnregisterCallback(h);
            let again = e.p.cuLogsUnregisterCallback(h);
            Out::of(st).eq("handle", handle).eq("unregister", un).eq("unregister_again", again)
        }),
        case!("logs.register_null_callback", Init, since 12090 LOGS, |e| {
            let mut h: CUlogsCallbackHandle = super::sentinel();
            let st = e.p.cuLogsRegisterCallback(None, std::ptr::null_mut(), &mut h);
            Out::of(st).eq("handle", super::handle(h))
        }),
    ]
}
