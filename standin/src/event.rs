//! Events: a recorded event completes when its stream's work queued before the record
//! has run (at once on an idle stream), and is stamped with the time it completed, for
//! `cuEventElapsedTime`.

use std::ffi::c_uint;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::context::Context;
use crate::model::event::{Event, IpcLink, Position};
use crate::model::graph::Node;
use crate::run::lock::lock;
use crate::run::shared_event;
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
    let removed = events.remove(h);
    drop(events);
    if let Ok(ev) = &removed {
        // The exporter's destroy ends the sharing (an importer then sees it complete).
        if let Some(link) = lock(&ev.mark).ipc.as_ref().filter(|l| !l.imported) {
            let _ = std::fs::remove_file(&link.path);
        }
    }
    status(removed.map(drop))
}

fn record(w: &World, e: CUevent, s: CUstream) -> Result<(), CUresult> {
    let Event { ctx, .. } = find(w, e)?;
    // A record only queues behind the launched work: a fault still held from a kernel
    // the launch ran at once does not stop it (docs/stand-in.md, "Kernel faults").
    ctx.usable_to_queue()?;
    let t = stream::resolve_to_queue(w, s)?;
    if capture::record_event(w, e, s)? {
        return Ok(());
    }
    w.sanitizer.record_event(&t, from_ptr(s), from_ptr(e));
    record_on(w, e, t)
}

