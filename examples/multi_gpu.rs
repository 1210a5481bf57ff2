//! Two GPUs: a context on each, peer access enabled both ways, a kernel on device 0, a
//! stream on device 1 that waits for it through an event, a peer copy from device 0 to
//! device 1 (timed), and a kernel on device 1 from the same context-independent library;
//! then each device's module function launched on its own stream while the other device's
//! context is current (cudrv makes no switch there from driver 13.0):
//! `cargo run --example multi_gpu`. With one GPU it says so and exits 0. Exits non-zero on
//! a wrong result.

use cudrv::{Context, DeviceBuffer, Event, LaunchConfig, Library, Module, Stream};

const PTX: &str = include_str!("kernels/scale_f32.ptx");
const N: usize = 1 << 20;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let devices = driver.devices()?;
    let [d0, d1, ..] = devices.as_slice() else {
        println!("multi_gpu: needs two GPUs, this machine has {}; nothing to do", devices.len());
        return Ok(());
    };
    println!("devices 0 and 1: {} / {}, peer access possible: {}", d0.name()?, d1.name()?, d0.can_access_peer(d1)?);
    let (c0, c1) = (d0.primary_context()?, d1.primary_context()?);
    let enabled = (c0.enable_peer_access(&c1)?, c1.enable_peer_access(&c0)?);
    let again = c0.enable_peer_access(&c1)?;
    println!("peer access enabled both ways: {enabled:?}; enabling again changed nothing: {}", !again);

    let scale = Library::from_ptx(driver, PTX)?.kernel("scale_f32")?;
    let flags = cudrv::StreamFlags::NON_BLOCKING;
    let (s0, s1) = (Stream::new(&c0, flags)?, Stream::new(&c1, flags)?);
    let values: Vec<f32> = (0..N).map(|i| (i % 4096) as f32).collect();
    let x0 = DeviceBuffer::from_slice(&c0, &values)?;
    let x1 = DeviceBuffer::<f32>::alloc(&c1, N)?;
    let n = N as i32;
    let (two, three) = (2.0f32, 3.0f32);

    let mut launch = scale.builder(&s0);
    launch.arg(&x0).arg(&two).arg(&n);
    // SAFETY (both launches): the arguments match scale_f32(float*, float, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    let done0 = s0.record_event(cudrv::EventFlags::DISABLE_TIMING)?;
    s1.wait_event(&done0)?;
    let (start, stop) = (Event::new(&c1, 0)?, Event::new(&c1, 0)?);
    start.record(&s1)?;
    x1.copy_from_peer_async(&x0, &s1)?;
    stop.record(&s1)?;
    let mut launch = scale.builder(&s1);
    launch.arg(&x1).arg(&three).arg(&n);
    // SAFETY: as above.
    unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    s1.synchronize()?;

    let ms = start.elapsed_ms(&stop)?;
    let gb_s = x1.size_bytes() as f64 / (f64::from(ms) * 1e6);
    let wrong = x1.to_vec()?.iter().zip(&values).filter(|&(&y, &v)| y != v * 2.0 * 3.0).count();
    let disabled = (c0.disable_peer_access(&c1)?, c1.disable_peer_access(&c0)?, c0.disable_peer_access(&c1)?);
    println!("peer access disabled: {:?}; disabling again changed nothing: {}", (disabled.0, disabled.1), !disabled.2);
    println!("peer copy device 0 -> device 1: {} MiB in {ms:.3} ms ({gb_s:.1} GB/s)", x1.size_bytes() >> 20);
    println!("multi_gpu: {N} values scaled on device 0, copied, scaled on device 1, {wrong} wrong");
    let crossed = [launch_with_other_current(&c0, &s0, &c1, 2.0)?, launch_with_other_current(&c1, &s1, &c0, 3.0)?];
    println!("module functions launched with the other device's context current: {crossed:?} wrong");
    if wrong != 0 || crossed != [0, 0] || enabled != (true, true) || again || disabled != (true, true, false) {
        std::process::exit(1);
    }
    Ok(())
}

/// Scales 256 ones by `by` with a module function of `ctx` on `stream` (of `ctx`) while
/// `other` is current; returns how many values are wrong.
fn launch_with_other_current(ctx: &Context, stream: &Stream, other: &Context, by: f32) -> Result<usize, cudrv::Error> {
    let f = Module::from_ptx(ctx, PTX)?.function("scale_f32")?;
    let y = DeviceBuffer::from_slice(ctx, &[1.0f32; 256])?;
    let n = 256i32;
    other.set_current()?;
    let mut launch = f.builder(stream);
    launch.arg(&y).arg(&by).arg(&n);
    // SAFETY: the arguments match scale_f32(float*, float, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(256)) }?;
    stream.synchronize()?;
    Ok(y.to_vec()?.iter().filter(|&&v| v != by).count())
}
