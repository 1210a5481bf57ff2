//! Regression tests for the library defects of issue 16 in IPC imports and host memory:
//! the import cache never hands out a mapping of unknown size or one whose free was
//! queued; an import on a driver callback thread is refused at once, never waited for; a
//! pinned buffer's drop frees after a successful wait even if only the context restore
//! fails, and names the event or the context it reports; `to_vec` of a buffer larger than
//! host memory is an error, not an abort.

mod common;

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::{child_scenario, my_reports, run_child, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, ImportedBuffer, IpcExport, MemoryPool, PinnedBuffer, Stream};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// A shareable pool, its import in "another process" (this one), a stream, and an
/// export of a 256-byte allocation of the pool (kept alive with it).
struct Ipc {
    stream: Stream,
    imported: MemoryPool,
    _buffer: DeviceBuffer<u8>,
    export: IpcExport,
}

fn ipc_setup(ctx: &Context) -> Ipc {
    let stream = Stream::new(ctx, 0).unwrap();
    let pool = MemoryPool::new(ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
    let imported = MemoryPool::import_fd(ctx, pool.export_fd().unwrap()).unwrap();
    let buffer = pool.alloc_async::<u8>(&stream, 256).unwrap();
    stream.synchronize().unwrap();
    let export = buffer.export_ipc().unwrap();
    Ipc { stream, imported, _buffer: buffer, export }
}

impl Ipc {
    fn import(&self) -> Result<ImportedBuffer, cudrv::Error> {
        ImportedBuffer::import(&self.imported, &self.export, &self.stream)
    }
}

/// The import is a live mapping of the whole allocation, made once.
fn assert_live_and_whole(import: &ImportedBuffer) {
    assert_eq!(import.len(), 256, "an import is handed out with its real size");
    let ledger = cudrv_standin::ledger();
    let mapping = ledger.allocation(import.as_raw());
    assert!(mapping.is_some_and(|m| m.size == 256), "{:#x} is not a live mapping: {mapping:?}", import.as_raw());
    assert!(!ledger.duplicate_imports.contains(&import.as_raw()), "the export was mapped twice");
    assert!(!ledger.use_after_free.contains(&import.as_raw()));
    import.fill(7).unwrap();
    let mut back = [0u8; 256];
    import.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [7u8; 256]);
}

#[test]
fn an_import_whose_size_and_undo_fail_is_never_handed_out_with_length_zero() {
    let ctx = context();
    let ipc = ipc_setup(&ctx);
    faults::inject_on_this_thread(cudrv::call::cuMemGetAddressRange, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    faults::inject_on_this_thread(cudrv::call::cuMemFreeAsync, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    let e = ipc.import().unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_UNKNOWN), "{e}");
    assert!(e.notes().iter().any(|n| n.contains("never handed out")), "{e}");
    // The next import frees the mapping kept apart, then maps the export afresh.
    let again = ipc.import().unwrap();
    assert_live_and_whole(&again);
    drop(again);
    assert!(my_reports().is_empty());
}

#[test]
fn an_import_kept_apart_that_still_cannot_be_freed_fails_clearly_until_it_can() {
    let ctx = context();
    let ipc = ipc_setup(&ctx);
    faults::inject_on_this_thread(cudrv::call::cuMemGetAddressRange, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    faults::inject_on_this_thread(cudrv::call::cuMemFreeAsync, CUresult::CUDA_ERROR_INVALID_VALUE, Times::N(2));
    assert_eq!(ipc.import().unwrap_err().code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    // Freeing the mapping kept apart fails again: the import fails, saying why.
    let e = ipc.import().unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE), "{e}");
    assert_eq!(e.call(), Some(cudrv::call::cuMemFreeAsync), "{e}");
    assert!(e.notes().iter().any(|n| n.contains("earlier mapping of this export")), "{e}");
    let again = ipc.import().unwrap();
    assert_live_and_whole(&again);
    drop(again);
    assert!(my_reports().is_empty());
}

#[test]
fn an_import_whose_undo_was_not_waited_for_is_waited_for_before_mapping_again() {
    let ctx = context();
    let ipc = ipc_setup(&ctx);
    // The size cannot be read; the mapping's free is queued, but waiting for it fails.
    faults::inject_on_this_thread(cudrv::call::cuMemGetAddressRange, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    faults::inject_on_this_thread(cudrv::call::cuStreamSynchronize, CUresult::CUDA_ERROR_LAUNCH_TIMEOUT, Times::Once);
    let e = ipc.import().unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_UNKNOWN), "{e}");
    assert!(e.notes().iter().any(|n| n.contains("waits for the free first")), "{e}");
    let again = ipc.import().unwrap();
    assert_live_and_whole(&again);
    drop(again);
    assert!(my_reports().is_empty());
}

