//! Context-scoped operations under a failing restoration of the caller's context
//! (injected by the stand-in's `fail_next_context_restore`). After each, the thread's
//! current context is read from the driver itself, not from cudrv's bookkeeping.

mod common;

use common::{clear_current, current_context, fake_image, fake_ptx, my_reports, standin_driver};
use cudrv::sys::{CUjitInputType, CUresult};
use cudrv::{Context, CudaError, DeviceBuffer, Event, Graph, Linker, MemoryPool, Module, PinnedBuffer, Stream};
use cudrv_standin::{faults, Times};

/// A named operation under test.
type Op<'a> = (&'a str, Box<dyn FnMut() -> Result<(), cudrv::Error> + 'a>);

/// The driver error inside a `cudrv::Error`; anything else fails the test.
fn driver_error<T>(r: Result<T, cudrv::Error>) -> Result<T, CudaError> {
    r.map_err(|e| match e {
        cudrv::Error::Driver(e) => e,
        other => panic!("expected a driver error, got {other}"),
    })
}

const RESTORE_FAILS: CUresult = CUresult::CUDA_ERROR_INVALID_CONTEXT;

/// Serialises the tests of this file: they read the stand-in's process-wide ledger.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn setup() -> (Context, std::sync::MutexGuard<'static, ()>) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    common::capture_reports();
    let ctx = standin_driver().device(0).unwrap().primary_context().unwrap();
    clear_current(standin_driver());
    (ctx, guard)
}

/// Checks an error from an operation whose restoration failed, and puts the thread back.
fn check_restore_error(ctx: &Context, e: &CudaError, primary: CUresult) {
    let d = standin_driver();
    assert_eq!(e.code(), primary, "{e}");
    let note = e.notes().iter().find(|n| n.contains("could not be restored")).unwrap_or_else(|| panic!("no note: {e}"));
    assert!(note.contains(&format!("context {:#x} is now current", ctx.as_raw() as usize)), "{note}");
    // The driver agrees: the target context is still current.
    assert_eq!(current_context(d), ctx.as_raw());
    faults::clear();
    clear_current(d);
}

#[test]
fn every_creating_operation_undoes_what_it_made_when_only_the_restoration_fails() {
    let (ctx, _serial) = setup();
    let stream = Stream::new(&ctx, 0).unwrap();
    let ops: Vec<Op> = vec![
        ("cuStreamDestroy", Box::new(|| Stream::new(&ctx, 0).map(drop))),
        ("cuEventDestroy", Box::new(|| Event::new(&ctx, 0).map(drop))),
        ("cuMemFree", Box::new(|| DeviceBuffer::<u8>::alloc(&ctx, 64).map(drop))),
        ("cuMemFreeAsync", Box::new(|| DeviceBuffer::<u8>::alloc_async(&stream, 64).map(drop))),
        ("cuMemPoolDestroy", Box::new(|| MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).map(drop))),
        // A pinned buffer first creates its in-use event (a context switch of its own), so
        // the armed restoration fails there: the event is destroyed again and the host
        // memory is never allocated.
        ("cuMemFreeHost", Box::new(|| PinnedBuffer::<u8>::zeroed(&ctx, 64).map(drop))),
        ("cuModuleUnload", Box::new(|| Module::load_ptx(&ctx, &fake_ptx(&["k"])).map(drop))),
        ("cuLinkDestroy", Box::new(|| Linker::new(&ctx).map(drop))),
        ("cuGraphExecDestroy", Box::new(|| Graph::new(&ctx)?.instantiate().map(drop))),
    ];
    let live = || {
        let l = cudrv_standin::ledger();
        (l.live.len(), l.live_handles.len())
    };
    for (undo, mut op) in ops {
        let live_before = live();
        faults::fail_next_context_restore(RESTORE_FAILS);
        let e = driver_error(op()).err().unwrap_or_else(|| panic!("{undo}: no error"));
        assert!(e.notes().iter().any(|n| n.contains(&format!("destroyed again ({undo}("))), "{undo}: {e}");
        check_restore_error(&ctx, &e, RESTORE_FAILS);
        assert_eq!(live(), live_before, "{undo}: nothing is left allocated or created");
    }
    assert!(my_reports().is_empty(), "errors are returned, not reported");
}

