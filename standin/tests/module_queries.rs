//! Queries over modules, libraries, functions and kernels: counts, enumerations, the
//! handles' round trips, the loading mode and a function's loading state, and the errors
//! for NULL and stale handles. The loading mode depends on `CUDA_MODULE_LOADING`, so the
//! scenarios that look at it run in child processes with it set.

mod common;

use std::ffi::{c_uint, c_void, CString};
use std::ptr::null_mut;

use common::{child_scenario, driver, new_context, ok, run_child};
use cudrv::sys::*;
use cudrv::Driver;
use cudrv_standin::fake_image;

const FEATURES_PTX: &str = include_str!("../../examples/kernels/kernel_features.ptx");
const FEATURES: [&str; 3] = ["use_globals", "reverse_shared", "mixed_params"];

fn load_module(d: &Driver, image: &[u8]) -> CUmodule {
    let mut m = null_mut();
    // SAFETY: a NUL-terminated image and a valid out-pointer.
    ok(unsafe { d.p().cuModuleLoadData(&mut m, image.as_ptr().cast()) });
    m
}

fn load_library(d: &Driver, image: &[u8]) -> CUlibrary {
    let mut l = null_mut();
    // SAFETY: a NUL-terminated image, a valid out-pointer, no options.
    ok(unsafe {
        d.p().cuLibraryLoadData(&mut l, image.as_ptr().cast(), null_mut(), null_mut(), 0, null_mut(), null_mut(), 0)
    });
    l
}

fn ptx() -> Vec<u8> {
    CString::new(FEATURES_PTX).unwrap().into_bytes_with_nul()
}

fn function_count(d: &Driver, m: CUmodule) -> Result<c_uint, CUresult> {
    let mut n = 77;
    // SAFETY: a valid out-pointer.
    match unsafe { d.p().cuModuleGetFunctionCount(&mut n, m) } {
        CUresult::CUDA_SUCCESS => Ok(n),
        e => {
            assert_eq!(n, 77, "nothing is written on error");
            Err(e)
        }
    }
}

fn function_name(d: &Driver, f: CUfunction) -> String {
    let mut name = std::ptr::null();
    // SAFETY: a valid out-pointer; the name lives as long as the process.
    ok(unsafe { d.p().cuFuncGetName(&mut name, f) });
    // SAFETY: a NUL-terminated name from the driver.
    unsafe { std::ffi::CStr::from_ptr(name) }.to_str().unwrap().to_string()
}

fn is_loaded(d: &Driver, f: CUfunction) -> Result<CUfunctionLoadingState, CUresult> {
    let mut s = CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_MAX;
    // SAFETY: a valid out-pointer.
    match unsafe { d.p().cuFuncIsLoaded(&mut s, f) } {
        CUresult::CUDA_SUCCESS => Ok(s),
        e => Err(e),
    }
}

fn loading_mode(d: &Driver) -> CUmoduleLoadingMode {
    let mut mode = CUmoduleLoadingMode(0);
    // SAFETY: a valid out-pointer.
    ok(unsafe { d.p().cuModuleGetLoadingMode(&mut mode) });
    mode
}

const LOADED: CUfunctionLoadingState = CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_LOADED;
const UNLOADED: CUfunctionLoadingState = CUfunctionLoadingState::CU_FUNCTION_LOADING_STATE_UNLOADED;
const HANDLE: CUresult = CUresult::CUDA_ERROR_INVALID_HANDLE;
const VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

