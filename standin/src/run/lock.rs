//! The one way the stand-in takes a lock.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`. Every critical section leaves its state consistent before anything that
/// could fail, so a poisoned lock (impossible without a panic) is used as it is.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
