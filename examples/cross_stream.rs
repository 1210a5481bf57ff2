//! Device memory used across streams from safe code (issue 18): the two programs that, on
//! an H200, made the device read freed and reused memory and the host read stale data,
//! each run 5 times and checked; and a pinned buffer that two threads copy from on two
//! streams. A host function holds one stream back (a gate another thread opens), so the
//! work queued behind it is really pending. `cargo run --example cross_stream`; under
//! `compute-sanitizer` on a GPU it must report no error. Exits non-zero on a wrong result.

use cudrv::{Context, DeviceBuffer, PinnedBuffer, Stream, StreamFlags};

#[path = "common/gate.rs"]
mod gate;
use gate::{gate, open_later};

const N: usize = 1 << 20;
const ROUNDS: usize = 5;

/// A copy queued on `s2` behind the gate reads `a`, which is dropped (freed on `s1`); a
/// buffer of the same size is then allocated and filled on `s1`. The copy must read `a`.
fn freed_while_queued(ctx: &Context, s1: &Stream, s2: &Stream) -> cudrv::Result<usize> {
    let a = DeviceBuffer::<u32>::alloc_async(s1, N)?;
    a.fill_async(1, s1)?;
    s1.synchronize()?;
    let out = DeviceBuffer::<u32>::alloc(ctx, N)?;
    out.fill(0)?;
    let tx = gate(s2)?;
    out.copy_from_device_async(&a, s2)?;
    drop(a);
    let b = DeviceBuffer::<u32>::alloc_async(s1, N)?;
    b.fill_async(2, s1)?;
    let _ = tx.send(());
    s2.synchronize()?;
    s1.synchronize()?;
    Ok(out.to_vec()?.iter().filter(|&&v| v != 1).count())
}

/// `to_vec` right after `copy_from_pinned_async` on a non-blocking stream must return the
/// copied values.
fn read_after_pinned_copy(ctx: &Context, s2: &Stream) -> cudrv::Result<usize> {
    let buf = DeviceBuffer::<u32>::alloc(ctx, N)?;
    buf.fill(0)?;
    let src = PinnedBuffer::from_slice(ctx, &vec![7u32; N])?;
    let opener = open_later(gate(s2)?);
    buf.copy_from_pinned_async(&src, s2)?;
    let got = buf.to_vec()?;
    let _ = opener.join();
    Ok(got.iter().filter(|&&v| v != 7).count())
}

/// Two threads copy from one pinned buffer on two streams (one held back); the host then
/// writes the buffer: the write must wait for both copies.
fn pinned_from_two_threads(ctx: &Context, s1: &Stream, s2: &Stream) -> cudrv::Result<usize> {
    let d1 = DeviceBuffer::<u32>::alloc(ctx, N)?;
    let d2 = DeviceBuffer::<u32>::alloc(ctx, N)?;
    let mut src = PinnedBuffer::from_slice(ctx, &vec![3u32; N])?;
    let tx = gate(s1)?;
    let (r1, r2) = std::thread::scope(|scope| {
        let src = &src;
        let t1 = scope.spawn(|| d1.copy_from_pinned_async(src, s1));
        let t2 = scope.spawn(|| d2.copy_from_pinned_async(src, s2));
        (t1.join(), t2.join())
    });
    let (Ok(r1), Ok(r2)) = (r1, r2) else {
        eprintln!("a copying thread panicked");
        return Ok(N);
    };
    r1?;
    r2?;
    let opener = open_later(tx);
    src.as_mut_slice()?.fill(9);
    let _ = opener.join();
    s1.synchronize()?;
    s2.synchronize()?;
    let wrong = |d: &DeviceBuffer<u32>| -> cudrv::Result<usize> { Ok(d.to_vec()?.iter().filter(|&&v| v != 3).count()) };
    Ok(wrong(&d1)? + wrong(&d2)?)
}

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let s1 = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let s2 = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut wrong = 0;
    for round in 0..ROUNDS {
        let w = freed_while_queued(&ctx, &s1, &s2)?;
        println!("round {round}: copy queued behind a host function, source freed and reused: {w} wrong");
        wrong += w;
        let w = read_after_pinned_copy(&ctx, &s2)?;
        println!("round {round}: to_vec after copy_from_pinned_async on a non-blocking stream: {w} wrong");
        wrong += w;
        let w = pinned_from_two_threads(&ctx, &s1, &s2)?;
        println!("round {round}: pinned buffer copied from by two threads on two streams, then written: {w} wrong");
        wrong += w;
    }
    ctx.synchronize()?;
    println!("cross_stream: 3 programs, {ROUNDS} rounds of {N} values, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
