//! Two green contexts running kernels side by side: device 0's SMs are split into two
//! groups (`SmResource::split`, `cuDevSmResourceSplitByCount`), a green context is made of
//! each (`GreenContext::new`), and each runs `scale_f32` on its own buffer on its own stream
//! (`GreenContext::stream`), both launched before either is waited for; both results are
//! checked: `cargo run --example green_contexts`. Needs driver 12.5+ (green context
//! streams); an older driver is reported and the program exits 0. Exits non-zero on a
//! wrong result.

use cudrv::{DeviceBuffer, GreenContext, LaunchConfig, Module, SmResource};

const N: usize = 1 << 20;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    if driver.version_code() < 12050 {
        println!("green_contexts: needs driver 12.5 (green context streams); this driver is {}", driver.version());
        return Ok(());
    }
    let device = driver.device(0)?;
    let all = SmResource::of_device(&device)?;
    let split = all.split(&device, 2, all.sm_count() / 4)?;
    println!(
        "green_contexts: {} SMs split into {} groups of {} SMs ({} left over; smallest group {}, alignment {})",
        all.sm_count(),
        split.groups.len(),
        split.groups.first().map_or(0, |g| g.sm_count()),
        split.remainder.sm_count(),
        all.min_partition_size(),
        all.coscheduled_alignment()
    );
    if split.groups.len() != 2 {
        eprintln!("green_contexts: expected two groups");
        std::process::exit(1);
    }

    let ptx = include_str!("kernels/scale_f32.ptx");
    let mut work = Vec::new();
    for (i, group) in split.groups.iter().enumerate() {
        let green = GreenContext::new(&device, &[*group])?;
        let stream = green.stream(0)?;
        let module = Module::from_ptx(green.context(), ptx)?;
        let host: Vec<f32> = (0..N).map(|j| (j % 1000) as f32).collect();
        let buffer = DeviceBuffer::from_slice(green.context(), &host)?;
        let scale = (i + 2) as f32;
        println!("green context {i}: {} SMs", green.sm_resource()?.sm_count());
        work.push((green, stream, module, buffer, scale));
    }
    // Both launches are queued before either is waited for: the groups run side by side.
    let n = N as i32;
    for (_, stream, module, buffer, scale) in &work {
        let f = module.function("scale_f32")?;
        let mut launch = f.builder(stream);
        launch.arg(buffer).arg(scale).arg(&n);
        // SAFETY: the arguments match scale_f32(float*, float, int).
        unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    }
    let mut wrong = 0;
    for (_, stream, _, buffer, scale) in &work {
        stream.synchronize()?;
        let out = buffer.to_vec()?;
        wrong += out.iter().enumerate().filter(|&(j, &v)| v != (j % 1000) as f32 * scale).count();
    }
    println!("green_contexts: two green contexts scaled {N} values each, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
