//! Green contexts (12.4+): the SM resource of a device (the emulated device's 132 SMs),
//! split into groups (`model/green.rs`: the H200's granularity, to be checked), resource
//! descriptors, and green contexts made of them. A green context is a context of its own
//! (`cuCtxFromGreenCtx` gives it), never current by itself; its streams are streams of
//! that context. The emulation runs every context's work alike: a green context's SM
//! count is reported, not enforced.

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::device::DEVICE_SM_COUNT;
use crate::model::green::{split, Green};
use crate::model::handles::fresh;
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

const SM: CUdevResourceType = CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM;

/// An SM resource of `sms` SMs, as the driver of `w`'s version writes it (the 13.0
/// fields, minimum partition size and co-scheduled alignment, from 13.0 on).
fn sm_resource(w: &World, sms: c_uint) -> CUdevResource {
    let mut r = CUdevResource { type_: SM, ..Default::default() };
    r.__bindgen_anon_1.sm.smCount = sms;
    if w.version.load(std::sync::atomic::Ordering::Relaxed) >= 13000 {
        r.__bindgen_anon_1.sm.minSmPartitionSize = crate::model::green::SM_SPLIT_MIN;
        r.__bindgen_anon_1.sm.smCoscheduledAlignment = crate::model::green::SM_SPLIT_ALIGN;
    }
    r
}

/// The SM count of the SM resource at `r` (CUDA_ERROR_INVALID_RESOURCE_TYPE for
/// another type).
fn sms_of(r: *const CUdevResource) -> Result<c_uint, CUresult> {
    non_null(r)?;
    // SAFETY: a non-null pointer to the caller's resource.
    let r = unsafe { &*r };
    if r.type_ != SM {
        return Err(CUresult::CUDA_ERROR_INVALID_RESOURCE_TYPE);
    }
    // SAFETY: an SM resource: the `sm` member (plain integers).
    Ok(unsafe { r.__bindgen_anon_1.sm.smCount })
}

/// Writes an SM resource of `sms` SMs for a request of type `t`.
fn put_resource(w: &World, out: *mut CUdevResource, t: CUdevResourceType, sms: c_uint) -> Result<(), CUresult> {
    non_null(out)?;
    if t != SM {
        return Err(CUresult::CUDA_ERROR_INVALID_RESOURCE_TYPE);
    }
    write(out, sm_resource(w, sms))
}

fn device_sms() -> c_uint {
    c_uint::try_from(DEVICE_SM_COUNT).unwrap_or(0)
}

/// `cuDeviceGetDevResource`: every SM of the device.
pub(crate) unsafe fn cu_device_get_dev_resource(
    w: &World,
    dev: CUdevice,
    out: *mut CUdevResource,
    t: CUdevResourceType,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    status(put_resource(w, out, t, device_sms()))
}

/// `cuCtxGetDevResource`: a green context's context has its SMs; another context all the
/// device's.
pub(crate) unsafe fn cu_ctx_get_dev_resource(
    w: &World,
    ctx: CUcontext,
    out: *mut CUdevResource,
    t: CUdevResourceType,
) -> CUresult {
    let r = w.contexts.lookup(from_ptr(ctx)).and_then(|c| {
        c.alive()?;
        let greens = lock(&w.greens);
        let sms = match greens.of_context(c.handle) {
            0 => device_sms(),
            g => greens.greens.get(g)?.sms,
        };
        drop(greens);
        put_resource(w, out, t, sms)
    });
    status(r)
}

/// `cuGreenCtxGetDevResource`.
pub(crate) unsafe fn cu_green_ctx_get_dev_resource(
    w: &World,
    g: CUgreenCtx,
    out: *mut CUdevResource,
    t: CUdevResourceType,
) -> CUresult {
    let sms = lock(&w.greens).greens.get(from_ptr(g)).map(|g| g.sms);
    status(sms.and_then(|sms| put_resource(w, out, t, sms)))
}

#[allow(clippy::too_many_arguments)] // the world and the C signature
fn split_by_count(
    w: &World,
    result: *mut CUdevResource,
    nb: *mut c_uint,
    input: *const CUdevResource,
    remaining: *mut CUdevResource,
    flags: c_uint,
    min_count: c_uint,
) -> Result<(), CUresult> {
    type F = CUdevSmResourceSplitByCount_flags;
    non_null(nb)?;
    let available = sms_of(input)?;
    let known =
        F::CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING.0 | F::CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE.0;
    if flags & !known != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let ignore = flags & F::CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING.0 != 0;
    let (size, possible) = split(available, min_count, ignore);
    if possible == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    }
    if result.is_null() {
        return write(nb, possible);
    }
    // SAFETY: a non-null pointer to the caller's count.
    let asked = unsafe { *nb };
    if asked == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let n = asked.min(possible);
    for i in 0..n as usize {
        // SAFETY: the caller's array holds `asked` >= `n` resources.
        unsafe { result.add(i).write(sm_resource(w, size)) };
    }
    if !remaining.is_null() {
        write(remaining, sm_resource(w, available - n * size))?;
    }
    write(nb, n)
}

