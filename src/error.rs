//! `CudaError`: a failed driver call, with the driver's name and description for its code.

use std::borrow::Cow;
use std::ffi::{c_char, CStr};
use std::fmt;

use crate::sys::CUresult;
use crate::Driver;

/// A driver call that returned something other than `CUDA_SUCCESS`.
///
/// The raw code is always kept, even when neither the driver nor the header knows it. The
/// name and description come from the driver's `cuGetErrorName`/`cuGetErrorString`, else
/// from the pinned header's enum, else a fallback that says the code is unknown. `notes`
/// hold secondary failures that happened while this error was being returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaError {
    code: CUresult,
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    call: Cow<'static, str>,
    notes: Vec<String>,
    source: Option<Box<CudaError>>,
}

/// Codes after which the driver documents that "any further CUDA work will return the
/// same error" and the process must be relaunched to use CUDA again (cuda.h).
const STICKY: [u32; 12] = [
    226, // CUDA_ERROR_CONTAINED
    700, // CUDA_ERROR_ILLEGAL_ADDRESS
    702, // CUDA_ERROR_LAUNCH_TIMEOUT
    714, // CUDA_ERROR_HARDWARE_STACK_ERROR
    715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
    716, // CUDA_ERROR_MISALIGNED_ADDRESS
    717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
    718, // CUDA_ERROR_INVALID_PC
    719, // CUDA_ERROR_LAUNCH_FAILED
    721, // CUDA_ERROR_TENSOR_MEMORY_LEAK
    810, // CUDA_ERROR_MPS_CLIENT_TERMINATED
    911, // CUDA_ERROR_EXTERNAL_DEVICE (asynchronous form)
];

impl CudaError {
    /// The error for `call` returning `code`, named through `driver`.
    pub fn new(driver: &Driver, call: impl Into<Cow<'static, str>>, code: CUresult) -> CudaError {
        let name = driver_string(code, |c, s| {
            // SAFETY: `s` is a valid out-pointer; the driver writes a static string or nothing.
            unsafe { driver.p().cuGetErrorName(c, s) }
        })
        .map(Cow::Owned)
        .or_else(|| crate::table::header_error_name(code.0).map(Cow::Borrowed))
        .unwrap_or_else(|| Cow::Owned(format!("unknown CUresult {}", code.0)));
        let description = driver_string(code, |c, s| {
            // SAFETY: as above.
            unsafe { driver.p().cuGetErrorString(c, s) }
        })
        .map(Cow::Owned)
        .unwrap_or(Cow::Borrowed("the driver has no description for this code"));
        CudaError { code, name, description, call: call.into(), notes: Vec::new(), source: None }
    }

    /// `Ok(())` for `CUDA_SUCCESS`, else the error for `call` returning `status`.
    pub fn check(driver: &Driver, call: &'static str, status: CUresult) -> Result<(), CudaError> {
        if status == CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(CudaError::new(driver, call, status))
        }
    }

    /// The raw `CUresult`.
    pub fn code(&self) -> CUresult {
        self.code
    }

    /// `CUDA_ERROR_INVALID_VALUE`, or `unknown CUresult N`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The driver's description, e.g. `invalid argument`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The call that failed, e.g. `cuMemFree`.
    pub fn call(&self) -> &str {
        &self.call
    }

    /// Secondary failures attached while this error was being returned.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Attaches a secondary failure; this error stays the primary one.
    pub fn with_note(mut self, note: impl Into<String>) -> CudaError {
        self.notes.push(note.into());
        self
    }

    /// Attaches a secondary failure in place.
    pub fn add_note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Records the error that caused this one (returned by [`std::error::Error::source`]).
    pub fn with_source(mut self, cause: CudaError) -> CudaError {
        self.source = Some(Box::new(cause));
        self
    }

    /// Whether the code leaves the process's CUDA state unusable: illegal address, launch
    /// failure, hardware stack error, illegal instruction, misaligned address, invalid
    /// address space, invalid PC, launch timeout, contained error, tensor memory leak,
    /// MPS client terminated, external device error. After one, every later CUDA call
    /// returns the same error; release what you can (cudrv's handles report, never
    /// panic) and restart the process to use CUDA again.
    pub fn is_sticky(&self) -> bool {
        STICKY.contains(&self.code.0)
    }

    /// `CUDA_ERROR_INVALID_VALUE (invalid argument)`: the code's name and description.
    pub fn status_text(&self) -> String {
        format!("{} ({})", self.name, self.description)
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.call, self.status_text())?;
        for note in &self.notes {
            write!(f, "; note: {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CudaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Calls a `cuGetError*` function and copies the string it returns, if any.
fn driver_string(code: CUresult, get: impl Fn(CUresult, *mut *const c_char) -> CUresult) -> Option<String> {
    let mut s: *const c_char = std::ptr::null();
    if get(code, &mut s) != CUresult::CUDA_SUCCESS || s.is_null() {
        return None;
    }
    // SAFETY: on success the driver sets `s` to a NUL-terminated string it owns for the
    // life of the process.
    Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}
