//! Every handle kind against the stand-in: create, use, drop; and a destroy that fails
//! under an injected fault gives exactly one report naming the handle.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{fake_image, fake_ptx, my_reports, standin_driver};
use cudrv::sys::{CUjitInputType, CUresult};
use cudrv::{
    Context, DeviceBuffer, Event, Graph, Kernel, LaunchConfig, Library, Linker, MemoryPool, Module, PinnedBuffer,
    Stream, UserObject,
};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn contexts_primary_and_created() {
    let d = standin_driver();
    let primary = context();
    assert!(primary.is_primary());
    let created = Context::new(&d.device(0).unwrap(), 0).unwrap();
    assert!(!created.is_primary());
    assert_ne!(created.as_raw(), primary.as_raw());
    // Creating did not change the calling thread's context (cuCtxCreate pushes; cudrv pops).
    common::clear_current(d);
    let again = Context::new(&d.device(0).unwrap(), 0).unwrap();
    assert!(common::current_context(d).is_null());
    created.set_current().unwrap();
    assert_eq!(common::current_context(d), created.as_raw());
    // run() switches to the context and back.
    let seen = primary.run(|| Ok(common::current_context(d))).unwrap();
    assert_eq!(seen, primary.as_raw());
    assert_eq!(common::current_context(d), created.as_raw());
    common::clear_current(d);
    drop((created, again, primary));
    assert!(my_reports().is_empty());
    assert!(d.device(7).is_err(), "no device 7");
}

