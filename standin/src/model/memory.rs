//! Device memory and the allocation side of the ledger.
//!
//! Device addresses come from an increasing range (from 2^45); each live allocation is
//! backed by zeroed host memory, so copies really copy. The range of a stream-ordered
//! allocation (`cuMemAllocAsync`, `cuMemAllocFromPoolAsync`) goes back to its pool when its
//! free is done, in stream order, and the pool's next allocation of the same size reuses
//! it (the same address), as a real pool reuses freed memory; other ranges are never
//! reused. A freed
//! allocation keeps its address range in the table (its memory is released): a copy or
//! memset touching it is CUDA_ERROR_INVALID_VALUE (as on a real driver, driver-facts.md
//! "Edge cases") and a use after free in the ledger, a kernel touching it
//! CUDA_ERROR_ILLEGAL_ADDRESS; freeing it again is CUDA_ERROR_INVALID_VALUE and a double
//! free. An address in no allocation is CUDA_ERROR_INVALID_VALUE.
//!
//! IPC imports (`cuMemPoolImportPointer`) are further address ranges over the same host
//! memory. As a real driver does (nvbug 5570902), importing export data again while an
//! earlier import of it is mapped gives another address for the same mapping, and freeing
//! any of those addresses unmaps them all. Freeing the exporter's own allocation does not
//! unmap the imports in this emulation (their memory stays alive until they are freed).
//!
//! The world holds one [`Memory`] under one lock, which is never held while calling the
//! program. Its mistakes (double frees, uses after free, duplicate imports) are kept here
//! for the ledger.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_int;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::model::device::DEVICE_TOTAL_MEM;
use crate::run::backing::Backing;

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
    /// `cuMemMap` (with access set by `cuMemSetAccess`): a virtual memory mapping.
    Mapped,
    /// `cuMemHostRegister`: the program's host memory, registered.
    Registered,
    /// `cuArrayCreate` / `cuArray3DCreate`: a CUDA array's memory (`model/array.rs`).
    Array,
    /// `cuTexObjectCreate` / `cuSurfObjectCreate`: the record a texture or surface
    /// object's handle points to (`run/texture.rs`).
    TextureObject,
    /// `cuMemAllocManaged`: managed memory, at its host address (`model/managed.rs`).
    Managed,
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

/// The first device address.
const FIRST_ADDRESS: u64 = 1 << 45;
/// Allocations start on this boundary, with at least this much unused space between two.
const GRANULE: u64 = 1 << 16;

/// Who made an allocation: the context and its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The context's handle.
    pub(crate) ctx: u64,
    /// Its device.
    pub(crate) device: c_int,
}

impl Owner {
    /// The owner for allocations made in `c`.
    pub(crate) fn of(c: &crate::model::context::Context) -> Owner {
        Owner { ctx: c.handle, device: c.device }
    }
}

/// What `cuPointerGetAttribute` tells of the live allocation containing an address.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PointerInfo {
    /// Pinned host memory (else device memory).
    pub(crate) host: bool,
    /// How it was made.
    pub(crate) kind: AllocationKind,
    /// Its first address.
    pub(crate) start: u64,
    /// Its size.
    pub(crate) size: usize,
    /// Who made it.
    pub(crate) owner: Owner,
    /// The pool it came from.
    pub(crate) pool: Option<u64>,
    /// Whether `cuPointerSetAttribute` set its `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS`.
    pub(crate) sync_memops: bool,
}

/// One device address range.
struct Mapping {
    size: usize,
    owner: Owner,
    kind: AllocationKind,
    /// The memory; `None` once freed.
    backing: Option<Arc<Backing>>,
    /// The pool it came from (a pool allocation or a stream-ordered one).
    pool: Option<u64>,
    /// For an import: the exported allocation's address.
    import_of: Option<u64>,
    /// A stream-ordered free of it is queued (not done yet).
    freeing: bool,
}

