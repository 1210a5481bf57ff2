//! The context stack, primary contexts and the context-restore fault hook.
//! "facts" is `docs/driver-facts.md`.

mod common;

use common::{current, driver, new_context, ok};
use cudrv::sys::{CUcontext, CUresult};
use cudrv_standin::{faults, ledger};

fn handle(c: CUcontext) -> u64 {
    c as usize as u64
}

#[test]
fn the_stack_follows_create_push_pop_and_set_current() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers and handles from the stand-in throughout.
    unsafe {
        // facts: popping an empty stack is CUDA_ERROR_INVALID_CONTEXT; cuCtxGetCurrent with
        // none current succeeds and writes NULL (driver 580, the conformance suite).
        let mut popped = std::ptr::null_mut();
        assert_eq!(p.cuCtxPopCurrent(&mut popped), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        let mut c = 0x77 as CUcontext;
        ok(p.cuCtxGetCurrent(&mut c));
        assert!(c.is_null());

        // cuCtxCreate pushes the new context.
        let a = new_context(&d);
        assert_eq!(current(&d), a);
        let b = new_context(&d);
        assert_ne!(a, b);
        assert_eq!(current(&d), b);
        let mut dev = -1;
        ok(p.cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 0);

        // Pop returns the top; push puts it back.
        ok(p.cuCtxPopCurrent(&mut popped));
        assert_eq!(popped, b);
        assert_eq!(current(&d), a);
        ok(p.cuCtxPushCurrent(b));
        assert_eq!(current(&d), b);

        // cuCtxSetCurrent replaces the top: [a, b] becomes [a, a].
        ok(p.cuCtxSetCurrent(a));
        assert_eq!(current(&d), a);
        ok(p.cuCtxPopCurrent(&mut popped));
        assert_eq!(popped, a);
        assert_eq!(current(&d), a);

        // cuCtxSetCurrent(NULL) pops the top; on an empty stack it succeeds (facts).
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());
        // cuCtxSetCurrent on an empty stack pushes.
        ok(p.cuCtxSetCurrent(b));
        assert_eq!(current(&d), b);
        ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());

        // No current context: resource calls are CUDA_ERROR_INVALID_CONTEXT.
        assert_eq!(p.cuCtxGetDevice(&mut dev), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(p.cuCtxSynchronize(), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        let mut s = std::ptr::null_mut();
        assert_eq!(p.cuStreamCreate(&mut s, 0), CUresult::CUDA_ERROR_INVALID_CONTEXT);

        // Both are live handles; destroying b (not current) works once.
        let l = ledger();
        assert!(l.handle_is_live("context", handle(a)));
        assert!(l.handle_is_live("context", handle(b)));
        ok(p.cuCtxDestroy(b));
        // facts ("Edge cases"): destroying again answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
        assert_eq!(p.cuCtxDestroy(b), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        let l = ledger();
        assert!(!l.handle_is_live("context", handle(b)));
        assert!(l.double_destroys.contains(&("context", handle(b))));
        // facts ("Edge cases"): a destroyed context can be made current; work answers
        // CUDA_ERROR_CONTEXT_IS_DESTROYED (more in destroyed.rs).
        ok(p.cuCtxPushCurrent(b));
        assert_eq!(p.cuCtxSynchronize(), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());

        // Destroying the current context pops it.
        ok(p.cuCtxPushCurrent(a));
        ok(p.cuCtxDestroy(a));
        assert!(current(&d).is_null());
    }
}

#[test]
fn a_context_destroyed_below_the_top_is_invalid_when_it_comes_back() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers and handles from the stand-in.
    unsafe {
        let a = new_context(&d);
        let b = new_context(&d);
        ok(p.cuCtxDestroy(a));
        assert_eq!(current(&d), b, "only the current context is popped");
        ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        // a is on top again, destroyed: cuCtxGetCurrent still names it, calls refuse it
        // with CUDA_ERROR_CONTEXT_IS_DESTROYED (facts, "Edge cases"), a pop too.
        assert_eq!(current(&d), a);
        let mut dev = 0;
        assert_eq!(p.cuCtxGetDevice(&mut dev), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        let mut ptr = 0;
        assert_eq!(p.cuMemAlloc(&mut ptr, 16), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        assert_eq!(p.cuCtxPopCurrent(std::ptr::null_mut()), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());
        ok(p.cuCtxDestroy(b));
    }
}

#[test]
fn create_checks_its_arguments() {
    let d = driver();
    let p = d.p();
    let mut c = std::ptr::null_mut();
    // SAFETY: valid or null out-pointers.
    unsafe {
        assert_eq!(p.cuCtxCreate(&mut c, std::ptr::null_mut(), 0, 5), CUresult::CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(p.cuCtxCreate(std::ptr::null_mut(), std::ptr::null_mut(), 0, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuCtxCreate(&mut c, std::ptr::null_mut(), 0x1000, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        // The older variants answer the same.
        ok(p.cuCtxCreate_v3020(&mut c, 0, 0));
        assert_eq!(current(&d), c);
        ok(p.cuCtxDestroy(c));
        assert!(current(&d).is_null());
    }
}

#[test]
fn primary_context_handles_are_stable_while_retained() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers.
    unsafe {
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDevicePrimaryCtxRetain(&mut a, 0));
        ok(p.cuDevicePrimaryCtxRetain(&mut b, 0));
        assert_eq!(a, b);
        ok(p.cuCtxSetCurrent(a));
        let mut dev = -1;
        ok(p.cuCtxGetDevice(&mut dev));
        assert_eq!(dev, 0);
        // A primary context is not destroyed by cuCtxDestroy.
        assert_eq!(p.cuCtxDestroy(a), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxRelease(0));
        // The last release destroyed it (facts, "Edge cases"; more in destroyed.rs): a
        // retain makes a fresh one.
        let mut again = std::ptr::null_mut();
        ok(p.cuDevicePrimaryCtxRetain(&mut again, 0));
        assert_ne!(again, a);
        ok(p.cuDevicePrimaryCtxRelease(0));
        assert_eq!(p.cuDevicePrimaryCtxRetain(&mut again, 1), CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
}

#[test]
fn a_failed_restore_leaves_the_switched_to_context_current() {
    let d = driver();
    let p = d.p();
    let a = new_context(&d);
    let b = new_context(&d);
    // SAFETY: valid handles from the stand-in.
    unsafe {
        ok(p.cuCtxSetCurrent(a));

        // Armed: the next switch (a -> b) records a; switching back to a fails once, and b
        // stays current (cuda-core-error-policy-review.txt: a failed cuCtxSetCurrent leaves
        // the previous context current).
        faults::fail_next_context_restore(CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuCtxSetCurrent(b));
        assert_eq!(p.cuCtxSetCurrent(a), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(current(&d), b);
        ok(p.cuCtxSetCurrent(a));
        assert_eq!(current(&d), a);

        // Only a switch back to the recorded context fails.
        faults::fail_next_context_restore(CUresult::CUDA_ERROR_UNKNOWN);
        ok(p.cuCtxSetCurrent(b)); // records a
        ok(p.cuCtxSetCurrent(b)); // not a restore
        assert_eq!(p.cuCtxSetCurrent(a), CUresult::CUDA_ERROR_UNKNOWN);
        assert_eq!(current(&d), b);

        // From no context: the restore is cuCtxSetCurrent(NULL).
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());
        faults::fail_next_context_restore(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        ok(p.cuCtxSetCurrent(a));
        assert_eq!(p.cuCtxSetCurrent(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(current(&d), a);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());

        // Disarmed by disarm_context_restore and by clear.
        ok(p.cuCtxSetCurrent(a));
        faults::fail_next_context_restore(CUresult::CUDA_ERROR_UNKNOWN);
        ok(p.cuCtxSetCurrent(b));
        faults::disarm_context_restore();
        ok(p.cuCtxSetCurrent(a));
        faults::fail_next_context_restore(CUresult::CUDA_ERROR_UNKNOWN);
        ok(p.cuCtxSetCurrent(b));
        faults::clear();
        ok(p.cuCtxSetCurrent(a));
    }
    // Another thread is not affected by this thread's hook.
    faults::fail_next_context_restore(CUresult::CUDA_ERROR_UNKNOWN);
    let (ha, hb) = (a as usize, b as usize);
    let other = std::thread::spawn(move || {
        let d = driver();
        // SAFETY: handles from the stand-in.
        unsafe {
            ok(d.p().cuCtxSetCurrent(hb as CUcontext));
            ok(d.p().cuCtxSetCurrent(ha as CUcontext));
            ok(d.p().cuCtxSetCurrent(hb as CUcontext));
            ok(d.p().cuCtxSetCurrent(std::ptr::null_mut()));
        }
    });
    other.join().unwrap();
    faults::disarm_context_restore();
    // SAFETY: handles from the stand-in.
    unsafe {
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        ok(p.cuCtxDestroy(a));
        ok(p.cuCtxDestroy(b));
        while current(&d) == a || current(&d) == b {
            ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        }
    }
}

#[test]
fn calls_before_faults_and_stubs() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers.
    unsafe {
        // An injected fault answers before anything is looked at.
        faults::inject_on_this_thread(
            cudrv::call::cuCtxCreate,
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            faults::Times::Once,
        );
        let mut c = std::ptr::null_mut();
        assert_eq!(p.cuCtxCreate(&mut c, std::ptr::null_mut(), 0, 0), CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(c.is_null());
        // An entry the stand-in does not emulate (the 32-bit ABI's cuMemsetD8) still
        // answers NOT_SUPPORTED.
        assert_eq!(p.cuMemsetD8_v2000(0, 0, 0), CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
}
