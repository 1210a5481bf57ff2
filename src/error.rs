//! Errors: [`CudaError`] (a driver call failed), [`InvalidArgument`] (cudrv refused an
//! argument before calling the driver) and [`Error`], the one error a program or wrapper on
//! cudrv needs.

use std::borrow::Cow;
use std::ffi::{c_char, CStr};
use std::fmt;

use crate::availability::Availability;
use crate::loader::LoadError;
use crate::sys::{CUresult, PFN_cuGetErrorName_v6000, PFN_cuGetErrorString_v6000};
use crate::table::Call;
use crate::version::{self, RequireError};

/// A driver call that returned something other than `CUDA_SUCCESS`.
///
/// Small (24 bytes) and cheap: building one makes no driver call and, without notes, no
/// allocation. The raw code is always kept; its name and description are looked up when
/// they are shown, from the driver that returned it (`cuGetErrorName`/`cuGetErrorString`)
/// where the error knows it, else from the pinned header's names. `notes` hold secondary
/// failures that happened while this error was being returned.
#[derive(Clone)]
pub struct CudaError {
    code: CUresult,
    call: Call,
    names: Option<&'static ErrorNames>,
    extra: Option<Box<Extra>>,
}

/// A driver's own names for its codes (`cuGetErrorName`, `cuGetErrorString`, as resolved
/// when it was loaded; `None` where it has none). An error from a driver keeps a reference
/// to its driver's, so it names its code as that driver does without knowing the driver.
pub(crate) struct ErrorNames {
    pub(crate) name: PFN_cuGetErrorName_v6000,
    pub(crate) string: PFN_cuGetErrorString_v6000,
}

impl ErrorNames {
    /// No names: the header's are used.
    pub(crate) const NONE: ErrorNames = ErrorNames { name: None, string: None };
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Extra {
    notes: Vec<String>,
    source: Option<CudaError>,
    /// Why the call was not made: the entry is not resolved (see [`unresolved_reason`]).
    unresolved: Option<String>,
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
    /// The error for `call` returning `code`, named from the pinned header when shown. The
    /// checked wrappers ([`crate::pc`]) build it with their driver, which names it instead.
    pub fn new(call: Call, code: CUresult) -> CudaError {
        CudaError { code, call, names: None, extra: None }
    }

    /// The error for `call` returning `code`, named through a driver's `names` when shown
    /// (`CudaError::with_driver`).
    pub(crate) fn with_names(names: &'static ErrorNames, call: Call, code: CUresult) -> CudaError {
        CudaError { code, call, names: Some(names), extra: None }
    }

    /// The raw `CUresult`.
    pub fn code(&self) -> CUresult {
        self.code
    }

    /// The call that failed.
    pub fn call(&self) -> Call {
        self.call
    }

    /// `CUDA_ERROR_INVALID_VALUE`, or `unknown CUresult N`: the driver's name for the code,
    /// else the header's.
    pub fn name(&self) -> Cow<'static, str> {
        code_name(self.names, self.code)
    }

    /// The driver's description, e.g. `invalid argument`, or a fallback that says there is
    /// none (no driver known to the error, or a code the driver does not describe).
    pub fn description(&self) -> &'static str {
        code_description(self.names, self.code)
    }

    /// Secondary failures attached while this error was being returned.
    pub fn notes(&self) -> &[String] {
        self.extra.as_deref().map_or(&[], |e| &e.notes)
    }

    /// Attaches a secondary failure; this error stays the primary one.
    pub fn with_note(mut self, note: impl Into<String>) -> CudaError {
        self.add_note(note);
        self
    }

    /// Attaches a secondary failure in place.
    pub fn add_note(&mut self, note: impl Into<String>) {
        self.extra.get_or_insert_with(Box::default).notes.push(note.into());
    }

    /// Why nothing was called, when the error is a call to an entry this driver does not
    /// resolve (`needs driver 13.1; this driver is 13.0`): the code is then
    /// `CUDA_ERROR_NOT_FOUND`, made by cudrv, not returned by the driver.
    pub fn unresolved(&self) -> Option<&str> {
        self.extra.as_deref()?.unresolved.as_deref()
    }

    /// Marks the error as a call that was not made, and why.
    pub(crate) fn with_unresolved(mut self, reason: String) -> CudaError {
        self.extra.get_or_insert_with(Box::default).unresolved = Some(reason);
        self
    }

    /// Records the error that caused this one (returned by [`std::error::Error::source`]).
    pub fn with_source(mut self, cause: CudaError) -> CudaError {
        self.extra.get_or_insert_with(Box::default).source = Some(cause);
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
        status_text(self.names, self.code)
    }
}

impl PartialEq for CudaError {
    /// Same code, call, notes and source (the driver that names it is not compared).
    fn eq(&self, other: &CudaError) -> bool {
        (self.code, self.call) == (other.code, other.call) && self.extra == other.extra
    }
}

impl Eq for CudaError {}