/// One pinned host buffer. Its memory is kept after it is freed, so the address is not
/// handed out again while the ledger remembers it.
struct Pinned {
    size: usize,
    owner: Owner,
    /// The memory, owned here and used by the program directly; read and written here
    /// only as mapped memory (its device pointer is its host address).
    backing: Arc<Backing>,
    freed: bool,
    /// The `CU_MEMHOSTALLOC_*` flags it was allocated with (`CU_MEMHOSTREGISTER_*` for
    /// registered memory).
    flags: u32,
    /// The program's memory registered with `cuMemHostRegister` (not freed by
    /// `cuMemFreeHost`; forgotten when unregistered).
    registered: bool,
}

/// A world's device address space and pinned host memory.
pub(crate) struct Memory {
    next: u64,
    device: BTreeMap<u64, Mapping>,
    pinned: BTreeMap<u64, Pinned>,
    /// Bytes of live allocations (not counting imports): what `cuMemGetInfo` takes from
    /// the total.
    used: usize,
    /// Live imports of each exported allocation (by its address).
    imports: BTreeMap<u64, Vec<u64>>,
    /// Bytes of live allocations from each pool, and the most there were (since the last
    /// reset of the high mark).
    pool_use: BTreeMap<u64, (usize, usize)>,
    /// Freed ranges of stream-ordered allocations, by pool and size: the pool's next
    /// allocation of that size takes one.
    reusable: BTreeMap<(u64, usize), Vec<u64>>,
    /// Addresses freed again after they had been freed.
    pub(crate) double_frees: Vec<u64>,
    /// Addresses of accesses to freed memory.
    pub(crate) use_after_free: Vec<u64>,
    /// Addresses of IPC imports of export data already imported and still mapped.
    pub(crate) duplicate_imports: Vec<u64>,
    /// The memory of freed managed allocations, kept (as pinned memory is) so that the
    /// host does not hand their addresses out again while the table remembers them.
    retired: Vec<Arc<Backing>>,
    /// The access `cuMemPoolSetAccess` gave each device to each pool's memory (by pool and
    /// device; `CU_MEM_ACCESS_FLAGS_PROT_*`), for `cuMemPoolGetAccess` (`pool_access.rs`).
    pub(crate) pool_access: BTreeMap<(u64, c_int), u32>,
    /// Allocations (by their start) whose `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` was set
    /// (`cuPointerSetAttribute`); forgotten when they are freed.
    pub(crate) sync_memops: BTreeSet<u64>,
}

impl Memory {
    /// No allocation.
    pub(crate) const fn new() -> Memory {
        Memory {
            next: FIRST_ADDRESS,
            device: BTreeMap::new(),
            pinned: BTreeMap::new(),
            used: 0,
            imports: BTreeMap::new(),
            pool_use: BTreeMap::new(),
            reusable: BTreeMap::new(),
            double_frees: Vec::new(),
            use_after_free: Vec::new(),
            duplicate_imports: Vec::new(),
            retired: Vec::new(),
            pool_access: BTreeMap::new(),
            sync_memops: BTreeSet::new(),
        }
    }

    /// A fresh address range of `size` bytes.
    fn reserve(&mut self, size: usize) -> Result<u64, CUresult> {
        let address = self.next;
        let end = u64::try_from(size)
            .ok()
            .and_then(|s| address.checked_add(s)?.checked_add(2 * GRANULE - 1))
            .ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        self.next = end & !(GRANULE - 1);
        Ok(address)
    }

    /// The mapping containing `address`, with its start.
    fn containing(&mut self, address: u64) -> Option<(u64, &mut Mapping)> {
        let (&start, m) = self.device.range_mut(..=address).next_back()?;
        let end = start.saturating_add(u64::try_from(m.size).ok()?);
        (address < end).then_some((start, m))
    }

    /// Where `address` is in the allocation it imports, if it lies in an import
    /// (`cuMemPoolImportPointer` in the exporting process maps the same bytes at a second
    /// address); otherwise `address` itself.
    pub(crate) fn canonical(&self, address: u64) -> u64 {
        let Some((&start, m)) = self.device.range(..=address).next_back() else {
            return address;
        };
        match m.import_of {
            Some(source) if address - start < m.size as u64 => source + (address - start),
            _ => address,
        }
    }

