//! `cuGraphExecUpdate` (the 10.2 form and the 12.0 one with a result record): an exec
//! takes the parameters of another graph of the same shape. Nodes are paired in the order
//! instantiation runs them (for the graph the exec was made from: each node with itself);
//! the update is refused (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, nothing changed) with
//! CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED when the node count or the edges differ
//! (the error node: the first new node whose edges differ, or NULL for a count), and
//! CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED (the error node: the new node) when a
//! paired node is of another type; child graphs are compared the same way. On success each
//! step keeps its node's identity (later per-node updates name the original graph's
//! nodes) and enabled state, and takes the new parameters. The exec keeps its user object
//! references and conditions.

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, to_ptr, write};
use crate::graph;
use crate::model::graph::Step;
use crate::run::lock::lock;
use crate::world::World;

type Refusal = (CUgraphExecUpdateResult, u64);

/// The position of each node (by origin) in `steps`.
fn position(steps: &[Step], h: u64) -> Option<usize> {
    steps.iter().position(|s| s.origin == h)
}

/// Whether `new` can update `old` (same count, types and edges, recursively); the update
/// applied to a copy of `old` if so.
pub(crate) fn merge(
    old: &[Step],
    old_edges: &[(u64, u64)],
    new: &[Step],
    new_edges: &[(u64, u64)],
) -> Result<Vec<Step>, Refusal> {
    use CUgraphExecUpdateResult as R;
    if old.len() != new.len() {
        return Err((R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, 0));
    }
    // Edges as pairs of positions.
    let as_positions = |steps: &[Step], edges: &[(u64, u64)]| {
        let mut v: Vec<(Option<usize>, Option<usize>)> =
            edges.iter().map(|&(a, b)| (position(steps, a), position(steps, b))).collect();
        v.sort();
        v
    };
    let (old_p, new_p) = (as_positions(old, old_edges), as_positions(new, new_edges));
    let mut merged = Vec::with_capacity(old.len());
    for (i, (o, n)) in old.iter().zip(new).enumerate() {
        if o.node.kind() != n.node.kind() {
            return Err((R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, n.origin));
        }
        let into = |p: &[(Option<usize>, Option<usize>)]| p.iter().filter(|e| e.1 == Some(i)).count();
        let from_old: Vec<_> = old_p.iter().filter(|e| e.1 == Some(i)).collect();
        let from_new: Vec<_> = new_p.iter().filter(|e| e.1 == Some(i)).collect();
        if into(&old_p) != into(&new_p) || from_old != from_new {
            return Err((R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, n.origin));
        }
        if o.bodies.len() != n.bodies.len() {
            return Err((R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, n.origin));
        }
        let mut bodies = Vec::with_capacity(o.bodies.len());
        for (ob, nb) in o.bodies.iter().zip(&n.bodies) {
            // Bodies are compared by position and kind (their edges are not kept).
            bodies.push(merge(ob, &[], nb, &[])?);
        }
        merged.push(Step { origin: o.origin, node: n.node.clone(), enabled: o.enabled, bodies });
    }
    Ok(merged)
}

/// Updates exec `e` from graph `g`: the result and error node.
fn update(w: &World, e: CUgraphExec, g: CUgraph) -> Result<Result<(), Refusal>, CUresult> {
    let snap = graph::snapshot(w, from_ptr(g))?;
    let mut execs = lock(&w.execs);
    let exec = execs.get_mut(from_ptr(e))?;
    Ok(merge(&exec.steps, &exec.edges, &snap.steps, &snap.edges).map(|steps| exec.steps = steps))
}

const FAILED: CUresult = CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;

pub(crate) unsafe fn cu_graph_exec_update(
    w: &World,
    e: CUgraphExec,
    g: CUgraph,
    error_node: *mut CUgraphNode,
    result: *mut CUgraphExecUpdateResult,
) -> CUresult {
    let r = non_null(error_node).and_then(|()| non_null(result)).and_then(|()| update(w, e, g));
    let (res, node) = match r {
        Err(s) => return s,
        Ok(Ok(())) => (CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS, 0),
        Ok(Err(refusal)) => refusal,
    };
    // The pointers were checked above.
    let _ = write(error_node, to_ptr(node));
    let _ = write(result, res);
    match res {
        CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS => CUresult::CUDA_SUCCESS,
        _ => FAILED,
    }
}

pub(crate) unsafe fn cu_graph_exec_update_v12000(
    w: &World,
    e: CUgraphExec,
    g: CUgraph,
    info: *mut CUgraphExecUpdateResultInfo,
) -> CUresult {
    let r = non_null(info).and_then(|()| update(w, e, g));
    let (result, node) = match r {
        Err(s) => return s,
        Ok(Ok(())) => (CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS, 0),
        Ok(Err(refusal)) => refusal,
    };
    let out = CUgraphExecUpdateResultInfo { result, errorNode: to_ptr(node), errorFromNode: std::ptr::null_mut() };
    let _ = write(info, out);
    match result {
        CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS => CUresult::CUDA_SUCCESS,
        _ => FAILED,
    }
}
