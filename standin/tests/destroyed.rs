//! Handles used after their object is gone: primary contexts after their last release or
//! a reset, created contexts after `cuCtxDestroy`, graphs and graph execs, streams and
//! events. "facts" is driver-facts.md, "Edge cases on the real driver".
//!
//! Only `primary_contexts_die_with_their_last_release_or_a_reset` uses a primary context
//! in this binary: its retain counts are exact.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{current, driver, new_context, ok};
use cudrv::sys::{CUcontext, CUresult, CUstream};
use cudrv::Driver;

const DESTROYED: CUresult = CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED;

fn new_stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

/// Asserts that work in the current context, and on `s` (a stream of it), answers
/// CUDA_ERROR_CONTEXT_IS_DESTROYED.
fn work_is_refused(d: &Driver, s: CUstream) {
    let p = d.p();
    let counter: &'static AtomicUsize = Box::leak(Box::default());
    let arg = counter as *const AtomicUsize as *mut c_void;
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        let (mut ptr, mut stream, mut event, mut dev) = (0, std::ptr::null_mut(), std::ptr::null_mut(), -1);
        assert_eq!(p.cuStreamCreate(&mut stream, 0), DESTROYED);
        assert_eq!(p.cuEventCreate(&mut event, 0), DESTROYED);
        assert_eq!(p.cuMemAlloc(&mut ptr, 16), DESTROYED);
        assert_eq!(p.cuCtxSynchronize(), DESTROYED);
        assert_eq!(p.cuCtxGetDevice(&mut dev), DESTROYED);
        assert_eq!(p.cuStreamSynchronize(std::ptr::null_mut()), DESTROYED);
        assert_eq!(p.cuMemAllocAsync(&mut ptr, 16, s), DESTROYED);
        assert_eq!(p.cuStreamSynchronize(s), DESTROYED);
        assert_eq!(p.cuStreamQuery(s), DESTROYED);
        assert_eq!(p.cuLaunchHostFunc(s, Some(common::count), arg), DESTROYED);
    }
    assert_eq!(counter.load(Ordering::SeqCst), 0);
}

fn retain_primary(d: &Driver) -> CUcontext {
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuDevicePrimaryCtxRetain(&mut c, 0) });
    c
}

#[test]
fn primary_contexts_die_with_their_last_release_or_a_reset() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        // Two retains, one handle; the first release leaves it alive.
        let old = retain_primary(&d);
        assert_eq!(retain_primary(&d), old);
        ok(p.cuCtxSetCurrent(old));
        let s = new_stream(&d);
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        let mut ptr = 0;
        ok(p.cuMemAlloc(&mut ptr, 64));
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuCtxSynchronize());

        // facts: after the last release the old handle answers
        // CUDA_ERROR_CONTEXT_IS_DESTROYED (streams, memory, synchronize, allocations).
        ok(p.cuDevicePrimaryCtxRelease(0));
        assert_eq!(current(&d), old, "it stays current, destroyed");
        work_is_refused(&d, s);
        assert_eq!(p.cuEventRecord(e, s), DESTROYED);
        assert_eq!(p.cuCtxSynchronize_v13000(old), DESTROYED);
        // It can still be made current (as a destroyed created context can).
        ok(p.cuCtxSetCurrent(old));
        ok(p.cuCtxPushCurrent(old));
        work_is_refused(&d, s);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert_eq!(p.cuDevicePrimaryCtxRelease(0), CUresult::CUDA_ERROR_INVALID_CONTEXT, "nothing retained");

        // A later retain makes a fresh primary context.
        let fresh = retain_primary(&d);
        assert_ne!(fresh, old);
        ok(p.cuCtxSetCurrent(fresh));
        ok(p.cuCtxSynchronize());
        let s2 = new_stream(&d);
        ok(p.cuMemFree(ptr));

        // facts: a reset with live resources destroys it too; it does not release (CUDA
        // documentation): the retain is still to be released.
        ok(p.cuDevicePrimaryCtxReset(0));
        work_is_refused(&d, s2);
        let after_reset = retain_primary(&d);
        assert_ne!(after_reset, fresh);
        ok(p.cuCtxSetCurrent(after_reset));
        ok(p.cuCtxSynchronize());
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxRelease(0));
        assert_eq!(p.cuCtxSynchronize(), DESTROYED);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));

        // The streams and the event of the destroyed contexts can still be destroyed.
        ok(p.cuStreamDestroy(s));
        ok(p.cuStreamDestroy(s2));
        ok(p.cuEventDestroy(e));
    }
}

