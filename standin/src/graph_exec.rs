//! Graph execs: instantiation takes the graph's nodes in an order that respects its edges
//! (child graphs and conditional bodies with them) and its own references to the graph's
//! user objects and conditions. A launch is stream work (`stream.rs`): its nodes run in
//! that order after the work queued before it on the stream, device work and host nodes
//! alike; a conditional node reads its condition when it is reached (each round, for a
//! While); an event wait node makes the launch wait for the event, an event record node
//! records it when the launch is done
//! (a launch without host nodes on an idle stream is done at once; otherwise it runs on
//! the stream's driver thread; either way a kernel's fault leaves the context
//! sticky-failed, returned by the next synchronising call, as on a GPU). Destroying an exec releases its user object references once
//! its launches have completed.

use std::ffi::{c_char, c_ulonglong};
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph;
use crate::model::context::Context;
use crate::model::graph::{Exec, Node, Step};
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::stream;
use crate::user_object;
use crate::world::World;

/// Every `CUgraphInstantiate_flags` of the header.
const VALID_FLAGS: c_ulonglong = 0x1 | 0x2 | 0x4 | 0x8;

/// `CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD`: only `cuGraphInstantiateWithParams` takes it.
const UPLOAD: c_ulonglong = 0x2;
/// `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`.
const DEVICE_LAUNCH: c_ulonglong = 0x4;

/// Makes an exec of `g`. Refused with CUDA_ERROR_INVALID_VALUE, as the H200 refuses them
/// (conformance `instantiate_flags.*`): an unknown flag, UPLOAD outside
/// `cuGraphInstantiateWithParams` (`with_params`), and DEVICE_LAUNCH (the stand-in does not
/// launch graphs from the device; the H200 refused it for the suite's graph, alone and with
/// AUTO_FREE_ON_LAUNCH or USE_NODE_PRIORITY).
fn instantiate(
    w: &World,
    ph: *mut CUgraphExec,
    g: CUgraph,
    flags: c_ulonglong,
    with_params: bool,
) -> Result<(), CUresult> {
    non_null(ph)?;
    if flags & !VALID_FLAGS != 0 || flags & DEVICE_LAUNCH != 0 || (!with_params && flags & UPLOAD != 0) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    w.contexts.current()?;
    let graph::Snapshot { steps, edges, user_objects, conditionals } = graph::snapshot(w, from_ptr(g))?;
    crate::graph_mem_exec::before_instantiate(w, from_ptr(g), &steps, flags)?;
    // The graph holds these references, so the objects are live; should a retain fail
    // anyway, the ones taken are given back.
    let mut taken = Vec::new();
    for (&o, &n) in &user_objects {
        if let Err(s) = user_object::retain(w, o, n) {
            user_object::release_all(w, taken);
            return Err(s);
        }
        taken.push((o, n));
    }
    hold_conditionals(w, &conditionals);
    let memory_steps = steps.clone();
    let exec = Exec { steps, edges, user_objects, conditionals, flags, launches: Vec::new() };
    let h = lock(&w.execs).insert(exec);
    crate::graph_mem_exec::instantiated(w, from_ptr(g), h, &memory_steps, flags);
    write(ph, to_ptr(h))
}

/// `cuGraphInstantiate` (v10000/v11000): no error node, an empty log.
pub(crate) unsafe fn cu_graph_instantiate(
    w: &World,
    ph: *mut CUgraphExec,
    g: CUgraph,
    error_node: *mut CUgraphNode,
    log: *mut c_char,
    log_size: usize,
) -> CUresult {
    if !error_node.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { error_node.write(std::ptr::null_mut()) };
    }
    if !log.is_null() && log_size > 0 {
        // SAFETY: the caller's buffer has `log_size` > 0 bytes.
        unsafe { log.write(0) };
    }
    status(instantiate(w, ph, g, 0, false))
}

pub(crate) unsafe fn cu_graph_instantiate_with_flags(
    w: &World,
    ph: *mut CUgraphExec,
    g: CUgraph,
    flags: c_ulonglong,
) -> CUresult {
    status(instantiate(w, ph, g, flags, false))
}

