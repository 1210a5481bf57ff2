//! Fault injection: make any entry point return a chosen status, once, N times or always.
//!
//! A fault names a call by its `cudrv::call` constant (`cudrv::call::cuMemFree`, or a
//! variant's, `cudrv::call::cuMemFree_v3020`), so a misspelt fault point does not compile,
//! and applies to every variant of its symbol. It is either process-wide or limited to the
//! thread that injected it, so parallel tests do not see each other's faults.
//!
//! [`fail_next_context_restore`] makes a context *restoration* fail, as a scope that
//! switches to a context and back would see it: see there.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cudrv::sys::CUresult;
use cudrv::table::{Entry, NAMES, VARIANTS};
use cudrv::Call;

use crate::entry::thread_key;

/// How many times a fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    /// At the next matching call only.
    Once,
    /// At each of the next `n` matching calls.
    N(u32),
    /// At every matching call, until cleared.
    Always,
}

struct Fault {
    /// The symbol of the call it was injected for: it fires on every variant of it.
    symbol: &'static str,
    status: CUresult,
    remaining: Option<u32>,
    /// The injecting thread's [`crate::entry::thread_key`], for a fault on one thread.
    thread: Option<u64>,
}

static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());
/// Number of faults in FAULTS: lets every call skip the lock when there are none.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

fn faults() -> std::sync::MutexGuard<'static, Vec<Fault>> {
    FAULTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes `call` (every variant of its symbol) return `status`, for every thread.
pub fn inject(call: Call, status: CUresult, times: Times) {
    push(call, status, times, None);
}

/// Makes `call` (every variant of its symbol) return `status` when called from the current
/// thread only.
pub fn inject_on_this_thread(call: Call, status: CUresult, times: Times) {
    push(call, status, times, Some(thread_key()));
}

/// The symbol of `call`: a variant's, or that of the variants a name binds.
fn symbol(call: Call) -> &'static str {
    let variant = match call.entry() {
        Entry::Variant(i) => Some(i),
        Entry::Name(i) => NAMES.get(i).and_then(|n| n.candidates.first().copied()),
        _ => None,
    };
    variant.and_then(|i| VARIANTS.get(i)).map_or("", |v| v.symbol_str())
}

fn push(call: Call, status: CUresult, times: Times, thread: Option<u64>) {
    let remaining = match times {
        Times::Once => Some(1),
        Times::N(n) => Some(n),
        Times::Always => None,
    };
    let mut f = faults();
    f.push(Fault { symbol: symbol(call), status, remaining, thread });
    ACTIVE.store(f.len(), Ordering::SeqCst);
}

/// Removes every fault injected from this thread, and every process-wide one, and disarms
/// [`fail_next_context_restore`] on this thread.
pub fn clear() {
    disarm_context_restore();
    let me = thread_key();
    let mut f = faults();
    f.retain(|x| x.thread.is_some_and(|t| t != me));
    ACTIVE.store(f.len(), Ordering::SeqCst);
}

/// The status an injected fault makes `call` return now, if any (consuming one firing).
#[inline(always)]
pub(crate) fn take(call: Call) -> Option<CUresult> {
    if ACTIVE.load(Ordering::SeqCst) == 0 {
        return None;
    }
    take_slow(symbol(call))
}

fn take_slow(symbol: &str) -> Option<CUresult> {
    let me = thread_key();
    let mut f = faults();
    let pos = f.iter().position(|x| x.symbol == symbol && x.thread.is_none_or(|t| t == me))?;
    let fault = f.get_mut(pos)?;
    let status = fault.status;
    if let Some(n) = fault.remaining.as_mut() {
        *n = n.saturating_sub(1);
        if *n == 0 {
            f.remove(pos);
        }
    }
    ACTIVE.store(f.len(), Ordering::SeqCst);
    Some(status)
}

/// The state of [`fail_next_context_restore`] on one thread.
#[derive(Clone, Copy)]
enum Restore {
    Off,
    /// Armed: the next successful `cuCtxSetCurrent` records the context it replaces.
    Armed(CUresult),
    /// The first `cuCtxSetCurrent` back to this context (0: none) fails.
    Watching(CUresult, u64),
}

thread_local! {
    static RESTORE: Cell<Restore> = const { Cell::new(Restore::Off) };
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
    // (A thread-local without a destructor: `try_with` cannot fail.)
    let _ = RESTORE.try_with(|r| r.set(Restore::Armed(status)));
}

/// Disarms [`fail_next_context_restore`] on the calling thread.
pub fn disarm_context_restore() {
    let _ = RESTORE.try_with(|r| r.set(Restore::Off));
}

/// The status a `cuCtxSetCurrent(target)` on this thread must fail with, if the restore
/// hook is watching for `target` (consuming it).
pub(crate) fn restore_fault(target: u64) -> Option<CUresult> {
    RESTORE
        .try_with(|r| match r.get() {
            Restore::Watching(status, ctx) if ctx == target => {
                r.set(Restore::Off);
                Some(status)
            }
            _ => None,
        })
        .ok()
        .flatten()
}

/// Tells the restore hook that `cuCtxSetCurrent` succeeded, replacing `before` (0: none).
pub(crate) fn note_context_switch(before: u64) {
    let _ = RESTORE.try_with(|r| {
        if let Restore::Armed(status) = r.get() {
            r.set(Restore::Watching(status, before));
        }
    });
}
