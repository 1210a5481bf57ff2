//! The generic graph node calls and the per-node calls the stand-in gained in issue 29:
//! `cuGraphAddNode`, `cuGraph[Exec]NodeSetParams`, `cuGraphNodeGetParams` (13.2),
//! `cuGraphDestroyNode`, event node events changed, `cuGraphExecChildGraphNodeSetParams`,
//! kernel node attributes, and the ids of 13.1. Pending: not recorded on the H200 yet.

use super::graph::{graph, instantiate, node_count};
use super::{alloc, case, made, number, sentinel, step, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;
use cudrv::{call, Call};

type T = CUgraphNodeType;
const IDS: &[Call] = &[call::cuGraphGetId, call::cuGraphExecGetId, call::cuGraphNodeGetLocalId];
const GET_PARAMS: &[Call] = &[call::cuGraphNodeGetParams];

/// Generic memset parameters: `n` bytes of `value` at `dst`.
fn memset(dst: CUdeviceptr, value: u8, n: usize) -> CUgraphNodeParams {
    let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEMSET, ..Default::default() };
    p.__bindgen_anon_1.memset = CUDA_MEMSET_NODE_PARAMS_v2 {
        dst,
        value: value.into(),
        elementSize: 1,
        width: n,
        height: 1,
        ..Default::default()
    };
    p
}

/// Adds a node of `p` to `g` after `deps` (`cuGraphAddNode`, 12.3 form): the status and
/// the node.
fn add(e: &Env, g: CUgraph, deps: &[CUgraphNode], p: &mut CUgraphNodeParams) -> (CUresult, CUgraphNode) {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, parameters whose member is that of their type.
    let st = unsafe { e.p.cuGraphAddNode(&mut n, g, deps.as_ptr(), std::ptr::null(), deps.len(), p) };
    (st, n)
}

/// Adds a node of `p`, as a setup step.
fn added(e: &Env, g: CUgraph, deps: &[CUgraphNode], p: &mut CUgraphNodeParams) -> Result<CUgraphNode, Out> {
    let (st, n) = add(e, g, deps, p);
    made("cuGraphAddNode", st, n)
}

/// The type of node `n`, or the status.
fn node_type(e: &Env, n: CUgraphNode) -> String {
    let mut t = CUgraphNodeType(77);
    // SAFETY: a valid out-pointer.
    match unsafe { e.p.cuGraphNodeGetType(n, &mut t) } {
        CUresult::CUDA_SUCCESS => t.0.to_string(),
        st => st.to_string(),
    }
}

/// Launches `x` on the legacy stream and synchronises the context: the first failure.
fn run(e: &Env, x: CUgraphExec) -> CUresult {
    // SAFETY: a live exec; the legacy stream; a current context.
    unsafe {
        match e.p.cuGraphLaunch(x, std::ptr::null_mut()) {
            CUresult::CUDA_SUCCESS => e.p.cuCtxSynchronize(),
            st => st,
        }
    }
}

/// One byte of device memory, or the status.
fn byte_at(e: &Env, d: CUdeviceptr) -> String {
    let mut b = 0u8;
    // SAFETY: a one-byte buffer.
    match unsafe { e.p.cuMemcpyDtoH((&raw mut b).cast(), d, 1) } {
        CUresult::CUDA_SUCCESS => b.to_string(),
        st => st.to_string(),
    }
}

/// A fresh event.
fn event(e: &Env) -> Result<CUevent, Out> {
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuEventCreate", unsafe { e.p.cuEventCreate(&mut ev, 0) }, ev)
}

/// A graph of one memset node (`n` bytes of `value` at `d`) added by `cuGraphAddNode`.
fn memset_graph(e: &Env, d: CUdeviceptr, value: u8) -> Result<(CUgraph, CUgraphNode), Out> {
    let g = graph(e)?;
    let n = added(e, g, &[], &mut memset(d, value, 16))?;
    Ok((g, n))
}

