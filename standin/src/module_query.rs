//! Queries over modules, libraries, functions and kernels: counts and enumerations, the
//! handle a function's module or a kernel's library is, the loading mode and a function's
//! loading state (`module.rs` has the handles' rules).
//!
//! The loading mode is lazy unless `CUDA_MODULE_LOADING=EAGER` is set (read at each call),
//! as a driver of CUDA 12.2 or newer answers; an older emulated driver loads eagerly
//! unless `CUDA_MODULE_LOADING=LAZY` is set. Loading only changes what
//! `cuFuncIsLoaded` answers: a function `cuModuleEnumerateFunctions` hands out under lazy
//! loading is unloaded until `cuFuncLoad` or `cuModuleGetFunction` loads it (a launch
//! runs it without changing the state, where a GPU loads it); every other function is
//! loaded. The stand-in's images have no unified functions.

use std::ffi::{c_char, c_uint, c_void};
use std::sync::atomic::Ordering;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::run::lock::lock;
use crate::world::World;

/// The first emulated driver whose default loading mode is lazy (CUDA 12.2).
const LAZY_BY_DEFAULT: u32 = 12020;

/// The module loading mode of `w`'s driver (see the module documentation).
fn loading_mode(w: &World) -> CUmoduleLoadingMode {
    let asked = std::env::var("CUDA_MODULE_LOADING").ok();
    let lazy = match asked.as_deref() {
        Some("EAGER") => false,
        Some("LAZY") => true,
        _ => w.version.load(Ordering::Acquire) >= LAZY_BY_DEFAULT,
    };
    if lazy {
        CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING
    } else {
        CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING
    }
}

/// Writes `handles` to the first entries of `out`.
///
/// # Safety
/// `out` is non-null and points to writable storage for at least `handles.len()` handles.
unsafe fn write_handles<S>(out: *mut *mut S, handles: &[u64]) {
    for (i, h) in handles.iter().enumerate() {
        // SAFETY: `i` is below `handles.len()`, which the caller's storage holds.
        unsafe { out.add(i).write(to_ptr(*h)) };
    }
}

/// A handle argument that must be live: CUDA_ERROR_INVALID_VALUE for NULL (as the H200
/// answers `cuFuncGetName` and `cuKernelGetName`), else its handle.
fn handle_arg<S>(p: *mut S) -> Result<u64, CUresult> {
    non_null(p)?;
    Ok(from_ptr(p))
}

/// A handle argument that must be live, NULL being CUDA_ERROR_INVALID_HANDLE as any other
/// handle that is none (as the H200 answers `cuFuncIsLoaded`, `cuFuncLoad` and
/// `cuKernelGetLibrary`).
fn live_arg<S>(p: *mut S) -> Result<u64, CUresult> {
    if p.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
    }
    Ok(from_ptr(p))
}

/// `cuModuleGetLoadingMode`: CUDA_ERROR_INVALID_VALUE for a NULL `mode`.
pub(crate) unsafe fn cu_module_get_loading_mode(w: &World, mode: *mut CUmoduleLoadingMode) -> CUresult {
    status(write(mode, loading_mode(w)))
}

/// `cuModuleGetFunctionCount`: the number of kernels of the module's image;
/// CUDA_ERROR_INVALID_VALUE for a NULL `count`, CUDA_ERROR_INVALID_HANDLE for a handle that
/// is not a live module (nothing is written on error).
pub(crate) unsafe fn cu_module_get_function_count(w: &World, count: *mut c_uint, module: CUmodule) -> CUresult {
    let r = non_null(count).and_then(|()| {
        let n = lock(&w.modules).modules.get(from_ptr(module))?.image.kernels.len();
        write(count, c_uint::try_from(n).unwrap_or(c_uint::MAX))
    });
    status(r)
}

/// `cuModuleEnumerateFunctions`: the function handles of the first `num` kernels of the
/// module's image, in the image's order (the handle `cuModuleGetFunction` gives for each
/// name); entries past the image's kernels are left untouched. CUDA_ERROR_INVALID_VALUE
/// for a NULL `functions`, CUDA_ERROR_INVALID_HANDLE for a handle that is not a live
/// module; nothing is written or made on error.
pub(crate) unsafe fn cu_module_enumerate_functions(
    w: &World,
    functions: *mut CUfunction,
    num: c_uint,
    module: CUmodule,
) -> CUresult {
    let r = non_null(functions).and_then(|()| {
        let lazy = loading_mode(w) == CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING;
        let max = usize::try_from(num).unwrap_or(usize::MAX);
        let fs = lock(&w.modules).enumerate_functions(from_ptr(module), max, lazy)?;
        // SAFETY: the program passes storage for `num` handles; at most `num` are written.
        unsafe { write_handles(functions, &fs) };
        Ok(())
    });
    status(r)
}

