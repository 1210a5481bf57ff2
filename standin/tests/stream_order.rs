//! Stream order as a GPU keeps it: work queued behind a blocked host function waits for
//! it, on its stream only; the legacy default stream waits for blocking streams, not for
//! non-blocking ones; a stream-ordered free makes its memory reusable at its point in the
//! stream order; queued work that faults leaves the context sticky-failed, reported at
//! the next synchronisation. Each test works in a context of its own.

mod common;

use std::ffi::c_void;
use std::time::Duration;

use common::{driver, driver_alone, gated, new_context, ok, Call, Probe};
use cudrv::sys::{CUdeviceptr, CUresult, CUstream};
use cudrv::Driver;

const N: usize = 1024;
const BLOCKING: u32 = 0;
const NON_BLOCKING: u32 = 1;

fn stream(d: &Driver, flags: u32) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, flags) });
    s
}

fn alloc(d: &Driver) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut p, N * 4) });
    // SAFETY: a live allocation of N values.
    ok(unsafe { d.p().cuMemsetD32(p, 0, N) });
    p
}

/// Pinned host memory holding N copies of `value` (asynchronous copies from pageable
/// memory are done at the call, as on a real driver).
fn pinned(d: &Driver, value: u32) -> *mut u32 {
    let mut h: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAllocHost(&mut h, N * 4) });
    let h = h.cast::<u32>();
    // SAFETY: N writable values.
    unsafe { std::slice::from_raw_parts_mut(h, N) }.fill(value);
    h
}

/// The first value at `p`, read with a synchronous copy.
fn first(d: &Driver, p: CUdeviceptr) -> u32 {
    let mut v = 0u32;
    // SAFETY: a live allocation; a 4-byte destination.
    ok(unsafe { d.p().cuMemcpyDtoH((&mut v as *mut u32).cast(), p, 4) });
    v
}

fn leak<T: Default>() -> &'static T {
    Box::leak(Box::default())
}

/// Blocks `s` with a host function waiting at `probe`'s gate.
fn block(d: &Driver, s: CUstream, probe: &'static Probe) {
    let call: &'static Call = Box::leak(Box::new(Call { probe, tag: 0 }));
    // SAFETY: the argument lives for ever.
    ok(unsafe { d.p().cuLaunchHostFunc(s, Some(gated), call.arg()) });
}

fn query(d: &Driver, s: CUstream) -> CUresult {
    // SAFETY: a live stream (or the legacy stream).
    unsafe { d.p().cuStreamQuery(s) }
}

#[test]
fn a_blocked_host_function_delays_its_streams_later_copy_and_not_another_streams() {
    // The synchronous read of `a` below races with the copy queued into it on purpose (it
    // shows the copy has not run): in a world of its own, where the sanitizer's report of
    // that race is checked too.
    let (world, d) = driver_alone();
    world.sanitize("races").unwrap();
    let ctx = new_context(&d);
    let (s1, s2) = (stream(&d, NON_BLOCKING), stream(&d, NON_BLOCKING));
    let (a, b, h) = (alloc(&d), alloc(&d), pinned(&d, 7));
    let probe = leak::<Probe>();
    block(&d, s1, probe);
    // SAFETY: live allocations of N values, pinned memory of N values, live streams.
    unsafe {
        ok(d.p().cuMemcpyHtoDAsync(a, h.cast(), N * 4, s1));
        ok(d.p().cuMemcpyHtoDAsync(b, h.cast(), N * 4, s2));
        ok(d.p().cuStreamSynchronize(s2));
    }
    assert_eq!(first(&d, b), 7, "the other stream's copy is done");
    assert_eq!(query(&d, s1), CUresult::CUDA_ERROR_NOT_READY);
    // A synchronous copy (the legacy stream) does not wait for a non-blocking stream.
    assert_eq!(first(&d, a), 0, "the blocked stream's copy has not run");
    probe.open();
    // SAFETY: a live stream; then handles of the test.
    unsafe {
        ok(d.p().cuStreamSynchronize(s1));
        assert_eq!(first(&d, a), 7);
        ok(d.p().cuCtxDestroy(ctx));
    }
    let reports = world.sanitizer_reports();
    assert_eq!(reports.iter().map(|r| r.kind).collect::<Vec<_>>(), ["race"], "{reports:?}");
    assert!(reports[0].text.contains(&format!("{a:#x}")), "{}", reports[0].text);
}