#[test]
fn an_operation_error_stays_primary_when_the_restoration_fails_too() {
    let (ctx, _serial) = setup();
    faults::inject_on_this_thread(cudrv::call::cuStreamCreate, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Once);
    faults::fail_next_context_restore(RESTORE_FAILS);
    let e = driver_error(Stream::new(&ctx, 0)).err().unwrap();
    assert_eq!(e.call(), cudrv::call::cuStreamCreate);
    check_restore_error(&ctx, &e, CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    assert!(e.notes()[0].starts_with("then cuCtxSetCurrent failed: CUDA_ERROR_INVALID_CONTEXT"), "{e}");
}

#[test]
fn non_creating_operations_return_the_restoration_error() {
    let (ctx, _serial) = setup();
    let stream = Stream::new(&ctx, 0).unwrap();
    let event = Event::new(&ctx, 0).unwrap();
    let buffer = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap();
    let mut exec = Graph::new(&ctx).unwrap().instantiate().unwrap();
    let mut linker = Linker::new(&ctx).unwrap();
    let image = fake_image(&["k"]);
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = ran.clone();
    let ops: Vec<Op> = vec![
        ("synchronize", Box::new(|| stream.synchronize())),
        ("is_idle", Box::new(|| stream.is_idle().map(drop))),
        ("record", Box::new(|| event.record(&stream))),
        ("fill", Box::new(|| buffer.fill(0))),
        ("copy_from_host", Box::new(|| buffer.copy_from_host(&[1, 2, 3]))),
        (
            "host fn",
            Box::new({
                let stream = &stream;
                move || {
                    let counter = counter.clone();
                    let r =
                        stream.launch_host_fn(move || _ = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
                    let e = driver_error(r).expect_err("the restoration fails");
                    assert!(e.notes().iter().any(|n| n == "the host function was queued and will run"), "{e}");
                    Err(e.into())
                }
            }),
        ),
        ("context", Box::new(|| ctx.synchronize())),
        // SAFETY: a NUL-terminated fake image.
        ("add_data", Box::new(|| unsafe { linker.add_data(CUjitInputType::CU_JIT_INPUT_PTX, &image, "k") })),
    ];
    for (name, mut op) in ops {
        faults::fail_next_context_restore(RESTORE_FAILS);
        let e = driver_error(op()).err().unwrap_or_else(|| panic!("{name}: no error"));
        assert_eq!(e.call(), cudrv::call::cuCtxSetCurrent, "{name}: {e}");
        assert!(e.notes().iter().any(|n| n == "the operation itself succeeded"), "{name}: {e}");
        check_restore_error(&ctx, &e, RESTORE_FAILS);
    }
    // A graph launch on a created stream names its context: from driver 13.0 it makes no
    // switch, so there is no restoration to fail (docs/error-handling.md).
    clear_current(standin_driver());
    faults::fail_next_context_restore(RESTORE_FAILS);
    exec.launch(&stream).unwrap();
    assert_eq!(current_context(standin_driver()), std::ptr::null_mut(), "no context was made current");
    faults::clear();
    drop(exec);
    Stream::new(&ctx, 0).unwrap().synchronize().unwrap();
    event.synchronize().unwrap();
    assert_eq!(ran.load(std::sync::atomic::Ordering::SeqCst), 1, "the queued host function ran once");
    assert!(my_reports().is_empty());
}

#[test]
fn nothing_switches_when_the_context_is_already_current() {
    let (ctx, _serial) = setup();
    let d = standin_driver();
    ctx.set_current().unwrap();
    // Armed, but no switch happens, so no restoration either.
    faults::fail_next_context_restore(RESTORE_FAILS);
    Stream::new(&ctx, 0).unwrap().synchronize().unwrap();
    assert_eq!(current_context(d), ctx.as_raw());
    faults::clear();
    clear_current(d);
}

#[test]
fn set_current_is_one_call_and_a_failure_leaves_the_previous_context() {
    let (ctx, _serial) = setup();
    let d = standin_driver();
    let other = Context::new(&d.device(0).unwrap(), 0).unwrap();
    ctx.set_current().unwrap();
    faults::inject_on_this_thread(cudrv::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::Once);
    let e = other.set_current().unwrap_err();
    assert_eq!((e.call(), e.code()), (Some(cudrv::call::cuCtxSetCurrent), Some(CUresult::CUDA_ERROR_INVALID_CONTEXT)));
    assert_eq!(current_context(d), ctx.as_raw());
    clear_current(d);
}

#[test]
fn drop_restores_first_then_reports_the_restoration_failure() {
    let (ctx, _serial) = setup();
    let d = standin_driver();
    let buffers = [DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap(), DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap()];
    for s in buffers {
        let raw = s.as_raw();
        faults::fail_next_context_restore(RESTORE_FAILS);
        drop(s);
        // The buffer was freed in its context; the restoration failed and said so.
        let reports = my_reports();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(reports[0].starts_with("cuCtxSetCurrent(0x0) failed: CUDA_ERROR_INVALID_CONTEXT"), "{}", reports[0]);
        assert!(reports[0].contains(&format!("[after cuMemFree({raw:#x})]")), "{}", reports[0]);
        assert_eq!(current_context(d), ctx.as_raw());
        faults::clear();
        clear_current(d);
    }
}

#[test]
fn a_resource_whose_context_cannot_be_entered_is_leaked_and_reported() {
    let (ctx, _serial) = setup();
    let buffer = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap();
    let address = buffer.as_raw();
    faults::inject_on_this_thread(cudrv::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::Once);
    drop(buffer);
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert!(reports[0].contains(&format!("cuMemFree({address:#x}) was not called")), "{}", reports[0]);
    assert!(reports[0].contains("leaked"), "{}", reports[0]);
    // Leaked, not freed from the wrong context.
    assert!(cudrv_standin::ledger().live.iter().any(|a| a.address == address));
}

#[test]
fn a_panic_inside_run_switches_back_before_unwinding_further() {
    let (ctx, _serial) = setup();
    let d = standin_driver();
    let seen = std::cell::Cell::new(std::ptr::null_mut());
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ctx.run(|| -> Result<(), CudaError> {
            seen.set(current_context(d));
            panic!("user code panics inside run");
        })
    }));
    let payload = caught.err().unwrap();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"user code panics inside run"));
    assert_eq!(seen.get(), ctx.as_raw(), "run switched to the context");
    assert!(current_context(d).is_null(), "the thread's previous (no) context is current again");
}

