//! Issue 25: a pinned buffer leaked by its drop is named by its report: the memory (its
//! host address, as the argument of the `cuMemFreeHost` that was not called) as what
//! leaked, after the failed call that caused it. Checked on each way a drop can leak it,
//! then under random injected faults: every pinned allocation left live is named by a
//! report, and every report is of a fault that was injected.

mod common;

use std::ffi::c_void;

use common::{clear_current, my_reports, standin_driver, Rng};
use cudrv::sys::CUresult;
use cudrv::{Call, Context, DeviceBuffer, PinnedBuffer, Stream};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// Whether the stand-in still holds the allocation at `ptr` (not freed).
fn live(ptr: *mut c_void) -> bool {
    cudrv_standin::ledger().allocation(ptr as u64).is_some()
}

/// How a report names the memory it leaked: the free that was not called.
fn free_not_called(ptr: *mut c_void) -> String {
    format!("cuMemFreeHost({:#x}) was not called", ptr as usize)
}

/// The events live now.
fn live_events() -> Vec<u64> {
    cudrv_standin::ledger().live_handles.iter().filter(|(k, _)| *k == "event").map(|&(_, h)| h).collect()
}

#[test]
fn a_failed_wait_in_the_drop_leaks_the_memory_and_its_report_names_it() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let device = DeviceBuffer::<u32>::from_slice(&ctx, &[5; 1024]).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&ctx, 1024).unwrap();
    device.copy_to_pinned_async(&mut pinned, &stream).unwrap();
    let ptr = pinned.as_raw();
    let before = live_events();
    faults::inject_on_this_thread(cudrv::call::cuEventSynchronize, CUresult::CUDA_ERROR_LAUNCH_FAILED, Times::Once);
    drop(pinned);
    faults::clear();
    assert!(live(ptr), "the wait failed: the memory is leaked, not freed under the copy");
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    // The cause: the failed wait, naming the event it was given and its status.
    let event = r
        .strip_prefix("cuEventSynchronize(0x")
        .and_then(|rest| rest.split(')').next())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("{r} should start with the failed wait"));
    assert!(before.contains(&event), "{r} names {event:#x}, not the buffer's event");
    assert!(r.contains("CUDA_ERROR_LAUNCH_FAILED"), "{r}");
    // What leaked: the memory, by the free that was not called, and its size.
    assert!(r.contains(&free_not_called(ptr)), "{r} should name the leaked memory");
    assert!(r.contains(&format!("4096 bytes of pinned memory at {:#x} leaked", ptr as usize)), "{r}");
    stream.synchronize().unwrap();
}

#[test]
fn a_context_that_cannot_be_entered_for_the_drop_leaks_the_memory_and_its_report_names_it() {
    let d = standin_driver();
    let ctx = context();
    let pinned = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
    let ptr = pinned.as_raw();
    // No context current: the drop must switch to the buffer's, and cannot.
    clear_current(d);
    faults::inject_on_this_thread(cudrv::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    drop(pinned);
    faults::clear();
    assert!(live(ptr), "nothing could be waited for: the memory is leaked");
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].starts_with("cuCtxSetCurrent("), "{reports:?}");
    assert!(reports[0].contains(&free_not_called(ptr)), "{reports:?} should name the leaked memory");
}

#[test]
fn a_failed_free_is_reported_naming_the_memory_and_a_freed_buffer_makes_no_report() {
    let ctx = context();
    let pinned = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
    let ptr = pinned.as_raw();
    faults::inject_on_this_thread(cudrv::call::cuMemFreeHost, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    drop(pinned);
    faults::clear();
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].starts_with(&format!("cuMemFreeHost({:#x}) failed", ptr as usize)), "{reports:?}");
    assert!(live(ptr));

    let pinned = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
    let ptr = pinned.as_raw();
    drop(pinned);
    assert!(!live(ptr), "freed");
    assert!(my_reports().is_empty());
}

/// The calls a pinned buffer's life makes: allocation, copies and their cover, the drop's
/// context switch, wait and free.
const CALLS: [Call; 12] = [
    cudrv::call::cuMemAllocHost,
    cudrv::call::cuMemFreeHost,
    cudrv::call::cuEventCreate,
    cudrv::call::cuEventDestroy,
    cudrv::call::cuEventRecord,
    cudrv::call::cuEventSynchronize,
    cudrv::call::cuStreamWaitEvent,
    cudrv::call::cuStreamSynchronize,
    cudrv::call::cuMemcpyHtoDAsync,
    cudrv::call::cuMemcpyDtoHAsync,
    cudrv::call::cuCtxSetCurrent,
    cudrv::call::cuCtxGetCurrent,
];