/// `cuLibraryEnumerateKernels`: the kernel handles of the first `num` kernels of the
/// library's image, last declared first, as the driver gave them (the handle `cuLibraryGetKernel` gives for each
/// name); entries past the image's kernels are left untouched. CUDA_ERROR_INVALID_VALUE
/// for a NULL `kernels`, CUDA_ERROR_INVALID_HANDLE for a handle that is not a live
/// library, the reason for a library whose image the stand-in cannot run (as
/// `cuLibraryGetKernel`); nothing is written or made on error.
pub(crate) unsafe fn cu_library_enumerate_kernels(
    w: &World,
    kernels: *mut CUkernel,
    num: c_uint,
    library: CUlibrary,
) -> CUresult {
    let r = non_null(kernels).and_then(|()| {
        let max = usize::try_from(num).unwrap_or(usize::MAX);
        let ks = lock(&w.modules).enumerate_kernels(from_ptr(library), max)?;
        // SAFETY: the program passes storage for `num` handles; at most `num` are written.
        unsafe { write_handles(kernels, &ks) };
        Ok(())
    });
    status(r)
}

/// `cuKernelGetLibrary`: the library of a kernel, also once the library is unloaded (as
/// the driver answers). CUDA_ERROR_INVALID_VALUE for a NULL out-pointer,
/// CUDA_ERROR_INVALID_HANDLE for a NULL kernel or a handle that is no kernel; nothing is
/// written on error.
pub(crate) unsafe fn cu_kernel_get_library(w: &World, library: *mut CUlibrary, kernel: CUkernel) -> CUresult {
    let r = non_null(library).and_then(|()| {
        let k = live_arg(kernel)?;
        let s = lock(&w.modules);
        let l = s.kernels.get(&k).map(|(l, _)| *l).or_else(|| s.orphans.get(&k).copied());
        drop(s);
        write(library, to_ptr(l.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?))
    });
    status(r)
}

/// `cuFuncGetModule`: the module of a function (a library's module for a function of
/// `cuKernelGetFunction`). CUDA_ERROR_INVALID_VALUE for a NULL out-pointer or function,
/// CUDA_ERROR_INVALID_HANDLE for a handle that is not a live function; nothing is written
/// on error.
pub(crate) unsafe fn cu_func_get_module(w: &World, module: *mut CUmodule, f: CUfunction) -> CUresult {
    let r = non_null(module).and_then(|()| {
        let f = handle_arg(f)?;
        let m = lock(&w.modules).functions.get(&f).map(|(m, _)| *m);
        write(module, to_ptr(m.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?))
    });
    status(r)
}

/// `cuFuncIsLoaded`: whether a function is loaded (see the module documentation).
/// CUDA_ERROR_INVALID_VALUE for a NULL out-pointer, CUDA_ERROR_INVALID_HANDLE for a NULL
/// function or a handle that is not a live function (as the driver answers); nothing is
/// written on error.
pub(crate) unsafe fn cu_func_is_loaded(w: &World, state: *mut CUfunctionLoadingState, f: CUfunction) -> CUresult {
    let r = non_null(state).and_then(|()| {
        let f = live_arg(f)?;
        let s = lock(&w.modules);
        if !s.functions.contains_key(&f) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        let loaded = if s.unloaded.contains(&f) {
            CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_UNLOADED
        } else {
            CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_LOADED
        };
        drop(s);
        write(state, loaded)
    });
    status(r)
}

/// `cuFuncLoad`: loads a function (nothing for a loaded one). CUDA_ERROR_INVALID_HANDLE for
/// a NULL function or a handle that is not a live function (as the driver answers);
/// nothing changes on error.
pub(crate) unsafe fn cu_func_load(w: &World, f: CUfunction) -> CUresult {
    let r = live_arg(f).and_then(|f| {
        let mut s = lock(&w.modules);
        if !s.functions.contains_key(&f) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        s.unloaded.remove(&f);
        Ok(())
    });
    status(r)
}

/// `cuLibraryGetUnifiedFunction`: the stand-in's images have no unified functions, so a
/// valid request answers CUDA_ERROR_INVALID_VALUE (as the driver answered for a kernel's
/// name: `module_query.unified_function_missing`) and leaves `*fptr` untouched. CUDA_ERROR_INVALID_VALUE for a NULL
/// `fptr` or `symbol` (or one not UTF-8), CUDA_ERROR_INVALID_HANDLE for a handle that is
/// not a live library, the reason for a library whose image the stand-in cannot run.
pub(crate) unsafe fn cu_library_get_unified_function(
    w: &World,
    fptr: *mut *mut c_void,
    library: CUlibrary,
    symbol: *const c_char,
) -> CUresult {
    let r = non_null(fptr).and_then(|()| {
        crate::module::name_of(symbol)?;
        let s = lock(&w.modules);
        let lib = s.libraries.get(from_ptr(library))?;
        match lib.refused {
            Some(e) => Err(e),
            None => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    });
    status(r)
}
