//! Regression tests for the reliability defects of issue 8: the IPC cache never waits for
//! the driver (or for user code) under its lock, a leaked import stays registered, the
//! reporter is never re-entered, and a report names the handle its failing call was given.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{child_scenario, my_reports, run_child, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{Context, ImportedBuffer, MemoryPool, Stream};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// A shareable pool, its import in "another process" (this one), and a stream.
fn ipc_setup(ctx: &Context) -> (Stream, MemoryPool, MemoryPool) {
    let stream = Stream::new(ctx, 0).unwrap();
    let pool = MemoryPool::new(ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
    let imported = MemoryPool::import_fd(ctx, pool.export_fd().unwrap()).unwrap();
    (stream, pool, imported)
}

#[test]
fn dropping_an_import_while_a_host_function_drops_another_does_not_deadlock() {
    let (done_tx, done_rx) = mpsc::channel();
    // The scenario runs on a worker so that a deadlock fails the test instead of hanging it.
    std::thread::spawn(move || {
        let ctx = context();
        let (stream, pool, imported) = ipc_setup(&ctx);
        let a_buf = pool.alloc_async::<u8>(&stream, 256).unwrap();
        let b_buf = pool.alloc_async::<u8>(&stream, 256).unwrap();
        let a = ImportedBuffer::import(&imported, &a_buf.export_ipc().unwrap(), &stream).unwrap();
        let b = ImportedBuffer::import(&imported, &b_buf.export_ipc().unwrap(), &stream).unwrap();
        let b_in_host_fn = b.clone();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        // Queued before the drop of `a`: its synchronise waits for this host function,
        // which drops a clone of `b` (not the last: no CUDA call) and so takes the cache lock.
        stream
            .launch_host_fn(move || {
                let _ = go_rx.recv();
                std::thread::sleep(Duration::from_millis(50));
                drop(b_in_host_fn);
            })
            .unwrap();
        let _ = go_tx.send(());
        drop(a); // the last clone: frees the mapping and waits for the stream
        drop(b);
        stream.synchronize().unwrap();
        let _ = done_tx.send(my_reports());
    });
    let reports = done_rx.recv_timeout(Duration::from_secs(30)).expect("deadlock: the drop never finished");
    assert!(reports.is_empty(), "{reports:?}");
}

#[test]
fn a_failed_import_whose_undo_fails_stays_registered_and_is_not_mapped_twice() {
    let ctx = context();
    let (stream, pool, imported) = ipc_setup(&ctx);
    let buffer = pool.alloc_async::<u8>(&stream, 256).unwrap();
    let export = buffer.export_ipc().unwrap();
    // The size cannot be read, and freeing the mapping again fails too: it is leaked.
    faults::inject_on_this_thread(cudrv::call::cuMemGetAddressRange, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    faults::inject_on_this_thread(cudrv::call::cuMemFreeAsync, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    let e = ImportedBuffer::import(&imported, &export, &stream).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_UNKNOWN), "{e}");
    assert!(e.notes().iter().any(|n| n.contains("stays registered")), "{e}");
    // The next import of the same export frees the mapping kept apart before mapping it again.
    let again = ImportedBuffer::import(&imported, &export, &stream).unwrap();
    let duplicates = cudrv_standin::ledger().duplicate_imports;
    assert!(!duplicates.contains(&again.as_raw()), "the export was mapped twice: {duplicates:x?}");
}

#[test]
fn a_failed_synchronise_in_an_import_drop_names_the_stream() {
    let ctx = context();
    let (stream, pool, imported) = ipc_setup(&ctx);
    let buffer = pool.alloc_async::<u8>(&stream, 256).unwrap();
    let import = ImportedBuffer::import(&imported, &buffer.export_ipc().unwrap(), &stream).unwrap();
    faults::inject_on_this_thread(cudrv::call::cuStreamSynchronize, CUresult::CUDA_ERROR_LAUNCH_TIMEOUT, Times::Once);
    drop(import);
    let reports = my_reports();
    let stream_arg = format!("cuStreamSynchronize({:#x}) failed", stream.as_raw() as usize);
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].starts_with(&stream_arg), "{reports:?} should name the stream: {stream_arg}");
}

#[test]
fn a_reporter_whose_own_pw_call_fails_is_not_re_entered() {
    let out = run_child("reporter-reentry", &[]);
    assert!(out.contains("raised inside the reporter; written to stderr"), "{out}");
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Some(scenario) = child_scenario() else { return };
    match scenario.as_str() {
        "reporter-reentry" => {
            let d = standin_driver();
            let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let seen = calls.clone();
            cudrv::set_reporter(move |_| {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                // A failing pw call inside the reporter: reported again, on this thread.
                // SAFETY: a bogus address; the driver refuses it.
                unsafe { d.pw().cuMemFree(0xdead_0000) };
            });
            // SAFETY: as above.
            unsafe { d.pw().cuMemFree(0xbad_0000) };
            assert_eq!(
                calls.load(std::sync::atomic::Ordering::SeqCst),
                1,
                "the reporter ran once, not again inside itself"
            );
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
