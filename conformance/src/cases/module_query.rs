//! Queries over modules, libraries, functions and kernels (issue 29): function counts and
//! enumeration, kernel enumeration, a function's module and a kernel's library, the
//! loading mode and a function's loading state, unified functions. Pending: not yet
//! recorded on the H200.

use std::os::raw::c_void;

use super::{case, handle, number32, sentinel, step, Case, Env, Out};
use cudrv::sys::*;
use cudrv::{call, Call};

/// Two kernels, `add_f32` and `count_down`.
const TWO_PTX: &str = concat!(include_str!("../../../examples/kernels/graph_kernels.ptx"), "\0");

const COUNT: &[Call] = &[call::cuModuleGetFunctionCount];
const ENUMERATE: &[Call] = &[call::cuModuleEnumerateFunctions];
const LOADING: &[Call] = &[call::cuModuleEnumerateFunctions, call::cuFuncIsLoaded, call::cuFuncLoad];
const KERNELS: &[Call] = &[call::cuLibraryEnumerateKernels];
const KERNEL_LIBRARY: &[Call] = &[call::cuKernelGetLibrary];
const UNIFIED: &[Call] = &[call::cuLibraryGetUnifiedFunction];
const MODE: &[Call] = &[call::cuModuleGetLoadingMode];

/// The module of [`TWO_PTX`] (`Err`: the setup's failure).
fn module(e: &Env) -> Result<CUmodule, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX and a valid out-pointer.
    let st = unsafe { e.p.cuModuleLoadData(&mut m, TWO_PTX.as_ptr().cast()) };
    if st == CUresult::CUDA_SUCCESS {
        Ok(m)
    } else {
        Err(Out::setup_failed("cuModuleLoadData", st))
    }
}

