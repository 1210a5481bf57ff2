//! A location's current pool (`cuMemGetMemPool`/`cuMemSetMemPool`, 13.0) and which devices
//! may use a pool's memory (`cuMemPoolSetAccess`/`cuMemPoolGetAccess`).
//!
//! The stand-in's pools hold pinned memory of a device location (`model/pool.rs`), so the
//! current pool of a device location for pinned memory is the device's current pool, the
//! one `cuDeviceSetMemPool` sets (`pool_attr.rs`). For the other locations and allocation
//! types the CUDA documentation allows (host, host NUMA, managed memory), getting answers
//! as `cuMemGetDefaultMemPool` does for them (CUDA_ERROR_NOT_SUPPORTED: the stand-in has
//! no host or managed pools, where the H200 has; a listed difference) and setting answers
//! CUDA_ERROR_INVALID_VALUE (no pool of the stand-in is one of them); any other pair is
//! CUDA_ERROR_INVALID_VALUE.
//!
//! A pool's own device always has read-write access (taking it away:
//! CUDA_ERROR_INVALID_DEVICE); other devices have what `cuMemPoolSetAccess` last gave them
//! (none at first); the host has none. Access changes nothing else here (the memory is
//! host memory, reachable from every device). Checked against the H200
//! (`pool_access.*`).

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::run::lock::lock;
use crate::world::World;
use crate::{pool, pool_attr};

type L = CUmemLocationType;
type T = CUmemAllocationType;

/// What a location and allocation type name: a device's pinned memory (its ordinal), or
/// another pair the CUDA documentation allows (`None`). Any other pair:
/// CUDA_ERROR_INVALID_VALUE, as are a device location of no device.
fn target(w: &World, location: &CUmemLocation, kind: T) -> Result<Option<CUdevice>, CUresult> {
    let invalid = Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    let host = matches!(location.type_, L::CU_MEM_LOCATION_TYPE_HOST | L::CU_MEM_LOCATION_TYPE_HOST_NUMA);
    match (location.type_, kind) {
        (L::CU_MEM_LOCATION_TYPE_DEVICE, T::CU_MEM_ALLOCATION_TYPE_PINNED | T::CU_MEM_ALLOCATION_TYPE_MANAGED) => {
            // SAFETY: a device location's union holds the device ordinal.
            let id = unsafe { location.__bindgen_anon_1.id };
            if !valid_device(w, id) {
                return invalid;
            }
            Ok((kind == T::CU_MEM_ALLOCATION_TYPE_PINNED).then_some(id))
        }
        (_, T::CU_MEM_ALLOCATION_TYPE_PINNED) if host => Ok(None),
        (L::CU_MEM_LOCATION_TYPE_NONE, T::CU_MEM_ALLOCATION_TYPE_MANAGED) => Ok(None),
        (_, T::CU_MEM_ALLOCATION_TYPE_MANAGED) if host => Ok(None),
        _ => invalid,
    }
}

/// `cuMemGetMemPool`: the current pool of a device location for pinned memory (the last
/// one `cuMemSetMemPool` or `cuDeviceSetMemPool` set while it lives, else the default
/// pool). A null argument or a pair the documentation does not allow:
/// CUDA_ERROR_INVALID_VALUE, nothing written.
pub(crate) unsafe fn cu_mem_get_mem_pool(
    w: &World,
    pool_out: *mut CUmemoryPool,
    location: *mut CUmemLocation,
    kind: CUmemAllocationType,
) -> CUresult {
    let r = non_null(pool_out).and_then(|()| non_null(location)).and_then(|()| {
        // SAFETY: a non-null location from the caller.
        let loc = unsafe { *location };
        match target(w, &loc, kind)? {
            Some(device) => write(pool_out, to_ptr(pool_attr::current_pool(w, device)?)),
            // SAFETY: the caller's pointers, checked non-null above.
            None => match unsafe { pool::cu_mem_get_default_mem_pool(w, pool_out, location, kind) } {
                CUresult::CUDA_SUCCESS => Ok(()),
                e => Err(e),
            },
        }
    });
    status(r)
}

