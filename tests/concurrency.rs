//! Many threads creating and dropping handles under random injected faults, and racing
//! IPC imports against drops; afterwards the stand-in's ledger is checked. Each scenario
//! runs in its own process so that the ledger holds only its own work.

mod common;

use std::collections::HashSet;
use std::sync::Barrier;

use common::{run_child, standin_driver, Rng};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, Event, ImportedBuffer, MemoryPool, PinnedBuffer, Stream};
use cudrv_standin::{faults, Times};

#[test]
fn sixteen_threads_with_random_faults_leak_only_what_they_report() {
    run_child("random-faults", &[]);
}

#[test]
fn concurrent_imports_and_drops_never_map_twice() {
    run_child("ipc-race", &[]);
}

const SYMBOLS: [cudrv::Call; 12] = [
    cudrv::call::cuStreamCreate,
    cudrv::call::cuStreamDestroy,
    cudrv::call::cuEventCreate,
    cudrv::call::cuEventDestroy,
    cudrv::call::cuMemAlloc,
    cudrv::call::cuMemFree,
    cudrv::call::cuMemAllocAsync,
    cudrv::call::cuMemFreeAsync,
    cudrv::call::cuMemAllocHost,
    cudrv::call::cuMemFreeHost,
    cudrv::call::cuCtxSetCurrent,
    cudrv::call::cuMemcpyHtoD,
];

fn random_work(ctx: &Context, seed: u64) {
    let mut rng = Rng(seed);
    let stream = Stream::new(ctx, 0).unwrap();
    for _ in 0..300 {
        if rng.next() % 4 == 0 {
            let symbol = SYMBOLS[(rng.next() % SYMBOLS.len() as u64) as usize];
            faults::inject_on_this_thread(symbol, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
        }
        match rng.next() % 7 {
            6 => {
                // A fault that hits the drop itself: its context cannot be entered, so the
                // buffer is leaked and the leak reported.
                if let Ok(b) = DeviceBuffer::<u8>::alloc(ctx, 64) {
                    faults::inject_on_this_thread(
                        cudrv::call::cuCtxSetCurrent,
                        CUresult::CUDA_ERROR_UNKNOWN,
                        Times::Once,
                    );
                    drop(b);
                }
            }
            0 => drop(Stream::new(ctx, 0)),
            1 => drop(Event::new(ctx, 0)),
            2 => {
                if let Ok(b) = DeviceBuffer::<u8>::alloc(ctx, 128) {
                    let _ = b.copy_from_host(&[1, 2, 3]);
                }
            }
            3 => drop(DeviceBuffer::<u8>::alloc_async(&stream, 256)),
            4 => drop(PinnedBuffer::<u8>::zeroed(ctx, 64)),
            _ => {
                let keep = DeviceBuffer::<u8>::alloc(ctx, 32);
                let clone = keep.as_ref().ok().cloned();
                drop(keep);
                drop(clone);
            }
        }
        faults::clear();
    }
    faults::clear();
}

#[test]
#[ignore = "run by the other tests in a child process"]
fn child() {
    let Some(scenario) = common::child_scenario() else { return };
    let d = standin_driver();
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let reports = common::collect_all_reports();
    match scenario.as_str() {
        "random-faults" => {
            cudrv_standin::ledger_reset();
            std::thread::scope(|s| {
                for t in 0..16u64 {
                    let ctx = ctx.clone();
                    s.spawn(move || random_work(&ctx, 0x9e37_79b9_7f4a_7c15 ^ (t + 1)));
                }
            });
            let ledger = cudrv_standin::ledger();
            assert!(ledger.double_frees.is_empty(), "double frees: {:?}", ledger.double_frees);
            assert!(ledger.double_destroys.is_empty(), "double destroys: {:?}", ledger.double_destroys);
            assert!(ledger.use_after_free.is_empty(), "use after free: {:?}", ledger.use_after_free);
            // Every allocation still live was reported (its free failed, or was not called).
            let reports = reports.lock().unwrap();
            let text = reports.join("\n");
            let unreported: Vec<u64> =
                ledger.live.iter().map(|a| a.address).filter(|a| !text.contains(&format!("({a:#x})"))).collect();
            assert!(unreported.is_empty(), "leaked without a report: {unreported:x?}\nreports:\n{text}");
            // So was every stream and event still alive (the threads' own streams are gone).
            let unreported: Vec<_> = ledger
                .live_handles
                .iter()
                .filter(|(kind, _)| *kind == "stream" || *kind == "event")
                .filter(|(_, h)| !text.contains(&format!("({h:#x})")))
                .collect();
            assert!(unreported.is_empty(), "handles leaked without a report: {unreported:x?}");
            assert!(
                text.contains("was not called: its context could not be made current; leaked"),
                "the leak path ran"
            );
            let failures: HashSet<&str> = reports.iter().filter_map(|r| r.split('(').next()).collect();
            println!(
                "{} reports from {:?}; {} allocations leaked (all reported)",
                reports.len(),
                failures,
                ledger.live.len()
            );
        }
        "ipc-race" => {
            let stream = Stream::new(&ctx, 0).unwrap();
            let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
            let imported = MemoryPool::import_fd(&ctx, pool.export_fd().unwrap()).unwrap();
            let buffers: Vec<DeviceBuffer> = (0..4).map(|_| pool.alloc_async(&stream, 512).unwrap()).collect();
            let exports: Vec<_> = buffers.iter().map(|b| b.export_ipc().unwrap()).collect();
            cudrv_standin::ledger_reset();
            let barrier = Barrier::new(8);
            std::thread::scope(|s| {
                for t in 0..8usize {
                    let (imported, stream, exports, barrier) = (&imported, &stream, &exports, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        for i in 0..400 {
                            let e = &exports[(i + t) % exports.len()];
                            let a = ImportedBuffer::import(imported, e, stream).unwrap();
                            let b = ImportedBuffer::import(imported, e, stream).unwrap();
                            assert_eq!(a.as_raw(), b.as_raw(), "one mapping per export");
                            assert_eq!(a.len(), 512, "the size comes from the driver");
                            drop(a);
                            let mut byte = [0u8; 1];
                            b.copy_to_host(&mut byte).unwrap();
                            drop(b);
                        }
                    });
                }
            });
            let ledger = cudrv_standin::ledger();
            assert!(ledger.duplicate_imports.is_empty(), "duplicate mappings: {}", ledger.duplicate_imports.len());
            assert!(ledger.use_after_free.is_empty(), "use after free: {:?}", ledger.use_after_free);
            assert!(ledger.double_frees.is_empty(), "double frees: {:?}", ledger.double_frees);
            assert!(reports.lock().unwrap().is_empty(), "{:?}", reports.lock().unwrap());
            drop(buffers);
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
