//! Edges and what they say of a graph: `cuGraphAddDependencies`,
//! `cuGraphRemoveDependencies`, `cuGraphGetEdges`, `cuGraphGetRootNodes`,
//! `cuGraphNodeGetDependencies`, `cuGraphNodeGetDependentNodes` (the 10.0 forms and the
//! 12.3 ones with edge data: only the default edge, all zeros, is emulated; another is
//! CUDA_ERROR_NOT_SUPPORTED) and `cuGraphDestroyNode`.

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{find_node, known, node_list};
use crate::model::graph::Graph;
use crate::run::lock::lock;
use crate::world::World;

/// CUDA_ERROR_NOT_SUPPORTED unless the `n` edge data at `data` (if any) are all default.
fn default_edges(data: *const CUgraphEdgeData, n: usize) -> Result<(), CUresult> {
    if data.is_null() || n == 0 {
        return Ok(());
    }
    // SAFETY: the program passes `n` edge data at `data`.
    let data = unsafe { std::slice::from_raw_parts(data, n) };
    match data.iter().all(|d| d.from_port == 0 && d.to_port == 0 && d.type_ == 0) {
        true => Ok(()),
        false => Err(CUresult::CUDA_ERROR_NOT_SUPPORTED),
    }
}

/// Writes `list` to the program's arrays (`out`, and `data` as default edge data, if not
/// null) of `*count` entries: with a null `out`, only the count; entries past the list
/// are set to NULL, and `*count` becomes the number written.
fn fill(list: &[u64], out: *mut CUgraphNode, data: *mut CUgraphEdgeData, count: *mut usize) -> Result<(), CUresult> {
    non_null(count)?;
    if out.is_null() {
        return write(count, list.len());
    }
    // SAFETY: a non-null pointer to the program's capacity.
    let capacity = unsafe { *count };
    for i in 0..capacity {
        // SAFETY: the program's arrays have room for `capacity` entries.
        unsafe {
            out.add(i).write(list.get(i).map_or(std::ptr::null_mut(), |&h| to_ptr(h)));
            if !data.is_null() {
                data.add(i).write(CUgraphEdgeData::default());
            }
        }
    }
    write(count, list.len().min(capacity))
}

/// The edges `from[i] -> to[i]` of the program's arrays.
fn pairs(from: *const CUgraphNode, to: *const CUgraphNode, n: usize) -> Result<Vec<(u64, u64)>, CUresult> {
    Ok(node_list(from, n)?.into_iter().zip(node_list(to, n)?).collect())
}

/// Adds (`add`) or removes edges of graph `g`. Adding: both ends nodes of `g`, not the
/// same node, not an edge already there; removing: an edge that is there. Else
/// CUDA_ERROR_INVALID_VALUE, and no edge changes.
fn change(w: &World, g: CUgraph, edges: &[(u64, u64)], add: bool) -> Result<(), CUresult> {
    let mut graphs = lock(&w.graphs);
    // A graph with memory nodes cannot lose edges (the header).
    if !add && crate::graph_mem::has_mem_nodes(&graphs, from_ptr(g)) {
        return Err(crate::graph_mem::FORBIDDEN);
    }
    let graph = graphs.get_mut(from_ptr(g))?;
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    for (i, &(a, b)) in edges.iter().enumerate() {
        known(graph, &[a, b])?;
        let there = graph.edges.contains(&(a, b));
        let twice = edges.get(..i).unwrap_or_default().contains(&(a, b));
        if (add && (there || a == b || twice)) || (!add && (!there || twice)) {
            return Err(invalid);
        }
    }
    if add {
        graph.edges.extend_from_slice(edges);
    } else {
        graph.edges.retain(|e| !edges.contains(e));
    }
    Ok(())
}

pub(crate) unsafe fn cu_graph_add_dependencies(
    w: &World,
    g: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    n: usize,
) -> CUresult {
    status(pairs(from, to, n).and_then(|e| change(w, g, &e, true)))
}