#[test]
fn a_destroyed_context_can_be_made_current_but_not_used() {
    let d = driver();
    let p = d.p();
    let c = new_context(&d);
    let s = new_stream(&d);
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        ok(p.cuCtxDestroy(c));
        assert!(current(&d).is_null(), "destroying the current context pops it");
        // facts: destroying again answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
        assert_eq!(p.cuCtxDestroy(c), DESTROYED);
        // facts: cuCtxPushCurrent(NULL) answers CUDA_ERROR_INVALID_VALUE.
        assert_eq!(p.cuCtxPushCurrent(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_VALUE);
        // facts: cuCtxPushCurrent and cuCtxSetCurrent to it succeed; work then answers
        // CUDA_ERROR_CONTEXT_IS_DESTROYED.
        ok(p.cuCtxPushCurrent(c));
        assert_eq!(current(&d), c);
        work_is_refused(&d, s);
        assert_eq!(p.cuCtxSynchronize_v13000(c), DESTROYED);
        // Popping it answers the same, and it stays current; cuCtxSetCurrent(NULL) pops it.
        let mut popped = std::ptr::null_mut();
        assert_eq!(p.cuCtxPopCurrent(&mut popped), DESTROYED);
        assert_eq!(current(&d), c);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        assert!(current(&d).is_null());
        ok(p.cuCtxSetCurrent(c));
        work_is_refused(&d, s);
        ok(p.cuCtxSetCurrent(std::ptr::null_mut()));
        // The stream can still be destroyed (see the crate docs).
        ok(p.cuStreamDestroy(s));
    }
}

#[test]
fn destroyed_and_null_graphs_and_execs_are_invalid_values() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        let (mut g, mut e, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuGraphCreate(&mut g, 0));
        ok(p.cuGraphInstantiateWithFlags(&mut e, g, 0));
        ok(p.cuGraphExecDestroy(e));
        // facts: destroyed graphs and graph execs answer CUDA_ERROR_INVALID_VALUE.
        assert_eq!(p.cuGraphExecDestroy(e), invalid);
        assert_eq!(p.cuGraphLaunch(e, s), invalid);
        ok(p.cuGraphDestroy(g));
        assert_eq!(p.cuGraphDestroy(g), invalid);
        assert_eq!(p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0), invalid);
        assert_eq!(p.cuGraphInstantiateWithFlags(&mut e, g, 0), invalid);
        // facts: NULL graph and exec handles answer CUDA_ERROR_INVALID_VALUE too.
        let (null_graph, null_exec) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(p.cuGraphDestroy(null_graph), invalid);
        assert_eq!(p.cuGraphAddEmptyNode(&mut n, null_graph, std::ptr::null(), 0), invalid);
        assert_eq!(p.cuGraphInstantiateWithFlags(&mut e, null_graph, 0), invalid);
        assert_eq!(p.cuGraphExecDestroy(null_exec), invalid);
        assert_eq!(p.cuGraphLaunch(null_exec, s), invalid);
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn destroyed_streams_and_events_are_invalid_handles() {
    // facts: the real driver crashes on any use of a destroyed stream or event; the
    // stand-in answers CUDA_ERROR_INVALID_HANDLE instead (a deliberate difference, in the
    // crate docs).
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s = new_stream(&d);
    let invalid = CUresult::CUDA_ERROR_INVALID_HANDLE;
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        let mut e = std::ptr::null_mut();
        ok(p.cuEventCreate(&mut e, 0));
        ok(p.cuStreamDestroy(s));
        ok(p.cuEventDestroy(e));
        let mut ptr = 0;
        assert_eq!(p.cuStreamQuery(s), invalid);
        assert_eq!(p.cuStreamSynchronize(s), invalid);
        assert_eq!(p.cuMemAllocAsync(&mut ptr, 16, s), invalid);
        assert_eq!(p.cuLaunchHostFunc(s, Some(common::count), std::ptr::null_mut()), invalid);
        assert_eq!(p.cuStreamDestroy(s), invalid);
        assert_eq!(p.cuEventQuery(e), invalid);
        assert_eq!(p.cuEventSynchronize(e), invalid);
        assert_eq!(p.cuEventRecord(e, std::ptr::null_mut()), invalid);
        assert_eq!(p.cuEventDestroy(e), invalid);
        ok(p.cuCtxDestroy(ctx));
    }
}
