//! Streams, host functions and events. "facts" is `docs/driver-facts.md`.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{driver, driver_ptds, new_context, ok, Call, Probe};
use cudrv::sys::{CUevent_flags, CUresult, CUstream};
use cudrv::Driver;
use cudrv_standin::{ledger, STREAM_LEGACY, STREAM_PER_THREAD};

fn new_stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

/// Opens the probe's gate from another thread after `ms` milliseconds.
fn open_later(probe: &'static Probe, ms: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        probe.open();
    })
}

fn leak<T: Default>() -> &'static T {
    Box::leak(Box::default())
}

#[test]
fn host_functions_run_in_order_on_a_driver_thread_and_are_waited_for() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let probe: &'static Probe = leak();
    let calls: Vec<Call> = (0..5).map(|tag| Call { probe, tag }).collect();
    // SAFETY: the calls outlive the stream's work (synchronised below).
    unsafe {
        ok(p.cuLaunchHostFunc(s, Some(common::gated), calls[0].arg()));
        for c in &calls[1..] {
            ok(p.cuLaunchHostFunc(s, Some(common::record), c.arg()));
        }
        assert_eq!(p.cuStreamQuery(s), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(probe.count.load(Ordering::SeqCst), 0);
        let opener = open_later(probe, 30);
        ok(p.cuStreamSynchronize(s));
        opener.join().unwrap();
        assert_eq!(probe.count.load(Ordering::SeqCst), 5);
        ok(p.cuStreamQuery(s));
    }
    assert_eq!(probe.tags(), [0, 1, 2, 3, 4]);
    let threads = probe.threads();
    assert!(threads.iter().all(|t| *t != std::thread::current().id()));
    // SAFETY: handles from the stand-in.
    unsafe {
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn context_synchronize_waits_for_every_stream_including_the_default_one() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let probe: &'static Probe = leak();
    let calls: Vec<Call> = (0..4).map(|tag| Call { probe, tag }).collect();
    // SAFETY: the calls outlive the work (synchronised below).
    unsafe {
        ok(p.cuLaunchHostFunc(s, Some(common::gated), calls[0].arg()));
        for (stream, call) in [
            (std::ptr::null_mut(), &calls[1]),
            (STREAM_LEGACY as usize as CUstream, &calls[2]),
            (STREAM_PER_THREAD as usize as CUstream, &calls[3]),
        ] {
            ok(p.cuLaunchHostFunc(stream, Some(common::gated), call.arg()));
        }
        let opener = open_later(probe, 20);
        ok(p.cuCtxSynchronize());
        opener.join().unwrap();
        assert_eq!(probe.count.load(Ordering::SeqCst), 4);
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn destroyed_streams_finish_their_work_and_double_destroy_is_recorded() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let probe: &'static Probe = leak();
    let call: &'static Call = Box::leak(Box::new(Call { probe, tag: 7 }));
    // SAFETY: the call is leaked; handles from the stand-in.
    unsafe {
        ok(p.cuLaunchHostFunc(s, Some(common::gated), call.arg()));
        ok(p.cuStreamDestroy(s));
        // facts: a real driver crashes here; the stand-in refuses and records it.
        assert_eq!(p.cuStreamDestroy(s), CUresult::CUDA_ERROR_INVALID_HANDLE);
        let h = s as usize as u64;
        let l = ledger();
        assert!(l.double_destroys.contains(&("stream", h)));
        assert!(!l.handle_is_live("stream", h));
        assert_eq!(p.cuStreamQuery(s), CUresult::CUDA_ERROR_INVALID_HANDLE);
        // facts: cuStreamDestroy(NULL) and cuEventDestroy(NULL) are INVALID_HANDLE.
        assert_eq!(p.cuStreamDestroy(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(p.cuEventDestroy(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_HANDLE);
        // The destroyed stream's work still runs, and cuCtxSynchronize waits for it.
        probe.open();
        ok(p.cuCtxSynchronize());
        assert_eq!(probe.tags(), [7]);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn streams_know_their_context() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        for stream in
            [s, std::ptr::null_mut(), STREAM_LEGACY as usize as CUstream, STREAM_PER_THREAD as usize as CUstream]
        {
            let mut c = std::ptr::null_mut();
            ok(p.cuStreamGetCtx(stream, &mut c));
            assert_eq!(c, ctx);
        }
        let (mut c, mut green) = (std::ptr::null_mut(), 0x55 as cudrv::sys::CUgreenCtx);
        ok(p.cuStreamGetCtx_v12050(s, &mut c, &mut green));
        assert_eq!(c, ctx);
        assert!(green.is_null());
        let mut s2 = std::ptr::null_mut();
        ok(p.cuStreamCreateWithPriority(&mut s2, 1, -1));
        assert_eq!(p.cuStreamCreate(&mut s2, 4), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuStreamDestroy(s2));
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
        // With no current context the default stream has none.
        let mut c = std::ptr::null_mut();
        assert_eq!(p.cuStreamGetCtx(std::ptr::null_mut(), &mut c), CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
}

#[test]
fn per_thread_variants_are_emulated() {
    let d = driver_ptds();
    assert_eq!(
        d.entry("cuLaunchHostFunc").unwrap().kind,
        cudrv::EntryKind::Name { bound: Some("cuLaunchHostFunc_v10000_ptsz") }
    );
    let p = d.p();
    let ctx = new_context(&d);
    let counter: &'static AtomicUsize = leak();
    let arg = counter as *const AtomicUsize as *mut c_void;
    let per_thread = STREAM_PER_THREAD as usize as CUstream;
    // SAFETY: the counter is static.
    unsafe {
        ok(p.cuLaunchHostFunc(per_thread, Some(common::count), arg));
        ok(p.cuStreamSynchronize(per_thread));
        assert_eq!(counter.load(Ordering::SeqCst), 1);
        ok(p.cuStreamQuery(per_thread));
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        ok(p.cuEventRecord(e, per_thread));
        ok(p.cuEventSynchronize(e));
        ok(p.cuEventDestroy(e));
        assert_eq!(p.cuLaunchHostFunc(per_thread, None, arg), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn events_complete_with_their_stream_and_time_it() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let probe: &'static Probe = leak();
    let call: &'static Call = Box::leak(Box::new(Call { probe, tag: 1 }));
    // SAFETY: valid out-pointers; the call is leaked.
    unsafe {
        let (mut start, mut end, mut never) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuEventCreate(&mut start, 0));
        ok(p.cuEventCreate(&mut end, 0));
        ok(p.cuEventCreate(&mut never, 0));
        ok(p.cuEventRecord(start, s));
        ok(p.cuLaunchHostFunc(s, Some(common::gated), call.arg()));
        ok(p.cuEventRecord(end, s));
        ok(p.cuEventQuery(start));
        assert_eq!(p.cuEventQuery(end), CUresult::CUDA_ERROR_NOT_READY);
        // An event never recorded is complete, but has no time.
        ok(p.cuEventQuery(never));
        let mut ms = -1.0f32;
        assert_eq!(p.cuEventElapsedTime(&mut ms, start, end), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(p.cuEventElapsedTime(&mut ms, start, never), CUresult::CUDA_ERROR_INVALID_HANDLE);
        let opener = open_later(probe, 30);
        ok(p.cuEventSynchronize(end));
        opener.join().unwrap();
        assert_eq!(probe.count.load(Ordering::SeqCst), 1);
        ok(p.cuEventElapsedTime(&mut ms, start, end));
        assert!((10.0..10_000.0).contains(&ms), "{ms} ms");
        // Both ABI versions of cuEventElapsedTime are emulated.
        let mut ms2 = -1.0f32;
        ok(p.cuEventElapsedTime_v2000(&mut ms2, start, end));
        assert_eq!(ms, ms2);
        ok(p.cuEventElapsedTime(&mut ms, end, start));
        assert_eq!(ms, 0.0, "never negative");

        // Without timing: INVALID_HANDLE.
        let mut untimed = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut untimed, CUevent_flags::CU_EVENT_DISABLE_TIMING.0));
        ok(p.cuEventRecord(untimed, s));
        assert_eq!(p.cuEventElapsedTime(&mut ms, start, untimed), CUresult::CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(
            p.cuEventCreate(&mut untimed, CUevent_flags::CU_EVENT_INTERPROCESS.0),
            CUresult::CUDA_ERROR_INVALID_VALUE,
            "interprocess needs DISABLE_TIMING"
        );

        for e in [start, end, never] {
            ok(p.cuEventDestroy(e));
        }
        assert_eq!(p.cuEventDestroy(end), CUresult::CUDA_ERROR_INVALID_HANDLE);
        assert!(ledger().double_destroys.contains(&("event", end as usize as u64)));
        assert_eq!(p.cuEventQuery(end), CUresult::CUDA_ERROR_INVALID_HANDLE);
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_stream_waits_for_an_event_of_another_stream() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let (first, second) = (new_stream(&d), new_stream(&d));
    let probe: &'static Probe = leak();
    let calls: &'static [Call] = Box::leak(Box::new([Call { probe, tag: 1 }, Call { probe, tag: 2 }]));
    // SAFETY: the calls are leaked; handles from the stand-in.
    unsafe {
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        ok(p.cuLaunchHostFunc(first, Some(common::gated), calls[0].arg()));
        ok(p.cuEventRecord(e, first));
        ok(p.cuStreamWaitEvent(second, e, 0));
        ok(p.cuLaunchHostFunc(second, Some(common::record), calls[1].arg()));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(probe.count.load(Ordering::SeqCst), 0, "second waits for first");
        assert_eq!(p.cuStreamQuery(second), CUresult::CUDA_ERROR_NOT_READY);
        probe.open();
        ok(p.cuStreamSynchronize(second));
        assert_eq!(probe.tags(), [1, 2]);
        assert_eq!(p.cuStreamWaitEvent(second, e, 4), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuEventDestroy(e));
        ok(p.cuStreamDestroy(first));
        ok(p.cuStreamDestroy(second));
        ok(p.cuCtxDestroy(ctx));
    }
}
