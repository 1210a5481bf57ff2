//! Stream capture: the state of each capture sequence, and the hooks through which
//! stream-ordered calls record their work as graph nodes instead of doing it. The entry
//! points (`cuStreamBeginCapture`, `cuStreamEndCapture`, ...) are in `capture_api.rs`.
//!
//! Behaviour follows `docs/driver-facts.md` ("facts": stream capture); where the facts are
//! silent, the CUDA documentation. A capture sequence begins on one stream (its origin)
//! with a graph; each captured node depends on the stream's current dependencies and
//! becomes them (stream order). An event recorded on a capturing stream remembers the
//! stream's dependencies; another stream that waits for it joins the capture (a fork) or,
//! already in it, adds them to its own (a join). Ending the capture on the origin requires
//! every other stream's work to have been joined back (else
//! CUDA_ERROR_STREAM_CAPTURE_UNJOINED).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::from_ptr;
use crate::graph;
use crate::model::capture::{Captures, Member, Sequence};
use crate::model::graph::Node;
use crate::model::stream::{STREAM_LEGACY, STREAM_PER_THREAD};
use crate::run::lock::lock;
use crate::run::thread;
use crate::world::World;

// Dependencies are kept as `u64` handles and handed out as `CUgraphNode` arrays.
const _: () = assert!(std::mem::size_of::<u64>() == std::mem::size_of::<CUgraphNode>());

const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
const THREAD_LOCAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
const RELAXED: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;

/// Whether `s` names a default stream (never captured).
pub(crate) fn is_default(s: CUstream) -> bool {
    matches!(from_ptr(s), 0 | STREAM_LEGACY | STREAM_PER_THREAD)
}