impl fmt::Debug for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("CudaError");
        s.field("call", &self.call).field("code", &self.code.0).field("name", &self.name());
        if let Some(extra) = &self.extra {
            s.field("notes", &extra.notes).field("source", &extra.source).field("unresolved", &extra.unresolved);
        }
        s.finish()
    }
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unresolved() {
            // The reason leads: nothing was called, the code is only cudrv's answer.
            Some(why) => write!(f, "{} {why} (not called: {})", self.call, self.name())?,
            None => write!(f, "{} failed: {} ({})", self.call, self.name(), self.description())?,
        }
        for note in self.notes() {
            write!(f, "; note: {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CudaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.extra.as_ref()?.source.as_ref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Why a call to an entry in state `availability` was not made, for a driver that behaves
/// as `version` (capped from `driver_version`): `needs driver 13.1; this driver is 13.0`.
/// The one place this text is made: [`CudaError`]'s and a `pw` report's both use it.
pub(crate) fn unresolved_reason(availability: &Availability, version: u32, driver_version: u32) -> String {
    match availability {
        Availability::NeedsDriver { .. } if version < driver_version => format!(
            "{availability}; this driver is {}, capped at {}",
            version::display(driver_version),
            version::display(version)
        ),
        Availability::NeedsDriver { .. } => format!("{availability}; this driver is {}", version::display(version)),
        other => other.to_string(),
    }
}

/// The name of `code`: the driver's, else the header's, else `unknown CUresult N`.
pub(crate) fn code_name(names: Option<&ErrorNames>, code: CUresult) -> Cow<'static, str> {
    names
        .and_then(|n| n.name)
        .and_then(|get| {
            driver_string(|s| {
                // SAFETY: `get` is the driver's `cuGetErrorName`; `s` is a valid out-pointer;
                // the driver writes a static string or nothing.
                unsafe { get(code, s) }
            })
        })
        .or_else(|| crate::table::header_error_name(code.0))
        .map_or_else(|| Cow::Owned(format!("unknown CUresult {}", code.0)), Cow::Borrowed)
}

/// The driver's description of `code`, else a fallback that says there is none.
pub(crate) fn code_description(names: Option<&ErrorNames>, code: CUresult) -> &'static str {
    names
        .and_then(|n| n.string)
        .and_then(|get| {
            driver_string(|s| {
                // SAFETY: `get` is the driver's `cuGetErrorString`; `s` is a valid out-pointer;
                // the driver writes a static string or nothing.
                unsafe { get(code, s) }
            })
        })
        .unwrap_or("the driver has no description for this code")
}

/// `NAME (description)`.
pub(crate) fn status_text(names: Option<&ErrorNames>, code: CUresult) -> String {
    format!("{} ({})", code_name(names, code), code_description(names, code))
}

/// Calls a `cuGetError*` function and returns the string it gives, if any.
fn driver_string(get: impl FnOnce(*mut *const c_char) -> CUresult) -> Option<&'static str> {
    let mut s: *const c_char = std::ptr::null();
    if get(&mut s) != CUresult::CUDA_SUCCESS || s.is_null() {
        return None;
    }
    // SAFETY: on success the driver sets `s` to a NUL-terminated string it owns for the
    // life of the process (the driver library is never unloaded).
    unsafe { CStr::from_ptr(s) }.to_str().ok()
}

impl fmt::Display for CUresult {
    /// The header's name for the code (`CUDA_ERROR_INVALID_VALUE`), or `CUresult(N)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::table::header_error_name(self.0) {
            Some(name) => f.write_str(name),
            None => write!(f, "CUresult({})", self.0),
        }
    }
}

/// An argument cudrv refused before calling the driver (a length that does not fit, a
/// name with a NUL byte, a launch with the wrong number of arguments): no driver call was
/// made and nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidArgument(Box<Refusal>);

/// What an [`InvalidArgument`] says, boxed: the error is one pointer, so that a result of
/// a fast check (`Result<DeviceView<T>, InvalidArgument>`) stays small.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Refusal {
    what: &'static str,
    why: String,
}

impl InvalidArgument {
    /// `what` (the operation) refused because of `why`.
    #[cold]
    pub fn new(what: &'static str, why: impl Into<String>) -> InvalidArgument {
        InvalidArgument(Box::new(Refusal { what, why: why.into() }))
    }

    /// The operation that refused it, e.g. `DeviceBuffer::copy_from`.
    pub fn what(&self) -> &'static str {
        self.0.what
    }

    /// Why.
    pub fn why(&self) -> &str {
        &self.0.why
    }
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: invalid argument: {} (no driver call was made)", self.0.what, self.0.why)
    }
}

impl std::error::Error for InvalidArgument {}

/// Everything that can go wrong in cudrv, in one type: `?` turns each part into it, so a
/// program or a wrapper needs no error enum of its own.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No driver could be loaded.
    #[error(transparent)]
    Load(Box<LoadError>),
    /// The driver is older than the program requires.
    #[error(transparent)]
    Require(Box<RequireError>),
    /// A driver call failed.
    #[error(transparent)]
    Driver(CudaError),
    /// cudrv refused an argument before calling the driver.
    #[error(transparent)]
    InvalidArgument(Box<InvalidArgument>),
}

