//! Fault injection by call: a fault names a `cudrv::call` constant (a name's or a
//! variant's) and fires on every variant of its symbol, implemented or not, on the
//! injecting thread only when injected so.

mod common;

use common::{driver, ok};
use cudrv::call;
use cudrv::sys::CUresult;
use cudrv_standin::faults::{self, Times};

const INJECTED: CUresult = CUresult::CUDA_ERROR_LAUNCH_TIMEOUT;

#[test]
fn a_fault_on_a_name_fires_on_every_variant_of_its_symbol() {
    let d = driver();
    let p = d.p();
    // SAFETY: plain calls with values the stand-in checks.
    unsafe {
        faults::inject_on_this_thread(call::cuMemFree, INJECTED, Times::N(2));
        // cuMemFree_v2000 is not emulated (its entry answers NOT_SUPPORTED), cuMemFree
        // (cuMemFree_v3020) is: the fault fires on both, then is spent.
        assert_eq!(p.cuMemFree_v2000(0), INJECTED);
        assert_eq!(p.cuMemFree(0), INJECTED);
        assert_eq!(p.cuMemFree_v2000(0), CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
}

#[test]
fn a_fault_on_a_variant_fires_on_its_symbol_on_the_injecting_thread_only() {
    let d = driver();
    let p = d.p();
    let mut ctx = std::ptr::null_mut();
    faults::inject_on_this_thread(call::cuCtxGetCurrent_v4000, INJECTED, Times::Once);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut other = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            ok(unsafe { d.p().cuCtxGetCurrent(&mut other) });
        });
    });
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(p.cuCtxGetCurrent(&mut ctx), INJECTED);
        ok(p.cuCtxGetCurrent(&mut ctx));
    }
}

#[test]
fn entries_that_answer_at_any_time_take_faults_too() {
    let d = driver();
    let p = d.p();
    let (mut version, mut name) = (0, std::ptr::null());
    faults::inject_on_this_thread(call::cuDriverGetVersion, INJECTED, Times::Once);
    faults::inject_on_this_thread(call::cuGetErrorName, INJECTED, Times::Once);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(p.cuDriverGetVersion(&mut version), INJECTED);
        assert_eq!(p.cuGetErrorName(CUresult::CUDA_ERROR_INVALID_VALUE, &mut name), INJECTED);
        ok(p.cuDriverGetVersion(&mut version));
        assert_eq!(version, 13050);
        ok(p.cuGetErrorName(CUresult::CUDA_ERROR_INVALID_VALUE, &mut name));
        assert!(!name.is_null());
    }
}
