//! Streams and events: creation, flags and priorities, queries, and destroyed handles
//! (which crash a real driver: recorded as such).

use super::{case, handle, made, number32, sentinel, step, stream, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// A stream, destroyed.
fn dead_stream(e: &Env) -> Result<CUstream, Out> {
    let s = stream(e)?;
    // SAFETY: a live stream of this case.
    made("cuStreamDestroy", unsafe { e.p.cuStreamDestroy(s) }, s)
}

/// An event (flags 0), destroyed.
fn dead_event(e: &Env) -> Result<CUevent, Out> {
    let ev = event(e, 0)?;
    // SAFETY: a live event of this case.
    made("cuEventDestroy", unsafe { e.p.cuEventDestroy(ev) }, ev)
}

/// An event with `flags`.
pub fn event(e: &Env, flags: u32) -> Result<CUevent, Out> {
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuEventCreate", unsafe { e.p.cuEventCreate(&mut ev, flags) }, ev)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("stream.create", Ctx, |e| {
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuStreamCreate(&mut s, 0)).eq("stream", handle(s))
        }),
        case!("stream.create_non_blocking", Ctx, |e| {
            let mut s: CUstream = sentinel();
            let st = e.p.cuStreamCreate(&mut s, CUstream_flags::CU_STREAM_NON_BLOCKING.0);
            let mut f = UNTOUCHED as u32;
            let _ = e.p.cuStreamGetFlags(s, &mut f);
            Out::of(st).eq("flags", number32(f))
        }),
        case!("stream.create_bad_flags", Ctx, |e| {
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuStreamCreate(&mut s, 0x80)).eq("stream", handle(s))
        }),
        case!("stream.create_no_context", Init, |e| {
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuStreamCreate(&mut s, 0)).info("stream", handle(s))
        }),
        case!("stream.flags", Ctx, |e| {
            let s = with!(stream(e));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuStreamGetFlags(s, &mut f)).eq("flags", number32(f))
        }),
        case!("stream.flags_null_stream", Ctx, |e| {
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuStreamGetFlags(std::ptr::null_mut(), &mut f)).eq("flags", number32(f))
        }),
        case!("stream.priority_default", Ctx, |e| {
            let s = with!(stream(e));
            let mut p = -77;
            Out::of(e.p.cuStreamGetPriority(s, &mut p)).eq("priority", p)
        }),
        case!("stream.priority_greatest", Ctx, |e| {
            let mut s = std::ptr::null_mut();
            step!(e.p.cuStreamCreateWithPriority(&mut s, 0, -5));
            let mut p = -77;
            Out::of(e.p.cuStreamGetPriority(s, &mut p)).eq("priority", p)
        }),
        case!("stream.priority_clamped", Ctx, |e| {
            let mut s = std::ptr::null_mut();
            step!(e.p.cuStreamCreateWithPriority(&mut s, 0, -100));
            let mut p = -77;
            Out::of(e.p.cuStreamGetPriority(s, &mut p)).eq("priority", p)
        }),
        case!("stream.priority_positive", Ctx, |e| {
            let mut s = std::ptr::null_mut();
            step!(e.p.cuStreamCreateWithPriority(&mut s, 0, 3));
            let mut p = -77;
            Out::of(e.p.cuStreamGetPriority(s, &mut p)).eq("priority", p)
        }),
        case!("stream.query_idle", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuStreamQuery(s))
        }),
        case!("stream.query_null_stream", Ctx, |e| { Out::of(e.p.cuStreamQuery(std::ptr::null_mut())) }),
        case!("stream.synchronize", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("stream.get_ctx", Ctx, |e| {
            let s = with!(stream(e));
            let mut c: CUcontext = sentinel();
            let st = e.p.cuStreamGetCtx(s, &mut c);
            Out::of(st).eq("is_primary", c == e.ctx)
        }),
        case!("stream.get_id", Ctx, |e| {
            let s = with!(stream(e));
            let mut id = UNTOUCHED;
            Out::of(e.p.cuStreamGetId(s, &mut id)).eq("written", id != UNTOUCHED)
        }),
        case!("stream.destroy", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuStreamDestroy(s))
        }),
        case!("stream.destroy_null", Ctx, |e| { Out::of(e.p.cuStreamDestroy(std::ptr::null_mut())) }),
        case!("stream.destroyed_query", Ctx, |e| {
            let s = with!(dead_stream(e));
            Out::of(e.p.cuStreamQuery(s))
        }),
        case!("stream.destroyed_synchronize", Ctx, |e| {
            let s = with!(dead_stream(e));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("stream.destroyed_destroy", Ctx, |e| {
            let s = with!(dead_stream(e));
            Out::of(e.p.cuStreamDestroy(s))
        }),
        case!("stream.destroyed_alloc_async", Ctx, |e| {
            let s = with!(dead_stream(e));
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAllocAsync(&mut d, 256, s))
        }),
        case!("stream.wait_event", Ctx, |e| {
            let s = with!(stream(e));
            let ev = with!(event(e, 0));
            step!(e.p.cuEventRecord(ev, std::ptr::null_mut()));
            Out::of(e.p.cuStreamWaitEvent(s, ev, 0))
        }),
        case!("event.create", Ctx, |e| {
            let mut ev: CUevent = sentinel();
            Out::of(e.p.cuEventCreate(&mut ev, 0)).eq("event", handle(ev))
        }),
        case!("event.create_bad_flags", Ctx, |e| {
            let mut ev: CUevent = sentinel();
            Out::of(e.p.cuEventCreate(&mut ev, 0x100)).eq("event", handle(ev))
        }),
        case!("event.create_no_context", Init, |e| {
            let mut ev: CUevent = sentinel();
            Out::of(e.p.cuEventCreate(&mut ev, 0)).eq("event", handle(ev))
        }),
        case!("event.query_unrecorded", Ctx, |e| {
            let ev = with!(event(e, 0));
            Out::of(e.p.cuEventQuery(ev))
        }),
        case!("event.synchronize_unrecorded", Ctx, |e| {
            let ev = with!(event(e, 0));
            Out::of(e.p.cuEventSynchronize(ev))
        }),
        case!("event.record_query", Ctx, |e| {
            let s = with!(stream(e));
            let ev = with!(event(e, 0));
            step!(e.p.cuEventRecord(ev, s));
            step!(e.p.cuStreamSynchronize(s));
            Out::of(e.p.cuEventQuery(ev))
        }),
        case!("event.elapsed", Ctx, |e| {
            let (a, b) = (with!(event(e, 0)), with!(event(e, 0)));
            step!(e.p.cuEventRecord(a, std::ptr::null_mut()));
            step!(e.p.cuEventRecord(b, std::ptr::null_mut()));
            step!(e.p.cuEventSynchronize(b));
            let mut ms = -1.0f32;
            let st = e.p.cuEventElapsedTime(&mut ms, a, b);
            Out::of(st).eq("non_negative", ms >= 0.0)
        }),
        case!("event.elapsed_unrecorded", Ctx, |e| {
            let (a, b) = (with!(event(e, 0)), with!(event(e, 0)));
            let mut ms = -1.0f32;
            Out::of(e.p.cuEventElapsedTime(&mut ms, a, b))
        }),
        case!("event.elapsed_disable_timing", Ctx, |e| {
            let flag = CUevent_flags::CU_EVENT_DISABLE_TIMING.0;
            let (a, b) = (with!(event(e, flag)), with!(event(e, flag)));
            step!(e.p.cuEventRecord(a, std::ptr::null_mut()));
            step!(e.p.cuEventRecord(b, std::ptr::null_mut()));
            step!(e.p.cuEventSynchronize(b));
            let mut ms = -1.0f32;
            Out::of(e.p.cuEventElapsedTime(&mut ms, a, b))
        }),
        case!("event.destroy_null", Ctx, |e| { Out::of(e.p.cuEventDestroy(std::ptr::null_mut())) }),
        case!("event.destroyed_query", Ctx, |e| {
            let ev = with!(dead_event(e));
            Out::of(e.p.cuEventQuery(ev))
        }),
        case!("event.destroyed_record", Ctx, |e| {
            let ev = with!(dead_event(e));
            Out::of(e.p.cuEventRecord(ev, std::ptr::null_mut()))
        }),
        case!("event.destroyed_synchronize", Ctx, |e| {
            let ev = with!(dead_event(e));
            Out::of(e.p.cuEventSynchronize(ev))
        }),
        case!("event.destroyed_destroy", Ctx, |e| {
            let ev = with!(dead_event(e));
            Out::of(e.p.cuEventDestroy(ev))
        }),
    ]
}
