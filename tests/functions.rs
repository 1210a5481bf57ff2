//! Functions, kernels, globals and JIT options against the stand-in: function attributes,
//! names, module globals of fake images, `cuModuleLoadDataEx`, the linker.
//! `tests/kernel_features.rs` has the stand-in version of `examples/kernel_features.rs`
//! (parameter layout, library globals, JIT logs, occupancy).

mod common;

use common::{fake_image, fake_ptx, my_reports, standin_driver};
use cudrv::sys::{CUjitInputType, CUlinkState, CUresult};
use cudrv::{
    CacheConfig, Context, DeviceBuffer, Error, FunctionAttribute, JitOptions, Library, Linker, Module, PinnedBuffer,
    Stream,
};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// A fake image with these kernels and globals (`(name, bytes)`).
fn image_with_globals(kernels: &[&str], globals: &[(&str, usize)]) -> std::ffi::CString {
    let mut s = String::from("cudrv-fake-image\n");
    for k in kernels {
        s.push_str(&format!("kernel {k}\n"));
    }
    for (g, size) in globals {
        s.push_str(&format!("global {g} {size}\n"));
    }
    std::ffi::CString::new(s).unwrap()
}

fn driver_code(e: &Error) -> Option<CUresult> {
    match e {
        Error::Driver(e) => Some(e.code()),
        _ => None,
    }
}

#[test]
fn function_attributes_read_and_set() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    // driver-facts.md, "Edge cases": an empty kernel on the H200 has 1024 threads, 4 registers.
    assert_eq!(f.attribute(FunctionAttribute::MaxThreadsPerBlock).unwrap(), 1024);
    let all = f.attributes().unwrap();
    assert_eq!(all.max_threads_per_block, 1024);
    assert_eq!(all.num_regs, 4);
    assert_eq!((all.shared_size_bytes, all.const_size_bytes, all.local_size_bytes), (0, 0, 0));
    assert_eq!(all.ptx_version, (9, 0));
    assert_eq!(all.binary_version, (9, 0));
    assert_eq!(all.max_dynamic_shared_size_bytes, 48 << 10, "48 KiB until a kernel opts in");
    assert_eq!(all.preferred_shared_memory_carveout, None);

    // Opting in to 64 KiB of dynamic shared memory (driver-facts.md, "Launches").
    f.set_max_dynamic_shared_size_bytes(64 << 10).unwrap();
    assert_eq!(f.attributes().unwrap().max_dynamic_shared_size_bytes, 64 << 10);
    f.set_preferred_shared_memory_carveout(Some(50)).unwrap();
    f.set_preferred_shared_memory_carveout(None).unwrap();
    // Beyond the device's opt-in limit, and a read-only attribute: INVALID_VALUE, unchanged.
    let e = f.set_max_dynamic_shared_size_bytes(usize::MAX).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE));
    let e = f.set_attribute(FunctionAttribute::NumRegs, 8).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE));
    assert_eq!(f.attributes().unwrap().max_dynamic_shared_size_bytes, 64 << 10);
    // An attribute number the driver does not know.
    let unknown = FunctionAttribute::Raw(cudrv::sys::CUfunction_attribute(9999));
    assert_eq!(f.attribute(unknown).unwrap_err().code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE));
    assert_eq!(f.required_cluster_dims().unwrap(), (0, 0, 0));
    assert!(my_reports().is_empty());
}

#[test]
fn an_attribute_call_the_driver_refuses_without_a_context_is_retried_in_it() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    common::clear_current(standin_driver());
    // First without a context check; on INVALID_CONTEXT, once more in the function's context.
    faults::inject_on_this_thread(cudrv::call::cuFuncGetAttribute, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::Once);
    assert_eq!(f.attribute(FunctionAttribute::MaxThreadsPerBlock).unwrap(), 1024);
    // A second refusal is the error; the calling thread's context is unchanged.
    faults::inject_on_this_thread(cudrv::call::cuFuncGetAttribute, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::N(2));
    let e = f.attribute(FunctionAttribute::NumRegs).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_CONTEXT));
    assert!(common::current_context(standin_driver()).is_null());
    assert_eq!(f.attribute(FunctionAttribute::NumRegs).unwrap(), 4);
}

