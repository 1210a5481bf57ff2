//! Stream capture as `docs/driver-facts.md` ("Edge cases on the real driver", stream
//! capture) describes it: capture, end, instantiate and launch work; the NULL stream
//! cannot capture; querying a capturing stream invalidates the capture; ending when not
//! capturing is an illegal state. Also the graph nodes capture records (kernel, memcpy,
//! memset, host) and the calls that add them by hand.
//!
//! The tests take one lock: a context synchronisation is refused, and invalidates, while
//! any global-mode capture of the process is under way (as on a real driver).

mod common;

use std::ffi::{c_void, CString};
use std::sync::{Mutex, MutexGuard};

use common::{driver, new_context, ok, Call, Probe};
use cudrv::sys::*;
use cudrv::Driver;

const STATUS_NONE: CUstreamCaptureStatus = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
const ACTIVE: CUstreamCaptureStatus = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE;
const INVALIDATED: CUstreamCaptureStatus = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED;
const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
const RELAXED: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
const UNSUPPORTED: CUresult = CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
const N: usize = 256;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

fn begin(d: &Driver, s: CUstream) -> CUresult {
    // SAFETY: plain call.
    unsafe { d.p().cuStreamBeginCapture(s, GLOBAL) }
}

fn end(d: &Driver, s: CUstream) -> (CUresult, CUgraph) {
    let mut g = 1usize as CUgraph;
    // SAFETY: valid out-pointer.
    let r = unsafe { d.p().cuStreamEndCapture(s, &mut g) };
    (r, g)
}

fn capturing(d: &Driver, s: CUstream) -> CUstreamCaptureStatus {
    let mut st = ACTIVE;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamIsCapturing(s, &mut st) });
    st
}

fn nodes(d: &Driver, g: CUgraph) -> Vec<CUgraphNodeType> {
    let mut n = 0;
    // SAFETY: valid out-pointer; a null array asks for the count.
    ok(unsafe { d.p().cuGraphGetNodes(g, std::ptr::null_mut(), &mut n) });
    let mut v = vec![std::ptr::null_mut(); n];
    // SAFETY: room for `n` handles.
    ok(unsafe { d.p().cuGraphGetNodes(g, v.as_mut_ptr(), &mut n) });
    v.iter()
        .map(|&node| {
            let mut t = CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH;
            // SAFETY: valid out-pointer.
            ok(unsafe { d.p().cuGraphNodeGetType(node, &mut t) });
            t
        })
        .collect()
}

fn run_graph(d: &Driver, g: CUgraph, s: CUstream, times: usize) {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer; handles from the stand-in.
    unsafe {
        ok(d.p().cuGraphInstantiateWithFlags(&mut e, g, 0));
        for _ in 0..times {
            ok(d.p().cuGraphLaunch(e, s));
        }
        ok(d.p().cuStreamSynchronize(s));
        ok(d.p().cuGraphExecDestroy(e));
    }
}

/// `scale_f32(float* x, float s, int n)` of the examples' PTX (run by the PTX executor).
fn scale_kernel(d: &Driver) -> CUfunction {
    let ptx = CString::new(include_str!("../../examples/kernels/scale_f32.ptx")).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a NUL-terminated image, valid out-pointers.
    unsafe {
        ok(d.p().cuModuleLoadData(&mut m, ptx.as_ptr().cast()));
        ok(d.p().cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr()));
    }
    f
}

fn arg<T>(v: &T) -> *mut c_void {
    (v as *const T).cast_mut().cast()
}

fn launch_scale(d: &Driver, f: CUfunction, s: CUstream, x: &CUdeviceptr, factor: &f32, n: &i32) -> CUresult {
    let mut params = [arg(x), arg(factor), arg(n)];
    // SAFETY: the parameters match scale_f32's.
    unsafe { d.p().cuLaunchKernel(f, 1, 1, 1, N as u32, 1, 1, 0, s, params.as_mut_ptr(), std::ptr::null_mut()) }
}