#[test]
fn modules_count_and_enumerate_their_functions() {
    let d = driver();
    let p = d.p();
    let _ctx = new_context(&d);
    let m = load_module(&d, &ptx());
    assert_eq!(function_count(&d, m), Ok(3));
    let fake = load_module(&d, &fake_image(&["a", "b"]));
    assert_eq!(function_count(&d, fake), Ok(2));

    // More room than functions: the rest is untouched; each is the handle
    // cuModuleGetFunction gives, and its module is the module.
    let sentinel = 0x5a5a_usize as CUfunction;
    let mut fs = [sentinel; 5];
    // SAFETY: storage for 5 handles.
    ok(unsafe { p.cuModuleEnumerateFunctions(fs.as_mut_ptr(), 5, m) });
    assert_eq!(fs[3..], [sentinel; 2]);
    let names: Vec<String> = fs[..3].iter().map(|&f| function_name(&d, f)).collect();
    assert_eq!(names, FEATURES);
    for (&f, name) in fs.iter().zip(FEATURES) {
        let mut g = null_mut();
        let c = CString::new(name).unwrap();
        // SAFETY: valid out-pointer and name.
        ok(unsafe { p.cuModuleGetFunction(&mut g, m, c.as_ptr()) });
        assert_eq!(g, f);
        let mut home = null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { p.cuFuncGetModule(&mut home, f) });
        assert_eq!(home, m);
    }

    // Less room: only that many.
    let mut two = [sentinel; 3];
    // SAFETY: storage for 3 handles, of which 2 are asked for.
    ok(unsafe { p.cuModuleEnumerateFunctions(two.as_mut_ptr(), 2, m) });
    assert_eq!(two, [fs[0], fs[1], sentinel]);

    // Errors: nothing is written.
    // SAFETY: NULL storage is refused before anything is written.
    assert_eq!(unsafe { p.cuModuleEnumerateFunctions(null_mut(), 3, m) }, VALUE);
    let mut none = [sentinel; 1];
    // SAFETY: storage for 1 handle.
    assert_eq!(unsafe { p.cuModuleEnumerateFunctions(none.as_mut_ptr(), 1, 0x4242 as CUmodule) }, HANDLE);
    assert_eq!(none, [sentinel]);
    // SAFETY: a NULL count is refused.
    assert_eq!(unsafe { p.cuModuleGetFunctionCount(null_mut(), m) }, VALUE);
    assert_eq!(function_count(&d, null_mut()), Err(HANDLE));

    // SAFETY: a NULL out-pointer with a live function (module_query.func_get_module_null_out).
    assert_eq!(unsafe { p.cuFuncGetModule(null_mut(), fs[0]) }, VALUE);

    // After unloading, the module and its functions are stale.
    // SAFETY: a live module.
    ok(unsafe { p.cuModuleUnload(m) });
    assert_eq!(function_count(&d, m), Err(HANDLE));
    let mut home = 0x77 as CUmodule;
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { p.cuFuncGetModule(&mut home, fs[0]) }, HANDLE);
    assert_eq!(home, 0x77 as CUmodule);
    assert_eq!(is_loaded(&d, fs[0]), Err(HANDLE));
    // SAFETY: a stale handle is refused.
    assert_eq!(unsafe { p.cuFuncLoad(fs[0]) }, HANDLE);
    // SAFETY: NULL arguments are refused, as recorded (module_query.func_get_module_null_function,
    // load_null_function, is_loaded_null_function).
    unsafe {
        assert_eq!(p.cuFuncGetModule(&mut home, null_mut()), VALUE);
        assert_eq!(p.cuFuncLoad(null_mut()), HANDLE);
    }
    assert_eq!(is_loaded(&d, null_mut()), Err(HANDLE));
}

#[test]
fn libraries_enumerate_their_kernels() {
    let d = driver();
    let p = d.p();
    let _ctx = new_context(&d);
    let l = load_library(&d, &ptx());
    let sentinel = 0x5a5a_usize as CUkernel;
    let mut ks = [sentinel; 4];
    // SAFETY: storage for 4 handles.
    ok(unsafe { p.cuLibraryEnumerateKernels(ks.as_mut_ptr(), 4, l) });
    assert_eq!(ks[3], sentinel);
    // The handles cuLibraryGetKernel gives, though not in the PTX's order (as on the H200:
    // module_query.library_enumerate_same_as_get).
    let mut names = Vec::new();
    for &k in &ks[..3] {
        let mut name = std::ptr::null();
        // SAFETY: a valid out-pointer; the name lives as long as the library.
        ok(unsafe { p.cuKernelGetName(&mut name, k) });
        // SAFETY: a NUL-terminated name from the driver.
        let c = unsafe { std::ffi::CStr::from_ptr(name) }.to_owned();
        let mut same = null_mut();
        // SAFETY: valid out-pointer and name.
        ok(unsafe { p.cuLibraryGetKernel(&mut same, l, c.as_ptr()) });
        assert_eq!(same, k);
        names.push(c.into_string().unwrap());
        let mut lib = null_mut();
        // SAFETY: a valid out-pointer.
        ok(unsafe { p.cuKernelGetLibrary(&mut lib, k) });
        assert_eq!(lib, l);
        // The kernel's function lives in the library's module.
        let (mut f, mut m, mut home) = (null_mut(), null_mut(), null_mut());
        // SAFETY: valid out-pointers.
        unsafe {
            ok(p.cuKernelGetFunction(&mut f, k));
            ok(p.cuLibraryGetModule(&mut m, l));
            ok(p.cuFuncGetModule(&mut home, f));
        }
        assert_eq!(home, m);
        assert_eq!(is_loaded(&d, f), Ok(LOADED));
    }
    names.sort();
    let mut want = FEATURES.to_vec();
    want.sort();
    assert_eq!(names, want);
    let mut one = [sentinel; 2];
    // SAFETY: storage for 2 handles, of which 1 is asked for.
    ok(unsafe { p.cuLibraryEnumerateKernels(one.as_mut_ptr(), 1, l) });
    assert_eq!(one, [ks[0], sentinel]);

    // No unified functions: INVALID_VALUE, the pointer untouched (as recorded:
    // module_query.unified_function_*).
    let mut fptr = 0x99 as *mut c_void;
    // SAFETY: valid out-pointer and name.
    unsafe {
        assert_eq!(p.cuLibraryGetUnifiedFunction(&mut fptr, l, c"use_globals".as_ptr()), VALUE);
        assert_eq!(p.cuLibraryGetUnifiedFunction(null_mut(), l, c"use_globals".as_ptr()), VALUE);
        assert_eq!(p.cuLibraryGetUnifiedFunction(&mut fptr, l, std::ptr::null()), VALUE);
        assert_eq!(p.cuLibraryGetUnifiedFunction(&mut fptr, null_mut(), c"use_globals".as_ptr()), HANDLE);
    }
    assert_eq!(fptr, 0x99 as *mut c_void);

    // Errors, as recorded (module_query.library_enumerate_null_buffer,
    // kernel_get_library_null_out, kernel_get_library_null_kernel).
    let mut lib = 0x77 as CUlibrary;
    // SAFETY: NULL arguments are refused; valid out-pointers.
    unsafe {
        assert_eq!(p.cuLibraryEnumerateKernels(null_mut(), 1, l), VALUE);
        assert_eq!(p.cuKernelGetLibrary(null_mut(), ks[0]), VALUE);
        assert_eq!(p.cuKernelGetLibrary(&mut lib, null_mut()), HANDLE);
        assert_eq!(lib, 0x77 as CUlibrary);
        // A kernel of an unloaded library still names it (kernel_get_library_unloaded).
        ok(p.cuLibraryUnload(l));
        ok(p.cuKernelGetLibrary(&mut lib, ks[0]));
        assert_eq!(lib, l);
        assert_eq!(p.cuLibraryEnumerateKernels(one.as_mut_ptr(), 1, l), HANDLE);
    }
    assert_eq!(one, [ks[0], sentinel]);
}

