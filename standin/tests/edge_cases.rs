//! The real driver's answers to edge cases (docs/driver-facts.md, "Edge cases on the real
//! driver"): zero sizes, freed memory, launch limits, odd arguments.

mod common;

use std::ffi::{c_char, c_uint, c_void, CStr};

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::{GetProcAddress, ProcAddressQuery};
use cudrv_standin::{fake_image, StandIn};

const INVALID_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

#[test]
fn zero_sizes_succeed_and_give_null() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        let mut a = 7;
        ok(p.cuMemAllocAsync(&mut a, 0, std::ptr::null_mut()));
        assert_eq!(a, 0);
        let mut pool = std::ptr::null_mut();
        ok(p.cuDeviceGetDefaultMemPool(&mut pool, 0));
        a = 7;
        ok(p.cuMemAllocFromPoolAsync(&mut a, 0, pool, std::ptr::null_mut()));
        assert_eq!(a, 0);
        ok(p.cuMemFreeAsync(0, std::ptr::null_mut()));
        let mut host = 7usize as *mut c_void;
        ok(p.cuMemHostAlloc(&mut host, 0, 0));
        assert!(host.is_null());
        host = 7usize as *mut c_void;
        ok(p.cuMemAllocHost(&mut host, 0));
        assert!(host.is_null());
        ok(p.cuMemFreeHost(std::ptr::null_mut()));
        // cuMemAlloc(0) stays INVALID_VALUE, as on the real driver.
        assert_eq!(p.cuMemAlloc(&mut a, 0), INVALID_VALUE);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn freed_memory_is_invalid_value_and_not_sticky() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    // SAFETY: host buffers of the sizes passed; addresses from the stand-in.
    unsafe {
        let mut a = 0;
        ok(p.cuMemAlloc(&mut a, 64));
        ok(p.cuMemFree(a));
        let bytes = [1u8; 8];
        let mut out = [0u8; 8];
        assert_eq!(p.cuMemsetD8(a, 1, 8), INVALID_VALUE);
        assert_eq!(p.cuMemcpyHtoD(a, bytes.as_ptr().cast(), 8), INVALID_VALUE);
        assert_eq!(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), a, 8), INVALID_VALUE);
        assert_eq!(p.cuMemsetD32Async(a, 1, 2, std::ptr::null_mut()), INVALID_VALUE);
        // Not sticky: the context still works.
        ok(p.cuCtxSynchronize());
        let mut b = 0;
        ok(p.cuMemAlloc(&mut b, 64));

        // cuMemGetAddressRange outside device memory: NOT_FOUND, base and size 0.
        let host = out.as_ptr() as usize as u64;
        for address in [0, b + 64, a, host] {
            let (mut base, mut size) = (7, 7);
            assert_eq!(p.cuMemGetAddressRange(&mut base, &mut size, address), CUresult::CUDA_ERROR_NOT_FOUND);
            assert_eq!((base, size), (0, 0), "{address:#x}");
        }
        let (mut base, mut size) = (0, 0);
        ok(p.cuMemGetAddressRange(&mut base, &mut size, b + 63));
        assert_eq!((base, size), (b, 64));
        ok(p.cuMemFree(b));
        ok(p.cuCtxDestroy(ctx));
    }
}

/// `cuLaunchKernel` of `f` with this shape and dynamic shared memory, no parameters.
fn launch(d: &cudrv::Driver, f: CUfunction, grid: [c_uint; 3], block: [c_uint; 3], shared: c_uint) -> CUresult {
    let (s, params, extra) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let [gx, gy, gz] = grid;
    let [bx, by, bz] = block;
    // SAFETY: a kernel without parameters.
    unsafe { d.p().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, extra) }
}

