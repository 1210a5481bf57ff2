//! Graphs beyond capture (issue 15, item 7): edges, node types, whole-graph update results
//! and conditional handles, and kernel nodes with no context current. Recorded on the H200
//! (`expected/h200-driver-13000.txt`).

use super::graph::{graph, instantiate};
use super::{alloc, case, number, other_context, scale_kernel, step, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// Adds an empty node to `g` after `deps`.
fn empty(e: &Env, g: CUgraph, deps: &[CUgraphNode]) -> Result<CUgraphNode, Out> {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, dependencies of it, a valid out-pointer.
    super::made("cuGraphAddEmptyNode", unsafe { e.p.cuGraphAddEmptyNode(&mut n, g, deps.as_ptr(), deps.len()) }, n)
}

/// The edge count of `g` (the 10.0 form).
fn edge_count(e: &Env, g: CUgraph) -> String {
    let mut n = UNTOUCHED as usize;
    let null = std::ptr::null_mut();
    // SAFETY: NULL arrays ask for the count.
    let st = unsafe { e.p.cuGraphGetEdges_v10000(g, null, null, &mut n) };
    format!("{st:?} {}", number(n as u64))
}

/// Runs `f` with kernel node parameters of `scale_f32(x, 2.0, 256)` (one block of 256),
/// whose argument values live across the call.
fn with_kernel_params(e: &Env, f: impl FnOnce(&CUDA_KERNEL_NODE_PARAMS) -> Out) -> Out {
    let func = with!(scale_kernel(e));
    let (mut x, mut s, mut n) = (with!(alloc(e, 1024)), 2.0f32, 256i32);
    let mut args: [*mut std::os::raw::c_void; 3] = [(&raw mut x).cast(), (&raw mut s).cast(), (&raw mut n).cast()];
    let p = CUDA_KERNEL_NODE_PARAMS {
        func,
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 256,
        blockDimY: 1,
        blockDimZ: 1,
        kernelParams: args.as_mut_ptr(),
        ..Default::default()
    };
    f(&p)
}

/// A graph of one kernel node (added with the context current), and the node.
fn kernel_graph(e: &Env, p: &CUDA_KERNEL_NODE_PARAMS) -> Result<(CUgraph, CUgraphNode), Out> {
    let g = graph(e)?;
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, valid parameters whose arguments outlive the call.
    super::made("cuGraphAddKernelNode", unsafe { e.p.cuGraphAddKernelNode(&mut n, g, std::ptr::null(), 0, p) }, (g, n))
}

/// Kernel nodes with no context current: driver 580 crashes adding one or setting its
/// parameters (the `func` field names the function, and so its context).
fn no_context_cases() -> Vec<Case> {
    vec![
        case!("graph_explicit.kernel_node_no_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let g = with!(graph(e));
                step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
                let mut n = std::ptr::null_mut();
                Out::of(e.p.cuGraphAddKernelNode(&mut n, g, std::ptr::null(), 0, p))
            })
        }),
        case!("graph_explicit.kernel_node_set_params_no_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (_, n) = with!(kernel_graph(e, p));
                step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
                Out::of(e.p.cuGraphKernelNodeSetParams(n, p))
            })
        }),
        case!("graph_explicit.exec_kernel_node_set_params_no_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (g, n) = with!(kernel_graph(e, p));
                let x = with!(instantiate(e, g));
                step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
                Out::of(e.p.cuGraphExecKernelNodeSetParams(x, n, p))
            })
        }),
        case!("graph_explicit.instantiate_no_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (g, _) = with!(kernel_graph(e, p));
                step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
                let mut x = std::ptr::null_mut();
                Out::of(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0))
            })
        }),
        case!("graph_explicit.launch_no_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (g, _) = with!(kernel_graph(e, p));
                let x = with!(instantiate(e, g));
                let s = with!(super::stream(e));
                step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
                let st = e.p.cuGraphLaunch(x, s);
                Out::of(st).info("synchronize", format!("{:?}", e.p.cuStreamSynchronize(s)))
            })
        }),
    ]
}

/// Updates an executable graph of one kernel node from its graph with `current` current
/// (`None`: no context).
fn exec_update_with(e: &Env, current: Option<CUcontext>) -> Out {
    with_kernel_params(e, |p| {
        let (g, _) = with!(kernel_graph(e, p));
        let x = with!(instantiate(e, g));
        let mut info = CUgraphExecUpdateResultInfo::default();
        // SAFETY: a live context or null; live graph and executable; a valid out-pointer.
        let st = unsafe {
            step!(e.p.cuCtxSetCurrent(current.unwrap_or(std::ptr::null_mut())));
            e.p.cuGraphExecUpdate(x, g, &mut info)
        };
        Out::of(st).eq("result", format!("{:?}", info.result))
    })
}

