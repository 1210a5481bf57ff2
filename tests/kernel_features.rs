//! The stand-in version of `examples/kernel_features.rs`: the same checks through cudrv's
//! safe layer, on the stand-in, with host implementations of the example's kernels
//! (`examples/kernels/kernel_features.cu`) registered in this process. The figures are the
//! H200's where driver-facts.md has them (occupancy, clusters, parameter layout).

mod common;

use std::cell::Cell;
use std::sync::Mutex;

use common::standin_driver;
use cudrv::sys::CUresult;
use cudrv::{
    CacheConfig, Context, DeviceBuffer, Error, FunctionAttribute, JitOptions, LaunchConfig, Library, Linker, Module,
    OccupancyFlags, Stream,
};
use cudrv_standin::{register_kernel, Param};

const PTX: &str = include_str!("../examples/kernels/kernel_features.ptx");
const BROKEN_PTX: &str =
    ".version 9.0\n.target sm_90\n.address_size 64\n\n.visible .entry broken()\n{\n\tbogus_instruction;\n\tret;\n}\n";

/// The addresses of `table`, `coeffs`, `counter` and `managed_value` that `use_globals`
/// reads (a host kernel cannot look up its module's globals).
static GLOBALS: Mutex<[u64; 4]> = Mutex::new([0; 4]);

fn register() {
    register_kernel("reverse_shared", &[Param::Ptr, Param::Ptr, Param::I32], |t| {
        let (input, out, n) = (t.ptr(0)?, t.ptr(1)?, t.param::<i32>(2)?);
        let n = u64::try_from(n).unwrap_or(0);
        let mut i = u64::from(t.thread_idx().x);
        while i < n {
            t.store(out, i, t.load::<f32>(input, n - 1 - i)?)?;
            i += u64::from(t.block_dim().x);
        }
        Ok(())
    });
    let char_param = Param::Bytes { size: 1, align: 1 };
    register_kernel("mixed_params", &[Param::Ptr, Param::I32, Param::F64, char_param, Param::F32], |t| {
        if t.global_x() == 0 {
            let c = t.param_bytes(3)?[0] as i8;
            let v = t.param::<i32>(1)? as f32 + t.param::<f64>(2)? as f32 + f32::from(c) + t.param::<f32>(4)?;
            t.store(t.ptr(0)?, 0, v)?;
        }
        Ok(())
    });
    register_kernel("use_globals", &[Param::Ptr, Param::I32], |t| {
        let [table, coeffs, counter, managed] = *GLOBALS.lock().unwrap();
        let (out, n) = (t.ptr(0)?, t.param::<i32>(1)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store(out, i, t.load::<f32>(table, i)? * t.load::<f32>(coeffs, i % 4)?)?;
            t.store(counter, 0, t.load::<u32>(counter, 0)? + 1)?;
        }
        if i == 0 {
            t.store(managed, 0, t.load::<i32>(managed, 0)? + 1)?;
        }
        Ok(())
    });
}

fn code(e: &Error) -> Option<CUresult> {
    match e {
        Error::Driver(e) => Some(e.code()),
        _ => None,
    }
}

