//! The reporting channel: the one place every failure that is not returned goes through.
//!
//! [`report`] hands a [`Report`] to the reporter set with [`set_reporter`], or, by default,
//! writes one line to stderr and flushes it (to the `log` crate instead, with the `log`
//! feature). The reporter is called with no cudrv lock held: the lock that guards it is
//! released before the call. A reporter that panics is contained: the panic is caught and
//! the report goes to stderr instead; nothing unwinds into the caller or the driver.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::ThreadId;

use crate::error::CudaError;
use crate::sys::CUresult;
use crate::table::Call;

/// The argument a report names: for a `pw` call, the first handle, device pointer or
/// device passed by value (never an out-pointer), else `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Arg {
    /// The call takes no arguments.
    None,
    /// An argument that is not shown (a struct or a callback).
    Opaque,
    /// A pointer or handle, shown in hex.
    Pointer(usize),
    /// A device pointer or size, shown in hex.
    Hex(u64),
    /// An integer or enum value, shown in decimal.
    Int(i64),
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::None => Ok(()),
            Arg::Opaque => f.write_str(".."),
            Arg::Pointer(p) => write!(f, "{p:#x}"),
            Arg::Hex(v) => write!(f, "{v:#x}"),
            Arg::Int(v) => write!(f, "{v}"),
        }
    }
}

/// What went wrong in a reported call.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Problem {
    /// The driver returned a failure status.
    Status(CudaError),
    /// User code run by cudrv (a host function, a user object's destructor) panicked; the
    /// panic was caught and did not unwind into the driver.
    Panic(String),
    /// A setting (an environment variable, named by [`Report::call`]) cannot be used;
    /// cudrv goes on without it. The text says why.
    Setting(String),
}

/// One failure that could not be returned to the caller.
#[derive(Clone, Debug)]
pub struct Report {
    call: Cow<'static, str>,
    arg: Arg,
    problem: Problem,
    /// `NAME (description)` of a driver failure, looked up when the report was made.
    status: String,
    detail: Option<String>,
    /// Why the call was not made (an entry the driver does not resolve).
    not_called: Option<String>,
}

impl Report {
    /// A report of `error`, whose call's first argument was `arg`.
    pub fn new(error: CudaError, arg: Arg) -> Report {
        let status = error.status_text();
        let not_called = error.unresolved().map(str::to_string);
        Report {
            call: Cow::Borrowed(error.call().name()),
            arg,
            problem: Problem::Status(error),
            status,
            detail: None,
            not_called,
        }
    }

    /// A report of a caught panic in user code that `call` ran.
    pub fn panic(call: impl Into<Cow<'static, str>>, arg: Arg, message: impl Into<String>) -> Report {
        Report {
            call: call.into(),
            arg,
            problem: Problem::Panic(message.into()),
            status: String::new(),
            detail: None,
            not_called: None,
        }
    }

    /// A report that the setting `name` cannot be used, and why (`message`).
    pub fn setting(name: &'static str, message: impl Into<String>) -> Report {
        Report {
            call: Cow::Borrowed(name),
            arg: Arg::None,
            problem: Problem::Setting(message.into()),
            status: String::new(),
            detail: None,
            not_called: None,
        }
    }

    /// Adds an explanation shown after the status (e.g. why an entry is not resolved, or
    /// that a resource was leaked).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Report {
        self.detail = Some(detail.into());
        self
    }

    /// The failed call's name.
    pub fn call(&self) -> &str {
        &self.call
    }

    /// The argument the report names (usually the handle the call was about).
    pub fn arg(&self) -> Arg {
        self.arg
    }

    /// What went wrong.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The status the call returned, if it was a driver failure.
    pub fn code(&self) -> Option<CUresult> {
        self.error().map(CudaError::code)
    }

    /// The driver error, with its notes, if it was a driver failure.
    pub fn error(&self) -> Option<&CudaError> {
        match &self.problem {
            Problem::Status(e) => Some(e),
            Problem::Panic(_) | Problem::Setting(_) => None,
        }
    }

    /// The explanation, if any.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// Why nothing was called, when the report is of a call to an entry the driver does
    /// not resolve (`needs driver 13.1; this driver is 13.0`); its code is then
    /// `CUDA_ERROR_NOT_FOUND`, cudrv's answer, not the driver's.
    pub fn not_called(&self) -> Option<&str> {
        self.not_called.as_deref()
    }
}

impl fmt::Display for Report {
    /// `cuMemFree(0x7f3a00000000) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)`, or
    /// `cuLaunchHostFunc_v13010(0x0) not called: needs driver 13.1; this driver is 13.0
    /// (CUDA_ERROR_NOT_FOUND)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.problem, &self.not_called) {
            (Problem::Status(e), Some(why)) => {
                write!(f, "{}({}) not called: {why} ({})", self.call, self.arg, e.name())?
            }
            (Problem::Status(_), None) => write!(f, "{}({}) failed: {}", self.call, self.arg, self.status)?,
            (Problem::Panic(m), _) => write!(f, "{}({}) panicked: {m}", self.call, self.arg)?,
            (Problem::Setting(m), _) => write!(f, "{} not used: {m}", self.call)?,
        }
        if let Some(d) = &self.detail {
            write!(f, " [{d}]")?;
        }
        for note in self.error().map(CudaError::notes).unwrap_or_default() {
            write!(f, "; note: {note}")?;
        }
        Ok(())
    }
}

