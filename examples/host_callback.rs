//! Host callbacks in stream order: a closure through `Stream::launch_host_fn`, and one
//! packaged as a `HostFn` for a raw `cuLaunchHostFunc` call (as for any host-function
//! entry cudrv has no safe form of): `cargo run --example host_callback`. Each reports
//! through a channel what it saw; exits non-zero if either did not run, or ran out of order.

use std::sync::mpsc;

use cudrv::sys::CUresult;
use cudrv::{DeviceBuffer, HostFn, PinnedBuffer, Stream};

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
    let (tx, rx) = mpsc::channel();

    let data = DeviceBuffer::<u8>::alloc(&ctx, 4096)?;
    data.fill_async(7, &stream)?;
    let safe_tx = tx.clone();
    stream.launch_host_fn(move || {
        let _ = safe_tx.send(("launch_host_fn", std::thread::current().id()));
    })?;

    let mut host = PinnedBuffer::<u8>::zeroed(&ctx, 4096)?;
    data.copy_to_pinned_async(&mut host, &stream)?;
    let f = HostFn::new(move || {
        let _ = tx.send(("HostFn", std::thread::current().id()));
    });
    // SAFETY: a live stream; the callback and its data come from `f`.
    let status = unsafe { driver.p().cuLaunchHostFunc(stream.as_raw(), f.callback(), f.user_data()) };
    if status != CUresult::CUDA_SUCCESS {
        println!("cuLaunchHostFunc failed: {}", driver.status_text(status));
        std::process::exit(1);
    }
    f.handed_over();

    stream.synchronize()?;
    let ran: Vec<_> = rx.try_iter().collect();
    let names: Vec<&str> = ran.iter().map(|(name, _)| *name).collect();
    let on_other_thread = ran.iter().all(|(_, id)| *id != std::thread::current().id());
    let copied = host.as_slice()?.iter().all(|&v| v == 7);
    println!(
        "host functions ran in this order: {names:?}, on a driver thread: {on_other_thread}, data copied: {copied}"
    );
    if names != ["launch_host_fn", "HostFn"] || !on_other_thread || !copied {
        std::process::exit(1);
    }
    Ok(())
}
