//! Virtual memory management: address reservations, physical allocations, mappings with
//! per-device access, and shareable handles (file descriptors).
//!
//! A physical allocation (`cuMemCreate`) is zeroed host memory; a mapping (`cuMemMap`) of
//! it into a reservation (`cuMemAddressReserve`) becomes device memory (a range of the
//! world's [`crate::model::memory::Memory`] over the same host memory) once
//! `cuMemSetAccess` gives a device access to it, so copies, fills and kernels use it like
//! any allocation and an access to a reserved address that is unmapped, or mapped without
//! access, fails as outside every allocation. Two mappings of one allocation (or of an
//! imported handle of it) share its memory. A range of several adjacent mappings is one
//! range per mapping here: a copy that crosses from one mapping into the next fails
//! (`CUDA_ERROR_INVALID_VALUE`), where a real driver copies it (a listed difference).
//!
//! Releasing a handle (`cuMemRelease`) while it is mapped keeps its memory until the last
//! mapping is unmapped, as a real driver does. `cuMemRetainAllocationHandle` gives the
//! handle a mapping was made from a further reference (bringing a released one back while
//! the mapping holds its memory); each reference is released once.

use std::collections::BTreeMap;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::run::backing::Backing;

/// The granularity of every physical allocation and mapping: 2 MiB, minimum and
/// recommended (the H200's answer for device memory; a conformance case).
pub(crate) const GRANULARITY: usize = 2 << 20;

/// One physical allocation handle.
pub(crate) struct Physical {
    /// Its size in bytes.
    pub(crate) size: usize,
    /// The device it is on.
    pub(crate) device: i32,
    /// The shareable handle types asked for (`CU_MEM_HANDLE_TYPE_*` bits).
    pub(crate) handle_types: u32,
    /// Its memory (shared with its mappings and with handles imported from it).
    pub(crate) backing: Arc<Backing>,
    /// References to the handle: 1 from `cuMemCreate` or an import, one more per
    /// `cuMemRetainAllocationHandle`; each `cuMemRelease` drops one, the last forgets it.
    pub(crate) refs: usize,
}

/// One mapping, by its first address.
pub(crate) struct Map {
    /// Its size.
    pub(crate) size: usize,
    /// The device of its memory.
    pub(crate) device: i32,
    /// Its memory.
    pub(crate) backing: Arc<Backing>,
    /// `CU_MEM_ACCESS_FLAGS_PROT_*` per device given access.
    pub(crate) access: BTreeMap<i32, u32>,
    /// The shareable handle types of its physical allocation.
    pub(crate) handle_types: u32,
    /// The handle it was mapped from (`cuMemRetainAllocationHandle` gives it again).
    pub(crate) handle: u64,
}

/// A world's reservations, physical allocations, mappings and exported handles.
pub(crate) struct Vmm {
    /// Reservations: first address -> size.
    pub(crate) reservations: BTreeMap<u64, usize>,
    /// Physical allocation handles.
    pub(crate) handles: BTreeMap<u64, Physical>,
    /// Mappings, by first address.
    pub(crate) maps: BTreeMap<u64, Map>,
    /// Exported file descriptors, by the inode of the file behind them: the memory and
    /// its size and device (an import makes a new handle over the same memory).
    pub(crate) exported: BTreeMap<u64, (usize, i32, Arc<Backing>)>,
    /// Handles released twice (or never made), for the ledger.
    pub(crate) double_releases: Vec<u64>,
}

impl Vmm {
    /// Nothing reserved, allocated or mapped.
    pub(crate) const fn new() -> Vmm {
        Vmm {
            reservations: BTreeMap::new(),
            handles: BTreeMap::new(),
            maps: BTreeMap::new(),
            exported: BTreeMap::new(),
            double_releases: Vec::new(),
        }
    }

    /// Whether `size` is a positive multiple of the granularity.
    pub(crate) fn granular(size: usize) -> bool {
        size != 0 && size % GRANULARITY == 0
    }

    /// The reservation holding `[address, address + size)`.
    pub(crate) fn reservation_of(&self, address: u64, size: usize) -> Option<u64> {
        let (&start, &len) = self.reservations.range(..=address).next_back()?;
        let end = start.checked_add(len as u64)?;
        (address.checked_add(size as u64)? <= end).then_some(start)
    }

    /// Whether a mapping overlaps `[address, address + size)`.
    pub(crate) fn overlaps_map(&self, address: u64, size: usize) -> bool {
        let end = address.saturating_add(size as u64);
        let before = self.maps.range(..address).next_back().is_some_and(|(&s, m)| s + m.size as u64 > address);
        before || self.maps.range(address..end).next().is_some()
    }

    /// The mappings that exactly tile `[address, address + size)`, by first address;
    /// `None` if part of the range is unmapped or a mapping sticks out of it.
    pub(crate) fn tiling(&self, address: u64, size: usize) -> Option<Vec<u64>> {
        let end = address.checked_add(size as u64)?;
        let mut at = address;
        let mut out = Vec::new();
        while at < end {
            let m = self.maps.get(&at)?;
            out.push(at);
            at = at.checked_add(m.size as u64)?;
        }
        (at == end && size != 0).then_some(out)
    }

    /// Live handles and mappings, for the ledger: `(kind, value)`.
    pub(crate) fn live(&self, out: &mut Vec<(&'static str, u64)>) {
        out.extend(self.handles.keys().map(|&h| ("physical memory", h)));
        out.extend(self.maps.keys().map(|&a| ("memory mapping", a)));
        out.extend(self.reservations.keys().map(|&a| ("address reservation", a)));
    }

    /// Whether a result is an error (helper for entries).
    pub(crate) fn check(ok: bool) -> Result<(), CUresult> {
        if ok {
            Ok(())
        } else {
            Err(CUresult::CUDA_ERROR_INVALID_VALUE)
        }
    }
}
