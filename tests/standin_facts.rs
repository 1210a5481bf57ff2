//! The stand-in answers as the real driver did in docs/driver-facts.md.

use std::ffi::{c_char, c_void, CStr};

use cudrv::sys::CUresult;
use cudrv::{GetProcAddress, LoadOptions, ProcAddressQuery as Q};
use cudrv_standin::StandIn;

const SENTINEL: *mut c_void = 0x5151 as *mut c_void;

/// Calls the stand-in's cuGetProcAddress_v2 and returns (status, query, pfn).
fn gpa_v2(s: StandIn, symbol: &CStr, version: i32, flags: u64) -> (CUresult, Q, *mut c_void) {
    let GetProcAddress::V2(f) = s.get_proc_address() else { panic!("12.0+ uses v2") };
    let mut pfn = SENTINEL;
    let mut query = Q(77);
    // SAFETY: valid symbol and out-pointers.
    let status = unsafe { f(symbol.as_ptr(), &mut pfn, version, flags, &mut query) };
    (status, query, pfn)
}

#[test]
fn get_proc_address_v2_table() {
    // driver-facts.md, "cuGetProcAddress_v2(symbol, &pfn, cudaVersion, flags, &query)" on 13.0.
    let s = StandIn::new(13000).unwrap();
    let ok = Q::SUCCESS;
    let (st, q, p) = gpa_v2(s, c"cuMemAlloc", 3020, 0);
    assert_eq!((st, q), (CUresult::CUDA_SUCCESS, ok));
    assert!(!p.is_null() && p != SENTINEL);
    // Below the symbol's first version: SUCCESS, VERSION_NOT_SUFFICIENT, NULL.
    for v in [3020, 1000, 0] {
        assert_eq!(
            gpa_v2(s, c"cuLaunchHostFunc", v, 0),
            (CUresult::CUDA_SUCCESS, Q::VERSION_NOT_SUFFICIENT, std::ptr::null_mut())
        );
    }
    // A symbol the driver does not have (typo, or newer than the driver).
    for sym in [c"cuMemAlocc", c"cuLogicalEndpointCreate"] {
        assert_eq!(gpa_v2(s, sym, 13000, 0), (CUresult::CUDA_SUCCESS, Q::SYMBOL_NOT_FOUND, std::ptr::null_mut()));
    }
    // Any symbol above the driver's version: INVALID_VALUE, nothing written.
    for v in [13010, 13050, 14000, 99999, i32::MAX] {
        assert_eq!(gpa_v2(s, c"cuMemAlloc", v, 0), (CUresult::CUDA_ERROR_INVALID_VALUE, Q(77), SENTINEL));
    }
    // -1: the newest variant.
    let (st, q, p) = gpa_v2(s, c"cuLaunchHostFunc", -1, 0);
    assert_eq!((st, q), (CUresult::CUDA_SUCCESS, ok));
    assert!(!p.is_null());
    // Flags 1, 2, 3 are accepted; 2 gives another pointer for stream-ordered calls.
    let legacy = gpa_v2(s, c"cuMemcpyAsync", 7000, 0).2;
    for flags in [1, 2, 3] {
        assert_eq!(gpa_v2(s, c"cuMemcpyAsync", 7000, flags).0, CUresult::CUDA_SUCCESS);
    }
    assert_ne!(gpa_v2(s, c"cuMemcpyAsync", 7000, 2).2, legacy);
    for flags in [4, 8, 1 << 40] {
        assert_eq!(gpa_v2(s, c"cuMemAlloc", 3020, flags), (CUresult::CUDA_ERROR_INVALID_VALUE, Q(77), SENTINEL));
    }
    // Query NULL: SUCCESS, pfn set.
    let GetProcAddress::V2(f) = s.get_proc_address() else { unreachable!() };
    let mut pfn = std::ptr::null_mut();
    // SAFETY: query may be null.
    assert_eq!(unsafe { f(c"cuInit".as_ptr(), &mut pfn, 2000, 0, std::ptr::null_mut()) }, CUresult::CUDA_SUCCESS);
    assert!(!pfn.is_null());
}