/// `cuGraphInstantiateWithParams`: reports success in the parameters (the upload stream
/// is not used: nothing needs uploading).
pub(crate) unsafe fn cu_graph_instantiate_with_params(
    w: &World,
    ph: *mut CUgraphExec,
    g: CUgraph,
    params: *mut CUDA_GRAPH_INSTANTIATE_PARAMS,
) -> CUresult {
    let r = non_null(params).and_then(|()| {
        // SAFETY: a non-null pointer to the caller's parameters.
        let p = unsafe { &mut *params };
        p.hErrNode_out = std::ptr::null_mut();
        let r = instantiate(w, ph, g, p.flags, true);
        p.result_out = match r {
            Ok(()) => CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS,
            Err(_) => CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_ERROR,
        };
        r
    });
    status(r)
}

/// `cuGraphExecDestroy`: twice (or NULL): CUDA_ERROR_INVALID_VALUE (facts), and a double
/// destroy in the ledger.
pub(crate) unsafe fn cu_graph_exec_destroy(w: &'static World, e: CUgraphExec) -> CUresult {
    let exec = match lock(&w.execs).remove(from_ptr(e)) {
        Ok(exec) => exec,
        Err(s) => return s,
    };
    crate::graph_mem_exec::exec_destroyed(w, from_ptr(e));
    crate::lifecycle::exec_destroyed(w, exec);
    CUresult::CUDA_SUCCESS
}

/// An exec holds its graph's conditions too (their memory outlives the graph while it
/// may run).
fn hold_conditionals(w: &World, conditions: &[u64]) {
    let mut all = lock(&w.conditionals);
    for h in conditions {
        if let Some(c) = all.get_mut(h) {
            c.holders = c.holders.saturating_add(1);
        }
    }
}

/// The value of condition `h` (4 bytes of device memory at `h`).
fn condition(w: &World, h: u64) -> Result<u32, CUresult> {
    let mut v = [0u8; 4];
    lock(&w.memory).copy_to_host(v.as_mut_ptr(), h, 4)?;
    Ok(u32::from_ne_bytes(v))
}

/// Sets condition `h` to `value`.
fn set_condition(w: &World, h: u64, value: u32) -> Result<(), CUresult> {
    lock(&w.memory).copy_to_device(h, value.to_ne_bytes().as_ptr(), 4)
}

/// Runs the enabled steps in order in `ctx`: host nodes on the calling thread, child
/// graphs and conditional bodies in place. Event nodes are done by the launch.
fn run_steps(w: &World, steps: &[Step], ctx: &Context) -> Result<(), CUresult> {
    for step in steps.iter().filter(|s| s.enabled) {
        match &step.node {
            Node::Host(call) => HostCall::run(*call),
            Node::Child(_) => step.bodies.iter().try_for_each(|b| run_steps(w, b, ctx))?,
            Node::Conditional(c) => {
                while let Some(i) = c.body_for(condition(w, c.handle)?) {
                    run_steps(w, step.bodies.get(i).map(Vec::as_slice).unwrap_or_default(), ctx)?;
                    if c.kind != CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE {
                        break;
                    }
                }
            }
            node => crate::graph_node::run(w, node, ctx)?,
        }
    }
    Ok(())
}

/// Whether any enabled step (in any body) satisfies `f`.
fn any(steps: &[Step], f: impl Fn(&Node) -> bool) -> bool {
    let mut found = false;
    Step::each(steps, &mut |s| found |= s.enabled && f(&s.node));
    found
}

/// The events of the enabled event record (`record`) or wait steps.
fn events(steps: &[Step], record: bool) -> Vec<u64> {
    let mut out = Vec::new();
    Step::each(steps, &mut |s| match s.node {
        Node::EventRecord(e) if record && s.enabled => out.push(e),
        Node::EventWait(e) if !record && s.enabled => out.push(e),
        _ => {}
    });
    out
}

