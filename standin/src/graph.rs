//! Graphs of nodes (`model/graph.rs`) and edges, and the user object references they own.
//! Instantiation and launch are in `graph_exec.rs`; kernel, memcpy, memset, event, child
//! graph nodes are added in `graph_add.rs` (and by stream capture, `capture.rs`),
//! conditional nodes in `graph_cond.rs`; edges and introspection in `graph_edges.rs`;
//! node parameters in `graph_params.rs`; whole-graph update in `graph_update.rs`; clones
//! and DOT output in `graph_clone.rs`.
//! An unknown, NULL or destroyed graph or graph exec answers CUDA_ERROR_INVALID_VALUE
//! (`docs/driver-facts.md`, "Edge cases on the real driver").

use std::collections::BTreeMap;
use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::graph::{Graph, Node, Step};
use crate::model::handles::{self, Registry};
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::user_object;
use crate::world::World;

/// What an instantiation takes from a graph: its steps in dependency order (with the
/// steps of each child graph and conditional body), its edges, its user object
/// references, and the conditions of it and of its bodies.
pub(crate) struct Snapshot {
    pub(crate) steps: Vec<Step>,
    pub(crate) edges: Vec<(u64, u64)>,
    pub(crate) user_objects: BTreeMap<u64, c_uint>,
    pub(crate) conditionals: Vec<u64>,
}

/// The steps of graph `g` and the conditions they use; CUDA_ERROR_INVALID_VALUE if its
/// edges make a cycle.
pub(crate) fn steps_of(graphs: &Registry<Graph>, g: u64, conds: &mut Vec<u64>) -> Result<Vec<Step>, CUresult> {
    let graph = graphs.get(g)?;
    conds.extend(graph.conditionals.iter().copied());
    let order = graph.order().ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let mut steps = Vec::with_capacity(order.len());
    for h in order {
        let node = graph.node(h).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?.clone();
        let bodies = match &node {
            Node::Child(c) => vec![steps_of(graphs, *c, conds)?],
            Node::Conditional(c) => c.bodies.iter().map(|b| steps_of(graphs, *b, conds)).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        steps.push(Step { origin: h, node, enabled: true, bodies });
    }
    Ok(steps)
}

/// What an instantiation takes from graph `g` ([`Snapshot`]).
pub(crate) fn snapshot(w: &World, g: u64) -> Result<Snapshot, CUresult> {
    let graphs = lock(&w.graphs);
    let mut conditionals = Vec::new();
    let steps = steps_of(&graphs, g, &mut conditionals)?;
    let graph = graphs.get(g)?;
    Ok(Snapshot { steps, edges: graph.edges.clone(), user_objects: graph.user_objects.clone(), conditionals })
}

/// The graph that holds node `h`, and the node.
pub(crate) fn find_node(graphs: &Registry<Graph>, h: u64) -> Result<(u64, &Node), CUresult> {
    graphs.iter().find_map(|(g, graph)| graph.node(h).map(|n| (*g, n))).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// A new empty graph (for a stream capture).
pub(crate) fn create(w: &World) -> u64 {
    lock(&w.graphs).insert(Graph::default())
}

/// Destroys graph `g` (an invalidated capture's), releasing its user object references.
pub(crate) fn destroy(w: &World, g: u64) {
    crate::lifecycle::destroy_graph(w, g);
}

/// CUDA_ERROR_INVALID_VALUE unless every one of `deps` is a node of `graph`.
pub(crate) fn known(graph: &Graph, deps: &[u64]) -> Result<(), CUresult> {
    match deps.iter().all(|d| graph.nodes.iter().any(|(h, _)| h == d)) {
        true => Ok(()),
        false => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

/// Checks that graph `g` exists and has the nodes `deps`.
pub(crate) fn check_deps(w: &World, g: u64, deps: &[u64]) -> Result<(), CUresult> {
    known(lock(&w.graphs).get(g)?, deps)
}

/// Adds `node` to graph `g` after `deps` (nodes of `g`: else CUDA_ERROR_INVALID_VALUE);
/// returns its handle.
pub(crate) fn add(w: &World, g: u64, deps: &[u64], node: Node) -> Result<u64, CUresult> {
    let mut graphs = lock(&w.graphs);
    let graph = graphs.get_mut(g)?;
    known(graph, deps)?;
    let h = handles::fresh();
    graph.nodes.push((h, node));
    graph.edges.extend(deps.iter().map(|&d| (d, h)));
    Ok(h)
}

pub(crate) unsafe fn cu_graph_create(w: &World, ph: *mut CUgraph, flags: c_uint) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        if flags != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        write(ph, to_ptr(create(w)))
    });
    status(r)
}

/// `cuGraphDestroy`: releases the graph's user object references. Twice (or NULL):
/// CUDA_ERROR_INVALID_VALUE (facts), and a double destroy in the ledger.
pub(crate) unsafe fn cu_graph_destroy(w: &World, g: CUgraph) -> CUresult {
    let removed = lock(&w.graphs).remove(from_ptr(g));
    status(removed.map(|graph| crate::lifecycle::graph_destroyed(w, graph)))
}

/// The `n` node handles at `deps` (null when `n` is 0).
pub(crate) fn node_list(deps: *const CUgraphNode, n: usize) -> Result<Vec<u64>, CUresult> {
    if n == 0 {
        return Ok(Vec::new());
    }
    non_null(deps)?;
    // SAFETY: the program passes `n` node handles at `deps`.
    let deps = unsafe { std::slice::from_raw_parts(deps, n) };
    Ok(deps.iter().map(|&d| from_ptr(d)).collect())
}

/// `cuGraphAdd*Node`: adds `node` to `g` after the `n` nodes at `deps`, writing its handle.
pub(crate) fn add_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    node: Node,
) -> Result<(), CUresult> {
    non_null(ph)?;
    let h = add(w, from_ptr(g), &node_list(deps, n)?, node)?;
    write(ph, to_ptr(h))
}

