//! Kernel faults arrive as on a GPU (issue 29 item 3): the launch of a kernel that traps
//! or touches an illegal address returns success, directly or as a graph's kernel node,
//! on an idle stream (run on the caller's thread) and behind pending work alike; the
//! synchronising calls return the fault, and so does every later call that uses the
//! context, while bookkeeping calls still answer and another context works on. Also the
//! captured-event answers and the instantiate flags a driver refuses (items 2 and 3).

mod common;

use std::ffi::{c_void, CString};

use common::{driver_alone, new_context, ok, Call, Probe};
use cudrv::sys::*;
use cudrv::Driver;

const LAUNCH_FAILED: CUresult = CUresult::CUDA_ERROR_LAUNCH_FAILED;
const ILLEGAL: CUresult = CUresult::CUDA_ERROR_ILLEGAL_ADDRESS;

/// `trap_k(out)` traps; `illegal_k(out)` stores to address 16; `fine_k(out)` stores 7 at
/// `out`.
const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry trap_k(.param .u64 out)\n{\ntrap;\nret;\n}\n\
    .visible .entry illegal_k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
    mov.u64 %rd1, 16;\nmov.u32 %r1, 1;\nst.global.u32 [%rd1], %r1;\nret;\n}\n\
    .visible .entry fine_k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
    ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, 7;\nst.global.u32 [%rd2], %r1;\nret;\n}\n";

/// The kernel `name` of a module of [`PTX`] loaded in the current context.
fn kernel(d: &Driver, name: &str) -> CUfunction {
    let text = CString::new(PTX).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    let name = CString::new(name).unwrap();
    // SAFETY: a NUL-terminated image and name; valid out-pointers.
    unsafe {
        ok(d.p().cuModuleLoadData(&mut m, text.as_ptr().cast()));
        ok(d.p().cuModuleGetFunction(&mut f, m, name.as_ptr()));
    }
    f
}

fn stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

fn alloc(d: &Driver) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut p, 64) });
    p
}

/// Launches `f(out)` over one block of 32 threads on `s`: the launch's status.
fn launch(d: &Driver, f: CUfunction, s: CUstream, out: CUdeviceptr) -> CUresult {
    let mut out = out;
    let mut params = [(&raw mut out).cast::<c_void>()];
    // SAFETY: one parameter, a pointer to its value, alive across the call.
    unsafe { d.p().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params.as_mut_ptr(), std::ptr::null_mut()) }
}

/// A graph of one kernel node `f(out)`, instantiated.
fn kernel_graph(d: &Driver, f: CUfunction, out: CUdeviceptr) -> CUgraphExec {
    let mut out = out;
    let mut params = [(&raw mut out).cast::<c_void>()];
    let p = CUDA_KERNEL_NODE_PARAMS {
        func: f,
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 32,
        blockDimY: 1,
        blockDimZ: 1,
        kernelParams: params.as_mut_ptr(),
        ..Default::default()
    };
    let (mut g, mut n, mut x) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers and parameters (the node copies the argument).
    unsafe {
        ok(d.p().cuGraphCreate(&mut g, 0));
        ok(d.p().cuGraphAddKernelNode(&mut n, g, std::ptr::null(), 0, &p));
        ok(d.p().cuGraphInstantiateWithFlags(&mut x, g, 0));
    }
    x
}

