//! Events: a recorded event completes when its stream's work queued before the record
//! has run (at once on an idle stream), and is stamped with the time it completed, for
//! `cuEventElapsedTime`.

use std::ffi::c_uint;
use std::sync::Arc;
use std::time::Instant;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::context::Context;
use crate::model::event::{Event, Position};
use crate::run::lock::lock;
use crate::world::World;
use crate::{capture, stream};

/// The live event `e`.
fn find(w: &World, e: CUevent) -> Result<Event, CUresult> {
    lock(&w.events).get(from_ptr(e)).cloned()
}

const VALID_FLAGS: c_uint = CUevent_flags::CU_EVENT_BLOCKING_SYNC.0
    | CUevent_flags::CU_EVENT_DISABLE_TIMING.0
    | CUevent_flags::CU_EVENT_INTERPROCESS.0;

fn create(w: &World, ph: *mut CUevent, flags: c_uint) -> Result<(), CUresult> {
    non_null(ph)?;
    let interprocess = flags & CUevent_flags::CU_EVENT_INTERPROCESS.0 != 0;
    let timing = flags & CUevent_flags::CU_EVENT_DISABLE_TIMING.0 == 0;
    if flags & !VALID_FLAGS != 0 || (interprocess && timing) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let ctx = w.contexts.current()?;
    let h = lock(&w.events).insert(Event { ctx, flags, mark: Arc::default() });
    write(ph, to_ptr(h))
}

pub(crate) unsafe fn cu_event_create(w: &World, ph: *mut CUevent, flags: c_uint) -> CUresult {
    status(create(w, ph, flags))
}

/// `cuEventDestroy`: NULL or unknown: CUDA_ERROR_INVALID_HANDLE (facts); destroyed
/// before: the same, and a double destroy in the ledger.
pub(crate) unsafe fn cu_event_destroy(w: &World, e: CUevent) -> CUresult {
    let h = from_ptr(e);
    let mut events = lock(&w.events);
    if let Ok(ev) = events.get(h) {
        if let Err(s) = ev.ctx.not_sticky() {
            return s;
        }
    }
    status(events.remove(h).map(drop))
}

fn record(w: &World, e: CUevent, s: CUstream) -> Result<(), CUresult> {
    let Event { ctx, mark, .. } = find(w, e)?;
    ctx.usable()?;
    let t = stream::resolve(w, s)?;
    if capture::record_event(w, e, s)? {
        return Ok(());
    }
    let generation = {
        let mut m = lock(&mark);
        m.generation = m.generation.wrapping_add(1);
        m.time = None;
        m.generation
    };
    let stamp = Arc::clone(&mark);
    // The record is stream work like any other (on the legacy stream it waits for the
    // blocking streams' work too); it stamps the time when the stream reaches it.
    let position = t.submit(move || {
        let mut m = lock(&stamp);
        if m.generation == generation {
            m.time = Some(Instant::now());
        }
        Ok(())
    })?;
    let mut m = lock(&mark);
    if m.generation == generation {
        m.at = Some((t.queue, position));
    }
    Ok(())
}

pub(crate) unsafe fn cu_event_record(w: &World, e: CUevent, s: CUstream) -> CUresult {
    status(record(w, e, s))
}

/// `cuCtxRecordEvent`: records `e` on the default stream of `ctx`, which must be the
/// current context (the stand-in runs all of a context's work in order, so its default
/// stream's position covers the context's work).
pub(crate) unsafe fn cu_ctx_record_event(w: &World, ctx: CUcontext, e: CUevent) -> CUresult {
    if w.contexts.top_handle() != Some(crate::entry::from_ptr(ctx)) {
        return CUresult::CUDA_ERROR_INVALID_CONTEXT;
    }
    status(record(w, e, std::ptr::null_mut()))
}

/// The context of `e` and where it was last recorded, if it was.
fn recorded(w: &World, e: CUevent) -> Result<(Arc<Context>, Option<Position>), CUresult> {
    let ev = find(w, e)?;
    let at = lock(&ev.mark).at.clone();
    Ok((ev.ctx, at))
}

/// `cuEventQuery`: SUCCESS for an event never recorded or complete, else
/// CUDA_ERROR_NOT_READY.
pub(crate) unsafe fn cu_event_query(w: &World, e: CUevent) -> CUresult {
    let r = recorded(w, e).and_then(|(ctx, at)| {
        ctx.usable()?;
        match at {
            Some((q, p)) if !q.reached(p) => Err(CUresult::CUDA_ERROR_NOT_READY),
            _ => Ok(()),
        }
    });
    status(r)
}

/// Waits for the work before the last record; a sticky failure shows here.
pub(crate) unsafe fn cu_event_synchronize(w: &World, e: CUevent) -> CUresult {
    let r = recorded(w, e).and_then(|(ctx, at)| {
        ctx.usable()?;
        if let Some((q, p)) = at {
            q.wait(p)?;
        }
        ctx.usable()
    });
    status(r)
}

/// The completion time of `e`: CUDA_ERROR_INVALID_HANDLE if it has no timing or was never
/// recorded, CUDA_ERROR_NOT_READY if not complete.
fn stamp(w: &World, e: CUevent) -> Result<Instant, CUresult> {
    let ev = find(w, e)?;
    ev.ctx.usable()?;
    if ev.flags & CUevent_flags::CU_EVENT_DISABLE_TIMING.0 != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
    }
    let m = lock(&ev.mark);
    let (q, p) = m.at.as_ref().ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
    if !q.reached(*p) {
        return Err(CUresult::CUDA_ERROR_NOT_READY);
    }
    m.time.ok_or(CUresult::CUDA_ERROR_NOT_READY)
}

/// `cuEventElapsedTime`: milliseconds between the two completions (never negative).
pub(crate) unsafe fn cu_event_elapsed_time(w: &World, ms: *mut f32, start: CUevent, end: CUevent) -> CUresult {
    let r = non_null(ms).and_then(|()| {
        let (a, b) = (stamp(w, start)?, stamp(w, end)?);
        write(ms, b.saturating_duration_since(a).as_secs_f32() * 1000.0)
    });
    status(r)
}

/// `cuStreamWaitEvent`: later work on `s` waits for the work before the event's last
/// record (on another stream). An event recorded in a capture forks or joins
/// capturing streams instead (`capture.rs`).
pub(crate) unsafe fn cu_stream_wait_event(w: &World, s: CUstream, e: CUevent, flags: c_uint) -> CUresult {
    if flags & !CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL.0 != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let r = recorded(w, e).and_then(|(ctx, at)| {
        ctx.usable()?;
        let t = stream::resolve(w, s)?;
        if capture::wait_event(w, s, e, flags)? {
            return Ok(());
        }
        match at {
            Some((q, p)) if !Arc::ptr_eq(&q, &t.queue) && !q.reached(p) => {
                let wait = Box::new(move || {
                    // A wait from another queue's worker cannot fail.
                    let _ = q.wait(p);
                });
                t.push(wait).map(drop)
            }
            _ => Ok(()),
        }
    });
    status(r)
}