fn context() -> Context {
    register();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

#[test]
fn jit_options_and_logs() {
    let ctx = context();
    let options = JitOptions::new().log_verbose(true).line_info(true).optimization_level(4);
    let loaded = Module::from_ptx_with(&ctx, PTX, &options).unwrap();
    // The stand-in answers a module load as the H200 answers PTX its JIT cache holds: the
    // wall time slot written with 0.0 (a float), both logs empty (driver-facts.md).
    assert_eq!(loaded.logs.wall_time_ms, Some(0.0));
    assert!(loaded.logs.error.is_empty() && loaded.logs.info.is_empty(), "{:?}", loaded.logs);

    let e = Module::from_ptx_with(&ctx, BROKEN_PTX, &JitOptions::new()).unwrap_err();
    assert_eq!(code(&e), Some(CUresult::CUDA_ERROR_INVALID_PTX));
    let text = e.to_string();
    assert!(
        text.contains("JIT error log") && text.contains("line 7") && text.contains("'bogus_instruction'"),
        "{text}"
    );
    let e = Library::from_ptx_with(standin_driver(), BROKEN_PTX, &JitOptions::new()).unwrap_err();
    assert_eq!(code(&e), Some(CUresult::CUDA_ERROR_INVALID_PTX));

    let mut linker = Linker::new_with(&ctx, &JitOptions::new().log_verbose(true)).unwrap();
    linker.add_ptx(PTX, "kernel_features.ptx").unwrap();
    let image = linker.complete().unwrap();
    let logs = linker.logs();
    assert!(logs.wall_time_ms.is_some_and(|w| w.is_finite() && w > 0.0), "{logs:?}");
    assert!(!logs.info.is_empty());
    drop(linker);
    // SAFETY: the linker's output is a complete image.
    let linked = unsafe { Module::load_data(&ctx, &image) }.unwrap();
    linked.function("use_globals").unwrap();
    assert_eq!(linked.global::<f32>("table").unwrap().len(), 256, "the link keeps the globals");
    let mut bad = Linker::new_with(&ctx, &JitOptions::new()).unwrap();
    let e = bad.add_ptx(BROKEN_PTX, "broken.ptx").unwrap_err();
    assert!(e.to_string().contains("bogus_instruction"), "{e}");
}

#[test]
fn attributes_parameters_and_cache_config() {
    let ctx = context();
    let module = Module::from_ptx_with(&ctx, PTX, &JitOptions::new()).unwrap().value;
    let reverse = module.function("reverse_shared").unwrap();
    let a = reverse.attributes().unwrap();
    assert_eq!((a.max_threads_per_block, a.num_regs, a.ptx_version), (1024, 4, (9, 0)));
    assert_eq!(a.max_dynamic_shared_size_bytes, 48 << 10);
    let mixed = module.function("mixed_params").unwrap();
    let got: Vec<(usize, usize)> = mixed.params().unwrap().iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(got, [(0, 8), (8, 4), (16, 8), (24, 1), (28, 4)]);
    assert_eq!(mixed.param_info(5).map_err(|e| e.code()), Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE)));
    reverse.set_cache_config(CacheConfig::PreferShared).unwrap();
    assert_eq!(reverse.attribute(FunctionAttribute::PreferredSharedMemoryCarveout).unwrap(), -1);
    reverse.set_preferred_shared_memory_carveout(Some(100)).unwrap();
    assert_eq!(reverse.attribute(FunctionAttribute::PreferredSharedMemoryCarveout).unwrap(), 100);
    assert_eq!(
        reverse.set_attribute(FunctionAttribute::NumRegs, 8).map_err(|e| e.code()),
        Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE))
    );

    // More than 48 KiB of dynamic shared memory, after opting in.
    let stream = Stream::new(&ctx, 0).unwrap();
    let n = 16 * 1024;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (din, dout) = (DeviceBuffer::from_slice(&ctx, &input).unwrap(), DeviceBuffer::<f32>::alloc(&ctx, n).unwrap());
    let count = n as i32;
    let config = LaunchConfig::new((1, 1, 1), (1024, 1, 1)).shared_mem((n * 4) as u32);
    let mut launch = reverse.builder(&stream);
    launch.arg(&din).arg(&dout).arg(&count);
    // SAFETY: reverse_shared(const float*, float*, int) with n values in each buffer.
    let refused = unsafe { launch.launch(config) };
    assert_eq!(refused.map_err(|e| e.code()), Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE)));
    reverse.set_max_dynamic_shared_size_bytes(n * 4).unwrap();
    // SAFETY: as above.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
    let out = dout.to_vec().unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == (n - 1 - i) as f32));

    // A library's kernel: attributes per device, parameter layout with a context current.
    let device = standin_driver().device(0).unwrap();
    let lib = Library::from_ptx_with(standin_driver(), PTX, &JitOptions::new()).unwrap().value;
    let kernel = lib.kernel("reverse_shared").unwrap();
    kernel.set_max_dynamic_shared_size_bytes(n * 4, &device).unwrap();
    assert_eq!(kernel.attributes(&device).unwrap().max_dynamic_shared_size_bytes, n * 4);
    kernel.set_cache_config(CacheConfig::PreferL1, &device).unwrap();
    let kgot: Vec<(usize, usize)> =
        lib.kernel("mixed_params").unwrap().params(&ctx).unwrap().iter().map(|p| (p.offset, p.size)).collect();
    assert_eq!(kgot, got);
}