#[test]
fn get_proc_address_v1_table() {
    // driver-facts.md: the 4-argument form answers NOT_FOUND for an unknown symbol (pfn
    // not written) and INVALID_VALUE above the driver's version.
    let s = StandIn::new(11080).unwrap();
    let GetProcAddress::V1(f) = s.get_proc_address() else { panic!("11.x uses v1") };
    let mut pfn = SENTINEL;
    // SAFETY: valid arguments.
    unsafe {
        assert_eq!(f(c"cuNoSuch".as_ptr(), &mut pfn, 11080, 0), CUresult::CUDA_ERROR_NOT_FOUND);
        assert_eq!(pfn, SENTINEL);
        assert_eq!(f(c"cuMemAlloc".as_ptr(), &mut pfn, 12000, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(pfn, SENTINEL);
        assert_eq!(f(c"cuMemAlloc".as_ptr(), &mut pfn, 11080, 0), CUresult::CUDA_SUCCESS);
        assert_ne!(pfn, SENTINEL);
    }
}

#[test]
fn calls_without_a_current_context() {
    // driver-facts.md, "Calls without a current context (after cuInit)".
    let d = StandIn::new(13000).unwrap().load(LoadOptions::default()).unwrap();
    let p = d.p();
    // SAFETY: arguments as the facts describe; null where the facts pass null.
    unsafe {
        assert_eq!(p.cuInit(7), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuInit(0), CUresult::CUDA_SUCCESS);
        let mut ctx = 0x77 as cudrv::sys::CUcontext;
        assert_eq!(p.cuCtxGetCurrent(&mut ctx), CUresult::CUDA_SUCCESS);
        // Driver 580 writes NULL (the conformance suite's sentinel was overwritten).
        assert!(ctx.is_null(), "cuCtxGetCurrent writes NULL without a current context");
        assert_eq!(p.cuCtxSetCurrent(std::ptr::null_mut()), CUresult::CUDA_SUCCESS);
        assert_eq!(p.cuDriverGetVersion(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_VALUE);
        let mut dev = 0;
        assert_eq!(p.cuDeviceGet(&mut dev, 5), CUresult::CUDA_ERROR_INVALID_DEVICE);
        // A primary context, made current, is what cuCtxGetCurrent then returns.
        let mut primary = std::ptr::null_mut();
        assert_eq!(p.cuDevicePrimaryCtxRetain(&mut primary, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(p.cuCtxSetCurrent(primary), CUresult::CUDA_SUCCESS);
        let mut now = std::ptr::null_mut();
        assert_eq!(p.cuCtxGetCurrent(&mut now), CUresult::CUDA_SUCCESS);
        assert_eq!(now, primary);
        assert_eq!(p.cuCtxSetCurrent(std::ptr::null_mut()), CUresult::CUDA_SUCCESS);
        assert_eq!(p.cuDevicePrimaryCtxRelease(0), CUresult::CUDA_SUCCESS);
    }
}

#[test]
fn error_names_and_strings() {
    // driver-facts.md, "Error strings".
    let d = StandIn::new(13000).unwrap().load(LoadOptions::default()).unwrap();
    let text = |f: &dyn Fn(CUresult, *mut *const c_char) -> CUresult, code: u32| {
        let mut s: *const c_char = std::ptr::null();
        let st = f(CUresult(code), &mut s);
        // SAFETY: on success the driver returns a static C string.
        (st, (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_str().unwrap().to_string()))
    };
    // SAFETY: valid out-pointers.
    let name = |c, s| unsafe { d.p().cuGetErrorName(c, s) };
    // SAFETY: as above.
    let desc = |c, s| unsafe { d.p().cuGetErrorString(c, s) };
    for code in [12345, u32::MAX] {
        assert_eq!(text(&name, code), (CUresult::CUDA_ERROR_INVALID_VALUE, None));
        assert_eq!(text(&desc, code), (CUresult::CUDA_ERROR_INVALID_VALUE, None));
    }
    assert_eq!(text(&name, 4).1.as_deref(), Some("CUDA_ERROR_DEINITIALIZED"));
    assert_eq!(text(&desc, 4).1.as_deref(), Some("driver shutting down"));
    assert_eq!(text(&name, 34).1.as_deref(), Some("CUDA_ERROR_STUB_LIBRARY"));
    assert_eq!(text(&desc, 500).1.as_deref(), Some("named symbol not found"));
    assert_eq!(text(&name, 700).1.as_deref(), Some("CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert_eq!(text(&name, 719).1.as_deref(), Some("CUDA_ERROR_LAUNCH_FAILED"));
    assert_eq!(text(&name, 999).1.as_deref(), Some("CUDA_ERROR_UNKNOWN"));
}

#[test]
fn device_queries() {
    let d = StandIn::new(12040).unwrap().load(LoadOptions::default()).unwrap();
    let p = d.p();
    // SAFETY: valid out-pointers and buffer sizes.
    unsafe {
        assert_eq!(p.cuInit(0), CUresult::CUDA_SUCCESS);
        let mut name = [0 as c_char; 64];
        assert_eq!(p.cuDeviceGetName(name.as_mut_ptr(), 64, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str().unwrap(), cudrv_standin::DEVICE_NAME);
        let mut short = [0x7f as c_char; 8];
        assert_eq!(p.cuDeviceGetName(short.as_mut_ptr(), 6, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(CStr::from_ptr(short.as_ptr()).to_str().unwrap(), "cudrv");
        assert_eq!(short[6], 0x7f, "nothing written past len");
        let mut major = 0;
        let attr = cudrv::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
        assert_eq!(p.cuDeviceGetAttribute(&mut major, attr, 0), CUresult::CUDA_SUCCESS);
        assert_eq!(major, 9);
        assert_eq!(p.cuDeviceGetAttribute(&mut major, attr, 1), CUresult::CUDA_ERROR_INVALID_DEVICE);
        let mut uuid = cudrv::sys::CUuuid::default();
        assert_eq!(p.cuDeviceGetUuid(&mut uuid, 0), CUresult::CUDA_SUCCESS);
        assert_ne!(uuid.bytes, [0; 16]);
        // A NULL handle to an emulated entry is refused by name, through its generated entry.
        assert_eq!(p.cuMipmappedArrayDestroy(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_HANDLE);
        // An emulated one that needs a context says so without one.
        assert_eq!(p.cuMemFree(0x1000), CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
}
