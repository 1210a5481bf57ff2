//! Per-node calls beyond parameters: the event of an event record or wait node changed in
//! a graph or an exec (`cuGraph[Exec]Event{Record,Wait}NodeSetEvent`), an exec's child
//! graph node given another graph of the same shape (`cuGraphExecChildGraphNodeSetParams`,
//! else CUDA_ERROR_INVALID_VALUE), kernel node attributes (`cuGraphKernelNode{Get,Set,
//! Copy}Attribute[s]`: kept, not acted on; one never set reads as zeros), and the ids of
//! 13.1 (`cuGraphGetId`, `cuGraphExecGetId`, `cuGraphNodeGetLocalId`,
//! `cuGraphNodeGetToolsId`, `cuGraphNodeGetContainingGraph`).
//!
//! Ids: a graph's and an exec's are numbers from 1, given when first asked for (unique in
//! the world); a node's local id is its place among its graph's nodes in the order they
//! were added, from 0; its tools id is the graph's id in the high 32 bits and the local id
//! in the low ones. The H200's numbering is not recorded yet: these are guesses.

use std::ffi::{c_uint, c_ulonglong};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::find_node;
use crate::graph_params::{replace, replace_in_exec};
use crate::model::graph::{AttrBytes, Node, Step};
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// Changes the event of an event record (`record`) or wait node `h` of a graph (`e` null)
/// or of exec `e`: a live event (else CUDA_ERROR_INVALID_HANDLE), a node of that kind
/// (else CUDA_ERROR_INVALID_VALUE).
fn set_event(w: &World, e: Option<CUgraphExec>, h: CUgraphNode, ev: CUevent, record: bool) -> Result<(), CUresult> {
    let ev = from_ptr(ev);
    lock(&w.events).get(ev)?;
    let node = if record { Node::EventRecord(ev) } else { Node::EventWait(ev) };
    match e {
        None => replace(w, h, node),
        Some(e) => replace_in_exec(w, e, h, node),
    }
}

pub(crate) unsafe fn cu_graph_event_record_node_set_event(w: &World, h: CUgraphNode, ev: CUevent) -> CUresult {
    status(set_event(w, None, h, ev, true))
}

pub(crate) unsafe fn cu_graph_event_wait_node_set_event(w: &World, h: CUgraphNode, ev: CUevent) -> CUresult {
    status(set_event(w, None, h, ev, false))
}

pub(crate) unsafe fn cu_graph_exec_event_record_node_set_event(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    ev: CUevent,
) -> CUresult {
    status(set_event(w, Some(e), h, ev, true))
}

pub(crate) unsafe fn cu_graph_exec_event_wait_node_set_event(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    ev: CUevent,
) -> CUresult {
    status(set_event(w, Some(e), h, ev, false))
}

/// Gives the child graph node `h` of exec `e` the nodes of `child`: same node count,
/// kinds and order (`graph_update.rs`; else CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE), no
/// conditions (else CUDA_ERROR_INVALID_VALUE).
pub(crate) fn exec_child_set(w: &World, e: CUgraphExec, h: CUgraphNode, child: CUgraph) -> Result<(), CUresult> {
    let mut conds = Vec::new();
    let new = crate::graph::steps_of(&lock(&w.graphs), from_ptr(child), &mut conds)?;
    if !conds.is_empty() {
        return Err(INVALID);
    }
    let mut execs = lock(&w.execs);
    let exec = execs.get_mut(from_ptr(e))?;
    let step = Step::find_mut(&mut exec.steps, from_ptr(h)).ok_or(INVALID)?;
    let (Node::Child(_), Some(old)) = (&step.node, step.bodies.first()) else {
        return Err(INVALID);
    };
    // A graph of another shape: as on the H200 (`graph_nodes.exec_child_set_params_other_shape`).
    let merged =
        crate::graph_update::merge(old, &[], &new, &[]).map_err(|_| CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)?;
    step.bodies = vec![merged];
    Ok(())
}

pub(crate) unsafe fn cu_graph_exec_child_graph_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    child: CUgraph,
) -> CUresult {
    status(exec_child_set(w, e, h, child))
}

/// Whether `id` is an attribute a kernel node has (the launch attributes the
/// documentation lists for kernel nodes).
fn kernel_attribute(id: CUkernelNodeAttrID) -> bool {
    matches!(id.0, 1 | 2 | 4 | 5 | 8 | 9 | 10 | 11 | 13 | 14)
}

/// The graph of kernel node `h`: CUDA_ERROR_INVALID_VALUE for another kind of node.
fn kernel_graph(graphs: &crate::model::handles::Registry<crate::model::graph::Graph>, h: u64) -> Result<u64, CUresult> {
    match find_node(graphs, h)? {
        (g, Node::Kernel(_)) => Ok(g),
        _ => Err(INVALID),
    }
}