#[test]
fn streams_events_and_host_functions() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let (start, end) = (Event::new(&ctx, 0).unwrap(), Event::new(&ctx, 0).unwrap());
    start.record(&stream).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let caller = std::thread::current().id();
    let on = Arc::new(std::sync::Mutex::new(None));
    let o = on.clone();
    stream
        .launch_host_fn(move || {
            *o.lock().unwrap() = Some(std::thread::current().id());
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    end.record(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_ne!(on.lock().unwrap().unwrap(), caller, "host functions run on a driver thread");
    assert!(end.is_complete().unwrap());
    assert!(stream.is_idle().unwrap());
    assert!(start.elapsed_ms(&end).unwrap() >= 0.0);
    let other = Stream::new(&ctx, 0).unwrap();
    other.wait_event(&end).unwrap();
    // A clone keeps the stream alive after the original is dropped.
    let clone = stream.clone();
    drop(stream);
    clone.synchronize().unwrap();
    assert!(my_reports().is_empty());
}

#[test]
fn device_memory_sync_async_and_pools() {
    let ctx = context();
    let buf = DeviceBuffer::<u8>::alloc(&ctx, 4096).unwrap();
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    buf.copy_from_host(&data).unwrap();
    let mut back = vec![0u8; 4096];
    buf.copy_to_host(&mut back).unwrap();
    assert_eq!(back, data);
    buf.fill(7).unwrap();
    buf.copy_to_host(&mut back).unwrap();
    assert!(back.iter().all(|&b| b == 7));
    assert!(
        matches!(buf.copy_from_host(&[0u8; 5000]), Err(cudrv::Error::InvalidArgument(_))),
        "too long for the buffer"
    );

    let stream = Stream::new(&ctx, 0).unwrap();
    let a = DeviceBuffer::<u8>::alloc_async(&stream, 1 << 20).unwrap();
    assert_eq!(a.deallocation_stream().unwrap().as_raw(), stream.as_raw());
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    let p = pool.alloc_async::<u8>(&stream, 1 << 20).unwrap();
    drop(pool); // the allocation keeps its pool alive
    drop(stream); // and its deallocation stream
    p.fill(1).unwrap();
    let addresses = [a.as_raw(), p.as_raw(), buf.as_raw()];
    let live = |addr: u64| cudrv_standin::ledger().live.iter().any(|x| x.address == addr);
    assert!(addresses.iter().all(|&x| live(x)));
    drop((a, p, buf));
    assert!(addresses.iter().all(|&x| !live(x)), "all three were freed");
    let mut pinned = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
    assert!(pinned.as_slice().unwrap().iter().all(|&b| b == 0));
    pinned.as_mut_slice().unwrap().fill(9);
    assert!(pinned.as_slice().unwrap().iter().all(|&b| b == 9));
    drop(pinned);
    assert!(my_reports().is_empty());
}

#[test]
fn libraries_modules_linker_graphs_user_objects() {
    let ctx = context();
    let d = standin_driver();
    let stream = Stream::new(&ctx, 0).unwrap();
    let config = LaunchConfig::new((1, 1, 1), (32, 1, 1));

    let library = Library::load_ptx(d, &fake_ptx(&["scale"])).unwrap();
    let kernel: Kernel = library.kernel("scale").unwrap();
    assert!(library.kernel("missing").is_err());
    // The kernel keeps its library alive.
    drop(library);
    // SAFETY: the fake kernel takes no parameters.
    unsafe { kernel.builder(&stream).launch(config) }.unwrap();

    let module = Module::load_ptx(&ctx, &fake_ptx(&["add"])).unwrap();
    let function = module.function("add").unwrap();
    drop(module);
    // SAFETY: as above.
    unsafe { function.builder(&stream).launch(config) }.unwrap();
    assert!(Module::load_ptx(&ctx, c"not an image").is_err());

    let mut linker = Linker::new(&ctx).unwrap();
    // SAFETY: a NUL-terminated fake image.
    unsafe { linker.add_data(CUjitInputType::CU_JIT_INPUT_PTX, &fake_image(&["linked"]), "a") }.unwrap();
    let image = linker.complete().unwrap();
    drop(linker);
    // SAFETY: the linker's output is a complete, NUL-terminated fake image.
    let linked = unsafe { Module::load_data(&ctx, &image) }.unwrap();
    linked.function("linked").unwrap();

    let dropped = Arc::new(AtomicUsize::new(0));
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let object = UserObject::new(d, Flag(dropped.clone())).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    graph.retain_user_object(&object).unwrap();
    drop(object); // the graph still holds a reference
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let first = graph.add_empty_node(&[]).unwrap();
    graph.add_host_node(&[&first], move || _ = r.fetch_add(1, Ordering::SeqCst)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    exec.launch(&stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    // Nodes keep their graph alive: the graph goes with the last of them.
    drop((exec, graph));
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "the node `first` still holds the graph");
    drop(first);
    wait_until("the user object's destructor", || dropped.load(Ordering::SeqCst) == 1);
    assert!(my_reports().is_empty());
}

#[test]
fn a_failed_destroy_is_reported_once_and_the_program_carries_on() {
    let ctx = context();
    let d = standin_driver();
    // Each case owns a handle; calling it names the handle and drops it.
    type Case = (cudrv::Call, Box<dyn FnOnce() -> String>);
    let cases: Vec<Case> = vec![
        (cudrv::call::cuStreamDestroy, {
            let s = Stream::new(&ctx, 0).unwrap();
            Box::new(move || format!("cuStreamDestroy({:#x})", s.as_raw() as usize))
        }),
        (cudrv::call::cuEventDestroy, {
            let e = Event::new(&ctx, 0).unwrap();
            Box::new(move || format!("cuEventDestroy({:#x})", e.as_raw() as usize))
        }),
        (cudrv::call::cuMemFree, {
            let b = DeviceBuffer::<u8>::alloc(&ctx, 256).unwrap();
            Box::new(move || format!("cuMemFree({:#x})", b.as_raw()))
        }),
        (cudrv::call::cuMemPoolDestroy, {
            let p = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
            Box::new(move || format!("cuMemPoolDestroy({:#x})", p.as_raw() as usize))
        }),
        (cudrv::call::cuModuleUnload, {
            let m = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
            Box::new(move || format!("cuModuleUnload({:#x})", m.as_raw() as usize))
        }),
        (cudrv::call::cuLibraryUnload, {
            let l = Library::load_ptx(d, &fake_ptx(&["k"])).unwrap();
            Box::new(move || format!("cuLibraryUnload({:#x})", l.as_raw() as usize))
        }),
        (cudrv::call::cuGraphDestroy, {
            let g = Graph::new(&ctx).unwrap();
            Box::new(move || format!("cuGraphDestroy({:#x})", g.as_raw() as usize))
        }),
        (cudrv::call::cuMemFreeHost, {
            let p = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
            Box::new(move || format!("cuMemFreeHost({:#x})", p.as_raw() as usize))
        }),
        (cudrv::call::cuLinkDestroy, {
            let l = Linker::new(&ctx).unwrap();
            Box::new(move || format!("cuLinkDestroy({:#x})", l.as_raw() as usize))
        }),
        (cudrv::call::cuUserObjectRelease, {
            let u = UserObject::new(d, 5u32).unwrap();
            Box::new(move || format!("cuUserObjectRelease({:#x})", u.as_raw() as usize))
        }),
    ];
    for (symbol, drop_it) in cases {
        faults::inject_on_this_thread(symbol, CUresult::CUDA_ERROR_INVALID_HANDLE, Times::Once);
        // The closure owns the handle; calling it drops the handle after naming it.
        let named = drop_it();
        let reports = my_reports();
        assert_eq!(reports.len(), 1, "{symbol}: {reports:?}");
        assert_eq!(reports[0], format!("{named} failed: CUDA_ERROR_INVALID_HANDLE (invalid resource handle)"));
    }
    // And the program carries on.
    let s = Stream::new(&ctx, 0).unwrap();
    s.synchronize().unwrap();
    drop(s);
    assert!(my_reports().is_empty());
}

#[test]
fn adopting_raw_handles() {
    let ctx = context();
    let d = standin_driver();
    let mut raw = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the primary context is current for the call.
    ctx.run(|| unsafe { d.pc().cuStreamCreate(&mut raw, 0) }).unwrap();
    let live = || cudrv_standin::ledger().handle_is_live("stream", raw as u64);
    {
        // SAFETY: `raw` is live and nothing else destroys it while borrowed.
        let borrowed = unsafe { Stream::borrowed(&ctx, raw) };
        borrowed.synchronize().unwrap();
    }
    assert!(live(), "dropping a borrowed handle destroys nothing");
    // SAFETY: `raw` is live and owned by nobody else from here on.
    let owned = unsafe { Stream::from_raw(&ctx, raw) };
    owned.synchronize().unwrap();
    drop(owned);
    assert!(!live(), "dropping the adopted handle destroyed the stream");
    assert!(!cudrv_standin::ledger().double_destroys.iter().any(|&(_, h)| h == raw as u64));
    assert!(my_reports().is_empty());
}

#[test]
fn an_import_whose_free_fails_stays_registered_and_is_reused() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
    let imported = MemoryPool::import_fd(&ctx, pool.export_fd().unwrap()).unwrap();
    let buffer = pool.alloc_async::<u8>(&stream, 256).unwrap();
    let export = buffer.export_ipc().unwrap();
    let first = cudrv::ImportedBuffer::import(&imported, &export, &stream).unwrap();
    let address = first.as_raw();
    assert_eq!(first.len(), 256);
    faults::inject_on_this_thread(cudrv::call::cuMemFreeAsync, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    drop(first);
    let reports = my_reports();
    assert_eq!(reports, [format!("cuMemFreeAsync({address:#x}) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)")]);
    // Still mapped (the free failed), so importing again must reuse it, not map it twice.
    let again = cudrv::ImportedBuffer::import(&imported, &export, &stream).unwrap();
    assert_eq!(again.as_raw(), address);
    assert!(
        !cudrv_standin::ledger().duplicate_imports.iter().any(|&a| a != address),
        "no second mapping of this export was made"
    );
    again.fill(3).unwrap();
}

#[test]
fn a_sticky_error_is_returned_and_dropping_afterwards_reports_without_panicking() {
    common::capture_reports();
    // A stand-in world of its own: a kernel's fault is sticky for the whole process, as on
    // the H200 (docs/driver-facts.md, "Kernel faults"), and would fail the other tests.
    let d = cudrv_standin::StandIn::isolated(13000).unwrap().load(Default::default()).unwrap();
    let d: &'static cudrv::Driver = Box::leak(Box::new(d));
    d.init().unwrap();
    let ctx = Context::new(&d.device(0).unwrap(), 0).unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let buffer = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap();
    let module = Module::load_ptx(&ctx, &fake_ptx(&[cudrv_standin::FAULT_KERNEL])).unwrap();
    let function = module.function(cudrv_standin::FAULT_KERNEL).unwrap();
    let config = LaunchConfig::new((1, 1, 1), (1, 1, 1));
    // SAFETY: the fake kernel takes no parameters.
    unsafe { function.builder(&stream).launch(config) }.unwrap();
    let e = stream.synchronize().unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert!(e.is_sticky());
    let later = DeviceBuffer::<u8>::alloc(&ctx, 64).unwrap_err();
    assert!(later.as_driver().is_some_and(|e| e.is_sticky()), "later work fails the same way: {later}");
    let (b, s) = (buffer.as_raw(), stream.as_raw() as usize);
    drop((function, module, buffer, stream));
    let reports = my_reports();
    // (The real H200 also refuses cuModuleUnload then; the stand-in does not emulate that.)
    for named in [format!("cuMemFree({b:#x})"), format!("cuStreamDestroy({s:#x})")] {
        assert_eq!(
            reports.iter().filter(|r| r.starts_with(&format!("{named} failed: CUDA_ERROR_ILLEGAL_ADDRESS"))).count(),
            1,
            "{named}: {reports:?}"
        );
    }
    drop(ctx);
}

#[test]
fn ptx_text_with_a_nul_inside_is_refused_before_any_driver_call() {
    let ctx = context();
    let e = Module::from_ptx(&ctx, "ab\0cd").unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)), "{e}");
    let e = cudrv::Library::from_ptx(standin_driver(), "ab\0cd").unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)), "{e}");
    assert!(e.to_string().contains("no driver call was made"), "{e}");
}

