//! `cuGraphAddKernelNode`, `cuGraphAddMemsetNode` and `cuGraphAddMemcpyNode`: the node
//! kinds stream capture records (`graph_node.rs`), added by hand; event record and wait
//! nodes and child graph nodes. A memcpy node copies one
//! contiguous range between host and device memory (no arrays, no 2D or 3D shapes:
//! CUDA_ERROR_NOT_SUPPORTED).

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{add_node, find_node, known, node_list};
use crate::graph_clone;
use crate::launch::kernel_node;
use crate::model::graph::{CopyNode, End, KernelNode, MemsetNode, Node};
use crate::model::handles;
use crate::run::lock::lock;
use crate::world::World;

/// The kernel node of `cuGraphAddKernelNode` parameters (a function, or a kernel cast to
/// one). Adding or setting one needs a current context: CUDA_ERROR_INVALID_CONTEXT with
/// none, where driver 580 crashes (a deliberate difference, docs/driver-facts.md).
///
/// # Safety
/// `p.kernelParams` and `p.extra` as `cuLaunchKernel` requires.
pub(crate) unsafe fn kernel_v1(w: &World, p: &CUDA_KERNEL_NODE_PARAMS_v1) -> Result<KernelNode, CUresult> {
    w.contexts.current()?;
    let shape = [[p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ]];
    // SAFETY: forwarded from the program.
    unsafe { kernel_node(w, p.func, shape[0], shape[1], p.sharedMemBytes, p.kernelParams, p.extra, None) }
}

/// The kernel node of `cuGraphAddKernelNode_v2` parameters: the function is `func`, or
/// else `kern`; `ctx` is not used.
///
/// # Safety
/// As [`kernel_v1`].
pub(crate) unsafe fn kernel_v2(w: &World, p: &CUDA_KERNEL_NODE_PARAMS_v2) -> Result<KernelNode, CUresult> {
    w.contexts.current()?;
    let shape = [[p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ]];
    let f = if p.func.is_null() { p.kern.cast() } else { p.func };
    // SAFETY: forwarded from the program.
    unsafe { kernel_node(w, f, shape[0], shape[1], p.sharedMemBytes, p.kernelParams, p.extra, None) }
}

pub(crate) unsafe fn cu_graph_add_kernel_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        non_null(ph)?;
        // SAFETY: a non-null pointer to the program's parameters, as for a launch.
        let kernel = unsafe { kernel_v1(w, &*p) }?;
        add_node(w, ph, g, deps, n, Node::Kernel(kernel))
    });
    status(r)
}

/// `cuGraphAddKernelNode_v2`.
pub(crate) unsafe fn cu_graph_add_kernel_node_v12000(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        non_null(ph)?;
        // SAFETY: a non-null pointer to the program's parameters, as for a launch.
        let kernel = unsafe { kernel_v2(w, &*p) }?;
        add_node(w, ph, g, deps, n, Node::Kernel(kernel))
    });
    status(r)
}

/// The memset of memset node parameters: `height` rows of `width` values of
/// `elementSize` bytes (1, 2 or 4), `pitch` bytes apart.
pub(crate) fn memset_of(p: &CUDA_MEMSET_NODE_PARAMS_v1) -> Result<MemsetNode, CUresult> {
    let mut node = MemsetNode::new(p.dst, p.value, p.elementSize as usize, p.width)?;
    let row = p.width.saturating_mul(p.elementSize as usize);
    if p.width == 0 || p.height == 0 || (p.height > 1 && p.pitch < row) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    (node.rows, node.pitch) = (p.height, p.pitch);
    Ok(node)
}

/// `cuGraphAddMemsetNode` ([`memset_of`]).
pub(crate) unsafe fn cu_graph_add_memset_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_MEMSET_NODE_PARAMS_v1,
    _ctx: CUcontext,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        // SAFETY: a non-null pointer to the program's parameters.
        let node = memset_of(unsafe { &*p })?;
        add_node(w, ph, g, deps, n, Node::Memset(node))
    });
    status(r)
}

