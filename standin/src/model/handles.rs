//! Opaque handles: fresh values that are never reused (in the whole process, across
//! worlds), and a registry per handle kind that remembers destroyed handles, so a second
//! destroy is recognised (and kept for the ledger) instead of touching anything.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

use cudrv::sys::CUresult;

/// The first handle value; handles step by 16 and never reach the device address range
/// (see `memory.rs`), so a handle of one kind is never a valid handle of another.
const FIRST_HANDLE: u64 = 0x1_0000_0000;
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(FIRST_HANDLE);

/// A handle value no other object has had in this process.
pub(crate) fn fresh() -> u64 {
    NEXT_HANDLE.fetch_add(0x10, Ordering::Relaxed)
}

/// The live objects of one handle kind, and the handles destroyed so far.
pub(crate) struct Registry<T> {
    kind: &'static str,
    invalid: CUresult,
    live: BTreeMap<u64, T>,
    destroyed: BTreeSet<u64>,
    /// Handles destroyed again, in the order it happened (for the ledger).
    double_destroys: Vec<u64>,
}

impl<T> Registry<T> {
    /// An empty registry; `kind` names the handles in the ledger, `invalid` is the status
    /// for an unknown or destroyed handle (CUDA_ERROR_INVALID_HANDLE for most kinds).
    pub(crate) const fn new(kind: &'static str, invalid: CUresult) -> Registry<T> {
        Registry { kind, invalid, live: BTreeMap::new(), destroyed: BTreeSet::new(), double_destroys: Vec::new() }
    }

    /// Adds a live object under a fresh handle, which it returns.
    pub(crate) fn insert(&mut self, value: T) -> u64 {
        let handle = fresh();
        self.live.insert(handle, value);
        handle
    }

    /// Adds a live object under `handle`, a value the caller made unique (a texture
    /// object's handle is the address of its record, `model/array.rs`).
    pub(crate) fn insert_at(&mut self, handle: u64, value: T) {
        self.live.insert(handle, value);
    }

    /// The live object `handle` names.
    pub(crate) fn get(&self, handle: u64) -> Result<&T, CUresult> {
        self.live.get(&handle).ok_or(self.invalid)
    }

    /// The live object `handle` names, for changing it.
    pub(crate) fn get_mut(&mut self, handle: u64) -> Result<&mut T, CUresult> {
        self.live.get_mut(&handle).ok_or(self.invalid)
    }

    /// Destroys `handle`, returning its object. A handle destroyed before is recorded as a
    /// double destroy; it and an unknown handle give the invalid status.
    pub(crate) fn remove(&mut self, handle: u64) -> Result<T, CUresult> {
        if let Some(value) = self.live.remove(&handle) {
            self.destroyed.insert(handle);
            return Ok(value);
        }
        if self.destroyed.contains(&handle) {
            self.double_destroys.push(handle);
        }
        Err(self.invalid)
    }

    /// The kind of handle it holds, as the ledger names it.
    pub(crate) fn kind(&self) -> &'static str {
        self.kind
    }

    /// Handles destroyed again since the last [`Registry::forget_destroyed`].
    pub(crate) fn double_destroys(&self) -> &[u64] {
        &self.double_destroys
    }

    /// The live handles and their objects.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&u64, &T)> {
        self.live.iter()
    }

    /// Appends `(kind, handle)` for every live handle.
    pub(crate) fn live_handles(&self, out: &mut Vec<(&'static str, u64)>) {
        out.extend(self.live.keys().map(|&h| (self.kind, h)));
    }

    /// Forgets which handles were destroyed and which were destroyed twice (a later
    /// destroy of one is then only invalid).
    pub(crate) fn forget_destroyed(&mut self) {
        self.destroyed.clear();
        self.double_destroys.clear();
    }
}
