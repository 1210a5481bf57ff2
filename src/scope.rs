//! Context-scoped operations: the one place where cudrv changes the calling thread's
//! current context.
//!
//! - [`with_context`] runs an operation with a context current: if it already is, it just
//!   runs; otherwise one `cuCtxSetCurrent` switches to it and another switches back.
//! - [`create_in_context`] does the same for an operation that creates something, and
//!   undoes the creation if only the switch back failed.
//! - [`cleanup_in_context`] is the form for `Drop`: it restores first, runs a hook (to
//!   release a lock), and reports last.
//! - [`set_current`] is a single `cuCtxSetCurrent`.
//!
//! Guarantees on error: an `Err` from `with_context`/`create_in_context` means nothing was
//! created and, unless the error says otherwise in a note, the calling thread's current
//! context is what it was. When the switch back fails, the operation's own error stays
//! primary and the restoration failure is a note that names the context now current.

use std::ffi::c_void;

use crate::call;
use crate::error::CudaError;
use crate::report::{self, Arg};
use crate::sys::{CUcontext, CUdevice, CUresult};
use crate::table::Call;
use crate::Driver;

/// The calling thread's current context, or null if none is current.
#[inline]
pub(crate) fn current(driver: &'static Driver) -> Result<CUcontext, CudaError> {
    // docs/driver-facts.md: with no current context cuCtxGetCurrent succeeds and does not
    // write its argument, so it must start out null.
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer.
    unsafe { driver.pc().cuCtxGetCurrent(&mut ctx) }?;
    Ok(ctx)
}

/// Makes `ctx` (or no context, for null) current on the calling thread with a single
/// `cuCtxSetCurrent`. On error the previous context is still current.
///
/// # Safety
/// `ctx` must be null or a live context of `driver` ([`crate::Context::set_current`] is
/// the safe form).
pub unsafe fn set_current(driver: &'static Driver, ctx: CUcontext) -> Result<(), CudaError> {
    switch_to(driver, ctx)
}

/// [`set_current`] for cudrv's own handles, whose contexts are live.
pub(crate) fn switch_to(driver: &'static Driver, ctx: CUcontext) -> Result<(), CudaError> {
    // SAFETY: cuCtxSetCurrent accepts any context handle or null; a stale one is refused.
    unsafe { driver.pc().cuCtxSetCurrent(ctx) }
}

/// Creates a context with `cuCtxCreate` (which makes it current by pushing it on the
/// calling thread's stack) and pops it again, so that the caller's context is unchanged.
/// On error nothing is created.
pub(crate) fn create_context(driver: &'static Driver, device: CUdevice, flags: u32) -> Result<CUcontext, CudaError> {
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: `ctx` is a valid out-pointer. The 3.2 ABI exists on every supported driver.
    unsafe { driver.pc().cuCtxCreate_v3020(&mut ctx, flags, device) }?;
    let mut popped: CUcontext = std::ptr::null_mut();
    // SAFETY: `popped` is a valid out-pointer.
    let status = unsafe { driver.p().cuCtxPopCurrent(&mut popped) };
    if status == CUresult::CUDA_SUCCESS && popped == ctx {
        return Ok(ctx);
    }
    let mut error = if status == CUresult::CUDA_SUCCESS {
        let mut e = driver
            .error(call::cuCtxPopCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT)
            .with_note(format!("popped {} instead of the new context", describe(Some(popped))));
        // Put back what was popped, so the caller's stack is as it was.
        // SAFETY: `popped` was on this thread's stack a moment ago.
        let pushed = unsafe { driver.p().cuCtxPushCurrent(popped) };
        if pushed != CUresult::CUDA_SUCCESS {
            e.add_note(format!("pushing {} back failed too", describe(Some(popped))));
        }
        e
    } else {
        driver.error(call::cuCtxPopCurrent, status)
    };
    // SAFETY: the context was created above and nothing else uses it.
    let undo = unsafe { driver.p().cuCtxDestroy(ctx) };
    if undo == CUresult::CUDA_SUCCESS {
        error.add_note(format!("the new context {} was destroyed again", describe(Some(ctx))));
    } else {
        error.add_note(format!("destroying the new context {} failed too; it is leaked", describe(Some(ctx))));
    }
    let now = describe(current(driver).ok());
    error.add_note(format!("context {now} is now current"));
    Err(error)
}

/// A switch made by [`enter`]: what to restore.
struct Entered {
    previous: CUcontext,
    switched: bool,
}

fn enter(driver: &'static Driver, ctx: CUcontext) -> Result<Entered, CudaError> {
    let previous = current(driver)?;
    if previous == ctx {
        return Ok(Entered { previous, switched: false });
    }
    switch_to(driver, ctx)?;
    Ok(Entered { previous, switched: true })
}

