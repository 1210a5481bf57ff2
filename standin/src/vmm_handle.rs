//! What a virtual memory handle or address range gives back (`model/vmm.rs`):
//! `cuMemRetainAllocationHandle`, `cuMemGetAllocationPropertiesFromHandle` and
//! `cuMemGetHandleForAddressRange`.
//!
//! `cuMemGetHandleForAddressRange` hands out a dma-buf file descriptor on a real driver:
//! a kernel object over the GPU's memory that other drivers (RDMA NICs, ...) import. The
//! stand-in's device memory is host memory and it has no dma-buf exporter, so it answers
//! as the H200 answers a mapping type it cannot give: CUDA_ERROR_NOT_SUPPORTED and the
//! descriptor -1, once the arguments are checked (a listed difference: the H200 gives a
//! dma-buf). The other answers are checked against the H200 (`vmm_handle.*`).

use std::ffi::{c_int, c_ulonglong, c_void};

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// `cuMemRetainAllocationHandle`: the handle the mapping holding `addr` (any address in
/// it) was made from, with one more reference (released with `cuMemRelease`); a handle
/// released while mapped comes back. An address in no mapping (or a null out-pointer):
/// CUDA_ERROR_INVALID_VALUE, nothing written.
pub(crate) unsafe fn cu_mem_retain_allocation_handle(
    w: &World,
    out: *mut CUmemGenericAllocationHandle,
    addr: *mut c_void,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let address = addr as usize as u64;
        let mut v = lock(&w.vmm);
        let (&start, m) = v.maps.range(..=address).next_back().ok_or(INVALID)?;
        if address - start >= m.size as u64 {
            return Err(INVALID);
        }
        let (handle, size, device, handle_types) = (m.handle, m.size, m.device, m.handle_types);
        let backing = std::sync::Arc::clone(&m.backing);
        v.handles.entry(handle).and_modify(|p| p.refs += 1).or_insert(crate::model::vmm::Physical {
            size,
            device,
            handle_types,
            backing,
            refs: 1,
        });
        write(out, handle)
    });
    status(r)
}

/// `cuMemGetAllocationPropertiesFromHandle`: pinned memory on its device, with the handle
/// types asked for at creation (an imported handle: POSIX file descriptor). An unknown or
/// released handle (or a null out-pointer): CUDA_ERROR_INVALID_VALUE, nothing written.
pub(crate) unsafe fn cu_mem_get_allocation_properties_from_handle(
    w: &World,
    out: *mut CUmemAllocationProp,
    handle: CUmemGenericAllocationHandle,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (device, types) = lock(&w.vmm).handles.get(&handle).map(|p| (p.device, p.handle_types)).ok_or(INVALID)?;
        let mut prop = CUmemAllocationProp {
            type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            requestedHandleTypes: CUmemAllocationHandleType(types),
            ..Default::default()
        };
        prop.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.__bindgen_anon_1.id = device;
        write(out, prop)
    });
    status(r)
}

/// The host page size dma-buf ranges are aligned to.
const PAGE: u64 = 4096;

/// `cuMemGetHandleForAddressRange`: after the checks (a non-null out-pointer, the dma-buf
/// handle type, known flags, a page-aligned range starting in live device memory:
/// CUDA_ERROR_INVALID_VALUE otherwise, nothing written; the H200 does not ask that the
/// range end inside the allocation), the file descriptor -1 and CUDA_ERROR_NOT_SUPPORTED,
/// as the H200 answers a mapping type it cannot give: the stand-in has no dma-buf.
pub(crate) unsafe fn cu_mem_get_handle_for_address_range(
    w: &World,
    handle: *mut c_void,
    dptr: CUdeviceptr,
    size: usize,
    kind: CUmemRangeHandleType,
    flags: c_ulonglong,
) -> CUresult {
    let r = non_null(handle).and_then(|()| {
        let known_flags = u64::from(CUmemRangeFlags::CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE.0);
        if kind != CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags & !known_flags != 0 {
            return Err(INVALID);
        }
        if size == 0 || dptr % PAGE != 0 || size as u64 % PAGE != 0 {
            return Err(INVALID);
        }
        lock(&w.memory).check_device(dptr, 1)?;
        write(handle.cast::<c_int>(), -1)?;
        Err(CUresult::CUDA_ERROR_NOT_SUPPORTED)
    });
    status(r)
}