fn alloc(d: &Driver, values: &[f32]) -> CUdeviceptr {
    let mut x = 0;
    // SAFETY: valid out-pointer; the copy reads `values`.
    unsafe {
        ok(d.p().cuMemAlloc(&mut x, std::mem::size_of_val(values)));
        ok(d.p().cuMemcpyHtoD(x, values.as_ptr().cast(), std::mem::size_of_val(values)));
    }
    x
}

fn read(d: &Driver, x: CUdeviceptr) -> Vec<f32> {
    let mut out = vec![0f32; N];
    // SAFETY: `out` has N floats, as the allocation.
    ok(unsafe { d.p().cuMemcpyDtoH(out.as_mut_ptr().cast(), x, N * 4) });
    out
}

#[test]
fn the_default_streams_cannot_capture() {
    // facts: `cuStreamBeginCapture` on the NULL stream answers STREAM_CAPTURE_UNSUPPORTED.
    let _serial = serial();
    let d = driver();
    new_context(&d);
    for s in [0usize, 1, 2] {
        assert_eq!(begin(&d, s as CUstream), UNSUPPORTED, "{s}");
        assert_eq!(capturing(&d, s as CUstream), STATUS_NONE);
    }
}

#[test]
fn begin_twice_and_end_without_capture_are_illegal_states() {
    // facts: ending when not capturing answers ILLEGAL_STATE (beginning twice too).
    let _serial = serial();
    let d = driver();
    new_context(&d);
    let s = stream(&d);
    assert_eq!(end(&d, s), (CUresult::CUDA_ERROR_ILLEGAL_STATE, std::ptr::null_mut()));
    assert_eq!(capturing(&d, s), STATUS_NONE);
    ok(begin(&d, s));
    assert_eq!(capturing(&d, s), ACTIVE);
    assert_eq!(begin(&d, s), CUresult::CUDA_ERROR_ILLEGAL_STATE);
    // SAFETY: plain call with an unknown mode.
    assert_eq!(
        unsafe { d.p().cuStreamBeginCapture(stream(&d), CUstreamCaptureMode(7)) },
        CUresult::CUDA_ERROR_INVALID_VALUE
    );
    let (r, g) = end(&d, s);
    ok(r);
    assert!(!g.is_null());
    assert_eq!(nodes(&d, g), []);
    assert_eq!(capturing(&d, s), STATUS_NONE);
    assert_eq!(end(&d, s).0, CUresult::CUDA_ERROR_ILLEGAL_STATE);
}

#[test]
fn captured_work_is_recorded_and_runs_at_each_launch_in_order() {
    // facts: capture, end, instantiate and launch work.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    new_context(&d);
    let (s, f) = (stream(&d), scale_kernel(&d));
    let x0: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = alloc(&d, &x0);
    let (two, n) = (2.0f32, N as i32);
    let probe: &'static Probe = Box::leak(Box::default());
    let call: &'static Call = Box::leak(Box::new(Call { probe, tag: 7 }));
    let out: &'static mut [f32] = Box::leak(vec![0f32; N].into_boxed_slice());
    let src: &'static [f32] = Box::leak(vec![1f32; N].into_boxed_slice());
    ok(begin(&d, s));
    // SAFETY: every pointer outlives the graph's launches (leaked or live until the end).
    unsafe {
        ok(p.cuMemcpyHtoDAsync(x, src.as_ptr().cast(), N * 4, s));
        ok(launch_scale(&d, f, s, &x, &two, &n));
        ok(p.cuMemsetD32Async(x, 0, 0, s)); // no node: nothing to set
        ok(p.cuLaunchHostFunc(s, Some(common::record), call.arg()));
        ok(p.cuMemcpyDtoHAsync(out.as_mut_ptr().cast(), x, N * 4, s));
    }
    // Nothing ran (read after the end: a synchronous copy during a global capture answers
    // STREAM_CAPTURE_IMPLICIT, as on the H200).
    assert_eq!(probe.tags(), []);
    let (r, g) = end(&d, s);
    ok(r);
    assert_eq!(read(&d, x), x0);
    use CUgraphNodeType as T;
    let kinds = [T::CU_GRAPH_NODE_TYPE_MEMCPY, T::CU_GRAPH_NODE_TYPE_KERNEL, T::CU_GRAPH_NODE_TYPE_HOST];
    assert_eq!(nodes(&d, g), [kinds[0], kinds[1], kinds[2], kinds[0]]);
    run_graph(&d, g, s, 2);
    assert_eq!(read(&d, x), vec![2f32; N]);
    assert_eq!(*out, vec![2f32; N][..]);
    assert!(common::eventually(|| probe.tags() == [7, 7]));
    // SAFETY: handles from the stand-in.
    unsafe {
        ok(p.cuGraphDestroy(g));
        ok(p.cuMemFree(x));
    }
}

