//! The generic node calls (`cuGraphAddNode`, `cuGraph[Exec]NodeSetParams`,
//! `cuGraphNodeGetParams`), `cuGraphDestroyNode`, event node events changed, an exec's
//! child graph replaced, kernel node attributes and the 13.1 ids.

mod common;

use std::ffi::CString;

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::{Driver, P};

type T = CUgraphNodeType;
const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

fn setup() -> Driver {
    let d = driver();
    new_context(&d);
    d
}

fn new_graph(p: P) -> CUgraph {
    let mut g = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuGraphCreate(&mut g, 0) });
    g
}

fn alloc(p: P, n: usize) -> CUdeviceptr {
    let mut d = 0;
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuMemAlloc(&mut d, n) });
    d
}

/// Generic memset parameters: `n` bytes of `value` at `dst`.
fn memset_params(dst: CUdeviceptr, value: u8, n: usize) -> CUgraphNodeParams {
    let mut params = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEMSET, ..Default::default() };
    params.__bindgen_anon_1.memset = CUDA_MEMSET_NODE_PARAMS_v2 {
        dst,
        value: value.into(),
        elementSize: 1,
        width: n,
        height: 1,
        ..Default::default()
    };
    params
}

fn add(p: P, g: CUgraph, deps: &[CUgraphNode], params: &mut CUgraphNodeParams) -> Result<CUgraphNode, CUresult> {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, the parameters' member that of their type.
    match unsafe { p.cuGraphAddNode(&mut n, g, deps.as_ptr(), std::ptr::null(), deps.len(), params) } {
        CUresult::CUDA_SUCCESS => Ok(n),
        e => Err(e),
    }
}

fn node_type(p: P, n: CUgraphNode) -> CUgraphNodeType {
    let mut t = CUgraphNodeType(99);
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuGraphNodeGetType(n, &mut t) });
    t
}

fn node_count(p: P, g: CUgraph) -> usize {
    let mut n = 99;
    // SAFETY: NULL nodes asks for the count.
    ok(unsafe { p.cuGraphGetNodes(g, std::ptr::null_mut(), &mut n) });
    n
}

/// Instantiates `g`, launches it on the legacy stream and waits.
fn run(p: P, g: CUgraph) -> CUgraphExec {
    let mut x = std::ptr::null_mut();
    // SAFETY: a live graph, valid out-pointer.
    unsafe {
        ok(p.cuGraphInstantiateWithFlags(&mut x, g, 0));
        launch(p, x);
    }
    x
}

fn launch(p: P, x: CUgraphExec) {
    // SAFETY: a live exec.
    unsafe {
        ok(p.cuGraphLaunch(x, std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
    }
}

fn byte(p: P, d: CUdeviceptr) -> u8 {
    let mut b = 0u8;
    // SAFETY: a one-byte buffer.
    ok(unsafe { p.cuMemcpyDtoH((&raw mut b).cast(), d, 1) });
    b
}

#[test]
fn memset_nodes_through_the_generic_calls() {
    let d = setup();
    let p = d.p();
    let x = alloc(p, 64);
    let g = new_graph(p);
    let n = add(p, g, &[], &mut memset_params(x, 4, 64)).unwrap();
    assert_eq!(node_type(p, n), T::CU_GRAPH_NODE_TYPE_MEMSET);
    let mut back = CUgraphNodeParams::default();
    // SAFETY: a live node, a valid out-pointer; the memset member for a memset node.
    unsafe {
        ok(p.cuGraphNodeGetParams(n, &mut back));
        assert_eq!(back.type_, T::CU_GRAPH_NODE_TYPE_MEMSET);
        let m = back.__bindgen_anon_1.memset;
        assert_eq!((m.dst, m.value, m.elementSize, m.width, m.height), (x, 4, 1, 64, 1));
    }
    let exec = run(p, g);
    assert_eq!(byte(p, x + 63), 4);
    // SAFETY: live handles; valid parameters.
    unsafe {
        ok(p.cuGraphNodeSetParams(n, &mut memset_params(x, 5, 64)));
        // The exec keeps what it was made with until set itself.
        launch(p, exec);
        assert_eq!(byte(p, x), 4);
        ok(p.cuGraphExecNodeSetParams(exec, n, &mut memset_params(x, 6, 64)));
        launch(p, exec);
        assert_eq!(byte(p, x), 6);
        // Another kind's parameters: refused.
        let mut empty = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EMPTY, ..Default::default() };
        assert_eq!(p.cuGraphNodeSetParams(n, &mut empty), INVALID);
        assert_eq!(p.cuGraphExecNodeSetParams(exec, n, &mut empty), INVALID);
    }
    let mut fresh = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuGraphInstantiateWithFlags(&mut fresh, g, 0) });
    launch(p, fresh);
    assert_eq!(byte(p, x), 5);
}

