//! Streams and host functions, and the order of stream work.
//!
//! Every stream-ordered operation (async copies and memsets, kernel launches,
//! stream-ordered allocation and free, peer copies, event records, host functions, graph
//! launches) goes through its stream's queue (`run/queue.rs`) and runs after the work
//! queued before it, as on a GPU: device work that finds its stream idle (and waiting for
//! nothing) is done at once on the calling thread, else queued and done later on the
//! stream's driver thread. A kernel's fault leaves the context sticky-failed either way,
//! and the call that launched it succeeds: the fault is reported by the next call that
//! uses the context, `cuStreamSynchronize` included, as on a GPU (`model/stream.rs`,
//! `Target::submit`); other failures of work done at once are returned by the call. Host
//! functions always run on the driver thread.
//!
//! The NULL stream, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` are all the current
//! context's legacy default stream (one per context: the emulation does not separate
//! per-thread default streams). As CUDA's legacy stream does, its work waits for the work
//! queued before on the context's blocking streams (created without
//! `CU_STREAM_NON_BLOCKING`), and their work waits for its; non-blocking streams are not
//! waited for. Synchronous calls (`cuMemcpy`, `cuMemsetD8`, ...) run on it: they wait for
//! that work, then are done before they return.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

use cudrv::sys::*;

use crate::capture;
use crate::ctx_query::{GREATEST_PRIORITY, LEAST_PRIORITY};
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::context::Context;
use crate::model::graph::Node;
use crate::model::stream::{is_default, Attributes, Stream, Target};
use crate::run::lock::lock;
use crate::run::queue::{HostCall, Queue};
use crate::world::World;

/// The stream `s` names, whatever its context's state: a default stream needs a current
/// context (CUDA_ERROR_INVALID_CONTEXT), another an existing stream
/// (CUDA_ERROR_INVALID_HANDLE).
fn find(w: &World, s: CUstream) -> Result<Target, CUresult> {
    let h = from_ptr(s);
    if is_default(h) {
        let ctx = w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        let queue = Arc::clone(&ctx.default_queue);
        return Ok(Target { ctx, queue, legacy: true, blocking: false });
    }
    let streams = lock(&w.streams);
    let st = streams.get(h)?;
    let blocking = st.flags & CUstream_flags::CU_STREAM_NON_BLOCKING.0 == 0;
    Ok(Target { ctx: Arc::clone(&st.ctx), queue: Arc::clone(&st.queue), legacy: false, blocking })
}

/// What the stream queries report about a stream (`stream_query.rs`).
pub(crate) struct Properties {
    pub(crate) ctx: Arc<Context>,
    /// Its handle; 0 for a default stream.
    pub(crate) id: u64,
    /// 0 for a default stream.
    pub(crate) flags: c_uint,
    /// 0 for a default stream.
    pub(crate) priority: c_int,
}

/// The properties of the stream `s` names, whatever its context's state (as [`find`]).
pub(crate) fn properties(w: &World, s: CUstream) -> Result<Properties, CUresult> {
    let h = from_ptr(s);
    if is_default(h) {
        let ctx = w.contexts.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        return Ok(Properties { ctx, id: 0, flags: 0, priority: 0 });
    }
    let streams = lock(&w.streams);
    let st = streams.get(h)?;
    Ok(Properties { ctx: Arc::clone(&st.ctx), id: h, flags: st.flags, priority: st.priority })
}

/// The stream `s` names, in a usable context (see [`Context::usable`]).
pub(crate) fn resolve(w: &World, s: CUstream) -> Result<Target, CUresult> {
    let t = find(w, s)?;
    t.ctx.usable()?;
    Ok(t)
}

/// As [`resolve`], for a call that only queues work behind what was launched (see
/// [`Context::usable_to_queue`]).
pub(crate) fn resolve_to_queue(w: &World, s: CUstream) -> Result<Target, CUresult> {
    let t = find(w, s)?;
    t.ctx.usable_to_queue()?;
    Ok(t)
}