#[test]
fn launch_limits_are_checked_at_launch() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let image = fake_image(&["empty"]);
    // SAFETY: valid out-pointers and names; handles from the stand-in.
    unsafe {
        let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuModuleLoadData(&mut m, image.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"empty".as_ptr()));
        ok(launch(&d, f, [1, 1, 1], [1024, 1, 1], 0));
        // More than 48 KiB of dynamic shared memory needs the function's opt-in first.
        let opt_in = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        assert_eq!(launch(&d, f, [1, 1, 1], [1, 1, 1], (48 << 10) + 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuFuncSetAttribute(f, opt_in, 227 << 10));
        ok(launch(&d, f, [(1 << 31) - 1, 65535, 65535], [1, 1, 64], 227 << 10));
        for (grid, block, shared) in [
            ([1, 1, 1], [1025, 1, 1], 0),
            ([1, 1, 1], [1, 1, 65], 0),
            ([1, 1, 1], [32, 32, 2], 0),
            ([1, 65536, 1], [1, 1, 1], 0),
            ([1, 1, 65536], [1, 1, 1], 0),
            ([1 << 31, 1, 1], [1, 1, 1], 0),
            ([0, 1, 1], [1, 1, 1], 0),
            ([1, 1, 1], [1, 0, 1], 0),
            ([1, 1, 1], [1, 1, 1], (227 << 10) + 1),
        ] {
            assert_eq!(launch(&d, f, grid, block, shared), INVALID_VALUE, "{grid:?} {block:?} {shared}");
        }
        let mut attrs: [CUlaunchAttribute; 0] = [];
        let mut config: CUlaunchConfig = std::mem::zeroed();
        (config.gridDimX, config.gridDimY, config.gridDimZ) = (1, 1, 1);
        (config.blockDimX, config.blockDimY, config.blockDimZ) = (1, 1, 1);
        config.sharedMemBytes = 1 << 20;
        config.attrs = attrs.as_mut_ptr();
        let (params, extra) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(p.cuLaunchKernelEx(&config, f, params, extra), INVALID_VALUE);
        let s = std::ptr::null_mut();
        assert_eq!(p.cuLaunchCooperativeKernel(f, 1, 1, 1, 2048, 1, 1, 0, s, params), INVALID_VALUE);
        ok(p.cuLaunchCooperativeKernel(f, 132, 1, 1, 1024, 1, 1, 0, s, params));
        let too_large = CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        assert_eq!(p.cuLaunchCooperativeKernel(f, 265, 1, 1, 1024, 1, 1, 0, s, params), too_large);
        ok(p.cuModuleUnload(m));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn device_name_lengths_and_error_strings() {
    let d = driver();
    let p = d.p();
    // SAFETY: a buffer large enough for the name; out-pointers valid or null as stated.
    unsafe {
        let mut name = [0 as c_char; 128];
        // Length -1 writes the whole name.
        ok(p.cuDeviceGetName(name.as_mut_ptr(), -1, 0));
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), cudrv_standin::DEVICE_NAME);
        // Length 0 crashes the real driver; the stand-in answers INVALID_VALUE.
        assert_eq!(p.cuDeviceGetName(name.as_mut_ptr(), 0, 0), INVALID_VALUE);
        // A NULL out-pointer crashes the real driver; the stand-in answers INVALID_VALUE.
        assert_eq!(p.cuGetErrorName(CUresult::CUDA_SUCCESS, std::ptr::null_mut()), INVALID_VALUE);
        assert_eq!(p.cuGetErrorString(CUresult::CUDA_SUCCESS, std::ptr::null_mut()), INVALID_VALUE);
    }
}

#[test]
fn negative_proc_address_versions_ask_for_the_newest() {
    let GetProcAddress::V2(gpa) = StandIn::new(13000).unwrap().get_proc_address() else { panic!("13.0 uses v2") };
    for version in [-1, -2, i32::MIN] {
        let (mut pfn, mut q) = (std::ptr::null_mut(), ProcAddressQuery(77));
        // SAFETY: a NUL-terminated name and valid out-pointers.
        let st = unsafe { gpa(c"cuMemAlloc".as_ptr(), &mut pfn, version, 0, &mut q) };
        assert_eq!(st, CUresult::CUDA_SUCCESS, "{version}");
        assert!(!pfn.is_null(), "{version}");
    }
}