#[test]
fn module_and_library_globals() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx_with(&ctx, PTX, &JitOptions::new()).unwrap().value;
    let table = module.global::<f32>("table").unwrap();
    let coeffs = module.global::<f32>("coeffs").unwrap();
    let counter = module.global::<u32>("counter").unwrap();
    assert_eq!((table.len(), coeffs.len(), counter.len()), (256, 4, 1));
    let values: Vec<f32> = (0..256).map(|i| i as f32).collect();
    table.copy_from_host(&values).unwrap();
    coeffs.copy_from_host(&[1.0, 2.0, 3.0, 4.0]).unwrap();
    counter.copy_from_host(&[0]).unwrap();
    let managed = module.global::<i32>("managed_value").unwrap();
    *GLOBALS.lock().unwrap() = [table.as_raw(), coeffs.as_raw(), counter.as_raw(), managed.as_raw()];
    let out = DeviceBuffer::<f32>::alloc(&ctx, 256).unwrap();
    let use_globals = module.function("use_globals").unwrap();
    let n256 = 256i32;
    let mut launch = use_globals.builder(&stream);
    launch.arg(&out).arg(&n256);
    // SAFETY: use_globals(float*, int) with 256 values.
    unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (128, 1, 1))) }.unwrap();
    stream.synchronize().unwrap();
    let got = out.to_vec().unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as f32 * (1 + i % 4) as f32));
    assert_eq!(counter.to_vec().unwrap(), [256]);
    let e = module.global::<u32>("no_such_global").unwrap_err();
    assert_eq!(code(&e), Some(CUresult::CUDA_ERROR_NOT_FOUND));

    let lib = Library::from_ptx_with(standin_driver(), PTX, &JitOptions::new()).unwrap().value;
    let ltable = lib.global::<f32>(&ctx, "table").unwrap();
    ltable.copy_from_host(&values).unwrap();
    assert_eq!(ltable.to_vec().unwrap(), values);
    let lmanaged = lib.managed_global::<i32>(&ctx, "managed_value").unwrap();
    assert!(lmanaged.is_managed() && lmanaged.len() == 1);
    lmanaged.copy_from_host(&[41]).unwrap();
    let e = lib.managed_global::<f32>(&ctx, "table").unwrap_err();
    assert_eq!(code(&e), Some(CUresult::CUDA_ERROR_NOT_FOUND), "a global that is not managed");
    let lcoeffs = lib.global::<f32>(&ctx, "coeffs").unwrap();
    lcoeffs.copy_from_host(&[1.0; 4]).unwrap();
    let lcounter = lib.global::<u32>(&ctx, "counter").unwrap();
    *GLOBALS.lock().unwrap() = [ltable.as_raw(), lcoeffs.as_raw(), lcounter.as_raw(), lmanaged.as_raw()];
    let lib_use_globals = lib.kernel("use_globals").unwrap();
    let mut launch = lib_use_globals.builder(&stream);
    launch.arg(&out).arg(&n256);
    // SAFETY: as above.
    unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (128, 1, 1))) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(lmanaged.to_vec().unwrap(), [42]);
    assert_eq!(out.to_vec().unwrap(), values);
}

