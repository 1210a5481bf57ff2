//! Creating and dropping a stream, an event and a 1 MiB allocation through cudrv's
//! handles, against the same raw `p` calls; making a view of a buffer, against the address
//! arithmetic it stands for, and a 4 KiB device-to-device copy into a view, against the
//! raw `cuMemcpyDtoD`; and the tracking of uses across streams (docs/memory.md): 4 KiB
//! asynchronous copies between stream-ordered buffers on their own stream (the
//! single-stream path, which must stay within 2% of the raw calls), on two other streams
//! in turn, and a buffer's whole life with a use on another stream (first use, free),
//! each against the raw calls it makes. A benchmark, not a test.
//!
//! `cargo bench --bench handles -- [--driver stand-in|system] [--iters N] [--rounds R]`
//!
//! Both sides run with the context already current (the common case), so the handle side
//! pays for what it adds: asking the driver for the current context, the `Arc`, and the
//! error checks.

use std::hint::black_box;
use std::time::Instant;

use cudrv::sys::{CUdeviceptr, CUevent, CUresult, CUstream};
use cudrv::{DeviceBuffer, DeviceSlice, DeviceSliceMut, Driver, Event, LoadOptions, Stream};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn per_iter<F: FnMut()>(iters: u32, f: &mut F) -> f64 {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_nanos() as f64 / f64::from(iters)
}

fn compare(title: &str, rounds: usize, iters: u32, mut raw: impl FnMut(), mut handle: impl FnMut()) {
    let (mut r, mut h) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        r.push(per_iter(iters, &mut raw));
        h.push(per_iter(iters, &mut handle));
    }
    let (r, h) = (median(r), median(h));
    println!("{title:<34} raw p {r:9.1} ns   handle {h:9.1} ns   ({:+.1}%)", (h / r - 1.0) * 100.0);
}