#[test]
fn launch_attributes_need_cu_launch_kernel_ex_and_say_which_driver_has_it() {
    common::capture_reports();
    // An 11.4 driver: cuLaunchKernelEx (11.6) is gated.
    let old = cudrv_standin::StandIn::new(11040).unwrap().load(Default::default()).unwrap();
    let old: &'static cudrv::Driver = Box::leak(Box::new(old));
    old.init().unwrap();
    let ctx = old.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let k = module.function("k").unwrap();
    let mut launch = k.builder(&stream);
    launch.cooperative(true);
    // SAFETY: the fake kernel takes no parameters; nothing is launched on this driver.
    let e = unsafe { launch.launch(LaunchConfig::new((1, 1, 1), (1, 1, 1))) }.unwrap_err();
    let e = e.as_driver().expect("a driver error");
    assert_eq!((e.call(), e.code()), (cudrv::call::cuLaunchKernelEx, CUresult::CUDA_ERROR_NOT_FOUND), "{e}");
    assert_eq!(e.unresolved(), Some("needs driver 11.6; this driver is 11.4"), "{e}");
    // Without attributes the same launch is a plain cuLaunchKernel.
    let mut plain = k.builder(&stream);
    // SAFETY: as above.
    unsafe { plain.launch(LaunchConfig::new((1, 1, 1), (1, 1, 1))) }.unwrap();
    assert!(my_reports().is_empty());
}