#[test]
fn the_loading_mode_follows_cuda_module_loading() {
    run_child("lazy", &[("CUDA_MODULE_LOADING", "")]);
    run_child("lazy", &[("CUDA_MODULE_LOADING", "LAZY")]);
    run_child("eager", &[("CUDA_MODULE_LOADING", "EAGER")]);
    run_child("old-driver", &[("CUDA_MODULE_LOADING", "")]);
}

/// Enumerates the two functions of a fresh module after asking for the first by name.
fn enumerate_after_get(d: &Driver) -> [CUfunction; 2] {
    let m = load_module(d, &fake_image(&["first", "second"]));
    let mut got = null_mut();
    // SAFETY: valid out-pointer and name.
    ok(unsafe { d.p().cuModuleGetFunction(&mut got, m, c"first".as_ptr()) });
    let mut fs = [null_mut(); 2];
    // SAFETY: storage for 2 handles.
    ok(unsafe { d.p().cuModuleEnumerateFunctions(fs.as_mut_ptr(), 2, m) });
    assert_eq!(fs[0], got);
    fs
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Some(scenario) = child_scenario() else { return };
    match scenario.as_str() {
        "lazy" => {
            let d = driver();
            let _ctx = new_context(&d);
            assert_eq!(loading_mode(&d), CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING);
            let [first, second] = enumerate_after_get(&d);
            // Asked for by name: loaded; only enumerated: not, until cuFuncLoad (twice is
            // harmless).
            assert_eq!(is_loaded(&d, first), Ok(LOADED));
            assert_eq!(is_loaded(&d, second), Ok(UNLOADED));
            // SAFETY: a live function.
            ok(unsafe { d.p().cuFuncLoad(second) });
            assert_eq!(is_loaded(&d, second), Ok(LOADED));
            // SAFETY: as above.
            ok(unsafe { d.p().cuFuncLoad(second) });
            assert_eq!(is_loaded(&d, second), Ok(LOADED));
        }
        "eager" => {
            let d = driver();
            let _ctx = new_context(&d);
            assert_eq!(loading_mode(&d), CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING);
            let [first, second] = enumerate_after_get(&d);
            assert_eq!(is_loaded(&d, first), Ok(LOADED));
            assert_eq!(is_loaded(&d, second), Ok(LOADED));
        }
        "old-driver" => {
            // A 12.1 driver loads eagerly by default.
            let d = cudrv_standin::StandIn::new(12010).unwrap().load(Default::default()).unwrap();
            // SAFETY: plain call.
            ok(unsafe { d.p().cuInit(0) });
            assert_eq!(loading_mode(&d), CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING);
            // SAFETY: a NULL mode is refused.
            assert_eq!(unsafe { d.p().cuModuleGetLoadingMode(null_mut()) }, VALUE);
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
