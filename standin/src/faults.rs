//! Fault injection: make any entry point return a chosen status, once, N times or always.
//!
//! A fault names a call by its `cudrv::call` constant (`cudrv::call::cuMemFree`, or a
//! variant's, `cudrv::call::cuMemFree_v3020`), so a misspelt fault point does not compile,
//! and applies to every variant of its symbol. It is either for every thread or limited to
//! the thread that injected it, so parallel tests do not see each other's faults.
//!
//! The functions here act on the default world (the one the exported symbols and
//! [`crate::install`] serve, and [`crate::StandIn::new`] of its version); the
//! [`crate::StandIn`] methods of the same names act on that stand-in's own world.
//!
//! [`fail_next_context_restore`] makes a context *restoration* fail, as a scope that
//! switches to a context and back would see it: see there.

use cudrv::sys::CUresult;
use cudrv::Call;

use crate::model::faults::Restore;
pub use crate::model::faults::Times;
use crate::run::thread;
use crate::world::World;

fn default() -> &'static World {
    World::at::<0>()
}

/// Makes `call` (every variant of its symbol) return `status`, for every thread.
pub fn inject(call: Call, status: CUresult, times: Times) {
    default().faults.inject(call, status, times, None);
}

/// Makes `call` (every variant of its symbol) return `status` when called from the current
/// thread only.
pub fn inject_on_this_thread(call: Call, status: CUresult, times: Times) {
    default().faults.inject(call, status, times, Some(thread::key()));
}

/// Removes every fault injected from this thread, and every one for all threads, and
/// disarms [`fail_next_context_restore`] on this thread.
pub fn clear() {
    clear_in(default());
}

/// [`clear`] in `w`.
pub(crate) fn clear_in(w: &World) {
    disarm_in(w);
    w.faults.clear(thread::key());
}

/// Makes the next context restoration on the calling thread fail with `status`.
///
/// Arms a one-shot hook on this thread: the next successful `cuCtxSetCurrent` records the
/// context that was current before it (possibly none); the first later `cuCtxSetCurrent`
/// on this thread back to that context (NULL for none) returns `status` and changes
/// nothing, so the context switched to stays current, as a real driver leaves it when the
/// switch back fails (`shared/background/cuda-core-error-policy-review.txt`). Then the
/// hook is off again. [`disarm_context_restore`] and [`clear`] disarm it.
pub fn fail_next_context_restore(status: CUresult) {
    arm_in(default(), status);
}

/// [`fail_next_context_restore`] in `w`.
pub(crate) fn arm_in(w: &World, status: CUresult) {
    let _ = w.contexts.with_thread(|t| t.restore = Restore::Armed(status));
}

/// Disarms [`fail_next_context_restore`] on the calling thread.
pub fn disarm_context_restore() {
    disarm_in(default());
}

/// [`disarm_context_restore`] in `w`.
pub(crate) fn disarm_in(w: &World) {
    let _ = w.contexts.with_thread(|t| t.restore = Restore::Off);
}

/// The status an injected fault makes `call` return now, if any (consuming one firing).
#[inline(always)]
pub(crate) fn take(w: &World, call: Call) -> Option<CUresult> {
    w.faults.take(call, thread::key)
}

/// The status a `cuCtxSetCurrent(target)` on this thread must fail with, if the restore
/// hook is watching for `target` (consuming it).
pub(crate) fn restore_fault(w: &World, target: u64) -> Option<CUresult> {
    w.contexts
        .with_thread(|t| match t.restore {
            Restore::Watching(status, ctx) if ctx == target => {
                t.restore = Restore::Off;
                Some(status)
            }
            _ => None,
        })
        .flatten()
}

/// Tells the restore hook that `cuCtxSetCurrent` succeeded, replacing `before` (0: none).
pub(crate) fn note_context_switch(w: &World, before: u64) {
    let _ = w.contexts.with_thread(|t| {
        if let Restore::Armed(status) = t.restore {
            t.restore = Restore::Watching(status, before);
        }
    });
}
