//! Pointer queries: `cuPointerGetAttribute`, `cuPointerGetAttributes`,
//! `cuPointerSetAttribute` (`CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` only, kept per allocation and
//! read back; every memory operation here is synchronous with respect to it already) and
//! `cuMemHostGetDevicePointer`, over the live device allocations (managed memory and
//! virtual memory mappings included) and pinned or registered host buffers (`memory.rs`). Answers as driver-facts.md ("Edge cases": device memory type 2, host
//! type 1, range start, context; a pointer the driver did not make and an unknown
//! attribute are CUDA_ERROR_INVALID_VALUE). Pinned memory is mapped at its own address:
//! its device pointer is its host address.

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::model::memory::{AllocationKind, PointerInfo};
use crate::run::lock::lock;
use crate::world::World;
use crate::{pool, vmm};

type P = CUpointer_attribute;

/// How many bytes the value of `attr` takes (4 or 8); `None` for an attribute the
/// stand-in does not know.
fn width(attr: P) -> Option<usize> {
    let w = match attr {
        P::CU_POINTER_ATTRIBUTE_MEMORY_TYPE
        | P::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
        | P::CU_POINTER_ATTRIBUTE_IS_MANAGED
        | P::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        | P::CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE
        | P::CU_POINTER_ATTRIBUTE_MAPPED
        | P::CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE
        | P::CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => 4,
        P::CU_POINTER_ATTRIBUTE_CONTEXT
        | P::CU_POINTER_ATTRIBUTE_DEVICE_POINTER
        | P::CU_POINTER_ATTRIBUTE_HOST_POINTER
        | P::CU_POINTER_ATTRIBUTE_BUFFER_ID
        | P::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
        | P::CU_POINTER_ATTRIBUTE_RANGE_SIZE
        | P::CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES
        | P::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE
        | P::CU_POINTER_ATTRIBUTE_MAPPING_SIZE
        | P::CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR
        | P::CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => 8,
        _ => return None,
    };
    Some(w)
}

/// The value of `attr` for `address` in the allocation `i`: CUDA_ERROR_INVALID_VALUE for
/// the host pointer of memory the host cannot address and for an unknown attribute.
/// Managed memory is device memory (type 2) that the host addresses at the same pointer;
/// a virtual memory mapping belongs to no context, is not legacy-IPC capable, and may be
/// exported as its physical allocation's handle types.
fn value(w: &World, i: &PointerInfo, address: u64, attr: P) -> Result<u64, CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    let memory_type = if i.host { CUmemorytype::CU_MEMORYTYPE_HOST } else { CUmemorytype::CU_MEMORYTYPE_DEVICE };
    let (managed, mapped) = (i.kind == AllocationKind::Managed, i.kind == AllocationKind::Mapped);
    let v = match attr {
        P::CU_POINTER_ATTRIBUTE_CONTEXT if mapped => 0,
        P::CU_POINTER_ATTRIBUTE_CONTEXT => i.owner.ctx,
        P::CU_POINTER_ATTRIBUTE_MEMORY_TYPE => u64::from(memory_type.0),
        P::CU_POINTER_ATTRIBUTE_DEVICE_POINTER => address,
        P::CU_POINTER_ATTRIBUTE_HOST_POINTER if i.host || managed => address,
        P::CU_POINTER_ATTRIBUTE_HOST_POINTER => return Err(invalid),
        P::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS => u64::from(i.sync_memops),
        P::CU_POINTER_ATTRIBUTE_IS_MANAGED => u64::from(managed),
        P::CU_POINTER_ATTRIBUTE_BUFFER_ID | P::CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => i.start,
        P::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => u64::from(i.owner.device.unsigned_abs()),
        P::CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => {
            u64::from(i.kind == AllocationKind::Device || i.kind == AllocationKind::Import)
        }
        P::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR | P::CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => i.start,
        P::CU_POINTER_ATTRIBUTE_RANGE_SIZE | P::CU_POINTER_ATTRIBUTE_MAPPING_SIZE => i.size as u64,
        P::CU_POINTER_ATTRIBUTE_MAPPED => 1,
        P::CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES if mapped => u64::from(vmm::handle_types_at(w, i.start)),
        P::CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES | P::CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => 0,
        P::CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => {
            u64::from(CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS::CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE.0)
        }
        // A pool allocation's pool, while the pool lives.
        P::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => i.pool.filter(|&p| pool::find(w, p).is_ok()).unwrap_or(0),
        _ => return Err(invalid),
    };
    Ok(v)
}

