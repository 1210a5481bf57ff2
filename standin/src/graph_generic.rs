//! The generic node calls: `cuGraphAddNode` (every kind the stand-in runs; conditional
//! nodes are `graph_cond.rs`'s), `cuGraphNodeSetParams`, `cuGraphExecNodeSetParams`,
//! `cuGraphNodeGetParams`, and `cuGraphDestroyNode`.
//!
//! Parameters are checked as the kind's own call checks them (`cuGraphAddKernelNode`,
//! `cuGraphAddMemsetNode`, ...). A child graph node copies its graph
//! (`CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE`) or takes it (`..._MOVE`: the node owns it,
//! and a graph with memory nodes may be used so). Setting parameters needs the node's own
//! kind (another: CUDA_ERROR_INVALID_VALUE); the parameters of allocation and free nodes
//! cannot be changed (the documentation), nor those of a child graph node in a graph:
//! CUDA_ERROR_NOT_SUPPORTED, a guess until the H200's answers are recorded; a conditional
//! node's can only be set to what they are. A graph another node owns already cannot be
//! moved into a node (CUDA_ERROR_NOT_SUPPORTED, as on the H200). A node kind the stand-in
//! does not emulate: CUDA_ERROR_NOT_SUPPORTED; a kind past those a 13.0 driver knows:
//! CUDA_ERROR_INVALID_VALUE.

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{find_node, known};
use crate::graph_add::{copy_of, kernel_v2, memset_of};
use crate::graph_mem::{add_alloc, add_free, has_mem_nodes, params_of, spec_of, FORBIDDEN};
use crate::graph_params::{replace, replace_in_exec};
use crate::model::graph::{ExtSemParams, KernelNode, Node};
use crate::model::handles;
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const UNSUPPORTED: CUresult = CUresult::CUDA_ERROR_NOT_SUPPORTED;
type T = CUgraphNodeType;

/// The kernel node of generic kernel parameters (as `cuGraphAddKernelNode_v2`).
///
/// # Safety
/// `k.kernelParams` and `k.extra` as `cuLaunchKernel` requires.
unsafe fn kernel_of(w: &World, k: &CUDA_KERNEL_NODE_PARAMS_v3) -> Result<KernelNode, CUresult> {
    let v2 = CUDA_KERNEL_NODE_PARAMS_v2 {
        func: k.func,
        gridDimX: k.gridDimX,
        gridDimY: k.gridDimY,
        gridDimZ: k.gridDimZ,
        blockDimX: k.blockDimX,
        blockDimY: k.blockDimY,
        blockDimZ: k.blockDimZ,
        sharedMemBytes: k.sharedMemBytes,
        kernelParams: k.kernelParams,
        extra: k.extra,
        kern: k.kern,
        ctx: k.ctx,
    };
    // SAFETY: forwarded from the program.
    unsafe { kernel_v2(w, &v2) }
}

/// The node of generic parameters of a kind that needs nothing of its graph (empty,
/// kernel, memcpy, memset, host, event record and wait, batch memory operations, external
/// semaphore signal and wait); `None` for another kind.
///
/// # Safety
/// `p` is the program's parameters, its union's member that of `p.type_`.
unsafe fn simple_node(w: &World, p: &CUgraphNodeParams) -> Result<Option<Node>, CUresult> {
    let u = &p.__bindgen_anon_1;
    // SAFETY (each arm): the union's member for the parameters' type.
    let node = match p.type_ {
        T::CU_GRAPH_NODE_TYPE_EMPTY => Node::Empty,
        T::CU_GRAPH_NODE_TYPE_BATCH_MEM_OP => {
            let m = unsafe { &u.memOp };
            let v1 =
                CUDA_BATCH_MEM_OP_NODE_PARAMS { ctx: m.ctx, count: m.count, paramArray: m.paramArray, flags: m.flags };
            Node::BatchMemOp(crate::graph_memop::node_of(w, &v1)?)
        }
        T::CU_GRAPH_NODE_TYPE_KERNEL => Node::Kernel(unsafe { kernel_of(w, &u.kernel) }?),
        T::CU_GRAPH_NODE_TYPE_MEMCPY => Node::Copy(copy_of(unsafe { &u.memcpy.copyParams })?),
        T::CU_GRAPH_NODE_TYPE_MEMSET => {
            let m = unsafe { &u.memset };
            let v1 = CUDA_MEMSET_NODE_PARAMS_v1 {
                dst: m.dst,
                pitch: m.pitch,
                value: m.value,
                elementSize: m.elementSize,
                width: m.width,
                height: m.height,
            };
            Node::Memset(memset_of(&v1)?)
        }
        T::CU_GRAPH_NODE_TYPE_HOST => {
            let h = unsafe { &u.host };
            Node::Host(HostCall::new(h.fn_, h.userData).ok_or(INVALID)?)
        }
        T::CU_GRAPH_NODE_TYPE_EVENT_RECORD | T::CU_GRAPH_NODE_TYPE_WAIT_EVENT => {
            let e = from_ptr(unsafe { u.eventRecord.event });
            lock(&w.events).get(e)?;
            match p.type_ == T::CU_GRAPH_NODE_TYPE_EVENT_RECORD {
                true => Node::EventRecord(e),
                false => Node::EventWait(e),
            }
        }
        T::CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL | T::CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT => {
            unsafe { crate::extsem::generic_node(u, p.type_ == T::CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL) }?
        }
        _ => return Ok(None),
    };
    Ok(Some(node))
}

