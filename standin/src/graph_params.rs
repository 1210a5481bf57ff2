//! Node parameters: read back and changed in a graph (`cuGraphKernelNodeGetParams`,
//! `...SetParams` for kernel, memset, memcpy and host nodes) and in an exec
//! (`cuGraphExec*NodeSetParams`, `cuGraphNodeSetEnabled`/`GetEnabled`). A kernel node's
//! parameters read back give its function, shape and shared memory; its argument values
//! are not handed back (`kernelParams` and `extra` NULL). Setting parameters of another
//! kind of node than the call's: CUDA_ERROR_INVALID_VALUE.

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::find_node;
use crate::graph_add::{copy_of, kernel_v1, kernel_v2, memset_of};
use crate::model::graph::{End, KernelNode, Node, Step};
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::world::World;

/// The node `h` of any graph, cloned.
fn node_of(w: &World, h: CUgraphNode) -> Result<Node, CUresult> {
    Ok(find_node(&lock(&w.graphs), from_ptr(h))?.1.clone())
}

/// Replaces node `h` (of any graph) with `new`, if it is of the same kind.
pub(crate) fn replace(w: &World, h: CUgraphNode, new: Node) -> Result<(), CUresult> {
    let mut graphs = lock(&w.graphs);
    let h = from_ptr(h);
    let (g, _) = find_node(&graphs, h)?;
    let node = graphs.get_mut(g)?.node_mut(h).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if node.kind() != new.kind() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    *node = new;
    Ok(())
}

/// Replaces the step of exec `e` made from node `h` with `new`, if it is of the same kind.
pub(crate) fn replace_in_exec(w: &World, e: CUgraphExec, h: CUgraphNode, new: Node) -> Result<(), CUresult> {
    let mut execs = lock(&w.execs);
    let exec = execs.get_mut(from_ptr(e))?;
    let step = Step::find_mut(&mut exec.steps, from_ptr(h)).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if step.node.kind() != new.kind() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    step.node = new;
    Ok(())
}

