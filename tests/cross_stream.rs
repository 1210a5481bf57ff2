//! Sound use of device memory across streams (issue 18, item 2), on the stand-in, which
//! orders stream work as a GPU does: the two programs of the issue (no `unsafe` in either)
//! that made the H200 read freed, reused memory and return stale data, and a pinned
//! buffer used from two threads on two streams. Each blocks a stream with a host function
//! (a gate another thread opens) so that the work queued behind it is really pending.

mod common;

use std::sync::{Arc, Barrier};

use common::{gate, open_later, standin_driver};
use cudrv::{Context, DeviceBuffer, PinnedBuffer, Stream, StreamFlags};

const N: usize = 1 << 16;

fn context() -> Context {
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

fn non_blocking(ctx: &Context) -> Stream {
    Stream::new(ctx, StreamFlags::NON_BLOCKING).unwrap()
}

/// The first program: a copy queued on stream 2 behind a blocked host function
/// reads `a`, which is dropped (freed on stream 1) before the copy runs; a new buffer of
/// the same size allocated and filled on stream 1 may get `a`'s address. The copy must
/// still read `a`'s values: the free waits for the copy.
#[test]
fn a_copy_queued_on_another_stream_never_reads_a_freed_and_reused_buffer() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    for round in 0..5 {
        let a = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
        a.fill_async(1, &s1).unwrap();
        s1.synchronize().unwrap();
        let out = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
        out.fill(0).unwrap();
        let tx = gate(&s2);
        out.copy_from_device_async(&a, &s2).unwrap();
        let a_address = a.as_raw();
        drop(a);
        let b = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
        b.fill_async(2, &s1).unwrap();
        let reused = b.as_raw() == a_address;
        tx.send(()).unwrap();
        s2.synchronize().unwrap();
        s1.synchronize().unwrap();
        let got = out.to_vec().unwrap();
        let wrong = got.iter().filter(|&&v| v != 1).count();
        assert_eq!(wrong, 0, "round {round}: {wrong} of {N} values read from freed memory (address reused: {reused})");
    }
}

/// The second program: `to_vec` right after `copy_from_pinned_async` on a
/// non-blocking stream (the synchronous copy runs on the legacy stream, which does not
/// wait for non-blocking streams). It must return the copied values.
#[test]
fn a_synchronous_read_waits_for_a_copy_queued_on_a_non_blocking_stream() {
    let ctx = context();
    let s2 = non_blocking(&ctx);
    for round in 0..5 {
        let buf = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
        buf.fill(0).unwrap();
        let src = PinnedBuffer::from_slice(&ctx, &vec![7u32; N]).unwrap();
        let opener = open_later(gate(&s2));
        buf.copy_from_pinned_async(&src, &s2).unwrap();
        let got = buf.to_vec().unwrap();
        opener.join().unwrap();
        let wrong = got.iter().filter(|&&v| v != 7).count();
        assert_eq!(wrong, 0, "round {round}: {wrong} of {N} values were read before the copy ran");
    }
}

/// The same with a stream-ordered buffer used on a stream other than its own, and a fill.
#[test]
fn synchronous_copies_and_fills_wait_for_every_stream_the_buffer_was_used_on() {
    let ctx = context();
    let (home, other) = (non_blocking(&ctx), non_blocking(&ctx));
    let buf = DeviceBuffer::<u32>::alloc_async(&home, N).unwrap();
    buf.fill_async(3, &home).unwrap();
    let opener = open_later(gate(&other));
    buf.fill_async(4, &other).unwrap();
    // The synchronous fill runs after the queued one: its value stays.
    buf.fill(5).unwrap();
    opener.join().unwrap();
    assert!(buf.to_vec().unwrap().iter().all(|&v| v == 5));
}

/// A stream-ordered allocation's first use on another stream waits for the allocation:
/// its stream is blocked, so the use on the other stream (a fill) runs only after it.
#[test]
fn the_first_use_on_another_stream_waits_for_the_allocation() {
    let ctx = context();
    let (home, other) = (non_blocking(&ctx), non_blocking(&ctx));
    let tx = gate(&home);
    let buf = DeviceBuffer::<u32>::alloc_async(&home, N).unwrap();
    buf.fill_async(6, &home).unwrap();
    buf.fill_async(8, &other).unwrap();
    // The fill on `other` is behind the allocation (and the home stream's fill).
    assert!(!other.is_idle().unwrap());
    tx.send(()).unwrap();
    other.synchronize().unwrap();
    assert!(buf.to_vec().unwrap().iter().all(|&v| v == 8));
}