/// After the fault was reported by a synchronisation: the calls that use `ctx` return
/// `fault`, the bookkeeping calls answer, another context works, and destroying `ctx` ends
/// the fault.
fn check_sticky(d: &Driver, ctx: CUcontext, s: CUstream, out: CUdeviceptr, fault: CUresult) {
    let p = d.p();
    // SAFETY: valid out-pointers; handles of the test.
    unsafe {
        assert_eq!(p.cuStreamQuery(s), fault);
        assert_eq!(p.cuCtxSynchronize(), fault);
        let mut more = 0;
        assert_eq!(p.cuMemAlloc(&mut more, 16), fault);
        let host = [0u8; 4];
        assert_eq!(p.cuMemcpyHtoD(out, host.as_ptr().cast(), 4), fault);
        let mut m = std::ptr::null_mut();
        let text = CString::new(PTX).unwrap();
        assert_eq!(p.cuModuleLoadData(&mut m, text.as_ptr().cast()), fault);
        let mut e = std::ptr::null_mut();
        assert_eq!(p.cuEventCreate(&mut e, 0), fault);
        // Bookkeeping still answers.
        let mut dev = -1;
        ok(p.cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 0);
        let mut sms = 0;
        ok(p.cuDeviceGetAttribute(&mut sms, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
        assert!(sms > 0);
        let mut popped = std::ptr::null_mut();
        ok(p.cuCtxPopCurrent(&mut popped));
        assert_eq!(popped, ctx);
        // No other context works on: as on the H200 (`faults.*_new_context`), a new one
        // answers the fault, and so does the primary context.
        let mut other = std::ptr::null_mut();
        assert_eq!(p.cuCtxCreate(&mut other, std::ptr::null_mut(), 0, 0), fault);
        let mut primary = std::ptr::null_mut();
        assert_eq!(p.cuDevicePrimaryCtxRetain(&mut primary, 0), fault);
        ok(p.cuCtxPushCurrent(ctx));
        assert_eq!(p.cuMemFree(out), fault);
        // Destroying the faulted context ends it.
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_trapping_kernel_launches_and_its_fault_arrives_at_the_synchronisation() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let (s, out) = (stream(&d), alloc(&d));
    let (trap, fine) = (kernel(&d, "trap_k"), kernel(&d, "fine_k"));
    ok(launch(&d, fine, s, out));
    let mut e = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { d.p().cuEventCreate(&mut e, 0) });
    // The stream was idle: the kernel ran inside the call, yet the launch succeeds.
    ok(launch(&d, trap, s, out));
    // SAFETY: the test's stream and event.
    unsafe {
        // An event recorded right behind it is queued, as on a GPU, where the kernel has
        // not reached its trap yet (cudarc records one after each launch); the event
        // then reports the fault, and so does everything after.
        ok(d.p().cuEventRecord(e, s));
        assert_eq!(d.p().cuEventQuery(e), LAUNCH_FAILED);
        assert_eq!(d.p().cuStreamSynchronize(s), LAUNCH_FAILED);
        assert_eq!(d.p().cuStreamSynchronize(s), LAUNCH_FAILED);
        assert_eq!(d.p().cuEventRecord(e, s), LAUNCH_FAILED);
    }
    assert_eq!(launch(&d, fine, s, out), LAUNCH_FAILED);
    check_sticky(&d, ctx, s, out, LAUNCH_FAILED);
}

#[test]
fn an_illegal_address_arrives_at_an_event_synchronisation_and_a_blocking_copy() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let (s, out) = (stream(&d), alloc(&d));
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuEventCreate(&mut e, 0) });
    ok(launch(&d, kernel(&d, "illegal_k"), s, out));
    let mut host = [0u8; 4];
    // SAFETY: the test's event; 4 bytes of host memory and of a live allocation.
    unsafe {
        assert_eq!(d.p().cuEventSynchronize(e), ILLEGAL);
        assert_eq!(d.p().cuEventQuery(e), ILLEGAL);
        assert_eq!(d.p().cuMemcpyDtoH(host.as_mut_ptr().cast(), out, 4), ILLEGAL);
    }
    check_sticky(&d, ctx, s, out, ILLEGAL);
}

#[test]
fn a_graph_whose_kernel_node_traps_launches_and_its_fault_arrives_at_the_synchronisation() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let (s, out) = (stream(&d), alloc(&d));
    let exec = kernel_graph(&d, kernel(&d, "trap_k"), out);
    // SAFETY: the test's exec and stream.
    unsafe {
        ok(d.p().cuGraphLaunch(exec, s));
        assert_eq!(d.p().cuStreamQuery(s), LAUNCH_FAILED);
        assert_eq!(d.p().cuStreamSynchronize(s), LAUNCH_FAILED);
        assert_eq!(d.p().cuGraphLaunch(exec, s), LAUNCH_FAILED);
    }
    check_sticky(&d, ctx, s, out, LAUNCH_FAILED);
}