#[test]
fn host_fn_serves_the_13_1_entry_with_flags() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let f = cudrv::HostFn::new(move || tx.send(42).unwrap());
    let d = standin_driver();
    // SAFETY: a live stream; the callback and data come from `f`.
    let status = unsafe { d.p().cuLaunchHostFunc_v13010(stream.as_raw(), f.callback(), f.user_data(), 0) };
    assert_eq!(status, CUresult::CUDA_SUCCESS);
    f.handed_over();
    stream.synchronize().unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(42));
    // One the driver refuses is dropped unrun.
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let refused = cudrv::HostFn::new(move || _ = counter.fetch_add(1, Ordering::SeqCst));
    // SAFETY: a null stream handle of a bogus value is refused by the driver.
    let status = unsafe {
        d.p().cuLaunchHostFunc_v13010(0xdead as cudrv::sys::CUstream, refused.callback(), refused.user_data(), 0)
    };
    assert_ne!(status, CUresult::CUDA_SUCCESS);
    drop(refused);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(Arc::strong_count(&ran), 1, "the refused closure was dropped");
    assert!(my_reports().is_empty());
}

#[test]
fn empty_pinned_buffers_allocate_nothing_and_are_safe_to_use() {
    let ctx = context();
    let mut empty = PinnedBuffer::<f32>::zeroed(&ctx, 0).unwrap();
    assert!(empty.as_slice().unwrap().is_empty());
    assert!(empty.as_mut_slice().unwrap().is_empty());
    let from_nothing = PinnedBuffer::<u32>::from_slice(&ctx, &[]).unwrap();
    assert_eq!(from_nothing.len(), 0);
    let stream = Stream::new(&ctx, 0).unwrap();
    let device = DeviceBuffer::<f32>::alloc(&ctx, 4).unwrap();
    device.copy_from_pinned_async(&empty, &stream).unwrap();
    stream.synchronize().unwrap();
    drop((empty, from_nothing));
    assert!(my_reports().is_empty());
}

