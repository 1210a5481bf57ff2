//! Modules, libraries, functions and their attributes.

use std::os::raw::c_void;

use super::{case, handle, number, scale_kernel, sentinel, step, with, Case, Env, Out, SCALE_PTX, UNTOUCHED};
use cudrv::sys::*;

/// A library loaded from `image`.
fn library(e: &Env, image: *const c_void) -> (CUresult, CUlibrary) {
    let mut l: CUlibrary = sentinel();

    // SAFETY: `image` is NUL-terminated text or valid bytes; no options.
    let st = unsafe {
        e.p.cuLibraryLoadData(
            &mut l,
            image,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    (st, l)
}

/// A function attribute of scale_f32.
fn func_attr(e: &Env, a: CUfunction_attribute, compared: bool) -> Out {
    let f = with!(scale_kernel(e));
    let mut v = -7;
    // SAFETY: a live function and a valid out-pointer.
    let st = unsafe { e.p.cuFuncGetAttribute(&mut v, a, f) };
    let out = Out::of(st);
    if compared {
        out.eq("value", v)
    } else {
        out.info("value", v)
    }
}

/// Bytes that are neither PTX nor a binary image.
const GARBAGE: &[u8] = b"\x7fnot an image at all\0";

type FA = CUfunction_attribute;

pub fn cases() -> Vec<Case> {
    vec![
        case!("module.load_ptx", Ctx, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast())).eq("module", handle(m))
        }),
        case!("module.load_garbage", Ctx, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoadData(&mut m, GARBAGE.as_ptr().cast())).eq("module", handle(m))
        }),
        case!("module.load_null", Ctx, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoadData(&mut m, std::ptr::null())).eq("module", handle(m))
        }),
        case!("module.load_no_context", Init, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast())).eq("module", handle(m))
        }),
        case!("module.get_function", Ctx, |e| {
            let mut m = std::ptr::null_mut();
            step!(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()));
            let mut f: CUfunction = sentinel();
            Out::of(e.p.cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr())).eq("function", handle(f))
        }),
        case!("module.get_function_missing", Ctx, |e| {
            let mut m = std::ptr::null_mut();
            step!(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()));
            let mut f: CUfunction = sentinel();
            Out::of(e.p.cuModuleGetFunction(&mut f, m, c"no_such_kernel".as_ptr())).eq("function", handle(f))
        }),
        case!("module.get_global_missing", Ctx, |e| {
            let mut m = std::ptr::null_mut();
            step!(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuModuleGetGlobal(&mut d, &mut n, m, c"no_such_global".as_ptr());
            Out::of(st).eq("dptr", number(d)).eq("bytes", number(n as u64))
        }),
        case!("module.unload", Ctx, |e| {
            let mut m = std::ptr::null_mut();
            step!(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()));
            Out::of(e.p.cuModuleUnload(m))
        }),
        case!("module.unload_null", Ctx, |e| { Out::of(e.p.cuModuleUnload(std::ptr::null_mut())) }),
        case!("library.load_ptx", Init, |e| {
            let (st, l) = library(e, SCALE_PTX.as_ptr().cast());
            Out::of(st).eq("library", handle(l))
        }),
        case!("library.load_garbage", Init, |e| {
            let (st, l) = library(e, GARBAGE.as_ptr().cast());
            Out::of(st).eq("library", handle(l))
        }),
        case!("library.load_null", Init, |e| {
            let (st, l) = library(e, std::ptr::null());
            Out::of(st).eq("library", handle(l))
        }),
        case!("library.get_kernel", Init, |e| {
            let (st, l) = library(e, SCALE_PTX.as_ptr().cast());
            step!(st);
            let mut k: CUkernel = sentinel();
            Out::of(e.p.cuLibraryGetKernel(&mut k, l, c"scale_f32".as_ptr())).eq("kernel", handle(k))
        }),
        case!("library.get_kernel_missing", Init, |e| {
            let (st, l) = library(e, SCALE_PTX.as_ptr().cast());
            step!(st);
            let mut k: CUkernel = sentinel();
            Out::of(e.p.cuLibraryGetKernel(&mut k, l, c"no_such_kernel".as_ptr())).eq("kernel", handle(k))
        }),
        case!("library.kernel_function", Ctx, |e| {
            let (st, l) = library(e, SCALE_PTX.as_ptr().cast());
            step!(st);
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"scale_f32".as_ptr()));
            let mut f: CUfunction = sentinel();
            Out::of(e.p.cuKernelGetFunction(&mut f, k)).eq("function", handle(f))
        }),
        case!("library.unload", Init, |e| {
            let (st, l) = library(e, SCALE_PTX.as_ptr().cast());
            step!(st);
            Out::of(e.p.cuLibraryUnload(l))
        }),
        case!("function.max_threads", Ctx, |e| { func_attr(e, FA::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, true) }),
        case!("function.num_regs", Ctx, |e| { func_attr(e, FA::CU_FUNC_ATTRIBUTE_NUM_REGS, false) }),
        case!("function.shared_size", Ctx, |e| { func_attr(e, FA::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, true) }),
        case!("function.local_size", Ctx, |e| { func_attr(e, FA::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, true) }),
        case!("function.ptx_version", Ctx, |e| { func_attr(e, FA::CU_FUNC_ATTRIBUTE_PTX_VERSION, false) }),
        case!("function.max_dynamic_shared", Ctx, |e| {
            func_attr(e, FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, false)
        }),
        case!("function.unknown_attribute", Ctx, |e| { func_attr(e, CUfunction_attribute(0x7777), false) }),
        case!("function.set_max_dynamic_shared", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let st = e.p.cuFuncSetAttribute(f, FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024);
            let mut v = -7;
            let _ = e.p.cuFuncGetAttribute(&mut v, FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
            Out::of(st).eq("value", v)
        }),
        case!("function.name", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut s = std::ptr::null();
            let st = e.p.cuFuncGetName(&mut s, f);
            Out::of(st).eq("name", super::text(s))
        }),
    ]
}