/// CUDA_ERROR_INVALID_VALUE for a mode that is none of the three.
pub(crate) fn check_mode(mode: CUstreamCaptureMode) -> Result<(), CUresult> {
    match mode {
        GLOBAL | THREAD_LOCAL | RELAXED => Ok(()),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

/// Swaps the calling thread's capture interaction mode with `mode`.
pub(crate) fn exchange_thread_mode(w: &World, mode: CUstreamCaptureMode) -> Result<CUstreamCaptureMode, CUresult> {
    check_mode(mode)?;
    w.contexts.with_thread(|t| std::mem::replace(&mut t.capture_mode, mode)).ok_or(CUresult::CUDA_ERROR_NOT_PERMITTED)
}

/// Begins a capture on the non-default stream `s` of context `ctx` into `into` (a given
/// graph and dependencies) or a new graph: CUDA_ERROR_ILLEGAL_STATE if `s` is capturing.
pub(crate) fn begin(
    w: &World,
    s: CUstream,
    ctx: u64,
    into: Option<(u64, Vec<u64>)>,
    mode: CUstreamCaptureMode,
) -> Result<(), CUresult> {
    check_mode(mode)?;
    if let Some((g, deps)) = &into {
        graph::check_deps(w, *g, deps)?;
    }
    let h = from_ptr(s);
    let mut st = lock(&w.captures);
    if st.members.contains_key(&h) {
        return Err(CUresult::CUDA_ERROR_ILLEGAL_STATE);
    }
    let (graph, deps, owns_graph) = match into {
        Some((g, deps)) => (g, deps, false),
        None => (graph::create(w), Vec::new(), true),
    };
    let id = w.next_capture.fetch_add(1, Ordering::Relaxed);
    let (thread, parents) = (thread::key(), BTreeMap::new());
    st.sequences.insert(id, Sequence { graph, owns_graph, mode, thread, ctx, origin: h, invalidated: false, parents });
    st.members.insert(h, Member::new(id, deps));
    Ok(())
}

/// Ends the capture begun on `s`, removing it and every stream in it: its graph, or
/// CUDA_ERROR_ILLEGAL_STATE (not capturing), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED (begun
/// on another stream), CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD (not relaxed, begun on
/// another thread; the capture goes on), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED or
/// CUDA_ERROR_STREAM_CAPTURE_UNJOINED (the capture is over and its graph gone).
pub(crate) fn end(w: &World, s: CUstream) -> Result<u64, CUresult> {
    let h = from_ptr(s);
    let (graph, result) = {
        let mut st = lock(&w.captures);
        let id = st.members.get(&h).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?.id;
        let seq = st.sequences.get_mut(&id).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?;
        if seq.origin != h {
            // facts (conformance on the H200): ending on a joined stream invalidates the
            // capture; the origin's end then answers INVALIDATED.
            seq.invalidated = true;
            return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
        }
        let seq = st.sequences.get(&id).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?;
        if seq.mode != RELAXED && seq.thread != thread::key() {
            return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        }
        let result = if seq.invalidated {
            Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        } else if !joined(&st, id, h) {
            Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED)
        } else {
            Ok(seq.graph)
        };
        (st.remove_sequence(id), result)
    };
    if result.is_err() {
        if let Some(g) = graph {
            graph::destroy(w, g);
        }
    }
    result
}

/// Whether every stream of sequence `id` has had its work joined back into `origin`: its
/// dependencies are the origin's or their ancestors.
fn joined(st: &Captures, id: u64, origin: u64) -> bool {
    let (Some(seq), Some(o)) = (st.sequences.get(&id), st.members.get(&origin)) else {
        return false;
    };
    let mut reached = BTreeSet::new();
    let mut todo = o.deps.clone();
    while let Some(n) = todo.pop() {
        if reached.insert(n) {
            todo.extend(seq.parents.get(&n).into_iter().flatten());
        }
    }
    st.members.values().filter(|m| m.id == id).all(|m| m.deps.iter().all(|d| reached.contains(d)))
}

/// What `cuStreamGetCaptureInfo` reports about a stream.
pub(crate) struct Info {
    pub(crate) status: CUstreamCaptureStatus,
    pub(crate) id: u64,
    pub(crate) graph: u64,
    /// The stream's dependencies and their edges: arrays the stand-in keeps until the
    /// stream's capture state next changes.
    pub(crate) deps: (*const CUgraphNode, *const CUgraphEdgeData, usize),
}

/// The capture state of `s` (a default stream: none).
pub(crate) fn info(w: &World, s: CUstream) -> Info {
    let st = lock(&w.captures);
    let none = Info {
        status: CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE,
        id: 0,
        graph: 0,
        deps: (std::ptr::null(), std::ptr::null(), 0),
    };
    let Some(m) = st.members.get(&from_ptr(s)) else {
        return none;
    };
    let Some(seq) = st.sequences.get(&m.id) else {
        return none;
    };
    let status = match seq.invalidated {
        true => CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED,
        false => CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
    };
    let deps = (m.deps.as_ptr().cast::<CUgraphNode>(), m.edges.as_ptr(), m.deps.len());
    Info { status, id: m.id, graph: seq.graph, deps }
}

/// `cuStreamUpdateCaptureDependencies`: adds `deps` to the dependencies of the capturing
/// stream `s` (`set`: replaces them). CUDA_ERROR_ILLEGAL_STATE if `s` is not capturing,
/// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED if its capture was invalidated,
/// CUDA_ERROR_INVALID_VALUE if a node is not one of the capture's graph (nothing changes
/// then). Nodes removed this way need not be joined back before the capture ends (the
/// CUDA documentation): only the streams' dependencies are checked then.
pub(crate) fn update_deps(w: &World, s: CUstream, deps: Vec<u64>, set: bool) -> Result<(), CUresult> {
    let h = from_ptr(s);
    let mut st = lock(&w.captures);
    let Captures { sequences, members, .. } = &mut *st;
    let m = members.get_mut(&h).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?;
    let seq = sequences.get(&m.id).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?;
    if seq.invalidated {
        return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    graph::check_deps(w, seq.graph, &deps)?;
    let mut all = if set { Vec::new() } else { m.deps.clone() };
    for d in deps {
        if !all.contains(&d) {
            all.push(d);
        }
    }
    m.set_deps(all);
    Ok(())
}

/// Records `node` if `s` is capturing (`Ok(None)`), or hands it back to be done
/// (`Ok(Some)`). A capture that was invalidated: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
pub(crate) fn record(w: &World, s: CUstream, node: Node) -> Result<Option<Node>, CUresult> {
    let h = from_ptr(s);
    let mut st = lock(&w.captures);
    let Captures { sequences, members, .. } = &mut *st;
    let Some(m) = members.get_mut(&h) else {
        return Ok(Some(node));
    };
    let seq = sequences.get_mut(&m.id).ok_or(CUresult::CUDA_ERROR_ILLEGAL_STATE)?;
    if seq.invalidated {
        return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    let n = graph::add(w, seq.graph, &m.deps, node)?;
    seq.parents.insert(n, m.deps.clone());
    m.set_deps(vec![n]);
    Ok(None)
}

/// Queues `node` on the stream `t` (`s`) in stream order (`stream.rs`: done at once if the
/// stream is idle), after checking what can be checked now, unless `s` is capturing, which
/// records it instead. A copy to or from pageable host memory waits for the stream's
/// earlier work and is done before this returns, as on a real driver.
pub(crate) fn record_or_run(
    w: &World,
    s: CUstream,
    node: Node,
    t: &crate::model::stream::Target,
) -> Result<(), CUresult> {
    // Queued work outlives the call: it holds the world by its slot (every entry's world
    // is one of the process's slots).
    let w: &'static World = World::of(w.slot()).unwrap_or(World::at::<0>());
    match record(w, s, node)? {
        Some(node) => {
            crate::graph_node::check(w, &node)?;
            let op = crate::sanitized::issue(w, t, s, &node);
            if crate::graph_node::pageable(w, &node) {
                t.drain()?;
                t.ctx.usable()?;
                let r = crate::sanitized::run(w, op.as_ref(), || crate::graph_node::run(w, &node, &t.ctx));
                // Done before the call returns: the host knows it.
                if let Some(op) = &op {
                    w.sanitizer.host_waited(op);
                }
                return r;
            }
            let ctx = Arc::clone(&t.ctx);
            t.submit(move || crate::sanitized::run(w, op.as_ref(), || crate::graph_node::run(w, &node, &ctx))).map(drop)
        }
        None => Ok(()),
    }
}

/// Invalidates the capture of `s` and answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED if it
/// is capturing (facts: `cuStreamQuery` on a capturing stream); `Ok` otherwise.
pub(crate) fn refuse(w: &World, s: CUstream) -> Result<(), CUresult> {
    let mut st = lock(&w.captures);
    let Captures { sequences, members, .. } = &mut *st;
    match members.get(&from_ptr(s)).and_then(|m| sequences.get_mut(&m.id)) {
        Some(seq) => {
            seq.invalidated = true;
            Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
        }
        None => Ok(()),
    }
}

/// `cuEventRecord(e, s)`: on a capturing stream the event remembers the stream's
/// dependencies (`Ok(true)`: nothing else to do); elsewhere it stops being a captured
/// event (`Ok(false)`: record it as usual).
pub(crate) fn record_event(w: &World, e: CUevent, s: CUstream) -> Result<bool, CUresult> {
    let mut st = lock(&w.captures);
    let (e, h) = (from_ptr(e), from_ptr(s));
    st.external_events.remove(&e);
    let Some(m) = st.members.get(&h) else {
        st.events.remove(&e);
        st.ended_events.remove(&e);
        return Ok(false);
    };
    if st.sequences.get(&m.id).is_none_or(|q| q.invalidated) {
        return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    let mark = (m.id, m.deps.clone());
    st.events.insert(e, mark);
    Ok(true)
}

/// After `cuEventRecordWithFlags(e, s, CU_EVENT_RECORD_EXTERNAL)` recorded a node in the
/// capture of `s`: `e` stands for that node until the capture ends or `e` is recorded
/// again.
pub(crate) fn note_external_record(w: &World, e: CUevent, s: CUstream) {
    let mut st = lock(&w.captures);
    if let Some(id) = st.members.get(&from_ptr(s)).map(|m| m.id) {
        st.external_events.insert(from_ptr(e), id);
    }
}

/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED if `e` was recorded with
/// `CU_EVENT_RECORD_EXTERNAL` in a capture still going on (invalidated, as by a query on
/// the H200, when `invalidates`);
/// CUDA_ERROR_CAPTURED_EVENT if `e` was last recorded on a stream that is still
/// capturing (`cuEventQuery`, `cuEventSynchronize`, `cuEventElapsedTime` of it): such an
/// event stands for a node of a graph, not for work that will run. A query or a
/// synchronisation (`invalidates`) is an invalid operation during capture: its capture is
/// invalidated; an elapsed time is not (as the H200 answers). CUDA_ERROR_INVALID_VALUE if
/// it was last recorded in a capture that has ended (the H200's answer to a query). `Ok`
/// for any other event.
pub(crate) fn captured_event(w: &World, e: CUevent, invalidates: bool) -> Result<(), CUresult> {
    let mut st = lock(&w.captures);
    let e = from_ptr(e);
    if let Some(&id) = st.external_events.get(&e) {
        if let Some(seq) = st.sequences.get_mut(&id).filter(|_| invalidates) {
            seq.invalidated = true;
        }
        return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    let Some((id, _)) = st.events.get(&e) else {
        return match st.ended_events.contains(&e) {
            true => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            false => Ok(()),
        };
    };
    let id = *id;
    if let Some(seq) = st.sequences.get_mut(&id).filter(|_| invalidates) {
        seq.invalidated = true;
    }
    Err(CUresult::CUDA_ERROR_CAPTURED_EVENT)
}

/// Before `cuCtxWaitEvent(ctx, e)`: if `e` was recorded in a capture still going on, or
/// context `ctx` has a capturing stream, those captures are invalidated and the call
/// answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (the CUDA documentation).
pub(crate) fn before_ctx_wait(w: &World, ctx: u64, e: CUevent) -> Result<(), CUresult> {
    let mut st = lock(&w.captures);
    let of_event = st.events.get(&from_ptr(e)).map(|(id, _)| *id);
    let mut refused = false;
    for (id, seq) in st.sequences.iter_mut() {
        if seq.ctx == ctx || Some(*id) == of_event {
            seq.invalidated = true;
            refused = true;
        }
    }
    match refused {
        true => Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
        false => Ok(()),
    }
}

/// `cuStreamWaitEvent(s, e)` where capture is concerned (`Ok(true)`: handled; `Ok(false)`:
/// wait as usual). A stream waiting for an event recorded in a capture joins it (or, in
/// it, takes the event's dependencies too); a stream of another capture:
/// CUDA_ERROR_STREAM_CAPTURE_MERGE; a capturing stream waiting for an event recorded
/// outside every capture: CUDA_ERROR_STREAM_CAPTURE_ISOLATION (without
/// CU_EVENT_WAIT_EXTERNAL, then nothing is recorded). A default stream waiting for a
/// captured event: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED. Errors invalidate the captures.
pub(crate) fn wait_event(w: &World, s: CUstream, e: CUevent, flags: u32) -> Result<bool, CUresult> {
    let mut st = lock(&w.captures);
    let h = from_ptr(s);
    let mark = st.events.get(&from_ptr(e)).cloned();
    let own = st.members.get(&h).map(|m| m.id);
    let (failed, error) = match (own, mark) {
        (None, None) => return Ok(false),
        (Some(_), None) if flags & CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL.0 != 0 => return Ok(true),
        (Some(id), None) => (vec![id], CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
        (Some(id), Some((other, _))) if id != other => (vec![id, other], CUresult::CUDA_ERROR_STREAM_CAPTURE_MERGE),
        (None, Some((id, _))) if is_default(s) => (vec![id], CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
        (Some(_), Some((_, deps))) => {
            if let Some(m) = st.members.get_mut(&h) {
                let mut all = m.deps.clone();
                all.extend(deps.into_iter().filter(|d| !m.deps.contains(d)));
                m.set_deps(all);
            }
            return Ok(true);
        }
        (None, Some((id, deps))) => {
            st.members.insert(h, Member::new(id, deps));
            return Ok(true);
        }
    };
    for id in failed {
        if let Some(seq) = st.sequences.get_mut(&id) {
            seq.invalidated = true;
        }
    }
    Err(error)
}

/// Before synchronising context `ctx` (`cuCtxSynchronize`): captures in that context, and
/// captures whose mode forbids the calling thread such calls (see [`refuse_forbidden`]),
/// are invalidated and the call answers CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
pub(crate) fn before_sync(w: &World, ctx: u64) -> Result<(), CUresult> {
    refuse_forbidden(w, Some(ctx), CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, false)
}

/// Before a call a capture's mode forbids (`cuMemAlloc`: `status` UNSUPPORTED; work on the
/// legacy stream, which would synchronise with the capturing stream: IMPLICIT): the
/// captures whose mode forbids the calling thread such calls are invalidated and the call
/// answers `status` (driver-facts.md, the conformance suite on the H200).
pub(crate) fn before_unsafe_call(w: &World, status: CUresult) -> Result<(), CUresult> {
    refuse_forbidden(w, None, status, true)
}

/// Invalidates the captures in context `ctx` and those whose mode forbids the calling
/// thread unsafe calls (the global mode, or the thread's own thread-local one, unless the
/// thread's mode is relaxed); `status` if there were any. `own_only`: only captures the
/// calling thread began (the stand-in's limit for unsafe calls other than synchronising:
/// a real driver's global mode forbids them on every thread).
fn refuse_forbidden(w: &World, ctx: Option<u64>, status: CUresult, own_only: bool) -> Result<(), CUresult> {
    let thread_mode = w.contexts.with_thread(|t| t.capture_mode).unwrap_or(GLOBAL);
    let me = thread::key();
    let mut st = lock(&w.captures);
    let mut refused = false;
    for seq in st.sequences.values_mut() {
        let forbids = thread_mode != RELAXED
            && match seq.mode {
                RELAXED => false,
                GLOBAL => seq.thread == me || thread_mode == GLOBAL,
                _ => seq.thread == me,
            };
        if Some(seq.ctx) == ctx || (forbids && (!own_only || seq.thread == me)) {
            seq.invalidated = true;
            refused = true;
        }
    }
    match refused {
        true => Err(status),
        false => Ok(()),
    }
}