/// Reports that `call(arg)` returned `status`, unless the status is
/// `CUDA_ERROR_DEINITIALIZED` (the driver is shutting down: nothing is wrong with the
/// program). Never call it while holding a lock the reporter might need.
/// `not_called`: why no call was made (an entry the driver does not resolve).
/// `status_text`: the status named by the driver that returned it.
pub(crate) fn call_failed(
    call: Call,
    arg: Arg,
    status: CUresult,
    not_called: Option<String>,
    status_text: impl FnOnce() -> String,
) {
    if status == CUresult::CUDA_ERROR_DEINITIALIZED {
        return;
    }
    // The driver may not be 'static (a `pw` call on a loaded, not leaked, driver): name the
    // code through it now.
    let error = CudaError::new(call, status);
    let error = match not_called {
        Some(why) => error.with_unresolved(why),
        None => error,
    };
    let mut r = Report::new(error, arg);
    r.status = status_text();
    report(r);
}

/// Reports `error` (about `arg`), unless it is `CUDA_ERROR_DEINITIALIZED`. Never call it
/// while holding a lock the reporter might need.
pub(crate) fn error(error: CudaError, arg: Arg, detail: Option<String>) {
    if error.code() == CUresult::CUDA_ERROR_DEINITIALIZED {
        return;
    }
    let mut r = Report::new(error, arg);
    r.detail = detail;
    report(r);
}

/// The text of a caught panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

type Reporter = dyn Fn(&Report) + Send + Sync + 'static;

static REPORTER: RwLock<Option<Arc<Reporter>>> = RwLock::new(None);

/// Sends every later report to `reporter` instead of stderr.
///
/// What a reporter may do: it may run on any thread, including a driver thread, and may
/// call cudrv (even drop cudrv handles): it is never called while cudrv holds a lock. A
/// report that its own calls raise on the same thread (a failing `pw` call, a handle
/// whose release fails) is written to stderr instead of re-entering it. When it runs on a
/// driver thread (a report from a host function or a user object's destructor) the
/// driver forbids CUDA calls there, so it must not make any then. If it panics, the panic
/// is caught and the report is written to stderr.
pub fn set_reporter(reporter: impl Fn(&Report) + Send + Sync + 'static) {
    replace_reporter(Some(Arc::new(reporter)));
}

/// Restores the default reporter (stderr, or `log` with the `log` feature).
pub fn reset_reporter() {
    replace_reporter(None);
}

/// Swaps the reporter; the old one is dropped after the lock is released (its captures may
/// be cudrv handles whose drop reports).
fn replace_reporter(new: Option<Arc<Reporter>>) {
    let old = {
        let mut slot = REPORTER.write().unwrap_or_else(|e| e.into_inner());
        std::mem::replace(&mut *slot, new)
    };
    drop(old);
}

/// The threads now running the reporter: a report raised on one of them (the reporter
/// made a failing `pw` call, or dropped a handle whose release failed) goes to stderr
/// instead of re-entering the reporter.
static REPORTING: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

fn reporting() -> std::sync::MutexGuard<'static, Vec<ThreadId>> {
    REPORTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the calling thread as running the reporter until dropped (also on unwind).
struct InReporter(ThreadId);

impl InReporter {
    /// `None` if the thread is already running the reporter, or cannot be identified.
    fn enter() -> Option<InReporter> {
        let id = catch_unwind(|| std::thread::current().id()).ok()?;
        let mut now = reporting();
        if now.contains(&id) {
            return None;
        }
        now.push(id);
        Some(InReporter(id))
    }
}

impl Drop for InReporter {
    fn drop(&mut self) {
        reporting().retain(|t| *t != self.0);
    }
}

/// Sends `report` through the channel. Never panics, never holds a lock during the call.
/// A report raised inside the reporter, on the thread running it, is written to stderr
/// rather than given to the reporter again.
pub fn report(report: Report) {
    // The guard is a temporary of this statement: the lock is released before the call.
    let reporter = REPORTER.read().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(f) = reporter else {
        return default_sink(&report, None);
    };
    let Some(_inside) = InReporter::enter() else {
        return stderr_line(&report, Some("raised inside the reporter; written to stderr"));
    };
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(&report))) {
        // Dropping the payload could panic again: leak it.
        std::mem::forget(payload);
        default_sink(&report, Some("the reporter panicked; report written to stderr"));
    }
}

#[cfg(feature = "log")]
fn default_sink(report: &Report, why: Option<&str>) {
    match why {
        Some(why) => stderr_line(report, Some(why)),
        None => {
            // The logger is user code: a panic in it is contained, and the report goes to stderr.
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| log::error!(target: "cudrv", "{report}"))) {
                std::mem::forget(payload);
                stderr_line(report, Some("the logger panicked; report written to stderr"));
            }
        }
    }
}

#[cfg(not(feature = "log"))]
fn default_sink(report: &Report, why: Option<&str>) {
    stderr_line(report, why);
}

fn stderr_line(report: &Report, why: Option<&str>) {
    let mut err = std::io::stderr().lock();
    let _ = match why {
        Some(why) => writeln!(err, "cudrv: {report} ({why})"),
        None => writeln!(err, "cudrv: {report}"),
    };
    let _ = err.flush();
}