#[test]
fn memory_nodes_through_the_generic_calls() {
    let d = setup();
    let p = d.p();
    let g = new_graph(p);
    let mut params = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_ALLOC, ..Default::default() };
    // SAFETY: the alloc member, written before it is read.
    unsafe {
        let a = &mut params.__bindgen_anon_1.alloc;
        a.bytesize = 128;
        a.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        a.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        let n = add(p, g, &[], &mut params).unwrap();
        assert_eq!(node_type(p, n), T::CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        let dptr = params.__bindgen_anon_1.alloc.dptr;
        assert_ne!(dptr, 0);
        let mut back = CUgraphNodeParams::default();
        ok(p.cuGraphNodeGetParams(n, &mut back));
        assert_eq!((back.__bindgen_anon_1.alloc.dptr, back.__bindgen_anon_1.alloc.bytesize), (dptr, 128));
        // Allocation nodes' parameters cannot change.
        assert_eq!(p.cuGraphNodeSetParams(n, &mut params), CUresult::CUDA_ERROR_NOT_SUPPORTED);
        let set = add(p, g, &[n], &mut memset_params(dptr, 1, 128)).unwrap();
        let mut free = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_FREE, ..Default::default() };
        free.__bindgen_anon_1.free.dptr = dptr;
        let f = add(p, g, &[set], &mut free).unwrap();
        let mut back = CUgraphNodeParams::default();
        ok(p.cuGraphNodeGetParams(f, &mut back));
        assert_eq!((back.type_, back.__bindgen_anon_1.free.dptr), (T::CU_GRAPH_NODE_TYPE_MEM_FREE, dptr));
        // Twice: refused.
        assert_eq!(add(p, g, &[set], &mut free), Err(INVALID));
    }
    // A graph with memory nodes moves into a child graph node (it cannot be copied into one).
    let parent = new_graph(p);
    let mut child = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
    child.__bindgen_anon_1.graph = CUDA_CHILD_GRAPH_NODE_PARAMS {
        graph: g,
        ownership: CUgraphChildGraphNodeOwnership::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE,
    };
    assert_eq!(add(p, parent, &[], &mut child), Err(CUresult::CUDA_ERROR_NOT_SUPPORTED));
    child.__bindgen_anon_1.graph.ownership = CUgraphChildGraphNodeOwnership::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE;
    let c = add(p, parent, &[], &mut child).unwrap();
    let mut owned = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuGraphChildGraphNodeGetGraph(c, &mut owned) });
    assert_eq!(owned, g);
    // Moved once only: a graph another node owns is refused as on the H200.
    assert_eq!(add(p, new_graph(p), &[], &mut child), Err(CUresult::CUDA_ERROR_NOT_SUPPORTED));
    let x = run(p, parent);
    launch(p, x);
}

