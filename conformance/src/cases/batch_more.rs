//! Batch memory operation graph nodes, `cuMemMapArrayAsync` on a non-sparse array, and
//! `cuGreenCtxRecordEvent`/`cuGreenCtxWaitEvent` (see `batch_ops.rs`).

use cudrv::call;
use cudrv::sys::*;

use super::{alloc, case, made, step, stream, with, Case, Env, Out};

/// 64 zeroed bytes of device memory.
fn zeroed(e: &Env) -> Result<CUdeviceptr, Out> {
    let d = alloc(e, 64)?;
    // SAFETY: 64 bytes of a live allocation.
    made("cuMemsetD8", unsafe { e.p.cuMemsetD8(d, 0, 64) }, d)
}

fn read_u32(e: &Env, d: CUdeviceptr) -> String {
    let mut v = 0u32;
    // SAFETY: 4 bytes of device memory into a u32.
    match unsafe { e.p.cuMemcpyDtoH((&raw mut v).cast(), d, 4) } {
        CUresult::CUDA_SUCCESS => v.to_string(),
        st => st.to_string(),
    }
}

fn write_op(addr: CUdeviceptr, value: u32) -> CUstreamBatchMemOpParams {
    let mut op = CUstreamBatchMemOpParams::default();
    op.writeValue.operation = CUstreamBatchMemOpType::CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = addr;
    op.writeValue.__bindgen_anon_1.value = value;
    op
}

fn wait_op(addr: CUdeviceptr, value: u32) -> CUstreamBatchMemOpParams {
    let mut op = CUstreamBatchMemOpParams::default();
    op.waitValue.operation = CUstreamBatchMemOpType::CU_STREAM_MEM_OP_WAIT_VALUE_32;
    op.waitValue.address = addr;
    op.waitValue.__bindgen_anon_1.value = value;
    op.waitValue.flags = CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ.0;
    op
}

fn params(e: &Env, ops: &mut [CUstreamBatchMemOpParams]) -> CUDA_BATCH_MEM_OP_NODE_PARAMS {
    CUDA_BATCH_MEM_OP_NODE_PARAMS { ctx: e.ctx, count: ops.len() as u32, paramArray: ops.as_mut_ptr(), flags: 0 }
}

fn graph(e: &Env) -> Result<CUgraph, Out> {
    let mut g = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuGraphCreate", unsafe { e.p.cuGraphCreate(&mut g, 0) }, g)
}

/// Adds a node of `p` to a new graph; the status and the node.
fn add(e: &Env, p: &CUDA_BATCH_MEM_OP_NODE_PARAMS) -> Result<(CUresult, CUgraph, CUgraphNode), Out> {
    let g = graph(e)?;
    let mut n = std::ptr::null_mut();
    // SAFETY: valid pointers.
    let st = unsafe { e.p.cuGraphAddBatchMemOpNode(&mut n, g, std::ptr::null(), 0, p) };
    Ok((st, g, n))
}

/// Instantiates and launches `g` on a fresh stream, then synchronises.
fn launch(e: &Env, g: CUgraph) -> Result<CUgraphExec, Out> {
    let mut x = std::ptr::null_mut();
    // SAFETY: valid pointers; a live graph.
    made("cuGraphInstantiate", unsafe { e.p.cuGraphInstantiate(&mut x, g, 0) }, ())?;
    relaunch(e, x)?;
    Ok(x)
}

fn relaunch(e: &Env, x: CUgraphExec) -> Result<(), Out> {
    let s = stream(e)?;
    // SAFETY: a live exec and stream.
    made("cuGraphLaunch", unsafe { e.p.cuGraphLaunch(x, s) }, ())?;
    // SAFETY: a live stream.
    made("cuStreamSynchronize", unsafe { e.p.cuStreamSynchronize(s) }, ())
}

/// Adds a node of one op made by `f` (device memory `d`), with `change` applied to the
/// parameters; the status of the add.
fn add_with(e: &Env, change: fn(&mut CUDA_BATCH_MEM_OP_NODE_PARAMS)) -> Out {
    let d = with!(zeroed(e));
    let mut ops = [write_op(d, 7)];
    let mut p = params(e, &mut ops);
    change(&mut p);
    let (st, _, _) = with!(add(e, &p));
    Out::of(st)
}

