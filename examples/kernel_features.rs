//! Function and kernel attributes, globals, JIT options and logs, and occupancy, checked on
//! a real GPU (compute capability 9.0 for the cluster queries): `cargo run --release
//! --example kernel_features`. Its stand-in version is `tests/kernel_features.rs` (the
//! same checks, with host implementations of these kernels); each check prints `[ok]` or
//! `[FAILED]`, and the program exits 1 if any failed.
//!
//! Kernels: `examples/kernels/kernel_features.ptx`, compiled from `kernel_features.cu`.

use std::cell::Cell;

use cudrv::sys::CUresult;
use cudrv::{
    CacheConfig, DeviceBuffer, Error, FunctionAttribute, JitOptions, LaunchConfig, Library, Linker, Module,
    OccupancyFlags, ParamInfo, Stream,
};

#[path = "common/checks.rs"]
mod checks;
use checks::Checks;

const PTX: &str = include_str!("kernels/kernel_features.ptx");

/// PTX that does not compile: the JIT's error log says why.
const BROKEN_PTX: &str =
    ".version 9.0\n.target sm_90\n.address_size 64\n\n.visible .entry broken()\n{\n\tbogus_instruction;\n\tret;\n}\n";

fn code(e: &Error) -> Option<CUresult> {
    match e {
        Error::Driver(e) => Some(e.code()),
        _ => None,
    }
}

