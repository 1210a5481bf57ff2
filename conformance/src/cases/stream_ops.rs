//! Issue 29 items 2 to 4: captured events (`cuEventQuery`, `cuEventSynchronize`,
//! `cuEventElapsedTime` of an event recorded in a capture), the instantiate flags a driver
//! refuses, `cuStreamUpdateCaptureDependencies`, `cuEventRecordWithFlags`,
//! `cuCtxWaitEvent`, `cuStreamCopyAttributes`, and the stream memory operations
//! (`cuStreamWriteValue*`, `cuStreamWaitValue*`, `cuStreamBatchMemOp`).

use cudrv::call;
use cudrv::sys::*;

use super::graph::{graph, node_count};
use super::{alloc, case, made, other_context, sentinel, step, stream, with, Case, Env, Out};

const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
const THREAD_LOCAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
const ADD: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_ADD_CAPTURE_DEPENDENCIES.0;
const SET: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_SET_CAPTURE_DEPENDENCIES.0;
const EXTERNAL: u32 = CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL.0;
const AUTO_FREE: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
const UPLOAD: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD.0 as u64;
const DEVICE_LAUNCH: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;
const PRIORITY: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64;

/// A fresh stream capturing in `mode`.
fn capturing(e: &Env, mode: CUstreamCaptureMode) -> Result<CUstream, Out> {
    let s = stream(e)?;
    // SAFETY: a live stream.
    made("cuStreamBeginCapture", unsafe { e.p.cuStreamBeginCapture(s, mode) }, s)
}

/// A fresh event (flags 0).
fn event(e: &Env) -> Result<CUevent, Out> {
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuEventCreate", unsafe { e.p.cuEventCreate(&mut ev, 0) }, ev)
}

/// The capture status of `s` (0 none, 1 active, 2 invalidated), or the call's error.
fn capture_status(e: &Env, s: CUstream) -> String {
    let mut c = CUstreamCaptureStatus(77);
    // SAFETY: a valid out-pointer.
    match unsafe { e.p.cuStreamIsCapturing(s, &mut c) } {
        CUresult::CUDA_SUCCESS => c.0.to_string(),
        st => st.to_string(),
    }
}

/// Ends the capture of `s`: its status, and the graph (null if none).
fn end(e: &Env, s: CUstream) -> (CUresult, CUgraph) {
    let mut g = std::ptr::null_mut();
    // SAFETY: a live stream and a valid out-pointer.
    let st = unsafe { e.p.cuStreamEndCapture(s, &mut g) };
    (st, g)
}

/// The capture graph of `s` and its number of dependencies.
fn capture_graph(e: &Env, s: CUstream) -> Result<(CUgraph, usize), Out> {
    let mut status = CUstreamCaptureStatus(77);
    let (mut g, mut n) = (std::ptr::null_mut(), 0usize);
    let (id, deps, edges) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers (NULL for the ones not asked for).
    let st = unsafe { e.p.cuStreamGetCaptureInfo(s, &mut status, id, &mut g, deps, edges, &mut n) };
    made("cuStreamGetCaptureInfo", st, (g, n))
}

/// The number of capture dependencies of `s`.
fn dep_count(e: &Env, s: CUstream) -> String {
    match capture_graph(e, s) {
        Ok((_, n)) => n.to_string(),
        Err(out) => out.status,
    }
}

/// An empty node added by hand to graph `g`.
fn empty_node(e: &Env, g: CUgraph) -> Result<CUgraphNode, Out> {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, no dependencies, a valid out-pointer.
    made("cuGraphAddEmptyNode", unsafe { e.p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0) }, n)
}

/// Instantiates an empty graph made by ending a capture with `flags` (as cudarc's
/// `CudaStream::end_capture(flags)` does): the instantiation's status.
fn instantiate_captured(e: &Env, flags: u64) -> Out {
    let s = with!(capturing(e, THREAD_LOCAL));
    let (st, g) = end(e, s);
    step!(st);
    let mut x: CUgraphExec = sentinel();
    // SAFETY: a live graph and a valid out-pointer.
    let st = unsafe { e.p.cuGraphInstantiateWithFlags(&mut x, g, flags) };
    Out::of(st).eq("exec", super::handle(x))
}

/// The 32-bit value at `d` (a blocking copy).
fn read_u32(e: &Env, d: CUdeviceptr) -> String {
    let mut v = 0u32;
    // SAFETY: 4 bytes of device memory into a u32.
    match unsafe { e.p.cuMemcpyDtoH((&raw mut v).cast(), d, 4) } {
        CUresult::CUDA_SUCCESS => v.to_string(),
        st => st.to_string(),
    }
}

