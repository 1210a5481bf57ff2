//! Two virtual devices: peer access per context pair (driver-facts.md, "Two GPUs"), peer
//! copies, events across devices and kernels on the second device. Every test of this
//! binary sets two devices ([`set_device_count`]); the environment variable is checked in
//! a child process.

mod common;

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use common::{child_scenario, driver, ok, run_child, Call, Probe};
use cudrv::sys::{CUcontext, CUdevice_P2PAttribute, CUdeviceptr, CUresult, CUstream};
use cudrv::Driver;
use cudrv_standin::{device_count, set_device_count};

/// A 13.5 stand-in with two devices.
fn two_devices() -> Driver {
    assert!(set_device_count(2));
    driver()
}

/// Makes a context on `device` (pushed: current on this thread).
fn context_on(d: &Driver, device: i32) -> CUcontext {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; no creation parameters.
    ok(unsafe { d.p().cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, device) });
    ctx
}

fn set_current(d: &Driver, ctx: CUcontext) {
    // SAFETY: a context of the test.
    ok(unsafe { d.p().cuCtxSetCurrent(ctx) });
}

fn destroy(d: &Driver, contexts: &[CUcontext]) {
    for &c in contexts {
        // SAFETY: contexts of the test.
        ok(unsafe { d.p().cuCtxDestroy(c) });
    }
}

#[test]
fn two_devices_can_access_each_other() {
    let d = two_devices();
    let p = d.p();
    // SAFETY: valid out-pointers throughout.
    unsafe {
        let mut n = 0;
        ok(p.cuDeviceGetCount(&mut n));
        assert_eq!(n, 2);
        let can = |a, b| {
            let mut v = -1;
            match p.cuDeviceCanAccessPeer(&mut v, a, b) {
                CUresult::CUDA_SUCCESS => Ok(v),
                e => Err(e),
            }
        };
        assert_eq!(can(0, 1), Ok(1));
        assert_eq!(can(1, 0), Ok(1));
        // driver-facts.md: a device and itself: 0.
        assert_eq!(can(0, 0), Ok(0));
        assert_eq!(can(0, 2), Err(CUresult::CUDA_ERROR_INVALID_DEVICE));
        type A = CUdevice_P2PAttribute;
        let attr = |a, src, dst| {
            let mut v = -1;
            match p.cuDeviceGetP2PAttribute(&mut v, a, src, dst) {
                CUresult::CUDA_SUCCESS => Ok(v),
                e => Err(e),
            }
        };
        assert_eq!(attr(A::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1), Ok(1));
        assert_eq!(attr(A::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 1, 0), Ok(1));
        assert_eq!(attr(A::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0, 1), Ok(0));
        assert_eq!(attr(A::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 1), Err(CUresult::CUDA_ERROR_INVALID_DEVICE));
        assert_eq!(attr(CUdevice_P2PAttribute(99), 0, 1), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        // Each device has its own primary context.
        let (mut p0, mut p1) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDevicePrimaryCtxRetain(&mut p0, 0));
        ok(p.cuDevicePrimaryCtxRetain(&mut p1, 1));
        assert_ne!(p0, p1);
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxRelease(1));
    }
    assert!(!set_device_count(9));
    assert_eq!(device_count(), 2);
}

