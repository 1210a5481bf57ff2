//! Memory pool attributes (`cuMemPoolGetAttribute`/`SetAttribute`) and each device's
//! current pool (`cuDeviceGetMemPool`/`SetMemPool`), which `cuMemAllocAsync` allocates
//! from. Answers as driver-facts.md ("Edge cases": queries work, unknown attribute
//! numbers are CUDA_ERROR_INVALID_VALUE).
//!
//! Freed memory goes back at once (nothing is kept for reuse), so a pool's reserved
//! memory is its used memory.

use std::ffi::{c_int, c_void};

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::pool::DEFAULT;
use crate::pool;
use crate::run::lock::lock;
use crate::world::World;

/// The current pool of `device`: the one set with `cuDeviceSetMemPool` while it lives,
/// else the default pool.
pub(crate) fn current_pool(w: &World, device: c_int) -> Result<u64, CUresult> {
    let set = lock(&w.pool_settings).current.get(&device).copied();
    match set {
        Some(h) if pool::find(w, h).is_ok() => Ok(h),
        _ => pool::default_pool(w, device),
    }
}

type A = CUmemPool_attribute;

/// `attr`'s value in `pool`, as the 64-bit value or the int the attribute takes.
enum Value {
    Int(c_int),
    U64(u64),
}

fn get(w: &World, h: u64, attr: A) -> Result<Value, CUresult> {
    let p = pool::find(w, h)?;
    let s = lock(&w.pool_settings).settings.get(&h).copied().unwrap_or(DEFAULT);
    let (used, high) = lock(&w.memory).pool_use(h);
    let (used, high) = (used as u64, high as u64);
    let v = match attr {
        A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES => Value::Int(s.follow_event_dependencies),
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC => Value::Int(s.allow_opportunistic),
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => Value::Int(s.allow_internal_dependencies),
        A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => Value::U64(s.release_threshold),
        A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT | A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT => Value::U64(used),
        A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | A::CU_MEMPOOL_ATTR_USED_MEM_HIGH => Value::U64(high),
        A::CU_MEMPOOL_ATTR_ALLOCATION_TYPE => Value::Int(CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED.0 as c_int),
        A::CU_MEMPOOL_ATTR_EXPORT_HANDLE_TYPES => Value::Int(if p.exportable {
            CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0 as c_int
        } else {
            0
        }),
        A::CU_MEMPOOL_ATTR_LOCATION_ID => Value::Int(p.device),
        A::CU_MEMPOOL_ATTR_LOCATION_TYPE => Value::Int(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE.0 as c_int),
        A::CU_MEMPOOL_ATTR_MAX_POOL_SIZE => Value::U64(0),
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    Ok(v)
}

/// `cuMemPoolGetAttribute`: `value` is an int or a `cuuint64_t`, as the attribute takes.
pub(crate) unsafe fn cu_mem_pool_get_attribute(w: &World, pool: CUmemoryPool, attr: A, value: *mut c_void) -> CUresult {
    let r = non_null(value).and_then(|()| match get(w, from_ptr(pool), attr)? {
        Value::Int(v) => write(value.cast::<c_int>(), v),
        Value::U64(v) => write(value.cast::<u64>(), v),
    });
    status(r)
}

fn set(w: &World, h: u64, attr: A, value: *mut c_void) -> Result<(), CUresult> {
    non_null(value)?;
    pool::find(w, h)?;
    // SAFETY: a non-null pointer to the value of the attribute's type (int or cuuint64_t).
    let int = || unsafe { value.cast::<c_int>().read() };
    // SAFETY: as above.
    let u64 = || unsafe { value.cast::<u64>().read() };
    let mut state = lock(&w.pool_settings);
    let s = state.settings.entry(h).or_insert(DEFAULT);
    match attr {
        A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES => s.follow_event_dependencies = int(),
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC => s.allow_opportunistic = int(),
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => s.allow_internal_dependencies = int(),
        A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => s.release_threshold = u64(),
        // The high marks can only be reset (to the current use), with 0.
        A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | A::CU_MEMPOOL_ATTR_USED_MEM_HIGH if u64() == 0 => {
            lock(&w.memory).reset_pool_high(h)
        }
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
    Ok(())
}

/// `cuMemPoolSetAttribute`: the reuse flags and the release threshold are kept (they
/// change nothing else); the high marks are reset with 0; anything else is
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_pool_set_attribute(w: &World, pool: CUmemoryPool, attr: A, value: *mut c_void) -> CUresult {
    status(set(w, from_ptr(pool), attr, value))
}

pub(crate) unsafe fn cu_device_get_mem_pool(w: &World, pool_out: *mut CUmemoryPool, dev: CUdevice) -> CUresult {
    status(non_null(pool_out).and_then(|()| write(pool_out, to_ptr(current_pool(w, dev)?))))
}

/// `cuDeviceSetMemPool`: a live pool of that device (CUDA_ERROR_INVALID_VALUE otherwise).
pub(crate) unsafe fn cu_device_set_mem_pool(w: &World, dev: CUdevice, pool: CUmemoryPool) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let h = from_ptr(pool);
    let r = pool::find(w, h).and_then(|p| {
        if p.device != dev || p.imported_from.is_some() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        lock(&w.pool_settings).current.insert(dev, h);
        Ok(())
    });
    status(r)
}
