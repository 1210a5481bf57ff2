//! Events and green contexts (12.4+): `cuGreenCtxRecordEvent` records an event at the end
//! of all the work of a green context so far (its default stream's and every stream made
//! in it); `cuGreenCtxWaitEvent` makes the green context's work wait for an event.
//!
//! The record is queued on the green context's default stream behind a join of all its
//! streams' pending work, so the event completes when that work has. The wait is queued on
//! each of the green context's streams (and its default stream) as they are at the call:
//! work on a stream made in it later does not wait (a real driver's wait covers it too).
//! Both refuse, as the CUDA documentation says, a green context that has a capturing
//! stream (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the captures invalidated), and the wait
//! an event recorded in a capture going on. The record needs an event of a context on the
//! green context's device (CUDA_ERROR_INVALID_HANDLE otherwise; the documentation: "from
//! the same primary context"). A NULL green context: CUDA_ERROR_INVALID_CONTEXT, a NULL
//! event CUDA_ERROR_INVALID_HANDLE (driver 580.159.04, 2026-12-05).

use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, status};
use crate::model::context::Context;
use crate::model::stream::Target;
use crate::run::lock::lock;
use crate::run::shared_event;
use crate::world::World;
use crate::{capture, event};

/// The context of green context `g` (NULL: CUDA_ERROR_INVALID_CONTEXT, conformance
/// green_event.record_null_green, green_event.wait_null_green; the registry's status for
/// an unknown one).
fn green_context(w: &World, g: CUgreenCtx) -> Result<Arc<Context>, CUresult> {
    if g.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    Ok(Arc::clone(&lock(&w.greens).greens.get(from_ptr(g))?.ctx))
}

/// A non-blocking target on `ctx`'s default queue.
fn default_target(ctx: &Arc<Context>) -> Target {
    Target { queue: Arc::clone(&ctx.default_queue), ctx: Arc::clone(ctx), legacy: false, blocking: false }
}

fn record(w: &World, g: CUgreenCtx, e: CUevent) -> Result<(), CUresult> {
    let ctx = green_context(w, g)?;
    ctx.usable()?;
    let (ev_ctx, _, _) = event::recorded(w, e)?;
    if ev_ctx.device != ctx.device {
        return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
    }
    capture::before_ctx_wait(w, ctx.handle, std::ptr::null_mut())?;
    let t = default_target(&ctx);
    let pending: Vec<_> = ctx
        .all_queues()
        .into_iter()
        .filter(|q| !Arc::ptr_eq(q, &t.queue))
        .filter_map(|q| q.pending().map(|p| (q, p)))
        .collect();
    if !pending.is_empty() {
        t.queue.push_after(pending, Box::new(|| {}))?;
    }
    w.sanitizer.record_event_of_context(t.ctx.handle, crate::entry::from_ptr(e));
    event::record_on(w, e, t)
}

/// `cuGreenCtxRecordEvent`.
pub(crate) unsafe fn cu_green_ctx_record_event(w: &World, g: CUgreenCtx, e: CUevent) -> CUresult {
    status(record(w, g, e))
}

fn wait(w: &World, g: CUgreenCtx, e: CUevent) -> Result<(), CUresult> {
    let ctx = green_context(w, g)?;
    ctx.usable()?;
    let (_, at, shared) = event::recorded(w, e)?;
    capture::before_ctx_wait(w, ctx.handle, e)?;
    for q in ctx.all_queues() {
        if let Some(path) = shared.clone().filter(|p| !shared_event::is_complete(p)) {
            let n = shared_event::newest(&path);
            q.push(Box::new(move || shared_event::wait(&path, n)))?;
        }
        match at.clone() {
            Some((from, p)) if !Arc::ptr_eq(&from, &q) && !from.reached(p) => {
                q.push(Box::new(move || {
                    // A wait from another queue's worker cannot fail.
                    let _ = from.wait(p);
                }))?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// `cuGreenCtxWaitEvent`.
pub(crate) unsafe fn cu_green_ctx_wait_event(w: &World, g: CUgreenCtx, e: CUevent) -> CUresult {
    status(wait(w, g, e))
}