#[test]
fn destroying_a_node_removes_it_and_its_edges() {
    let d = setup();
    let p = d.p();
    let x = alloc(p, 8);
    let g = new_graph(p);
    let a = add(p, g, &[], &mut memset_params(x, 1, 8)).unwrap();
    let b = add(p, g, &[a], &mut memset_params(x, 2, 8)).unwrap();
    let c = add(p, g, &[b], &mut memset_params(x, 3, 8)).unwrap();
    // SAFETY: live nodes; valid out-pointers.
    unsafe {
        ok(p.cuGraphDestroyNode(c));
        assert_eq!(node_count(p, g), 2);
        let mut edges = 9;
        let null = std::ptr::null_mut();
        ok(p.cuGraphGetEdges(g, null, null, std::ptr::null_mut(), &mut edges));
        assert_eq!(edges, 1);
        let mut t = CUgraphNodeType(99);
        assert_eq!(p.cuGraphNodeGetType(c, &mut t), INVALID);
        assert_eq!(p.cuGraphDestroyNode(c), INVALID);
    }
    run(p, g);
    assert_eq!(byte(p, x), 2);
}

#[test]
fn event_nodes_take_another_event() {
    let d = setup();
    let p = d.p();
    let (mut e1, mut e2) = (std::ptr::null_mut(), std::ptr::null_mut());
    let g = new_graph(p);
    let (mut r, mut w) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers, live handles.
    unsafe {
        ok(p.cuEventCreate(&mut e1, 0));
        ok(p.cuEventCreate(&mut e2, 0));
        ok(p.cuGraphAddEventRecordNode(&mut r, g, std::ptr::null(), 0, e1));
        ok(p.cuGraphAddEventWaitNode(&mut w, g, &r, 1, e1));
        ok(p.cuGraphEventRecordNodeSetEvent(r, e2));
        ok(p.cuGraphEventWaitNodeSetEvent(w, e2));
        let mut back = std::ptr::null_mut();
        ok(p.cuGraphEventRecordNodeGetEvent(r, &mut back));
        assert_eq!(back, e2);
        ok(p.cuGraphEventWaitNodeGetEvent(w, &mut back));
        assert_eq!(back, e2);
        // The other kind of node.
        assert_eq!(p.cuGraphEventRecordNodeSetEvent(w, e1), INVALID);
        let x = run(p, g);
        ok(p.cuGraphExecEventRecordNodeSetEvent(x, r, e1));
        ok(p.cuGraphExecEventWaitNodeSetEvent(x, w, e1));
        assert_eq!(p.cuGraphExecEventWaitNodeSetEvent(x, r, e1), INVALID);
        launch(p, x);
        ok(p.cuEventQuery(e1));
        ok(p.cuEventDestroy(e2));
        assert_eq!(p.cuGraphEventRecordNodeSetEvent(r, e2), CUresult::CUDA_ERROR_INVALID_HANDLE);
    }
}

#[test]
fn an_exec_child_graph_takes_another_graph_of_its_shape() {
    let d = setup();
    let p = d.p();
    let x = alloc(p, 8);
    let (one, two, other) = (new_graph(p), new_graph(p), new_graph(p));
    add(p, one, &[], &mut memset_params(x, 1, 8)).unwrap();
    add(p, two, &[], &mut memset_params(x, 2, 8)).unwrap();
    let mut empty = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EMPTY, ..Default::default() };
    add(p, other, &[], &mut empty).unwrap();
    let parent = new_graph(p);
    let mut c = std::ptr::null_mut();
    // SAFETY: live graphs, valid out-pointer.
    ok(unsafe { p.cuGraphAddChildGraphNode(&mut c, parent, std::ptr::null(), 0, one) });
    let exec = run(p, parent);
    assert_eq!(byte(p, x), 1);
    // SAFETY: live handles.
    unsafe {
        ok(p.cuGraphExecChildGraphNodeSetParams(exec, c, two));
        launch(p, exec);
        assert_eq!(byte(p, x), 2);
        // A graph of another shape (H200: GRAPH_EXEC_UPDATE_FAILURE).
        assert_eq!(
            p.cuGraphExecChildGraphNodeSetParams(exec, c, other),
            CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
        );
        let mut child = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
        child.__bindgen_anon_1.graph.graph = one;
        ok(p.cuGraphExecNodeSetParams(exec, c, &mut child));
        launch(p, exec);
        assert_eq!(byte(p, x), 1);
    }
}

