//! The ledger: what the program did with memory and handles, for tests to inspect.
//!
//! It lists live allocations (device, stream-ordered, pool, pinned host, IPC imports) and
//! live handles, and the mistakes a real driver would crash on or hide: double frees,
//! accesses to freed memory, double destroys, and duplicate IPC imports (nvbug 5570902,
//! see `shared/background/cuda-core-error-policy-review.txt`). It is computed from the
//! world's registries: each keeps its live objects and the mistakes made with them.
//!
//! Each world has its own ledger: [`ledger`] reads the default world's, and
//! [`crate::StandIn::ledger`] a stand-in's own. Tests running in parallel on one world see
//! each other's entries, so a test should look for its own addresses and handles rather
//! than expect it empty.

use crate::model::handles::Registry;
pub use crate::model::memory::{Allocation, AllocationKind};
use crate::run::lock::lock;
use crate::world::World;

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
    /// `"graph exec"`, `"user object"`, `"array"`, `"texture object"`, `"surface object"`.
    pub double_destroys: Vec<(&'static str, u64)>,
    /// Addresses returned by `cuMemPoolImportPointer` for export data already imported and
    /// still mapped: another address for the same mapping, as a real driver gives.
    pub duplicate_imports: Vec<u64>,
    /// `(kind, handle)` of every live handle the program created: contexts from
    /// `cuCtxCreate` (not primary ones), streams, events, memory pools (not default
    /// ones), modules, libraries, link states, graphs, graph execs, user objects, arrays,
    /// texture and surface objects (whose handles are their records' device addresses).
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

/// Appends the live handles and double destroys of `registry`.
fn registry<T>(l: &mut Ledger, registry: &Registry<T>) {
    registry.live_handles(&mut l.live_handles);
    l.double_destroys.extend(registry.double_destroys().iter().map(|&h| (registry.kind(), h)));
}

/// The ledger of `w`.
pub(crate) fn of(w: &World) -> Ledger {
    let mut l = Ledger::default();
    {
        let m = lock(&w.memory);
        m.live(&mut l.live);
        l.double_frees = m.double_frees.clone();
        l.use_after_free = m.use_after_free.clone();
        l.duplicate_imports = m.duplicate_imports.clone();
    }
    l.live_handles.extend(w.contexts.live_handles().into_iter().map(|h| ("context", h)));
    lock(&w.vmm).live(&mut l.live_handles);
    lock(&w.extres).live(&mut l.live_handles);
    l.double_destroys.extend(w.contexts.double_destroys().into_iter().map(|h| ("context", h)));
    registry(&mut l, &lock(&w.streams));
    registry(&mut l, &lock(&w.events));
    {
        let pools = lock(&w.pools);
        // Default pools are the driver's, not the program's.
        let p = &pools.pools;
        l.live_handles.extend(p.iter().filter(|(_, pool)| !pool.default).map(|(&h, _)| (p.kind(), h)));
        l.double_destroys.extend(p.double_destroys().iter().map(|&h| (p.kind(), h)));
    }
    {
        let modules = lock(&w.modules);
        registry(&mut l, &modules.modules);
        registry(&mut l, &modules.libraries);
    }
    registry(&mut l, &lock(&w.links));
    registry(&mut l, &lock(&w.graphs));
    registry(&mut l, &lock(&w.execs));
    registry(&mut l, &lock(&w.user_objects));
    {
        let a = lock(&w.arrays);
        registry(&mut l, &a.arrays);
        registry(&mut l, &a.textures);
        registry(&mut l, &a.surfaces);
    }
    registry(&mut l, &lock(&w.greens).greens);
    l
}

/// Forgets everything recorded in `w` (see [`ledger_reset`]).
pub(crate) fn reset(w: &World) {
    lock(&w.memory).forget_freed();
    w.contexts.forget_destroyed();
    lock(&w.streams).forget_destroyed();
    lock(&w.events).forget_destroyed();
    lock(&w.pools).pools.forget_destroyed();
    {
        let mut modules = lock(&w.modules);
        modules.modules.forget_destroyed();
        modules.libraries.forget_destroyed();
    }
    lock(&w.links).forget_destroyed();
    lock(&w.graphs).forget_destroyed();
    lock(&w.execs).forget_destroyed();
    lock(&w.user_objects).forget_destroyed();
    {
        let mut a = lock(&w.arrays);
        a.arrays.forget_destroyed();
        a.textures.forget_destroyed();
        a.surfaces.forget_destroyed();
    }
    lock(&w.greens).greens.forget_destroyed();
}

/// A snapshot of the default world's ledger: live allocations and handles, and every
/// mistake recorded since the process started (or since [`ledger_reset`]).
pub fn ledger() -> Ledger {
    of(World::at::<0>())
}

/// Forgets everything recorded in the default world: the mistakes (double frees, uses
/// after free, double destroys, duplicate imports), the freed allocations and which
/// handles were destroyed. Live allocations and handles stay live and usable. Afterwards a
/// forgotten freed address is unknown (CUDA_ERROR_INVALID_VALUE when used or freed,
/// without a ledger entry) and a second destroy of a handle destroyed before the reset is
/// an invalid handle but not a double destroy. Addresses and handles are still never
/// reused (but the memory of a forgotten pinned buffer may be handed out again).
pub fn ledger_reset() {
    reset(World::at::<0>());
}
