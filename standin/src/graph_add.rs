//! `cuGraphAddKernelNode`, `cuGraphAddMemsetNode` and `cuGraphAddMemcpyNode`: the node
//! kinds stream capture records (`graph_node.rs`), added by hand. A memcpy node copies one
//! contiguous range between host and device memory (no arrays, no 2D or 3D shapes:
//! CUDA_ERROR_NOT_SUPPORTED).

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{non_null, status};
use crate::graph::add_node;
use crate::launch::kernel_node;
use crate::model::graph::{CopyNode, End, MemsetNode, Node};
use crate::world::World;

/// Adds a kernel node of `f` (a function, or a kernel cast to one).
///
/// # Safety
/// `params` and `extra` as `cuLaunchKernel` requires.
#[allow(clippy::too_many_arguments)]
unsafe fn add_kernel(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    f: CUfunction,
    shape: [[c_uint; 3]; 2],
    shared: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    non_null(ph)?;
    // SAFETY: forwarded from the program.
    let kernel = unsafe { kernel_node(w, f, shape[0], shape[1], shared, params, extra) }?;
    add_node(w, ph, g, deps, n, Node::Kernel(kernel))
}

pub(crate) unsafe fn cu_graph_add_kernel_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    if p.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &*p };
    let shape = [[p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ]];
    // SAFETY: the parameters are the program's, as for a launch.
    status(unsafe { add_kernel(w, ph, g, deps, n, p.func, shape, p.sharedMemBytes, p.kernelParams, p.extra) })
}

/// `cuGraphAddKernelNode_v2`: the function is `func`, or else `kern`; `ctx` is not used.
pub(crate) unsafe fn cu_graph_add_kernel_node_v12000(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult {
    if p.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &*p };
    let shape = [[p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ]];
    let f = if p.func.is_null() { p.kern.cast() } else { p.func };
    // SAFETY: the parameters are the program's, as for a launch.
    status(unsafe { add_kernel(w, ph, g, deps, n, f, shape, p.sharedMemBytes, p.kernelParams, p.extra) })
}

/// `cuGraphAddMemsetNode`: `height` rows of `width` values of `elementSize` bytes (1, 2
/// or 4), `pitch` bytes apart.
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
        let p = unsafe { &*p };
        let mut node = MemsetNode::new(p.dst, p.value, p.elementSize as usize, p.width)?;
        let row = p.width.saturating_mul(p.elementSize as usize);
        if p.width == 0 || p.height == 0 || (p.height > 1 && p.pitch < row) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        (node.rows, node.pitch) = (p.height, p.pitch);
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

/// `cuGraphAddMemcpyNode`: one contiguous row (`Height` and `Depth` 0 or 1, no Y or Z
/// offsets); host to host is CUDA_ERROR_INVALID_VALUE.
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
        let p = unsafe { &*p };
        if p.Height > 1 || p.Depth > 1 || p.srcY + p.srcZ + p.dstY + p.dstZ != 0 {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        let src = end(p.srcMemoryType, p.srcHost as usize, p.srcDevice, p.srcXInBytes)?;
        let dst = end(p.dstMemoryType, p.dstHost as usize, p.dstDevice, p.dstXInBytes)?;
        if let (End::Host(_), End::Host(_)) = (dst, src) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        add_node(w, ph, g, deps, n, Node::Copy(CopyNode { dst, src, len: p.WidthInBytes }))
    });
    status(r)
}
