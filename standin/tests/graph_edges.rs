//! Explicit graphs through the raw entries: edges (the 10.0 and 12.3 forms), root nodes,
//! execution order from edges added after the nodes, the 10.2 `cuGraphExecUpdate`'s
//! results, enabling nodes, conditional handles and nodes.

mod common;

use std::ffi::c_void;
use std::sync::Mutex;

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::Driver;

fn new_graph(d: &Driver) -> CUgraph {
    let mut g = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuGraphCreate(&mut g, 0) });
    g
}

static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static BODIES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

unsafe extern "C" fn note(data: *mut c_void) {
    ORDER.lock().unwrap().push(data as usize);
}

unsafe extern "C" fn note_body(data: *mut c_void) {
    BODIES.lock().unwrap().push(data as usize);
}

fn host(d: &Driver, g: CUgraph, deps: &[CUgraphNode], tag: usize) -> CUgraphNode {
    host_with(d, g, deps, tag, note)
}

fn host_with(
    d: &Driver,
    g: CUgraph,
    deps: &[CUgraphNode],
    tag: usize,
    f: unsafe extern "C" fn(*mut c_void),
) -> CUgraphNode {
    let params = CUDA_HOST_NODE_PARAMS { fn_: Some(f), userData: tag as *mut c_void };
    let mut n = std::ptr::null_mut();
    // SAFETY: valid out-pointer, dependencies and parameters.
    ok(unsafe { d.p().cuGraphAddHostNode(&mut n, g, deps.as_ptr(), deps.len(), &params) });
    n
}

#[test]
fn edges_added_later_order_the_launch_and_are_read_back() {
    let d = driver();
    let p = d.p();
    new_context(&d);
    let g = new_graph(&d);
    let (a, b, c) = (host(&d, g, &[], 1), host(&d, g, &[], 2), host(&d, g, &[], 3));
    // c -> a -> b: the launch runs 3, 1, 2.
    // SAFETY (all calls below): live graph and nodes, valid arrays and out-pointers.
    unsafe {
        ok(p.cuGraphAddDependencies_v10000(g, [c, a].as_ptr(), [a, b].as_ptr(), 2));
        assert_eq!(p.cuGraphAddDependencies_v10000(g, &c, &a, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuGraphAddDependencies_v10000(g, &c, &c, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        let mut n = 0usize;
        ok(p.cuGraphGetEdges_v10000(g, std::ptr::null_mut(), std::ptr::null_mut(), &mut n));
        assert_eq!(n, 2);
        let (mut from, mut to, mut data) =
            ([std::ptr::null_mut(); 3], [std::ptr::null_mut(); 3], [CUgraphEdgeData::default(); 3]);
        n = 3;
        ok(p.cuGraphGetEdges_v12030(g, from.as_mut_ptr(), to.as_mut_ptr(), data.as_mut_ptr(), &mut n));
        assert_eq!((n, from, to), (2, [c, a, std::ptr::null_mut()], [a, b, std::ptr::null_mut()]));
        let mut roots = [std::ptr::null_mut(); 3];
        n = 3;
        ok(p.cuGraphGetRootNodes(g, roots.as_mut_ptr(), &mut n));
        assert_eq!((n, roots[0]), (1, c));
        let mut exec = std::ptr::null_mut();
        ok(p.cuGraphInstantiateWithFlags(&mut exec, g, 0));
        ORDER.lock().unwrap().clear();
        ok(p.cuGraphLaunch(exec, std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
        assert_eq!(*ORDER.lock().unwrap(), [3, 1, 2]);
        // A host node cannot be disabled.
        assert_eq!(p.cuGraphNodeSetEnabled(exec, a, 0), CUresult::CUDA_ERROR_INVALID_VALUE);

        // The 10.2 update: the same graph updates; one with another node type is refused.
        let (mut node, mut result) = (std::ptr::null_mut(), CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR);
        ok(p.cuGraphExecUpdate_v10020(exec, g, &mut node, &mut result));
        assert_eq!(result, CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS);
        let other = new_graph(&d);
        let mut prev: Vec<CUgraphNode> = Vec::new();
        for _ in 0..3 {
            let mut n = std::ptr::null_mut();
            ok(p.cuGraphAddEmptyNode(&mut n, other, prev.as_ptr(), prev.len()));
            prev = vec![n];
        }
        let st = p.cuGraphExecUpdate_v10020(exec, other, &mut node, &mut result);
        assert_eq!(st, CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
        assert_eq!(result, CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
        assert!(!node.is_null());

        ok(p.cuGraphRemoveDependencies_v10000(g, &c, &a, 1));
        assert_eq!(p.cuGraphRemoveDependencies_v10000(g, &c, &a, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuGraphExecDestroy(exec));
        ok(p.cuGraphDestroy(other));
        ok(p.cuGraphDestroy(g));
    }
}

#[test]
fn conditional_handles_and_nodes() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let g = new_graph(&d);
    // SAFETY (all calls below): live graph and context, valid out-pointers and parameters.
    unsafe {
        let mut h = 0;
        assert_eq!(p.cuGraphConditionalHandleCreate(&mut h, g, ctx, 0, 2), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuGraphConditionalHandleCreate(&mut h, g, ctx, 3, CU_GRAPH_COND_ASSIGN_DEFAULT));
        let mut params =
            CUgraphNodeParams { type_: CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL, ..Default::default() };
        params.__bindgen_anon_1.conditional = CUDA_CONDITIONAL_NODE_PARAMS {
            handle: h,
            type_: CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_SWITCH,
            size: 4,
            phGraph_out: std::ptr::null_mut(),
            ctx,
        };
        let mut n = std::ptr::null_mut();
        ok(p.cuGraphAddNode(&mut n, g, std::ptr::null(), std::ptr::null(), 0, &mut params));
        let bodies = std::slice::from_raw_parts(params.__bindgen_anon_1.conditional.phGraph_out, 4).to_vec();
        // Body 3 (the default value) runs: its host node notes 30.
        for (i, b) in bodies.iter().enumerate() {
            host_with(&d, *b, &[], 10 * i, note_body);
        }
        let mut t = CUgraphNodeType(99);
        ok(p.cuGraphNodeGetType(n, &mut t));
        assert_eq!(t, CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL);
        let mut copy = std::ptr::null_mut();
        assert_eq!(p.cuGraphClone(&mut copy, g), CUresult::CUDA_ERROR_NOT_SUPPORTED);
        let mut exec = std::ptr::null_mut();
        ok(p.cuGraphInstantiateWithFlags(&mut exec, g, 0));
        ok(p.cuGraphLaunch(exec, std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
        assert_eq!(*BODIES.lock().unwrap(), [30]);
        ok(p.cuGraphDestroy(g));
        ok(p.cuGraphExecDestroy(exec));
    }
}