/// A `cuMemAlloc`ed buffer used on a blocked stream: dropping it waits for that use
/// before `cuMemFree`, so the queued copy still reads it (no sticky fault follows).
#[test]
fn dropping_a_buffer_waits_for_its_uses_on_streams() {
    let ctx = context();
    let s = non_blocking(&ctx);
    let a = DeviceBuffer::from_slice(&ctx, &vec![9u32; N]).unwrap();
    let out = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    let opener = open_later(gate(&s));
    out.copy_from_device_async(&a, &s).unwrap();
    drop(a);
    opener.join().unwrap();
    s.synchronize().unwrap();
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 9));
}

/// The escape hatch: with tracking disabled the caller orders the streams itself (here
/// by synchronising), and nothing else is waited for.
#[test]
fn with_tracking_disabled_the_caller_orders_the_streams() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    let a = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
    // SAFETY: every use below is ordered by the synchronisations that follow it.
    unsafe { a.disable_use_tracking() };
    a.fill_async(1, &s1).unwrap();
    s1.synchronize().unwrap();
    let out = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    out.copy_from_device_async(&a, &s2).unwrap();
    s2.synchronize().unwrap();
    drop(a);
    assert!(out.to_vec().unwrap().iter().all(|&v| v == 1));
}

/// Two threads queue copies from one pinned buffer on two streams, one of them blocked;
/// `as_mut_slice` must wait for both copies (the guard covers every queued use), so the
/// values written after it never reach the device. Repeated, as the two threads' calls
/// interleave differently each time.
#[test]
fn a_pinned_buffer_used_by_two_threads_on_two_streams_waits_for_both_copies() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    let d1 = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    let d2 = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    for round in 0..40 {
        let mut src = PinnedBuffer::from_slice(&ctx, &vec![1u32; N]).unwrap();
        d1.fill(0).unwrap();
        d2.fill(0).unwrap();
        let tx = gate(&s1);
        let start = Arc::new(Barrier::new(2));
        std::thread::scope(|scope| {
            let (src, start) = (&src, &start);
            scope.spawn(|| {
                start.wait();
                d1.copy_from_pinned_async(src, &s1).unwrap();
            });
            scope.spawn(|| {
                start.wait();
                d2.copy_from_pinned_async(src, &s2).unwrap();
            });
        });
        let opener = open_later(tx);
        src.as_mut_slice().unwrap().fill(9);
        opener.join().unwrap();
        s1.synchronize().unwrap();
        s2.synchronize().unwrap();
        let wrong = d1.to_vec().unwrap().iter().filter(|&&v| v != 1).count();
        assert_eq!(wrong, 0, "round {round}: the host wrote the pinned buffer while a copy from it was queued");
        drop(src);
    }
}

/// Dropping a pinned buffer used by two threads on two streams frees it only after both
/// copies: the stand-in fails a copy from freed pinned memory (a sticky fault), which
/// would show at the synchronisations.
#[test]
fn a_pinned_buffer_used_on_two_streams_is_freed_after_both_copies() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    let d1 = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    let d2 = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    for _ in 0..10 {
        let src = PinnedBuffer::from_slice(&ctx, &vec![5u32; N]).unwrap();
        let tx = gate(&s1);
        let start = Barrier::new(2);
        std::thread::scope(|scope| {
            let (src, start) = (&src, &start);
            scope.spawn(|| {
                start.wait();
                d1.copy_from_pinned_async(src, &s1).unwrap();
            });
            scope.spawn(|| {
                start.wait();
                d2.copy_from_pinned_async(src, &s2).unwrap();
            });
        });
        let opener = open_later(tx);
        drop(src);
        opener.join().unwrap();
        s1.synchronize().unwrap();
        s2.synchronize().unwrap();
        assert!(d1.to_vec().unwrap().iter().all(|&v| v == 5));
    }
}
