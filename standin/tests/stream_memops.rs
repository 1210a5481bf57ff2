//! Issue 29 item 4: stream memory operations (`cuStreamWriteValue*`, `cuStreamWaitValue*`,
//! `cuStreamBatchMemOp`) in stream order, `cuStreamUpdateCaptureDependencies`,
//! `cuEventRecordWithFlags`, `cuCtxWaitEvent` and `cuStreamCopyAttributes`.

mod common;

use common::{driver, new_context, ok, Call, Probe};
use cudrv::sys::*;
use cudrv::Driver;

const NON_BLOCKING: u32 = CUstream_flags::CU_STREAM_NON_BLOCKING.0;
const NOT_READY: CUresult = CUresult::CUDA_ERROR_NOT_READY;
const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

fn stream(d: &Driver, flags: u32) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, flags) });
    s
}

/// 64 zeroed bytes of device memory.
fn alloc(d: &Driver) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer; a live allocation of 64 bytes.
    unsafe {
        ok(d.p().cuMemAlloc(&mut p, 64));
        ok(d.p().cuMemsetD8(p, 0, 64));
    }
    p
}

fn read_u64(d: &Driver, p: CUdeviceptr) -> u64 {
    let mut v = 0u64;
    // SAFETY: 8 bytes of a live allocation into a u64.
    ok(unsafe { d.p().cuMemcpyDtoH((&raw mut v).cast(), p, 8) });
    v
}

fn read_u32(d: &Driver, p: CUdeviceptr) -> u32 {
    let mut v = 0u32;
    // SAFETY: 4 bytes of a live allocation into a u32.
    ok(unsafe { d.p().cuMemcpyDtoH((&raw mut v).cast(), p, 4) });
    v
}

/// Holds `s` back at a host function until `probe` opens.
fn hold(d: &Driver, s: CUstream, call: &Call) {
    // SAFETY: a host function whose argument outlives the stream's work (the tests
    // synchronise before it goes).
    ok(unsafe { d.p().cuLaunchHostFunc(s, Some(common::gated), call.arg()) });
}

