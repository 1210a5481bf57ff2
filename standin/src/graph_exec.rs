//! Graph execs: instantiation takes the graph's nodes in order and its own references to
//! the graph's user objects. A launch is stream work (`stream.rs`): its nodes run in
//! order after the work queued before it on the stream, device work and host nodes alike
//! (a launch without host nodes on an idle stream is done at once, and its failure
//! returned; otherwise it runs on the stream's driver thread, and a failure leaves the
//! context sticky-failed). Destroying an exec releases its user object references once
//! its launches have completed.

use std::ffi::{c_char, c_ulonglong};
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph;
use crate::model::graph::Exec;
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::stream;
use crate::user_object;
use crate::world::World;

/// Every `CUgraphInstantiate_flags` of the header.
const VALID_FLAGS: c_ulonglong = 0x1 | 0x2 | 0x4 | 0x8;

fn instantiate(w: &World, ph: *mut CUgraphExec, g: CUgraph, flags: c_ulonglong) -> Result<(), CUresult> {
    non_null(ph)?;
    if flags & !VALID_FLAGS != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    w.contexts.current()?;
    let (nodes, user_objects) = graph::snapshot(w, from_ptr(g))?;
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
    let h = lock(&w.execs).insert(Exec { nodes, user_objects, launches: Vec::new() });
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
    status(instantiate(w, ph, g, 0))
}

pub(crate) unsafe fn cu_graph_instantiate_with_flags(
    w: &World,
    ph: *mut CUgraphExec,
    g: CUgraph,
    flags: c_ulonglong,
) -> CUresult {
    status(instantiate(w, ph, g, flags))
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
        let r = instantiate(w, ph, g, p.flags);
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
    crate::lifecycle::exec_destroyed(w, exec);
    CUresult::CUDA_SUCCESS
}

fn launch(w: &'static World, e: CUgraphExec, s: CUstream) -> Result<(), CUresult> {
    let h = from_ptr(e);
    let nodes = lock(&w.execs).get(h)?.nodes.clone();
    let t = stream::resolve(w, s)?;
    crate::capture::refuse(w, s)?;
    let ctx = Arc::clone(&t.ctx);
    let position = if nodes.iter().any(|n| n.host_call().is_some()) {
        // Host nodes run on the driver thread: the whole launch is queued.
        t.push(Box::new(move || {
            for node in nodes.iter() {
                match node.host_call() {
                    Some(call) => HostCall::run(call),
                    None => {
                        if let Err(e) = crate::graph_node::run(w, node, &ctx) {
                            ctx.make_sticky(match e {
                                CUresult::CUDA_ERROR_INVALID_VALUE => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
                                e => e,
                            });
                            return;
                        }
                    }
                }
            }
        }))?
    } else {
        t.submit(move || nodes.iter().try_for_each(|node| crate::graph_node::run(w, node, &ctx)))?
    };
    let mut execs = lock(&w.execs);
    if let Ok(exec) = execs.get_mut(h) {
        exec.launches.retain(|(q, _)| !Arc::ptr_eq(q, &t.queue));
        exec.launches.push((t.queue, position));
    }
    Ok(())
}

/// `cuGraphLaunch`: the nodes run in order, in stream order (see the module's text). On a
/// capturing stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated
/// (a real driver would capture a child graph node).
pub(crate) unsafe fn cu_graph_launch(w: &'static World, e: CUgraphExec, s: CUstream) -> CUresult {
    status(launch(w, e, s))
}