/// Records `e` at the end of the work queued on `t` so far (no capture concerned), as
/// [`cuEventRecord`] does on a stream: `cuGreenCtxRecordEvent` records on a target of its
/// own (`green_event.rs`).
pub(crate) fn record_on(w: &World, e: CUevent, t: crate::model::stream::Target) -> Result<(), CUresult> {
    let Event { mark, .. } = find(w, e)?;
    let generation = {
        let mut m = lock(&mark);
        m.generation = m.generation.wrapping_add(1);
        m.time = None;
        if let Some(link) = m.ipc.as_mut() {
            link.n = shared_event::begin_record(&link.path);
        }
        m.generation
    };
    let stamp = Arc::clone(&mark);
    // The record is stream work like any other (on the legacy stream it waits for the
    // blocking streams' work too); it stamps the time when the stream reaches it (and,
    // for an inter-process event, marks the record complete in the shared state).
    let position = t.submit(move || {
        let mut m = lock(&stamp);
        if m.generation == generation {
            m.time = Some(Instant::now());
            if let Some(link) = &m.ipc {
                shared_event::complete(&link.path, link.n);
            }
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

/// `CU_EVENT_RECORD_EXTERNAL`.
const RECORD_EXTERNAL: c_uint = CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL.0;

/// `cuEventRecordWithFlags`: flags 0 (`CU_EVENT_RECORD_DEFAULT`) records as
/// `cuEventRecord`; `CU_EVENT_RECORD_EXTERNAL` outside stream capture is
/// CUDA_ERROR_ILLEGAL_STATE (as the H200 answers), and on a capturing stream adds an
/// event record node to the capture's graph (the event is
/// recorded when a launch of the graph reaches it), instead of making it a captured event.
/// Other flags: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_event_record_with_flags(w: &World, e: CUevent, s: CUstream, flags: c_uint) -> CUresult {
    let r = match flags {
        0 => record(w, e, s),
        RECORD_EXTERNAL => record_external(w, e, s),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    status(r)
}

fn record_external(w: &World, e: CUevent, s: CUstream) -> Result<(), CUresult> {
    let Event { ctx, .. } = find(w, e)?;
    ctx.usable()?;
    stream::resolve(w, s)?;
    match capture::record(w, s, Node::EventRecord(from_ptr(e)))? {
        // Not capturing: the H200 refuses it (conformance event_flags.*).
        Some(_) => Err(CUresult::CUDA_ERROR_ILLEGAL_STATE),
        None => {
            capture::note_external_record(w, e, s);
            Ok(())
        }
    }
}

/// `cuCtxWaitEvent`: later work of `ctx` (live and usable, not necessarily current) waits
/// for the work before the event's last record: the wait is queued on the context's
/// legacy default stream, which the later work of its blocking streams waits for (that of
/// its non-blocking streams does not: a difference, see docs/stand-in.md). An event
/// recorded in a capture going on, or a context with a capturing stream:
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the captures are invalidated.
pub(crate) unsafe fn cu_ctx_wait_event(w: &World, ctx: CUcontext, e: CUevent) -> CUresult {
    let r = (|| {
        if ctx.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        let c = w.contexts.lookup(from_ptr(ctx))?;
        c.usable()?;
        let (_, at, shared) = recorded(w, e)?;
        capture::before_ctx_wait(w, c.handle, e)?;
        let t = crate::sanitized::legacy(&c);
        w.sanitizer.wait_event(&t, 0, from_ptr(e));
        if let Some(path) = shared.filter(|p| !shared_event::is_complete(p)) {
            let n = shared_event::newest(&path);
            t.push(Box::new(move || shared_event::wait(&path, n)))?;
        }
        match at {
            Some((q, p)) if !Arc::ptr_eq(&q, &t.queue) && !q.reached(p) => t
                .push(Box::new(move || {
                    // A wait from another queue's worker cannot fail.
                    let _ = q.wait(p);
                }))
                .map(drop),
            _ => Ok(()),
        }
    })();
    status(r)
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

/// The context of an event, where it was last recorded, if it was, and for an event
/// opened from another process, its shared state's file.
pub(crate) type Recorded = (Arc<Context>, Option<Position>, Option<PathBuf>);

/// What [`Recorded`] says of `e`.
pub(crate) fn recorded(w: &World, e: CUevent) -> Result<Recorded, CUresult> {
    let ev = find(w, e)?;
    let m = lock(&ev.mark);
    let shared = m.ipc.as_ref().filter(|l| l.imported).map(|l| l.path.clone());
    let at = m.at.clone();
    drop(m);
    Ok((ev.ctx, at, shared))
}

/// `cuEventQuery`: SUCCESS for an event never recorded or complete, else
/// CUDA_ERROR_NOT_READY (an event opened from another process: as that process's newest
/// record stands). An event recorded in a capture still going on:
/// CUDA_ERROR_CAPTURED_EVENT (recorded with `CU_EVENT_RECORD_EXTERNAL`:
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), and the capture is invalidated
/// (`capture::captured_event`); one last recorded in a capture that has ended:
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_event_query(w: &World, e: CUevent) -> CUresult {
    let r = recorded(w, e).and_then(|(ctx, at, shared)| {
        capture::captured_event(w, e, true)?;
        ctx.usable()?;
        match at {
            Some((q, p)) if !q.reached(p) => Err(CUresult::CUDA_ERROR_NOT_READY),
            _ if shared.is_some_and(|path| !shared_event::is_complete(&path)) => Err(CUresult::CUDA_ERROR_NOT_READY),
            _ => {
                w.sanitizer.host_waited_event(from_ptr(e));
                Ok(())
            }
        }
    });
    status(r)
}

/// Waits for the work before the last record; a sticky failure shows here. A captured
/// event: as [`cu_event_query`].
pub(crate) unsafe fn cu_event_synchronize(w: &World, e: CUevent) -> CUresult {
    let r = recorded(w, e).and_then(|(ctx, at, shared)| {
        capture::captured_event(w, e, true)?;
        ctx.usable()?;
        if let Some((q, p)) = at {
            q.wait(p)?;
        }
        if let Some(path) = shared {
            shared_event::wait(&path, shared_event::newest(&path));
        }
        w.sanitizer.host_waited_event(from_ptr(e));
        ctx.usable()
    });
    status(r)
}

/// The completion time of `e`: CUDA_ERROR_INVALID_HANDLE if it has no timing or was never
/// recorded, CUDA_ERROR_NOT_READY if not complete, CUDA_ERROR_CAPTURED_EVENT if recorded
/// in a capture still going on (as [`cu_event_query`]).
fn stamp(w: &World, e: CUevent) -> Result<Instant, CUresult> {
    let ev = find(w, e)?;
    capture::captured_event(w, e, false)?;
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
    let r = recorded(w, e).and_then(|(ctx, at, shared)| {
        ctx.usable()?;
        let t = stream::resolve(w, s)?;
        if capture::wait_event(w, s, e, flags)? {
            return Ok(());
        }
        w.sanitizer.wait_event(&t, from_ptr(s), from_ptr(e));
        if let Some(path) = shared.filter(|p| !shared_event::is_complete(p)) {
            // Later work waits for the other process's newest record as of now.
            let n = shared_event::newest(&path);
            t.push(Box::new(move || shared_event::wait(&path, n)))?;
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

/// Marks the handle data the stand-in makes for an event.
const MAGIC: [u8; 8] = *b"cudrvEVT";

fn ipc_get(w: &World, out: *mut CUipcEventHandle, e: CUevent) -> Result<(), CUresult> {
    non_null(out)?;
    let h = from_ptr(e);
    let ev = find(w, e)?;
    ev.ctx.usable()?;
    if ev.flags & CUevent_flags::CU_EVENT_INTERPROCESS.0 == 0 {
        // As the H200 (ipc_event.get_without_interprocess).
        return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
    }
    let pid = std::process::id();
    let mut m = lock(&ev.mark);
    if m.ipc.is_none() {
        let path = shared_event::path(pid, h);
        // A record still pending counts as record 1, not yet complete.
        let pending = m.at.as_ref().is_some_and(|(q, p)| !q.reached(*p));
        let n = u64::from(m.at.is_some());
        shared_event::write(&path, n, if pending { 0 } else { n }).map_err(|_| CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        m.ipc = Some(IpcLink { path, n, imported: false });
    }
    drop(m);
    let mut data = [0 as std::ffi::c_char; 64];
    let words = [MAGIC, u64::from(pid).to_le_bytes(), h.to_le_bytes()];
    for (chunk, word) in data.chunks_exact_mut(8).zip(words) {
        for (d, b) in chunk.iter_mut().zip(word) {
            *d = b as std::ffi::c_char;
        }
    }
    write(out, CUipcEventHandle { reserved: data })
}

/// `cuIpcGetEventHandle`: for an event created with CU_EVENT_INTERPROCESS (else
/// CUDA_ERROR_INVALID_HANDLE); its state is then shared through a file
/// (`run/shared_event.rs`) another process opens with the handle.
pub(crate) unsafe fn cu_ipc_get_event_handle(w: &World, out: *mut CUipcEventHandle, e: CUevent) -> CUresult {
    status(ipc_get(w, out, e))
}

/// The `(pid, event)` a handle names, if the stand-in made it.
fn parse(handle: &CUipcEventHandle) -> Option<(u32, u64)> {
    let bytes: Vec<u8> = handle.reserved.iter().map(|&b| b as u8).collect();
    let mut words = bytes.chunks_exact(8).map(|c| <[u8; 8]>::try_from(c).ok());
    (words.next()?? == MAGIC).then_some(())?;
    let pid = u32::try_from(u64::from_le_bytes(words.next()??)).ok()?;
    Some((pid, u64::from_le_bytes(words.next()??)))
}

fn ipc_open(w: &World, out: *mut CUevent, handle: CUipcEventHandle) -> Result<(), CUresult> {
    non_null(out)?;
    let ctx = w.contexts.current()?;
    ctx.usable()?;
    // As the H200: a handle no process exported fails to map (ipc_event.open_zeros); one
    // this process exported cannot be opened here (ipc_event.open_same_process).
    let (pid, event) = parse(&handle).ok_or(CUresult::CUDA_ERROR_MAP_FAILED)?;
    if pid == std::process::id() {
        return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    let path = shared_event::path(pid, event);
    if shared_event::read(&path).is_none() {
        return Err(CUresult::CUDA_ERROR_MAP_FAILED);
    }
    let n = shared_event::newest(&path);
    let mark = Arc::new(std::sync::Mutex::new(crate::model::event::Mark {
        ipc: Some(IpcLink { path, n, imported: true }),
        ..Default::default()
    }));
    let flags = CUevent_flags::CU_EVENT_INTERPROCESS.0 | CUevent_flags::CU_EVENT_DISABLE_TIMING.0;
    let h = lock(&w.events).insert(Event { ctx, flags, mark });
    write(out, to_ptr(h))
}

/// `cuIpcOpenEventHandle`: a new event of the current context standing for the exported
/// one: waits for it (`cuEventSynchronize`, `cuStreamWaitEvent`, `cuEventQuery`) follow
/// the exporter's records, and a record here is seen there. An unknown handle (or one
/// whose event is gone): CUDA_ERROR_MAP_FAILED; a handle this process exported:
/// CUDA_ERROR_INVALID_CONTEXT (as the H200: conformance `ipc_event.open_*`).
pub(crate) unsafe fn cu_ipc_open_event_handle(w: &World, out: *mut CUevent, handle: CUipcEventHandle) -> CUresult {
    status(ipc_open(w, out, handle))
}
