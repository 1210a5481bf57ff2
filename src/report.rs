//! The reporting channel: the one place every failure that is not returned goes through.
//!
//! [`report`] hands a [`Report`] to the reporter set with [`set_reporter`], or, by default,
//! writes one line to stderr and flushes it (to the `log` crate instead, with the `log`
//! feature). The reporter is called with no cudrv lock held: the lock that guards it is
//! released before the call. A reporter that panics is contained: the panic is caught and
//! the report goes to stderr instead; nothing unwinds into the caller or the driver.

use std::fmt;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, RwLock};

use crate::error::CudaError;
use crate::sys::CUresult;

/// A call's first argument, as a report shows it (usually the handle the call was about).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// One failure that could not be returned to the caller.
#[derive(Clone, Debug)]
pub struct Report {
    error: CudaError,
    arg: Arg,
    detail: Option<String>,
}

impl Report {
    /// A report of `error`, whose call's first argument was `arg`.
    pub fn new(error: CudaError, arg: Arg) -> Report {
        Report {
            error,
            arg,
            detail: None,
        }
    }

    /// Adds an explanation shown after the status (e.g. why an entry is not resolved).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Report {
        self.detail = Some(detail.into());
        self
    }

    /// The failed call's name.
    pub fn call(&self) -> &str {
        self.error.call()
    }

    /// The call's first argument.
    pub fn arg(&self) -> Arg {
        self.arg
    }

    /// The status the call returned.
    pub fn code(&self) -> CUresult {
        self.error.code()
    }

    /// The full error, with its notes.
    pub fn error(&self) -> &CudaError {
        &self.error
    }

    /// The explanation, if any.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }
}

impl fmt::Display for Report {
    /// `cuMemFree(0x7f3a00000000) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}({}) failed: {}",
            self.call(),
            self.arg,
            self.error.status_text()
        )?;
        if let Some(d) = &self.detail {
            write!(f, " [{d}]")?;
        }
        for note in self.error.notes() {
            write!(f, "; note: {note}")?;
        }
        Ok(())
    }
}

type Reporter = dyn Fn(&Report) + Send + Sync + 'static;

static REPORTER: RwLock<Option<Arc<Reporter>>> = RwLock::new(None);

/// Sends every later report to `reporter` instead of stderr.
///
/// The reporter may run on any thread, including a driver thread, and may call cudrv
/// (even drop cudrv handles): it is never called while cudrv holds a lock. If it panics,
/// the panic is caught and the report is written to stderr.
pub fn set_reporter(reporter: impl Fn(&Report) + Send + Sync + 'static) {
    let mut slot = REPORTER.write().unwrap_or_else(|e| e.into_inner());
    *slot = Some(Arc::new(reporter));
}

/// Restores the default reporter (stderr, or `log` with the `log` feature).
pub fn reset_reporter() {
    let mut slot = REPORTER.write().unwrap_or_else(|e| e.into_inner());
    *slot = None;
}

/// Sends `report` through the channel. Never panics, never holds a lock during the call.
pub fn report(report: Report) {
    // The guard is a temporary of this statement: the lock is released before the call.
    let reporter = REPORTER.read().unwrap_or_else(|e| e.into_inner()).clone();
    match reporter {
        Some(f) => {
            if catch_unwind(AssertUnwindSafe(|| f(&report))).is_err() {
                default_sink(
                    &report,
                    Some("the reporter panicked; report written to stderr"),
                );
            }
        }
        None => default_sink(&report, None),
    }
}

#[cfg(feature = "log")]
fn default_sink(report: &Report, why: Option<&str>) {
    match why {
        Some(why) => stderr_line(report, Some(why)),
        None => log::error!(target: "cudrv", "{report}"),
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
