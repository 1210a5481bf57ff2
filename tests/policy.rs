//! The error policy where it concerns process-wide state: panicking callbacks and
//! reporters, a reporter that drops a cudrv handle, and process shutdown. Each scenario
//! runs in its own process (see `common::run_child`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{fake_ptx, run_child, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, Graph, ImportedBuffer, MemoryPool, Stream, UserObject};
use cudrv_standin::{faults, Times};

#[test]
fn panicking_user_code_is_contained() {
    run_child("host-panic", &[]);
}

#[test]
fn a_panicking_reporter_is_contained() {
    let out = run_child("reporter-panics", &[]);
    // One fallback line for each of the three reports (pw, Drop, driver thread).
    assert_eq!(out.matches("(the reporter panicked; report written to stderr)").count(), 3, "{out}");
}

#[test]
fn a_reporter_that_drops_a_handle_does_not_deadlock() {
    run_child("reporter-drops-handle", &[]);
}

#[test]
fn handles_dropped_at_shutdown_report_nothing() {
    run_child("shutdown", &[]);
}

#[test]
#[ignore = "run by the other tests in a child process"]
fn child() {
    let Some(scenario) = common::child_scenario() else { return };
    let d = standin_driver();
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    match scenario.as_str() {
        "host-panic" => {
            let reports = common::collect_all_reports();
            stream.launch_host_fn(|| panic!("host function boom")).unwrap();
            let graph = Graph::new(&ctx).unwrap();
            graph.add_host_node(&[], || panic!("host node boom")).unwrap();
            graph.instantiate().unwrap().launch(&stream).unwrap();
            stream.synchronize().unwrap();
            struct Bomb;
            impl Drop for Bomb {
                fn drop(&mut self) {
                    panic!("destructor boom");
                }
            }
            drop(UserObject::new(d, Bomb).unwrap());
            let start = std::time::Instant::now();
            while reports.lock().unwrap().len() < 3 && start.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            let got = reports.lock().unwrap().clone();
            assert_eq!(got.len(), 3, "{got:?}");
            assert!(
                got.iter().any(|r| r.starts_with("host function(0x") && r.ends_with("panicked: host function boom")),
                "{got:?}"
            );
            assert!(
                got.iter().any(|r| r.starts_with("graph host node(0x") && r.ends_with("panicked: host node boom")),
                "{got:?}"
            );
            assert!(
                got.iter()
                    .any(|r| r.starts_with("user object destructor(0x") && r.ends_with("panicked: destructor boom")),
                "{got:?}"
            );
            // The process carries on, and so does the stream.
            let ran = Arc::new(AtomicUsize::new(0));
            let r = ran.clone();
            stream.launch_host_fn(move || _ = r.fetch_add(1, Ordering::SeqCst)).unwrap();
            stream.synchronize().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 1);
        }
        "reporter-panics" => {
            static CALLS: AtomicUsize = AtomicUsize::new(0);
            cudrv::set_reporter(|_| {
                CALLS.fetch_add(1, Ordering::SeqCst);
                panic!("reporter boom");
            });
            // From a pw call, from a Drop, and from a driver thread.
            faults::inject_on_this_thread(cudrv::call::cuMemFree, CUresult::CUDA_ERROR_INVALID_VALUE, Times::N(2));
            // SAFETY: the stand-in never dereferences the pointer.
            assert_eq!(unsafe { d.pw().cuMemFree(0xdead0000) }, CUresult::CUDA_ERROR_INVALID_VALUE);
            drop(DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap());
            stream.launch_host_fn(|| panic!("callback boom")).unwrap();
            stream.synchronize().unwrap();
            assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        }
        "reporter-drops-handle" => {
            // Two imports in the IPC cache; the first one's free fails, and its report
            // runs a reporter that drops the second, which needs the cache lock.
            let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
            let imported_pool = MemoryPool::import_fd(&ctx, pool.export_fd().unwrap()).unwrap();
            let a = pool.alloc_async::<u8>(&stream, 256).unwrap();
            let b = pool.alloc_async::<u8>(&stream, 256).unwrap();
            let ia = ImportedBuffer::import(&imported_pool, &a.export_ipc().unwrap(), &stream).unwrap();
            let ib = ImportedBuffer::import(&imported_pool, &b.export_ipc().unwrap(), &stream).unwrap();
            let slot: &'static Mutex<Option<ImportedBuffer>> = Box::leak(Box::new(Mutex::new(Some(ib))));
            let reports = Arc::new(Mutex::new(Vec::new()));
            let sink = reports.clone();
            cudrv::set_reporter(move |r| {
                let taken = slot.lock().unwrap().take();
                drop(taken); // takes the IPC cache lock
                sink.lock().unwrap().push(r.to_string());
            });
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::scope(|s| {
                s.spawn(move || {
                    faults::inject_on_this_thread(
                        cudrv::call::cuMemFreeAsync,
                        CUresult::CUDA_ERROR_INVALID_VALUE,
                        Times::Once,
                    );
                    drop(ia);
                    tx.send(()).unwrap();
                });
                rx.recv_timeout(std::time::Duration::from_secs(20)).expect("deadlock: the drop did not finish");
            });
            assert!(slot.lock().unwrap().is_none(), "the reporter dropped the second import");
            assert_eq!(reports.lock().unwrap().len(), 1, "{:?}", reports.lock().unwrap());
            faults::clear();
        }
        "shutdown" => {
            let reports = common::collect_all_reports();
            let buffer = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap();
            let module = cudrv::Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
            let created = Context::new(&d.device(0).unwrap(), 0).unwrap();
            let other = Stream::new(&created, 0).unwrap();
            cudrv_standin::shutdown();
            drop((buffer, module, other, created, stream));
            // SAFETY: plain call.
            assert_eq!(unsafe { d.pw().cuCtxSynchronize() }, CUresult::CUDA_ERROR_DEINITIALIZED);
            drop(ctx);
            assert!(reports.lock().unwrap().is_empty(), "{:?}", reports.lock().unwrap());
            cudrv_standin::restart();
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
