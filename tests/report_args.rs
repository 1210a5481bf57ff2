//! What a `pw` report names: the first handle, device pointer or device passed by value,
//! never an out-pointer (issue 8). Run through the free `cudrv::pw` functions, with the
//! stand-in as the process-wide driver, in a child process (the reporter and the driver
//! are process-wide).

mod common;

use common::{child_scenario, collect_all_reports, run_child};
use cudrv::sys::{CUcontext, CUfunction, CUmodule, CUresult, CUstream};
use cudrv::LoadOptions;
use cudrv_standin::{faults, StandIn, Times};

#[test]
fn reports_name_handles_device_pointers_and_devices_never_out_pointers() {
    run_child("report-args", &[]);
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Some(scenario) = child_scenario() else { return };
    assert_eq!(scenario, "report-args");
    let d = StandIn::new(cudrv::table::HEADER_VERSION).unwrap().load(LoadOptions::default()).unwrap();
    assert!(cudrv::set_driver(d).is_ok());
    let reports = collect_all_reports();
    let taken = || std::mem::take(&mut *reports.lock().unwrap());
    // SAFETY: plain call.
    assert_eq!(unsafe { cudrv::pw::cuInit(0) }, CUresult::CUDA_SUCCESS);

    // Out-pointers only: the report names nothing.
    faults::inject(cudrv::call::cuMemAlloc, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Once);
    let mut dptr = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { cudrv::pw::cuMemAlloc(&mut dptr, 64) }, CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    assert_eq!(taken(), ["cuMemAlloc() failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"]);
    faults::inject(cudrv::call::cuDeviceGetCount, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    let mut n = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { cudrv::pw::cuDeviceGetCount(&mut n) }, CUresult::CUDA_ERROR_UNKNOWN);
    assert_eq!(taken(), ["cuDeviceGetCount() failed: CUDA_ERROR_UNKNOWN (unknown error)"]);
    faults::inject(cudrv::call::cuStreamCreate, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::Once);
    let mut s: CUstream = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { cudrv::pw::cuStreamCreate(&mut s, 0) }, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    assert_eq!(taken(), ["cuStreamCreate() failed: CUDA_ERROR_INVALID_CONTEXT (invalid device context)"]);

    // A device pointer passed by value is named, in hex.
    // SAFETY: the stand-in never dereferences a device pointer; this one was never allocated.
    let status = unsafe { cudrv::pw::cuMemFree(0xdead_0000) };
    assert_ne!(status, CUresult::CUDA_SUCCESS);
    let r = taken();
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].starts_with("cuMemFree(0xdead0000) failed: "), "{r:?}");

    // The device ordinal, after an out-pointer.
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the stand-in has no device 99.
    let status = unsafe { cudrv::pw::cuDevicePrimaryCtxRetain(&mut ctx, 99) };
    assert_eq!(status, CUresult::CUDA_ERROR_INVALID_DEVICE);
    assert_eq!(taken(), ["cuDevicePrimaryCtxRetain(99) failed: CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)"]);

    // The first handle passed by value, after an out-pointer.
    faults::inject(cudrv::call::cuModuleGetFunction, CUresult::CUDA_ERROR_NOT_FOUND, Times::Once);
    let mut f: CUfunction = std::ptr::null_mut();
    let module = 0x5000 as CUmodule;
    // SAFETY: the injected fault answers before anything is looked at.
    let status = unsafe { cudrv::pw::cuModuleGetFunction(&mut f, module, c"kernel".as_ptr()) };
    assert_eq!(status, CUresult::CUDA_ERROR_NOT_FOUND);
    let r = taken();
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].starts_with("cuModuleGetFunction(0x5000) failed: CUDA_ERROR_NOT_FOUND"), "{r:?}");
    faults::inject(cudrv::call::cuStreamSynchronize, CUresult::CUDA_ERROR_INVALID_HANDLE, Times::Once);
    // SAFETY: as above.
    let status = unsafe { cudrv::pw::cuStreamSynchronize(0x6000 as CUstream) };
    assert_eq!(status, CUresult::CUDA_ERROR_INVALID_HANDLE);
    assert_eq!(taken(), ["cuStreamSynchronize(0x6000) failed: CUDA_ERROR_INVALID_HANDLE (invalid resource handle)"]);
    println!("SCENARIO-PASSED");
}