impl fmt::Debug for Error {
    /// The message, as `Display` gives it, in the variant's name: what a `main` that
    /// returns `Result<(), cudrv::Error>` prints. `{:#?}` gives the fields.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let variant = match self {
            Error::Load(_) => "Load",
            Error::Require(_) => "Require",
            Error::Driver(_) => "Driver",
            Error::InvalidArgument(_) => "InvalidArgument",
        };
        if f.alternate() {
            return match self {
                Error::Load(e) => f.debug_tuple(variant).field(e).finish(),
                Error::Require(e) => f.debug_tuple(variant).field(e).finish(),
                Error::Driver(e) => f.debug_tuple(variant).field(e).finish(),
                Error::InvalidArgument(e) => f.debug_tuple(variant).field(e).finish(),
            };
        }
        write!(f, "{variant}({self})")
    }
}

impl Error {
    /// The driver error, if a driver call failed.
    pub fn as_driver(&self) -> Option<&CudaError> {
        match self {
            Error::Driver(e) => Some(e),
            _ => None,
        }
    }

    /// The failed call's status, if a driver call failed.
    pub fn code(&self) -> Option<CUresult> {
        self.as_driver().map(CudaError::code)
    }

    /// Whether a driver call failed with a sticky error ([`CudaError::is_sticky`]): the
    /// context is unusable from now on. False for every other kind of error.
    pub fn is_sticky(&self) -> bool {
        self.as_driver().is_some_and(CudaError::is_sticky)
    }

    /// Whether a driver call was made and answered `code` (an entry point the driver
    /// lacks is not an answer).
    pub(crate) fn answered(&self, code: CUresult) -> bool {
        self.as_driver().is_some_and(|d| d.code() == code && d.unresolved().is_none())
    }

    /// The driver call that failed, if a driver call failed ([`CudaError::call`]).
    pub fn call(&self) -> Option<Call> {
        self.as_driver().map(CudaError::call)
    }

    /// A failed driver call's notes ([`CudaError::notes`]); none for every other error.
    pub fn notes(&self) -> &[String] {
        self.as_driver().map_or(&[], CudaError::notes)
    }

    /// For a driver error that is the entry point's absence, what the driver lacks
    /// ([`CudaError::unresolved`]); `None` otherwise.
    pub fn unresolved(&self) -> Option<&str> {
        self.as_driver().and_then(CudaError::unresolved)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Load(Box::new(e))
    }
}

impl From<RequireError> for Error {
    fn from(e: RequireError) -> Error {
        Error::Require(Box::new(e))
    }
}

impl From<CudaError> for Error {
    fn from(e: CudaError) -> Error {
        Error::Driver(e)
    }
}

impl From<InvalidArgument> for Error {
    fn from(e: InvalidArgument) -> Error {
        Error::InvalidArgument(Box::new(e))
    }
}

/// `Result` with cudrv's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_small() {
        assert!(std::mem::size_of::<CudaError>() <= 24, "{}", std::mem::size_of::<CudaError>());
        assert!(std::mem::size_of::<Error>() <= 32, "{}", std::mem::size_of::<Error>());
        // One pointer: a view's `Result<DeviceView<T>, InvalidArgument>` stays three words.
        assert_eq!(std::mem::size_of::<InvalidArgument>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn header_names_without_a_driver() {
        let e = CudaError::new(crate::call::cuMemAlloc, CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(e.name(), "CUDA_ERROR_OUT_OF_MEMORY");
        assert_eq!(
            e.to_string(),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (the driver has no description for this code)"
        );
        assert_eq!(CudaError::new(crate::call::cuMemAlloc, CUresult(12345)).name(), "unknown CUresult 12345");
        assert_eq!(CUresult::CUDA_ERROR_INVALID_VALUE.to_string(), "CUDA_ERROR_INVALID_VALUE");
        assert_eq!(CUresult(12345).to_string(), "CUresult(12345)");
    }

    #[test]
    fn a_main_returning_error_prints_the_message() {
        let e = Error::from(CudaError::new(crate::call::cuMemAlloc, CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        let shown = format!("{e:?}");
        assert!(shown.starts_with("Driver(cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"), "{shown}");
        let e = Error::from(InvalidArgument::new("DeviceBuffer::copy_from_host", "9 values do not fit"));
        assert_eq!(
            format!("{e:?}"),
            "InvalidArgument(DeviceBuffer::copy_from_host: invalid argument: 9 values do not fit (no driver call was made))"
        );
    }

    #[test]
    fn notes_and_source() {
        let cause = CudaError::new(crate::call::cuCtxSetCurrent, CUresult::CUDA_ERROR_INVALID_CONTEXT);
        let e = CudaError::new(crate::call::cuMemFree, CUresult::CUDA_ERROR_INVALID_VALUE)
            .with_note("one")
            .with_source(cause.clone());
        assert_eq!(e.notes(), ["one".to_string()]);
        assert!(e.to_string().ends_with("; note: one"), "{e}");
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        assert_eq!(source, Some(cause.to_string()));
    }
}