fn create(w: &World, ph: *mut CUstream, flags: c_uint, priority: c_int) -> Result<(), CUresult> {
    non_null(ph)?;
    let ctx = w.contexts.current()?;
    create_in(w, ph, ctx, flags, priority)
}

/// Makes a stream in `ctx`.
pub(crate) fn create_in(
    w: &World,
    ph: *mut CUstream,
    ctx: Arc<Context>,
    flags: c_uint,
    priority: c_int,
) -> Result<(), CUresult> {
    non_null(ph)?;
    if flags & !CUstream_flags::CU_STREAM_NON_BLOCKING.0 != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let queue = Queue::new();
    ctx.add_queue(&queue, flags & CUstream_flags::CU_STREAM_NON_BLOCKING.0 == 0);
    let priority = priority.clamp(GREATEST_PRIORITY, LEAST_PRIORITY);
    let attrs = Attributes::DEFAULT;
    let h = lock(&w.streams).insert(Stream { ctx, queue, flags, priority, attrs });
    write(ph, to_ptr(h))
}

pub(crate) unsafe fn cu_stream_create(w: &World, ph: *mut CUstream, flags: c_uint) -> CUresult {
    status(create(w, ph, flags, 0))
}

/// `cuStreamCreateWithPriority`: any priority is accepted, clamped to the range (it has
/// no other effect).
pub(crate) unsafe fn cu_stream_create_with_priority(
    w: &World,
    ph: *mut CUstream,
    flags: c_uint,
    priority: c_int,
) -> CUresult {
    status(create(w, ph, flags, priority))
}

/// `cuStreamDestroy`: pending host functions still run. A default stream (facts:
/// `cuStreamDestroy(NULL)`) or an unknown stream: CUDA_ERROR_INVALID_HANDLE. A destroyed
/// one: CUDA_ERROR_INVALID_HANDLE and a double destroy in the ledger (facts: a real driver
/// crashes).
pub(crate) unsafe fn cu_stream_destroy(w: &World, h: CUstream) -> CUresult {
    let h = from_ptr(h);
    if is_default(h) {
        return CUresult::CUDA_ERROR_INVALID_HANDLE;
    }
    let mut streams = lock(&w.streams);
    if let Ok(s) = streams.get(h) {
        if let Err(e) = s.ctx.not_sticky() {
            return e;
        }
    }
    let removed = streams.remove(h).map(drop);
    drop(streams);
    if removed.is_ok() {
        crate::lifecycle::stream_destroyed(w, h);
    }
    status(removed)
}

/// Waits for the work queued on `s` so far; a sticky failure (of that work too) shows
/// here. On a capturing stream: see [`cu_stream_query`].
pub(crate) unsafe fn cu_stream_synchronize(w: &World, s: CUstream) -> CUresult {
    status(resolve(w, s).and_then(|t| {
        capture::refuse(w, s)?;
        t.drain()?;
        w.sanitizer.host_waited_stream(&t, from_ptr(s));
        t.ctx.usable()
    }))
}

/// CUDA_ERROR_NOT_READY while work queued on `s` is pending. On a capturing stream
/// (facts): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated.
pub(crate) unsafe fn cu_stream_query(w: &World, s: CUstream) -> CUresult {
    match resolve(w, s).and_then(|t| capture::refuse(w, s).map(|()| t)) {
        Ok(t) if t.busy() => CUresult::CUDA_ERROR_NOT_READY,
        Ok(t) => {
            w.sanitizer.host_waited_stream(&t, from_ptr(s));
            CUresult::CUDA_SUCCESS
        }
        Err(e) => e,
    }
}

fn context_of(w: &World, s: CUstream) -> Result<CUcontext, CUresult> {
    let t = find(w, s)?;
    t.ctx.alive()?;
    Ok(to_ptr(t.ctx.handle))
}