/// The 64-bit value at `d` (a blocking copy).
fn read_u64(e: &Env, d: CUdeviceptr) -> String {
    let mut v = 0u64;
    // SAFETY: 8 bytes of device memory into a u64.
    match unsafe { e.p.cuMemcpyDtoH((&raw mut v).cast(), d, 8) } {
        CUresult::CUDA_SUCCESS => v.to_string(),
        st => st.to_string(),
    }
}

/// 64 zeroed bytes of device memory.
fn zeroed(e: &Env) -> Result<CUdeviceptr, Out> {
    let d = alloc(e, 64)?;
    // SAFETY: 64 bytes of a live allocation.
    made("cuMemsetD8", unsafe { e.p.cuMemsetD8(d, 0, 64) }, d)
}

/// A batch operation writing the 32-bit `value` at `addr`.
fn batch_write(addr: CUdeviceptr, value: u32) -> CUstreamBatchMemOpParams {
    let mut op = CUstreamBatchMemOpParams::default();
    op.writeValue.operation = CUstreamBatchMemOpType::CU_STREAM_MEM_OP_WRITE_VALUE_32;
    op.writeValue.address = addr;
    op.writeValue.__bindgen_anon_1.value = value;
    op
}

/// A batch operation waiting until the 32-bit value at `addr` equals `value`.
fn batch_wait_eq(addr: CUdeviceptr, value: u32) -> CUstreamBatchMemOpParams {
    let mut op = CUstreamBatchMemOpParams::default();
    op.waitValue.operation = CUstreamBatchMemOpType::CU_STREAM_MEM_OP_WAIT_VALUE_32;
    op.waitValue.address = addr;
    op.waitValue.__bindgen_anon_1.value = value;
    op.waitValue.flags = CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ.0;
    op
}

fn captured_event_cases() -> Vec<Case> {
    vec![
        case!("captured_event.query", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let st = e.p.cuEventQuery(ev);
            let status = capture_status(e, s);
            let (end_st, g) = end(e, s);
            Out::of(st).eq("capture_status", status).eq("end", end_st).eq("graph", super::handle(g))
        }),
        case!("captured_event.query_thread_local", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let st = e.p.cuEventQuery(ev);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("captured_event.synchronize", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let st = e.p.cuEventSynchronize(ev);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("captured_event.elapsed_time", Ctx, |e| {
            let plain = with!(stream(e));
            let start = with!(event(e));
            step!(e.p.cuEventRecord(start, plain));
            step!(e.p.cuEventSynchronize(start));
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let mut ms = -1f32;
            let st = e.p.cuEventElapsedTime(&mut ms, start, ev);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("captured_event.query_after_end", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let (end_st, _) = end(e, s);
            step!(end_st);
            Out::of(e.p.cuEventQuery(ev))
        }),
        case!("captured_event.query_after_end_recorded_before", Ctx, |e| {
            let plain = with!(stream(e));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, plain));
            step!(e.p.cuEventSynchronize(ev));
            let s = with!(capturing(e, THREAD_LOCAL));
            step!(e.p.cuEventRecord(ev, s));
            let (end_st, _) = end(e, s);
            step!(end_st);
            Out::of(e.p.cuEventQuery(ev))
        }),
    ]
}

fn instantiate_flag_cases() -> Vec<Case> {
    vec![
        case!("instantiate_flags.device_launch_auto_free", Ctx, |e| {
            instantiate_captured(e, AUTO_FREE | DEVICE_LAUNCH)
        }),
        case!("instantiate_flags.device_launch", Ctx, |e| { instantiate_captured(e, DEVICE_LAUNCH) }),
        case!("instantiate_flags.device_launch_priority", Ctx, |e| {
            instantiate_captured(e, DEVICE_LAUNCH | PRIORITY)
        }),
        case!("instantiate_flags.auto_free_priority", Ctx, |e| { instantiate_captured(e, AUTO_FREE | PRIORITY) }),
        case!("instantiate_flags.upload_with_flags", Ctx, |e| { instantiate_captured(e, UPLOAD) }),
        case!("instantiate_flags.unknown", Ctx, |e| { instantiate_captured(e, 0x10) }),
    ]
}

