//! Device and host memory: allocation (zero sizes included), frees, copies and memsets,
//! freed memory, address ranges and pointer attributes.

use std::os::raw::c_void;

use super::{
    alloc, case, handle, made, number, number32, read_f32, sentinel, step, stream, with, Case, Env, Out, UNTOUCHED,
};
use cudrv::sys::*;

/// 256 bytes of device memory, freed.
fn freed(e: &Env) -> Result<CUdeviceptr, Out> {
    let d = alloc(e, 256)?;
    // SAFETY: memory this case allocated.
    made("cuMemFree", unsafe { e.p.cuMemFree(d) }, d)
}

/// The address range of `d`: status, and base/size as written (sentinels show no write).
fn range(e: &Env, d: CUdeviceptr, of: CUdeviceptr) -> Out {
    let (mut base, mut size) = (UNTOUCHED, UNTOUCHED as usize);
    // SAFETY: valid out-pointers.
    let st = unsafe { e.p.cuMemGetAddressRange(&mut base, &mut size, d) };
    let base = if base == UNTOUCHED {
        "untouched".to_string()
    } else if base == 0 {
        "0".into()
    } else if base == of {
        "start".into()
    } else {
        "other".into()
    };
    Out::of(st).eq("base", base).eq("size", number(size as u64))
}

/// One pointer attribute of `ptr`, as a number (`u64` wide).
fn pointer_attr(e: &Env, attr: CUpointer_attribute, ptr: CUdeviceptr) -> (CUresult, u64) {
    let mut v: u64 = UNTOUCHED;
    // SAFETY: a valid out-pointer of 8 bytes, as wide as every attribute asked here.
    let st = unsafe { e.p.cuPointerGetAttribute((&raw mut v).cast(), attr, ptr) };
    (st, v)
}

type PA = CUpointer_attribute;

