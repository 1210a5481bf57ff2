//! Stream capture: begin, the work recorded, end, instantiate and launch, and what ends
//! or invalidates a capture.

use super::graph::{instantiate, node_count};
use super::{
    alloc, case, handle, launch_scale, made, read_f32, scale_kernel, sentinel, step, stream, with, write_f32, Shape,
};
use super::{Case, Env, Out};
use cudrv::sys::*;

const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
const RELAXED: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;

/// A fresh stream, capturing in `mode`.
fn capturing(e: &Env, mode: CUstreamCaptureMode) -> Result<CUstream, Out> {
    let s = stream(e)?;
    // SAFETY: a live stream.
    made("cuStreamBeginCapture", unsafe { e.p.cuStreamBeginCapture(s, mode) }, s)
}

/// The capture status of `s` (0 none, 1 active, 2 invalidated).
fn status(e: &Env, s: CUstream) -> String {
    let mut c = CUstreamCaptureStatus(77);
    // SAFETY: a valid out-pointer.
    match unsafe { e.p.cuStreamIsCapturing(s, &mut c) } {
        CUresult::CUDA_SUCCESS => c.0.to_string(),
        st => st.to_string(),
    }
}

/// Ends the capture of `s`: the status and whether a graph came back.
fn end(e: &Env, s: CUstream) -> (CUresult, CUgraph) {
    let mut g: CUgraph = sentinel();
    // SAFETY: a live stream and a valid out-pointer.
    let st = unsafe { e.p.cuStreamEndCapture(s, &mut g) };
    (st, g)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("capture.begin_legacy_stream", Ctx, |e| {
            Out::of(e.p.cuStreamBeginCapture(std::ptr::null_mut(), GLOBAL))
        }),
        case!("capture.begin_is_capturing", Ctx, |e| {
            let s = with!(stream(e));
            let st = e.p.cuStreamBeginCapture(s, GLOBAL);
            Out::of(st).eq("status", status(e, s))
        }),
        case!("capture.not_capturing_status", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(CUresult::CUDA_SUCCESS).eq("status", status(e, s))
        }),
        case!("capture.begin_twice", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            Out::of(e.p.cuStreamBeginCapture(s, GLOBAL))
        }),
        case!("capture.end_empty", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let (st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("graph", handle(g)).eq("nodes", nodes).eq("status_after", status(e, s))
        }),
        case!("capture.end_not_capturing", Ctx, |e| {
            let s = with!(stream(e));
            let (st, g) = end(e, s);
            Out::of(st).eq("graph", handle(g))
        }),
        case!("capture.kernel_and_memset_replayed", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let x = with!(alloc(e, 16));
            with!(write_f32(e, x, &[0.0; 4]));
            let s = with!(capturing(e, GLOBAL));
            step!(e.p.cuMemsetD32Async(x, 1.0f32.to_bits(), 4, s));
            step!(launch_scale(e, f, Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 0 }, s, x, 4));
            let (st, g) = end(e, s);
            let captured = with!(read_f32(e, x, 4));
            let (_, nodes) = node_count(e, g);
            let exec = with!(instantiate(e, g));
            step!(e.p.cuGraphLaunch(exec, s));
            step!(e.p.cuStreamSynchronize(s));
            let once = with!(read_f32(e, x, 4));
            Out::of(st)
                .eq("nodes", nodes)
                .eq("ran_during_capture", captured != [0.0; 4])
                .eq("after_launch", format!("{:?}", once))
        }),
        case!("capture.copy_recorded", Ctx, |e| {
            let x = with!(alloc(e, 16));
            with!(write_f32(e, x, &[0.0; 4]));
            let src = [5.0f32; 4];
            let mut pinned = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut pinned, 16));
            std::ptr::copy_nonoverlapping(src.as_ptr(), pinned.cast::<f32>(), 4);
            let s = with!(capturing(e, GLOBAL));
            step!(e.p.cuMemcpyHtoDAsync(x, pinned, 16, s));
            let (st, g) = end(e, s);
            let exec = with!(instantiate(e, g));
            step!(e.p.cuGraphLaunch(exec, s));
            step!(e.p.cuStreamSynchronize(s));
            let back = with!(read_f32(e, x, 4));
            Out::of(st).eq("after_launch", format!("{:?}", back))
        }),
        case!("capture.host_fn_recorded", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let st = e.p.cuLaunchHostFunc(s, Some(nothing), std::ptr::null_mut());
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("capture.query_invalidates", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let st = e.p.cuStreamQuery(s);
            let after = status(e, s);
            let (end_st, g) = end(e, s);
            Out::of(st).eq("status_after", after).eq("end", end_st).eq("graph", handle(g))
        }),
        case!("capture.synchronize_invalidates", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let st = e.p.cuStreamSynchronize(s);
            let after = status(e, s);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("status_after", after).eq("end", end_st)
        }),
        case!("capture.ctx_synchronize_during", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let st = e.p.cuCtxSynchronize();
            let after = status(e, s);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("status_after", after).eq("end", end_st)
        }),
        case!("capture.relaxed_ctx_synchronize", Ctx, |e| {
            let s = with!(capturing(e, RELAXED));
            let st = e.p.cuCtxSynchronize();
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("capture.alloc_during_global", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let mut d = super::UNTOUCHED;
            let st = e.p.cuMemAlloc(&mut d, 256);
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("capture.legacy_stream_work_during_global", Ctx, |e| {
            let x = with!(alloc(e, 16));
            let s = with!(capturing(e, GLOBAL));
            let st = e.p.cuMemsetD8Async(x, 0, 16, std::ptr::null_mut());
            let (end_st, _) = end(e, s);
            Out::of(st).eq("end", end_st)
        }),
        case!("capture.alloc_async_recorded", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let mut d = 0;
            let st = e.p.cuMemAllocAsync(&mut d, 256, s);
            let free = e.p.cuMemFreeAsync(d, s);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("free", free).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("capture.info", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let mut c = CUstreamCaptureStatus(77);
            let mut id = super::UNTOUCHED;
            let st = e.p.cuStreamGetCaptureInfo(
                s,
                &mut c,
                &mut id,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            Out::of(st).eq("status", c.0).eq("id_written", id != super::UNTOUCHED)
        }),
        case!("capture.event_record_wait", Ctx, |e| {
            let s = with!(capturing(e, GLOBAL));
            let mut ev = std::ptr::null_mut();
            step!(e.p.cuEventCreate(&mut ev, 0));
            let rec = e.p.cuEventRecord(ev, s);
            let other = with!(stream(e));
            let wait = e.p.cuStreamWaitEvent(other, ev, 0);
            let other_status = status(e, other);
            let end_other = end(e, other).0;
            let (st, _) = end(e, s);
            Out::of(st).eq("record", rec).eq("wait", wait).eq("joined", other_status).eq("end_other", end_other)
        }),
    ]
}

unsafe extern "C" fn nothing(_: *mut std::os::raw::c_void) {}