fn capture_dependency_cases() -> Vec<Case> {
    vec![
        case!("capture_deps.update_not_capturing", Ctx, |e| {
            let s = with!(stream(e));
            let mut none = [std::ptr::null_mut()];
            Out::of(e.p.cuStreamUpdateCaptureDependencies_v11030(s, none.as_mut_ptr(), 0, ADD))
        }),
        case!("capture_deps.update_add", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let s = with!(capturing(e, THREAD_LOCAL));
            step!(e.p.cuMemsetD8Async(d, 1, 16, s));
            let (g, _) = with!(capture_graph(e, s));
            let mut n = [with!(empty_node(e, g))];
            let st = e.p.cuStreamUpdateCaptureDependencies_v11030(s, n.as_mut_ptr(), 1, ADD);
            let deps = dep_count(e, s);
            let again = e.p.cuStreamUpdateCaptureDependencies_v11030(s, n.as_mut_ptr(), 1, ADD);
            Out::of(st).eq("deps", deps).eq("again", again).eq("deps_again", dep_count(e, s))
        }),
        case!("capture_deps.update_set", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let s = with!(capturing(e, THREAD_LOCAL));
            step!(e.p.cuMemsetD8Async(d, 1, 16, s));
            let (g, _) = with!(capture_graph(e, s));
            let mut n = [with!(empty_node(e, g))];
            let st = e.p.cuStreamUpdateCaptureDependencies_v11030(s, n.as_mut_ptr(), 1, SET);
            let deps = dep_count(e, s);
            step!(e.p.cuMemsetD8Async(d, 2, 16, s));
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("deps", deps).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("capture_deps.update_set_empty", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let s = with!(capturing(e, THREAD_LOCAL));
            step!(e.p.cuMemsetD8Async(d, 1, 16, s));
            let mut none = [std::ptr::null_mut()];
            let st = e.p.cuStreamUpdateCaptureDependencies_v11030(s, none.as_mut_ptr(), 0, SET);
            let deps = dep_count(e, s);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("deps", deps).eq("end", end_st)
        }),
        case!("capture_deps.update_bad_flags", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let mut none = [std::ptr::null_mut()];
            let st = e.p.cuStreamUpdateCaptureDependencies_v11030(s, none.as_mut_ptr(), 0, 2);
            Out::of(st).eq("capture_status", capture_status(e, s))
        }),
        case!("capture_deps.update_foreign_node", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let other = with!(graph(e));
            let mut n = [with!(empty_node(e, other))];
            let st = e.p.cuStreamUpdateCaptureDependencies_v11030(s, n.as_mut_ptr(), 1, ADD);
            Out::of(st).eq("deps", dep_count(e, s)).eq("capture_status", capture_status(e, s))
        }),
        case!("capture_deps.update_v2_default_edges", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let (g, _) = with!(capture_graph(e, s));
            let mut n = [with!(empty_node(e, g))];
            let edges = [CUgraphEdgeData::default()];
            let st = e.p.cuStreamUpdateCaptureDependencies_v12030(s, n.as_mut_ptr(), edges.as_ptr(), 1, ADD);
            Out::of(st).eq("deps", dep_count(e, s))
        }),
        case!("capture_deps.update_v2_programmatic_edge", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let (g, _) = with!(capture_graph(e, s));
            let mut n = [with!(empty_node(e, g))];
            let edges = [CUgraphEdgeData { type_: 1, ..Default::default() }];
            let st = e.p.cuStreamUpdateCaptureDependencies_v12030(s, n.as_mut_ptr(), edges.as_ptr(), 1, ADD);
            Out::of(st).eq("deps", dep_count(e, s))
        }),
    ]
}

fn event_flag_cases() -> Vec<Case> {
    vec![
        case!("event_flags.record_external_outside_capture", Ctx, |e| {
            let s = with!(stream(e));
            let ev = with!(event(e));
            let st = e.p.cuEventRecordWithFlags(ev, s, EXTERNAL);
            Out::of(st).eq("synchronize", e.p.cuEventSynchronize(ev))
        }),
        case!("event_flags.record_external_in_capture", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            let st = e.p.cuEventRecordWithFlags(ev, s, EXTERNAL);
            let query = e.p.cuEventQuery(ev);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            let mut list = [std::ptr::null_mut(); 4];
            let mut n = 4usize;
            let mut kind = CUgraphNodeType(77);
            if e.p.cuGraphGetNodes(g, list.as_mut_ptr(), &mut n) == CUresult::CUDA_SUCCESS && n > 0 {
                let _ = e.p.cuGraphNodeGetType(list[0], &mut kind);
            }
            Out::of(st).eq("query", query).eq("end", end_st).eq("nodes", nodes).eq("type", kind.0)
        }),
        case!("event_flags.record_default_in_capture", Ctx, |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            let st = e.p.cuEventRecordWithFlags(ev, s, 0);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("event_flags.record_bad_flags", Ctx, |e| {
            let s = with!(stream(e));
            let ev = with!(event(e));
            Out::of(e.p.cuEventRecordWithFlags(ev, s, 2))
        }),
    ]
}