#[test]
fn peer_access_is_a_state_of_a_context_pair() {
    let d = two_devices();
    let p = d.p();
    let c1 = context_on(&d, 1);
    let c0b = context_on(&d, 0);
    let c0 = context_on(&d, 0);
    let already = CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    let not_enabled = CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    // SAFETY: contexts of the test.
    unsafe {
        // driver-facts.md: enabling twice is 704, disabling when not enabled 705.
        ok(p.cuCtxEnablePeerAccess(c1, 0));
        assert_eq!(p.cuCtxEnablePeerAccess(c1, 0), already);
        assert_eq!(already.0, 704);
        // Per pair: another context of device 0 has not enabled it.
        set_current(&d, c0b);
        assert_eq!(p.cuCtxDisablePeerAccess(c1), not_enabled);
        assert_eq!(not_enabled.0, 705);
        ok(p.cuCtxEnablePeerAccess(c1, 0));
        // Nor has the other direction.
        set_current(&d, c1);
        assert_eq!(p.cuCtxDisablePeerAccess(c0), not_enabled);
        ok(p.cuCtxEnablePeerAccess(c0, 0));
        // Toward the current context's own device: CUDA_ERROR_INVALID_DEVICE.
        set_current(&d, c0);
        assert_eq!(p.cuCtxEnablePeerAccess(c0b, 0), CUresult::CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(p.cuCtxEnablePeerAccess(c0, 0), CUresult::CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(p.cuCtxEnablePeerAccess(c1, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuCtxDisablePeerAccess(c1));
        assert_eq!(p.cuCtxDisablePeerAccess(c1), not_enabled);
        ok(p.cuCtxEnablePeerAccess(c1, 0));
        // With no current context: CUDA_ERROR_INVALID_CONTEXT.
        let mut popped = std::ptr::null_mut();
        while p.cuCtxPopCurrent(&mut popped) == CUresult::CUDA_SUCCESS {}
        assert_eq!(p.cuCtxEnablePeerAccess(c1, 0), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        // Destroying a context ends its pairs: c1's toward c0 goes with it.
        set_current(&d, c0);
        destroy(&d, &[c1]);
        // A destroyed context answers CUDA_ERROR_CONTEXT_IS_DESTROYED (driver-facts.md, "Edge
        // cases on the real driver").
        assert_eq!(p.cuCtxEnablePeerAccess(c1, 0), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        let c1 = context_on(&d, 1);
        ok(p.cuCtxEnablePeerAccess(c0, 0));
        set_current(&d, c0);
        destroy(&d, &[c0]);
        set_current(&d, c1);
        assert_eq!(p.cuCtxDisablePeerAccess(c0), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        destroy(&d, &[c1, c0b]);

        // A primary context's pairs end with its reset, which destroys it: the fresh one
        // retained after it has none.
        let (mut p0, mut p1) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDevicePrimaryCtxRetain(&mut p0, 0));
        ok(p.cuDevicePrimaryCtxRetain(&mut p1, 1));
        set_current(&d, p0);
        ok(p.cuCtxEnablePeerAccess(p1, 0));
        ok(p.cuDevicePrimaryCtxReset(0));
        assert_eq!(p.cuCtxEnablePeerAccess(p1, 0), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        ok(p.cuDevicePrimaryCtxRetain(&mut p0, 0));
        set_current(&d, p0);
        ok(p.cuCtxEnablePeerAccess(p1, 0));
        ok(p.cuCtxDisablePeerAccess(p1));
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxRelease(1));
    }
}

fn alloc(d: &Driver, data: &[u8]) -> CUdeviceptr {
    let mut ptr = 0;
    // SAFETY: valid out-pointer; `data` has its length in bytes.
    unsafe {
        ok(d.p().cuMemAlloc(&mut ptr, data.len()));
        ok(d.p().cuMemcpyHtoD(ptr, data.as_ptr().cast(), data.len()));
    }
    ptr
}

fn read(d: &Driver, ptr: CUdeviceptr, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    // SAFETY: `out` has n bytes.
    ok(unsafe { d.p().cuMemcpyDtoH(out.as_mut_ptr().cast(), ptr, n) });
    out
}

#[test]
fn peer_copies_move_bytes_between_the_devices() {
    let d = two_devices();
    let p = d.p();
    let c0 = context_on(&d, 0);
    let src = alloc(&d, &(0..=255).collect::<Vec<u8>>());
    let c1 = context_on(&d, 1);
    let dst = alloc(&d, &[0; 256]);
    let mut s1: CUstream = std::ptr::null_mut();
    // SAFETY: allocations, contexts and a stream of the test.
    unsafe {
        ok(p.cuStreamCreate(&mut s1, 0));
        // Without peer access (a real driver stages it), then with it, then async.
        ok(p.cuMemcpyPeer(dst, c1, src, c0, 128));
        assert_eq!(read(&d, dst, 256)[..130], (0..128).chain([0, 0]).collect::<Vec<u8>>()[..]);
        ok(p.cuCtxEnablePeerAccess(c0, 0));
        ok(p.cuMemcpyPeer(dst + 128, c1, src + 128, c0, 128));
        assert_eq!(read(&d, dst, 256), (0..=255).collect::<Vec<u8>>());
        ok(p.cuMemsetD8(dst, 0, 256));
        ok(p.cuMemcpyPeerAsync(dst, c1, src, c0, 256, s1));
        ok(p.cuStreamSynchronize(s1));
        assert_eq!(read(&d, dst, 256), (0..=255).collect::<Vec<u8>>());
        ok(p.cuMemcpyPeer(dst, c1, src, c0, 0));
        // Ranges are checked as for every copy; contexts must be live.
        assert_eq!(p.cuMemcpyPeer(dst, c1, src, c0, 257), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemcpyPeer(dst, c1, src + 255, c0, 2), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemcpyPeer(dst, 0x10 as CUcontext, src, c0, 1), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        ok(p.cuStreamDestroy(s1));
        ok(p.cuMemFree(dst));
        set_current(&d, c0);
        ok(p.cuMemFree(src));
        destroy(&d, &[c0]);
        // driver-facts.md, "Edge cases on the real driver": a destroyed context's handle
        // answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
        assert_eq!(p.cuMemcpyPeer(dst, c1, src, c0, 1), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        destroy(&d, &[c1]);
    }
}

#[test]
fn a_stream_of_one_device_waits_for_an_event_of_the_other() {
    let d = two_devices();
    let p = d.p();
    let probe = Probe::default();
    let (first, second) = (Call { probe: &probe, tag: 0 }, Call { probe: &probe, tag: 1 });
    let c0 = context_on(&d, 0);
    let (mut s0, mut e0): (CUstream, _) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers; handles of the test; the calls outlive the streams' work
    // (synchronised below).
    unsafe {
        ok(p.cuStreamCreate(&mut s0, 0));
        ok(p.cuEventCreate(&mut e0, 0));
        // Work on device 0 that waits at the gate, then the event.
        ok(p.cuLaunchHostFunc(s0, Some(common::gated), first.arg()));
        ok(p.cuEventRecord(e0, s0));
        assert_eq!(p.cuEventQuery(e0), CUresult::CUDA_ERROR_NOT_READY);

        let c1 = context_on(&d, 1);
        let mut s1: CUstream = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s1, 0));
        ok(p.cuStreamWaitEvent(s1, e0, 0));
        ok(p.cuLaunchHostFunc(s1, Some(common::record), second.arg()));
        assert_eq!(p.cuStreamQuery(s1), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(probe.count.load(Ordering::SeqCst), 0, "device 1 waits for device 0's event");
        probe.open();
        ok(p.cuStreamSynchronize(s1));
        assert_eq!(probe.tags(), [0, 1]);
        // The event completes for device 1's context too.
        ok(p.cuEventSynchronize(e0));
        ok(p.cuEventQuery(e0));
        // An event of device 1 recorded on its stream, timed against device 0's.
        let mut e1 = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e1, 0));
        ok(p.cuEventRecord(e1, s1));
        // Work is asynchronous: the record completes in stream order, as on a GPU.
        ok(p.cuEventSynchronize(e1));
        let mut ms = -1.0f32;
        ok(p.cuEventElapsedTime(&mut ms, e0, e1));
        assert!(ms >= 0.0);
        ok(p.cuEventDestroy(e1));
        ok(p.cuStreamDestroy(s1));
        destroy(&d, &[c1]);
        ok(p.cuEventDestroy(e0));
        ok(p.cuStreamDestroy(s0));
        destroy(&d, &[c0]);
    }
}

#[test]
fn a_kernel_runs_on_the_second_device_over_a_peer_copy() {
    let d = two_devices();
    let p = d.p();
    let c0 = context_on(&d, 0);
    let values: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let src = alloc(&d, &values);
    let c1 = context_on(&d, 1);
    let dst = alloc(&d, &[0; 16]);
    let image = std::ffi::CString::new(include_str!("../../examples/kernels/scale_f32.ptx")).unwrap();
    let mut m = std::ptr::null_mut();
    let mut f = std::ptr::null_mut();
    let (s, n) = (10.0f32, 4i32);
    let mut args = [
        (&dst as *const u64).cast_mut().cast::<c_void>(),
        (&s as *const f32).cast_mut().cast(),
        (&n as *const i32).cast_mut().cast(),
    ];
    // SAFETY: valid out-pointers; handles and allocations of the test.
    unsafe {
        ok(p.cuModuleLoadData(&mut m, image.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr()));
        ok(p.cuMemcpyPeer(dst, c1, src, c0, 16));
        ok(p.cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, std::ptr::null_mut(), args.as_mut_ptr(), std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
        let got: Vec<f32> =
            read(&d, dst, 16).chunks_exact(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [10.0, 20.0, 30.0, 40.0]);
        ok(p.cuModuleUnload(m));
        ok(p.cuMemFree(dst));
        ok(p.cuMemFree(src));
        destroy(&d, &[c1, c0]);
    }
}

#[test]
fn the_environment_chooses_the_device_count() {
    for (value, count) in [("2", "2"), ("0", "0"), ("9", "1"), ("abc", "1")] {
        let out = run_child("env_devices", &[("CUDRV_STANDIN_DEVICES", value), ("WANT_DEVICES", count)]);
        assert!(out.contains("SCENARIO-PASSED"));
    }
}

#[test]
#[ignore = "run by run_child"]
fn child() {
    let Some(scenario) = child_scenario() else {
        return;
    };
    assert_eq!(scenario, "env_devices");
    let want: i32 = std::env::var("WANT_DEVICES").unwrap().parse().unwrap();
    let d = driver();
    let mut n = -1;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuDeviceGetCount(&mut n) });
    assert_eq!(n, want);
    let mut dev = -1;
    // SAFETY: valid out-pointer.
    let last = unsafe { d.p().cuDeviceGet(&mut dev, want - 1) };
    assert_eq!(last == CUresult::CUDA_SUCCESS, want > 0);
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { d.p().cuDeviceGet(&mut dev, want) }, CUresult::CUDA_ERROR_INVALID_DEVICE);
    println!("SCENARIO-PASSED");
}
