//! Checks, on the driver of this machine (a GPU, or the stand-in in CI), what cudrv promises
//! about flags, raw handles and errors: `cargo run --example dependable_check`.
//!
//! - typed flags (stream, context, pinned host memory) read back as given, and a bit the
//!   driver does not know is refused by the driver;
//! - `into_raw` of a stream, an event and buffers that hold their context's last clone
//!   returns handles that are still alive;
//! - an IPC import inside a host function is refused with CUDA_ERROR_NOT_PERMITTED;
//! - an entry newer than the driver gives an error that leads with the reason.
//!
//! Prints one line per check; exits 1 if any failed.

use cudrv::sys::CUresult;
use cudrv::{
    Context, ContextFlags, DeviceBuffer, Event, EventFlags, HostAllocFlags, PinnedBuffer, Stream, StreamFlags,
};

#[path = "common/checks.rs"]
mod checks;
use checks::Checks;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    println!(
        "driver {} ({})",
        driver.version(),
        driver.path().map_or("in-process".into(), |p| p.display().to_string())
    );
    let device = driver.device(0)?;
    let mut c = Checks::default();

    // Typed flags.
    let flags = ContextFlags::SCHED_BLOCKING_SYNC | ContextFlags::LMEM_RESIZE_TO_MAX;
    let ctx = Context::new(&device, flags)?;
    let got = ctx.flags()?;
    c.check(got == flags, format!("created context flags read back: {got:?}"));
    let primary = device.primary_context()?;
    let got = primary.flags()?;
    c.check(got.contains(ContextFlags::MAP_HOST), format!("primary context flags: {got:?}"));
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let got = stream.flags()?;
    c.check(got == StreamFlags::NON_BLOCKING, format!("stream flags read back: {got:?}"));
    let raw_bits = Stream::new(&ctx, 0)?.flags()?;
    c.check(raw_bits == StreamFlags::DEFAULT, format!("raw bits 0 accepted: {raw_bits:?}"));
    let unknown = Stream::new(&ctx, StreamFlags::from_bits_retain(0x100));
    c.check(
        unknown.as_ref().is_err_and(|e| e.code() == Some(CUresult::CUDA_ERROR_INVALID_VALUE)),
        format!("unknown stream flag 0x100 refused by the driver: {:?}", unknown.map(|s| s.as_raw())),
    );
    let host_flags = HostAllocFlags::PORTABLE | HostAllocFlags::DEVICEMAP;
    let pinned = PinnedBuffer::<u32>::zeroed_with(&ctx, 1024, host_flags)?;
    let got = pinned.flags()?;
    c.check(got == host_flags, format!("pinned memory flags read back: {got:?} ({:#x})", got.bits()));
    let plain = PinnedBuffer::<u32>::zeroed(&ctx, 16)?;
    println!("cuMemAllocHost memory's flags: {:?}", plain.flags());
    let unknown = PinnedBuffer::<u8>::zeroed_with(&ctx, 16, 0x40u32);
    c.check(
        unknown.is_err(),
        format!("unknown host allocation flag 0x40 refused: {:?}", unknown.err().map(|e| e.to_string())),
    );
    let event = Event::new(&ctx, EventFlags::DISABLE_TIMING | EventFlags::BLOCKING_SYNC)?;
    event.record(&stream)?;
    event.synchronize()?;
    c.check(true, "event with DISABLE_TIMING | BLOCKING_SYNC recorded and waited for");

    // into_raw keeps the context alive.
    let other = Context::new(&device, 0)?;
    let s = Stream::new(&other, 0)?;
    let e = Event::new(&other, EventFlags::DISABLE_TIMING)?;
    let b = DeviceBuffer::from_slice(&other, &[1u32, 2, 3])?;
    let raw_ctx = other.as_raw();
    drop(other);
    let (s, e, b) = (s.into_raw().ok(), e.into_raw().ok(), b.into_raw().ok());
    let p = driver.p();
    // SAFETY: plain queries of handles given up by cudrv; a dead one is answered with an error.
    let (sq, eq) = unsafe {
        (p.cuStreamQuery(s.unwrap_or(std::ptr::null_mut())), p.cuEventQuery(e.unwrap_or(std::ptr::null_mut())))
    };
    c.check(sq == CUresult::CUDA_SUCCESS, format!("stream given up with its context's last clone is alive: {sq}"));
    c.check(eq == CUresult::CUDA_SUCCESS, format!("event given up with its context's last clone is alive: {eq}"));
    let mut version = 0;
    // SAFETY: a plain query of a context kept alive by the handles given up.
    let cq = unsafe { p.cuCtxGetApiVersion(raw_ctx, &mut version) };
    c.check(cq == CUresult::CUDA_SUCCESS && b.is_some(), format!("their context is alive: {cq}"));
    // SAFETY: each was given up by cudrv and is released once here, in its context.
    unsafe {
        p.cuCtxPushCurrent(raw_ctx);
        if let Some(b) = b {
            p.cuMemFree(b);
        }
        if let Some(s) = s {
            p.cuStreamDestroy(s);
        }
        if let Some(e) = e {
            p.cuEventDestroy(e);
        }
        let mut popped = std::ptr::null_mut();
        p.cuCtxPopCurrent(&mut popped);
        p.cuCtxDestroy(raw_ctx);
    }

    // An IPC import inside a host function is refused at once (the driver forbids CUDA
    // calls there), never waited for.
    let pool = cudrv::MemoryPool::new(&primary, cudrv::ShareableHandleTypes::POSIX_FD)?;
    let stream = Stream::new(&primary, StreamFlags::NON_BLOCKING)?;
    let buffer = pool.alloc_async::<u8>(&stream, 1 << 16)?;
    stream.synchronize()?;
    // A real driver exports a pointer only from a pool whose shareable handle exists. The
    // handle is left open: the process ends soon after.
    let _fd = pool.export_fd()?;
    let export = buffer.export_ipc()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let (pool2, stream2) = (pool.clone(), stream.clone());
    stream.launch_host_fn(move || {
        let got = cudrv::ImportedBuffer::import(&pool2, &export, &stream2).map(|b| b.len()).map_err(|e| e.code());
        let _ = tx.send(got);
    })?;
    stream.synchronize()?;
    let got = rx.recv_timeout(std::time::Duration::from_secs(10));
    c.check(
        matches!(got, Ok(Err(Some(CUresult::CUDA_ERROR_NOT_PERMITTED)))),
        format!("an IPC import inside a host function: {got:?}"),
    );
    drop(buffer);
    stream.synchronize()?;

    // A gated entry's error leads with the reason (on a driver older than 13.1).
    if driver.version_code() < 13010 {
        // SAFETY: gated: nothing is called.
        let e = unsafe { driver.pc().cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0) };
        let text = e.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
        c.check(text.starts_with("cuLaunchHostFunc_v13010 needs driver 13.1;"), format!("gated error: {text}"));
    }

    println!("dependable_check: {} checks passed, {} failed", c.passed, c.failed);
    if c.failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