#[test]
fn occupancy_as_the_h200_answers() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx_with(&ctx, PTX, &JitOptions::new()).unwrap().value;
    let f = module.function("use_globals").unwrap();
    // driver-facts.md, "Kernels": 8 blocks of 256; 1024 threads and a grid of 264 with a
    // callback of 4096 bytes, called once; 49152 bytes for 2 blocks of 256.
    assert_eq!(f.max_active_blocks_per_multiprocessor(256, 0, OccupancyFlags::DEFAULT).unwrap(), 8);
    assert_eq!(f.max_active_blocks_per_multiprocessor(256, 0, OccupancyFlags::DISABLE_CACHING_OVERRIDE).unwrap(), 8);
    assert_eq!(f.max_active_blocks_per_multiprocessor(1024, 0, OccupancyFlags::DEFAULT).unwrap(), 2);
    assert_eq!(
        f.max_active_blocks_per_multiprocessor(32, 0, OccupancyFlags::DEFAULT).unwrap(),
        32,
        "32 blocks at most"
    );
    assert_eq!(
        f.max_active_blocks_per_multiprocessor(256, 40 << 10, OccupancyFlags::DEFAULT).unwrap(),
        5,
        "shared memory"
    );
    assert_eq!(
        f.max_active_blocks_per_multiprocessor(256, 64 << 10, OccupancyFlags::DEFAULT).unwrap(),
        0,
        "over 48 KiB"
    );
    let fixed = f.max_potential_block_size(4096, 0, 0).unwrap();
    assert_eq!((fixed.block_size, fixed.min_grid_size), (1024, 264));
    let calls = Cell::new(0u32);
    let thread = std::thread::current().id();
    let with = f
        .max_potential_block_size_with(
            |_| {
                assert_eq!(std::thread::current().id(), thread, "called on the calling thread");
                calls.set(calls.get() + 1);
                4096
            },
            0,
            0,
        )
        .unwrap();
    assert_eq!((with, calls.get()), (fixed, 1));
    let per_thread = f.max_potential_block_size_with(|threads| threads as usize * 64, 0, 0).unwrap();
    assert_eq!((per_thread.block_size, per_thread.min_grid_size), (512, 4 * 132));
    let limited = f.max_potential_block_size(0, 96, 0).unwrap();
    assert!(limited.block_size <= 96 && limited.block_size % 32 == 0, "{limited:?}");
    match f.max_potential_block_size_with(|threads| if threads > 64 { panic!("no blocks over 64") } else { 0 }, 0, 0) {
        Err(Error::InvalidArgument(e)) => assert!(e.why().contains("no blocks over 64")),
        other => panic!("{other:?}"),
    }
    assert_eq!(f.available_dynamic_shared_memory_per_block(2, 256).unwrap(), 49152);
    f.set_max_dynamic_shared_size_bytes(200 << 10).unwrap();
    assert_eq!(f.available_dynamic_shared_memory_per_block(2, 256).unwrap(), (228 << 10) / 2 - 1024);
    // 3 blocks of 1024 threads do not fit a multiprocessor: refused, as on the H200.
    let too_many = f.available_dynamic_shared_memory_per_block(3, 1024).unwrap_err();
    assert_eq!(code(&too_many), Some(CUresult::CUDA_ERROR_INVALID_VALUE), "{too_many}");
    let lib = Library::from_ptx_with(standin_driver(), PTX, &JitOptions::new()).unwrap().value;
    assert_eq!(lib.kernel("use_globals").unwrap().max_active_blocks_per_multiprocessor(&ctx, 256, 0, 0).unwrap(), 8);

    // Clusters: 528 clusters of 2 blocks of 128, potential size 8; no cluster: 0 and 8.
    let g = module.function("mixed_params").unwrap();
    let config = LaunchConfig::new((16, 1, 1), (128, 1, 1));
    let plain = g.builder(&stream);
    assert_eq!((plain.max_active_clusters(config).unwrap(), plain.max_potential_cluster_size(config).unwrap()), (0, 8));
    let mut launch = g.builder(&stream);
    launch.cluster((2, 1, 1));
    assert_eq!(
        (launch.max_active_clusters(config).unwrap(), launch.max_potential_cluster_size(config).unwrap()),
        (528, 8)
    );
    g.set_attribute(FunctionAttribute::NonPortableClusterSizeAllowed, 1).unwrap();
    assert_eq!(launch.max_potential_cluster_size(config).unwrap(), 16);
}

#[test]
fn occupancy_and_parameters_need_a_context_where_the_h200_does() {
    let ctx = context();
    let lib = Library::from_ptx_with(standin_driver(), PTX, &JitOptions::new()).unwrap().value;
    let kernel = lib.kernel("mixed_params").unwrap();
    let d = standin_driver();
    let (mut offset, mut size) = (0usize, 0usize);
    common::clear_current(d);
    // SAFETY: a live kernel and valid out-pointers.
    let r = unsafe { d.p().cuKernelGetParamInfo(kernel.as_raw(), 0, &mut offset, &mut size) };
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    let mut dptr = 7u64;
    let mut bytes = 9usize;
    // SAFETY: a live library and valid out-pointers.
    let r = unsafe { d.p().cuLibraryGetGlobal(&mut dptr, &mut bytes, lib.as_raw(), c"table".as_ptr()) };
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    // SAFETY: as above.
    let r = unsafe { d.p().cuLibraryGetManaged(&mut dptr, &mut bytes, lib.as_raw(), c"table".as_ptr()) };
    assert_eq!((r, dptr, bytes), (CUresult::CUDA_ERROR_NOT_FOUND, 7, 9), "NOT_FOUND leaves the out-values");
    // SAFETY: as above.
    let r = unsafe { d.p().cuLibraryGetManaged(&mut dptr, &mut bytes, lib.as_raw(), c"managed_value".as_ptr()) };
    assert_eq!((r, bytes), (CUresult::CUDA_SUCCESS, 4), "a managed global needs no context");
    drop(ctx);
}