#[test]
fn read_only_attributes_are_asked_once_per_handle() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    // A failed first read is not remembered: the next one asks again.
    faults::inject_on_this_thread(cudrv::call::cuFuncGetAttribute, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    assert_eq!(f.attribute(FunctionAttribute::NumRegs).unwrap_err().code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    assert_eq!(f.attribute(FunctionAttribute::NumRegs).unwrap(), 4);
    assert_eq!(f.attribute(FunctionAttribute::MaxThreadsPerBlock).unwrap(), 1024);
    // From now on every cuFuncGetAttribute fails: the read-only values answered before
    // come from the handle (and its clones), settable ones are still asked.
    faults::inject_on_this_thread(cudrv::call::cuFuncGetAttribute, CUresult::CUDA_ERROR_UNKNOWN, Times::Always);
    let clone = f.clone();
    assert_eq!(f.attribute(FunctionAttribute::NumRegs).unwrap(), 4);
    assert_eq!(clone.attribute(FunctionAttribute::MaxThreadsPerBlock).unwrap(), 1024);
    let settable = f.attribute(FunctionAttribute::MaxDynamicSharedSizeBytes).unwrap_err();
    assert_eq!(settable.code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    let not_asked = f.attribute(FunctionAttribute::LocalSizeBytes).unwrap_err();
    assert_eq!(not_asked.code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    // Another handle of the same function asks for itself.
    let again = module.function("k").unwrap();
    assert_eq!(again.attribute(FunctionAttribute::NumRegs).unwrap_err().code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    faults::clear();
    assert_eq!(again.attribute(FunctionAttribute::NumRegs).unwrap(), 4);
}

#[test]
fn names_of_functions_and_kernels() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["first", "second"])).unwrap();
    assert_eq!(module.function("second").unwrap().name().unwrap(), "second");
    let library = Library::load_ptx(standin_driver(), &fake_ptx(&["lib_kernel"])).unwrap();
    let kernel = library.kernel("lib_kernel").unwrap();
    assert_eq!(kernel.name().unwrap(), "lib_kernel");
    let device = standin_driver().device(0).unwrap();
    assert_eq!(kernel.attribute(FunctionAttribute::MaxThreadsPerBlock, &device).unwrap(), 1024);
    assert_eq!(kernel.attributes(&device).unwrap().num_regs, 4);
    drop(ctx);
}

#[test]
fn gated_entries_say_which_driver_they_need() {
    // A 12.2 driver has no cuFuncGetName (12.3) and no cuFuncGetParamInfo (12.4).
    let old = cudrv_standin::StandIn::new(12020).unwrap().load(Default::default()).unwrap();
    let old: &'static cudrv::Driver = Box::leak(Box::new(old));
    old.init().unwrap();
    let ctx = old.device(0).unwrap().primary_context().unwrap();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    let e = f.name().unwrap_err();
    assert!(e.as_driver().and_then(|d| d.unresolved()).is_some(), "{e}");
    assert!(e.to_string().contains("needs driver 12.3"), "{e}");
    let e = f.params().unwrap_err();
    assert!(e.to_string().contains("needs driver 12.4"), "{e}");
    let e = f.param_info(0).unwrap_err();
    assert!(e.to_string().contains("needs driver 12.4"), "{e}");
    // Attributes are older than any supported driver.
    assert_eq!(f.attributes().unwrap().max_threads_per_block, 1024);
}

#[test]
fn cache_config_reaches_the_driver() {
    let ctx = context();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    // The stand-in does not emulate cuFuncSetCacheConfig: it answers NOT_SUPPORTED, which
    // shows the call was made (on the H200 it succeeds: examples/kernel_features.rs).
    match f.set_cache_config(CacheConfig::PreferShared) {
        Ok(()) => {}
        Err(e) => assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_NOT_SUPPORTED), "{e}"),
    }
}

#[test]
fn module_globals_are_typed_device_memory() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::load_ptx(&ctx, &image_with_globals(&["k"], &[("table", 16), ("odd", 6)])).unwrap();
    let table = module.global::<u32>("table").unwrap();
    assert_eq!((table.len(), table.size_bytes()), (4, 16));
    assert!(!table.is_managed());
    assert_eq!(table.module().unwrap().as_raw(), module.as_raw());
    // The stand-in zeroes a global; copies both ways.
    assert_eq!(table.to_vec().unwrap(), [0, 0, 0, 0]);
    table.copy_from_host(&[1, 2, 3, 4]).unwrap();
    let mut back = [0u32; 2];
    table.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [1, 2]);
    // The same symbol as bytes, and as u64 pairs.
    assert_eq!(module.global::<u8>("table").unwrap().len(), 16);
    assert_eq!(module.global::<u64>("table").unwrap().to_vec().unwrap(), [1 | 2 << 32, 3 | 4 << 32]);

    // Asynchronous copies through pinned buffers, and device-to-device.
    let pinned = PinnedBuffer::from_slice(&ctx, &[7u32, 8, 9, 10]).unwrap();
    table.copy_from_pinned_async(&pinned, &stream).unwrap();
    let mut out = PinnedBuffer::<u32>::zeroed(&ctx, 4).unwrap();
    table.copy_to_pinned_async(&mut out, &stream).unwrap();
    assert_eq!(out.as_slice().unwrap(), [7, 8, 9, 10]);
    let device = DeviceBuffer::from_slice(&ctx, &[5u32, 6]).unwrap();
    table.copy_from_device(&device).unwrap();
    let copy = DeviceBuffer::<u32>::alloc(&ctx, 4).unwrap();
    table.copy_to_device(&copy).unwrap();
    assert_eq!(copy.to_vec().unwrap(), [5, 6, 9, 10]);
    // Too long: refused before any driver call.
    let e = table.copy_from_host(&[0; 5]).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");

    // A size that is not a whole number of T names the symbol and both sizes.
    let e = module.global::<u32>("odd").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::InvalidArgument(_)), "{text}");
    assert!(text.contains("\"odd\"") && text.contains("6 bytes") && text.contains("4 bytes"), "{text}");
    // A missing symbol: NOT_FOUND naming it.
    let e = module.global::<u32>("typo").unwrap_err();
    assert_eq!(driver_code(&e), Some(CUresult::CUDA_ERROR_NOT_FOUND));
    assert!(e.to_string().contains("no global named \"typo\""), "{e}");
    let e = module.global::<u32>("bad\0name").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");

    // The global keeps its module loaded: the module's last handle is dropped, the global
    // still reads what was written.
    let raw = module.as_raw();
    drop(module);
    assert!(cudrv_standin::ledger().handle_is_live("module", raw as u64));
    assert_eq!(table.to_vec().unwrap(), [5, 6, 9, 10]);
    drop(table);
    assert!(my_reports().is_empty());
}