pub fn cases() -> Vec<Case> {
    vec![
        case!("memory.alloc", Ctx, |e| {
            let mut d = UNTOUCHED;
            let st = e.p.cuMemAlloc(&mut d, 1 << 20);
            Out::of(st).eq("nonzero", d != 0 && d != UNTOUCHED)
        }),
        case!("memory.alloc_zero", Ctx, |e| {
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAlloc(&mut d, 0)).eq("dptr", number(d))
        }),
        case!("memory.alloc_huge", Ctx, |e| {
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAlloc(&mut d, 1 << 50)).eq("dptr", number(d))
        }),
        case!("memory.alloc_no_context", Init, |e| {
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAlloc(&mut d, 256)).eq("dptr", number(d))
        }),
        case!("memory.alloc_null_out", Ctx, |e| { Out::of(e.p.cuMemAlloc(std::ptr::null_mut(), 256)) }),
        case!("memory.free_zero", Ctx, |e| { Out::of(e.p.cuMemFree(0)) }),
        case!("memory.free_twice", Ctx, |e| {
            let d = with!(freed(e));
            Out::of(e.p.cuMemFree(d))
        }),
        case!("memory.free_interior", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemFree(d + 16))
        }),
        case!("memory.get_info", Ctx, |e| {
            let (mut free, mut total) = (0usize, 0usize);
            let st = e.p.cuMemGetInfo(&mut free, &mut total);
            Out::of(st).eq("free_le_total", free <= total && total > 0)
        }),
        case!("memory.memset_d8_read_back", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let st = e.p.cuMemsetD8(d, 0xab, 16);
            let mut h = [0u8; 16];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("byte", h[15])
        }),
        case!("memory.memset_d16_read_back", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let st = e.p.cuMemsetD16(d, 0xabcd, 8);
            let mut h = [0u16; 8];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("value", h[7])
        }),
        case!("memory.memset_d32_read_back", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let st = e.p.cuMemsetD32(d, 0xdead_beef, 4);
            let mut h = [0u32; 4];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("value", h[3])
        }),
        case!("memory.memset_d16_misaligned", Ctx, |e| {
            let d = with!(alloc(e, 16));
            Out::of(e.p.cuMemsetD16(d + 1, 1, 4))
        }),
        case!("memory.memset_d32_misaligned", Ctx, |e| {
            let d = with!(alloc(e, 16));
            Out::of(e.p.cuMemsetD32(d + 2, 1, 2))
        }),
        case!("memory.memset_d32_async", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let s = with!(stream(e));
            let st = e.p.cuMemsetD32Async(d, 7, 4, s);
            step!(e.p.cuStreamSynchronize(s));
            let mut h = [0u32; 4];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("value", h[0])
        }),
        case!("memory.memset_past_end", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD8(d, 1, 512))
        }),
        case!("memory.memset_zero_count", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD8(d, 1, 0))
        }),
        case!("memory.copy_round_trip", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let src = [1.5f32, 2.5, 3.5, 4.5];
            let st = e.p.cuMemcpyHtoD(d, src.as_ptr().cast(), 16);
            let back = with!(read_f32(e, d, 4));
            Out::of(st).eq("back", format!("{:?}", back))
        }),
        case!("memory.copy_dtod", Ctx, |e| {
            let (a, b) = (with!(alloc(e, 16)), with!(alloc(e, 16)));
            step!(e.p.cuMemsetD32(a, 9, 4));
            let st = e.p.cuMemcpyDtoD(b, a, 16);
            let mut h = [0u32; 4];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), b, 16));
            Out::of(st).eq("value", h[2])
        }),
        case!("memory.copy_unified", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let src = [7u32; 4];
            let st = e.p.cuMemcpy(d, src.as_ptr() as CUdeviceptr, 16);
            let mut h = [0u32; 4];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("value", h[3])
        }),
        case!("memory.copy_async_pageable", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let s = with!(stream(e));
            let src = [3u32; 4];
            let st = e.p.cuMemcpyHtoDAsync(d, src.as_ptr().cast(), 16, s);
            step!(e.p.cuStreamSynchronize(s));
            let mut h = [0u32; 4];
            step!(e.p.cuMemcpyDtoH(h.as_mut_ptr().cast(), d, 16));
            Out::of(st).eq("value", h[1])
        }),
        case!("memory.copy_past_end", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let src = [0u8; 64];
            Out::of(e.p.cuMemcpyHtoD(d, src.as_ptr().cast(), 64))
        }),
        case!("memory.copy_zero_bytes", Ctx, |e| {
            let d = with!(alloc(e, 16));
            let src = [0u8; 4];
            Out::of(e.p.cuMemcpyHtoD(d, src.as_ptr().cast(), 0))
        }),
        case!("memory.freed_memset", Ctx, |e| {
            let d = with!(freed(e));
            let st = e.p.cuMemsetD8(d, 1, 256);
            Out::of(st).eq("then_synchronize", e.p.cuCtxSynchronize())
        }),
        case!("memory.freed_copy_to", Ctx, |e| {
            let d = with!(freed(e));
            let src = [0u8; 256];
            let st = e.p.cuMemcpyHtoD(d, src.as_ptr().cast(), 256);
            Out::of(st).eq("then_synchronize", e.p.cuCtxSynchronize())
        }),
        case!("memory.freed_copy_from", Ctx, |e| {
            let d = with!(freed(e));
            let mut dst = [0u8; 256];
            Out::of(e.p.cuMemcpyDtoH(dst.as_mut_ptr().cast(), d, 256))
        }),
        case!("memory.range_start", Ctx, |e| {
            let d = with!(alloc(e, 256));
            range(e, d, d)
        }),
        case!("memory.range_interior", Ctx, |e| {
            let d = with!(alloc(e, 256));
            range(e, d + 100, d)
        }),
        case!("memory.range_one_past_end", Ctx, |e| {
            let d = with!(alloc(e, 1 << 20));
            range(e, d + (1 << 20), d)
        }),
        case!("memory.range_zero", Ctx, |e| { range(e, 0, 0) }),
        case!("memory.range_freed", Ctx, |e| {
            let d = with!(freed(e));
            range(e, d, d)
        }),
        case!("memory.range_host_address", Ctx, |e| {
            let x = [0u8; 64];
            range(e, x.as_ptr() as CUdeviceptr, 0)
        }),
        case!("host.alloc_host", Ctx, |e| {
            let mut h: *mut c_void = sentinel();
            let st = e.p.cuMemAllocHost(&mut h, 4096);
            Out::of(st).eq("ptr", handle(h))
        }),
        case!("host.alloc_host_zero", Ctx, |e| {
            let mut h: *mut c_void = sentinel();
            Out::of(e.p.cuMemAllocHost(&mut h, 0)).eq("ptr", handle(h))
        }),
        case!("host.host_alloc_zero", Ctx, |e| {
            let mut h: *mut c_void = sentinel();
            Out::of(e.p.cuMemHostAlloc(&mut h, 0, 0)).eq("ptr", handle(h))
        }),
        case!("host.host_alloc_bad_flags", Ctx, |e| {
            let mut h: *mut c_void = sentinel();
            Out::of(e.p.cuMemHostAlloc(&mut h, 4096, 0x100)).eq("ptr", handle(h))
        }),
        case!("host.get_flags_alloc_host", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut h, 4096));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, h)).eq("flags", number32(f))
        }),
        case!("host.get_flags_alloc_host_created_ctx", Init, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuCtxCreate_v3020(&mut c, 0, e.dev));
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut h, 4096));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, h)).eq("flags", number32(f))
        }),
        case!("host.get_flags_host_alloc_0", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemHostAlloc(&mut h, 4096, 0));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, h)).eq("flags", number32(f))
        }),
        case!("host.get_flags_interior", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemHostAlloc(&mut h, 4096, CU_MEMHOSTALLOC_PORTABLE));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, h.cast::<u8>().wrapping_add(100).cast())).eq("flags", number32(f))
        }),
        case!("host.get_flags_portable_devicemap", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemHostAlloc(&mut h, 4096, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, h)).eq("flags", number32(f))
        }),
        case!("host.get_flags_not_pinned", Ctx, |e| {
            let mut x = [0u8; 64];
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuMemHostGetFlags(&mut f, x.as_mut_ptr().cast())).eq("flags", number32(f))
        }),
        case!("host.free_null", Ctx, |e| { Out::of(e.p.cuMemFreeHost(std::ptr::null_mut())) }),
        case!("host.free_twice", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut h, 4096));
            step!(e.p.cuMemFreeHost(h));
            Out::of(e.p.cuMemFreeHost(h))
        }),
        case!("host.free_not_pinned", Ctx, |e| {
            let mut x = [0u8; 64];
            Out::of(e.p.cuMemFreeHost(x.as_mut_ptr().cast()))
        }),
        case!("host.device_pointer", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemHostAlloc(&mut h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
            let mut d = UNTOUCHED;
            let st = e.p.cuMemHostGetDevicePointer(&mut d, h, 0);
            Out::of(st).eq("written", d != UNTOUCHED && d != 0)
        }),
        case!("host.device_pointer_not_pinned", Ctx, |e| {
            let mut x = [0u8; 64];
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemHostGetDevicePointer(&mut d, x.as_mut_ptr().cast(), 0))
        }),
        case!("pointer.memory_type_device", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
            Out::of(st).eq("type", v as u32)
        }),
        case!("pointer.memory_type_host", Ctx, |e| {
            let mut h = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut h, 4096));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, h as CUdeviceptr);
            Out::of(st).eq("type", v as u32)
        }),
        case!("pointer.range_start", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 64);
            Out::of(st).eq("is_start", v == d)
        }),
        case!("pointer.range_size", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_RANGE_SIZE, d);
            Out::of(st).info("size", v)
        }),
        case!("pointer.context", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_CONTEXT, d);
            Out::of(st).eq("is_primary", v as usize == e.ctx as usize)
        }),
        case!("pointer.device_ordinal", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d);
            Out::of(st).eq("ordinal", v as u32)
        }),
        case!("pointer.unknown_attribute", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let (st, _) = pointer_attr(e, CUpointer_attribute(0x7777), d);
            Out::of(st)
        }),
        case!("pointer.not_allocated", Ctx, |e| {
            let x = [0u8; 64];
            let (st, _) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x.as_ptr() as CUdeviceptr);
            Out::of(st)
        }),
        case!("pointer.freed", Ctx, |e| {
            let d = with!(freed(e));
            let (st, _) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
            Out::of(st)
        }),
    ]
}