fn add_cases() -> Vec<Case> {
    vec![
        case!("graph_nodes.add_memset", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let g = with!(graph(e));
            let (st, n) = add(e, g, &[], &mut memset(d, 3, 16));
            let x = with!(instantiate(e, g));
            let launched = run(e, x);
            Out::of(st).eq("type", node_type(e, n)).eq("launch", launched).eq("byte", byte_at(e, d + 15))
        }),
        case!("graph_nodes.add_memset_misaligned", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let g = with!(graph(e));
            let mut p = memset(d + 1, 3, 4);
            p.__bindgen_anon_1.memset.elementSize = 4;
            Out::of(add(e, g, &[], &mut p).0)
        }),
        case!("graph_nodes.add_host", Ctx, |e| {
            unsafe extern "C" fn nothing(_: *mut std::ffi::c_void) {}
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_HOST, ..Default::default() };
            p.__bindgen_anon_1.host.fn_ = Some(nothing);
            let (st, n) = add(e, g, &[], &mut p);
            Out::of(st).eq("type", node_type(e, n))
        }),
        case!("graph_nodes.add_event_record", Ctx, |e| {
            let ev = with!(event(e));
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EVENT_RECORD, ..Default::default() };
            p.__bindgen_anon_1.eventRecord.event = ev;
            let (st, n) = add(e, g, &[], &mut p);
            Out::of(st).eq("type", node_type(e, n))
        }),
        case!("graph_nodes.add_child_clone", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (child, _) = with!(memset_graph(e, d, 1));
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
            p.__bindgen_anon_1.graph.graph = child;
            let (st, n) = add(e, g, &[], &mut p);
            let mut owned = std::ptr::null_mut();
            let get = e.p.cuGraphChildGraphNodeGetGraph(n, &mut owned);
            Out::of(st).eq("type", node_type(e, n)).eq("get", get).eq("same_graph", owned == child)
        }),
        case!("graph_nodes.add_child_move", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (child, _) = with!(memset_graph(e, d, 1));
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
            p.__bindgen_anon_1.graph = CUDA_CHILD_GRAPH_NODE_PARAMS {
                graph: child,
                ownership: CUgraphChildGraphNodeOwnership::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE,
            };
            let (st, n) = add(e, g, &[], &mut p);
            let mut owned = std::ptr::null_mut();
            let get = e.p.cuGraphChildGraphNodeGetGraph(n, &mut owned);
            Out::of(st).eq("get", get).eq("same_graph", owned == child)
        }),
        case!("graph_nodes.add_child_move_twice", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (child, _) = with!(memset_graph(e, d, 1));
            let (g, h) = (with!(graph(e)), with!(graph(e)));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
            p.__bindgen_anon_1.graph = CUDA_CHILD_GRAPH_NODE_PARAMS {
                graph: child,
                ownership: CUgraphChildGraphNodeOwnership::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE,
            };
            with!(added(e, g, &[], &mut p));
            Out::of(add(e, h, &[], &mut p).0)
        }),
        case!("graph_nodes.add_child_move_memory_nodes", Ctx, |e| {
            let child = with!(graph(e));
            let mut a = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_ALLOC, ..Default::default() };
            a.__bindgen_anon_1.alloc.bytesize = 64;
            a.__bindgen_anon_1.alloc.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            a.__bindgen_anon_1.alloc.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            let an = with!(added(e, child, &[], &mut a));
            let mut f = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_FREE, ..Default::default() };
            f.__bindgen_anon_1.free.dptr = a.__bindgen_anon_1.alloc.dptr;
            with!(added(e, child, &[an], &mut f));
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_GRAPH, ..Default::default() };
            p.__bindgen_anon_1.graph = CUDA_CHILD_GRAPH_NODE_PARAMS {
                graph: child,
                ownership: CUgraphChildGraphNodeOwnership::CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE,
            };
            let (st, _) = add(e, g, &[], &mut p);
            step!(st);
            let x = with!(instantiate(e, g));
            let first = run(e, x);
            Out::of(st).eq("first", first).eq("second", run(e, x))
        }),
        case!("graph_nodes.add_mem_alloc_and_free", Ctx, |e| {
            let g = with!(graph(e));
            let mut a = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_ALLOC, ..Default::default() };
            a.__bindgen_anon_1.alloc.bytesize = 64;
            a.__bindgen_anon_1.alloc.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            a.__bindgen_anon_1.alloc.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            let (st, an) = add(e, g, &[], &mut a);
            let dptr = a.__bindgen_anon_1.alloc.dptr;
            let mut f = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_FREE, ..Default::default() };
            f.__bindgen_anon_1.free.dptr = dptr;
            let (free, fnode) = add(e, g, &[an], &mut f);
            Out::of(st)
                .eq("dptr_set", dptr != 0)
                .eq("type", node_type(e, an))
                .eq("free", free)
                .eq("free_type", node_type(e, fnode))
        }),
        case!("graph_nodes.add_unknown_type", Ctx, |e| {
            let g = with!(graph(e));
            let mut p = CUgraphNodeParams { type_: CUgraphNodeType(99), ..Default::default() };
            Out::of(add(e, g, &[], &mut p).0)
        }),
    ]
}