const ADD: &[cudrv::Call] = &[call::cuGraphAddBatchMemOpNode];

fn memop_cases() -> Vec<Case> {
    vec![
        case!("graph_memop.write_at_launch", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7), write_op(d + 4, 8)];
            let (st, g, _) = with!(add(e, &params(e, &mut ops)));
            let before = read_u32(e, d);
            with!(launch(e, g));
            Out::of(st).eq("before_launch", before).eq("first", read_u32(e, d)).eq("second", read_u32(e, d + 4))
        }),
        case!("graph_memop.wait_then_write", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [wait_op(d, 0), write_op(d + 4, 5)];
            let (st, g, _) = with!(add(e, &params(e, &mut ops)));
            with!(launch(e, g));
            Out::of(st).eq("second", read_u32(e, d + 4))
        }),
        case!("graph_memop.get_params", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, _, n) = with!(add(e, &params(e, &mut ops)));
            let mut out = CUDA_BATCH_MEM_OP_NODE_PARAMS::default();
            let st = e.p.cuGraphBatchMemOpNodeGetParams(n, &mut out);
            let own = !out.paramArray.is_null() && out.paramArray != ops.as_mut_ptr();
            let value = if out.paramArray.is_null() { 0 } else { (*out.paramArray).writeValue.__bindgen_anon_1.value };
            Out::of(st)
                .eq("count", out.count)
                .eq("flags", out.flags)
                .eq("same_ctx", out.ctx == e.ctx)
                .eq("array_is_the_nodes", own)
                .eq("value", value)
        }),
        case!("graph_memop.get_params_null_out", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, _, n) = with!(add(e, &params(e, &mut ops)));
            Out::of(e.p.cuGraphBatchMemOpNodeGetParams(n, std::ptr::null_mut()))
        }),
        case!("graph_memop.get_params_of_empty_node", Ctx, |e| {
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            step!(e.p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0));
            let mut out = CUDA_BATCH_MEM_OP_NODE_PARAMS::default();
            Out::of(e.p.cuGraphBatchMemOpNodeGetParams(n, &mut out))
        }),
        case!("graph_memop.node_type", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, _, n) = with!(add(e, &params(e, &mut ops)));
            let mut t = CUgraphNodeType(99);
            Out::of(e.p.cuGraphNodeGetType(n, &mut t)).eq("type", t.0)
        }),
        case!("graph_memop.set_params", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, g, n) = with!(add(e, &params(e, &mut ops)));
            let mut again = [write_op(d, 9)];
            let st = e.p.cuGraphBatchMemOpNodeSetParams(n, &params(e, &mut again));
            with!(launch(e, g));
            Out::of(st).eq("value", read_u32(e, d))
        }),
        case!("graph_memop.exec_set_value", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, g, n) = with!(add(e, &params(e, &mut ops)));
            let x = with!(launch(e, g));
            let mut again = [write_op(d + 4, 9)];
            let st = e.p.cuGraphExecBatchMemOpNodeSetParams(x, n, &params(e, &mut again));
            with!(relaunch(e, x));
            Out::of(st).eq("first", read_u32(e, d)).eq("second", read_u32(e, d + 4))
        }),
        case!("graph_memop.exec_set_other_type", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, g, n) = with!(add(e, &params(e, &mut ops)));
            let x = with!(launch(e, g));
            let mut again = [wait_op(d, 7)];
            Out::of(e.p.cuGraphExecBatchMemOpNodeSetParams(x, n, &params(e, &mut again)))
        }),
        case!("graph_memop.exec_set_other_count", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            let (_, g, n) = with!(add(e, &params(e, &mut ops)));
            let x = with!(launch(e, g));
            let mut again = [write_op(d, 1), write_op(d + 4, 2)];
            Out::of(e.p.cuGraphExecBatchMemOpNodeSetParams(x, n, &params(e, &mut again)))
        }),
        case!("graph_memop.add_null_params", Ctx, |e| {
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            Out::of(e.p.cuGraphAddBatchMemOpNode(&mut n, g, std::ptr::null(), 0, std::ptr::null()))
        }),
        case!("graph_memop.add_count_0", Ctx, since 11070 ADD, |e| { add_with(e, |p| p.count = 0) }),
        case!("graph_memop.add_flags_1", Ctx, since 11070 ADD, |e| { add_with(e, |p| p.flags = 1) }),
        case!("graph_memop.add_null_array", Ctx, since 11070 ADD, |e| { add_with(e, |p| p.paramArray = std::ptr::null_mut()) }),
        case!("graph_memop.add_null_ctx", Ctx, since 11070 ADD, |e| { add_with(e, |p| p.ctx = std::ptr::null_mut()) }),
        case!("graph_memop.add_unknown_operation", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d, 7)];
            ops[0].operation = CUstreamBatchMemOpType(99);
            let (st, _, _) = with!(add(e, &params(e, &mut ops)));
            Out::of(st)
        }),
        case!("graph_memop.add_unaligned_address", Ctx, |e| {
            let d = with!(zeroed(e));
            let mut ops = [write_op(d + 2, 7)];
            let (st, _, _) = with!(add(e, &params(e, &mut ops)));
            Out::of(st)
        }),
    ]
}