/// `cuDevSmResourceSplitByCount`: groups of `minCount` SMs rounded up to the granularity
/// (at least 8, a multiple of 8; with IGNORE_SM_COSCHEDULING a multiple of 2), as many as
/// asked and as fit; the rest in `remaining`. A null `result` asks for the number of
/// groups possible. None fits: CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
pub(crate) unsafe fn cu_dev_sm_resource_split_by_count(
    w: &World,
    result: *mut CUdevResource,
    nb: *mut c_uint,
    input: *const CUdevResource,
    remaining: *mut CUdevResource,
    flags: c_uint,
    min_count: c_uint,
) -> CUresult {
    status(split_by_count(w, result, nb, input, remaining, flags, min_count))
}

fn generate_desc(w: &World, out: *mut CUdevResourceDesc, r: *mut CUdevResource, n: c_uint) -> Result<(), CUresult> {
    non_null(out)?;
    if n == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let mut sms: c_uint = 0;
    for i in 0..n as usize {
        // SAFETY: the caller's array holds `n` resources.
        sms = sms.saturating_add(sms_of(unsafe { r.add(i) })?);
    }
    if sms == 0 || sms > device_sms() {
        return Err(CUresult::CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    }
    let h = fresh();
    lock(&w.greens).descs.insert(h, sms);
    write(out, to_ptr(h))
}

/// `cuDevResourceGenerateDesc`: a descriptor of the SMs of the resources given (SM
/// resources only; their counts add up).
pub(crate) unsafe fn cu_dev_resource_generate_desc(
    w: &World,
    out: *mut CUdevResourceDesc,
    r: *mut CUdevResource,
    n: c_uint,
) -> CUresult {
    status(generate_desc(w, out, r, n))
}

fn green_create(
    w: &World,
    out: *mut CUgreenCtx,
    desc: CUdevResourceDesc,
    dev: CUdevice,
    flags: c_uint,
) -> Result<(), CUresult> {
    non_null(out)?;
    if flags != CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    if !valid_device(w, dev) {
        return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
    let sms = *lock(&w.greens).descs.get(&from_ptr(desc)).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let ctx = w.contexts.create(dev, false, 0)?;
    let h = lock(&w.greens).greens.insert(Green { ctx, sms });
    write(out, to_ptr(h))
}

/// `cuGreenCtxCreate`: flags must be CU_GREEN_CTX_DEFAULT_STREAM.
pub(crate) unsafe fn cu_green_ctx_create(
    w: &World,
    out: *mut CUgreenCtx,
    desc: CUdevResourceDesc,
    dev: CUdevice,
    flags: c_uint,
) -> CUresult {
    status(green_create(w, out, desc, dev, flags))
}

/// `cuGreenCtxDestroy`: destroys its context (after its work). Unknown or destroyed:
/// CUDA_ERROR_CONTEXT_IS_DESTROYED, as on the H200 (a double destroy in the ledger).
pub(crate) unsafe fn cu_green_ctx_destroy(w: &World, g: CUgreenCtx) -> CUresult {
    let removed = lock(&w.greens).greens.remove(from_ptr(g));
    status(removed.and_then(|g| crate::lifecycle::destroy_context(w, g.ctx.handle)))
}

/// `cuCtxFromGreenCtx`.
pub(crate) unsafe fn cu_ctx_from_green_ctx(w: &World, out: *mut CUcontext, g: CUgreenCtx) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let ctx = lock(&w.greens).greens.get(from_ptr(g))?.ctx.handle;
        write(out, to_ptr(ctx))
    });
    status(r)
}

/// `cuGreenCtxStreamCreate`: flags must be CU_STREAM_NON_BLOCKING.
pub(crate) unsafe fn cu_green_ctx_stream_create(
    w: &World,
    out: *mut CUstream,
    g: CUgreenCtx,
    flags: c_uint,
    priority: c_int,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let ctx = std::sync::Arc::clone(&lock(&w.greens).greens.get(from_ptr(g))?.ctx);
        ctx.usable()?;
        if flags != CUstream_flags::CU_STREAM_NON_BLOCKING.0 {
            // The H200 writes a stream handle before refusing the flags
            // (green.stream_blocking_flags): one made and destroyed again, so that the
            // handle names nothing.
            stream::create_in(w, out, ctx, CUstream_flags::CU_STREAM_NON_BLOCKING.0, priority)?;
            // SAFETY: `out` is non-null and was just written.
            let _ = unsafe { stream::cu_stream_destroy(w, *out) };
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        stream::create_in(w, out, ctx, flags, priority)
    });
    status(r)
}

/// `cuStreamGetGreenCtx`: the green context a stream was made in (by either way); NULL
/// for another stream.
pub(crate) unsafe fn cu_stream_get_green_ctx(w: &World, s: CUstream, out: *mut CUgreenCtx) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let ctx = stream::properties(w, s)?.ctx;
        ctx.alive()?;
        let g = lock(&w.greens).of_context(ctx.handle);
        write(out, to_ptr(g))
    });
    status(r)
}
