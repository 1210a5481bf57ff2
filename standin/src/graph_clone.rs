//! Copies of graphs: `cuGraphClone`, the copy a child graph node makes of the graph it is
//! given, `cuGraphNodeFindInClone`, and `cuGraphDebugDotPrint` (a DOT description of a
//! graph's nodes and edges).

use std::ffi::{c_char, c_uint, CStr};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::graph::{Graph, Node};
use crate::model::handles::{self, Registry};
use crate::run::lock::lock;
use crate::user_object;
use crate::world::World;

/// Copies graph `g` (the graphs its child graph nodes own with it) into a new graph. Its nodes get new handles; the copy
/// remembers which node each copies. A graph with conditions cannot be copied (the
/// header: such a graph "cannot be cloned" nor "used in a child node"):
/// CUDA_ERROR_NOT_SUPPORTED. Takes no user object references (see [`clone`]).
pub(crate) fn copy(graphs: &mut Registry<Graph>, g: u64) -> Result<u64, CUresult> {
    let source = graphs.get(g)?;
    if !source.conditionals.is_empty() || source.nodes.iter().any(|(_, n)| matches!(n, Node::Conditional(_))) {
        return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
    // Nor can a graph with memory nodes (the header).
    if crate::graph_mem::has_mem_nodes(graphs, g) {
        return Err(crate::graph_mem::FORBIDDEN);
    }
    let (nodes, edges, user_objects) = (source.nodes.clone(), source.edges.clone(), source.user_objects.clone());
    let kernel_attrs = source.kernel_attrs.clone();
    let map: Vec<(u64, u64)> = nodes.iter().map(|(h, _)| (*h, handles::fresh())).collect();
    let new = |h: u64| map.iter().find(|(o, _)| *o == h).map_or(h, |(_, n)| *n);
    let mut copied = Vec::with_capacity(nodes.len());
    for (h, node) in nodes {
        let node = match node {
            Node::Child(c) => Node::Child(copy(graphs, c)?),
            n => n,
        };
        copied.push((new(h), node));
    }
    let graph = Graph {
        nodes: copied,
        edges: edges.iter().map(|&(a, b)| (new(a), new(b))).collect(),
        user_objects,
        conditionals: Vec::new(),
        kernel_attrs: kernel_attrs.into_iter().map(|((h, a), v)| ((new(h), a), v)).collect(),
        clone_of: map,
    };
    Ok(graphs.insert(graph))
}

fn clone(w: &World, ph: *mut CUgraph, g: CUgraph) -> Result<(), CUresult> {
    non_null(ph)?;
    let (h, refs) = {
        let mut graphs = lock(&w.graphs);
        let h = copy(&mut graphs, from_ptr(g))?;
        (h, graphs.get(h)?.user_objects.clone())
    };
    // The copy holds references of its own to the graph's user objects.
    for (&o, &n) in &refs {
        if user_object::retain(w, o, n).is_err() {
            if let Ok(graph) = lock(&w.graphs).get_mut(h) {
                graph.user_objects.remove(&o);
            }
        }
    }
    write(ph, to_ptr(h))
}

/// `cuGraphClone`.
pub(crate) unsafe fn cu_graph_clone(w: &World, ph: *mut CUgraph, g: CUgraph) -> CUresult {
    status(clone(w, ph, g))
}

/// `cuGraphNodeFindInClone`: the node of clone `g` that copies `original`;
/// CUDA_ERROR_INVALID_VALUE if it copies none.
pub(crate) unsafe fn cu_graph_node_find_in_clone(
    w: &World,
    ph: *mut CUgraphNode,
    original: CUgraphNode,
    g: CUgraph,
) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        let graphs = lock(&w.graphs);
        let graph = graphs.get(from_ptr(g))?;
        let o = from_ptr(original);
        let found = graph.clone_of.iter().find(|(from, _)| *from == o).map(|(_, n)| *n);
        write(ph, to_ptr(found.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?))
    });
    status(r)
}

/// The DOT text of graph `g`: one line per node (its handle and type), one per edge.
fn dot(graphs: &Registry<Graph>, g: u64) -> Result<String, CUresult> {
    let graph = graphs.get(g)?;
    let mut out = format!("digraph cudrv_standin_graph_{g:#x} {{\n");
    for (h, node) in &graph.nodes {
        out.push_str(&format!("  n{h:x} [label=\"{h:#x} {:?}\"];\n", node.kind()));
    }
    for (a, b) in &graph.edges {
        out.push_str(&format!("  n{a:x} -> n{b:x};\n"));
    }
    out.push_str("}\n");
    Ok(out)
}

/// `cuGraphDebugDotPrint`: writes the DOT text to `path`; a path that cannot be written:
/// CUDA_ERROR_OPERATING_SYSTEM. The flags choose detail a real driver adds; the stand-in
/// writes the same text for all.
pub(crate) unsafe fn cu_graph_debug_dot_print(w: &World, g: CUgraph, path: *const c_char, _flags: c_uint) -> CUresult {
    let r = non_null(path).and_then(|()| {
        let text = dot(&lock(&w.graphs), from_ptr(g))?;
        // SAFETY: a non-null, NUL-terminated path from the program.
        let path = unsafe { CStr::from_ptr(path) }.to_str().map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        std::fs::write(path, text).map_err(|_| CUresult::CUDA_ERROR_OPERATING_SYSTEM)
    });
    status(r)
}