/// A map entry for `a` (device 0).
fn map_info(a: CUarray, map: bool) -> CUarrayMapInfo {
    let mut m = CUarrayMapInfo {
        resourceType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
        subresourceType: CUarraySparseSubresourceType::CU_ARRAY_SPARSE_SUBRESOURCE_TYPE_SPARSE_LEVEL,
        memOperationType: if map {
            CUmemOperationType::CU_MEM_OPERATION_TYPE_MAP
        } else {
            CUmemOperationType::CU_MEM_OPERATION_TYPE_UNMAP
        },
        memHandleType: CUmemHandleType::CU_MEM_HANDLE_TYPE_GENERIC,
        deviceBitMask: 1,
        ..Default::default()
    };
    m.resource.array = a;
    m
}

/// Maps with `change` applied to an entry for a 64 x 64 float array (not sparse).
fn map(e: &Env, change: fn(&mut CUarrayMapInfo)) -> Out {
    let mut a = std::ptr::null_mut();
    let d = CUDA_ARRAY3D_DESCRIPTOR {
        Width: 64,
        Height: 64,
        Depth: 0,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
        Flags: 0,
    };
    // SAFETY: a valid out-pointer and descriptor.
    step!(unsafe { e.p.cuArray3DCreate(&mut a, &d) });
    let s = with!(stream(e));
    let mut m = map_info(a, false);
    change(&mut m);
    // SAFETY: one entry naming a live array.
    Out::of(unsafe { e.p.cuMemMapArrayAsync(&mut m, 1, s) })
}

fn map_cases() -> Vec<Case> {
    vec![
        case!("map_array.unmap_not_sparse", Ctx, |e| { map(e, |_| {}) }),
        case!("map_array.map_not_sparse_no_handle", Ctx, |e| {
            map(e, |m| m.memOperationType = CUmemOperationType::CU_MEM_OPERATION_TYPE_MAP)
        }),
        case!("map_array.bad_operation", Ctx, |e| { map(e, |m| m.memOperationType = CUmemOperationType(3)) }),
        case!("map_array.device_mask_0", Ctx, |e| { map(e, |m| m.deviceBitMask = 0) }),
        case!("map_array.device_mask_2", Ctx, |e| { map(e, |m| m.deviceBitMask = 2) }),
        case!("map_array.flags_1", Ctx, |e| { map(e, |m| m.flags = 1) }),
        case!("map_array.resource_linear", Ctx, |e| {
            map(e, |m| m.resourceType = CUresourcetype::CU_RESOURCE_TYPE_LINEAR)
        }),
        case!("map_array.count_0", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuMemMapArrayAsync(std::ptr::null_mut(), 0, s))
        }),
        case!("map_array.null_list", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuMemMapArrayAsync(std::ptr::null_mut(), 1, s))
        }),
    ]
}

