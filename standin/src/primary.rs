//! Primary contexts: `cuDevicePrimaryCtxRetain`/`Release`/`Reset`. Their handles stay valid
//! for the life of the process and they stay usable whatever their retain count (as
//! before this emulation grew); the last release and a reset clear a sticky failure and
//! end its peer access.

use cudrv::sys::*;

use crate::context;
use crate::entry::{enter, put, register, status, to_ptr};

unsafe extern "C" fn cu_device_primary_ctx_retain(ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxRetain");
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let Some(c) = context::primary(dev) else {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    };
    c.retained.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    put(ctx, to_ptr(c.handle))
}

unsafe extern "C" fn cu_device_primary_ctx_release(dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxRelease");
    let Some(c) = context::primary(dev) else {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    };
    use std::sync::atomic::Ordering;
    match c.retained.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)) {
        Ok(1) => {
            c.reset_primary();
            CUresult::CUDA_SUCCESS
        }
        Ok(_) => CUresult::CUDA_SUCCESS,
        Err(_) => CUresult::CUDA_ERROR_INVALID_CONTEXT,
    }
}

/// `cuDevicePrimaryCtxReset`: waits for the context's work, clears a sticky failure and
/// ends its peer access.
unsafe extern "C" fn cu_device_primary_ctx_reset(dev: CUdevice) -> CUresult {
    enter!("cuDevicePrimaryCtxReset");
    let Some(c) = context::primary(dev) else {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    };
    let r = c.wait_all();
    c.reset_primary();
    status(r)
}

register! {
    cuDevicePrimaryCtxRetain_v7000: PFN_cuDevicePrimaryCtxRetain_v7000 => cu_device_primary_ctx_retain,
    cuDevicePrimaryCtxRelease_v7000: PFN_cuDevicePrimaryCtxRelease_v7000 => cu_device_primary_ctx_release,
    cuDevicePrimaryCtxRelease_v11000: PFN_cuDevicePrimaryCtxRelease_v11000 => cu_device_primary_ctx_release,
    cuDevicePrimaryCtxReset_v7000: PFN_cuDevicePrimaryCtxReset_v7000 => cu_device_primary_ctx_reset,
    cuDevicePrimaryCtxReset_v11000: PFN_cuDevicePrimaryCtxReset_v11000 => cu_device_primary_ctx_reset,
}
