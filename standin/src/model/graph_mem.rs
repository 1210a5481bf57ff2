//! Graph memory: the allocations graph memory nodes make (`cuGraphAddMemAllocNode`, or a
//! stream-ordered allocation captured), the executable graphs that make them, and what
//! each device's graphs hold (`cuDeviceGetGraphMemAttribute`).
//!
//! An allocation's address is fixed when its node is added: the range is taken then, from
//! the memory's address space, and handed back to a reuse list of its own (its `key`), so
//! that each allocation the node makes (at each launch) gets the same address and no other
//! allocation ever does.
//!
//! What a device's graphs hold is modelled on the H200's answers
//! (`conformance/src/cases/graph_memory.rs`, `attributes_*`): an executable graph maps
//! memory for its allocations when it is first launched or uploaded (not when it is
//! instantiated), the bytes of all its allocation nodes together rounded up to
//! [`GRANULE`] (1000 bytes and 3 MiB: 32 MiB); destroying the executable graph gives its
//! memory to the device's cache, which the H200 still counts as used (and reserved);
//! `cuDeviceGraphMemTrim` releases the cache and the memory of executable graphs that are
//! idle and hold no unfreed allocation. Used and reserved are equal in every state the
//! H200 was seen in.

use std::collections::BTreeMap;
use std::ffi::c_int;

use cudrv::sys::{CUmemAccessDesc, CUmemAllocationHandleType, CUmemAllocationType, CUmemLocationType};

use crate::model::memory::Owner;

/// The unit in which an executable graph maps memory for its allocation nodes (32 MiB on
/// the H200).
pub(crate) const GRANULE: usize = 32 << 20;

/// The pool properties an allocation node was given (those of `CUmemPoolProps` the
/// stand-in keeps).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AllocProps {
    pub(crate) alloc_type: CUmemAllocationType,
    pub(crate) handle_types: CUmemAllocationHandleType,
    pub(crate) location_type: CUmemLocationType,
    pub(crate) device: c_int,
}

/// One graph allocation (by its fixed address, in [`GraphMem::allocs`]).
#[derive(Clone)]
pub(crate) struct GraphAlloc {
    pub(crate) size: usize,
    /// The reuse key its address is kept under while it is not allocated.
    pub(crate) key: u64,
    /// The context (and device) it is allocated in.
    pub(crate) owner: Owner,
    pub(crate) props: AllocProps,
    /// The access descriptors the node was given (owned by the node: its parameters read
    /// back point here).
    pub(crate) access: Vec<CUmemAccessDesc>,
    /// The graph whose node makes it.
    pub(crate) graph: u64,
    /// The graph with a free node of it, if any.
    pub(crate) freed_in: Option<u64>,
}

/// What an executable graph with memory nodes holds.
#[derive(Clone, Debug)]
pub(crate) struct ExecMem {
    /// The graph it was instantiated from.
    pub(crate) graph: u64,
    /// The device its memory is on.
    pub(crate) device: c_int,
    /// The addresses its allocation nodes allocate.
    pub(crate) allocs: Vec<u64>,
    /// The memory it maps for them.
    pub(crate) footprint: usize,
    /// Whether that memory is mapped (it was launched or uploaded since it was last
    /// trimmed).
    pub(crate) mapped: bool,
    /// Instantiated with `CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`.
    pub(crate) auto_free: bool,
}

/// A world's graph memory.
pub(crate) struct GraphMem {
    pub(crate) allocs: BTreeMap<u64, GraphAlloc>,
    /// The executable graphs with memory nodes, by handle.
    pub(crate) execs: BTreeMap<u64, ExecMem>,
    /// Memory each device keeps for graphs that no executable graph maps (until trimmed).
    cached: BTreeMap<c_int, usize>,
    /// The high marks of each device's used and reserved memory.
    high: BTreeMap<c_int, (usize, usize)>,
}

impl GraphMem {
    /// No graph memory.
    pub(crate) const fn new() -> GraphMem {
        GraphMem { allocs: BTreeMap::new(), execs: BTreeMap::new(), cached: BTreeMap::new(), high: BTreeMap::new() }
    }

    /// The memory an executable graph maps for allocations of these sizes: their sum,
    /// rounded up to [`GRANULE`].
    pub(crate) fn footprint(sizes: impl IntoIterator<Item = usize>) -> usize {
        let total = sizes.into_iter().fold(0, usize::saturating_add);
        total.div_ceil(GRANULE).saturating_mul(GRANULE)
    }