/// An executable graph of one kernel node updated, launched, and its node's parameters set,
/// with its context not current (cudrv updates and launches so from driver 13.0).
pub fn named_context_cases() -> Vec<Case> {
    vec![
        case!("graph_explicit.exec_update_no_context", Ctx, |e| { exec_update_with(e, None) }),
        case!("graph_explicit.exec_update_other_context", Ctx, |e| {
            let other = with!(other_context(e));
            exec_update_with(e, Some(other))
        }),
        case!("graph_explicit.launch_other_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (g, _) = with!(kernel_graph(e, p));
                let x = with!(instantiate(e, g));
                let s = with!(super::stream(e));
                let other = with!(other_context(e));
                step!(e.p.cuCtxSetCurrent(other));
                let st = e.p.cuGraphLaunch(x, s);
                Out::of(st).eq("synchronize", e.p.cuStreamSynchronize(s))
            })
        }),
        case!("graph_explicit.exec_kernel_node_set_params_other_context", Ctx, |e| {
            with_kernel_params(e, |p| {
                let (g, n) = with!(kernel_graph(e, p));
                let x = with!(instantiate(e, g));
                let other = with!(other_context(e));
                step!(e.p.cuCtxSetCurrent(other));
                Out::of(e.p.cuGraphExecKernelNodeSetParams(x, n, p))
            })
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [named_cases(), no_context_cases()].concat()
}

fn named_cases() -> Vec<Case> {
    vec![
        case!("graph_explicit.add_edge", Ctx, |e| {
            let g = with!(graph(e));
            let (a, b) = (with!(empty(e, g, &[])), with!(empty(e, g, &[])));
            let st = e.p.cuGraphAddDependencies_v10000(g, &a, &b, 1);
            Out::of(st).eq("edges", edge_count(e, g))
        }),
        case!("graph_explicit.add_edge_twice", Ctx, |e| {
            let g = with!(graph(e));
            let a = with!(empty(e, g, &[]));
            let b = with!(empty(e, g, &[a]));
            Out::of(e.p.cuGraphAddDependencies_v10000(g, &a, &b, 1)).eq("edges", edge_count(e, g))
        }),
        case!("graph_explicit.add_self_edge", Ctx, |e| {
            let g = with!(graph(e));
            let a = with!(empty(e, g, &[]));
            Out::of(e.p.cuGraphAddDependencies_v10000(g, &a, &a, 1))
        }),
        case!("graph_explicit.remove_missing_edge", Ctx, |e| {
            let g = with!(graph(e));
            let (a, b) = (with!(empty(e, g, &[])), with!(empty(e, g, &[])));
            Out::of(e.p.cuGraphRemoveDependencies_v10000(g, &a, &b, 1))
        }),
        case!("graph_explicit.cycle_instantiate", Ctx, |e| {
            let g = with!(graph(e));
            let a = with!(empty(e, g, &[]));
            let b = with!(empty(e, g, &[a]));
            let added = e.p.cuGraphAddDependencies_v10000(g, &b, &a, 1);
            let mut x = std::ptr::null_mut();
            Out::of(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0)).info("add_back_edge", format!("{added:?}"))
        }),
        case!("graph_explicit.root_nodes", Ctx, |e| {
            let g = with!(graph(e));
            let a = with!(empty(e, g, &[]));
            with!(empty(e, g, &[a]));
            with!(empty(e, g, &[]));
            let mut n = UNTOUCHED as usize;
            Out::of(e.p.cuGraphGetRootNodes(g, std::ptr::null_mut(), &mut n)).eq("roots", number(n as u64))
        }),
        case!("graph_explicit.node_type_event_record", Ctx, |e| {
            let g = with!(graph(e));
            let mut ev = std::ptr::null_mut();
            step!(e.p.cuEventCreate(&mut ev, 0));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventRecordNode(&mut n, g, std::ptr::null(), 0, ev));
            let mut t = CUgraphNodeType(UNTOUCHED as u32);
            Out::of(e.p.cuGraphNodeGetType(n, &mut t)).eq("type", number(u64::from(t.0)))
        }),
        case!("graph_explicit.child_graph_node_count", Ctx, |e| {
            let (g, child) = (with!(graph(e)), with!(graph(e)));
            with!(empty(e, child, &[]));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddChildGraphNode(&mut n, g, std::ptr::null(), 0, child));
            let mut inner = std::ptr::null_mut();
            step!(e.p.cuGraphChildGraphNodeGetGraph(n, &mut inner));
            let (st, count) = super::graph::node_count(e, inner);
            Out::of(st).eq("nodes", count).eq("same_graph", inner == child)
        }),
        case!("graph_explicit.update_same_graph", Ctx, |e| {
            let g = with!(graph(e));
            with!(empty(e, g, &[]));
            let x = with!(instantiate(e, g));
            let mut info = CUgraphExecUpdateResultInfo::default();
            Out::of(e.p.cuGraphExecUpdate_v12000(x, g, &mut info)).eq("result", number(u64::from(info.result.0)))
        }),
        case!("graph_explicit.update_topology_changed", Ctx, |e| {
            let g = with!(graph(e));
            with!(empty(e, g, &[]));
            let x = with!(instantiate(e, g));
            let h = with!(graph(e));
            let a = with!(empty(e, h, &[]));
            with!(empty(e, h, &[a]));
            let mut info = CUgraphExecUpdateResultInfo::default();
            let st = e.p.cuGraphExecUpdate_v12000(x, h, &mut info);
            Out::of(st).eq("result", number(u64::from(info.result.0))).eq("error_node_null", info.errorNode.is_null())
        }),
        case!("graph_explicit.update_node_type_changed", Ctx, |e| {
            let g = with!(graph(e));
            with!(empty(e, g, &[]));
            let x = with!(instantiate(e, g));
            let h = with!(graph(e));
            let mut ev = std::ptr::null_mut();
            step!(e.p.cuEventCreate(&mut ev, 0));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventRecordNode(&mut n, h, std::ptr::null(), 0, ev));
            let mut info = CUgraphExecUpdateResultInfo::default();
            let st = e.p.cuGraphExecUpdate_v12000(x, h, &mut info);
            Out::of(st).eq("result", number(u64::from(info.result.0))).eq("error_node_is_new", info.errorNode == n)
        }),
        case!("graph_explicit.conditional_handle", Ctx, |e| {
            let g = with!(graph(e));
            let mut h = UNTOUCHED;
            let st = e.p.cuGraphConditionalHandleCreate(&mut h, g, e.ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT);
            Out::of(st).eq("written", h != UNTOUCHED)
        }),
        case!("graph_explicit.conditional_handle_bad_flags", Ctx, |e| {
            let g = with!(graph(e));
            let mut h = UNTOUCHED;
            Out::of(e.p.cuGraphConditionalHandleCreate(&mut h, g, e.ctx, 0, 2))
        }),
        case!("graph_explicit.conditional_while_two_bodies", Ctx, |e| {
            let g = with!(graph(e));
            let mut h = 0;
            step!(e.p.cuGraphConditionalHandleCreate(&mut h, g, e.ctx, 0, 0));
            let mut p =
                CUgraphNodeParams { type_: CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL, ..Default::default() };
            p.__bindgen_anon_1.conditional = CUDA_CONDITIONAL_NODE_PARAMS {
                handle: h,
                type_: CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE,
                size: 2,
                phGraph_out: std::ptr::null_mut(),
                ctx: e.ctx,
            };
            let mut n = std::ptr::null_mut();
            Out::of(e.p.cuGraphAddNode(&mut n, g, std::ptr::null(), std::ptr::null(), 0, &mut p))
        }),
        case!("graph_explicit.conditional_clone", Ctx, |e| {
            let g = with!(graph(e));
            let mut h = 0;
            step!(e.p.cuGraphConditionalHandleCreate(&mut h, g, e.ctx, 0, 0));
            let mut p =
                CUgraphNodeParams { type_: CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL, ..Default::default() };
            p.__bindgen_anon_1.conditional = CUDA_CONDITIONAL_NODE_PARAMS {
                handle: h,
                type_: CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF,
                size: 1,
                phGraph_out: std::ptr::null_mut(),
                ctx: e.ctx,
            };
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddNode(&mut n, g, std::ptr::null(), std::ptr::null(), 0, &mut p));
            let mut c = std::ptr::null_mut();
            Out::of(e.p.cuGraphClone(&mut c, g))
        }),
        case!("graph_explicit.disable_host_node", Ctx, |e| {
            let g = with!(graph(e));
            let n = with!(empty(e, g, &[]));
            let x = with!(instantiate(e, g));
            Out::of(e.p.cuGraphNodeSetEnabled(x, n, 0))
        }),
    ]
}