#[test]
fn a_global_is_a_kernel_argument() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::load_ptx(&ctx, &image_with_globals(&["k"], &[("g", 8)])).unwrap();
    let f = module.function("k").unwrap();
    let g = module.global::<u64>("g").unwrap();
    let mut launch = f.builder(&stream);
    launch.arg(&g);
    // SAFETY: a fake kernel runs nothing.
    unsafe { launch.launch(cudrv::LaunchConfig::new((1, 1, 1), (1, 1, 1))) }.unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn loading_with_jit_options() {
    let ctx = context();
    let options = JitOptions::new().optimization_level(3).max_registers(32).line_info(true).log_verbose(true);
    let loaded = Module::load_ptx_with(&ctx, &fake_ptx(&["jitted"]), &options).unwrap();
    loaded.value.function("jitted").unwrap();
    // The stand-in answers a load as the H200 answers PTX its JIT cache holds: the wall
    // time slot written with 0.0 (a float), both logs empty (driver-facts.md).
    assert_eq!((loaded.logs.error.as_str(), loaded.logs.info.as_str()), ("", ""));
    assert_eq!(loaded.logs.wall_time_ms, Some(0.0), "{:?}", loaded.logs);
    let none = JitOptions::new().wall_time(false).info_log(0).error_log(0);
    let loaded = Module::from_ptx_with(&ctx, "cudrv-fake-image\nkernel a\n", &none).unwrap();
    assert_eq!(loaded.logs.wall_time_ms, None);
    // A bad image: nothing loaded, the driver's error.
    let e = Module::load_ptx_with(&ctx, c"not an image", &options).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_IMAGE));
    assert!(e.to_string().contains("JIT error log: not a stand-in fake image, nor PTX"), "{e}");
    let lib = Library::load_ptx_with(standin_driver(), &fake_ptx(&["lk"]), &options).unwrap();
    lib.value.kernel("lk").unwrap();
}

#[test]
fn linker_with_options_and_adopted() {
    let ctx = context();
    let mut linker = Linker::new_with(&ctx, &JitOptions::new().log_verbose(true)).unwrap();
    linker.add_ptx("cudrv-fake-image\nkernel one\n", "one.ptx").unwrap();
    let e = linker.add_ptx("not an image", "bad.ptx").unwrap_err();
    assert_eq!(driver_code(&e), Some(CUresult::CUDA_ERROR_INVALID_IMAGE));
    let image = linker.complete().unwrap();
    let logs = linker.logs();
    assert!(logs.wall_time_ms.is_some_and(|ms| ms > 0.0 && ms.is_finite()), "{logs:?}");
    assert!(logs.info.contains("linked 1 kernels"), "{logs:?}");
    drop(linker);
    // SAFETY: the linker's output is a complete, NUL-terminated fake image.
    unsafe { Module::load_data(&ctx, &image) }.unwrap().function("one").unwrap();

    // A link state made raw is adopted: dropping the linker destroys it.
    let d = standin_driver();
    let mut raw: CUlinkState = std::ptr::null_mut();
    ctx.run(|| {
        // SAFETY: valid out-pointer; no options.
        unsafe { d.pc().cuLinkCreate(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut raw) }
    })
    .unwrap();
    // SAFETY: a live link state of `ctx`, destroyed by nothing else, made without options.
    let mut adopted = unsafe { Linker::from_raw(&ctx, raw) };
    assert_eq!(adopted.as_raw(), raw);
    // SAFETY: a NUL-terminated fake image.
    unsafe { adopted.add_data(CUjitInputType::CU_JIT_INPUT_PTX, &fake_image(&["two"]), "two") }.unwrap();
    assert!(!adopted.complete().unwrap().is_empty());
    assert_eq!(adopted.logs(), cudrv::JitLogs::default());
    drop(adopted);
    assert!(!cudrv_standin::ledger().handle_is_live("link state", raw as u64));
    assert!(my_reports().is_empty());
}

#[test]
fn the_new_types_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Linker>();
    send_sync::<cudrv::Global<f32>>();
    send_sync::<cudrv::JitOutput<Module>>();
    send_sync::<JitOptions>();
    send_sync::<cudrv::FunctionAttributes>();
}