fn main() -> Result<(), Error> {
    let mut c = Checks::default();
    let driver = cudrv::init()?;
    let device = driver.device(0)?;
    let ctx = device.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;
    println!("kernel_features: {} on driver {}", device.name()?, driver.version());

    // --- JIT options and logs: a module.
    let options = JitOptions::new().log_verbose(true).line_info(true).optimization_level(4);
    let loaded = Module::from_ptx_with(&ctx, PTX, &options)?;
    let module = loaded.value;
    println!("module JIT: wall time {:?} ms, info log: {:?}", loaded.logs.wall_time_ms, loaded.logs.info);
    let wall = loaded.logs.wall_time_ms.unwrap_or(-1.0);
    c.check(
        wall.is_finite() && (0.0..60_000.0).contains(&wall),
        format!("module wall time read as a float: {wall} ms"),
    );
    c.check(loaded.logs.error.is_empty(), "no error log on success");

    // A JIT failure: the error's text carries the error log.
    match Module::from_ptx_with(&ctx, BROKEN_PTX, &JitOptions::new()) {
        Ok(_) => c.check(false, "broken PTX loaded"),
        Err(e) => {
            let text = e.to_string();
            println!("broken PTX: {text}");
            c.check(code(&e) == Some(CUresult::CUDA_ERROR_INVALID_PTX), "broken PTX: CUDA_ERROR_INVALID_PTX");
            c.check(text.contains("JIT error log") && text.contains("bogus_instruction"), "its error names the log");
        }
    }

    // --- The linker with options.
    let mut linker = Linker::new_with(&ctx, &JitOptions::new().log_verbose(true))?;
    linker.add_ptx(PTX, "kernel_features.ptx")?;
    let image = linker.complete()?;
    let logs = linker.logs();
    println!("link: {} bytes, wall time {:?} ms, info log: {:?}", image.len(), logs.wall_time_ms, logs.info);
    let wall = logs.wall_time_ms.unwrap_or(-1.0);
    c.check(wall.is_finite() && wall > 0.0 && wall < 60_000.0, format!("link wall time {wall} ms (a float, not 0)"));
    c.check(!logs.info.is_empty(), "the linker's verbose info log is not empty");
    drop(linker);
    // SAFETY: the linker's output is a complete cubin.
    let linked = unsafe { Module::load_data(&ctx, &image) }?;
    c.ok(linked.function("use_globals"), "the linked image has use_globals");
    let mut bad = Linker::new_with(&ctx, &JitOptions::new())?;
    match bad.add_ptx(BROKEN_PTX, "broken.ptx") {
        Ok(()) => c.check(bad.complete().is_err(), "a link of broken PTX fails"),
        Err(e) => {
            c.check(e.to_string().contains("bogus_instruction"), format!("a broken link's error names the log: {e}"))
        }
    }

    // --- Attributes, names, parameter layout of a module function.
    let reverse = module.function("reverse_shared")?;
    if let Some(a) = c.ok(reverse.attributes(), "function attributes") {
        println!("reverse_shared: {a:?}");
        c.check(a.max_threads_per_block > 0 && a.max_threads_per_block <= 1024, "max threads per block in 1..=1024");
        c.check(a.num_regs > 0, "registers > 0");
        c.check(a.ptx_version == (9, 0), format!("PTX version {:?} is 9.0", a.ptx_version));
        c.check(a.binary_version.0 >= 9, format!("binary version {:?} is 9.x", a.binary_version));
        c.check(a.max_dynamic_shared_size_bytes == 48 << 10, "48 KiB of dynamic shared memory before opting in");
    }
    c.check(reverse.name().ok().as_deref() == Some("reverse_shared"), "cuFuncGetName");
    let mixed = module.function("mixed_params")?;
    let want = [(0, 8), (8, 4), (16, 8), (24, 1), (28, 4)];
    let params = mixed.params();
    println!("mixed_params parameters: {params:?}");
    let got: Vec<(usize, usize)> = params.unwrap_or_default().iter().map(|p: &ParamInfo| (p.offset, p.size)).collect();
    c.check(got == want, "mixed_params(float*, int, double, char, float): 5 parameters at 0, 8, 16, 24, 28");
    c.check(
        mixed.param_info(5).map_err(|e| e.code()) == Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE)),
        "index 5: INVALID_VALUE",
    );
    c.ok(reverse.set_cache_config(CacheConfig::PreferShared), "cuFuncSetCacheConfig");
    c.ok(reverse.set_preferred_shared_memory_carveout(Some(100)), "preferred carveout 100%");
    c.check(
        reverse.attribute(FunctionAttribute::PreferredSharedMemoryCarveout).ok() == Some(100),
        "the carveout reads back as 100",
    );
    c.check(
        reverse.set_attribute(FunctionAttribute::NumRegs, 8).map_err(|e| e.code())
            == Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE)),
        "a read-only attribute cannot be set",
    );

    // --- More than 48 KiB of dynamic shared memory: refused, then allowed after opting in.
    let n = 16 * 1024; // 64 KiB of f32
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (din, dout) = (DeviceBuffer::from_slice(&ctx, &input)?, DeviceBuffer::<f32>::alloc(&ctx, n)?);
    let count = n as i32;
    let config = LaunchConfig::new((1, 1, 1), (1024, 1, 1)).shared_mem((n * 4) as u32);
    let mut launch = reverse.builder(&stream);
    launch.arg(&din).arg(&dout).arg(&count);
    // SAFETY: reverse_shared(const float*, float*, int) with n values in each buffer.
    let refused = unsafe { launch.launch(config) };
    c.check(
        refused.map_err(|e| e.code()) == Err(Some(CUresult::CUDA_ERROR_INVALID_VALUE)),
        "64 KiB without opting in: INVALID_VALUE",
    );
    c.ok(reverse.set_max_dynamic_shared_size_bytes(n * 4), "opt in to 64 KiB");
    c.check(reverse.attributes().map(|a| a.max_dynamic_shared_size_bytes).ok() == Some(n * 4), "reads back 64 KiB");
    // SAFETY: as above.
    unsafe { launch.launch(config) }?;
    stream.synchronize()?;
    let out = dout.to_vec()?;
    let wrong = out.iter().enumerate().filter(|&(i, &v)| v != (n - 1 - i) as f32).count();
    c.check(wrong == 0, format!("reverse through 64 KiB of shared memory: {n} values, {wrong} wrong"));

    // --- Globals of a module: __device__, __constant__, used by a kernel.
    let table = module.global::<f32>("table")?;
    let coeffs = module.global::<f32>("coeffs")?;
    let counter = module.global::<u32>("counter")?;
    c.check((table.len(), coeffs.len(), counter.len()) == (256, 4, 1), "global sizes 256, 4, 1");
    let values: Vec<f32> = (0..256).map(|i| i as f32).collect();
    table.copy_from_host(&values)?;
    coeffs.copy_from_host(&[1.0, 2.0, 3.0, 4.0])?;
    counter.copy_from_host(&[0])?;
    let out = DeviceBuffer::<f32>::alloc(&ctx, 256)?;
    let use_globals = module.function("use_globals")?;
    let n256 = 256i32;
    let mut launch = use_globals.builder(&stream);
    launch.arg(&out).arg(&n256);
    // SAFETY: use_globals(float*, int) with 256 values.
    unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (128, 1, 1))) }?;
    stream.synchronize()?;
    let got = out.to_vec()?;
    let wrong = got.iter().enumerate().filter(|&(i, &v)| v != i as f32 * (1 + i % 4) as f32).count();
    c.check(wrong == 0, format!("use_globals read table and coeffs: 256 values, {wrong} wrong"));
    c.check(counter.to_vec()? == [256], "the kernel counted 256 threads in `counter`");
    c.check(table.to_vec()? == values, "table reads back");
    c.check(module.global::<u64>("coeffs").map(|g| g.len()).ok() == Some(2), "the 16-byte coeffs as 2 u64");
    match module.global::<[u8; 3]>("coeffs") {
        Err(e) => c.check(
            matches!(e, Error::InvalidArgument(_)) && e.to_string().contains("16 bytes"),
            format!("16 bytes as [u8; 3]: {e}"),
        ),
        Ok(_) => c.check(false, "16 bytes as [u8; 3] accepted"),
    }
    match module.global::<u32>("no_such_global") {
        Err(e) => c.check(
            code(&e) == Some(CUresult::CUDA_ERROR_NOT_FOUND)
                && e.to_string().contains("no global named \"no_such_global\""),
            format!("a missing global: {e}"),
        ),
        Ok(_) => c.check(false, "a missing global was found"),
    }
    // The global keeps the module loaded.
    let keep = module.global::<f32>("table")?;
    drop((table, module));
    c.check(keep.to_vec()? == values, "a global outlives the module's last handle");

    // --- A library: kernels per device, globals per context, managed globals.
    let lib = Library::from_ptx_with(driver, PTX, &JitOptions::new())?.value;
    let kernel = lib.kernel("reverse_shared")?;
    c.check(kernel.name().ok().as_deref() == Some("reverse_shared"), "cuKernelGetName");
    c.ok(kernel.set_max_dynamic_shared_size_bytes(n * 4, &device), "cuKernelSetAttribute: 64 KiB on device 0");
    c.check(
        kernel.attributes(&device).map(|a| a.max_dynamic_shared_size_bytes).ok() == Some(n * 4),
        "per device: reads back",
    );
    c.ok(kernel.set_cache_config(CacheConfig::PreferL1, &device), "cuKernelSetCacheConfig");
    let kparams = lib.kernel("mixed_params")?.params(&ctx);
    let kgot: Vec<(usize, usize)> = kparams.unwrap_or_default().iter().map(|p| (p.offset, p.size)).collect();
    c.check(kgot == want, "cuKernelGetParamInfo: the same layout");
    let ltable = lib.global::<f32>(&ctx, "table")?;
    ltable.copy_from_host(&values)?;
    c.check(ltable.to_vec()? == values, "a library global reads back");
    let managed = lib.managed_global::<i32>(&ctx, "managed_value")?;
    c.check(managed.is_managed() && managed.len() == 1, "cuLibraryGetManaged: one i32");
    managed.copy_from_host(&[41])?;
    let lcoeffs = lib.global::<f32>(&ctx, "coeffs")?;
    lcoeffs.copy_from_host(&[1.0, 1.0, 1.0, 1.0])?;
    let lib_use_globals = lib.kernel("use_globals")?;
    let mut launch = lib_use_globals.builder(&stream);
    launch.arg(&out).arg(&n256);
    // SAFETY: as above.
    unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (128, 1, 1))) }?;
    stream.synchronize()?;
    c.check(managed.to_vec()? == [42], "the kernel added 1 to the managed global");
    c.check(out.to_vec()? == values, "the library's kernel read its own globals");

    // --- Occupancy.
    let f = &use_globals;
    let blocks = f.max_active_blocks_per_multiprocessor(256, 0, OccupancyFlags::DEFAULT);
    println!("use_globals: {blocks:?} blocks of 256 per multiprocessor");
    c.check(blocks.as_ref().is_ok_and(|b| (1..=32).contains(b)), "max active blocks per multiprocessor in 1..=32");
    let flagged = f.max_active_blocks_per_multiprocessor(256, 0, OccupancyFlags::DISABLE_CACHING_OVERRIDE);
    c.check(flagged.is_ok_and(|b| b >= 1), "with DISABLE_CACHING_OVERRIDE");
    let fixed = f.max_potential_block_size(4096, 0, 0);
    let calls = Cell::new(0u32);
    let with = f.max_potential_block_size_with(
        |_threads| {
            calls.set(calls.get() + 1);
            4096
        },
        0,
        0,
    );
    println!("potential block size: fixed {fixed:?}, closure {with:?} after {} calls", calls.get());
    c.check(
        fixed.is_ok() && fixed.as_ref().ok() == with.as_ref().ok(),
        "a closure of constant 4 KiB gives the fixed answer",
    );
    c.check(calls.get() > 0, "the driver called the closure (on this thread)");
    let per_thread = f.max_potential_block_size_with(|threads| threads as usize * 64, 0, 0);
    c.check(
        per_thread
            .as_ref()
            .is_ok_and(|p| p.block_size >= 32 && p.block_size <= 1024 && p.block_size % 32 == 0 && p.min_grid_size > 0),
        format!("64 bytes per thread: {per_thread:?}"),
    );
    let limited = f.max_potential_block_size(0, 96, 0);
    c.check(limited.as_ref().is_ok_and(|p| p.block_size <= 96), format!("a block size limit of 96: {limited:?}"));
    match f.max_potential_block_size_with(|threads| if threads > 64 { panic!("no blocks over 64") } else { 0 }, 0, 0) {
        Err(Error::InvalidArgument(e)) => {
            c.check(e.why().contains("no blocks over 64"), "a panicking closure: caught, named")
        }
        other => c.check(false, format!("a panicking closure: {other:?}")),
    }
    let smem = f.available_dynamic_shared_memory_per_block(2, 256);
    c.check(
        smem.as_ref().is_ok_and(|b| *b > 0 && *b <= 228 << 10),
        format!("available dynamic shared memory for 2 blocks: {smem:?}"),
    );
    let kblocks = lib.kernel("use_globals")?.max_active_blocks_per_multiprocessor(&ctx, 256, 0, 0);
    c.check(kblocks.as_ref().ok() == blocks.as_ref().ok(), "a library kernel's occupancy is its function's");

    // Clusters (compute capability 9.0+).
    let mut launch = use_globals.builder(&stream);
    launch.cluster((2, 1, 1));
    let cluster_config = LaunchConfig::new((16, 1, 1), (128, 1, 1));
    let clusters = launch.max_active_clusters(cluster_config);
    let size = launch.max_potential_cluster_size(cluster_config);
    println!("clusters of 2: {clusters:?} active; potential cluster size {size:?}");
    if device.compute_capability()?.0 >= 9 {
        c.check(clusters.is_ok_and(|n| n >= 1), "max active clusters of 2 >= 1");
        c.check(size.is_ok_and(|s| (2..=16).contains(&s)), "potential cluster size in 2..=16");
    }

    println!("kernel_features: {} checks passed, {} failed", c.passed, c.failed);
    if c.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