const STATUSES: [(CUresult, &str); 3] = [
    (CUresult::CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"),
    (CUresult::CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"),
    (CUresult::CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"),
];

/// Whether `report` is of the failure of `call` (or of one of its variants) with `status`.
fn is_of(report: &str, call: Call, status: &str) -> bool {
    let name = call.name();
    let of_call = report.strip_prefix(name).is_some_and(|rest| rest.starts_with('(') || rest.starts_with('_'));
    of_call && report.contains(&format!(": {status} ("))
}

/// One thread's random pinned buffers: each step injects one or two faults (before the
/// allocation, a copy or the drop), with or without the buffer's context current, then
/// drops everything. Returns how many allocations leaked (each checked to be named).
fn random_pinned_work(ctx: &Context, seed: u64, steps: usize) -> usize {
    let d = standin_driver();
    let mut rng = Rng(seed);
    let stream = Stream::new(ctx, 0).unwrap();
    let device = DeviceBuffer::<u32>::from_slice(ctx, &[3; 256]).unwrap();
    let mut leaked = 0;
    for step in 0..steps {
        let faults: Vec<(Call, CUresult, &str)> = (0..1 + rng.below(2))
            .map(|_| {
                let (status, name) = STATUSES[rng.below(STATUSES.len())];
                (CALLS[rng.below(CALLS.len())], status, name)
            })
            .collect();
        let when = rng.below(3);
        let inject = || {
            for &(call, status, _) in &faults {
                faults::inject_on_this_thread(call, status, Times::Once);
            }
        };
        if rng.below(2) == 0 {
            ctx.set_current().unwrap();
        } else {
            clear_current(d);
        }
        let len = 1 + rng.below(256);
        if when == 0 {
            inject();
        }
        let mut allocated = Vec::new();
        if let Ok(mut pinned) = PinnedBuffer::<u32>::zeroed(ctx, len) {
            allocated.push(pinned.as_raw());
            if when == 1 {
                inject();
            }
            let _ = match rng.below(3) {
                0 => device.copy_to_pinned_async(&mut pinned, &stream),
                1 => device.copy_from_pinned_async(&pinned, &stream),
                _ => Ok(()),
            };
            if when == 2 {
                inject();
            }
            drop(pinned);
        }
        faults::clear();
        // The work of this step is done before its memory is looked at.
        let _ = stream.synchronize();
        let reports = my_reports();
        let injected = || format!("step {step} (seed {seed:#x}), faults {faults:?}, reports {reports:#?}");
        for r in &reports {
            assert!(
                faults.iter().any(|&(call, _, status)| is_of(r, call, status)),
                "a report of no injected fault: {r}\n{}",
                injected()
            );
        }
        for &ptr in &allocated {
            let named = reports
                .iter()
                .filter(|r| {
                    r.contains(&free_not_called(ptr))
                        || r.starts_with(&format!("cuMemFreeHost({:#x}) failed", ptr as usize))
                })
                .count();
            if live(ptr) {
                leaked += 1;
                assert_eq!(
                    named,
                    1,
                    "the pinned allocation at {ptr:?} leaked; one report should name it\n{}",
                    injected()
                );
            } else {
                assert_eq!(named, 0, "{ptr:?} was freed but a report says it leaked\n{}", injected());
            }
        }
    }
    leaked
}

#[test]
fn under_random_faults_every_leaked_pinned_allocation_is_named_by_one_report_of_an_injected_fault() {
    let ctx = context();
    let seeds = [0x9e37_79b9_7f4a_7c15_u64, 0x2545_f491_4f6c_dd1d, 0xdead_beef_cafe_f00d, 0x0123_4567_89ab_cdef];
    let leaked: usize = std::thread::scope(|s| {
        let workers: Vec<_> = seeds
            .iter()
            .map(|&seed| {
                let ctx = ctx.clone();
                s.spawn(move || {
                    // Each worker's reports are its own (the capture is per thread).
                    common::capture_reports();
                    random_pinned_work(&ctx, seed, 1500)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    // The faults reach the drops: some allocations did leak (each named, checked above).
    assert!(leaked > 100, "only {leaked} allocations leaked: the faults did not reach the drops");
    println!("{leaked} pinned allocations leaked, each named by one report");
}