fn main() {
    let mut system = false;
    let (mut iters, mut rounds) = (20_000u32, 11usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--driver" => system = args.next().as_deref() == Some("system"),
            "--iters" => iters = args.next().and_then(|v| v.parse().ok()).unwrap_or(iters),
            "--rounds" => rounds = args.next().and_then(|v| v.parse().ok()).unwrap_or(rounds),
            _ => {}
        }
    }
    let driver = if system {
        unsafe { Driver::load(LoadOptions::from_env().expect("settings")) }.expect("the system driver")
    } else {
        cudrv_standin::StandIn::new(13000).unwrap().load(LoadOptions::default()).unwrap()
    };
    let d: &'static Driver = Box::leak(Box::new(driver));
    println!("driver: {} (CUDA {})", d.source(), d.version());
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    ctx.set_current().unwrap();
    let p = d.p();

    compare(
        "stream create + drop",
        rounds,
        iters,
        || {
            let mut s: CUstream = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the stream is destroyed right after.
            unsafe {
                assert_eq!(p.cuStreamCreate(&mut s, 0), CUresult::CUDA_SUCCESS);
                assert_eq!(p.cuStreamDestroy(black_box(s)), CUresult::CUDA_SUCCESS);
            }
        },
        || drop(black_box(Stream::new(&ctx, 0).unwrap())),
    );
    compare(
        "event create + drop",
        rounds,
        iters,
        || {
            let mut e: CUevent = std::ptr::null_mut();
            // SAFETY: as above.
            unsafe {
                assert_eq!(p.cuEventCreate(&mut e, 0), CUresult::CUDA_SUCCESS);
                assert_eq!(p.cuEventDestroy(black_box(e)), CUresult::CUDA_SUCCESS);
            }
        },
        || drop(black_box(Event::new(&ctx, 0).unwrap())),
    );
    compare(
        "1 MiB cuMemAlloc + drop",
        rounds,
        iters,
        || {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: as above.
            unsafe {
                assert_eq!(p.cuMemAlloc(&mut ptr, 1 << 20), CUresult::CUDA_SUCCESS);
                assert_eq!(p.cuMemFree(black_box(ptr)), CUresult::CUDA_SUCCESS);
            }
        },
        || drop(black_box(DeviceBuffer::<u8>::alloc(&ctx, 1 << 20).unwrap())),
    );
    // Views: no driver call, no allocation (issue 18's target); a bounds check and the
    // arithmetic.
    let mut buf = DeviceBuffer::<u32>::alloc(&ctx, 1 << 20).unwrap();
    let base = buf.as_raw();
    compare(
        "view: slice + split_at + as_raw",
        rounds,
        iters,
        || {
            let (start, mid) = (black_box(1000u64), black_box(500u64));
            black_box(base + start * 4 + mid * 4);
        },
        || {
            let view = buf.slice(black_box(1000)..black_box(3000)).unwrap();
            black_box(view.split_at(black_box(500)).unwrap().1.as_raw());
        },
    );
    let src = DeviceBuffer::<u32>::alloc(&ctx, 1024).unwrap();
    compare(
        "4 KiB copy into a view (DtoD)",
        rounds,
        iters,
        || {
            // SAFETY: both ranges are live allocations of at least 4 KiB.
            let status = unsafe { p.cuMemcpyDtoD(black_box(base + 4096), src.as_raw(), 4096) };
            assert_eq!(status, CUresult::CUDA_SUCCESS);
        },
        || {
            let mut view = buf.slice_mut(1024..2048).unwrap();
            view.copy_from_device(&src).unwrap();
        },
    );
    // Uses across streams. The single-stream path: stream-ordered buffers used on their
    // own stream (one pointer comparison each).
    let s1 = Stream::new(&ctx, 0).unwrap();
    let s2 = Stream::new(&ctx, 0).unwrap();
    let s3 = Stream::new(&ctx, 0).unwrap();
    let a = DeviceBuffer::<u32>::alloc_async(&s1, 1024).unwrap();
    let b = DeviceBuffer::<u32>::alloc_async(&s1, 1024).unwrap();
    let (pa, pb, r1, r2, r3) = (a.as_raw(), b.as_raw(), s1.as_raw(), s2.as_raw(), s3.as_raw());
    compare(
        "single stream: 4 KiB DtoD async",
        rounds,
        iters,
        || {
            // SAFETY: live allocations of 4 KiB; a live stream.
            let status = unsafe { p.cuMemcpyDtoDAsync(black_box(pa), pb, 4096, r1) };
            assert_eq!(status, CUresult::CUDA_SUCCESS);
        },
        || a.copy_from_device_async(&b, &s1).unwrap(),
    );
    s1.synchronize().unwrap();
    // Two other streams in turn (after the first use on each: a lock and a look-up).
    let (mut raw_turn, mut turn) = (false, false);
    compare(
        "other streams in turn: 4 KiB DtoD async",
        rounds,
        iters,
        || {
            raw_turn = !raw_turn;
            let s = if raw_turn { r2 } else { r3 };
            // SAFETY: as above.
            let status = unsafe { p.cuMemcpyDtoDAsync(black_box(pa), pb, 4096, s) };
            assert_eq!(status, CUresult::CUDA_SUCCESS);
        },
        || {
            turn = !turn;
            let s = if turn { &s2 } else { &s3 };
            a.copy_from_device_async(&b, s).unwrap();
        },
    );
    ctx.synchronize().unwrap();
    // A buffer's life with one use on another stream: the raw side allocates, copies and
    // frees; the handle side adds the first use's wait for the allocation and the free's
    // wait for the use (two events).
    compare(
        "alloc_async + use on other stream + drop",
        rounds,
        iters / 4,
        || {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: valid out-pointer; live streams; the allocation is 4 KiB.
            unsafe {
                assert_eq!(p.cuMemAllocAsync(&mut ptr, 4096, r1), CUresult::CUDA_SUCCESS);
                assert_eq!(p.cuMemcpyDtoDAsync(black_box(ptr), pb, 4096, r2), CUresult::CUDA_SUCCESS);
                assert_eq!(p.cuMemFreeAsync(ptr, r1), CUresult::CUDA_SUCCESS);
            }
        },
        || {
            let c = DeviceBuffer::<u32>::alloc_async(&s1, 1024).unwrap();
            c.copy_from_device_async(&b, &s2).unwrap();
            drop(black_box(c));
        },
    );
    ctx.synchronize().unwrap();
}