/// A green context of 8 SMs on device 0, and its context.
fn green(e: &Env) -> Result<(CUgreenCtx, CUcontext), Out> {
    let mut all = CUdevResource::default();
    // SAFETY: valid pointers throughout; resources from the driver.
    unsafe {
        let t = CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM;
        made("cuDeviceGetDevResource", e.p.cuDeviceGetDevResource(e.dev, &mut all, t), ())?;
        let (mut group, mut n) = (CUdevResource::default(), 1);
        let st = e.p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), 0, 8);
        made("cuDevSmResourceSplitByCount", st, ())?;
        let mut desc: CUdevResourceDesc = std::ptr::null_mut();
        made("cuDevResourceGenerateDesc", e.p.cuDevResourceGenerateDesc(&mut desc, &mut group, 1), ())?;
        let mut g: CUgreenCtx = std::ptr::null_mut();
        let flags = CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0;
        made("cuGreenCtxCreate", e.p.cuGreenCtxCreate(&mut g, desc, e.dev, flags), ())?;
        let mut c = std::ptr::null_mut();
        made("cuCtxFromGreenCtx", e.p.cuCtxFromGreenCtx(&mut c, g), (g, c))
    }
}

fn event(e: &Env) -> Result<CUevent, Out> {
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuEventCreate", unsafe { e.p.cuEventCreate(&mut ev, 0) }, ev)
}

const RECORD: &[cudrv::Call] = &[call::cuGreenCtxRecordEvent];
const WAIT: &[cudrv::Call] = &[call::cuGreenCtxWaitEvent];
/// A record behind a green context's own stream (`cuGreenCtxStreamCreate`, 12.5).
const RECORD_ON_STREAM: &[cudrv::Call] = &[call::cuGreenCtxRecordEvent, call::cuGreenCtxStreamCreate];

fn green_cases() -> Vec<Case> {
    vec![
        case!("green_event.record_primary_event", Ctx, since 12040 RECORD, |e| {
            let (g, _) = with!(green(e));
            let ev = with!(event(e));
            let st = e.p.cuGreenCtxRecordEvent(g, ev);
            Out::of(st).eq("synchronize", e.p.cuEventSynchronize(ev)).eq("query", e.p.cuEventQuery(ev))
        }),
        case!("green_event.record_green_event_after_stream_work", Ctx, since 12050 RECORD_ON_STREAM, |e| {
            let (g, c) = with!(green(e));
            let d = with!(zeroed(e));
            step!(e.p.cuCtxPushCurrent(c));
            let ev = with!(event(e));
            let mut s = std::ptr::null_mut();
            step!(e.p.cuGreenCtxStreamCreate(&mut s, g, CUstream_flags::CU_STREAM_NON_BLOCKING.0, 0));
            step!(e.p.cuStreamWriteValue32(s, d, 3, 0));
            let st = e.p.cuGreenCtxRecordEvent(g, ev);
            let sync = e.p.cuEventSynchronize(ev);
            Out::of(st).eq("synchronize", sync).eq("value", read_u32(e, d))
        }),
        case!("green_event.record_null_green", Ctx, since 12040 RECORD, |e| {
            let ev = with!(event(e));
            Out::of(e.p.cuGreenCtxRecordEvent(std::ptr::null_mut(), ev))
        }),
        case!("green_event.record_null_event", Ctx, since 12040 RECORD, |e| {
            let (g, _) = with!(green(e));
            Out::of(e.p.cuGreenCtxRecordEvent(g, std::ptr::null_mut()))
        }),
        case!("green_event.wait_recorded_event", Ctx, since 12040 WAIT, |e| {
            let (g, _) = with!(green(e));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, std::ptr::null_mut()));
            Out::of(e.p.cuGreenCtxWaitEvent(g, ev))
        }),
        case!("green_event.wait_never_recorded", Ctx, since 12040 WAIT, |e| {
            let (g, _) = with!(green(e));
            let ev = with!(event(e));
            Out::of(e.p.cuGreenCtxWaitEvent(g, ev))
        }),
        case!("green_event.wait_null_event", Ctx, since 12040 WAIT, |e| {
            let (g, _) = with!(green(e));
            Out::of(e.p.cuGreenCtxWaitEvent(g, std::ptr::null_mut()))
        }),
        case!("green_event.wait_null_green", Ctx, since 12040 WAIT, |e| {
            let ev = with!(event(e));
            Out::of(e.p.cuGreenCtxWaitEvent(std::ptr::null_mut(), ev))
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [memop_cases(), map_cases(), green_cases()].concat()
}