fn ctx_wait_event_cases() -> Vec<Case> {
    vec![
        case!("ctx_wait_event.recorded", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            let s = with!(stream(e));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let st = e.p.cuCtxWaitEvent(e.ctx, ev);
            Out::of(st).eq("synchronize", e.p.cuCtxSynchronize())
        }),
        case!("ctx_wait_event.never_recorded", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            let ev = with!(event(e));
            Out::of(e.p.cuCtxWaitEvent(e.ctx, ev))
        }),
        case!("ctx_wait_event.null_context", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            let ev = with!(event(e));
            Out::of(e.p.cuCtxWaitEvent(std::ptr::null_mut(), ev))
        }),
        case!("ctx_wait_event.null_event", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            Out::of(e.p.cuCtxWaitEvent(e.ctx, std::ptr::null_mut()))
        }),
        case!("ctx_wait_event.not_current_context", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            let other = with!(other_context(e));
            let ev = with!(event(e));
            let s = with!(stream(e));
            step!(e.p.cuEventRecord(ev, s));
            Out::of(e.p.cuCtxWaitEvent(other, ev))
        }),
        case!("ctx_wait_event.captured_event", Ctx, since 12050 &[call::cuCtxWaitEvent], |e| {
            let s = with!(capturing(e, THREAD_LOCAL));
            let ev = with!(event(e));
            step!(e.p.cuEventRecord(ev, s));
            let st = e.p.cuCtxWaitEvent(e.ctx, ev);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
    ]
}