fn launch(w: &'static World, e: CUgraphExec, s: CUstream) -> Result<(), CUresult> {
    let h = from_ptr(e);
    let (steps, defaults, edges) = {
        let execs = lock(&w.execs);
        let exec = execs.get(h)?;
        let all = lock(&w.conditionals);
        let defaults: Vec<(u64, u32)> =
            exec.conditionals.iter().filter_map(|c| all.get(c).and_then(|d| d.default).map(|v| (*c, v))).collect();
        (exec.steps.clone(), defaults, exec.edges.clone())
    };
    let t = stream::resolve(w, s)?;
    crate::capture::refuse(w, s)?;
    crate::graph_mem_exec::before_launch(w, h, &t)?;
    // An event wait node: the launch waits for the event (as the stream would).
    for ev in events(&steps, false) {
        // SAFETY: no pointer arguments.
        let r = unsafe { crate::event::cu_stream_wait_event(w, s, to_ptr(ev), 0) };
        status_ok(r)?;
    }
    let ctx = Arc::clone(&t.ctx);
    let records = events(&steps, true);
    let has_host = any(&steps, |n| n.host_call().is_some());
    // One operation of the stream, with every node's footprint.
    let op = w.sanitizer.issue(&t, from_ptr(s), || format!("graph launch of exec {h:#x}"));
    let work = move || {
        crate::sanitized::run(w, op.as_ref(), || {
            defaults.iter().try_for_each(|&(c, v)| set_condition(w, c, v))?;
            match &op {
                // Sanitized: each node's footprint apart, for races between nodes no edge
                // orders.
                Some(op) => crate::sanitized::graph_steps(w, op, &steps, &edges, |one| run_steps(w, one, &ctx)),
                None => run_steps(w, &steps, &ctx),
            }
        })
    };
    let position = if has_host {
        // Host nodes run on the driver thread: the whole launch is queued.
        let ctx = Arc::clone(&t.ctx);
        t.push(Box::new(move || {
            if let Err(e) = work() {
                ctx.make_sticky(match e {
                    CUresult::CUDA_ERROR_INVALID_VALUE => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
                    e => e,
                });
            }
        }))?
    } else {
        t.submit(work)?
    };
    {
        let mut execs = lock(&w.execs);
        if let Ok(exec) = execs.get_mut(h) {
            exec.launches.retain(|(q, _)| !Arc::ptr_eq(q, &t.queue));
            exec.launches.push((Arc::clone(&t.queue), position));
        }
    }
    // An event record node: the event completes with the launch.
    for ev in records {
        // SAFETY: no pointer arguments.
        status_ok(unsafe { crate::event::cu_event_record(w, to_ptr(ev), s) })?;
    }
    Ok(())
}

fn status_ok(r: CUresult) -> Result<(), CUresult> {
    match r {
        CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(e),
    }
}

/// `cuGraphUpload`: a live exec and stream; nothing needs uploading (an exec with graph
/// memory maps its memory, `graph_mem_exec.rs`).
pub(crate) unsafe fn cu_graph_upload(w: &World, e: CUgraphExec, s: CUstream) -> CUresult {
    let r = lock(&w.execs).get(from_ptr(e)).map(drop).and_then(|()| stream::resolve(w, s).map(drop));
    if r.is_ok() {
        crate::graph_mem_exec::uploaded(w, from_ptr(e));
    }
    status(r)
}

/// `cuGraphExecGetFlags`: the flags it was instantiated with.
pub(crate) unsafe fn cu_graph_exec_get_flags(w: &World, e: CUgraphExec, flags: *mut cuuint64_t) -> CUresult {
    let r = non_null(flags).and_then(|()| {
        let f = lock(&w.execs).get(from_ptr(e))?.flags;
        write(flags, f)
    });
    status(r)
}

/// `cuGraphLaunch`: the nodes run in order, in stream order (see the module's text). On a
/// capturing stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated
/// (a real driver would capture a child graph node).
pub(crate) unsafe fn cu_graph_launch(w: &'static World, e: CUgraphExec, s: CUstream) -> CUresult {
    status(launch(w, e, s))
}
