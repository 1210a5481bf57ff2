//! What every emulated entry point does first, and the small helpers they share: the
//! initialised and shut-down flags, out-pointer writes, lock acquisition and the
//! registration macro.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use cudrv::sys::CUresult;

static INITIALIZED: AtomicBool = AtomicBool::new(false);
static SHUT_DOWN: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's key (0 until first asked). A `const` thread-local of a type without
    /// a destructor: it stays readable while the thread's other thread-locals are torn
    /// down, so asking for it never fails.
    static THREAD_KEY: Cell<u64> = const { Cell::new(0) };
}
static NEXT_THREAD_KEY: AtomicU64 = AtomicU64::new(1);

/// A number naming the calling thread, never reused, available at any point of the
/// thread's life (unlike `std::thread::current()`, which may be gone while thread-locals
/// are destroyed at thread exit).
pub(crate) fn thread_key() -> u64 {
    let key = THREAD_KEY.try_with(|k| match k.get() {
        0 => {
            let key = NEXT_THREAD_KEY.fetch_add(1, Ordering::Relaxed);
            k.set(key);
            key
        }
        key => key,
    });
    // A thread-local without a destructor is never torn down: the error case cannot
    // happen; 0 would name every such thread.
    key.unwrap_or(0)
}

/// Records a successful `cuInit`.
pub(crate) fn set_initialized() {
    INITIALIZED.store(true, Ordering::Release);
}

/// Whether `cuInit` has succeeded in this process.
pub(crate) fn initialized() -> bool {
    INITIALIZED.load(Ordering::Acquire)
}

/// Whether [`crate::shutdown`] is in effect.
pub(crate) fn shut_down() -> bool {
    SHUT_DOWN.load(Ordering::Acquire)
}

/// Sets or clears the process-wide shut-down state.
pub(crate) fn set_shut_down(on: bool) {
    SHUT_DOWN.store(on, Ordering::Release);
}

/// The common prologue of an entry point: an injected fault for `symbol`, then
/// CUDA_ERROR_DEINITIALIZED after [`crate::shutdown`], then CUDA_ERROR_NOT_PERMITTED
/// inside a program's callback (`callback.rs`), then CUDA_ERROR_NOT_INITIALIZED before
/// `cuInit`.
macro_rules! enter {
    ($symbol:literal) => {
        if let Some(s) = $crate::faults::take($symbol) {
            return s;
        }
        if $crate::entry::shut_down() {
            return ::cudrv::sys::CUresult::CUDA_ERROR_DEINITIALIZED;
        }
        if let Err(s) = $crate::callback::permitted() {
            return s;
        }
        if !$crate::entry::initialized() {
            return ::cudrv::sys::CUresult::CUDA_ERROR_NOT_INITIALIZED;
        }
    };
}
pub(crate) use enter;

/// Defines `lookup(ident)`, the implementation of a variant if this module emulates it.
/// Each implementation is type-checked against its variant's `PFN_*` typedef.
macro_rules! register {
    ($($ident:ident: $pfn:ident => $f:path,)*) => {
        /// The implementation of the variant `ident`, if this module emulates it.
        pub(crate) fn lookup(ident: &str) -> Option<*mut ::std::ffi::c_void> {
            match ident {
                $(stringify!($ident) => {
                    let f: ::cudrv::sys::$pfn = Some($f);
                    f.map(|f| f as *mut ::std::ffi::c_void)
                })*
                _ => None,
            }
        }
    };
}
pub(crate) use register;

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

/// Locks `m`. Every critical section leaves its state consistent before anything that
/// could fail, so a poisoned lock (impossible without a panic) is used as it is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A handle as the opaque pointer type the API uses.
pub(crate) fn to_ptr<T>(handle: u64) -> *mut T {
    handle as usize as *mut T
}

/// The handle an opaque pointer carries.
pub(crate) fn from_ptr<T>(p: *mut T) -> u64 {
    p as usize as u64
}