#[test]
fn a_dropped_import_whose_free_was_not_waited_for_is_not_handed_out_again() {
    let ctx = context();
    let ipc = ipc_setup(&ctx);
    let first = ipc.import().unwrap();
    let address = first.as_raw();
    faults::inject_on_this_thread(cudrv::call::cuStreamSynchronize, CUresult::CUDA_ERROR_LAUNCH_TIMEOUT, Times::Once);
    drop(first);
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].contains("is queued"), "{reports:?}");
    // The free was queued: by now it may have run. The next import waits for it and maps
    // the export afresh instead of handing out the freed mapping.
    ipc.stream.synchronize().unwrap();
    assert!(cudrv_standin::ledger().allocation(address).is_none(), "the queued free ran");
    let again = ipc.import().unwrap();
    assert_live_and_whole(&again);
    drop(again);
    assert!(my_reports().is_empty());
}

/// Runs `scenario` on a worker and returns what it sends, failing (instead of hanging)
/// if it has not finished within a minute.
fn with_watchdog<T: Send + 'static>(what: &str, scenario: impl FnOnce(mpsc::Sender<T>) + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || scenario(tx));
    rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("deadlock: {what} never finished"))
}

#[test]
fn an_import_inside_a_host_function_is_refused_at_once_never_waited_for() {
    let (in_host_fn, reports) = with_watchdog("the drop of the last import", |done| {
        let ctx = context();
        let ipc = Arc::new(ipc_setup(&ctx));
        let last = ipc.import().unwrap();
        let (result_tx, result_rx) = mpsc::channel();
        let shared = ipc.clone();
        // Queued before the drop below, whose free waits for this host function: an
        // import of the same export here must not wait for that free.
        ipc.stream
            .launch_host_fn(move || {
                std::thread::sleep(Duration::from_millis(100));
                let r = shared.import().map(|b| b.len()).map_err(|e| (e.code(), e.to_string()));
                let _ = result_tx.send(r);
            })
            .unwrap();
        drop(last);
        ipc.stream.synchronize().unwrap();
        let _ = done.send((result_rx.recv().unwrap(), my_reports()));
    });
    let (code, message) = in_host_fn.expect_err("an import inside a host function is refused");
    assert_eq!(code, Some(CUresult::CUDA_ERROR_NOT_PERMITTED), "{message}");
    assert!(message.contains("host function"), "{message}");
    assert!(reports.is_empty(), "{reports:?}");
}

#[test]
fn an_import_in_a_graph_host_node_or_a_user_object_destructor_is_refused_at_once() {
    /// Imports when dropped (in the user object's destructor, on a driver thread).
    struct ImportOnDrop(Arc<Ipc>, mpsc::Sender<Result<usize, CUresult>>);
    impl Drop for ImportOnDrop {
        fn drop(&mut self) {
            let _ =
                self.1.send(self.0.import().map(|b| b.len()).map_err(|e| e.code().unwrap_or(CUresult::CUDA_SUCCESS)));
        }
    }
    let results = with_watchdog("the host node and the user object", |done| {
        let ctx = context();
        let ipc = Arc::new(ipc_setup(&ctx));
        // A live import: an import that waited or looked at the cache would get a clone.
        let live = ipc.import().unwrap();
        let (tx, rx) = mpsc::channel();
        let graph = cudrv::Graph::new(&ctx).unwrap();
        let (node_ipc, node_tx) = (ipc.clone(), tx.clone());
        graph
            .add_host_node(&[], move || {
                let _ = node_tx
                    .send(node_ipc.import().map(|b| b.len()).map_err(|e| e.code().unwrap_or(CUresult::CUDA_SUCCESS)));
            })
            .unwrap();
        graph.instantiate().unwrap().launch(&ipc.stream).unwrap();
        ipc.stream.synchronize().unwrap();
        let object = cudrv::UserObject::new(standin_driver(), ImportOnDrop(ipc.clone(), tx)).unwrap();
        drop(object);
        let results: Vec<_> = (0..2).map(|_| rx.recv().unwrap()).collect();
        drop(live);
        let _ = done.send((results, my_reports()));
    });
    let (results, reports) = results;
    assert_eq!(results, [Err(CUresult::CUDA_ERROR_NOT_PERMITTED); 2]);
    assert!(reports.is_empty(), "{reports:?}");
}

#[test]
fn an_import_from_a_reporter_on_a_driver_thread_is_refused_at_once() {
    let out = run_child("reporter-imports-on-a-driver-thread", &[]);
    assert!(out.contains("import from the reporter: cuMemPoolImportPointer failed: CUDA_ERROR_NOT_PERMITTED"), "{out}");
}

/// The pinned allocation at `ptr` is live in the stand-in.
fn pinned_is_live(ptr: *mut std::ffi::c_void) -> bool {
    cudrv_standin::ledger().allocation(ptr as u64).is_some()
}