#[test]
fn writes_land_in_stream_order_and_waits_hold_the_stream_until_the_value_comes() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let (a, b) = (alloc(&d), alloc(&d));
    let (s1, s2) = (stream(&d, NON_BLOCKING), stream(&d, NON_BLOCKING));
    // SAFETY: live allocations and streams of the test.
    unsafe {
        ok(p.cuStreamWriteValue32(s1, a, 0xdead_beef, 0));
        ok(p.cuStreamWriteValue64(s1, a + 8, 0x0123_4567_89ab_cdef, 0));
        ok(p.cuStreamSynchronize(s1));
        assert_eq!(read_u32(&d, a), 0xdead_beef);
        assert_eq!(read_u64(&d, a + 8), 0x0123_4567_89ab_cdef);
        // s1 waits for b >= 3, then writes 9 at b + 8; nothing can run past the wait
        // until s2 writes b.
        ok(p.cuStreamWaitValue32(s1, b, 3, CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ.0));
        ok(p.cuStreamWriteValue32(s1, b + 8, 9, 0));
        assert_eq!(p.cuStreamQuery(s1), NOT_READY);
        ok(p.cuStreamWriteValue32(s2, b, 2, 0));
        ok(p.cuStreamSynchronize(s2));
        assert_eq!(p.cuStreamQuery(s1), NOT_READY, "2 is not >= 3");
        assert_eq!(read_u32(&d, b + 8), 0);
        ok(p.cuStreamWriteValue32(s2, b, 3, 0));
        ok(p.cuStreamSynchronize(s1));
        assert_eq!(read_u32(&d, b + 8), 9);
        // A 64-bit wait for equality.
        ok(p.cuStreamWaitValue64(s1, b + 16, 1 << 40, CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ.0));
        ok(p.cuStreamWriteValue64(s1, b + 24, 5, 0));
        ok(p.cuStreamWriteValue64(s2, b + 16, 1 << 40, 0));
        ok(p.cuStreamSynchronize(s1));
        assert_eq!(read_u64(&d, b + 24), 5);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_write_behind_pending_work_waits_for_it() {
    let d = driver();
    let ctx = new_context(&d);
    let a = alloc(&d);
    let s = stream(&d, 0);
    let probe = Probe::default();
    let call = Call { probe: &probe, tag: 1 };
    hold(&d, s, &call);
    // SAFETY: a live allocation and stream.
    unsafe {
        ok(d.p().cuStreamWriteValue32(s, a, 7, 0));
        assert_eq!(d.p().cuStreamQuery(s), NOT_READY);
        probe.open();
        ok(d.p().cuStreamSynchronize(s));
    }
    assert_eq!(read_u32(&d, a), 7);
    // SAFETY: the test's context.
    ok(unsafe { d.p().cuCtxDestroy(ctx) });
}

#[test]
fn bad_arguments_are_refused_when_the_call_is_made() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let a = alloc(&d);
    let s = stream(&d, 0);
    // SAFETY: live handles; bad flags, addresses and counts on purpose.
    unsafe {
        assert_eq!(p.cuStreamWriteValue32(s, a + 2, 1, 0), INVALID, "misaligned");
        assert_eq!(p.cuStreamWriteValue64(s, a + 4, 1, 0), INVALID, "misaligned");
        assert_eq!(p.cuStreamWriteValue32(s, a, 1, 2), INVALID, "flags");
        assert_eq!(p.cuStreamWaitValue32(s, a, 1, 4), INVALID, "condition");
        assert_eq!(p.cuStreamWriteValue32(s, 16, 1, 0), INVALID, "not device memory");
        let mut ops = [CUstreamBatchMemOpParams::default(); 1];
        ops[0].operation = CUstreamBatchMemOpType(77);
        assert_eq!(p.cuStreamBatchMemOp(s, 1, ops.as_mut_ptr(), 0), INVALID, "operation");
        ops[0].operation = CUstreamBatchMemOpType::CU_STREAM_MEM_OP_BARRIER;
        assert_eq!(p.cuStreamBatchMemOp(s, 1, ops.as_mut_ptr(), 1), INVALID, "batch flags");
        let mut many = vec![ops[0]; 257];
        // 256 operations are refused on the H200; 255 pass.
        assert_eq!(p.cuStreamBatchMemOp(s, 256, many.as_mut_ptr(), 0), INVALID, "count");
        ok(p.cuStreamBatchMemOp(s, 255, many.as_mut_ptr(), 0));
        ok(p.cuStreamSynchronize(s));
        // Nothing was written by the refused calls.
        assert_eq!(read_u64(&d, a), 0);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_batch_runs_its_operations_in_order() {
    let d = driver();
    let ctx = new_context(&d);
    let a = alloc(&d);
    let s = stream(&d, 0);
    type T = CUstreamBatchMemOpType;
    let mut ops = [CUstreamBatchMemOpParams::default(); 6];
    ops[0].writeValue.operation = T::CU_STREAM_MEM_OP_WRITE_VALUE_32;
    ops[0].writeValue.address = a;
    ops[0].writeValue.__bindgen_anon_1.value = 40;
    // Already true: the batch goes on.
    ops[1].waitValue.operation = T::CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[1].waitValue.address = a;
    ops[1].waitValue.__bindgen_anon_1.value = 40;
    ops[1].waitValue.flags = CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ.0;
    ops[2].memoryBarrier.operation = T::CU_STREAM_MEM_OP_BARRIER;
    ops[3].atomicReduction.operation = T::CU_STREAM_MEM_OP_ATOMIC_REDUCTION;
    ops[3].atomicReduction.reductionOp = CUstreamAtomicReductionOpType::CU_STREAM_ATOMIC_REDUCTION_OP_ADD;
    ops[3].atomicReduction.dataType = CUstreamAtomicReductionDataType::CU_STREAM_ATOMIC_REDUCTION_UNSIGNED_32;
    ops[3].atomicReduction.address = a;
    ops[3].atomicReduction.value = 2;
    ops[4].writeValue.operation = T::CU_STREAM_MEM_OP_WRITE_VALUE_64;
    ops[4].writeValue.address = a + 8;
    ops[4].writeValue.__bindgen_anon_1.value64 = u64::MAX;
    ops[5].flushRemoteWrites.operation = T::CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    // SAFETY: six operations on a live allocation; a live stream.
    unsafe {
        ok(d.p().cuStreamBatchMemOp(s, 6, ops.as_mut_ptr(), 0));
        ok(d.p().cuStreamSynchronize(s));
    }
    assert_eq!(read_u32(&d, a), 42);
    assert_eq!(read_u64(&d, a + 8), u64::MAX);
    // SAFETY: the test's context.
    ok(unsafe { d.p().cuCtxDestroy(ctx) });
}

#[test]
fn memory_operations_on_a_capturing_stream_become_batch_memory_operation_nodes() {
    // Driver 580.159.04 (H100, recording 2026-12-05, stream_memop.write_in_capture): a
    // write on a capturing stream succeeds and the capture ends with one node.
    let d = driver();
    let ctx = new_context(&d);
    let a = alloc(&d);
    let s = stream(&d, 0);
    // SAFETY: live handles of the test.
    unsafe {
        ok(d.p().cuMemsetD8(a, 0, 16));
        ok(d.p().cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        ok(d.p().cuStreamWriteValue32(s, a, 1, 0));
        ok(d.p().cuStreamWriteValue64(s, a + 8, 2, 0));
        let mut g = std::ptr::null_mut();
        ok(d.p().cuStreamEndCapture(s, &mut g));
        assert_eq!(read_u32(&d, a), 0, "recorded, not done");
        let mut n = 0;
        ok(d.p().cuGraphGetNodes(g, std::ptr::null_mut(), &mut n));
        assert_eq!(n, 2);
        let mut x = std::ptr::null_mut();
        ok(d.p().cuGraphInstantiateWithFlags(&mut x, g, 0));
        ok(d.p().cuGraphLaunch(x, s));
        ok(d.p().cuStreamSynchronize(s));
        assert_eq!(read_u32(&d, a), 1);
        assert_eq!(read_u64(&d, a + 8), 2);
        ok(d.p().cuCtxDestroy(ctx));
    }
}

/// The capture dependencies of `s`.
fn deps(d: &Driver, s: CUstream) -> Vec<CUgraphNode> {
    let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let (mut nodes, mut n) = (std::ptr::null(), 0usize);
    // SAFETY: valid out-pointers; the arrays stay valid until the capture next changes.
    unsafe {
        let (id, graph, edges) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        ok(d.p().cuStreamGetCaptureInfo(s, &mut status, id, graph, &mut nodes, edges, &mut n));
        if n == 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(nodes, n).to_vec()
    }
}

#[test]
fn capture_dependencies_are_added_to_and_replaced() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let (s, a) = (stream(&d, 0), alloc(&d));
    const ADD: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_ADD_CAPTURE_DEPENDENCIES.0;
    const SET: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_SET_CAPTURE_DEPENDENCIES.0;
    // SAFETY: live handles of the test; valid out-pointers and node arrays.
    unsafe {
        let mut extra = [std::ptr::null_mut()];
        assert_eq!(
            p.cuStreamUpdateCaptureDependencies_v11030(s, extra.as_mut_ptr(), 0, ADD),
            CUresult::CUDA_ERROR_ILLEGAL_STATE,
            "not capturing"
        );
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        ok(p.cuMemsetD8Async(a, 1, 8, s));
        let first = deps(&d, s);
        assert_eq!(first.len(), 1);
        let mut g = std::ptr::null_mut();
        let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let id = std::ptr::null_mut();
        let (nodes, edges, count) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuStreamGetCaptureInfo(s, &mut status, id, &mut g, nodes, edges, count));
        // A node added to the capture's graph by hand joins the dependencies.
        ok(p.cuGraphAddEmptyNode(&mut extra[0], g, std::ptr::null(), 0));
        ok(p.cuStreamUpdateCaptureDependencies_v11030(s, extra.as_mut_ptr(), 1, ADD));
        assert_eq!(deps(&d, s), vec![first[0], extra[0]]);
        // Adding it again changes nothing; SET replaces.
        ok(p.cuStreamUpdateCaptureDependencies_v12030(s, extra.as_mut_ptr(), std::ptr::null(), 1, ADD));
        assert_eq!(deps(&d, s).len(), 2);
        ok(p.cuStreamUpdateCaptureDependencies_v12030(s, extra.as_mut_ptr(), std::ptr::null(), 1, SET));
        assert_eq!(deps(&d, s), vec![extra[0]]);
        // Bad flags, a node of another graph: refused, nothing changes.
        assert_eq!(p.cuStreamUpdateCaptureDependencies_v11030(s, extra.as_mut_ptr(), 1, 2), INVALID);
        let (mut other, mut stranger) = (std::ptr::null_mut(), [std::ptr::null_mut()]);
        ok(p.cuGraphCreate(&mut other, 0));
        ok(p.cuGraphAddEmptyNode(&mut stranger[0], other, std::ptr::null(), 0));
        assert_eq!(p.cuStreamUpdateCaptureDependencies_v11030(s, stranger.as_mut_ptr(), 1, ADD), INVALID);
        assert_eq!(deps(&d, s), vec![extra[0]]);
        // The next captured node depends on the empty node only; the memset, dropped from
        // the dependencies, need not be joined.
        ok(p.cuMemsetD8Async(a + 8, 2, 8, s));
        ok(p.cuStreamEndCapture(s, &mut g));
        let mut n = 0usize;
        ok(p.cuGraphGetNodes(g, std::ptr::null_mut(), &mut n));
        assert_eq!(n, 3);
        let mut exec = std::ptr::null_mut();
        ok(p.cuGraphInstantiateWithFlags(&mut exec, g, 0));
        ok(p.cuGraphLaunch(exec, s));
        ok(p.cuStreamSynchronize(s));
        assert_eq!(read_u64(&d, a), 0x0101_0101_0101_0101);
        assert_eq!(read_u64(&d, a + 8), 0x0202_0202_0202_0202);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn an_external_record_in_a_capture_becomes_an_event_record_node() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let s = stream(&d, 0);
    let external = CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL.0;
    // SAFETY: live handles of the test; valid out-pointers.
    unsafe {
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        assert_eq!(p.cuEventRecordWithFlags(e, s, 2), INVALID);
        // Outside capture: ILLEGAL_STATE (H200).
        assert_eq!(p.cuEventRecordWithFlags(e, s, external), CUresult::CUDA_ERROR_ILLEGAL_STATE);
        ok(p.cuEventRecord(e, s));
        ok(p.cuEventSynchronize(e));
        // In a capture, queried: STREAM_CAPTURE_UNSUPPORTED, the capture invalidated (H200).
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        ok(p.cuEventRecordWithFlags(e, s, external));
        assert_eq!(p.cuEventQuery(e), CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        let mut g = std::ptr::null_mut();
        assert_eq!(p.cuStreamEndCapture(s, &mut g), CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        // Not queried: an event record node.
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        ok(p.cuEventRecordWithFlags(e, s, external));
        ok(p.cuStreamEndCapture(s, &mut g));
        let mut nodes = [std::ptr::null_mut(); 2];
        let mut n = 2usize;
        ok(p.cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n));
        assert_eq!(n, 1);
        let mut kind = CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        ok(p.cuGraphNodeGetType(nodes[0], &mut kind));
        assert_eq!(kind, CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD);
        // The default flags in a capture: a captured event.
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        ok(p.cuEventRecordWithFlags(e, s, 0));
        assert_eq!(p.cuEventQuery(e), CUresult::CUDA_ERROR_CAPTURED_EVENT);
        let mut g2 = std::ptr::null_mut();
        assert_eq!(p.cuStreamEndCapture(s, &mut g2), CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        ok(p.cuGraphDestroy(g));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_context_waits_for_an_event_of_another_stream() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let a = alloc(&d);
    let s = stream(&d, NON_BLOCKING);
    let probe = Probe::default();
    let call = Call { probe: &probe, tag: 1 };
    // SAFETY: live handles of the test; valid out-pointers.
    unsafe {
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        assert_eq!(p.cuCtxWaitEvent(std::ptr::null_mut(), e), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(p.cuCtxWaitEvent(ctx, std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_HANDLE);
        hold(&d, s, &call);
        ok(p.cuEventRecord(e, s));
        ok(p.cuCtxWaitEvent(ctx, e));
        // Later work of the context (its legacy stream) waits for the held stream.
        ok(p.cuStreamWriteValue32(std::ptr::null_mut(), a, 5, 0));
        assert_eq!(p.cuStreamQuery(std::ptr::null_mut()), NOT_READY);
        probe.open();
        ok(p.cuCtxSynchronize());
        assert_eq!(read_u32(&d, a), 5);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn stream_attributes_are_copied() {
    let d = driver();
    let ctx = new_context(&d);
    let p = d.p();
    let (s1, s2) = (stream(&d, 0), stream(&d, 0));
    type Id = CUstreamAttrID;
    // SAFETY: live streams of the test; valid values and out-pointers.
    unsafe {
        let mut v = CUstreamAttrValue::default();
        v.syncPolicy = CUsynchronizationPolicy::CU_SYNC_POLICY_YIELD;
        ok(p.cuStreamSetAttribute(s1, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
        v.priority = -3;
        ok(p.cuStreamSetAttribute(s1, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
        ok(p.cuStreamCopyAttributes(s2, s1));
        let mut got = CUstreamAttrValue::default();
        ok(p.cuStreamGetAttribute(s2, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &mut got));
        assert_eq!(got.syncPolicy, CUsynchronizationPolicy::CU_SYNC_POLICY_YIELD);
        ok(p.cuStreamGetAttribute(s2, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY, &mut got));
        assert_eq!(got.priority, -3);
        // From the legacy stream: the defaults.
        ok(p.cuStreamCopyAttributes(s2, std::ptr::null_mut()));
        ok(p.cuStreamGetAttribute(s2, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &mut got));
        assert_eq!(got.syncPolicy.0, u32::MAX);
        ok(p.cuCtxDestroy(ctx));
    }
}
