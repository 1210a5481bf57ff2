//! Injected faults of one world: calls made to return a chosen status, once, N times or
//! always, for every thread or only the injecting one.
//!
//! A fault names a call by its `cudrv::call` constant, so a misspelt fault point does not
//! compile, and applies to every variant of its symbol.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use cudrv::sys::CUresult;
use cudrv::table::{Entry, NAMES, VARIANTS};
use cudrv::Call;

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
    /// The injecting thread's key (`run::thread::key`), for a fault on one thread.
    thread: Option<u64>,
}

/// The faults injected into one world.
pub(crate) struct Faults {
    list: Mutex<Vec<Fault>>,
    /// Number of faults in `list`: lets every call skip the lock when there are none.
    active: AtomicUsize,
}

impl Faults {
    /// None.
    pub(crate) const fn new() -> Faults {
        Faults { list: Mutex::new(Vec::new()), active: AtomicUsize::new(0) }
    }

    fn list(&self) -> MutexGuard<'_, Vec<Fault>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `call` (every variant of its symbol) return `status`, on every thread, or on
    /// the thread of key `thread` only.
    pub(crate) fn inject(&self, call: Call, status: CUresult, times: Times, thread: Option<u64>) {
        let remaining = match times {
            Times::Once => Some(1),
            Times::N(n) => Some(n),
            Times::Always => None,
        };
        let mut f = self.list();
        f.push(Fault { symbol: symbol(call), status, remaining, thread });
        self.active.store(f.len(), Ordering::SeqCst);
    }

    /// Removes every fault of the thread of key `thread`, and every one of all threads.
    pub(crate) fn clear(&self, thread: u64) {
        let mut f = self.list();
        f.retain(|x| x.thread.is_some_and(|t| t != thread));
        self.active.store(f.len(), Ordering::SeqCst);
    }

    /// Removes every fault, of every thread.
    pub(crate) fn reset(&self) {
        let mut f = self.list();
        f.clear();
        self.active.store(0, Ordering::SeqCst);
    }

    /// The status an injected fault makes `call` return now on the thread of key
    /// `thread()`, if any (consuming one firing).
    #[inline(always)]
    pub(crate) fn take(&self, call: Call, thread: impl FnOnce() -> u64) -> Option<CUresult> {
        if self.active.load(Ordering::SeqCst) == 0 {
            return None;
        }
        self.take_slow(symbol(call), thread())
    }

    fn take_slow(&self, symbol: &str, me: u64) -> Option<CUresult> {
        let mut f = self.list();
        let pos = f.iter().position(|x| x.symbol == symbol && x.thread.is_none_or(|t| t == me))?;
        let fault = f.get_mut(pos)?;
        let status = fault.status;
        if let Some(n) = fault.remaining.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                f.remove(pos);
            }
        }
        self.active.store(f.len(), Ordering::SeqCst);
        Some(status)
    }
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

/// The state of the context-restore hook (`fail_next_context_restore`) on one thread.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Restore {
    /// Off.
    #[default]
    Off,
    /// Armed: the next successful `cuCtxSetCurrent` records the context it replaces.
    Armed(CUresult),
    /// The first `cuCtxSetCurrent` back to this context (0: none) fails.
    Watching(CUresult, u64),
}