#[test]
fn the_legacy_stream_waits_for_blocking_streams_only() {
    let d = driver();
    let ctx = new_context(&d);
    let (blocking, non_blocking) = (stream(&d, BLOCKING), stream(&d, NON_BLOCKING));
    // (Allocated first: its synchronous memset would wait for the blocked blocking stream.)
    let z = alloc(&d);
    let (on_blocking, on_non_blocking) = (leak::<Probe>(), leak::<Probe>());
    block(&d, blocking, on_blocking);
    block(&d, non_blocking, on_non_blocking);
    let legacy: CUstream = std::ptr::null_mut();
    // SAFETY: a live allocation of N values; the legacy stream.
    ok(unsafe { d.p().cuMemsetD32Async(z, 5, N, legacy) });
    // The legacy stream's memset waits for the blocking stream's host function.
    assert_eq!(query(&d, legacy), CUresult::CUDA_ERROR_NOT_READY);
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        on_blocking.open();
    });
    // SAFETY: the legacy stream. It returns once the blocking stream's work is done, while
    // the non-blocking stream is still held back.
    ok(unsafe { d.p().cuStreamSynchronize(legacy) });
    opener.join().unwrap();
    assert_eq!(first(&d, z), 5);
    assert_eq!(query(&d, blocking), CUresult::CUDA_SUCCESS);
    assert_eq!(query(&d, non_blocking), CUresult::CUDA_ERROR_NOT_READY);
    // Work on a blocking stream waits for the legacy stream's: hold the legacy stream back.
    let legacy_gate = leak::<Probe>();
    block(&d, legacy, legacy_gate);
    // SAFETY: as above.
    ok(unsafe { d.p().cuMemsetD32Async(z, 6, N, blocking) });
    assert_eq!(query(&d, blocking), CUresult::CUDA_ERROR_NOT_READY);
    legacy_gate.open();
    on_non_blocking.open();
    // SAFETY: live streams; then handles of the test.
    unsafe {
        ok(d.p().cuStreamSynchronize(blocking));
        assert_eq!(first(&d, z), 6);
        ok(d.p().cuCtxDestroy(ctx));
    }
}

#[test]
fn a_stream_ordered_free_makes_its_memory_reusable_at_its_point_in_the_stream_order() {
    let d = driver();
    let ctx = new_context(&d);
    let (s1, s2) = (stream(&d, NON_BLOCKING), stream(&d, NON_BLOCKING));
    let probe = leak::<Probe>();
    let (mut p, mut q, mut r) = (0, 0, 0);
    // SAFETY: valid out-pointers, live streams.
    unsafe {
        ok(d.p().cuMemAllocAsync(&mut p, N * 4, s1));
        ok(d.p().cuStreamSynchronize(s1));
        block(&d, s1, probe);
        ok(d.p().cuMemFreeAsync(p, s1));
        // The free is queued: its memory is not reusable yet.
        ok(d.p().cuMemAllocAsync(&mut q, N * 4, s2));
        assert_ne!(q, p);
        // Freeing it again before the free is done is a double free.
        assert_eq!(d.p().cuMemFreeAsync(p, s2), CUresult::CUDA_ERROR_INVALID_VALUE);
        probe.open();
        ok(d.p().cuStreamSynchronize(s1));
        // Now it is: the pool's next allocation of that size gets it.
        ok(d.p().cuMemAllocAsync(&mut r, N * 4, s2));
        assert_eq!(r, p);
        ok(d.p().cuMemFreeAsync(q, s2));
        ok(d.p().cuMemFreeAsync(r, s2));
        ok(d.p().cuStreamSynchronize(s2));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

#[test]
fn queued_work_that_faults_is_reported_at_the_next_synchronisation() {
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let s = stream(&d, NON_BLOCKING);
    let (x, h) = (alloc(&d), pinned(&d, 1));
    let probe = leak::<Probe>();
    block(&d, s, probe);
    // SAFETY: a live allocation and pinned memory of N values; a live stream. The copy is
    // checked when queued (the memory is live), and fails when it runs (freed by then).
    unsafe {
        ok(d.p().cuMemcpyHtoDAsync(x, h.cast(), N * 4, s));
        ok(d.p().cuMemFree(x));
        probe.open();
        assert_eq!(d.p().cuStreamSynchronize(s), CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(d.p().cuCtxSynchronize(), CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        ok(d.p().cuCtxDestroy(ctx));
    }
}