/// Writes `v` to `data` in `width` bytes.
fn store(data: *mut c_void, width: usize, v: u64) -> Result<(), CUresult> {
    match width {
        // The 4-byte attributes hold small values: the truncation keeps them whole.
        4 => write(data.cast::<c_uint>(), v as c_uint),
        _ => write(data.cast::<u64>(), v),
    }
}

fn get_attribute(w: &World, data: *mut c_void, attr: P, address: CUdeviceptr) -> Result<(), CUresult> {
    non_null(data)?;
    let width = width(attr).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let info = lock(&w.memory).describe(address).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    match value(w, &info, address, attr) {
        Ok(v) => store(data, width, v),
        // The H200 writes 0 before refusing the host pointer of device memory
        // (pointer.host_pointer_of_device_memory).
        Err(e) if attr == P::CU_POINTER_ATTRIBUTE_HOST_POINTER => store(data, width, 0).and(Err(e)),
        Err(e) => Err(e),
    }
}

/// `cuPointerGetAttribute`: needs no current context.
pub(crate) unsafe fn cu_pointer_get_attribute(w: &World, data: *mut c_void, attr: P, ptr: CUdeviceptr) -> CUresult {
    status(get_attribute(w, data, attr, ptr))
}

/// `cuPointerGetAttributes`: for a pointer the driver did not make, every value is 0 (the
/// CUDA documentation: no error); an unknown attribute or a null data pointer is
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_pointer_get_attributes(
    w: &World,
    count: c_uint,
    attrs: *mut P,
    data: *mut *mut c_void,
    ptr: CUdeviceptr,
) -> CUresult {
    let r = (|| {
        non_null(attrs)?;
        non_null(data)?;
        let n = usize::try_from(count).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: the caller passes `count` attributes and as many data pointers.
        let (attrs, data) = unsafe { (std::slice::from_raw_parts(attrs, n), std::slice::from_raw_parts(data, n)) };
        let info = lock(&w.memory).describe(ptr);
        for (&attr, &out) in attrs.iter().zip(data) {
            let width = width(attr).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
            let v = info.as_ref().map_or(Ok(0), |i| value(w, i, ptr, attr).or(Ok::<u64, CUresult>(0)))?;
            store(out, width, v)?;
        }
        Ok(())
    })();
    status(r)
}

/// `cuMemHostGetDevicePointer`: the device pointer of pinned memory is its own address;
/// flags must be 0, and a pointer that is not in a live pinned buffer is
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_host_get_device_pointer(
    w: &World,
    pdptr: *mut CUdeviceptr,
    p: *mut c_void,
    flags: c_uint,
) -> CUresult {
    let r = non_null(pdptr).and_then(|()| {
        w.contexts.current()?;
        let address = p as usize as u64;
        match lock(&w.memory).describe(address) {
            Some(i) if i.host && flags == 0 => write(pdptr, address),
            _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    });
    status(r)
}

/// `cuPointerSetAttribute`: `CU_POINTER_ATTRIBUTE_SYNC_MEMOPS` (an `unsigned int`: set when
/// non-zero) of the live allocation holding `ptr` (device memory, or pinned host memory as
/// on the H200, `pointer_set.sync_memops_pinned_host`), read back by
/// `cuPointerGetAttribute`. A null value, any other attribute, or an address that is not
/// memory the driver made: CUDA_ERROR_INVALID_VALUE, nothing changed.
pub(crate) unsafe fn cu_pointer_set_attribute(w: &World, value: *const c_void, attr: P, ptr: CUdeviceptr) -> CUresult {
    let r = non_null(value).and_then(|()| {
        if attr != P::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let mut m = lock(&w.memory);
        let info = m.describe(ptr).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: a non-null pointer to the caller's `unsigned int`.
        let on = unsafe { value.cast::<c_uint>().read() } != 0;
        if on {
            m.sync_memops.insert(info.start);
        } else {
            m.sync_memops.remove(&info.start);
        }
        Ok(())
    });
    status(r)
}
