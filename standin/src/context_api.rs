//! The `cuCtx*` entry points over the per-thread context stack (see `context.rs`).
//!
//! Behaviour follows `docs/driver-facts.md` ("facts"), and for `cuCtxSetCurrent(NULL)`
//! the CUDA documentation: it pops the top of the stack (no-op on an empty one).

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, put, status, to_ptr, write};
use crate::faults;
use crate::model::context::Context;
use crate::world::World;

fn handle_of(c: &Context) -> CUcontext {
    to_ptr(c.handle)
}

fn create(w: &World, pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> Result<(), CUresult> {
    non_null(pctx)?;
    if flags & !CUctx_flags::CU_CTX_FLAGS_MASK.0 != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    if !valid_device(w, dev) {
        return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
    let c = w.contexts.create(dev, false, flags)?;
    write(pctx, handle_of(&c))?;
    w.contexts.push(c);
    Ok(())
}

/// `cuCtxCreate` (v2000/v3020): makes a context on `dev`, pushes it and returns it.
pub(crate) unsafe fn cu_ctx_create(w: &World, pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult {
    status(create(w, pctx, flags, dev))
}

/// `cuCtxCreate_v11040`: the execution affinity parameters are accepted and ignored.
pub(crate) unsafe fn cu_ctx_create_v11040(
    w: &World,
    pctx: *mut CUcontext,
    _params: *mut CUexecAffinityParam,
    _num_params: c_int,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    status(create(w, pctx, flags, dev))
}

/// `cuCtxCreate_v12050` (cuda.h's `cuCtxCreate` since 13.0): the creation parameters are
/// accepted and ignored.
pub(crate) unsafe fn cu_ctx_create_v12050(
    w: &World,
    pctx: *mut CUcontext,
    _params: *mut CUctxCreateParams,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    status(create(w, pctx, flags, dev))
}

/// `cuCtxDestroy`: waits for the context's work, destroys it and pops it if it is current
/// on this thread. Destroying it again: CUDA_ERROR_CONTEXT_IS_DESTROYED (facts), and a
/// double destroy in the ledger. The resources made in it stay as they are (see the crate docs).
pub(crate) unsafe fn cu_ctx_destroy(w: &World, ctx: CUcontext) -> CUresult {
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    status(crate::lifecycle::destroy_context(w, from_ptr(ctx)))
}

/// `cuCtxPushCurrent`: NULL answers CUDA_ERROR_INVALID_VALUE; a destroyed context can be
/// pushed, and work then answers CUDA_ERROR_CONTEXT_IS_DESTROYED (facts).
pub(crate) unsafe fn cu_ctx_push_current(w: &World, ctx: CUcontext) -> CUresult {
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    match w.contexts.find(from_ptr(ctx)) {
        Ok(c) => {
            w.contexts.push(c);
            CUresult::CUDA_SUCCESS
        }
        Err(s) => s,
    }
}

/// `cuCtxPopCurrent`: with an empty stack CUDA_ERROR_INVALID_CONTEXT (facts); with a
/// destroyed current context CUDA_ERROR_CONTEXT_IS_DESTROYED, and it stays current
/// (`cuCtxSetCurrent` replaces it).
pub(crate) unsafe fn cu_ctx_pop_current(w: &World, pctx: *mut CUcontext) -> CUresult {
    match w.contexts.top() {
        None => return CUresult::CUDA_ERROR_INVALID_CONTEXT,
        Some(c) if c.is_destroyed() => return CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
        Some(_) => {}
    }
    match w.contexts.pop() {
        None => CUresult::CUDA_ERROR_INVALID_CONTEXT,
        Some(c) => {
            if !pctx.is_null() {
                // SAFETY: a non-null out-pointer from the caller.
                unsafe { pctx.write(handle_of(&c)) };
            }
            CUresult::CUDA_SUCCESS
        }
    }
}

/// `cuCtxSetCurrent`: replaces the top of the stack (pushes on an empty one); NULL pops it
/// (facts: SUCCESS with an empty stack). A destroyed context can be made current (facts). Honours [`faults::fail_next_context_restore`].
pub(crate) unsafe fn cu_ctx_set_current(w: &World, ctx: CUcontext) -> CUresult {
    let target = from_ptr(ctx);
    if let Some(s) = faults::restore_fault(w, target) {
        // As a real driver does when the switch fails: nothing changes.
        return s;
    }
    let before = w.contexts.top_handle().unwrap_or(0);
    if ctx.is_null() {
        w.contexts.pop();
    } else {
        match w.contexts.find(target) {
            Ok(c) => w.contexts.replace_top(c),
            Err(s) => return s,
        }
    }
    faults::note_context_switch(w, before);
    CUresult::CUDA_SUCCESS
}

pub(crate) unsafe fn cu_ctx_get_current(w: &World, pctx: *mut CUcontext) -> CUresult {
    if pctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // facts: with no current context, SUCCESS and `*pctx` is NULL (driver 580 wrote NULL
    // over a sentinel: conformance case `context.current_none`).
    put(pctx, w.contexts.top_handle().map_or(std::ptr::null_mut(), to_ptr))
}

/// The device of `ctx`, or of the current context for NULL.
fn device_of(w: &World, ctx: CUcontext) -> Result<CUdevice, CUresult> {
    let c = if ctx.is_null() {
        w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?
    } else {
        w.contexts.lookup(from_ptr(ctx))?
    };
    c.alive()?;
    Ok(c.device)
}

pub(crate) unsafe fn cu_ctx_get_device(w: &World, device: *mut CUdevice) -> CUresult {
    match device_of(w, std::ptr::null_mut()) {
        Ok(d) => put(device, d),
        Err(s) => s,
    }
}

pub(crate) unsafe fn cu_ctx_get_device_v13000(w: &World, device: *mut CUdevice, ctx: CUcontext) -> CUresult {
    match device_of(w, ctx) {
        Ok(d) => put(device, d),
        Err(s) => s,
    }
}

/// Waits for `ctx`'s work (the current context's for NULL); a sticky failure shows here.
fn synchronize(w: &World, ctx: CUcontext) -> Result<(), CUresult> {
    let c = if ctx.is_null() {
        w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?
    } else {
        w.contexts.lookup(from_ptr(ctx))?
    };
    crate::capture::before_sync(w, c.handle)?;
    c.synchronize()?;
    w.sanitizer.host_waited_context(c.handle);
    Ok(())
}

pub(crate) unsafe fn cu_ctx_synchronize(w: &World) -> CUresult {
    status(synchronize(w, std::ptr::null_mut()))
}

pub(crate) unsafe fn cu_ctx_synchronize_v13000(w: &World, ctx: CUcontext) -> CUresult {
    status(synchronize(w, ctx))
}