/// `cuMemSetMemPool`: for a device location and pinned memory, as `cuDeviceSetMemPool` (a
/// live pool of that device; CUDA_ERROR_INVALID_VALUE otherwise, also for the other
/// allowed pairs once the pool is found live). Nothing changes on error.
pub(crate) unsafe fn cu_mem_set_mem_pool(
    w: &World,
    location: *mut CUmemLocation,
    kind: CUmemAllocationType,
    pool: CUmemoryPool,
) -> CUresult {
    let r = non_null(location).and_then(|()| {
        // SAFETY: a non-null location from the caller.
        let loc = unsafe { *location };
        let device = target(w, &loc, kind)?;
        let h = from_ptr(pool);
        let p = pool::find(w, h)?;
        // The stand-in's pools are all of a device's pinned memory: a pool for another
        // location or type is not one of them (CUDA_ERROR_INVALID_VALUE, as the H200
        // answers a device pool set for the host or for managed memory).
        let Some(device) = device else {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        };
        if p.device != device || p.imported_from.is_some() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        lock(&w.pool_settings).current.insert(device, h);
        Ok(())
    });
    status(r)
}

/// `cuMemPoolSetAccess`: checked as `pool.rs` checks it, then each device's access is
/// kept for `cuMemPoolGetAccess` (the pool's own device keeps read-write).
pub(crate) unsafe fn cu_mem_pool_set_access(
    w: &World,
    pool: CUmemoryPool,
    map: *const CUmemAccessDesc,
    count: usize,
) -> CUresult {
    // SAFETY: forwarded from the program: `map` holds `count` descriptors (or is null).
    let checked = unsafe { pool::cu_mem_pool_set_access(w, pool, map, count) };
    if checked != CUresult::CUDA_SUCCESS {
        return checked;
    }
    let h = from_ptr(pool);
    let own = pool::find(w, h).map(|p| p.device).ok();
    // SAFETY: checked above: `map` is non-null and holds `count` descriptors.
    let descs = unsafe { std::slice::from_raw_parts(map, count) };
    let mut m = lock(&w.memory);
    for d in descs {
        // SAFETY: the descriptors were checked to be device locations: the union holds the id.
        let device = unsafe { d.location.__bindgen_anon_1.id };
        if Some(device) != own {
            m.pool_access.insert((h, device), d.flags.0);
        }
    }
    CUresult::CUDA_SUCCESS
}

/// `cuMemPoolGetAccess`: read-write for the pool's own device, else what
/// `cuMemPoolSetAccess` gave the device (none at first); none for the host. A null
/// argument, an unknown pool or a location that is neither the host nor a device of this
/// driver: CUDA_ERROR_INVALID_VALUE, nothing written.
pub(crate) unsafe fn cu_mem_pool_get_access(
    w: &World,
    flags: *mut CUmemAccess_flags,
    pool: CUmemoryPool,
    location: *mut CUmemLocation,
) -> CUresult {
    let r = non_null(flags).and_then(|()| non_null(location)).and_then(|()| {
        let h = from_ptr(pool);
        let p = pool::find(w, h)?;
        // SAFETY: a non-null location from the caller.
        let loc = unsafe { *location };
        // SAFETY: every CUmemLocation variant starts with its id.
        let id = unsafe { loc.__bindgen_anon_1.id };
        // The host has no access to a device pool's memory (`pool_access.get_access_host_location`).
        if matches!(loc.type_, L::CU_MEM_LOCATION_TYPE_HOST | L::CU_MEM_LOCATION_TYPE_HOST_NUMA) {
            return write(flags, CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE);
        }
        if loc.type_ != L::CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(w, id) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let value = if id == p.device {
            CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE.0
        } else {
            lock(&w.memory).pool_access.get(&(h, id)).copied().unwrap_or(0)
        };
        write(flags, CUmemAccess_flags(value))
    });
    status(r)
}