pub(crate) unsafe fn cu_graph_kernel_node_get_attribute(
    w: &World,
    h: CUgraphNode,
    id: CUkernelNodeAttrID,
    value: *mut CUkernelNodeAttrValue,
) -> CUresult {
    let r = non_null(value).and_then(|()| {
        let graphs = lock(&w.graphs);
        let g = kernel_graph(&graphs, from_ptr(h))?;
        if !kernel_attribute(id) {
            return Err(INVALID);
        }
        let zeros: AttrBytes = [0; std::mem::size_of::<AttrBytes>()];
        let bytes = graphs.get(g)?.kernel_attrs.get(&(from_ptr(h), id.0)).copied().unwrap_or(zeros);
        // SAFETY: the program's value has room for a CUkernelNodeAttrValue, of these many
        // bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
        Ok(())
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_kernel_node_set_attribute(
    w: &World,
    h: CUgraphNode,
    id: CUkernelNodeAttrID,
    value: *const CUkernelNodeAttrValue,
) -> CUresult {
    let r = non_null(value).and_then(|()| {
        let mut graphs = lock(&w.graphs);
        let g = kernel_graph(&graphs, from_ptr(h))?;
        if !kernel_attribute(id) {
            return Err(INVALID);
        }
        let mut bytes: AttrBytes = [0; std::mem::size_of::<AttrBytes>()];
        // SAFETY: the program's value is a CUkernelNodeAttrValue, of these many bytes.
        unsafe { std::ptr::copy_nonoverlapping(value.cast::<u8>(), bytes.as_mut_ptr(), bytes.len()) };
        graphs.get_mut(g)?.kernel_attrs.insert((from_ptr(h), id.0), bytes);
        Ok(())
    });
    status(r)
}

/// `cuGraphKernelNodeCopyAttributes`: `dst` gets `src`'s attributes (both kernel nodes).
pub(crate) unsafe fn cu_graph_kernel_node_copy_attributes(w: &World, dst: CUgraphNode, src: CUgraphNode) -> CUresult {
    let mut graphs = lock(&w.graphs);
    let r = kernel_graph(&graphs, from_ptr(src)).and_then(|gs| {
        let gd = kernel_graph(&graphs, from_ptr(dst))?;
        let (s, d) = (from_ptr(src), from_ptr(dst));
        let attrs: Vec<(u32, AttrBytes)> =
            graphs.get(gs)?.kernel_attrs.iter().filter(|((n, _), _)| *n == s).map(|((_, a), v)| (*a, *v)).collect();
        let graph = graphs.get_mut(gd)?;
        graph.kernel_attrs.retain(|(n, _), _| *n != d);
        graph.kernel_attrs.extend(attrs.into_iter().map(|(a, v)| ((d, a), v)));
        Ok(())
    });
    status(r)
}

/// The id of the graph or exec `h`.
fn id_of(w: &World, h: u64) -> c_uint {
    lock(&w.graph_ids).of(h)
}

/// `cuGraphGetId`.
pub(crate) unsafe fn cu_graph_get_id(w: &World, g: CUgraph, out: *mut c_uint) -> CUresult {
    let r = non_null(out)
        .and_then(|()| lock(&w.graphs).get(from_ptr(g)).map(drop))
        .and_then(|()| write(out, id_of(w, from_ptr(g))));
    status(r)
}

/// `cuGraphExecGetId`.
pub(crate) unsafe fn cu_graph_exec_get_id(w: &World, e: CUgraphExec, out: *mut c_uint) -> CUresult {
    let r = non_null(out)
        .and_then(|()| lock(&w.execs).get(from_ptr(e)).map(drop))
        .and_then(|()| write(out, id_of(w, from_ptr(e))));
    status(r)
}

/// The graph of node `h` and the node's local id.
fn local(w: &World, h: CUgraphNode) -> Result<(u64, c_uint), CUresult> {
    let graphs = lock(&w.graphs);
    let (g, _) = find_node(&graphs, from_ptr(h))?;
    let i = graphs.get(g)?.nodes.iter().position(|(n, _)| *n == from_ptr(h)).ok_or(INVALID)?;
    Ok((g, c_uint::try_from(i).map_err(|_| INVALID)?))
}

pub(crate) unsafe fn cu_graph_node_get_local_id(w: &World, h: CUgraphNode, out: *mut c_uint) -> CUresult {
    status(non_null(out).and_then(|()| write(out, local(w, h)?.1)))
}

pub(crate) unsafe fn cu_graph_node_get_tools_id(w: &World, h: CUgraphNode, out: *mut c_ulonglong) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (g, i) = local(w, h)?;
        write(out, (c_ulonglong::from(id_of(w, g)) << 32) | c_ulonglong::from(i))
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_node_get_containing_graph(w: &World, h: CUgraphNode, out: *mut CUgraph) -> CUresult {
    status(non_null(out).and_then(|()| write(out, to_ptr(local(w, h)?.0))))
}