    /// Whether any allocation was imported in this process (so addresses may alias).
    pub(crate) fn has_imports(&self) -> bool {
        !self.imports.is_empty()
    }

    /// The live pinned buffer containing `address`, with its start.
    fn pinned_at(&self, address: u64) -> Option<(u64, &Pinned)> {
        let (&start, b) = self.pinned.range(..=address).next_back()?;
        let end = start.saturating_add(u64::try_from(b.size).ok()?);
        (address < end && !b.freed).then_some((start, b))
    }

    /// The host pointer for `len` bytes at `address`: CUDA_ERROR_INVALID_VALUE outside
    /// every allocation (or past its end), and in freed memory (then also a use after free
    /// in the ledger). Pinned host memory is mapped: its host address is its device
    /// pointer.
    fn at(&mut self, address: u64, len: usize) -> Result<*mut u8, CUresult> {
        if let Some((start, b)) = self.pinned_at(address) {
            let offset = usize::try_from(address - start).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
            if offset.checked_add(len).is_none_or(|end| end > b.size) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: offset < size: inside the buffer.
            return Ok(unsafe { b.backing.as_ptr().add(offset) });
        }
        let (start, m) = self.containing(address).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let Some(backing) = &m.backing else {
            self.use_after_free.push(address);
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        };
        let offset = usize::try_from(address - start).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if offset.checked_add(len).is_none_or(|end| end > m.size) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: offset < size: inside the backing allocation.
        Ok(unsafe { backing.as_ptr().add(offset) })
    }

    /// Whether `[p, p + len)` overlaps a device address range (a device address passed as
    /// a host pointer).
    fn is_device(&mut self, p: usize, len: usize) -> bool {
        let p = p as u64;
        let last = p.saturating_add(u64::try_from(len.max(1) - 1).unwrap_or(u64::MAX));
        // Managed memory is host memory too.
        let device = |m: &Mapping| m.kind != AllocationKind::Managed;
        self.containing(p).is_some_and(|(_, m)| device(m))
            || self.containing(last).is_some_and(|(_, m)| device(m))
            || self.device.range(p..=last).any(|(_, m)| device(m))
    }

    /// Allocates `size` bytes of `kind` (from `pool`) for `owner`: CUDA_ERROR_INVALID_VALUE
    /// for size 0, CUDA_ERROR_OUT_OF_MEMORY beyond the device's free memory (facts:
    /// `1 << 62`) or when the host has no memory to back it.
    pub(crate) fn alloc(
        &mut self,
        size: usize,
        kind: AllocationKind,
        pool: Option<u64>,
        owner: Owner,
    ) -> Result<u64, CUresult> {
        if size == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let s = self;
        if size > DEVICE_TOTAL_MEM.saturating_sub(s.used) {
            return Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        }
        let backing = Backing::zeroed(size).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let reused = pool.and_then(|p| s.reusable.get_mut(&(p, size))).and_then(Vec::pop);
        let address = match reused {
            Some(address) => address,
            None => s.reserve(size)?,
        };
        s.used += size;
        let backing = Some(Arc::new(backing));
        s.device.insert(address, Mapping { size, owner, kind, backing, pool, import_of: None, freeing: false });
        if let Some(pool) = pool {
            let (used, high) = s.pool_use.entry(pool).or_default();
            *used += size;
            *high = (*high).max(*used);
        }
        Ok(address)
    }