#[test]
fn drop_reports_after_the_callers_context_is_back() {
    let (ctx, _serial) = setup();
    let d = standin_driver();
    let buffer = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap();
    faults::inject_on_this_thread(cudrv::call::cuMemFree, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    drop(buffer);
    // The capture reporter recorded the driver's current context when it was called.
    let seen = common::my_reports_with_context();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].0.starts_with("cuMemFree("), "{seen:?}");
    assert_eq!(seen[0].1, 0, "the report ran after the thread's (no) context was restored");
    assert!(current_context(d).is_null());
}

#[test]
fn creating_a_context_whose_pop_fails_destroys_it_again() {
    let (_ctx, _serial) = setup();
    let d = standin_driver();
    let handles_before = cudrv_standin::ledger().live_handles.len();
    faults::inject_on_this_thread(cudrv::call::cuCtxPopCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::Once);
    let e = Context::new(&d.device(0).unwrap(), 0).err().unwrap();
    assert_eq!((e.call(), e.code()), (Some(cudrv::call::cuCtxPopCurrent), Some(CUresult::CUDA_ERROR_INVALID_CONTEXT)));
    assert!(e.notes().iter().any(|n| n.contains("was destroyed again")), "{e}");
    assert_eq!(cudrv_standin::ledger().live_handles.len(), handles_before, "no context left behind");
    assert!(current_context(d).is_null(), "destroying the pushed context popped it");
}