/// Switches back. On failure, the error's note names the context now current.
fn leave(driver: &'static Driver, entered: &Entered) -> Result<(), CudaError> {
    if !entered.switched {
        return Ok(());
    }
    switch_to(driver, entered.previous).map_err(|e| {
        let now = describe(current(driver).ok());
        let note = format!(
            "the calling thread's context ({}) could not be restored; context {now} is now current: \
             make the intended context current (cudrv::set_current) before more CUDA work on this thread",
            describe(Some(entered.previous)),
        );
        e.with_note(note)
    })
}

/// Runs `op` (user code, for `Context::run`) after `enter`; if it unwinds, switches back
/// before the panic goes on, so the thread is not left in the wrong context. (The switch's
/// own failure cannot be returned then, and is ignored.)
fn run_entered<T>(driver: &'static Driver, entered: &Entered, op: impl FnOnce() -> T) -> T {
    struct RestoreOnUnwind<'a> {
        driver: &'static Driver,
        entered: &'a Entered,
        armed: bool,
    }
    impl Drop for RestoreOnUnwind<'_> {
        fn drop(&mut self) {
            if self.armed && self.entered.switched {
                let _ = switch_to(self.driver, self.entered.previous);
            }
        }
    }
    let mut guard = RestoreOnUnwind { driver, entered, armed: true };
    let result = op();
    guard.armed = false;
    result
}

fn describe(ctx: Option<CUcontext>) -> String {
    match ctx {
        Some(c) if c.is_null() => "none".to_string(),
        Some(c) => format!("{:#x}", c as usize),
        None => "unknown".to_string(),
    }
}

fn restoration_note(restore: &CudaError) -> String {
    format!("then {restore}")
}

/// Runs `op` with `ctx` current on the calling thread, switching to it and back if needed
/// (also if `op` panics).
///
/// On error: if `op` failed, its error is returned (with the restoration failure as a
/// note if switching back failed too). If only switching back failed, that error is
/// returned with a note naming the context now current.
///
/// # Safety
/// `ctx` must be a live context of `driver` ([`crate::Context::run`] is the safe form).
#[inline]
pub unsafe fn with_context<T>(
    driver: &'static Driver,
    ctx: CUcontext,
    op: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    let previous = current(driver)?;
    if previous == ctx {
        // The usual case: the context is already current; nothing to switch back.
        return op();
    }
    switched(driver, ctx, previous, op)
}

/// [`with_context`] when `ctx` is not current (`previous` is), out of line.
#[inline(never)]
fn switched<T>(
    driver: &'static Driver,
    ctx: CUcontext,
    previous: CUcontext,
    op: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    switch_to(driver, ctx)?;
    let entered = Entered { previous, switched: true };
    let result = run_entered(driver, &entered, op);
    match (result, leave(driver, &entered)) {
        (result, Ok(())) => result,
        (Err(e), Err(restore)) => Err(e.with_note(restoration_note(&restore))),
        (Ok(_), Err(restore)) => Err(restore.with_note("the operation itself succeeded")),
    }
}

/// How to undo a creation: the call, its handle argument, and the call itself (which must
/// use `pc` or `p`, never `pw`).
pub(crate) struct Undo<A, R> {
    pub call: Call,
    pub arg: A,
    pub run: R,
}

/// [`with_context`] for cudrv's own handles, whose contexts are live.
pub(crate) fn run_in<T>(
    driver: &'static Driver,
    ctx: CUcontext,
    op: impl FnOnce() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    // SAFETY: cudrv's handles keep their context alive.
    unsafe { with_context(driver, ctx, op) }
}

/// The first driver version on which the calls [`run_named`] makes are known to give the
/// same answers without their context current: driver 580 (CUDA 13.0) on the H200, with no
/// context and with another context of the same device current (docs/driver-facts.md,
/// `scripts/probes/context_free_calls.c`).
pub(crate) const NAMED_CONTEXT_FROM: u32 = 13000;

/// Runs `op`, a call whose handles name the context `ctx()` (an explicit stream, a function,
/// an executable graph), without the `cuCtxGetCurrent` a switch costs where the driver is
/// known not to need one: on driver 13.0+ `op` runs as it is and, only if the driver
/// answers `CUDA_ERROR_INVALID_CONTEXT` (some of these calls need *a* context current),
/// again with `ctx` current. On older drivers `op` runs with `ctx` current ([`run_in`]).
/// The first attempt's refusal did nothing, so the policy holds: on error nothing was
/// done and the calling thread's context is as it was.
#[inline(always)]
pub(crate) fn run_named<T>(
    driver: &'static Driver,
    ctx: impl FnOnce() -> CUcontext,
    op: impl FnMut() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    if driver.version_code() < NAMED_CONTEXT_FROM {
        return run_in_out_of_line(driver, ctx(), op);
    }
    retry_in(driver, ctx, op)
}

