//! Memory pools: `cuMemPoolCreate`/`Destroy`, the per-device default pool,
//! `cuMemAllocFromPoolAsync` and `cuMemPoolTrimTo`. IPC export and import are in `ipc.rs`.
//!
//! Destroying a pool that still has allocations succeeds and leaves them live in the
//! ledger (the leak stays visible); they can still be used and freed.

use std::ffi::c_int;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, put, status, to_ptr, write};
use crate::model::memory::AllocationKind;
use crate::model::pool::Pool;
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

/// The live pool `handle` names (CUDA_ERROR_INVALID_VALUE otherwise).
pub(crate) fn find(w: &World, handle: u64) -> Result<Pool, CUresult> {
    lock(&w.pools).pools.get(handle).copied()
}

/// Adds a pool, returning its handle.
pub(crate) fn add(w: &World, pool: Pool) -> u64 {
    lock(&w.pools).pools.insert(pool)
}

/// The default pool of `device`, made on first use.
pub(crate) fn default_pool(w: &World, device: c_int) -> Result<u64, CUresult> {
    if !valid_device(w, device) {
        return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
    let mut s = lock(&w.pools);
    if let Some(&h) = s.defaults.get(&device) {
        return Ok(h);
    }
    let h = s.pools.insert(Pool { device, exportable: false, imported_from: None, default: true });
    s.defaults.insert(device, h);
    Ok(h)
}

fn create(w: &World, pool_out: *mut CUmemoryPool, props: *const CUmemPoolProps) -> Result<(), CUresult> {
    non_null(pool_out)?;
    non_null(props)?;
    // SAFETY: a non-null pointer to the caller's properties.
    let props = unsafe { &*props };
    type H = CUmemAllocationHandleType;
    let exportable = match props.handleTypes {
        H::CU_MEM_HANDLE_TYPE_NONE => false,
        H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => true,
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    // SAFETY: every member of the location union is plain integers.
    let id = unsafe { props.location.__bindgen_anon_1.id };
    type L = CUmemLocationType;
    let device = match props.location.type_ {
        L::CU_MEM_LOCATION_TYPE_DEVICE if !valid_device(w, id) => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        L::CU_MEM_LOCATION_TYPE_DEVICE => id,
        L::CU_MEM_LOCATION_TYPE_HOST
        | L::CU_MEM_LOCATION_TYPE_HOST_NUMA
        | L::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => 0,
        // facts: an unknown location type is CUDA_ERROR_INVALID_VALUE.
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    if props.allocType == CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let h = add(w, Pool { device, exportable, imported_from: None, default: false });
    write(pool_out, to_ptr(h))
}

/// `cuMemPoolCreate`: a device location with a valid device id, or a host one; handle
/// types NONE or POSIX_FILE_DESCRIPTOR.
pub(crate) unsafe fn cu_mem_pool_create(
    w: &World,
    pool_out: *mut CUmemoryPool,
    props: *const CUmemPoolProps,
) -> CUresult {
    status(create(w, pool_out, props))
}

/// `cuMemPoolDestroy`: a default pool cannot be destroyed (CUDA_ERROR_INVALID_VALUE); a
/// destroyed one: CUDA_ERROR_INVALID_VALUE and a double destroy in the ledger.
pub(crate) unsafe fn cu_mem_pool_destroy(w: &World, pool: CUmemoryPool) -> CUresult {
    let h = from_ptr(pool);
    let mut s = lock(&w.pools);
    if s.pools.get(h).is_ok_and(|p| p.default) {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    status(s.pools.remove(h).map(drop))
}

pub(crate) unsafe fn cu_device_get_default_mem_pool(w: &World, pool_out: *mut CUmemoryPool, dev: CUdevice) -> CUresult {
    if pool_out.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    match default_pool(w, dev) {
        Ok(h) => put(pool_out, to_ptr(h)),
        Err(s) => s,
    }
}

/// `cuMemGetDefaultMemPool`: the default pool of a device location for pinned
/// allocations (the only kind the stand-in emulates: others are CUDA_ERROR_NOT_SUPPORTED).
pub(crate) unsafe fn cu_mem_get_default_mem_pool(
    w: &World,
    pool_out: *mut CUmemoryPool,
    location: *mut CUmemLocation,
    kind: CUmemAllocationType,
) -> CUresult {
    let r = non_null(pool_out).and_then(|()| non_null(location)).and_then(|()| {
        // SAFETY: a non-null location from the caller.
        let loc = unsafe { *location };
        if kind != CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        if loc.type_ != CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        // SAFETY: a device location's union holds its id.
        let device = unsafe { loc.__bindgen_anon_1.id };
        write(pool_out, to_ptr(default_pool(w, device)?))
    });
    status(r)
}

/// `cuMemAllocFromPoolAsync`: at once. Not from an imported pool. Size 0 gives 0 (facts).
/// On a capturing stream: an allocation node of the pool's device (`graph_mem.rs`).
pub(crate) unsafe fn cu_mem_alloc_from_pool_async(
    w: &World,
    dptr: *mut CUdeviceptr,
    size: usize,
    pool: CUmemoryPool,
    s: CUstream,
) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        let h = from_ptr(pool);
        if find(w, h)?.imported_from.is_some() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let t = stream::resolve(w, s)?;
        // Captured: an allocation node of the pool's device (`graph_mem.rs`).
        let owner = crate::model::memory::Owner::of(&t.ctx);
        let device = find(w, h)?.device;
        if let Some(a) = crate::graph_mem::capture_alloc(w, s, size, device, owner)? {
            return write(dptr, a);
        }
        if size == 0 {
            return write(dptr, 0);
        }
        let a = lock(&w.memory).alloc(size, AllocationKind::Pool, Some(h), crate::model::memory::Owner::of(&t.ctx))?;
        w.sanitizer.allocated(a, size);
        write(dptr, a)
    });
    status(r)
}

/// `cuMemPoolTrimTo`: nothing to trim (freed memory is released at once).
pub(crate) unsafe fn cu_mem_pool_trim_to(w: &World, pool: CUmemoryPool, _keep: usize) -> CUresult {
    status(find(w, from_ptr(pool)).map(drop))
}

/// `cuMemPoolSetAccess`: checks the pool, the descriptors (device locations of existing
/// devices, known flags) and accepts them. Host-backed memory is reachable from every
/// device, so nothing else changes.
pub(crate) unsafe fn cu_mem_pool_set_access(
    w: &World,
    pool: CUmemoryPool,
    map: *const CUmemAccessDesc,
    count: usize,
) -> CUresult {
    let check = || -> Result<(), CUresult> {
        let own = find(w, from_ptr(pool))?.device;
        if count == 0 || map.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller passes `count` descriptors at `map` (non-null, checked above).
        let descs = unsafe { std::slice::from_raw_parts(map, count) };
        for d in descs {
            // SAFETY: every CUmemLocation variant starts with its id; reading it as an int is valid.
            let id = unsafe { d.location.__bindgen_anon_1.id };
            let known = [
                CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE,
                CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
                CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            ];
            if d.location.type_ != CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE
                || !valid_device(w, id)
                || !known.contains(&d.flags)
            {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            // The pool's own device keeps read-write: taking it away is refused
            // (`pool_access.set_access_own_device_none`, CUDA_ERROR_INVALID_DEVICE on the H200).
            if id == own && d.flags != CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE {
                return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
            }
        }
        Ok(())
    };
    status(check())
}