fn set_cases() -> Vec<Case> {
    vec![
        case!("graph_nodes.set_memset", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (g, n) = with!(memset_graph(e, d, 1));
            let st = e.p.cuGraphNodeSetParams(n, &mut memset(d, 2, 16));
            let x = with!(instantiate(e, g));
            let launched = run(e, x);
            Out::of(st).eq("launch", launched).eq("byte", byte_at(e, d))
        }),
        case!("graph_nodes.set_other_type", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (_, n) = with!(memset_graph(e, d, 1));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EMPTY, ..Default::default() };
            Out::of(e.p.cuGraphNodeSetParams(n, &mut p))
        }),
        case!("graph_nodes.set_mem_alloc", Ctx, |e| {
            let g = with!(graph(e));
            let mut a = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_MEM_ALLOC, ..Default::default() };
            a.__bindgen_anon_1.alloc.bytesize = 64;
            a.__bindgen_anon_1.alloc.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            a.__bindgen_anon_1.alloc.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            let n = with!(added(e, g, &[], &mut a));
            Out::of(e.p.cuGraphNodeSetParams(n, &mut a))
        }),
        case!("graph_nodes.exec_set_memset", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (g, n) = with!(memset_graph(e, d, 1));
            let x = with!(instantiate(e, g));
            let st = e.p.cuGraphExecNodeSetParams(x, n, &mut memset(d, 9, 16));
            let launched = run(e, x);
            Out::of(st).eq("launch", launched).eq("byte", byte_at(e, d))
        }),
        case!("graph_nodes.exec_set_other_type", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (g, n) = with!(memset_graph(e, d, 1));
            let x = with!(instantiate(e, g));
            let mut p = CUgraphNodeParams { type_: T::CU_GRAPH_NODE_TYPE_EMPTY, ..Default::default() };
            Out::of(e.p.cuGraphExecNodeSetParams(x, n, &mut p))
        }),
        case!("graph_nodes.get_params_memset", Ctx, since 13020 GET_PARAMS, |e| {
            let d = with!(alloc(e, 16));
            let (_, n) = with!(memset_graph(e, d, 7));
            let mut p = CUgraphNodeParams::default();
            let st = e.p.cuGraphNodeGetParams(n, &mut p);
            let m = p.__bindgen_anon_1.memset;
            Out::of(st)
                .eq("type", p.type_.0)
                .eq("same_dst", m.dst == d)
                .eq("value", m.value)
                .eq("element_size", m.elementSize)
                .eq("width", m.width)
                .eq("height", m.height)
        }),
        case!("graph_nodes.destroy_node", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (g, a) = with!(memset_graph(e, d, 1));
            let b = with!(added(e, g, &[a], &mut memset(d, 2, 16)));
            let st = e.p.cuGraphDestroyNode(b);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("nodes", nodes).eq("type_after", node_type(e, b))
        }),
        case!("graph_nodes.destroy_node_twice", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (_, a) = with!(memset_graph(e, d, 1));
            step!(e.p.cuGraphDestroyNode(a));
            Out::of(e.p.cuGraphDestroyNode(a))
        }),
        case!("graph_nodes.destroy_node_then_instantiate", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (g, a) = with!(memset_graph(e, d, 1));
            let b = with!(added(e, g, &[a], &mut memset(d, 2, 16)));
            step!(e.p.cuGraphDestroyNode(b));
            let x = with!(instantiate(e, g));
            Out::of(run(e, x)).eq("byte", byte_at(e, d))
        }),
    ]
}