    /// Frees the allocation starting at `address`. Freeing an import unmaps every import of
    /// the same export. A freed allocation: CUDA_ERROR_INVALID_VALUE and a double free; an
    /// address that starts no allocation: CUDA_ERROR_INVALID_VALUE.
    pub(crate) fn free(&mut self, address: u64) -> Result<(), CUresult> {
        let s = self;
        let m = s.device.get_mut(&address).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let Some(backing) = m.backing.take() else {
            s.double_frees.push(address);
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        };
        if m.kind == AllocationKind::Managed {
            s.retired.push(backing);
        }
        m.freeing = false;
        let (size, import_of, pool, kind) = (m.size, m.import_of, m.pool, m.kind);
        s.sync_memops.remove(&address);
        if let Some((used, _)) = pool.and_then(|p| s.pool_use.get_mut(&p)) {
            *used = used.saturating_sub(size);
        }
        // Back to its pool (not while IPC imports map its memory).
        if let (Some(pool), None, false) = (pool, import_of, s.imports.contains_key(&address)) {
            s.reusable.entry((pool, size)).or_default().push(address);
        }
        match import_of {
            // Mapped memory (virtual memory, external memory buffers) counts nothing.
            None if kind == AllocationKind::Mapped => {}
            None => s.used = s.used.saturating_sub(size),
            Some(source) => {
                for other in s.imports.remove(&source).unwrap_or_default() {
                    if let Some(m) = s.device.get_mut(&other) {
                        m.backing = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// Checks, for a stream-ordered free queued now, that `address` starts a live
    /// allocation whose free is not queued already, and marks its free queued. Otherwise
    /// CUDA_ERROR_INVALID_VALUE, and a double free in the ledger for a freed one (or one
    /// whose free is queued).
    pub(crate) fn begin_free(&mut self, address: u64) -> Result<(), CUresult> {
        let s = self;
        let m = s.device.get_mut(&address).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if m.backing.is_none() || m.freeing {
            s.double_frees.push(address);
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        m.freeing = true;
        Ok(())
    }

    /// Checks that `len` bytes at `address` are live memory now (device memory, or mapped
    /// pinned memory, or virtual memory mappings back to back), as a copy or memset queued
    /// now needs up front: CUDA_ERROR_INVALID_VALUE otherwise (freed memory: also a use
    /// after free).
    pub(crate) fn check_device(&mut self, address: u64, len: usize) -> Result<(), CUresult> {
        self.each_piece(address, len, |_, _, _| {})
    }

    /// Whether host address `p` lies in a live pinned buffer (else it is pageable memory).
    pub(crate) fn is_pinned(&self, p: usize) -> bool {
        self.pinned_at(p as u64).is_some()
    }

    /// Checks a host end of a copy: not null, not device memory (CUDA_ERROR_INVALID_VALUE).
    pub(crate) fn check_host(&mut self, p: usize, len: usize) -> Result<(), CUresult> {
        self.host_range(p, len)
    }

    /// Whether `len` bytes at host address `p` touch a freed pinned buffer (a copy done
    /// after the buffer's `cuMemFreeHost`); such an access is recorded as a use after
    /// free.
    pub(crate) fn touches_freed_pinned(&mut self, p: usize, len: usize) -> bool {
        let (p, last) = (p as u64, (p as u64).saturating_add(len.max(1) as u64 - 1));
        let hit = self
            .pinned
            .range(..=last)
            .next_back()
            .filter(|(&start, b)| b.freed && start.saturating_add(b.size as u64) > p)
            .is_some();
        if hit {
            self.use_after_free.push(p);
        }
        hit
    }

    /// The live allocation containing `address`, for a kernel's access: its start, size and
    /// memory. CUDA_ERROR_ILLEGAL_ADDRESS outside every allocation, and in freed memory (then
    /// also a use after free in the ledger).
    pub(crate) fn allocation_at(&mut self, address: u64) -> Result<(u64, usize, Arc<Backing>), CUresult> {
        let s = self;
        if let Some((start, b)) = s.pinned_at(address) {
            return Ok((start, b.size, Arc::clone(&b.backing)));
        }
        let (start, m) = s.containing(address).ok_or(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)?;
        match m.backing.as_ref().map(|b| (start, m.size, Arc::clone(b))) {
            Some(found) => Ok(found),
            None => {
                s.use_after_free.push(address);
                Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
            }
        }
    }

    /// Calls `f(offset, pointer, n)` for the host memory behind `len` bytes at `address`:
    /// once where one allocation holds them, else once per virtual memory mapping where
    /// mappings given access lie back to back (a copy may span them, as on the H200).
    /// Nothing is called unless every byte is reachable: then the error of
    /// [`Memory::at`].
    fn each_piece(
        &mut self,
        address: u64,
        len: usize,
        mut f: impl FnMut(usize, *mut u8, usize),
    ) -> Result<(), CUresult> {
        let refused = match self.at(address, len) {
            Ok(p) => {
                f(0, p, len);
                return Ok(());
            }
            Err(e) => e,
        };
        for (offset, p, n) in self.mapped_pieces(address, len).ok_or(refused)? {
            f(offset, p, n);
        }
        Ok(())
    }

    /// The pieces of `len` bytes at `address` over consecutive mappings given access; None
    /// where a byte lies outside them.
    fn mapped_pieces(&mut self, address: u64, len: usize) -> Option<Vec<(usize, *mut u8, usize)>> {
        let mut pieces = Vec::new();
        let mut done = 0;
        while done < len {
            let at = address.checked_add(done as u64)?;
            let (start, m) = self.containing(at)?;
            let backing = m.backing.as_ref().filter(|_| m.kind == AllocationKind::Mapped)?;
            let offset = usize::try_from(at - start).ok()?;
            let n = m.size.checked_sub(offset)?.min(len - done);
            // SAFETY: offset < size: inside the mapping's backing.
            pieces.push((done, unsafe { backing.as_ptr().add(offset) }, n));
            done += n;
        }
        Some(pieces)
    }

    /// Copies `len` bytes from host memory to `dst`.
    pub(crate) fn copy_to_device(&mut self, dst: u64, src: *const u8, len: usize) -> Result<(), CUresult> {
        let s = self;
        s.host_range(src as usize, len)?;
        // SAFETY: `src` is the program's host buffer of `len` bytes (not device memory,
        // checked), each piece has `n` bytes (checked); distinct allocations.
        s.each_piece(dst, len, |offset, d, n| unsafe { std::ptr::copy_nonoverlapping(src.add(offset), d, n) })
    }

    /// Copies `len` bytes from `src` to host memory.
    pub(crate) fn copy_to_host(&mut self, dst: *mut u8, src: u64, len: usize) -> Result<(), CUresult> {
        let s = self;
        s.host_range(dst as usize, len)?;
        // SAFETY: as in copy_to_device, the other way.
        s.each_piece(src, len, |offset, p, n| unsafe { std::ptr::copy_nonoverlapping(p, dst.add(offset), n) })
    }

    /// Copies `len` bytes between device ranges (which may overlap).
    pub(crate) fn copy_device(&mut self, dst: u64, src: u64, len: usize) -> Result<(), CUresult> {
        let s = self;
        if let (Ok(from), Ok(to)) = (s.at(src, len), s.at(dst, len)) {
            // SAFETY: both ranges have `len` bytes (checked); `copy` allows overlap.
            unsafe { std::ptr::copy(from, to, len) };
            return Ok(());
        }
        // Across mappings: through a host copy (which also allows overlap). The
        // destination is checked before anything is read.
        s.each_piece(dst, len, |_, _, _| {})?;
        let mut between = vec![0u8; len];
        s.copy_to_host_unchecked(&mut between, src)?;
        s.each_piece(dst, len, |offset, d, n| {
            // SAFETY: `d` has `n` bytes (checked); `between` has `offset + n`.
            unsafe { std::ptr::copy_nonoverlapping(between.as_ptr().add(offset), d, n) }
        })
    }

    /// Copies `dst.len()` bytes at `src` into a buffer of the stand-in's own.
    fn copy_to_host_unchecked(&mut self, dst: &mut [u8], src: u64) -> Result<(), CUresult> {
        let to = dst.as_mut_ptr();
        // SAFETY: `to` has `offset + n` bytes; `p` has `n` bytes (checked).
        self.each_piece(src, dst.len(), |offset, p, n| unsafe { std::ptr::copy_nonoverlapping(p, to.add(offset), n) })
    }

    /// Sets `len` bytes at `dst` to `value`.
    pub(crate) fn set(&mut self, dst: u64, value: u8, len: usize) -> Result<(), CUresult> {
        // SAFETY: each piece has `n` bytes (checked).
        self.each_piece(dst, len, |_, to, n| unsafe { std::ptr::write_bytes(to, value, n) })
    }

    /// CUDA_ERROR_INVALID_VALUE for a null host pointer or one into device address ranges.
    fn host_range(&mut self, p: usize, len: usize) -> Result<(), CUresult> {
        if p == 0 || self.is_device(p, len) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    }

    /// The start and size of the live allocation containing `address`
    /// (`cuMemGetAddressRange`); CUDA_ERROR_NOT_FOUND outside every live allocation (facts).
    pub(crate) fn range(&mut self, address: u64) -> Result<(u64, usize), CUresult> {
        let s = self;
        match s.containing(address) {
            Some((start, m)) if m.backing.is_some() => Ok((start, m.size)),
            _ => Err(CUresult::CUDA_ERROR_NOT_FOUND),
        }
    }

    /// The live device allocation or pinned host buffer containing `address`.
    pub(crate) fn describe(&mut self, address: u64) -> Option<PointerInfo> {
        let s = self;
        if let Some((start, m)) = s.containing(address).filter(|(_, m)| m.backing.is_some()) {
            let (kind, size, owner, pool) = (m.kind, m.size, m.owner, m.pool);
            let sync_memops = s.sync_memops.contains(&start);
            return Some(PointerInfo { host: false, kind, start, size, owner, pool, sync_memops });
        }
        let (start, b) = s.pinned_at(address)?;
        let kind = if b.registered { AllocationKind::Registered } else { AllocationKind::Pinned };
        let sync_memops = s.sync_memops.contains(&start);
        Some(PointerInfo { host: true, kind, start, size: b.size, owner: b.owner, pool: None, sync_memops })
    }

    /// Bytes of live allocations from `pool` now, and the most there were since the last
    /// [`reset_pool_high`].
    pub(crate) fn pool_use(&self, pool: u64) -> (usize, usize) {
        self.pool_use.get(&pool).copied().unwrap_or_default()
    }

    /// Resets `pool`'s high mark to its current use.
    pub(crate) fn reset_pool_high(&mut self, pool: u64) {
        if let Some((used, high)) = self.pool_use.get_mut(&pool) {
            *high = *used;
        }
    }

    /// `(free, total)` device memory.
    pub(crate) fn info(&self) -> (usize, usize) {
        let used = self.used;
        (DEVICE_TOTAL_MEM.saturating_sub(used), DEVICE_TOTAL_MEM)
    }

    /// The pool and size of the live allocation starting at `address`, for export.
    pub(crate) fn exportable(&self, address: u64) -> Result<(Option<u64>, usize), CUresult> {
        let s = self;
        match s.device.get(&address) {
            Some(m) if m.backing.is_some() && m.import_of.is_none() => Ok((m.pool, m.size)),
            _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    }

    /// Maps the live allocation at `source` at a new address (an IPC import); one of its
    /// imports still mapped makes it a duplicate import in the ledger.
    pub(crate) fn import(&mut self, source: u64) -> Result<u64, CUresult> {
        let s = self;
        let (size, owner, backing) = match s.device.get(&source) {
            Some(Mapping { size, owner, backing: Some(b), import_of: None, .. }) => (*size, *owner, Arc::clone(b)),
            _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        };
        let address = s.reserve(size)?;
        let kind = AllocationKind::Import;
        s.device.insert(
            address,
            Mapping { size, owner, kind, backing: Some(backing), pool: None, import_of: Some(source), freeing: false },
        );
        let imports = s.imports.entry(source).or_default();
        if !imports.is_empty() {
            s.duplicate_imports.push(address);
        }
        imports.push(address);
        Ok(address)
    }

    /// Allocates `size` bytes of managed memory for `owner`, at the host address of its
    /// memory (the host and the device use one address): CUDA_ERROR_INVALID_VALUE for
    /// size 0, CUDA_ERROR_OUT_OF_MEMORY as [`Memory::alloc`].
    pub(crate) fn alloc_managed(&mut self, size: usize, owner: Owner) -> Result<u64, CUresult> {
        if size == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        if size > DEVICE_TOTAL_MEM.saturating_sub(self.used) {
            return Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        }
        let backing = Arc::new(Backing::zeroed(size).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?);
        let address = backing.as_ptr() as u64;
        self.used += size;
        let kind = AllocationKind::Managed;
        let m = Mapping { size, owner, kind, backing: Some(backing), pool: None, import_of: None, freeing: false };
        self.device.insert(address, m);
        Ok(address)
    }

    /// A fresh address range of `size` bytes with no memory behind it (a virtual memory
    /// reservation, `model/vmm.rs`); never handed out again.
    pub(crate) fn reserve_addresses(&mut self, size: usize) -> Result<u64, CUresult> {
        self.reserve(size)
    }

    /// Makes `[address, address + size)` device memory over `backing` (a virtual memory
    /// mapping given access): CUDA_ERROR_INVALID_VALUE if a live range overlaps it. The
    /// memory belongs to its physical allocation, so it counts nothing towards the used
    /// memory here.
    pub(crate) fn map_backing(
        &mut self,
        address: u64,
        size: usize,
        owner: Owner,
        backing: Arc<Backing>,
    ) -> Result<(), CUresult> {
        let s = self;
        let last = address.checked_add(size as u64 - 1).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let live = |m: &Mapping| m.backing.is_some();
        if s.containing(address).is_some_and(|(_, m)| live(m)) || s.device.range(address..=last).any(|(_, m)| live(m)) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let kind = AllocationKind::Mapped;
        s.device.insert(
            address,
            Mapping { size, owner, kind, backing: Some(backing), pool: None, import_of: None, freeing: false },
        );
        Ok(())
    }

    /// Removes the range [`Memory::map_backing`] made at `address`: the address is unknown
    /// again, as unmapped virtual memory is (not freed memory).
    pub(crate) fn unmap_backing(&mut self, address: u64) {
        if self.device.get(&address).is_some_and(|m| m.kind == AllocationKind::Mapped) {
            self.device.remove(&address);
        }
    }

    /// Allocates `size` bytes of pinned host memory ([`AllocationKind::Pinned`]) for `owner`;
    /// size 0 gives NULL, as a real driver does (facts). More than the host's physical
    /// memory is CUDA_ERROR_OUT_OF_MEMORY without an attempt (it cannot be page-locked;
    /// allocating it could succeed, overcommitted, and fail only when touched).
    pub(crate) fn alloc_pinned(&mut self, size: usize, owner: Owner, flags: u32) -> Result<*mut u8, CUresult> {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        if size > crate::run::backing::physical_memory() {
            return Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        }
        let backing = Backing::zeroed(size).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let p = backing.as_ptr();
        let registered = false;
        self.pinned
            .insert(p as u64, Pinned { size, owner, backing: Arc::new(backing), freed: false, flags, registered });
        Ok(p)
    }

    /// Registers the program's `size` bytes at `p` as pinned, mapped host memory
    /// (`cuMemHostRegister`): CUDA_ERROR_INVALID_VALUE for NULL or size 0, and
    /// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED if it overlaps live pinned or registered
    /// memory.
    pub(crate) fn register_host(&mut self, p: *mut u8, size: usize, owner: Owner, flags: u32) -> Result<(), CUresult> {
        let ptr = std::ptr::NonNull::new(p).filter(|_| size != 0).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let (start, last) = (p as u64, (p as u64).saturating_add(size as u64 - 1));
        let overlaps = self.pinned_at(start).is_some()
            || self.pinned.range(start..=last).any(|(_, b)| !b.freed)
            || self.pinned_at(last).is_some();
        if overlaps {
            return Err(CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        }
        let backing = Arc::new(Backing::program(ptr));
        self.pinned.insert(start, Pinned { size, owner, backing, freed: false, flags, registered: true });
        Ok(())
    }

    /// Unregisters the memory registered at `p` (its first address):
    /// CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED for any other address.
    pub(crate) fn unregister_host(&mut self, p: u64) -> Result<(), CUresult> {
        match self.pinned.get(&p) {
            Some(b) if b.registered => {
                self.pinned.remove(&p);
                Ok(())
            }
            _ => {
                // An address inside a registration is INVALID_VALUE on the H200; one
                // outside every registration is HOST_MEMORY_NOT_REGISTERED.
                let inside = self
                    .pinned
                    .range(..p)
                    .next_back()
                    .is_some_and(|(start, b)| b.registered && !b.freed && p - start < b.size as u64);
                Err(if inside {
                    CUresult::CUDA_ERROR_INVALID_VALUE
                } else {
                    CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
                })
            }
        }
    }

    /// The flags of the live pinned allocation that holds `p`; CUDA_ERROR_INVALID_VALUE for
    /// any other address.
    pub(crate) fn pinned_flags(&self, p: u64) -> Result<u32, CUresult> {
        let s = self;
        let (start, b) = s.pinned.range(..=p).next_back().ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if b.freed || p - start >= b.size as u64 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(b.flags)
    }

    /// Frees pinned memory: a freed buffer is CUDA_ERROR_INVALID_VALUE and a double free, an
    /// unknown pointer CUDA_ERROR_INVALID_VALUE.
    pub(crate) fn free_pinned(&mut self, p: u64) -> Result<(), CUresult> {
        let s = self;
        let b = s.pinned.get_mut(&p).filter(|b| !b.registered).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if std::mem::replace(&mut b.freed, true) {
            s.double_frees.push(p);
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    }

    /// Appends the live allocations.
    pub(crate) fn live(&self, out: &mut Vec<Allocation>) {
        let s = self;
        out.extend(s.device.iter().filter_map(|(&address, m)| {
            m.backing.as_ref().map(|_| Allocation { address, size: m.size, kind: m.kind })
        }));
        out.extend(s.pinned.iter().filter(|(_, b)| !b.freed).map(|(&address, b)| Allocation {
            address,
            size: b.size,
            kind: if b.registered { AllocationKind::Registered } else { AllocationKind::Pinned },
        }));
    }

    /// Forgets the freed allocations (see [`crate::ledger_reset`]) and the mistakes kept:
    /// freed address ranges become unknown and the memory kept for freed pinned buffers is
    /// released. Live allocations stay as they are.
    pub(crate) fn forget_freed(&mut self) {
        let s = self;
        s.device.retain(|_, m| m.backing.is_some());
        s.retired.clear();
        s.reusable.clear();
        s.pinned.retain(|_, b| !b.freed);
        s.double_frees.clear();
        s.use_after_free.clear();
        s.duplicate_imports.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    fn owner() -> Owner {
        Owner { ctx: 1, device: 0 }
    }

    #[test]
    fn copies_reach_the_allocation_and_mistakes_are_kept() {
        let mut m = Memory::new();
        let a = m.alloc(16, AllocationKind::Device, None, owner()).unwrap();
        let data = [7u8; 16];
        m.copy_to_device(a, data.as_ptr(), 16).unwrap();
        let mut back = [0u8; 16];
        m.copy_to_host(back.as_mut_ptr(), a, 16).unwrap();
        assert_eq!(back, data);
        // Past the end: refused, nothing recorded.
        assert_eq!(m.copy_to_host(back.as_mut_ptr(), a + 8, 16), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        m.free(a).unwrap();
        assert_eq!(m.free(a), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(m.double_frees, [a]);
        assert_eq!(m.copy_to_host(back.as_mut_ptr(), a, 4), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(m.use_after_free, [a]);
        m.forget_freed();
        assert!(m.double_frees.is_empty() && m.use_after_free.is_empty());
        assert_eq!(m.free(a), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(m.double_frees.is_empty(), "a forgotten address is unknown, not freed twice");
    }

    #[test]
    fn a_second_import_of_one_export_is_a_duplicate_and_one_free_unmaps_both() {
        let mut m = Memory::new();
        let a = m.alloc(64, AllocationKind::Pool, Some(9), owner()).unwrap();
        let (i1, i2) = (m.import(a).unwrap(), m.import(a).unwrap());
        assert_ne!(i1, i2);
        assert_eq!(m.duplicate_imports, [i2]);
        m.free(i1).unwrap();
        assert!(m.describe(i2).is_none(), "freeing one import unmapped the other");
        assert!(m.describe(a).is_some(), "the exporter's allocation stays");
        assert_eq!(m.pool_use(9), (64, 64));
    }
}
