//! The ledger: what the program did with memory and handles, for tests to inspect.
//!
//! It lists live allocations (device, stream-ordered, pool, pinned host, IPC imports) and
//! live handles, and records the mistakes a real driver would crash on or hide: double
//! frees, accesses to freed memory, double destroys, and duplicate IPC imports
//! (nvbug 5570902, see `shared/background/cuda-core-error-policy-review.txt`).
//!
//! The ledger is process-wide: tests running in parallel see each other's entries, so a
//! test should look for its own addresses and handles rather than expect it empty.

use std::sync::Mutex;

use crate::entry::lock;
use crate::{context, event, graph, graph_exec, linker, memory, module, pool, stream, user_object};

/// How an allocation was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocationKind {
    /// `cuMemAlloc`.
    Device,
    /// `cuMemAllocAsync` (from the device's default pool).
    Async,
    /// `cuMemAllocFromPoolAsync`.
    Pool,
    /// `cuMemAllocHost` / `cuMemHostAlloc`: page-locked host memory.
    Pinned,
    /// `cuMemPoolImportPointer`: a mapping of another allocation.
    Import,
}

/// One live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Its device address (for pinned memory, the host address).
    pub address: u64,
    /// Its size in bytes.
    pub size: usize,
    /// How it was made.
    pub kind: AllocationKind,
}

/// A snapshot of the ledger (see [`ledger`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Allocations not freed yet, in address order (device ones first, then pinned).
    pub live: Vec<Allocation>,
    /// Addresses freed again after they had been freed (or unmapped by the free of a
    /// duplicate IPC import).
    pub double_frees: Vec<u64>,
    /// Addresses of copies and memsets that touched freed memory.
    pub use_after_free: Vec<u64>,
    /// `(kind, handle)` of handles destroyed again: `"context"`, `"stream"`, `"event"`,
    /// `"memory pool"`, `"module"`, `"library"`, `"link state"`, `"graph"`,
    /// `"graph exec"`, `"user object"`.
    pub double_destroys: Vec<(&'static str, u64)>,
    /// Addresses returned by `cuMemPoolImportPointer` for export data already imported and
    /// still mapped: another address for the same mapping, as a real driver gives.
    pub duplicate_imports: Vec<u64>,
    /// `(kind, handle)` of every live handle the program created: contexts from
    /// `cuCtxCreate` (not primary ones), streams, events, memory pools (not default
    /// ones), modules, libraries, link states, graphs, graph execs, user objects.
    pub live_handles: Vec<(&'static str, u64)>,
}

impl Ledger {
    /// The live allocation at `address`, if any.
    pub fn allocation(&self, address: u64) -> Option<&Allocation> {
        self.live.iter().find(|a| a.address == address)
    }

    /// Whether `handle` of `kind` is live.
    pub fn handle_is_live(&self, kind: &str, handle: u64) -> bool {
        self.live_handles.iter().any(|&(k, h)| k == kind && h == handle)
    }
}

/// The mistakes recorded so far.
struct Events {
    double_frees: Vec<u64>,
    use_after_free: Vec<u64>,
    double_destroys: Vec<(&'static str, u64)>,
    duplicate_imports: Vec<u64>,
}

static EVENTS: Mutex<Events> = Mutex::new(Events {
    double_frees: Vec::new(),
    use_after_free: Vec::new(),
    double_destroys: Vec::new(),
    duplicate_imports: Vec::new(),
});

// The recorders take only EVENTS, and are called with at most one module's lock held:
// EVENTS is always the innermost lock.

pub(crate) fn double_free(address: u64) {
    lock(&EVENTS).double_frees.push(address);
}

pub(crate) fn use_after_free(address: u64) {
    lock(&EVENTS).use_after_free.push(address);
}

pub(crate) fn double_destroy(kind: &'static str, handle: u64) {
    lock(&EVENTS).double_destroys.push((kind, handle));
}

pub(crate) fn duplicate_import(address: u64) {
    lock(&EVENTS).duplicate_imports.push(address);
}

/// A snapshot of the ledger: live allocations and handles, and every mistake recorded
/// since the process started (or since [`ledger_reset`]).
pub fn ledger() -> Ledger {
    let mut l = {
        let e = lock(&EVENTS);
        Ledger {
            double_frees: e.double_frees.clone(),
            use_after_free: e.use_after_free.clone(),
            double_destroys: e.double_destroys.clone(),
            duplicate_imports: e.duplicate_imports.clone(),
            ..Ledger::default()
        }
    };
    memory::live(&mut l.live);
    let h = &mut l.live_handles;
    context::live_handles(h);
    stream::live_handles(h);
    event::live_handles(h);
    pool::live_handles(h);
    module::live_handles(h);
    linker::live_handles(h);
    graph::live_handles(h);
    graph_exec::live_handles(h);
    user_object::live_handles(h);
    l
}

/// Forgets everything recorded: the mistakes (double frees, uses after free, double
/// destroys, duplicate imports), the freed allocations and which handles were destroyed.
/// Live allocations and handles stay live and usable. Afterwards a forgotten freed
/// address is unknown (CUDA_ERROR_INVALID_VALUE when used or freed, without a ledger
/// entry) and a second destroy of a handle destroyed before the reset is an invalid
/// handle but not a double destroy. Addresses and handles are still never reused (but
/// the memory of a forgotten pinned buffer may be handed out again).
pub fn ledger_reset() {
    {
        let mut e = lock(&EVENTS);
        e.double_frees.clear();
        e.use_after_free.clear();
        e.double_destroys.clear();
        e.duplicate_imports.clear();
    }
    memory::forget_freed();
    context::forget_destroyed();
    stream::forget_destroyed();
    event::forget_destroyed();
    pool::forget_destroyed();
    module::forget_destroyed();
    linker::forget_destroyed();
    graph::forget_destroyed();
    graph_exec::forget_destroyed();
    user_object::forget_destroyed();
}
