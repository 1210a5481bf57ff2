//! Primary contexts: `cuDevicePrimaryCtxRetain`/`Release`/`Reset` over the per-device
//! state of `primaries.rs`: the last release and a reset destroy the context; a later
//! retain makes a fresh one.

use cudrv::sys::*;

use crate::entry::{enter, put, register, status, to_ptr};
use crate::primaries;

unsafe extern "C" fn cu_device_primary_ctx_retain(ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxRetain");
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    match primaries::retain(dev) {
        Ok(c) => put(ctx, to_ptr(c.handle)),
        Err(s) => s,
    }
}

unsafe extern "C" fn cu_device_primary_ctx_release(dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxRelease");
    status(primaries::release(dev))
}

/// `cuDevicePrimaryCtxReset`: waits for the context's work and destroys it.
unsafe extern "C" fn cu_device_primary_ctx_reset(dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxReset");
    status(primaries::reset(dev))
}

register! {
    cuDevicePrimaryCtxRetain_v7000: PFN_cuDevicePrimaryCtxRetain_v7000 => cu_device_primary_ctx_retain,
    cuDevicePrimaryCtxRelease_v7000: PFN_cuDevicePrimaryCtxRelease_v7000 => cu_device_primary_ctx_release,
    cuDevicePrimaryCtxRelease_v11000: PFN_cuDevicePrimaryCtxRelease_v11000 => cu_device_primary_ctx_release,
    cuDevicePrimaryCtxReset_v7000: PFN_cuDevicePrimaryCtxReset_v7000 => cu_device_primary_ctx_reset,
    cuDevicePrimaryCtxReset_v11000: PFN_cuDevicePrimaryCtxReset_v11000 => cu_device_primary_ctx_reset,
}