pub(crate) unsafe fn cu_stream_get_ctx(w: &World, s: CUstream, pctx: *mut CUcontext) -> CUresult {
    status(non_null(pctx).and_then(|()| write(pctx, context_of(w, s)?)))
}

/// `cuStreamGetCtx_v12050`: the context, and the green context it was made from (NULL
/// for a context that is not a green context's).
pub(crate) unsafe fn cu_stream_get_ctx_v12050(
    w: &World,
    s: CUstream,
    pctx: *mut CUcontext,
    pgreen: *mut CUgreenCtx,
) -> CUresult {
    if pctx.is_null() && pgreen.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let ctx = match context_of(w, s) {
        Ok(c) => c,
        Err(e) => return e,
    };
    if !pctx.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { pctx.write(ctx) };
    }
    if !pgreen.is_null() {
        let green = lock(&w.greens).of_context(from_ptr(ctx));
        // SAFETY: as above.
        unsafe { pgreen.write(to_ptr(green)) };
    }
    CUresult::CUDA_SUCCESS
}

fn launch_host_func(w: &World, s: CUstream, f: CUhostFn, data: *mut c_void) -> Result<(), CUresult> {
    let call = HostCall::new(f, data).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let t = resolve(w, s)?;
    match capture::record(w, s, Node::Host(call))? {
        Some(_) => t.push(call.task()).map(drop),
        None => Ok(()),
    }
}

/// `cuLaunchHostFunc`: `f(data)` runs on the stream's driver thread, after the work pushed
/// before it. On a capturing stream it becomes a host node.
pub(crate) unsafe fn cu_launch_host_func(w: &World, s: CUstream, f: CUhostFn, data: *mut c_void) -> CUresult {
    status(launch_host_func(w, s, f, data))
}

/// `cuLaunchHostFunc_v13010`: the sync mode is checked (0 or 1) and otherwise ignored.
pub(crate) unsafe fn cu_launch_host_func_v13010(
    w: &World,
    s: CUstream,
    f: CUhostFn,
    data: *mut c_void,
    sync_mode: c_uint,
) -> CUresult {
    if sync_mode > 1 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    status(launch_host_func(w, s, f, data))
}

/// What `cuStreamAddCallback` queues: the callback, its stream and argument.
struct Callback {
    f: unsafe extern "C" fn(CUstream, CUresult, *mut c_void),
    stream: CUstream,
    data: *mut c_void,
}

/// Runs a queued [`Callback`] (a host function whose argument is the boxed callback).
unsafe extern "C" fn run_callback(data: *mut c_void) {
    // SAFETY: `data` is the `Box<Callback>` that `add_callback` leaked for this one call.
    let cb = unsafe { Box::from_raw(data.cast::<Callback>()) };
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the program's callback with its stream and argument, as it asked.
        unsafe { (cb.f)(cb.stream, CUresult::CUDA_SUCCESS, cb.data) }
    });
}

fn add_callback(w: &World, s: CUstream, f: CUstreamCallback, data: *mut c_void, flags: c_uint) -> Result<(), CUresult> {
    let f = f.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if flags != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let t = resolve(w, s)?;
    let cb = Box::into_raw(Box::new(Callback { f, stream: s, data })).cast::<c_void>();
    let call = HostCall::new(Some(run_callback), cb).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    t.push(call.task()).map(drop).inspect_err(|_| {
        // SAFETY: the box leaked above, never queued.
        drop(unsafe { Box::from_raw(cb.cast::<Callback>()) })
    })
}

/// `cuStreamAddCallback`: the callback runs as a host function does, with status SUCCESS;
/// flags must be 0.
pub(crate) unsafe fn cu_stream_add_callback(
    w: &World,
    s: CUstream,
    f: CUstreamCallback,
    data: *mut c_void,
    flags: c_uint,
) -> CUresult {
    status(add_callback(w, s, f, data, flags))
}
