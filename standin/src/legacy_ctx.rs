//! `cuCtxAttach` and `cuCtxDetach` (deprecated): a context's usage count.
//!
//! `cuCtxAttach` adds one to the current context's usage count and returns it (flags must
//! be 0: CUDA_ERROR_INVALID_VALUE; a NULL out-pointer CUDA_ERROR_INVALID_VALUE; no current
//! context CUDA_ERROR_INVALID_CONTEXT). `cuCtxDetach` takes one off; a created context
//! whose count was its creation's alone is destroyed, as `cuCtxDestroy` does. The context
//! must be the current one (another, none, or NULL: CUDA_ERROR_INVALID_CONTEXT). A primary
//! context's life is its retains': detaching it succeeds and changes nothing, however often
//! (driver 580.159.04: it stays current and active; docs/driver-facts.md, issue 29).

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::run::lock::lock;
use crate::world::World;

pub(crate) unsafe fn cu_ctx_attach(w: &World, pctx: *mut CUcontext, flags: c_uint) -> CUresult {
    let r = non_null(pctx).and_then(|()| {
        if flags != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let c = w.contexts.current()?;
        *lock(&w.legacy).attached.entry(c.handle).or_insert(0) += 1;
        write(pctx, to_ptr(c.handle))
    });
    status(r)
}

pub(crate) unsafe fn cu_ctx_detach(w: &World, ctx: CUcontext) -> CUresult {
    let r = w.contexts.current().and_then(|c| {
        if c.handle != from_ptr(ctx) {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        {
            let mut l = lock(&w.legacy);
            if let Some(n) = l.attached.get_mut(&c.handle).filter(|n| **n > 0) {
                *n -= 1;
                return Ok(());
            }
        }
        match c.is_primary() {
            true => Ok(()),
            false => crate::lifecycle::destroy_context(w, c.handle),
        }
    });
    status(r)
}
