//! Primary contexts: `cuDevicePrimaryCtxRetain`/`Release`/`Reset`/`GetState`/`SetFlags`
//! over the per-device state of `primaries.rs`: the last release and a reset destroy the
//! context; a later retain makes a fresh one. The state says flags 0 and active 1 while
//! retained, 0 after the last release (driver-facts.md, "Edge cases").

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{non_null, put, status, to_ptr, write};
use crate::lifecycle;
use crate::world::World;

pub(crate) unsafe fn cu_device_primary_ctx_retain(w: &World, ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    match w.primaries.retain(&w.contexts, dev, valid_device(w, dev)) {
        Ok(c) => put(ctx, to_ptr(c.handle)),
        Err(s) => s,
    }
}

pub(crate) unsafe fn cu_device_primary_ctx_release(w: &World, dev: CUdevice) -> CUresult {
    let ended = w.primaries.release(dev, valid_device(w, dev));
    // Outside the slot's lock: waiting may take a while.
    status(ended.and_then(|c| c.map_or(Ok(()), |c| lifecycle::end_primary(w, &c))))
}

/// `cuDevicePrimaryCtxReset`: waits for the context's work and destroys it.
pub(crate) unsafe fn cu_device_primary_ctx_reset(w: &World, dev: CUdevice) -> CUresult {
    let ended = w.primaries.reset(dev, valid_device(w, dev));
    status(ended.and_then(|c| c.map_or(Ok(()), |c| lifecycle::end_primary(w, &c))))
}

pub(crate) unsafe fn cu_device_primary_ctx_get_state(
    w: &World,
    dev: CUdevice,
    flags: *mut c_uint,
    active: *mut c_int,
) -> CUresult {
    let r = non_null(flags).and_then(|()| {
        non_null(active)?;
        let (f, is_active) = w.primaries.state(dev, valid_device(w, dev))?;
        write(flags, f)?;
        write(active, c_int::from(is_active))
    });
    status(r)
}

/// `cuDevicePrimaryCtxSetFlags`: kept, reported by `cuDevicePrimaryCtxGetState` and
/// `cuCtxGetFlags`; they change nothing else.
pub(crate) unsafe fn cu_device_primary_ctx_set_flags(w: &World, dev: CUdevice, flags: c_uint) -> CUresult {
    if flags & !CUctx_flags::CU_CTX_FLAGS_MASK.0 != 0 {
        // The device is checked first.
        return status(w.primaries.state(dev, valid_device(w, dev)).and(Err(CUresult::CUDA_ERROR_INVALID_VALUE)));
    }
    status(w.primaries.set_flags(dev, valid_device(w, dev), flags))
}