/// One end of a memcpy node's copy, at its X offset.
fn end(ty: CUmemorytype, host: usize, device: CUdeviceptr, x: usize) -> Result<End, CUresult> {
    match ty {
        CUmemorytype::CU_MEMORYTYPE_HOST if host != 0 => Ok(End::Host(host.wrapping_add(x))),
        CUmemorytype::CU_MEMORYTYPE_DEVICE | CUmemorytype::CU_MEMORYTYPE_UNIFIED if device != 0 => {
            Ok(End::Device(device.wrapping_add(x as u64)))
        }
        CUmemorytype::CU_MEMORYTYPE_ARRAY => Err(CUresult::CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

/// The copy of memcpy node parameters: one contiguous row (`Height` and `Depth` 0 or 1,
/// no Y or Z offsets; else CUDA_ERROR_NOT_SUPPORTED); host to host is
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) fn copy_of(p: &CUDA_MEMCPY3D_v2) -> Result<CopyNode, CUresult> {
    if p.Height > 1 || p.Depth > 1 || p.srcY + p.srcZ + p.dstY + p.dstZ != 0 {
        return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
    let src = end(p.srcMemoryType, p.srcHost as usize, p.srcDevice, p.srcXInBytes)?;
    let dst = end(p.dstMemoryType, p.dstHost as usize, p.dstDevice, p.dstXInBytes)?;
    if let (End::Host(_), End::Host(_)) = (dst, src) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    Ok(CopyNode { dst, src, len: p.WidthInBytes })
}

/// `cuGraphAddMemcpyNode` ([`copy_of`]).
pub(crate) unsafe fn cu_graph_add_memcpy_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_MEMCPY3D_v2,
    _ctx: CUcontext,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        // SAFETY: a non-null pointer to the program's parameters.
        let copy = copy_of(unsafe { &*p })?;
        add_node(w, ph, g, deps, n, Node::Copy(copy))
    });
    status(r)
}

/// Adds an event record or wait node of event `e` (a live event: else
/// CUDA_ERROR_INVALID_HANDLE, as the event calls answer).
fn add_event(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    e: CUevent,
    record: bool,
) -> Result<(), CUresult> {
    let e = from_ptr(e);
    lock(&w.events).get(e)?;
    add_node(w, ph, g, deps, n, if record { Node::EventRecord(e) } else { Node::EventWait(e) })
}

pub(crate) unsafe fn cu_graph_add_event_record_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    e: CUevent,
) -> CUresult {
    status(add_event(w, ph, g, deps, n, e, true))
}

pub(crate) unsafe fn cu_graph_add_event_wait_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    e: CUevent,
) -> CUresult {
    status(add_event(w, ph, g, deps, n, e, false))
}

fn add_child(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    child: CUgraph,
) -> Result<(), CUresult> {
    non_null(ph)?;
    let (g, deps) = (from_ptr(g), node_list(deps, n)?);
    let mut graphs = lock(&w.graphs);
    known(graphs.get(g)?, &deps)?;
    let h = handles::fresh();
    let copy = graph_clone::copy(&mut graphs, from_ptr(child))?;
    let graph = graphs.get_mut(g)?;
    graph.nodes.push((h, Node::Child(copy)));
    graph.edges.extend(deps.iter().map(|&d| (d, h)));
    write(ph, to_ptr(h))
}

/// `cuGraphAddChildGraphNode`: the node runs a copy of `child` (made now, owned by the
/// node); a graph with conditions: CUDA_ERROR_NOT_SUPPORTED.
pub(crate) unsafe fn cu_graph_add_child_graph_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    child: CUgraph,
) -> CUresult {
    status(add_child(w, ph, g, deps, n, child))
}

/// `cuGraphChildGraphNodeGetGraph`: the graph the node owns.
pub(crate) unsafe fn cu_graph_child_graph_node_get_graph(w: &World, node: CUgraphNode, ph: *mut CUgraph) -> CUresult {
    let r = non_null(ph).and_then(|()| match find_node(&lock(&w.graphs), from_ptr(node))?.1 {
        Node::Child(c) => write(ph, to_ptr(*c)),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    });
    status(r)
}

/// The event of an event record (`record`) or wait node.
fn node_event(w: &World, node: CUgraphNode, out: *mut CUevent, record: bool) -> Result<(), CUresult> {
    non_null(out)?;
    match find_node(&lock(&w.graphs), from_ptr(node))?.1 {
        Node::EventRecord(e) if record => write(out, to_ptr(*e)),
        Node::EventWait(e) if !record => write(out, to_ptr(*e)),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

pub(crate) unsafe fn cu_graph_event_record_node_get_event(w: &World, node: CUgraphNode, out: *mut CUevent) -> CUresult {
    status(node_event(w, node, out, true))
}

pub(crate) unsafe fn cu_graph_event_wait_node_get_event(w: &World, node: CUgraphNode, out: *mut CUevent) -> CUresult {
    status(node_event(w, node, out, false))
}