/// Adds a child graph node of `child` (copied, or moved into the node) to `g` after `deps`.
fn add_child(w: &World, g: u64, deps: &[u64], c: &CUDA_CHILD_GRAPH_NODE_PARAMS) -> Result<u64, CUresult> {
    type O = CUgraphChildGraphNodeOwnership;
    let child = from_ptr(c.graph);
    let mut graphs = lock(&w.graphs);
    known(graphs.get(g)?, deps)?;
    let owned = match c.ownership {
        O::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE => crate::graph_clone::copy(&mut graphs, child)?,
        O::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE if child != g => {
            graphs.get(child)?;
            // Not a graph another node owns already.
            let owned_elsewhere = graphs.iter().any(|(_, graph)| {
                graph.nodes.iter().any(|(_, n)| match n {
                    Node::Child(c) => *c == child,
                    Node::Conditional(c) => c.bodies.contains(&child),
                    _ => false,
                })
            });
            // As on the H200 (`graph_nodes.add_child_move_twice`).
            if owned_elsewhere {
                return Err(UNSUPPORTED);
            }
            child
        }
        _ => return Err(INVALID),
    };
    let h = handles::fresh();
    let graph = graphs.get_mut(g)?;
    graph.nodes.push((h, Node::Child(owned)));
    graph.edges.extend(deps.iter().map(|&d| (d, h)));
    Ok(h)
}

/// `cuGraphAddNode` for every kind but conditional nodes: the new node. An allocation
/// node's address is written to the parameters.
///
/// # Safety
/// `p` is the program's parameters, its union's member that of `p.type_`.
pub(crate) unsafe fn add(w: &World, g: u64, deps: &[u64], p: &mut CUgraphNodeParams) -> Result<u64, CUresult> {
    let u = &mut p.__bindgen_anon_1;
    match p.type_ {
        T::CU_GRAPH_NODE_TYPE_GRAPH => {
            // SAFETY: the union's member for a child graph node.
            add_child(w, g, deps, unsafe { &u.graph })
        }
        T::CU_GRAPH_NODE_TYPE_MEM_ALLOC => {
            // SAFETY: the union's member for an allocation node.
            let a = unsafe { &mut u.alloc };
            // SAFETY: the descriptors as the program passes them.
            let spec = unsafe { spec_of(w, &a.poolProps, a.accessDescs, a.accessDescCount, a.bytesize) }?;
            let (h, address) = add_alloc(w, g, deps, spec)?;
            a.dptr = address;
            Ok(h)
        }
        // SAFETY: the union's member for a free node.
        T::CU_GRAPH_NODE_TYPE_MEM_FREE => add_free(w, g, deps, unsafe { u.free.dptr }),
        // A kind a 13.0 driver does not know (past conditional nodes): as on the H200
        // (`graph_nodes.add_unknown_type`).
        t if t.0 > T::CU_GRAPH_NODE_TYPE_CONDITIONAL.0 => Err(INVALID),
        _ => {
            // SAFETY: forwarded from the program.
            let node = unsafe { simple_node(w, p) }?.ok_or(UNSUPPORTED)?;
            crate::graph::add(w, g, deps, node)
        }
    }
}

/// The kind of node `h`.
fn kind_of(w: &World, h: CUgraphNode) -> Result<CUgraphNodeType, CUresult> {
    Ok(find_node(&lock(&w.graphs), from_ptr(h))?.1.kind())
}

/// Sets a conditional node's parameters: only to what they are (its body graphs are
/// written to `phGraph_out`).
fn set_conditional(w: &World, h: CUgraphNode, c: &mut CUDA_CONDITIONAL_NODE_PARAMS) -> Result<(), CUresult> {
    let graphs = lock(&w.graphs);
    match find_node(&graphs, from_ptr(h))?.1 {
        Node::Conditional(n) if n.handle == c.handle && n.kind == c.type_ && n.bodies.len() == c.size as usize => {
            c.phGraph_out = n.bodies.as_ptr().cast_mut().cast();
            Ok(())
        }
        _ => Err(INVALID),
    }
}

