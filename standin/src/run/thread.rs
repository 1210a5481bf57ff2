//! Names for threads that stay valid for a thread's whole life.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

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
pub(crate) fn key() -> u64 {
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
