//! Managed memory: allocate it once for host and device, write it on the host, prefetch it
//! to the device, scale it with a kernel, prefetch it back and read it on the host, with
//! advice and range attributes; its pointer attributes are printed and checked. The host
//! access is safe code: `as_slice`/`as_mut_slice` wait for the streams the buffer was used
//! on. Every result is checked: `cargo run --example managed_memory`. Exits non-zero on a
//! wrong result.

use cudrv::{
    LaunchConfig, ManagedAdvice, ManagedAttach, ManagedBuffer, ManagedLocation, MemoryType, Module, PointerAttributes,
    Stream, StreamFlags,
};

const PTX: &str = include_str!("kernels/scale_f32.ptx");
const N: usize = 1 << 20;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let scale = Module::from_ptx(&ctx, PTX)?.function("scale_f32")?;
    let device = ManagedLocation::device_of(&ctx);
    let mut failures = 0usize;
    let mut check = |ok: bool, what: String| {
        println!("[{}] {what}", if ok { "ok" } else { "FAILED" });
        failures += usize::from(!ok);
    };

    // Written on the host, where it was allocated.
    let mut buf = ManagedBuffer::<f32>::zeroed(&ctx, N, ManagedAttach::Global)?;
    for (i, v) in buf.as_mut_slice()?.iter_mut().enumerate() {
        *v = (i % 1000) as f32;
    }

    // Where its pages should live, and who reads them.
    buf.advise(ManagedAdvice::SetPreferredLocation(device))?;
    buf.advise(ManagedAdvice::SetAccessedBy(ManagedLocation::Host))?;

    // To the device, a kernel, back to the host: all on one stream.
    buf.prefetch_async(device, &stream)?;
    let (factor, n) = (3.0f32, N as i32);
    let mut launch = scale.builder(&stream);
    launch.arg(&buf).arg(&factor).arg(&n);
    // SAFETY: scale_f32(float* x, float s, int n) over the buffer's N values, which stay
    // allocated until the stream is done (the buffer's drop waits for it).
    unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) }?;
    drop(launch);
    buf.prefetch_async(ManagedLocation::Host, &stream)?;

    let attrs = buf.range_attributes()?;
    println!("range attributes: {attrs:?}");
    check(attrs.preferred_location == Some(device), format!("preferred location {:?}", attrs.preferred_location));
    check(attrs.accessed_by.contains(&ManagedLocation::Host), format!("accessed by {:?}", attrs.accessed_by));
    check(
        attrs.last_prefetch_location == Some(ManagedLocation::Host),
        format!("last prefetch location {:?}", attrs.last_prefetch_location),
    );

    // No synchronize: the host access waits for the stream the buffer was used on.
    let values = buf.as_slice()?;
    let wrong = values.iter().enumerate().filter(|&(i, &v)| v != 3.0 * (i % 1000) as f32).count();
    check(wrong == 0, format!("scaled on the device, read on the host: {N} values, {wrong} wrong"));

    let a = PointerAttributes::of(driver, buf.as_raw() + 4096)?;
    println!("pointer attributes of an address inside it: {a:?}");
    check(a.managed, "managed".into());
    check(a.memory_type == Some(MemoryType::Device), format!("memory type {:?}", a.memory_type));
    check(a.device == ctx.device().as_raw(), format!("device {}", a.device));
    check(a.context == ctx.as_raw(), "its context".into());
    check(
        (a.range_start, a.range_size) == (buf.as_raw(), buf.size_bytes()),
        format!("range {:#x} + {} bytes", a.range_start, a.range_size),
    );
    check(a.host_pointer as u64 == buf.as_raw() + 4096, "the host pointer is the device pointer".into());

    stream.synchronize()?;
    if failures != 0 {
        println!("managed_memory: {failures} checks failed");
        std::process::exit(1);
    }
    println!("managed_memory: every result verified, 0 wrong");
    Ok(())
}