#[test]
fn a_pinned_buffer_is_freed_when_only_the_context_restore_fails_and_the_report_names_the_context() {
    let d = standin_driver();
    let ctx = context();
    let other = Context::new(&d.device(0).unwrap(), 0).unwrap();
    let pinned = PinnedBuffer::<u32>::zeroed(&ctx, 1024).unwrap();
    let ptr = pinned.as_raw();
    assert!(pinned_is_live(ptr));
    // Another context is current: the drop switches to the buffer's and back, and the
    // switch back fails.
    other.set_current().unwrap();
    faults::fail_next_context_restore(CUresult::CUDA_ERROR_INVALID_CONTEXT);
    drop(pinned);
    faults::disarm_context_restore();
    common::clear_current(d);
    assert!(!pinned_is_live(ptr), "the wait succeeded: the memory is freed");
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let restore = format!("cuCtxSetCurrent({:#x}) failed", other.as_raw() as usize);
    assert!(reports[0].starts_with(&restore), "{reports:?} should name the context: {restore}");
    // It says after which call (the free, done under the same switch), and no leak.
    assert!(reports[0].contains(&format!("[after cuMemFreeHost({:#x})]", ptr as usize)), "{reports:?}");
    assert!(!reports[0].contains("leaked") && !reports[0].contains("not called"), "{reports:?}");
}

#[test]
fn a_pinned_buffer_whose_wait_fails_is_leaked_and_the_report_names_the_event() {
    let ctx = context();
    let pinned = PinnedBuffer::<u32>::zeroed(&ctx, 1024).unwrap();
    let ptr = pinned.as_raw();
    let events: Vec<u64> =
        cudrv_standin::ledger().live_handles.iter().filter(|(k, _)| *k == "event").map(|&(_, h)| h).collect();
    faults::inject_on_this_thread(cudrv::call::cuEventSynchronize, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    drop(pinned);
    assert!(pinned_is_live(ptr), "the wait failed: the memory is leaked, not freed under a copy");
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let named = reports[0]
        .strip_prefix("cuEventSynchronize(0x")
        .and_then(|r| r.split(')').next())
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| panic!("{reports:?} should name cuEventSynchronize's event"));
    assert!(events.contains(&named), "{reports:?} names {named:#x}, not the buffer's event");
    assert!(reports[0].contains("4096 bytes of pinned memory"), "{reports:?}");
    assert!(reports[0].contains("leaked"), "{reports:?}");
}

#[test]
fn to_vec_of_a_buffer_larger_than_host_memory_is_an_error_not_an_abort() {
    // In a child process: the old code aborted the process.
    let out = run_child("to-vec-too-large", &[]);
    assert!(out.contains("to_vec: DeviceBuffer::to_vec: invalid argument"), "{out}");
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Some(scenario) = child_scenario() else { return };
    match scenario.as_str() {
        "reporter-imports-on-a-driver-thread" => {
            let message = with_watchdog("the drop of the last import", |done| {
                let ctx = standin_driver().device(0).unwrap().primary_context().unwrap();
                let ipc = Arc::new(ipc_setup(&ctx));
                let last = ipc.import().unwrap();
                let seen: Arc<Mutex<Option<String>>> = Arc::default();
                let (reporter_ipc, reporter_seen) = (ipc.clone(), seen.clone());
                cudrv::set_reporter(move |r| {
                    if r.to_string().starts_with("host function") {
                        let got = match reporter_ipc.import() {
                            Ok(b) => format!("Ok, {} bytes", b.len()),
                            Err(e) => e.to_string(),
                        };
                        *reporter_seen.lock().unwrap() = Some(got);
                    }
                });
                // Its panic is reported on the driver thread, after the drop below started
                // freeing the last import (whose free waits for this host function).
                ipc.stream
                    .launch_host_fn(|| {
                        std::thread::sleep(Duration::from_millis(100));
                        panic!("a host function that fails");
                    })
                    .unwrap();
                drop(last);
                ipc.stream.synchronize().unwrap();
                cudrv::reset_reporter();
                let _ = done.send(seen.lock().unwrap().take());
            });
            let message = message.expect("the reporter ran for the host function's panic");
            println!("import from the reporter: {message}");
        }
        "to-vec-too-large" => {
            let ctx = standin_driver().device(0).unwrap().primary_context().unwrap();
            // 2^60 bytes: more than any host's memory and address space. No driver call is
            // made: the vector is refused first.
            // SAFETY: the buffer is only asked for its length; nothing reads the address.
            let huge = unsafe { DeviceBuffer::<u64>::borrowed(&ctx, 0x1000, 1 << 57) };
            let e = huge.to_vec().unwrap_err();
            assert!(e.as_driver().is_none(), "{e}");
            assert!(e.to_string().contains(&format!("{} bytes", 1u64 << 60)), "{e}");
            println!("to_vec: {e}");
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
