//! Driver threads while they run a program's callback (a host function of
//! `cuLaunchHostFunc` or of a graph host node, a user object destructor). Every driver call
//! made from inside one answers CUDA_ERROR_NOT_PERMITTED (`docs/driver-facts.md`, "Edge
//! cases on the real driver": even `cuCtxGetCurrent`; the CUDA documentation forbids
//! CUDA calls in all three).

use std::cell::Cell;

use cudrv::sys::CUresult;

thread_local! {
    /// Whether this thread is running a program's callback. A `const` thread-local of a
    /// type without a destructor: always readable.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// CUDA_ERROR_NOT_PERMITTED while the calling thread runs a program's callback.
pub(crate) fn permitted() -> Result<(), CUresult> {
    match INSIDE.try_with(Cell::get) {
        Ok(true) => Err(CUresult::CUDA_ERROR_NOT_PERMITTED),
        _ => Ok(()),
    }
}

/// Runs the program's callback `f` with the calling thread marked as inside one.
pub(crate) fn run(f: impl FnOnce()) {
    let before = INSIDE.try_with(|i| i.replace(true)).unwrap_or(false);
    f();
    let _ = INSIDE.try_with(|i| i.set(before));
}