#[test]
fn a_pinned_buffer_whose_copy_cannot_be_covered_refuses_access_and_is_leaked() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let device = DeviceBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    let address = pinned.as_raw() as usize;
    // The copy is queued, but neither recording the buffer's event after it nor waiting
    // for the stream works: the buffer cannot know when the copy is done.
    faults::inject_on_this_thread(cudrv::call::cuEventRecord, CUresult::CUDA_ERROR_LAUNCH_FAILED, Times::Once);
    faults::inject_on_this_thread(cudrv::call::cuStreamSynchronize, CUresult::CUDA_ERROR_LAUNCH_FAILED, Times::Once);
    let e = device.copy_to_pinned_async(&mut pinned, &stream).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_LAUNCH_FAILED), "{e}");
    let refused = pinned.as_slice().unwrap_err();
    assert!(refused.notes().iter().any(|n| n.contains("may still be running")), "{refused}");
    drop(pinned);
    let reports = my_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    // The host address is not cuEventRecord's argument: the report says what leaked, and
    // names the event, in its detail.
    assert!(reports[0].starts_with("cuEventRecord(..) failed"), "{reports:?}");
    assert!(reports[0].contains(&format!("64 bytes of pinned memory at {address:#x} leaked")), "{reports:?}");
    assert!(reports[0].contains("event 0x"), "{reports:?}");
    assert!(cudrv_standin::ledger().allocation(address as u64).is_some(), "leaked, not freed");
}

#[test]
fn a_pinned_buffer_serves_a_stream_of_another_context() {
    let ctx = context();
    let other = Context::new(&standin_driver().device(0).unwrap(), 0).unwrap();
    let stream = Stream::new(&other, 0).unwrap();
    let device = DeviceBuffer::<u32>::from_slice(&other, &[7; 16]).unwrap();
    let mut pinned = PinnedBuffer::<u32>::zeroed(&ctx, 16).unwrap();
    device.copy_to_pinned_async(&mut pinned, &stream).unwrap();
    assert_eq!(pinned.as_slice().unwrap(), [7; 16]);
    assert!(my_reports().is_empty());
}

#[test]
fn a_function_or_kernel_that_is_not_there_is_named_in_the_error() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let e = module.function("typo").unwrap_err();
    let cudrv::Error::Driver(e) = e else { panic!("{e}") };
    assert_eq!((e.call(), e.code()), (cudrv::call::cuModuleGetFunction, CUresult::CUDA_ERROR_NOT_FOUND));
    assert_eq!(e.notes(), [r#"no function named "typo" in it"#.to_string()], "{e}");
    let library = Library::load_ptx(standin_driver(), &fake_ptx(&["k"])).unwrap();
    let e = library.kernel("typo").unwrap_err();
    assert!(e.to_string().ends_with(r#"; note: no kernel named "typo" in it"#), "{e}");
    assert!(module.function("k").is_ok() && library.kernel("k").is_ok());
    assert!(my_reports().is_empty());
}