/// # Safety
/// `p` is null or the program's parameters, its union's member that of `p.type_`.
unsafe fn set(w: &World, h: CUgraphNode, p: *mut CUgraphNodeParams) -> Result<(), CUresult> {
    non_null(p)?;
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &mut *p };
    if kind_of(w, h)? != p.type_ {
        return Err(INVALID);
    }
    match p.type_ {
        T::CU_GRAPH_NODE_TYPE_MEM_ALLOC | T::CU_GRAPH_NODE_TYPE_MEM_FREE | T::CU_GRAPH_NODE_TYPE_GRAPH => {
            Err(UNSUPPORTED)
        }
        // SAFETY: the union's member for a conditional node.
        T::CU_GRAPH_NODE_TYPE_CONDITIONAL => set_conditional(w, h, unsafe { &mut p.__bindgen_anon_1.conditional }),
        _ => {
            // SAFETY: forwarded from the program.
            let node = unsafe { simple_node(w, p) }?.ok_or(UNSUPPORTED)?;
            replace(w, h, node)
        }
    }
}

pub(crate) unsafe fn cu_graph_node_set_params(w: &World, h: CUgraphNode, p: *mut CUgraphNodeParams) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { set(w, h, p) })
}

/// The 13.4 form takes the same arguments.
pub(crate) unsafe fn cu_graph_node_set_params_v13040(w: &World, h: CUgraphNode, p: *mut CUgraphNodeParams) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { set(w, h, p) })
}

/// `cuGraphExecNodeSetParams`: the kinds `set` changes, and a child graph node's graph
/// (as `cuGraphExecChildGraphNodeSetParams`); an allocation, free or conditional node:
/// CUDA_ERROR_NOT_SUPPORTED (a guess).
pub(crate) unsafe fn cu_graph_exec_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *mut CUgraphNodeParams,
) -> CUresult {
    let r = non_null(p).and_then(|()| {
        // SAFETY: a non-null pointer to the program's parameters.
        let p = unsafe { &*p };
        match p.type_ {
            T::CU_GRAPH_NODE_TYPE_MEM_ALLOC | T::CU_GRAPH_NODE_TYPE_MEM_FREE | T::CU_GRAPH_NODE_TYPE_CONDITIONAL => {
                Err(UNSUPPORTED)
            }
            T::CU_GRAPH_NODE_TYPE_GRAPH => {
                // SAFETY: the union's member for a child graph node.
                let child = unsafe { p.__bindgen_anon_1.graph.graph };
                crate::graph_node_ops::exec_child_set(w, e, h, child)
            }
            _ => {
                // SAFETY: forwarded from the program.
                let node = unsafe { simple_node(w, p) }?.ok_or(UNSUPPORTED)?;
                replace_in_exec(w, e, h, node)
            }
        }
    });
    status(r)
}

/// A status as a `Result`.
fn ok(s: CUresult) -> Result<(), CUresult> {
    match s {
        CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(e),
    }
}