#[test]
fn a_query_or_synchronize_on_a_capturing_stream_invalidates_the_capture() {
    // facts: `cuStreamQuery` on a capturing stream answers STREAM_CAPTURE_UNSUPPORTED and
    // invalidates the capture (`cuStreamIsCapturing` then says 2, `cuStreamEndCapture`
    // INVALIDATED).
    let _serial = serial();
    let d = driver();
    let p = d.p();
    new_context(&d);
    let x = alloc(&d, &[0f32; N]);
    for which in 0..2 {
        let s = stream(&d);
        ok(begin(&d, s));
        // SAFETY: plain calls.
        let r = unsafe {
            if which == 0 {
                p.cuStreamQuery(s)
            } else {
                p.cuStreamSynchronize(s)
            }
        };
        assert_eq!(r, UNSUPPORTED);
        assert_eq!(capturing(&d, s), INVALIDATED);
        // Later work on it is refused.
        // SAFETY: a live allocation.
        assert_eq!(unsafe { p.cuMemsetD8Async(x, 1, 4, s) }, CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        assert_eq!(end(&d, s), (CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, std::ptr::null_mut()));
        // The stream is usable again.
        assert_eq!(capturing(&d, s), STATUS_NONE);
        // SAFETY: plain call.
        ok(unsafe { p.cuStreamQuery(s) });
    }
    assert_eq!(read(&d, x), vec![0f32; N]);
}

#[test]
fn context_synchronize_and_synchronous_allocation_are_refused_while_capturing() {
    // facts (stream capture): calls that cannot be captured answer STREAM_CAPTURE_UNSUPPORTED
    // and invalidate the capture, as `cuStreamQuery` does.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    new_context(&d);
    let s = stream(&d);
    ok(begin(&d, s));
    // SAFETY: plain call.
    assert_eq!(unsafe { p.cuCtxSynchronize() }, UNSUPPORTED);
    assert_eq!(capturing(&d, s), INVALIDATED);
    assert_eq!(end(&d, s).0, CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    // SAFETY: plain call: nothing captures now.
    ok(unsafe { p.cuCtxSynchronize() });
    // A stream-ordered allocation is captured as a graph memory node (tests/graph_memory.rs);
    // a synchronous one is refused.
    ok(begin(&d, s));
    let mut x = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { p.cuMemAlloc(&mut x, 64) }, UNSUPPORTED);
    assert_eq!(capturing(&d, s), INVALIDATED);
    assert_eq!(end(&d, s).0, CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

#[test]
fn capture_info_reports_the_status_id_graph_and_dependencies() {
    // Not in docs/driver-facts.md (not probed on a GPU): as the CUDA documentation describes.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    new_context(&d);
    let s = stream(&d);
    let x = alloc(&d, &[0f32; N]);
    let mut status = ACTIVE;
    let (mut id, mut g, mut deps, mut edges, mut n) = (0, std::ptr::null_mut(), std::ptr::null(), std::ptr::null(), 9);
    // SAFETY: valid out-pointers throughout; the dependency array is read while valid.
    unsafe {
        let info = |status: &mut _, id: &mut _, g: &mut _, deps: &mut _, edges: &mut _, n: &mut _| {
            ok(p.cuStreamGetCaptureInfo(s, status, id, g, deps, edges, n))
        };
        info(&mut status, &mut id, &mut g, &mut deps, &mut edges, &mut n);
        assert_eq!(status, STATUS_NONE);
        ok(begin(&d, s));
        info(&mut status, &mut id, &mut g, &mut deps, &mut edges, &mut n);
        assert_eq!((status, n), (ACTIVE, 0));
        let first = id;
        ok(p.cuMemsetD8Async(x, 1, 4, s));
        info(&mut status, &mut id, &mut g, &mut deps, &mut edges, &mut n);
        assert_eq!((id, n), (first, 1));
        assert!(!edges.is_null());
        let dep = *deps;
        let (r, graph) = end(&d, s);
        ok(r);
        assert_eq!(g, graph);
        let mut node = std::ptr::null_mut();
        let mut one = 1;
        ok(p.cuGraphGetNodes(graph, &mut node, &mut one));
        assert_eq!(dep, node);
        // A new capture has a new id; the 10.1 form reports status and id.
        ok(begin(&d, s));
        ok(p.cuStreamGetCaptureInfo_v10010(s, &mut status, &mut id));
        assert_eq!(status, ACTIVE);
        assert_ne!(id, first);
        ok(end(&d, s).0);
    }
}

/// Records an event on `from` and makes `to` wait for it.
fn fork(d: &Driver, from: CUstream, to: CUstream) {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer; live handles.
    unsafe {
        ok(d.p().cuEventCreate(&mut e, 0));
        ok(d.p().cuEventRecord(e, from));
        ok(d.p().cuStreamWaitEvent(to, e, 0));
    }
}

#[test]
fn other_streams_join_through_events_and_must_be_joined_back() {
    // Not in docs/driver-facts.md (not probed on a GPU): as the CUDA documentation describes.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    new_context(&d);
    let x = alloc(&d, &[0f32; N]);
    for join in [true, false] {
        let (a, b) = (stream(&d), stream(&d));
        ok(begin(&d, a));
        // SAFETY: a live allocation.
        ok(unsafe { p.cuMemsetD8Async(x, 1, 4, a) });
        fork(&d, a, b);
        assert_eq!(capturing(&d, b), ACTIVE);
        // SAFETY: as above.
        ok(unsafe { p.cuMemsetD8Async(x + 4, 2, 4, b) });
        if join {
            fork(&d, b, a);
            let (r, g) = end(&d, a);
            ok(r);
            assert_eq!(nodes(&d, g).len(), 2);
        } else {
            assert_eq!(end(&d, a), (CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED, std::ptr::null_mut()));
        }
        assert_eq!((capturing(&d, a), capturing(&d, b)), (STATUS_NONE, STATUS_NONE));
    }
    // A capturing stream cannot wait for an event recorded outside the capture.
    let (a, b) = (stream(&d), stream(&d));
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer; live handles.
    unsafe {
        ok(p.cuEventCreate(&mut e, 0));
        ok(p.cuEventRecord(e, b));
        ok(begin(&d, a));
        assert_eq!(p.cuStreamWaitEvent(a, e, 0), CUresult::CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    }
    assert_eq!(end(&d, a).0, CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    assert_eq!(read(&d, x), vec![0f32; N]);
}

#[test]
fn capture_into_a_graph_and_the_thread_rules_of_the_modes() {
    // Not in docs/driver-facts.md (not probed on a GPU): as the CUDA documentation describes.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = stream(&d);
    let mut g = std::ptr::null_mut();
    let mut first = std::ptr::null_mut();
    // Allocated before the capture: cuMemAlloc during a global capture answers
    // STREAM_CAPTURE_UNSUPPORTED (driver-facts.md, conformance on the H200).
    let x = alloc(&d, &[0f32; N]);
    // SAFETY: valid out-pointers; live handles.
    unsafe {
        ok(p.cuGraphCreate(&mut g, 0));
        ok(p.cuGraphAddEmptyNode(&mut first, g, std::ptr::null(), 0));
        ok(p.cuStreamBeginCaptureToGraph(s, g, &first, std::ptr::null(), 1, GLOBAL));
    }
    // SAFETY: a live allocation.
    ok(unsafe { p.cuMemsetD8Async(x, 1, 4, s) });
    assert_eq!(end(&d, s), (CUresult::CUDA_SUCCESS, g));
    assert_eq!(nodes(&d, g), [CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY, CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET]);
    // A global-mode capture ends on the thread that began it; a relaxed one anywhere.
    for (mode, there) in [(GLOBAL, CUresult::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD), (RELAXED, CUresult::CUDA_SUCCESS)]
    {
        // SAFETY: plain call.
        ok(unsafe { p.cuStreamBeginCapture(s, mode) });
        let (sh, ch) = (s as usize, ctx as usize);
        let r = std::thread::scope(|t| {
            t.spawn(|| {
                // SAFETY: live handles.
                ok(unsafe { p.cuCtxSetCurrent(ch as CUcontext) });
                end(&d, sh as CUstream).0
            })
            .join()
            .unwrap()
        });
        assert_eq!(r, there);
        if mode == GLOBAL {
            ok(end(&d, s).0);
        }
    }
    // The thread's interaction mode swaps.
    let mut mode = RELAXED;
    // SAFETY: valid pointer.
    ok(unsafe { p.cuThreadExchangeStreamCaptureMode(&mut mode) });
    assert_eq!(mode, GLOBAL);
    // SAFETY: as above.
    ok(unsafe { p.cuThreadExchangeStreamCaptureMode(&mut mode) });
    assert_eq!(mode, RELAXED);
}

#[test]
fn kernel_memset_and_memcpy_nodes_can_be_added_by_hand() {
    // Not in docs/driver-facts.md (not probed on a GPU): as the CUDA documentation describes.
    let _serial = serial();
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let (s, f) = (stream(&d), scale_kernel(&d));
    let x = alloc(&d, &[0f32; N]);
    let (three, n) = (3.0f32, N as i32);
    let mut params = [arg(&x), arg(&three), arg(&n)];
    let ones: &'static [f32] = Box::leak(vec![1f32; N].into_boxed_slice());
    let mut g = std::ptr::null_mut();
    let (mut a, mut b, mut c) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let set = CUDA_MEMSET_NODE_PARAMS { dst: x, pitch: 0, value: 7, elementSize: 4, width: N, height: 1 };
    let copy = CUDA_MEMCPY3D {
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
        srcHost: ones.as_ptr().cast(),
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstDevice: x,
        WidthInBytes: N * 4,
        Height: 1,
        Depth: 1,
        ..Default::default()
    };
    let kernel = CUDA_KERNEL_NODE_PARAMS {
        func: f,
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: N as u32,
        blockDimY: 1,
        blockDimZ: 1,
        kernelParams: params.as_mut_ptr(),
        ..Default::default()
    };
    // SAFETY: valid out-pointers and parameters; `ones` is leaked.
    unsafe {
        ok(p.cuGraphCreate(&mut g, 0));
        ok(p.cuGraphAddMemsetNode(&mut a, g, std::ptr::null(), 0, &set, ctx));
        ok(p.cuGraphAddMemcpyNode(&mut b, g, &a, 1, &copy, ctx));
        ok(p.cuGraphAddKernelNode(&mut c, g, &b, 1, &kernel));
        let mut bad = kernel;
        bad.blockDimX = 2048;
        assert_eq!(p.cuGraphAddKernelNode(&mut c, g, &b, 1, &bad), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    assert_eq!(read(&d, x), vec![0f32; N]);
    run_graph(&d, g, s, 1);
    assert_eq!(read(&d, x), vec![3f32; N]);
    // The memset alone: 7 in each u32.
    let mut only = std::ptr::null_mut();
    // SAFETY: as above.
    unsafe {
        ok(p.cuGraphCreate(&mut only, 0));
        ok(p.cuGraphAddMemsetNode(&mut a, only, std::ptr::null(), 0, &set, ctx));
    }
    run_graph(&d, only, s, 1);
    let mut raw = [0u32; N];
    // SAFETY: `raw` has N u32s.
    ok(unsafe { p.cuMemcpyDtoH(raw.as_mut_ptr().cast(), x, N * 4) });
    assert_eq!(raw, [7u32; N]);
}