#[test]
fn a_fault_queued_behind_pending_work_arrives_the_same_way() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let (s, out) = (stream(&d), alloc(&d));
    let trap = kernel(&d, "trap_k");
    let probe = Probe::default();
    let call = Call { probe: &probe, tag: 1 };
    // SAFETY: a host function whose argument outlives the stream's work (synchronised
    // below).
    ok(unsafe { d.p().cuLaunchHostFunc(s, Some(common::gated), call.arg()) });
    // Queued behind the gated host function: the launch succeeds before the kernel runs.
    ok(launch(&d, trap, s, out));
    // SAFETY: the test's stream.
    assert_eq!(unsafe { d.p().cuStreamQuery(s) }, CUresult::CUDA_ERROR_NOT_READY);
    probe.open();
    // SAFETY: the test's stream.
    assert_eq!(unsafe { d.p().cuStreamSynchronize(s) }, LAUNCH_FAILED);
    check_sticky(&d, ctx, s, out, LAUNCH_FAILED);
}

#[test]
fn a_launch_the_executor_cannot_start_is_still_refused_by_the_launch() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let (s, out) = (stream(&d), alloc(&d));
    let f = kernel(&d, "fine_k");
    // Too many threads in a block: refused at launch, nothing sticks.
    let mut o = out;
    let mut params = [(&raw mut o).cast::<c_void>()];
    // SAFETY: one parameter, a pointer to its value, alive across the call; handles of the
    // test.
    unsafe {
        let r = d.p().cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, s, params.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!(r, CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(d.p().cuStreamSynchronize(s));
        ok(launch(&d, f, s, out));
        let mut v = 0u32;
        ok(d.p().cuMemcpyDtoH((&raw mut v).cast(), out, 4));
        assert_eq!(v, 7);
        ok(d.p().cuMemFree(out));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

#[test]
fn an_event_recorded_in_a_capture_answers_captured_event_and_invalidates_it() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let s = stream(&d);
    let (mut e, mut plain) = (std::ptr::null_mut(), std::ptr::null_mut());
    let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    // SAFETY: valid out-pointers; handles of the test.
    unsafe {
        ok(d.p().cuEventCreate(&mut e, 0));
        ok(d.p().cuEventCreate(&mut plain, 0));
        ok(d.p().cuEventRecord(plain, s));
        ok(d.p().cuEventSynchronize(plain));
        for ask in 0..3 {
            ok(d.p().cuStreamBeginCapture(s, mode));
            ok(d.p().cuEventRecord(e, s));
            let r = match ask {
                0 => d.p().cuEventQuery(e),
                1 => d.p().cuEventSynchronize(e),
                _ => {
                    let mut ms = 0f32;
                    d.p().cuEventElapsedTime(&mut ms, plain, e)
                }
            };
            assert_eq!(r, CUresult::CUDA_ERROR_CAPTURED_EVENT, "{ask}");
            let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
            ok(d.p().cuStreamIsCapturing(s, &mut status));
            let mut g = std::ptr::null_mut();
            if ask < 2 {
                assert_eq!(status, CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED);
                assert_eq!(d.p().cuStreamEndCapture(s, &mut g), CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
                assert!(g.is_null());
            } else {
                // The elapsed time leaves the capture going on, as on the H200.
                assert_eq!(status, CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE);
                ok(d.p().cuStreamEndCapture(s, &mut g));
                ok(d.p().cuGraphDestroy(g));
            }
        }
        // An event of no capture answers as usual, during a capture too.
        ok(d.p().cuStreamBeginCapture(s, mode));
        ok(d.p().cuEventQuery(plain));
        let mut g = std::ptr::null_mut();
        ok(d.p().cuStreamEndCapture(s, &mut g));
        ok(d.p().cuGraphDestroy(g));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

#[test]
fn instantiating_for_device_launch_with_auto_free_is_invalid() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let s = stream(&d);
    type F = CUgraphInstantiate_flags;
    let auto_free = F::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
    let device = F::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;
    let priority = F::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64;
    // SAFETY: valid out-pointers; handles of the test.
    unsafe {
        // As cudarc's `end_capture(flags)`: end the capture, then instantiate.
        ok(d.p().cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
        let mut g = std::ptr::null_mut();
        ok(d.p().cuStreamEndCapture(s, &mut g));
        let mut x = std::ptr::null_mut();
        // Device launch, alone or with others, is refused for this graph, as on the H200.
        for flags in [device, auto_free | device, device | priority] {
            let r = d.p().cuGraphInstantiateWithFlags(&mut x, g, flags);
            assert_eq!(r, CUresult::CUDA_ERROR_INVALID_VALUE);
            assert!(x.is_null());
        }
        for flags in [0, auto_free, auto_free | priority] {
            ok(d.p().cuGraphInstantiateWithFlags(&mut x, g, flags));
            ok(d.p().cuGraphLaunch(x, s));
            ok(d.p().cuStreamSynchronize(s));
            ok(d.p().cuGraphExecDestroy(x));
        }
        ok(d.p().cuGraphDestroy(g));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

/// `k(depth)` calls `rec(depth)`, which recurses `depth` times in 16-byte frames.
const RECURSION: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .func rec(.param .b32 n)\n{\n.local .align 16 .b8 buf[16];\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n.reg .b64 %rd<2>;\n\
    ld.param.u32 %r1, [n];\nmov.u64 %rd1, buf;\nst.local.u32 [%rd1], %r1;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra DONE;\n\
    sub.u32 %r2, %r1, 1;\n{\n.param .b32 a0;\nst.param.b32 [a0], %r2;\ncall.uni rec, (a0);\n}\nDONE:\nret;\n}\n\
    .visible .entry k(.param .u32 depth)\n{\n.reg .b32 %r<2>;\nld.param.u32 %r1, [depth];\n\
    {\n.param .b32 a0;\nst.param.b32 [a0], %r1;\ncall.uni rec, (a0);\n}\nret;\n}\n";

#[test]
fn a_recursion_past_the_contexts_stack_size_fails_the_launch() {
    let text = CString::new(RECURSION).unwrap();
    // A launch of k(depth) in a world of its own (a fault fails the whole world), in a
    // context with CU_LIMIT_STACK_SIZE `stack` (None: the default, 1024 bytes): the
    // synchronise's status.
    let run = |stack: Option<usize>, depth: u32| {
        let (_s, d) = driver_alone();
        let p = d.p();
        let c = new_context(&d);
        let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut depth = depth;
        let mut params = [(&raw mut depth).cast::<c_void>()];
        // SAFETY: a NUL-terminated image and name, valid out-pointers, one parameter.
        unsafe {
            if let Some(bytes) = stack {
                ok(p.cuCtxSetLimit(CUlimit::CU_LIMIT_STACK_SIZE, bytes));
            }
            ok(p.cuModuleLoadData(&mut m, text.as_ptr().cast()));
            ok(p.cuModuleGetFunction(&mut f, m, c"k".as_ptr()));
            let null = std::ptr::null_mut();
            ok(p.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, null, params.as_mut_ptr(), std::ptr::null_mut()));
            let st = p.cuCtxSynchronize();
            ok(p.cuCtxDestroy(c));
            st
        }
    };
    // 1024 bytes hold 64 frames of 16 bytes.
    assert_eq!(run(None, 63), CUresult::CUDA_SUCCESS);
    assert_eq!(run(None, 64), CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    // A larger stack holds more.
    assert_eq!(run(Some(4096), 255), CUresult::CUDA_SUCCESS);
    assert_eq!(run(Some(4096), 256), CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
}