fn copy_attribute_cases() -> Vec<Case> {
    type Id = CUstreamAttrID;
    vec![
        case!("stream_copy_attributes.policy_and_priority", Ctx, |e| {
            let (a, b) = (with!(stream(e)), with!(stream(e)));
            let mut v = CUstreamAttrValue::default();
            v.syncPolicy = CUsynchronizationPolicy::CU_SYNC_POLICY_YIELD;
            step!(e.p.cuStreamSetAttribute(a, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
            v.priority = -2;
            step!(e.p.cuStreamSetAttribute(a, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
            let st = e.p.cuStreamCopyAttributes(b, a);
            let mut got = CUstreamAttrValue::default();
            let policy = e.p.cuStreamGetAttribute(b, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &mut got);
            let policy_value = got.syncPolicy.0;
            let priority = e.p.cuStreamGetAttribute(b, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut got);
            let mut created = 77;
            let get_priority = e.p.cuStreamGetPriority(b, &mut created);
            Out::of(st)
                .eq("get_policy", policy)
                .eq("policy", policy_value)
                .eq("get_priority_attr", priority)
                .eq("priority_attr", got.priority)
                .eq("get_priority", get_priority)
                .eq("priority", created)
        }),
        case!("stream_copy_attributes.from_legacy", Ctx, |e| {
            let b = with!(stream(e));
            let st = e.p.cuStreamCopyAttributes(b, std::ptr::null_mut());
            let mut got = CUstreamAttrValue::default();
            let policy = e.p.cuStreamGetAttribute(b, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &mut got);
            Out::of(st).eq("get_policy", policy).eq("policy", got.syncPolicy.0)
        }),
        case!("stream_copy_attributes.to_legacy", Ctx, |e| {
            let a = with!(stream(e));
            Out::of(e.p.cuStreamCopyAttributes(std::ptr::null_mut(), a))
        }),
        case!("stream_copy_attributes.other_context", Ctx, |e| {
            let a = with!(stream(e));
            let other = with!(other_context(e));
            step!(e.p.cuCtxPushCurrent(other));
            let b = with!(stream(e));
            let mut popped = std::ptr::null_mut();
            step!(e.p.cuCtxPopCurrent(&mut popped));
            Out::of(e.p.cuStreamCopyAttributes(b, a))
        }),
    ]
}

fn memop_cases() -> Vec<Case> {
    type W = CUstreamWaitValue_flags;
    vec![
        case!("stream_memop.write32", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let st = e.p.cuStreamWriteValue32(s, d, 0xdead_beef, 0);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.write64", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let st = e.p.cuStreamWriteValue64(s, d + 8, 1 << 40, 0);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("value", read_u64(e, d + 8))
        }),
        case!("stream_memop.write32_v1", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let st = e.p.cuStreamWriteValue32_v8000(s, d, 7, 0);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.write32_no_barrier", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let flags = CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER.0;
            let st = e.p.cuStreamWriteValue32(s, d, 7, flags);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.write32_bad_flags", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            Out::of(e.p.cuStreamWriteValue32(s, d, 7, 2))
        }),
        case!("stream_memop.write32_misaligned", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            Out::of(e.p.cuStreamWriteValue32(s, d + 2, 7, 0))
        }),
        case!("stream_memop.write64_misaligned", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            Out::of(e.p.cuStreamWriteValue64(s, d + 4, 7, 0))
        }),
        case!("stream_memop.write32_unallocated", Ctx, |e| {
            let s = with!(stream(e));
            let st = e.p.cuStreamWriteValue32(s, 0x1000, 7, 0);
            Out::of(st).eq("sync", e.p.cuStreamSynchronize(s))
        }),
        case!("stream_memop.wait32_geq_satisfied", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            step!(e.p.cuMemsetD32(d, 5, 1));
            let st = e.p.cuStreamWaitValue32(s, d, 3, W::CU_STREAM_WAIT_VALUE_GEQ.0);
            Out::of(st).eq("sync", e.p.cuStreamSynchronize(s))
        }),
        case!("stream_memop.wait32_flush", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let flags = W::CU_STREAM_WAIT_VALUE_EQ.0 | W::CU_STREAM_WAIT_VALUE_FLUSH.0;
            let st = e.p.cuStreamWaitValue32(s, d, 0, flags);
            Out::of(st).eq("sync", e.p.cuStreamSynchronize(s))
        }),
        case!("stream_memop.wait32_bad_condition", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            Out::of(e.p.cuStreamWaitValue32(s, d, 0, 4))
        }),
        case!("stream_memop.wait_written_by_another_stream", Ctx, |e| {
            let flags = CUstream_flags::CU_STREAM_NON_BLOCKING.0;
            let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuStreamCreate(&mut a, flags));
            step!(e.p.cuStreamCreate(&mut b, flags));
            let d = with!(zeroed(e));
            let st = e.p.cuStreamWaitValue64(a, d, 9, W::CU_STREAM_WAIT_VALUE_EQ.0);
            step!(e.p.cuStreamWriteValue32(a, d + 8, 1, 0));
            step!(e.p.cuStreamWriteValue64(b, d, 9, 0));
            let sync = e.p.cuStreamSynchronize(a);
            Out::of(st).eq("sync", sync).eq("after", read_u32(e, d + 8))
        }),
        case!("stream_memop.batch_write_wait", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let mut ops = [batch_write(d, 4), batch_wait_eq(d, 4), batch_write(d + 4, 5)];
            let st = e.p.cuStreamBatchMemOp(s, 3, ops.as_mut_ptr(), 0);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("first", read_u32(e, d)).eq("second", read_u32(e, d + 4))
        }),
        case!("stream_memop.batch_v1", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let mut ops = [batch_write(d, 4)];
            let st = e.p.cuStreamBatchMemOp_v8000(s, 1, ops.as_mut_ptr(), 0);
            let sync = e.p.cuStreamSynchronize(s);
            Out::of(st).eq("sync", sync).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.batch_empty", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuStreamBatchMemOp(s, 0, std::ptr::null_mut(), 0))
        }),
        case!("stream_memop.batch_flags", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let mut ops = [batch_write(d, 4)];
            Out::of(e.p.cuStreamBatchMemOp(s, 1, ops.as_mut_ptr(), 1)).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.batch_257", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let mut ops = vec![batch_write(d, 4); 257];
            Out::of(e.p.cuStreamBatchMemOp(s, 257, ops.as_mut_ptr(), 0)).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.batch_256", Ctx, |e| {
            let (s, d) = (with!(stream(e)), with!(zeroed(e)));
            let mut ops = vec![batch_write(d, 4); 256];
            let st = e.p.cuStreamBatchMemOp(s, 256, ops.as_mut_ptr(), 0);
            Out::of(st).eq("sync", e.p.cuStreamSynchronize(s)).eq("value", read_u32(e, d))
        }),
        case!("stream_memop.batch_unknown_operation", Ctx, |e| {
            let s = with!(stream(e));
            let mut op = CUstreamBatchMemOpParams::default();
            op.operation = CUstreamBatchMemOpType(77);
            Out::of(e.p.cuStreamBatchMemOp(s, 1, &mut op, 0))
        }),
        case!("stream_memop.write_in_capture", Ctx, |e| {
            let d = with!(zeroed(e));
            let s = with!(capturing(e, THREAD_LOCAL));
            let st = e.p.cuStreamWriteValue32(s, d, 3, 0);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("end", end_st).eq("nodes", nodes)
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [
        captured_event_cases(),
        instantiate_flag_cases(),
        capture_dependency_cases(),
        event_flag_cases(),
        ctx_wait_event_cases(),
        copy_attribute_cases(),
        memop_cases(),
    ]
    .concat()
}
