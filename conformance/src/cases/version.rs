//! Entry points that appeared after 12.0: each case names the entries it needs and the
//! version that brought them. On an older driver cudrv answers the case (`GATED`)
//! without a call; on a newer one the driver does.

use std::os::raw::c_void;

use super::graph::graph;
use super::{
    alloc, case, handle, made, number32, read_f32, sentinel, step, stream, with, write_f32, Case, Env, Out, SCALE_PTX,
};
use cudrv::call;
use cudrv::sys::*;

/// A library of [`SCALE_PTX`].
fn library(e: &Env) -> Result<CUlibrary, Out> {
    let mut l = std::ptr::null_mut();

    // SAFETY: NUL-terminated PTX, no options.
    let st = unsafe {
        e.p.cuLibraryLoadData(
            &mut l,
            SCALE_PTX.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    made("cuLibraryLoadData", st, l)
}

unsafe extern "C" fn nothing(_: *mut c_void) {}

pub fn cases() -> Vec<Case> {
    vec![
        case!("version.ctx_create_v4", Init, since 12050 &[call::cuCtxCreate], |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxCreate(&mut c, std::ptr::null_mut(), 0, e.dev)).eq("ctx", handle(c))
        }),
        case!("version.ctx_record_event", Ctx, since 12050 &[call::cuCtxRecordEvent], |e| {
            let mut ev = std::ptr::null_mut();
            step!(e.p.cuEventCreate(&mut ev, 0));
            let st = e.p.cuCtxRecordEvent(e.ctx, ev);
            Out::of(st).eq("then_synchronize", e.p.cuEventSynchronize(ev))
        }),
        case!("version.ctx_get_device_v2", Ctx, since 13000 &[call::cuCtxGetDevice_v13000], |e| {
            let mut d = -7;
            Out::of(e.p.cuCtxGetDevice_v13000(&mut d, e.ctx)).eq("device", d)
        }),
        case!("version.stream_get_device", Ctx, since 12080 &[call::cuStreamGetDevice], |e| {
            let s = with!(stream(e));
            let mut d = -7;
            Out::of(e.p.cuStreamGetDevice(s, &mut d)).eq("device", d)
        }),
        case!("version.library_kernel_count", Init, since 12040 &[call::cuLibraryGetKernelCount], |e| {
            let l = with!(library(e));
            let mut n = super::UNTOUCHED as u32;
            Out::of(e.p.cuLibraryGetKernelCount(&mut n, l)).eq("count", number32(n))
        }),
        case!("version.kernel_get_name", Init, since 12030 &[call::cuKernelGetName], |e| {
            let l = with!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"scale_f32".as_ptr()));
            let mut s = std::ptr::null();
            Out::of(e.p.cuKernelGetName(&mut s, k)).eq("name", super::text(s))
        }),
        case!("version.default_mem_pool", Init, since 13000 &[call::cuMemGetDefaultMemPool], |e| {
            let mut p: CUmemoryPool = sentinel();
            let mut loc = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
            loc.__bindgen_anon_1.id = 0;
            let ty = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            Out::of(e.p.cuMemGetDefaultMemPool(&mut p, &mut loc, ty)).eq("pool", handle(p))
        }),
        case!("version.capture_to_graph", Ctx, since 12030 &[call::cuStreamBeginCaptureToGraph], |e| {
            let g = with!(graph(e));
            let s = with!(stream(e));
            let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;

            let st = e.p.cuStreamBeginCaptureToGraph(s, g, std::ptr::null(), std::ptr::null(), 0, mode);
            let mut out: CUgraph = sentinel();
            let end = e.p.cuStreamEndCapture(s, &mut out);
            Out::of(st).eq("end", end).eq("same_graph", out == g)
        }),
        case!("version.memcpy_batch", Ctx, since 13000 &[call::cuMemcpyBatchAsync], |e| {
            let (a, b) = (with!(alloc(e, 16)), with!(alloc(e, 16)));
            with!(write_f32(e, a, &[1.0, 2.0, 3.0, 4.0]));
            let s = with!(stream(e));
            let mut attrs = CUmemcpyAttributes {
                srcAccessOrder: CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
                ..Default::default()
            };
            let (mut dst, mut src, mut size, mut idx) = (b, a, 16usize, 0usize);
            let st = e.p.cuMemcpyBatchAsync(&mut dst, &mut src, &mut size, 1, &mut attrs, &mut idx, 1, s);
            step!(e.p.cuStreamSynchronize(s));
            let back = with!(read_f32(e, b, 4));
            Out::of(st).eq("copied", back == [1.0, 2.0, 3.0, 4.0])
        }),
        case!("version.launch_host_func_v2", Ctx, since 13010 &[call::cuLaunchHostFunc_v13010], |e| {
            let s = with!(stream(e));
            let st = e.p.cuLaunchHostFunc_v13010(s, Some(nothing), std::ptr::null_mut(), 0);
            Out::of(st).eq("then_synchronize", e.p.cuStreamSynchronize(s))
        }),
        case!("version.event_elapsed_any", Ctx, |e| {
            let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuEventCreate(&mut a, 0));
            step!(e.p.cuEventCreate(&mut b, 0));
            step!(e.p.cuEventRecord(a, std::ptr::null_mut()));
            step!(e.p.cuEventRecord(b, std::ptr::null_mut()));
            step!(e.p.cuEventSynchronize(b));
            let mut ms = -1.0f32;
            Out::of(e.p.cuEventElapsedTime(&mut ms, a, b)).eq("non_negative", ms >= 0.0)
        }),
    ]
}
