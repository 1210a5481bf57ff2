//! Host functions (`cuLaunchHostFunc`, `cuStreamAddCallback`) and the driver calls made
//! from inside one.

use std::os::raw::c_void;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use super::{case, step, stream, with, Case, Env, Out};
use cudrv::sys::*;

/// What the host function saw: the status of its driver call (-1: it did not run).
static INNER: AtomicI32 = AtomicI32::new(-1);
/// The stream the host function synchronises, for [`sync_own_stream`].
static OWN_STREAM: AtomicPtr<CUstream_st> = AtomicPtr::new(std::ptr::null_mut());

fn record(status: CUresult) {
    INNER.store(status.0 as i32, Ordering::SeqCst);
}

/// The driver of this process (the one the case runs on).
fn p() -> Option<cudrv::P<'static>> {
    cudrv::driver().ok().map(|d| d.p())
}

unsafe extern "C" fn mark_ran(_: *mut c_void) {
    record(CUresult::CUDA_SUCCESS);
}

unsafe extern "C" fn get_current(_: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let mut c = std::ptr::null_mut();
        if let Some(p) = p() {
            // SAFETY: a valid out-pointer.
            record(unsafe { p.cuCtxGetCurrent(&mut c) });
        }
    });
}

unsafe extern "C" fn alloc_inside(_: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let mut d = 0;
        if let Some(p) = p() {
            // SAFETY: a valid out-pointer.
            record(unsafe { p.cuMemAlloc(&mut d, 256) });
        }
    });
}

unsafe extern "C" fn sync_own_stream(_: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        if let Some(p) = p() {
            // SAFETY: the stream the case launched this function on, alive until it returns.
            record(unsafe { p.cuStreamSynchronize(OWN_STREAM.load(Ordering::SeqCst)) });
        }
    });
}

unsafe extern "C" fn callback(_: CUstream, status: CUresult, _: *mut c_void) {
    record(status);
}

/// Launches `f` on a fresh stream, synchronises, and reports what the function recorded.
fn host_fn(e: &Env, f: unsafe extern "C" fn(*mut c_void)) -> Out {
    let s = with!(stream(e));
    OWN_STREAM.store(s, Ordering::SeqCst);
    // SAFETY: `f` takes no user data and lives for the process.
    let st = unsafe { e.p.cuLaunchHostFunc(s, Some(f), std::ptr::null_mut()) };
    // SAFETY: a live stream.
    let sync = unsafe { e.p.cuStreamSynchronize(s) };
    Out::of(st).eq("then_synchronize", sync).eq("inside", inner())
}

/// The recorded status, by name (`not_run` if the function did not run).
fn inner() -> String {
    match INNER.load(Ordering::SeqCst) {
        -1 => "not_run".into(),
        v => CUresult(v as u32).to_string(),
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("host_fn.runs", Ctx, |e| { host_fn(e, mark_ran) }),
        case!("host_fn.get_current_inside", Ctx, |e| { host_fn(e, get_current) }),
        case!("host_fn.alloc_inside", Ctx, |e| { host_fn(e, alloc_inside) }),
        case!("host_fn.synchronize_own_stream", Ctx, |e| { host_fn(e, sync_own_stream) }),
        case!("host_fn.legacy_stream", Ctx, |e| {
            let st = e.p.cuLaunchHostFunc(std::ptr::null_mut(), Some(mark_ran), std::ptr::null_mut());
            Out::of(st).eq("then_synchronize", e.p.cuCtxSynchronize()).eq("inside", inner())
        }),
        case!("host_fn.null_function", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuLaunchHostFunc(s, None, std::ptr::null_mut()))
        }),
        case!("host_fn.stream_callback", Ctx, |e| {
            let s = with!(stream(e));
            let st = e.p.cuStreamAddCallback(s, Some(callback), std::ptr::null_mut(), 0);
            step!(e.p.cuStreamSynchronize(s));
            Out::of(st).eq("callback_status", inner())
        }),
        case!("host_fn.stream_callback_bad_flags", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuStreamAddCallback(s, Some(callback), std::ptr::null_mut(), 1))
        }),
    ]
}
