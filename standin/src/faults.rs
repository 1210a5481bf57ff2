//! Fault injection: make any entry point return a chosen status, once, N times or always.
//!
//! A fault names a symbol (`cuMemFree`) and applies to all its variants. It is either
//! process-wide or limited to the thread that injected it, so parallel tests do not see
//! each other's faults.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::{self, ThreadId};

use cudrv::sys::CUresult;
use cudrv::table::VARIANTS;

/// How many times a fault fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Times {
    Once,
    N(u32),
    Always,
}

struct Fault {
    symbol: String,
    status: CUresult,
    remaining: Option<u32>,
    thread: Option<ThreadId>,
}

static FAULTS: Mutex<Vec<Fault>> = Mutex::new(Vec::new());
/// Number of faults in FAULTS: lets every call skip the lock when there are none.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

fn faults() -> std::sync::MutexGuard<'static, Vec<Fault>> {
    FAULTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes `symbol` return `status`, for every thread.
pub fn inject(symbol: &str, status: CUresult, times: Times) {
    push(symbol, status, times, None);
}

/// Makes `symbol` return `status` when called from the current thread only.
pub fn inject_on_this_thread(symbol: &str, status: CUresult, times: Times) {
    push(symbol, status, times, Some(thread::current().id()));
}

fn push(symbol: &str, status: CUresult, times: Times, thread: Option<ThreadId>) {
    let remaining = match times {
        Times::Once => Some(1),
        Times::N(n) => Some(n),
        Times::Always => None,
    };
    let mut f = faults();
    f.push(Fault {
        symbol: symbol.to_string(),
        status,
        remaining,
        thread,
    });
    ACTIVE.store(f.len(), Ordering::SeqCst);
}

/// Removes every fault injected from this thread, and every process-wide one.
pub fn clear() {
    let me = thread::current().id();
    let mut f = faults();
    f.retain(|x| x.thread.is_some_and(|t| t != me));
    ACTIVE.store(f.len(), Ordering::SeqCst);
}

/// The status an injected fault makes `symbol` return now, if any (consuming one firing).
pub fn take(symbol: &str) -> Option<CUresult> {
    if ACTIVE.load(Ordering::SeqCst) == 0 {
        return None;
    }
    let me = thread::current().id();
    let mut f = faults();
    let pos = f
        .iter()
        .position(|x| x.symbol == symbol && x.thread.is_none_or(|t| t == me))?;
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

/// Body of every generated stub: an injected fault, else CUDA_ERROR_NOT_SUPPORTED (the
/// stand-in does not emulate this call).
pub(crate) fn stub_call(index: usize) -> CUresult {
    let symbol = VARIANTS.get(index).map_or("", |v| v.symbol_str());
    take(symbol).unwrap_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)
}