pub(crate) unsafe fn cu_graph_add_dependencies_v12030(
    w: &World,
    g: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    data: *const CUgraphEdgeData,
    n: usize,
) -> CUresult {
    status(default_edges(data, n).and_then(|()| pairs(from, to, n)).and_then(|e| change(w, g, &e, true)))
}

pub(crate) unsafe fn cu_graph_remove_dependencies(
    w: &World,
    g: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    n: usize,
) -> CUresult {
    status(pairs(from, to, n).and_then(|e| change(w, g, &e, false)))
}

pub(crate) unsafe fn cu_graph_remove_dependencies_v12030(
    w: &World,
    g: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    data: *const CUgraphEdgeData,
    n: usize,
) -> CUresult {
    status(default_edges(data, n).and_then(|()| pairs(from, to, n)).and_then(|e| change(w, g, &e, false)))
}

/// The edges of `g` into the program's arrays (both null: the count).
fn edges(
    w: &World,
    g: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    data: *mut CUgraphEdgeData,
    count: *mut usize,
) -> Result<(), CUresult> {
    non_null(count)?;
    let list = lock(&w.graphs).get(from_ptr(g))?.edges.clone();
    if from.is_null() != to.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: a non-null pointer to the program's capacity.
    let capacity = unsafe { *count };
    let froms: Vec<u64> = list.iter().map(|e| e.0).collect();
    let tos: Vec<u64> = list.iter().map(|e| e.1).collect();
    fill(&froms, from, data, count)?;
    if !to.is_null() {
        write(count, capacity)?;
        fill(&tos, to, std::ptr::null_mut(), count)?;
    }
    Ok(())
}

pub(crate) unsafe fn cu_graph_get_edges(
    w: &World,
    g: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    status(edges(w, g, from, to, std::ptr::null_mut(), count))
}

pub(crate) unsafe fn cu_graph_get_edges_v12030(
    w: &World,
    g: CUgraph,
    from: *mut CUgraphNode,
    to: *mut CUgraphNode,
    data: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    status(edges(w, g, from, to, data, count))
}

/// `cuGraphGetRootNodes`: the nodes that depend on none, in the order they were added.
pub(crate) unsafe fn cu_graph_get_root_nodes(
    w: &World,
    g: CUgraph,
    out: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    let r = lock(&w.graphs).get(from_ptr(g)).map(Graph::roots);
    status(r.and_then(|roots| fill(&roots, out, std::ptr::null_mut(), count)))
}

/// The nodes node `h` depends on (`dependents`: that depend on it).
fn neighbours(w: &World, h: CUgraphNode, dependents: bool) -> Result<Vec<u64>, CUresult> {
    let graphs = lock(&w.graphs);
    let h = from_ptr(h);
    let (g, _) = find_node(&graphs, h)?;
    let graph = graphs.get(g)?;
    let list = graph.edges.iter().filter_map(|&(a, b)| match dependents {
        true if a == h => Some(b),
        false if b == h => Some(a),
        _ => None,
    });
    Ok(list.collect())
}

pub(crate) unsafe fn cu_graph_node_get_dependencies(
    w: &World,
    h: CUgraphNode,
    out: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    status(neighbours(w, h, false).and_then(|l| fill(&l, out, std::ptr::null_mut(), count)))
}

pub(crate) unsafe fn cu_graph_node_get_dependencies_v12030(
    w: &World,
    h: CUgraphNode,
    out: *mut CUgraphNode,
    data: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    status(neighbours(w, h, false).and_then(|l| fill(&l, out, data, count)))
}

pub(crate) unsafe fn cu_graph_node_get_dependent_nodes(
    w: &World,
    h: CUgraphNode,
    out: *mut CUgraphNode,
    count: *mut usize,
) -> CUresult {
    status(neighbours(w, h, true).and_then(|l| fill(&l, out, std::ptr::null_mut(), count)))
}

pub(crate) unsafe fn cu_graph_node_get_dependent_nodes_v12030(
    w: &World,
    h: CUgraphNode,
    out: *mut CUgraphNode,
    data: *mut CUgraphEdgeData,
    count: *mut usize,
) -> CUresult {
    status(neighbours(w, h, true).and_then(|l| fill(&l, out, data, count)))
}