/// Runs `op` as it is and, only if the driver answers `CUDA_ERROR_INVALID_CONTEXT`, again
/// with `ctx()` current ([`run_in`]): for calls that name their context and need at most
/// *a* context current. The refused attempt did nothing. The retry is out of line, so
/// that the usual path is the call and one compare.
#[inline(always)]
pub(crate) fn retry_in<T>(
    driver: &'static Driver,
    ctx: impl FnOnce() -> CUcontext,
    mut op: impl FnMut() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    match op() {
        // Rebuilt rather than moved: the success path copies no error-sized value.
        Ok(v) => Ok(v),
        Err(e) if e.code() == CUresult::CUDA_ERROR_INVALID_CONTEXT && e.unresolved().is_none() => {
            run_in_out_of_line(driver, ctx(), op)
        }
        Err(e) => Err(e),
    }
}

/// [`run_in`], out of line: the path of drivers before [`NAMED_CONTEXT_FROM`] and of a
/// retry after a refusal, kept out of the small path inlined where these calls are made.
#[inline(never)]
fn run_in_out_of_line<T>(
    driver: &'static Driver,
    ctx: CUcontext,
    op: impl FnMut() -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    run_in(driver, ctx, op)
}

/// Runs `create` with `ctx` current. If it succeeded and only the switch back failed, the
/// creation is undone and the restoration error is returned with a note saying so; if the
/// undo needs `ctx` and `ctx` is no longer current, what was created is leaked and the
/// note says that instead.
pub(crate) fn create_in_context<T, A, R>(
    driver: &'static Driver,
    ctx: CUcontext,
    create: impl FnOnce() -> Result<T, CudaError>,
    undo: Undo<A, R>,
) -> Result<T, CudaError>
where
    A: FnOnce(&T) -> Arg,
    R: FnOnce(&T) -> Result<(), CudaError>,
{
    let entered = enter(driver, ctx)?;
    if !entered.switched {
        // The usual case: the context is already current; nothing to switch back or undo.
        return create();
    }
    let created = run_entered(driver, &entered, create);
    let (value, mut error) = match (created, leave(driver, &entered)) {
        (created, Ok(())) => return created,
        (Err(e), Err(restore)) => return Err(e.with_note(restoration_note(&restore))),
        (Ok(value), Err(restore)) => (value, restore),
    };
    let (call, arg) = (undo.call, (undo.arg)(&value));
    if current(driver).ok() == Some(ctx) {
        if let Err(failed) = (undo.run)(&value) {
            error.add_note(format!(
                "undoing the creation failed ({call}({arg}): {}); it is leaked",
                failed.status_text()
            ));
        } else {
            error.add_note(format!("what was created was destroyed again ({call}({arg}))"));
        }
    } else {
        error.add_note(format!(
            "{call}({arg}) was not called because context {} is no longer current; what was created is leaked",
            describe(Some(ctx))
        ));
    }
    Err(error)
}

/// Releases a resource from `Drop`: switches to `ctx` if needed (`None`: no context is
/// needed), runs `cleanup` (which must use `pc` or `p`, never `pw`), switches back, then
/// calls `after` (release any lock here: the reports that follow run user code), then
/// reports a failed cleanup or restoration through the reporting channel, naming the
/// failed call and its handle `arg`.
///
/// If `ctx` cannot be made current, `cleanup` is not run: the resource is leaked rather
/// than destroyed from the wrong context, and the leak is reported.
/// `CUDA_ERROR_DEINITIALIZED` (process shutdown) is never reported.
pub(crate) fn cleanup_in_context(
    driver: &'static Driver,
    ctx: Option<CUcontext>,
    call: Call,
    arg: Arg,
    cleanup: impl FnOnce() -> Result<(), CudaError>,
    after: impl FnOnce(),
) {
    let one_step = || cleanup().map_err(|e| (e, arg));
    cleanup_steps_in_context(driver, ctx, call, arg, one_step, after);
}

/// [`cleanup_in_context`] for a cleanup of several driver calls: `cleanup` returns the
/// first that failed with the handle it was given, and the report names that call and
/// handle. `call(arg)` names the release in the leak report.
pub(crate) fn cleanup_steps_in_context(
    driver: &'static Driver,
    ctx: Option<CUcontext>,
    call: Call,
    arg: Arg,
    cleanup: impl FnOnce() -> Result<(), (CudaError, Arg)>,
    after: impl FnOnce(),
) {
    let entered = match ctx.map(|c| enter(driver, c)).transpose() {
        Ok(entered) => entered,
        Err(e) => {
            after();
            let detail = format!("{call}({arg}) was not called: its context could not be made current; leaked");
            report::error(e, context_arg(ctx), Some(detail));
            return;
        }
    };
    let outcome = cleanup();
    let restored = entered.as_ref().map_or(Ok(()), |e| leave(driver, e));
    after();
    if let Err((e, failed_arg)) = outcome {
        report::error(e, failed_arg, None);
    }
    if let Err(e) = restored {
        report::error(e, context_arg(entered.map(|e| e.previous)), Some(format!("after {call}({arg})")));
    }
}

fn context_arg(ctx: Option<CUcontext>) -> Arg {
    Arg::Pointer(ctx.map_or(0, |c| c.cast::<c_void>() as usize))
}
