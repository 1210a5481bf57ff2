//! Conditional nodes: `cuGraphConditionalHandleCreate` (a condition of a graph) and
//! `cuGraphAddNode` (its 12.2, 12.3 and 13.4 forms; node kinds other than conditional are
//! `graph_generic.rs`'s).
//!
//! A condition's value is 4 bytes of device memory in its context (a `Device`
//! allocation in the ledger while the graph or an exec holds it), at the handle's value:
//! a kernel sets it by writing there (the stand-in's `Thread::set_conditional`), where a
//! real kernel calls `cudaGraphSetConditional`. With `CU_GRAPH_COND_ASSIGN_DEFAULT`
//! each launch starts by setting it to the default value. A conditional node owns its
//! body graphs (`phGraph_out` points to an array the node owns): If runs body 0 when the
//! value is non-zero (body 1, if there is one, when it is zero), While runs body 0 while
//! it is non-zero, reading it again after each round, Switch runs body `value` (none past
//! the last). If and While need driver 12.3; an If with an else body (size 2) and Switch
//! need 12.8 (earlier: CUDA_ERROR_INVALID_VALUE).

use std::ffi::c_uint;
use std::sync::atomic::Ordering;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{known, node_list};
use crate::model::graph::{CondNode, Conditional, Graph, Node};
use crate::model::handles;
use crate::model::memory::{AllocationKind, Owner};
use crate::run::lock::lock;
use crate::world::World;

const ASSIGN_DEFAULT: c_uint = 0x1;

fn create(
    w: &World,
    out: *mut CUgraphConditionalHandle,
    g: CUgraph,
    ctx: CUcontext,
    value: c_uint,
    flags: c_uint,
) -> Result<(), CUresult> {
    non_null(out)?;
    if flags & !ASSIGN_DEFAULT != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let g = from_ptr(g);
    lock(&w.graphs).get(g)?;
    let ctx = if ctx.is_null() { w.contexts.current()? } else { w.contexts.find(from_ptr(ctx))? };
    ctx.usable()?;
    let h = lock(&w.memory).alloc(4, AllocationKind::Device, None, Owner::of(&ctx))?;
    // The value starts as the default (a fresh allocation is zeroed).
    let _ = lock(&w.memory).copy_to_device(h, value.to_ne_bytes().as_ptr(), 4);
    let default = (flags & ASSIGN_DEFAULT != 0).then_some(value);
    lock(&w.conditionals).insert(h, Conditional { default, holders: 1 });
    let added = lock(&w.graphs).get_mut(g).map(|graph| graph.conditionals.push(h));
    if let Err(e) = added {
        crate::lifecycle::release_conditionals(w, &[h]);
        return Err(e);
    }
    write(out, h)
}

/// `cuGraphConditionalHandleCreate`: flags 0 or `CU_GRAPH_COND_ASSIGN_DEFAULT` (else
/// CUDA_ERROR_INVALID_VALUE); a NULL context is the current one.
pub(crate) unsafe fn cu_graph_conditional_handle_create(
    w: &World,
    out: *mut CUgraphConditionalHandle,
    g: CUgraph,
    ctx: CUcontext,
    value: c_uint,
    flags: c_uint,
) -> CUresult {
    status(create(w, out, g, ctx, value, flags))
}

/// Adds a conditional node of `p` to `g` after `deps`: its body graphs are made and
/// `p.phGraph_out` set to the node's array of them.
fn add_conditional(
    w: &World,
    ph: *mut CUgraphNode,
    g: u64,
    deps: &[u64],
    p: &mut CUDA_CONDITIONAL_NODE_PARAMS,
) -> Result<(), CUresult> {
    use CUgraphConditionalNodeType as T;
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    let v128 = w.version.load(Ordering::Relaxed) >= 12080;
    let size = p.size as usize;
    let fits = match p.type_ {
        T::CU_GRAPH_COND_TYPE_IF => size == 1 || (size == 2 && v128),
        T::CU_GRAPH_COND_TYPE_WHILE => size == 1,
        T::CU_GRAPH_COND_TYPE_SWITCH => size >= 1 && v128,
        _ => false,
    };
    if !fits {
        return Err(invalid);
    }
    let mut graphs = lock(&w.graphs);
    let graph = graphs.get(g)?;
    known(graph, deps)?;
    if !graph.conditionals.contains(&p.handle) {
        return Err(invalid);
    }
    let h = handles::fresh();
    let bodies: Vec<u64> = (0..size).map(|_| graphs.insert(Graph::default())).collect();
    p.phGraph_out = bodies.as_ptr().cast_mut().cast();
    let node = Node::Conditional(CondNode { handle: p.handle, kind: p.type_, bodies });
    let graph = graphs.get_mut(g)?;
    graph.nodes.push((h, node));
    graph.edges.extend(deps.iter().map(|&d| (d, h)));
    write(ph, to_ptr(h))
}

/// `cuGraphAddNode`: conditional nodes here, the other kinds in `graph_generic.rs`.
///
/// # Safety
/// `p` is null or points to the program's parameters.
unsafe fn add(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    data: *const CUgraphEdgeData,
    n: usize,
    p: *mut CUgraphNodeParams,
) -> Result<(), CUresult> {
    non_null(ph)?;
    non_null(p)?;
    if !data.is_null() {
        // SAFETY: the program passes `n` edge data at `data`.
        let data = unsafe { std::slice::from_raw_parts(data, n) };
        if data.iter().any(|d| d.from_port != 0 || d.to_port != 0 || d.type_ != 0) {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
    }
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &mut *p };
    let deps = node_list(deps, n)?;
    match p.type_ {
        // SAFETY: the union's member for a conditional node.
        CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL => {
            add_conditional(w, ph, from_ptr(g), &deps, unsafe { &mut p.__bindgen_anon_1.conditional })
        }
        _ => {
            // SAFETY: forwarded from the program.
            let h = unsafe { crate::graph_generic::add(w, from_ptr(g), &deps, p) }?;
            write(ph, to_ptr(h))
        }
    }
}

pub(crate) unsafe fn cu_graph_add_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *mut CUgraphNodeParams,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { add(w, ph, g, deps, std::ptr::null(), n, p) })
}

pub(crate) unsafe fn cu_graph_add_node_v12030(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    data: *const CUgraphEdgeData,
    n: usize,
    p: *mut CUgraphNodeParams,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { add(w, ph, g, deps, data, n, p) })
}

/// The 13.4 form takes the same arguments.
pub(crate) unsafe fn cu_graph_add_node_v13040(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    data: *const CUgraphEdgeData,
    n: usize,
    p: *mut CUgraphNodeParams,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { add(w, ph, g, deps, data, n, p) })
}
