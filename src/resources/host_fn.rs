//! Running user code from the driver: host functions (`cuLaunchHostFunc`), graph host
//! nodes and user-object destructors all go through a trampoline that catches a panic and
//! reports it, so that nothing ever unwinds into the driver.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::CudaError;
use crate::report::{self, Arg, Report};
use crate::resources::stream::Stream;
use crate::sys::CUresult;

/// Runs `f`; a panic is caught and reported as `call(arg) panicked: ...`. The panic
/// payload is leaked rather than dropped, since dropping it could panic again.
pub(crate) fn run_user_code(call: &'static str, arg: Arg, f: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        let message = report::panic_message(payload.as_ref());
        std::mem::forget(payload);
        report::report(Report::panic(call, arg, message));
    }
}

type HostFn = Box<dyn FnOnce() + Send + 'static>;

/// `cuLaunchHostFunc`'s callback: takes back the boxed closure and runs it once.
unsafe extern "C" fn host_fn_trampoline(data: *mut c_void) {
    let arg = Arg::Pointer(data as usize);
    run_user_code("cuLaunchHostFunc callback", arg, || {
        // SAFETY: `data` is the `Box<HostFn>` leaked by `launch`, handed to the driver
        // once; the driver calls this exactly once with it.
        let f = unsafe { Box::from_raw(data.cast::<HostFn>()) };
        f();
    });
}

/// Enqueues `f` on `stream` with `cuLaunchHostFunc`. It runs on a driver thread once the
/// work before it is done; it must not call CUDA (a driver rule, which includes dropping
/// the last clone of a cudrv handle), and a panic in it is caught and reported. If the
/// driver did not accept it, `f` is dropped without running; if it did and only restoring
/// the caller's context failed, the error says so in a note and `f` will run.
pub(crate) fn launch(stream: &Stream, f: impl FnOnce() + Send + 'static) -> Result<(), CudaError> {
    let driver = stream.context().driver();
    let data = Box::into_raw(Box::new(Box::new(f) as HostFn)).cast::<c_void>();
    let raw = stream.as_raw();
    let mut accepted = false;
    let result = stream.context().run(|| {
        // SAFETY: the stream is live (we hold it); the trampoline matches CUhostFn.
        let status = unsafe { driver.p().cuLaunchHostFunc(raw, Some(host_fn_trampoline), data) };
        accepted = status == CUresult::CUDA_SUCCESS;
        CudaError::check(driver, "cuLaunchHostFunc", status)
    });
    // Once the driver accepted `data` it owns it (the trampoline frees it), even if
    // restoring the caller's context failed afterwards.
    if !accepted {
        // SAFETY: the driver did not take `data`; it is still ours, from Box::into_raw above.
        drop(unsafe { Box::from_raw(data.cast::<HostFn>()) });
        return result;
    }
    result.map_err(|e| e.with_note("the host function was queued and will run"))
}
