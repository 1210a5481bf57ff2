//! Graphs of host and empty nodes, and the user object references they own.
//! Instantiation and launch are in `graph_exec.rs`. An unknown, NULL or destroyed graph or
//! graph exec answers CUDA_ERROR_INVALID_VALUE (`docs/driver-facts.md`, "Edge cases on the
//! real driver").

use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::Mutex;

use cudrv::sys::*;

use crate::entry::{enter, from_ptr, lock, non_null, register, status, to_ptr, write};
use crate::handles::{self, Registry};
use crate::queue::HostCall;
use crate::user_object;

/// One node: a host function, or nothing.
enum Node {
    Host(HostCall),
    Empty,
}

struct Graph {
    /// Nodes in the order they were added (an order that respects every dependency, as a
    /// dependency must exist before its dependent).
    nodes: Vec<(u64, Node)>,
    /// References owned by the graph.
    user_objects: BTreeMap<u64, c_uint>,
}

static GRAPHS: Mutex<Registry<Graph>> = Mutex::new(Registry::new("graph", CUresult::CUDA_ERROR_INVALID_VALUE));

/// What an instantiation takes from a graph: its host functions in order, and its user
/// object references.
pub(crate) fn snapshot(g: u64) -> Result<(Vec<HostCall>, BTreeMap<u64, c_uint>), CUresult> {
    let graphs = lock(&GRAPHS);
    let graph = graphs.get(g)?;
    let calls = graph
        .nodes
        .iter()
        .filter_map(|(_, n)| match n {
            Node::Host(c) => Some(*c),
            Node::Empty => None,
        })
        .collect();
    Ok((calls, graph.user_objects.clone()))
}

unsafe extern "C" fn cu_graph_create(ph: *mut CUgraph, flags: c_uint) -> CUresult {
    enter!("cuGraphCreate");
    let r = non_null(ph).and_then(|()| {
        if flags != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let h = lock(&GRAPHS).insert(Graph { nodes: Vec::new(), user_objects: BTreeMap::new() });
        write(ph, to_ptr(h))
    });
    status(r)
}

/// `cuGraphDestroy`: releases the graph's user object references. Twice (or NULL):
/// CUDA_ERROR_INVALID_VALUE (facts), and a double destroy in the ledger.
unsafe extern "C" fn cu_graph_destroy(g: CUgraph) -> CUresult {
    enter!("cuGraphDestroy");
    let removed = lock(&GRAPHS).remove(from_ptr(g));
    status(removed.map(|graph| user_object::release_all(graph.user_objects)))
}

fn add_node(ph: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, node: Node) -> Result<(), CUresult> {
    non_null(ph)?;
    let deps: &[CUgraphNode] = match n {
        0 => &[],
        n => {
            non_null(deps)?;
            // SAFETY: the program passes `n` node handles at `deps`.
            unsafe { std::slice::from_raw_parts(deps, n) }
        }
    };
    let mut graphs = lock(&GRAPHS);
    let graph = graphs.get_mut(from_ptr(g))?;
    let known = |d: &CUgraphNode| graph.nodes.iter().any(|(h, _)| *h == from_ptr(*d));
    if !deps.iter().all(known) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let h = handles::fresh();
    graph.nodes.push((h, node));
    write(ph, to_ptr(h))
}

unsafe extern "C" fn cu_graph_add_host_node(
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_HOST_NODE_PARAMS,
) -> CUresult {
    enter!("cuGraphAddHostNode");
    let r = non_null(params).and_then(|()| {
        // SAFETY: a non-null pointer to the caller's parameters.
        let p = unsafe { &*params };
        let call = HostCall::new(p.fn_, p.userData).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        add_node(ph, g, deps, n, Node::Host(call))
    });
    status(r)
}

unsafe extern "C" fn cu_graph_add_empty_node(
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
) -> CUresult {
    enter!("cuGraphAddEmptyNode");
    status(add_node(ph, g, deps, n, Node::Empty))
}

const MOVE: c_uint = CUuserObjectRetain_flags::CU_GRAPH_USER_OBJECT_MOVE.0;

fn retain_user_object(g: u64, o: u64, count: c_uint, flags: c_uint) -> Result<(), CUresult> {
    if count == 0 || flags & !MOVE != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    lock(&GRAPHS).get(g)?;
    if flags & MOVE != 0 {
        // The caller's references become the graph's.
        user_object::has(o, count)?;
    } else {
        user_object::retain(o, count)?;
    }
    let added = lock(&GRAPHS).get_mut(g).and_then(|graph| {
        let n = graph.user_objects.entry(o).or_insert(0);
        *n = n.checked_add(count).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        Ok(())
    });
    if added.is_err() && flags & MOVE == 0 {
        // The graph went away meanwhile: give the references back.
        user_object::release_all([(o, count)]);
    }
    added
}

/// `cuGraphRetainUserObject`: the graph takes `count` references (with
/// CU_GRAPH_USER_OBJECT_MOVE, the caller's).
unsafe extern "C" fn cu_graph_retain_user_object(
    g: CUgraph,
    o: CUuserObject,
    count: c_uint,
    flags: c_uint,
) -> CUresult {
    enter!("cuGraphRetainUserObject");
    status(retain_user_object(from_ptr(g), from_ptr(o), count, flags))
}

fn release_user_object(g: u64, o: u64, count: c_uint) -> Result<(), CUresult> {
    if count == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    {
        let mut graphs = lock(&GRAPHS);
        let graph = graphs.get_mut(g)?;
        let n = graph.user_objects.get_mut(&o).filter(|n| **n >= count).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        *n -= count;
        if *n == 0 {
            graph.user_objects.remove(&o);
        }
    }
    user_object::release(o, count)
}

unsafe extern "C" fn cu_graph_release_user_object(g: CUgraph, o: CUuserObject, count: c_uint) -> CUresult {
    enter!("cuGraphReleaseUserObject");
    status(release_user_object(from_ptr(g), from_ptr(o), count))
}

/// Appends the live graphs.
pub(crate) fn live_handles(out: &mut Vec<(&'static str, u64)>) {
    lock(&GRAPHS).live_handles(out);
}

/// See [`Registry::forget_destroyed`].
pub(crate) fn forget_destroyed() {
    lock(&GRAPHS).forget_destroyed();
}

register! {
    cuGraphCreate_v10000: PFN_cuGraphCreate_v10000 => cu_graph_create,
    cuGraphDestroy_v10000: PFN_cuGraphDestroy_v10000 => cu_graph_destroy,
    cuGraphAddHostNode_v10000: PFN_cuGraphAddHostNode_v10000 => cu_graph_add_host_node,
    cuGraphAddEmptyNode_v10000: PFN_cuGraphAddEmptyNode_v10000 => cu_graph_add_empty_node,
    cuGraphRetainUserObject_v11030: PFN_cuGraphRetainUserObject_v11030 => cu_graph_retain_user_object,
    cuGraphReleaseUserObject_v11030: PFN_cuGraphReleaseUserObject_v11030 => cu_graph_release_user_object,
}