    /// `(used, reserved)` bytes of `device` now.
    pub(crate) fn current(&self, device: c_int) -> (usize, usize) {
        let used = self
            .execs
            .values()
            .filter(|x| x.device == device && x.mapped)
            .map(|x| x.footprint)
            .fold(0, usize::saturating_add)
            .saturating_add(self.cached.get(&device).copied().unwrap_or(0));
        (used, used)
    }

    /// `(used, reserved)` high marks of `device`.
    pub(crate) fn high(&self, device: c_int) -> (usize, usize) {
        self.high.get(&device).copied().unwrap_or_default()
    }

    /// Raises `device`'s high marks to its current use.
    fn note(&mut self, device: c_int) {
        let (used, reserved) = self.current(device);
        let high = self.high.entry(device).or_default();
        *high = (high.0.max(used), high.1.max(reserved));
    }

    /// Exec `h` maps its memory (launched or uploaded).
    pub(crate) fn map(&mut self, h: u64) {
        if let Some(x) = self.execs.get_mut(&h) {
            x.mapped = true;
            let device = x.device;
            self.note(device);
        }
    }

    /// Exec `h` was destroyed: the memory it mapped stays reserved, in the cache.
    pub(crate) fn forget_exec(&mut self, h: u64) {
        if let Some(x) = self.execs.remove(&h) {
            if x.mapped {
                let cached = self.cached.entry(x.device).or_default();
                *cached = cached.saturating_add(x.footprint);
            }
        }
    }

    /// Releases `device`'s cache and the memory of the execs `idle` says hold none of it in
    /// use.
    pub(crate) fn trim(&mut self, device: c_int, idle: impl Fn(u64, &ExecMem) -> bool) {
        self.cached.remove(&device);
        for (&h, x) in self.execs.iter_mut() {
            if x.device == device && x.mapped && idle(h, x) {
                x.mapped = false;
            }
        }
    }

    /// Resets `device`'s used (`reserved`: reserved) high mark to its current use.
    pub(crate) fn reset_high(&mut self, device: c_int, reserved: bool) {
        let (used, res) = self.current(device);
        let high = self.high.entry(device).or_default();
        match reserved {
            true => high.1 = res,
            false => high.0 = used,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(device: c_int, footprint: usize) -> ExecMem {
        ExecMem { graph: 1, device, allocs: Vec::new(), footprint, mapped: false, auto_free: false }
    }

    #[test]
    fn footprint_rounds_the_sum_up() {
        assert_eq!(GraphMem::footprint([1000, 3 << 20]), GRANULE);
        assert_eq!(GraphMem::footprint([1, GRANULE, GRANULE + 1]), 3 * GRANULE);
        assert_eq!(GraphMem::footprint([]), 0);
    }

    #[test]
    fn memory_is_used_when_mapped_and_when_cached_released_when_trimmed() {
        let mut m = GraphMem::new();
        m.execs.insert(7, exec(0, GRANULE));
        assert_eq!(m.current(0), (0, 0));
        m.map(7);
        assert_eq!(m.current(0), (GRANULE, GRANULE));
        m.forget_exec(7);
        assert_eq!(m.current(0), (GRANULE, GRANULE));
        assert_eq!(m.high(0), (GRANULE, GRANULE));
        m.trim(0, |_, _| true);
        assert_eq!(m.current(0), (0, 0));
        assert_eq!(m.high(0), (GRANULE, GRANULE));
        m.reset_high(0, false);
        assert_eq!(m.high(0), (0, GRANULE));
        m.reset_high(0, true);
        assert_eq!(m.high(0), (0, 0));
    }

    #[test]
    fn trim_keeps_busy_execs_and_other_devices() {
        let mut m = GraphMem::new();
        m.execs.insert(1, exec(0, GRANULE));
        m.execs.insert(2, exec(0, 2 * GRANULE));
        m.execs.insert(3, exec(1, GRANULE));
        for h in [1, 2, 3] {
            m.map(h);
        }
        m.trim(0, |h, _| h == 1);
        assert_eq!(m.current(0), (2 * GRANULE, 2 * GRANULE));
        assert_eq!(m.current(1), (GRANULE, GRANULE));
    }
}