/// The library of [`TWO_PTX`] (`Err`: the setup's failure).
fn library(e: &Env) -> Result<CUlibrary, Out> {
    let mut l = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX, a valid out-pointer, no options.
    let st = unsafe {
        e.p.cuLibraryLoadData(
            &mut l,
            TWO_PTX.as_ptr().cast(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )
    };
    if st == CUresult::CUDA_SUCCESS {
        Ok(l)
    } else {
        Err(Out::setup_failed("cuLibraryLoadData", st))
    }
}

/// Ends the case with the helper's setup failure.
macro_rules! made {
    ($r:expr) => {
        match $r {
            Ok(v) => v,
            Err(out) => return out,
        }
    };
}

/// `cuModuleEnumerateFunctions` into 4 slots asking for `num`: which slots were written.
fn enumerate(e: &Env, num: u32) -> Out {
    let m = made!(module(e));
    let mut fs: [CUfunction; 4] = [sentinel(); 4];
    // SAFETY: storage for 4 handles; at most 4 asked for.
    let st = unsafe { e.p.cuModuleEnumerateFunctions(fs.as_mut_ptr(), num, m) };
    fs.iter().enumerate().fold(Out::of(st), |out, (i, f)| out.eq(&format!("slot{i}"), handle(*f)))
}

/// `cuLibraryEnumerateKernels` into 4 slots asking for `num`: which slots were written.
fn enumerate_kernels(e: &Env, num: u32) -> Out {
    let l = made!(library(e));
    let mut ks: [CUkernel; 4] = [sentinel(); 4];
    // SAFETY: storage for 4 handles; at most 4 asked for.
    let st = unsafe { e.p.cuLibraryEnumerateKernels(ks.as_mut_ptr(), num, l) };
    ks.iter().enumerate().fold(Out::of(st), |out, (i, k)| out.eq(&format!("slot{i}"), handle(*k)))
}

/// The loading state of the second function of a fresh module after `before` ran on it
/// (the first function is asked for by name first).
fn state_after(e: &Env, before: fn(&Env, CUfunction) -> CUresult) -> Out {
    let m = made!(module(e));
    let mut by_name = std::ptr::null_mut();
    // SAFETY: valid out-pointer and name.
    step!(unsafe { e.p.cuModuleGetFunction(&mut by_name, m, c"add_f32".as_ptr()) });
    let mut fs = [std::ptr::null_mut(); 2];
    // SAFETY: storage for 2 handles.
    step!(unsafe { e.p.cuModuleEnumerateFunctions(fs.as_mut_ptr(), 2, m) });
    step!(before(e, fs[1]));
    let (mut first, mut second) = (CUfunctionLoadingState(77), CUfunctionLoadingState(77));
    // SAFETY: valid out-pointers and live functions.
    let st = unsafe { e.p.cuFuncIsLoaded(&mut first, fs[0]) };
    // SAFETY: as above.
    let st2 = unsafe { e.p.cuFuncIsLoaded(&mut second, fs[1]) };
    Out::of(st)
        .eq("same_as_by_name", fs[0] == by_name)
        .eq("first", first.0)
        .eq("second_status", Out::of(st2).status)
        .eq("second", second.0)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("module_query.loading_mode", Init, since 11070 MODE, |e| {
            let mut mode = CUmoduleLoadingMode(77);
            Out::of(e.p.cuModuleGetLoadingMode(&mut mode)).eq("mode", mode.0)
        }),
        case!("module_query.loading_mode_before_init", Bare, since 11070 MODE, |e| {
            let mut mode = CUmoduleLoadingMode(77);
            Out::of(e.p.cuModuleGetLoadingMode(&mut mode)).eq("mode", mode.0)
        }),
        case!("module_query.loading_mode_null", Init, since 11070 MODE, |e| {
            Out::of(e.p.cuModuleGetLoadingMode(std::ptr::null_mut()))
        }),
        case!("module_query.function_count", Ctx, since 12040 COUNT, |e| {
            let m = made!(module(e));
            let mut n = 0x5eed_5eed_u32;
            Out::of(e.p.cuModuleGetFunctionCount(&mut n, m)).eq("count", number32(n))
        }),
        case!("module_query.function_count_null_count", Ctx, since 12040 COUNT, |e| {
            let m = made!(module(e));
            Out::of(e.p.cuModuleGetFunctionCount(std::ptr::null_mut(), m))
        }),
        case!("module_query.function_count_null_module", Ctx, since 12040 COUNT, |e| {
            let mut n = 0x5eed_5eed_u32;
            Out::of(e.p.cuModuleGetFunctionCount(&mut n, std::ptr::null_mut())).eq("count", number32(n))
        }),
        case!("module_query.function_count_unloaded", Ctx, since 12040 COUNT, |e| {
            let m = made!(module(e));
            step!(e.p.cuModuleUnload(m));
            let mut n = 0x5eed_5eed_u32;
            Out::of(e.p.cuModuleGetFunctionCount(&mut n, m)).eq("count", number32(n))
        }),
        case!("module_query.enumerate_more_room", Ctx, since 12040 ENUMERATE, |e| { enumerate(e, 4) }),
        case!("module_query.enumerate_fewer", Ctx, since 12040 ENUMERATE, |e| { enumerate(e, 1) }),
        case!("module_query.enumerate_zero", Ctx, since 12040 ENUMERATE, |e| { enumerate(e, 0) }),
        case!("module_query.enumerate_null_buffer", Ctx, since 12040 ENUMERATE, |e| {
            let m = made!(module(e));
            Out::of(e.p.cuModuleEnumerateFunctions(std::ptr::null_mut(), 2, m))
        }),
        case!("module_query.enumerate_null_module", Ctx, since 12040 ENUMERATE, |e| {
            let mut fs: [CUfunction; 2] = [sentinel(); 2];
            Out::of(e.p.cuModuleEnumerateFunctions(fs.as_mut_ptr(), 2, std::ptr::null_mut())).eq("slot0", handle(fs[0]))
        }),
        case!("module_query.enumerate_names", Ctx, since 12040 ENUMERATE, |e| {
            // Whether enumeration gives cuModuleGetFunction's handles, in the PTX's order.
            let m = made!(module(e));
            let mut fs = [std::ptr::null_mut(); 2];
            let st = e.p.cuModuleEnumerateFunctions(fs.as_mut_ptr(), 2, m);
            let (mut add, mut count) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuModuleGetFunction(&mut add, m, c"add_f32".as_ptr()));
            step!(e.p.cuModuleGetFunction(&mut count, m, c"count_down".as_ptr()));
            Out::of(st).eq("in_order", fs == [add, count]).eq("same_set", fs == [add, count] || fs == [count, add])
        }),
        case!("module_query.state_enumerated", Ctx, since 12040 LOADING, |e| {
            state_after(e, |_, _| CUresult::CUDA_SUCCESS)
        }),
        case!("module_query.state_after_load", Ctx, since 12040 LOADING, |e| {
            // SAFETY: a live function.
            state_after(e, |e, f| unsafe { e.p.cuFuncLoad(f) })
        }),
        case!("module_query.state_after_load_twice", Ctx, since 12040 LOADING, |e| {
            // SAFETY: a live function.
            state_after(e, |e, f| unsafe {
                let st = e.p.cuFuncLoad(f);
                if st == CUresult::CUDA_SUCCESS {
                    e.p.cuFuncLoad(f)
                } else {
                    st
                }
            })
        }),
        case!("module_query.is_loaded_null_state", Ctx, since 12040 LOADING, |e| {
            let m = made!(module(e));
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"add_f32".as_ptr()));
            Out::of(e.p.cuFuncIsLoaded(std::ptr::null_mut(), f))
        }),
        case!("module_query.is_loaded_null_function", Ctx, since 12040 LOADING, |e| {
            let mut s = CUfunctionLoadingState(77);
            Out::of(e.p.cuFuncIsLoaded(&mut s, std::ptr::null_mut())).eq("state", s.0)
        }),
        case!("module_query.load_null_function", Ctx, since 12040 LOADING, |e| {
            Out::of(e.p.cuFuncLoad(std::ptr::null_mut()))
        }),
        case!("module_query.func_get_module", Ctx, |e| {
            let m = made!(module(e));
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"add_f32".as_ptr()));
            let mut home: CUmodule = sentinel();
            Out::of(e.p.cuFuncGetModule(&mut home, f)).eq("same", home == m)
        }),
        case!("module_query.func_get_module_null_out", Ctx, |e| {
            let m = made!(module(e));
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"add_f32".as_ptr()));
            Out::of(e.p.cuFuncGetModule(std::ptr::null_mut(), f))
        }),
        case!("module_query.func_get_module_null_function", Ctx, |e| {
            let mut home: CUmodule = sentinel();
            Out::of(e.p.cuFuncGetModule(&mut home, std::ptr::null_mut())).eq("module", handle(home))
        }),
        case!("module_query.func_get_module_of_kernel", Ctx, since 12000 &[call::cuLibraryGetKernel], |e| {
            // A CUkernel where a CUfunction is expected (cuLaunchKernel accepts one).
            let l = made!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"add_f32".as_ptr()));
            let mut home: CUmodule = sentinel();
            let st = e.p.cuFuncGetModule(&mut home, k.cast());
            let mut lm = std::ptr::null_mut();
            step!(e.p.cuLibraryGetModule(&mut lm, l));
            Out::of(st).eq("module", handle(home)).eq("library_module", home == lm)
        }),
        case!("module_query.func_get_module_of_library_function", Ctx, since 12000 &[call::cuKernelGetFunction], |e| {
            let l = made!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"add_f32".as_ptr()));
            let (mut f, mut lm) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuKernelGetFunction(&mut f, k));
            step!(e.p.cuLibraryGetModule(&mut lm, l));
            let mut home: CUmodule = sentinel();
            Out::of(e.p.cuFuncGetModule(&mut home, f)).eq("library_module", home == lm)
        }),
        case!("module_query.library_enumerate_more_room", Ctx, since 12040 KERNELS, |e| { enumerate_kernels(e, 4) }),
        case!("module_query.library_enumerate_fewer", Ctx, since 12040 KERNELS, |e| { enumerate_kernels(e, 1) }),
        case!("module_query.library_enumerate_zero", Ctx, since 12040 KERNELS, |e| { enumerate_kernels(e, 0) }),
        case!("module_query.library_enumerate_null_buffer", Ctx, since 12040 KERNELS, |e| {
            let l = made!(library(e));
            Out::of(e.p.cuLibraryEnumerateKernels(std::ptr::null_mut(), 2, l))
        }),
        case!("module_query.library_enumerate_same_as_get", Ctx, since 12040 KERNELS, |e| {
            let l = made!(library(e));
            let mut ks = [std::ptr::null_mut(); 2];
            let st = e.p.cuLibraryEnumerateKernels(ks.as_mut_ptr(), 2, l);
            let (mut add, mut count) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuLibraryGetKernel(&mut add, l, c"add_f32".as_ptr()));
            step!(e.p.cuLibraryGetKernel(&mut count, l, c"count_down".as_ptr()));
            Out::of(st).eq("in_order", ks == [add, count]).eq("same_set", ks == [add, count] || ks == [count, add])
        }),
        case!("module_query.kernel_get_library", Ctx, since 12050 KERNEL_LIBRARY, |e| {
            let l = made!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"add_f32".as_ptr()));
            let mut got: CUlibrary = sentinel();
            Out::of(e.p.cuKernelGetLibrary(&mut got, k)).eq("same", got == l)
        }),
        case!("module_query.kernel_get_library_null_out", Ctx, since 12050 KERNEL_LIBRARY, |e| {
            let l = made!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"add_f32".as_ptr()));
            Out::of(e.p.cuKernelGetLibrary(std::ptr::null_mut(), k))
        }),
        case!("module_query.kernel_get_library_null_kernel", Ctx, since 12050 KERNEL_LIBRARY, |e| {
            let mut got: CUlibrary = sentinel();
            Out::of(e.p.cuKernelGetLibrary(&mut got, std::ptr::null_mut())).eq("library", handle(got))
        }),
        case!("module_query.kernel_get_library_unloaded", Ctx, since 12050 KERNEL_LIBRARY, |e| {
            let l = made!(library(e));
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"add_f32".as_ptr()));
            step!(e.p.cuLibraryUnload(l));
            let mut got: CUlibrary = sentinel();
            Out::of(e.p.cuKernelGetLibrary(&mut got, k)).eq("library", handle(got))
        }),
        case!("module_query.unified_function_missing", Ctx, since 12000 UNIFIED, |e| {
            let l = made!(library(e));
            let mut f: *mut c_void = sentinel();
            Out::of(e.p.cuLibraryGetUnifiedFunction(&mut f, l, c"add_f32".as_ptr())).eq("fptr", handle(f))
        }),
        case!("module_query.unified_function_null_out", Ctx, since 12000 UNIFIED, |e| {
            let l = made!(library(e));
            Out::of(e.p.cuLibraryGetUnifiedFunction(std::ptr::null_mut(), l, c"add_f32".as_ptr()))
        }),
        case!("module_query.unified_function_null_symbol", Ctx, since 12000 UNIFIED, |e| {
            let l = made!(library(e));
            let mut f: *mut c_void = sentinel();
            Out::of(e.p.cuLibraryGetUnifiedFunction(&mut f, l, std::ptr::null())).eq("fptr", handle(f))
        }),
        case!("module_query.unified_function_null_library", Ctx, since 12000 UNIFIED, |e| {
            let mut f: *mut c_void = sentinel();
            Out::of(e.p.cuLibraryGetUnifiedFunction(&mut f, std::ptr::null_mut(), c"add_f32".as_ptr()))
                .eq("fptr", handle(f))
        }),
    ]
}