fn kernel(w: &World, h: CUgraphNode) -> Result<KernelNode, CUresult> {
    match node_of(w, h)? {
        Node::Kernel(k) => Ok(k),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

pub(crate) unsafe fn cu_graph_kernel_node_get_params(
    w: &World,
    h: CUgraphNode,
    p: *mut CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        let k = kernel(w, h)?;
        let out = CUDA_KERNEL_NODE_PARAMS_v1 {
            func: to_ptr(k.func),
            gridDimX: k.grid[0],
            gridDimY: k.grid[1],
            gridDimZ: k.grid[2],
            blockDimX: k.block[0],
            blockDimY: k.block[1],
            blockDimZ: k.block[2],
            sharedMemBytes: k.shared,
            kernelParams: std::ptr::null_mut(),
            extra: std::ptr::null_mut(),
        };
        write(p, out)
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_kernel_node_get_params_v12000(
    w: &World,
    h: CUgraphNode,
    p: *mut CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        let k = kernel(w, h)?;
        let out = CUDA_KERNEL_NODE_PARAMS_v2 {
            func: to_ptr(k.func),
            gridDimX: k.grid[0],
            gridDimY: k.grid[1],
            gridDimZ: k.grid[2],
            blockDimX: k.block[0],
            blockDimY: k.block[1],
            blockDimZ: k.block[2],
            sharedMemBytes: k.shared,
            ..Default::default()
        };
        write(p, out)
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_kernel_node_set_params(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: a non-null pointer to the program's parameters, as for a launch.
    status(non_null(p).and_then(|()| unsafe { kernel_v1(w, &*p) }).and_then(|k| replace(w, h, Node::Kernel(k))))
}

pub(crate) unsafe fn cu_graph_kernel_node_set_params_v12000(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult {
    // SAFETY: as above.
    status(non_null(p).and_then(|()| unsafe { kernel_v2(w, &*p) }).and_then(|k| replace(w, h, Node::Kernel(k))))
}

pub(crate) unsafe fn cu_graph_exec_kernel_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_KERNEL_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: as above.
    let k = non_null(p).and_then(|()| unsafe { kernel_v1(w, &*p) });
    status(k.and_then(|k| replace_in_exec(w, e, h, Node::Kernel(k))))
}

pub(crate) unsafe fn cu_graph_exec_kernel_node_set_params_v12000(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_KERNEL_NODE_PARAMS_v2,
) -> CUresult {
    // SAFETY: as above.
    let k = non_null(p).and_then(|()| unsafe { kernel_v2(w, &*p) });
    status(k.and_then(|k| replace_in_exec(w, e, h, Node::Kernel(k))))
}

pub(crate) unsafe fn cu_graph_memset_node_get_params(
    w: &World,
    h: CUgraphNode,
    p: *mut CUDA_MEMSET_NODE_PARAMS_v1,
) -> CUresult {
    let r = non_null(p).and_then(|()| match node_of(w, h)? {
        Node::Memset(m) => write(
            p,
            CUDA_MEMSET_NODE_PARAMS_v1 {
                dst: m.dst,
                pitch: m.pitch,
                value: m.value,
                elementSize: m.width as c_uint,
                width: m.count,
                height: m.rows,
            },
        ),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_memset_node_set_params(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_MEMSET_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: a non-null pointer to the program's parameters.
    status(non_null(p).and_then(|()| memset_of(unsafe { &*p })).and_then(|m| replace(w, h, Node::Memset(m))))
}

pub(crate) unsafe fn cu_graph_exec_memset_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_MEMSET_NODE_PARAMS_v1,
    _ctx: CUcontext,
) -> CUresult {
    // SAFETY: as above.
    let m = non_null(p).and_then(|()| memset_of(unsafe { &*p }));
    status(m.and_then(|m| replace_in_exec(w, e, h, Node::Memset(m))))
}

/// Sets one end of a `CUDA_MEMCPY3D` from `end`.
fn put_end(end: End, ty: &mut CUmemorytype, host: &mut *const std::ffi::c_void, device: &mut CUdeviceptr) {
    match end {
        End::Host(p) => (*ty, *host) = (CUmemorytype::CU_MEMORYTYPE_HOST, p as *const std::ffi::c_void),
        End::Device(d) => (*ty, *device) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, d),
    }
}

pub(crate) unsafe fn cu_graph_memcpy_node_get_params(w: &World, h: CUgraphNode, p: *mut CUDA_MEMCPY3D_v2) -> CUresult {
    let r = non_null(p).and_then(|()| match node_of(w, h)? {
        Node::Copy(c) => {
            let mut out = CUDA_MEMCPY3D_v2 { WidthInBytes: c.len, Height: 1, Depth: 1, ..Default::default() };
            put_end(c.src, &mut out.srcMemoryType, &mut out.srcHost, &mut out.srcDevice);
            let mut dst_host = std::ptr::null();
            put_end(c.dst, &mut out.dstMemoryType, &mut dst_host, &mut out.dstDevice);
            out.dstHost = dst_host.cast_mut();
            write(p, out)
        }
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_memcpy_node_set_params(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_MEMCPY3D_v2,
) -> CUresult {
    // SAFETY: a non-null pointer to the program's parameters.
    status(non_null(p).and_then(|()| copy_of(unsafe { &*p })).and_then(|c| replace(w, h, Node::Copy(c))))
}

pub(crate) unsafe fn cu_graph_exec_memcpy_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_MEMCPY3D_v2,
    _ctx: CUcontext,
) -> CUresult {
    // SAFETY: as above.
    let c = non_null(p).and_then(|()| copy_of(unsafe { &*p }));
    status(c.and_then(|c| replace_in_exec(w, e, h, Node::Copy(c))))
}

/// The host call of host node parameters: CUDA_ERROR_INVALID_VALUE for a null function.
///
/// # Safety
/// `p` is null or points to the program's parameters.
unsafe fn host_of(p: *const CUDA_HOST_NODE_PARAMS_v1) -> Result<Node, CUresult> {
    non_null(p)?;
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &*p };
    HostCall::new(p.fn_, p.userData).map(Node::Host).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)
}

pub(crate) unsafe fn cu_graph_host_node_get_params(
    w: &World,
    h: CUgraphNode,
    p: *mut CUDA_HOST_NODE_PARAMS_v1,
) -> CUresult {
    let r = non_null(p).and_then(|()| match node_of(w, h)? {
        Node::Host(call) => {
            let (fn_, data) = call.parts();
            write(p, CUDA_HOST_NODE_PARAMS_v1 { fn_, userData: data })
        }
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_host_node_set_params(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_HOST_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { host_of(p) }.and_then(|n| replace(w, h, n)))
}

pub(crate) unsafe fn cu_graph_exec_host_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_HOST_NODE_PARAMS_v1,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { host_of(p) }.and_then(|n| replace_in_exec(w, e, h, n)))
}

/// `cuGraphNodeSetEnabled`: only kernel, memcpy and memset nodes can be disabled (the
/// header); another: CUDA_ERROR_INVALID_VALUE. A disabled node does nothing at launch.
pub(crate) unsafe fn cu_graph_node_set_enabled(w: &World, e: CUgraphExec, h: CUgraphNode, on: c_uint) -> CUresult {
    let mut execs = lock(&w.execs);
    let r = execs.get_mut(from_ptr(e)).and_then(|exec| {
        let step = Step::find_mut(&mut exec.steps, from_ptr(h)).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if !matches!(step.node, Node::Kernel(_) | Node::Copy(_) | Node::Memset(_)) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        step.enabled = on != 0;
        Ok(())
    });
    status(r)
}

pub(crate) unsafe fn cu_graph_node_get_enabled(w: &World, e: CUgraphExec, h: CUgraphNode, on: *mut c_uint) -> CUresult {
    let r = non_null(on).and_then(|()| {
        let mut execs = lock(&w.execs);
        let exec = execs.get_mut(from_ptr(e))?;
        let step = Step::find_mut(&mut exec.steps, from_ptr(h)).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        write(on, c_uint::from(step.enabled))
    });
    status(r)
}