/// `cuGraphGetNodes`: with a null `nodes`, the count; else up to `*count` handles, in the
/// order they were added, and the number written.
pub(crate) unsafe fn cu_graph_get_nodes(w: &World, g: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) -> CUresult {
    let r = non_null(count).and_then(|()| {
        let graphs = lock(&w.graphs);
        let graph = graphs.get(from_ptr(g))?;
        if nodes.is_null() {
            return write(count, graph.nodes.len());
        }
        // SAFETY: a non-null pointer to the caller's capacity.
        let n = graph.nodes.len().min(unsafe { *count });
        for (i, (h, _)) in graph.nodes.iter().take(n).enumerate() {
            // SAFETY: the caller's array has room for `*count` handles, and i < that.
            unsafe { nodes.add(i).write(to_ptr(*h)) };
        }
        write(count, n)
    });
    status(r)
}

/// `cuGraphNodeGetType`: CUDA_ERROR_INVALID_VALUE for a node of no live graph.
pub(crate) unsafe fn cu_graph_node_get_type(w: &World, node: CUgraphNode, ty: *mut CUgraphNodeType) -> CUresult {
    let r = non_null(ty).and_then(|()| {
        let graphs = lock(&w.graphs);
        let kind = find_node(&graphs, from_ptr(node))?.1.kind();
        write(ty, kind)
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_add_host_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_HOST_NODE_PARAMS,
) -> CUresult {
    let r = non_null(params).and_then(|()| {
        // SAFETY: a non-null pointer to the caller's parameters.
        let p = unsafe { &*params };
        let call = HostCall::new(p.fn_, p.userData).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        add_node(w, ph, g, deps, n, Node::Host(call))
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_add_empty_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
) -> CUresult {
    status(add_node(w, ph, g, deps, n, Node::Empty))
}

const MOVE: c_uint = CUuserObjectRetain_flags::CU_GRAPH_USER_OBJECT_MOVE.0;

fn retain_user_object(w: &World, g: u64, o: u64, count: c_uint, flags: c_uint) -> Result<(), CUresult> {
    if count == 0 || flags & !MOVE != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    lock(&w.graphs).get(g)?;
    if flags & MOVE != 0 {
        // The caller's references become the graph's.
        user_object::has(w, o, count)?;
    } else {
        user_object::retain(w, o, count)?;
    }
    let added = lock(&w.graphs).get_mut(g).and_then(|graph| {
        let n = graph.user_objects.entry(o).or_insert(0);
        *n = n.checked_add(count).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        Ok(())
    });
    if added.is_err() && flags & MOVE == 0 {
        // The graph went away meanwhile: give the references back.
        user_object::release_all(w, [(o, count)]);
    }
    added
}

/// `cuGraphRetainUserObject`: the graph takes `count` references (with
/// CU_GRAPH_USER_OBJECT_MOVE, the caller's).
pub(crate) unsafe fn cu_graph_retain_user_object(
    w: &World,
    g: CUgraph,
    o: CUuserObject,
    count: c_uint,
    flags: c_uint,
) -> CUresult {
    status(retain_user_object(w, from_ptr(g), from_ptr(o), count, flags))
}

fn release_user_object(w: &World, g: u64, o: u64, count: c_uint) -> Result<(), CUresult> {
    if count == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    {
        let mut graphs = lock(&w.graphs);
        let graph = graphs.get_mut(g)?;
        let n = graph.user_objects.get_mut(&o).filter(|n| **n >= count).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        *n -= count;
        if *n == 0 {
            graph.user_objects.remove(&o);
        }
    }
    user_object::release(w, o, count)
}

pub(crate) unsafe fn cu_graph_release_user_object(w: &World, g: CUgraph, o: CUuserObject, count: c_uint) -> CUresult {
    status(release_user_object(w, from_ptr(g), from_ptr(o), count))
}
