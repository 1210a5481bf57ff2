//! p versus pw under injected failures, and the reporting channel.

mod common;

use common::my_reports;
use cudrv::sys::CUresult;
use cudrv::LoadOptions;
use cudrv_standin::{StandIn, Times};

/// The stand-in these tests drive (its own world: faults are injected there).
fn standin() -> StandIn {
    StandIn::new(13000).unwrap()
}

fn driver() -> cudrv::Driver {
    let d = standin().load(LoadOptions::default()).unwrap();
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
    d
}

#[test]
fn p_returns_the_injected_status_and_reports_nothing() {
    common::capture_reports();
    let d = driver();
    standin().inject_on_this_thread(cudrv::call::cuDeviceGetCount, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Once);
    let mut n = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { d.p().cuDeviceGetCount(&mut n) }, CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    // SAFETY: as above. The fault fired once and is gone.
    assert_eq!(unsafe { d.p().cuDeviceGetCount(&mut n) }, CUresult::CUDA_SUCCESS);
    assert_eq!(n, 1);
    assert!(my_reports().is_empty());
}

#[test]
fn pw_reports_once_naming_the_call_and_the_handle() {
    common::capture_reports();
    let d = driver();
    standin().inject_on_this_thread(cudrv::call::cuMemFree, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    // SAFETY: the stand-in never dereferences a device pointer.
    let status = unsafe { d.pw().cuMemFree(0x7f3a00000000) };
    assert_eq!(status, CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(my_reports(), ["cuMemFree(0x7f3a00000000) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)"]);
    // Nothing is left behind: the next successful call reports nothing.
    let mut n = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { d.pw().cuDeviceGetCount(&mut n) }, CUresult::CUDA_SUCCESS);
    assert!(my_reports().is_empty());
}

#[test]
fn two_failures_of_one_call_site_give_two_reports() {
    common::capture_reports();
    let d = driver();
    standin().inject_on_this_thread(cudrv::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT, Times::N(2));
    for handle in [0x1000usize, 0x2000] {
        // SAFETY: the fault answers before the handle is looked at.
        let status = unsafe { d.pw().cuCtxSetCurrent(handle as cudrv::sys::CUcontext) };
        assert_eq!(status, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    let reports = my_reports();
    assert_eq!(reports.len(), 2, "{reports:?}");
    assert!(reports[0].starts_with("cuCtxSetCurrent(0x1000) failed: CUDA_ERROR_INVALID_CONTEXT"));
    assert!(reports[1].starts_with("cuCtxSetCurrent(0x2000) failed: CUDA_ERROR_INVALID_CONTEXT"));
}

#[test]
fn deinitialized_is_not_reported() {
    common::capture_reports();
    let d = driver();
    standin().inject_on_this_thread(cudrv::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_DEINITIALIZED, Times::Once);
    // SAFETY: null is a valid argument.
    let status = unsafe { d.pw().cuCtxSetCurrent(std::ptr::null_mut()) };
    assert_eq!(status, CUresult::CUDA_ERROR_DEINITIALIZED);
    assert!(my_reports().is_empty());
}

#[test]
fn an_unresolved_entry_is_reported_with_the_reason() {
    common::capture_reports();
    let d = driver();
    // SAFETY: gated: nothing is called.
    let status = unsafe {
        d.pw().cuGraphAddNode_v13040(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, CUresult::CUDA_ERROR_NOT_FOUND);
    assert_eq!(
        my_reports(),
        ["cuGraphAddNode_v13040(0x0) not called: needs driver 13.4; this driver is 13.0 (CUDA_ERROR_NOT_FOUND)"]
    );
}

#[test]
fn an_unknown_code_keeps_its_value_and_gets_a_fallback_name() {
    // The error asks this driver for the code's name and description when shown.
    let d: &'static cudrv::Driver = Box::leak(Box::new(driver()));
    let e = d.error(cudrv::call::cuMemAlloc, CUresult(12345));
    assert_eq!(e.code(), CUresult(12345));
    assert_eq!(e.name(), "unknown CUresult 12345");
    assert_eq!(
        e.to_string(),
        "cuMemAlloc failed: unknown CUresult 12345 (the driver has no description for this code)"
    );
    let e =
        d.error(cudrv::call::cuMemFree, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS).with_note("restoring the context failed");
    assert_eq!(e.name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    assert!(e.to_string().ends_with("; note: restoring the context failed"), "{e}");
}