/// The generic parameters of node `h` (kernel arguments are not handed back, as
/// `cuGraphKernelNodeGetParams`; a conditional node's `phGraph_out` is its array of
/// bodies).
fn params(w: &World, h: CUgraphNode) -> Result<CUgraphNodeParams, CUresult> {
    let node = find_node(&lock(&w.graphs), from_ptr(h))?.1.clone();
    let mut out = CUgraphNodeParams { type_: node.kind(), ..Default::default() };
    let u = &mut out.__bindgen_anon_1;
    // SAFETY (each call): valid pointers to locals of the right type.
    match node {
        Node::Kernel(_) => {
            let mut k = CUDA_KERNEL_NODE_PARAMS_v2::default();
            ok(unsafe { crate::graph_params::cu_graph_kernel_node_get_params_v12000(w, h, &mut k) })?;
            u.kernel = CUDA_KERNEL_NODE_PARAMS_v3 {
                func: k.func,
                gridDimX: k.gridDimX,
                gridDimY: k.gridDimY,
                gridDimZ: k.gridDimZ,
                blockDimX: k.blockDimX,
                blockDimY: k.blockDimY,
                blockDimZ: k.blockDimZ,
                sharedMemBytes: k.sharedMemBytes,
                ..Default::default()
            };
        }
        Node::Copy(_) => {
            let mut c = CUDA_MEMCPY3D_v2::default();
            ok(unsafe { crate::graph_params::cu_graph_memcpy_node_get_params(w, h, &mut c) })?;
            u.memcpy = CUDA_MEMCPY_NODE_PARAMS { copyParams: c, ..Default::default() };
        }
        Node::Memset(m) => {
            u.memset = CUDA_MEMSET_NODE_PARAMS_v2 {
                dst: m.dst,
                pitch: m.pitch,
                value: m.value,
                elementSize: m.width as std::ffi::c_uint,
                width: m.count,
                height: m.rows,
                ctx: std::ptr::null_mut(),
            };
        }
        Node::Host(call) => {
            let (fn_, data) = call.parts();
            u.host = CUDA_HOST_NODE_PARAMS_v2 { fn_, userData: data, ..Default::default() };
        }
        Node::Child(g) => u.graph = CUDA_CHILD_GRAPH_NODE_PARAMS { graph: to_ptr(g), ..Default::default() },
        Node::EventRecord(e) => {
            u.eventRecord = CUDA_EVENT_RECORD_NODE_PARAMS { event: to_ptr(e), ..Default::default() }
        }
        Node::EventWait(e) => u.eventWait = CUDA_EVENT_WAIT_NODE_PARAMS { event: to_ptr(e) },
        Node::MemAlloc(a) => {
            let a = params_of(w, a)?;
            u.alloc = CUDA_MEM_ALLOC_NODE_PARAMS_v2 {
                poolProps: a.poolProps,
                accessDescs: a.accessDescs,
                accessDescCount: a.accessDescCount,
                bytesize: a.bytesize,
                dptr: a.dptr,
            };
        }
        Node::MemFree(a) => u.free = CUDA_MEM_FREE_NODE_PARAMS { dptr: a },
        Node::Conditional(c) => {
            let graphs = lock(&w.graphs);
            // The node's own array (the clone above is a copy).
            let bodies = match find_node(&graphs, from_ptr(h))?.1 {
                Node::Conditional(n) => n.bodies.as_ptr(),
                _ => return Err(INVALID),
            };
            u.conditional = CUDA_CONDITIONAL_NODE_PARAMS {
                handle: c.handle,
                type_: c.kind,
                size: c.bodies.len() as std::ffi::c_uint,
                phGraph_out: bodies.cast_mut().cast(),
                ctx: std::ptr::null_mut(),
            };
        }
        Node::BatchMemOp(_) => {
            let m = crate::graph_memop::params_of(w, h)?;
            u.memOp = CUDA_BATCH_MEM_OP_NODE_PARAMS_v2 {
                ctx: m.ctx,
                count: m.count,
                paramArray: m.paramArray,
                flags: m.flags,
            };
        }
        Node::ExtSem(n) => {
            let signal = matches!(n.params, ExtSemParams::Signal(_));
            // The node's own arrays (the clone above is a copy).
            let (sems, blocks, n) = crate::extsem::arrays_of(w, h, signal)?;
            if signal {
                u.extSemSignal = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS_v2 {
                    extSemArray: sems,
                    paramsArray: blocks.cast(),
                    numExtSems: n,
                    ..Default::default()
                };
            } else {
                u.extSemWait = CUDA_EXT_SEM_WAIT_NODE_PARAMS_v2 {
                    extSemArray: sems,
                    paramsArray: blocks.cast(),
                    numExtSems: n,
                    ..Default::default()
                };
            }
        }
        Node::Empty => {}
    }
    Ok(out)
}

/// `cuGraphNodeGetParams` (13.2).
pub(crate) unsafe fn cu_graph_node_get_params(w: &World, h: CUgraphNode, p: *mut CUgraphNodeParams) -> CUresult {
    status(non_null(p).and_then(|()| write(p, params(w, h)?)))
}

/// Removes node `h` and its edges (and what refers to it) from its graph; the graphs it
/// owned, to destroy. A graph with memory nodes: [`FORBIDDEN`].
fn destroy_node(w: &World, h: u64) -> Result<Vec<u64>, CUresult> {
    let mut graphs = lock(&w.graphs);
    let (g, _) = find_node(&graphs, h)?;
    if has_mem_nodes(&graphs, g) {
        return Err(FORBIDDEN);
    }
    let graph = graphs.get_mut(g)?;
    let i = graph.nodes.iter().position(|(n, _)| *n == h).ok_or(INVALID)?;
    let (_, node) = graph.nodes.remove(i);
    graph.edges.retain(|(a, b)| *a != h && *b != h);
    graph.kernel_attrs.retain(|(n, _), _| *n != h);
    graph.clone_of.retain(|(_, copy)| *copy != h);
    Ok(match node {
        Node::Child(c) => vec![c],
        Node::Conditional(c) => c.bodies,
        _ => Vec::new(),
    })
}

/// `cuGraphDestroyNode`: the graphs a child graph or conditional node owns go with it.
pub(crate) unsafe fn cu_graph_destroy_node(w: &World, h: CUgraphNode) -> CUresult {
    let r =
        destroy_node(w, from_ptr(h)).map(|owned| owned.into_iter().for_each(|g| crate::lifecycle::destroy_graph(w, g)));
    status(r)
}
