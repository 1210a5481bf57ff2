//! A JIT link of PTX with options and logs: `Linker::new_with` (`cuLinkCreate`) with an
//! optimisation level, a register limit, line info, verbose logging and info/error log
//! buffers; the PTX added (`cuLinkAddData`), the link completed (`cuLinkComplete`), the info
//! log and the wall time printed, and `scale_f32` from the linked image run and checked:
//! `cargo run --example jit_link`. Exits non-zero on a wrong result.

use cudrv::{DeviceBuffer, JitOptions, LaunchConfig, Linker, Module, Stream};

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;

    let options = JitOptions::new()
        .optimization_level(3)
        .max_registers(64)
        .line_info(true)
        .log_verbose(true)
        .info_log(16 << 10)
        .error_log(16 << 10)
        .wall_time(true);
    let mut linker = Linker::new_with(&ctx, &options)?;
    linker.add_ptx(include_str!("kernels/scale_f32.ptx"), "scale_f32.ptx")?;
    let image = linker.complete()?;
    let logs = linker.logs();
    println!("jit_link: linked image of {} bytes; wall time {:?} ms", image.len(), logs.wall_time_ms);
    println!("jit_link: info log:");
    for line in logs.info.lines() {
        println!("  {line}");
    }
    if !logs.error.is_empty() {
        println!("jit_link: error log: {}", logs.error);
    }

    // SAFETY: a complete image the driver's linker just made.
    let module = unsafe { Module::load_data(&ctx, &image) }?;
    let f = module.function("scale_f32")?;
    let n: usize = 1 << 16;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = DeviceBuffer::from_slice(&ctx, &host)?;
    let (scale, count) = (3.0f32, n as i32);
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&scale).arg(&count);
    // SAFETY: the arguments match scale_f32(float*, float, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    stream.synchronize()?;
    let out = x.to_vec()?;
    let wrong = out.iter().enumerate().filter(|&(i, &v)| v != 3.0 * i as f32).count();
    println!("jit_link: scale_f32 from the linked image: {n} values, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