#[test]
fn kernel_node_attributes_are_kept_and_copied() {
    let d = setup();
    let p = d.p();
    let ptx = CString::new(include_str!("../../examples/kernels/scale_f32.ptx")).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    let x = alloc(p, 1024);
    let g = new_graph(p);
    // SAFETY: a NUL-terminated image; valid out-pointers; arguments matching scale_f32.
    unsafe {
        ok(p.cuModuleLoadData(&mut m, ptx.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr()));
        let (mut px, mut s, mut n) = (x, 2.0f32, 256i32);
        let mut args: [*mut std::ffi::c_void; 3] = [(&raw mut px).cast(), (&raw mut s).cast(), (&raw mut n).cast()];
        let mut params = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_KERNEL, ..Default::default() };
        params.__bindgen_anon_1.kernel = CUDA_KERNEL_NODE_PARAMS_v3 {
            func: f,
            gridDimX: 1,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: 256,
            blockDimY: 1,
            blockDimZ: 1,
            kernelParams: args.as_mut_ptr(),
            ..Default::default()
        };
        let k1 = add(p, g, &[], &mut params).unwrap();
        let k2 = add(p, g, &[k1], &mut params).unwrap();
        let mut back = CUgraphNodeParams::default();
        ok(p.cuGraphNodeGetParams(k1, &mut back));
        assert_eq!((back.__bindgen_anon_1.kernel.func, back.__bindgen_anon_1.kernel.blockDimX), (f, 256));
        type A = CUlaunchAttributeID;
        let mut v = CUkernelNodeAttrValue::default();
        ok(p.cuGraphKernelNodeGetAttribute(k1, A::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut v));
        assert_eq!(v.priority, 0);
        v.priority = 3;
        ok(p.cuGraphKernelNodeSetAttribute(k1, A::CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
        let mut back = CUkernelNodeAttrValue::default();
        ok(p.cuGraphKernelNodeGetAttribute(k1, A::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut back));
        assert_eq!(back.priority, 3);
        ok(p.cuGraphKernelNodeCopyAttributes(k2, k1));
        let mut copied = CUkernelNodeAttrValue::default();
        ok(p.cuGraphKernelNodeGetAttribute(k2, A::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut copied));
        assert_eq!(copied.priority, 3);
        // Not a kernel node's attribute; not a kernel node.
        assert_eq!(p.cuGraphKernelNodeGetAttribute(k1, A::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &mut v), INVALID);
        let e = add(p, g, &[], &mut memset_params(x, 0, 4)).unwrap();
        assert_eq!(p.cuGraphKernelNodeGetAttribute(e, A::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut v), INVALID);
    }
}

#[test]
fn graphs_execs_and_nodes_have_ids() {
    let d = setup();
    let p = d.p();
    let (g, h) = (new_graph(p), new_graph(p));
    let mut empty = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EMPTY, ..Default::default() };
    let a = add(p, g, &[], &mut empty).unwrap();
    let b = add(p, g, &[a], &mut empty).unwrap();
    let x = run(p, g);
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        let (mut ig, mut ih, mut ix, mut again) = (0, 0, 0, 0);
        ok(p.cuGraphGetId(g, &mut ig));
        ok(p.cuGraphGetId(h, &mut ih));
        ok(p.cuGraphGetId(g, &mut again));
        ok(p.cuGraphExecGetId(x, &mut ix));
        assert!(ig != 0 && ih != 0 && ig != ih && again == ig && ix != 0);
        let (mut la, mut lb, mut tools) = (9, 9, 0);
        ok(p.cuGraphNodeGetLocalId(a, &mut la));
        ok(p.cuGraphNodeGetLocalId(b, &mut lb));
        assert_eq!((la, lb), (0, 1));
        ok(p.cuGraphNodeGetToolsId(b, &mut tools));
        assert_eq!(tools, (u64::from(ig) << 32) | 1);
        let mut owner = std::ptr::null_mut();
        ok(p.cuGraphNodeGetContainingGraph(b, &mut owner));
        assert_eq!(owner, g);
        assert_eq!(p.cuGraphGetId(g, std::ptr::null_mut()), INVALID);
        ok(p.cuGraphDestroy(h));
        assert_eq!(p.cuGraphGetId(h, &mut ih), INVALID);
    }
}
