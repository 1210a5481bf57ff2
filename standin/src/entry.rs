//! What every generated entry point does first ([`enter`], [`unsupported`]; `table.rs`
//! picks a [`Gate`] per implemented variant), `cuInit`, and the small helpers the
//! implementations share: the initialised and shut-down flags, out-pointer writes and lock
//! acquisition.

use std::ffi::c_uint;
use std::sync::atomic::Ordering;

use cudrv::sys::CUresult;
use cudrv::Call;

use crate::faults;
use crate::world::World;

/// Whether `cuInit` has succeeded in `w`.
pub(crate) fn initialized(w: &World) -> bool {
    w.initialized.load(Ordering::Acquire)
}

/// Whether [`crate::shutdown`] is in effect in `w`.
pub(crate) fn shut_down(w: &World) -> bool {
    w.shut_down.load(Ordering::Acquire)
}

/// The checks the generated prologue of an implemented entry makes before calling the
/// implementation (`table.rs` declares one per variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gate {
    /// An injected fault, then CUDA_ERROR_DEINITIALIZED after [`crate::shutdown`], then
    /// CUDA_ERROR_NOT_PERMITTED inside a program's callback (`callback.rs`), then
    /// CUDA_ERROR_NOT_INITIALIZED before `cuInit`: every entry but those below.
    Initialized,
    /// The same without the `cuInit` check: `cuInit` itself.
    BeforeInit,
    /// An injected fault only: the entry answers before `cuInit`, inside callbacks and
    /// after shutdown (`cuDriverGetVersion`, `cuGetProcAddress`, `cuGetErrorName`,
    /// `cuGetErrorString`, as on a real driver).
    Always,
}

/// An implementation of a variant, and the prologue its entry runs first.
#[derive(Clone, Copy)]
pub(crate) struct Imp<F> {
    /// The implementation: a plain Rust function with the variant's C signature.
    pub(crate) f: F,
    /// The checks made before `f` runs.
    pub(crate) gate: Gate,
}

/// `f` behind the usual prologue ([`Gate::Initialized`]).
pub(crate) const fn imp<F>(f: F) -> Option<Imp<F>> {
    Some(Imp { f, gate: Gate::Initialized })
}

/// `f` behind [`Gate::BeforeInit`].
pub(crate) const fn before_init<F>(f: F) -> Option<Imp<F>> {
    Some(Imp { f, gate: Gate::BeforeInit })
}

/// `f` behind [`Gate::Always`].
pub(crate) const fn always<F>(f: F) -> Option<Imp<F>> {
    Some(Imp { f, gate: Gate::Always })
}

/// The prologue of an implemented entry point (`call` is its variant): `Err(status)` when
/// the entry must answer `status` without running its implementation (see [`Gate`]).
#[inline(always)]
pub(crate) fn enter(w: &World, call: Call, gate: Gate) -> Result<(), CUresult> {
    if let Some(s) = faults::take(w, call) {
        return Err(s);
    }
    if gate == Gate::Always {
        return Ok(());
    }
    if shut_down(w) {
        return Err(CUresult::CUDA_ERROR_DEINITIALIZED);
    }
    crate::run::callback::permitted()?;
    if gate == Gate::Initialized && !initialized(w) {
        return Err(CUresult::CUDA_ERROR_NOT_INITIALIZED);
    }
    Ok(())
}

/// The answer of an entry point the stand-in does not implement (`call` is its variant):
/// an injected fault, else CUDA_ERROR_DEINITIALIZED after [`crate::shutdown`], else
/// CUDA_ERROR_NOT_PERMITTED inside a program's callback, else CUDA_ERROR_NOT_SUPPORTED.
pub(crate) fn unsupported(w: &World, call: Call) -> CUresult {
    if let Some(s) = faults::take(w, call) {
        return s;
    }
    if shut_down(w) {
        return CUresult::CUDA_ERROR_DEINITIALIZED;
    }
    if let Err(s) = crate::run::callback::permitted() {
        return s;
    }
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// `cuInit` (behind [`Gate::BeforeInit`]). facts: cuInit(7) -> CUDA_ERROR_INVALID_VALUE;
/// cuInit(0) -> SUCCESS.
pub(crate) fn cu_init(w: &World, flags: c_uint) -> CUresult {
    if flags != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    w.initialized.store(true, Ordering::Release);
    // The sanitizer's checks (CUDRV_STANDIN_SANITIZE) are read by the first cuInit.
    w.sanitizer.read_checks();
    CUresult::CUDA_SUCCESS
}

/// Turns an implementation's `Result` into the status an entry point returns.
pub(crate) fn status(r: Result<(), CUresult>) -> CUresult {
    match r {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err(s) => s,
    }
}

/// CUDA_ERROR_INVALID_VALUE for a null out-pointer.
pub(crate) fn non_null<T>(p: *const T) -> Result<(), CUresult> {
    if p.is_null() {
        Err(CUresult::CUDA_ERROR_INVALID_VALUE)
    } else {
        Ok(())
    }
}

/// Writes `value` through `out`, or returns CUDA_ERROR_INVALID_VALUE for a null `out`.
pub(crate) fn put<T>(out: *mut T, value: T) -> CUresult {
    status(write(out, value))
}

/// [`put`] as a `Result`.
pub(crate) fn write<T>(out: *mut T, value: T) -> Result<(), CUresult> {
    non_null(out)?;
    // SAFETY: a non-null out-pointer from the caller, who passes writable storage.
    unsafe { out.write(value) };
    Ok(())
}

/// A handle as the opaque pointer type the API uses.
pub(crate) fn to_ptr<T>(handle: u64) -> *mut T {
    handle as usize as *mut T
}

/// The handle an opaque pointer carries.
pub(crate) fn from_ptr<T>(p: *mut T) -> u64 {
    p as usize as u64
}