fn node_op_cases() -> Vec<Case> {
    vec![
        case!("graph_nodes.event_record_set_event", Ctx, |e| {
            let (e1, e2) = (with!(event(e)), with!(event(e)));
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventRecordNode(&mut n, g, std::ptr::null(), 0, e1));
            let st = e.p.cuGraphEventRecordNodeSetEvent(n, e2);
            let mut back = std::ptr::null_mut();
            step!(e.p.cuGraphEventRecordNodeGetEvent(n, &mut back));
            Out::of(st).eq("is_new", back == e2)
        }),
        case!("graph_nodes.event_wait_set_event_on_record_node", Ctx, |e| {
            let e1 = with!(event(e));
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventRecordNode(&mut n, g, std::ptr::null(), 0, e1));
            Out::of(e.p.cuGraphEventWaitNodeSetEvent(n, e1))
        }),
        case!("graph_nodes.event_set_destroyed_event", Ctx, |e| {
            let (e1, e2) = (with!(event(e)), with!(event(e)));
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventWaitNode(&mut n, g, std::ptr::null(), 0, e1));
            step!(e.p.cuEventDestroy(e2));
            Out::of(e.p.cuGraphEventWaitNodeSetEvent(n, e2))
        }),
        case!("graph_nodes.exec_event_record_set_event", Ctx, |e| {
            let (e1, e2) = (with!(event(e)), with!(event(e)));
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventRecordNode(&mut n, g, std::ptr::null(), 0, e1));
            let x = with!(instantiate(e, g));
            let st = e.p.cuGraphExecEventRecordNodeSetEvent(x, n, e2);
            let launched = run(e, x);
            Out::of(st).eq("launch", launched).eq("query_new", e.p.cuEventQuery(e2))
        }),
        case!("graph_nodes.exec_event_wait_set_event", Ctx, |e| {
            let (e1, e2) = (with!(event(e)), with!(event(e)));
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEventWaitNode(&mut n, g, std::ptr::null(), 0, e1));
            let x = with!(instantiate(e, g));
            Out::of(e.p.cuGraphExecEventWaitNodeSetEvent(x, n, e2)).eq("launch", run(e, x))
        }),
        case!("graph_nodes.exec_child_set_params", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let ((one, _), (two, _)) = (with!(memset_graph(e, d, 1)), with!(memset_graph(e, d, 2)));
            let parent = with!(graph(e));
            let mut c = std::ptr::null_mut();
            step!(e.p.cuGraphAddChildGraphNode(&mut c, parent, std::ptr::null(), 0, one));
            let x = with!(instantiate(e, parent));
            let st = e.p.cuGraphExecChildGraphNodeSetParams(x, c, two);
            let launched = run(e, x);
            Out::of(st).eq("launch", launched).eq("byte", byte_at(e, d))
        }),
        case!("graph_nodes.exec_child_set_params_other_shape", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (one, _) = with!(memset_graph(e, d, 1));
            let other = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEmptyNode(&mut n, other, std::ptr::null(), 0));
            let parent = with!(graph(e));
            let mut c = std::ptr::null_mut();
            step!(e.p.cuGraphAddChildGraphNode(&mut c, parent, std::ptr::null(), 0, one));
            let x = with!(instantiate(e, parent));
            Out::of(e.p.cuGraphExecChildGraphNodeSetParams(x, c, other))
        }),
        case!("graph_nodes.kernel_attribute_of_memset_node", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let (_, n) = with!(memset_graph(e, d, 1));
            let mut v = CUkernelNodeAttrValue::default();
            Out::of(e.p.cuGraphKernelNodeGetAttribute(n, CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut v))
        }),
    ]
}

fn id_cases() -> Vec<Case> {
    vec![
        case!("graph_nodes.graph_ids", Ctx, since 13010 IDS, |e| {
            let (g, h) = (with!(graph(e)), with!(graph(e)));
            let (mut a, mut b, mut again) = (UNTOUCHED as u32, UNTOUCHED as u32, 0);
            let st = e.p.cuGraphGetId(g, &mut a);
            step!(e.p.cuGraphGetId(h, &mut b));
            step!(e.p.cuGraphGetId(g, &mut again));
            Out::of(st).eq("nonzero", a != 0).eq("distinct", a != b).eq("stable", a == again).info("id", a)
        }),
        case!("graph_nodes.exec_id", Ctx, since 13010 IDS, |e| {
            let g = with!(graph(e));
            let x = with!(instantiate(e, g));
            let mut id = UNTOUCHED as u32;
            Out::of(e.p.cuGraphExecGetId(x, &mut id)).info("id", id)
        }),
        case!("graph_nodes.node_ids", Ctx, since 13010 IDS, |e| {
            let g = with!(graph(e));
            let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuGraphAddEmptyNode(&mut a, g, std::ptr::null(), 0));
            step!(e.p.cuGraphAddEmptyNode(&mut b, g, &a, 1));
            let (mut la, mut lb, mut tools, mut gid) = (UNTOUCHED as u32, UNTOUCHED as u32, UNTOUCHED, 0);
            let st = e.p.cuGraphNodeGetLocalId(a, &mut la);
            step!(e.p.cuGraphNodeGetLocalId(b, &mut lb));
            let tst = e.p.cuGraphNodeGetToolsId(b, &mut tools);
            step!(e.p.cuGraphGetId(g, &mut gid));
            let mut owner: CUgraph = sentinel();
            let cst = e.p.cuGraphNodeGetContainingGraph(b, &mut owner);
            Out::of(st)
                .eq("local_a", la)
                .eq("local_b", lb)
                .eq("tools", tst)
                .eq("tools_is_graph_and_local", tools == (u64::from(gid) << 32 | u64::from(lb)))
                .info("tools_id", number(tools))
                .eq("containing", cst)
                .eq("containing_is_graph", owner == g)
        }),
        case!("graph_nodes.graph_id_null", Ctx, since 13010 IDS, |e| {
            let g = with!(graph(e));
            Out::of(e.p.cuGraphGetId(g, std::ptr::null_mut()))
        }),
    ]
}

/// Every generic node case.
pub fn cases() -> Vec<Case> {
    [add_cases(), set_cases(), node_op_cases(), id_cases()].concat()
}
