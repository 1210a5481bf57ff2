//! `cuMemMapArrayAsync` (11.1): mapping tile-pool memory into sparse arrays. The stand-in
//! makes no sparse array (`cuArray3DCreate` and `cuMipmappedArrayCreate` refuse
//! `CUDA_ARRAY3D_SPARSE` and `CUDA_ARRAY3D_DEFERRED_MAPPING`, and it reads
//! `CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED` 0, where the H200 reads 1): every
//! array named is one the call must refuse. So each entry of the list is checked as the
//! CUDA documentation describes it, then refused:
//!
//! - a null list, an unknown resource type, operation type or
//!   handle type (a map needs `CU_MEM_HANDLE_TYPE_GENERIC`; an unmap a NULL handle),
//!   non-zero `flags` or `reserved`, a device mask without exactly one bit or naming a
//!   device other than the stream's: CUDA_ERROR_INVALID_VALUE;
//! - an unknown array or mipmapped array: CUDA_ERROR_INVALID_HANDLE (the stream as
//!   `stream.rs` resolves it);
//! - then an array that is not sparse (every array here): CUDA_ERROR_INVALID_VALUE.
//!
//! A count of 0 is refused too (CUDA_ERROR_INVALID_VALUE), as the H100's driver
//! 580.159.04 answers (recording 2026-12-05, `map_array.count_0`).

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::status;
use crate::world::World;
use crate::{array, mipmap, stream};

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// One entry: its documented rules, then the refusal of a non-sparse array.
fn check(w: &World, m: &CUarrayMapInfo, device: i32) -> Result<(), CUresult> {
    type Op = CUmemOperationType;
    let map = match m.memOperationType {
        Op::CU_MEM_OPERATION_TYPE_MAP => true,
        Op::CU_MEM_OPERATION_TYPE_UNMAP => false,
        _ => return Err(INVALID),
    };
    // SAFETY: the handle union is one pointer-sized handle read as a plain value.
    let handle = unsafe { m.memHandle.memHandle };
    if map && m.memHandleType != CUmemHandleType::CU_MEM_HANDLE_TYPE_GENERIC || !map && handle != 0 {
        return Err(INVALID);
    }
    if m.flags != 0 || m.reserved != [0, 0] || m.deviceBitMask.count_ones() != 1 {
        return Err(INVALID);
    }
    if m.deviceBitMask.trailing_zeros() != device as u32 {
        return Err(INVALID);
    }
    match m.resourceType {
        CUresourcetype::CU_RESOURCE_TYPE_ARRAY => {
            // SAFETY: the resource type says the union holds an array.
            array::find(w, unsafe { m.resource.array })?;
        }
        CUresourcetype::CU_RESOURCE_TYPE_MIPMAPPED_ARRAY => {
            // SAFETY: the resource type says the union holds a mipmapped array.
            mipmap::find(w, unsafe { m.resource.mipmap })?;
        }
        _ => return Err(INVALID),
    }
    // Not a sparse array (the stand-in makes none).
    Err(INVALID)
}

/// `cuMemMapArrayAsync`: see the module's note.
pub(crate) unsafe fn cu_mem_map_array_async(
    w: &World,
    list: *mut CUarrayMapInfo,
    count: c_uint,
    s: CUstream,
) -> CUresult {
    let r = (|| {
        let t = stream::resolve(w, s)?;
        // A count of 0 is refused (conformance map_array.count_0, driver 580.159.04).
        if count == 0 || list.is_null() {
            return Err(INVALID);
        }
        for i in 0..count as usize {
            // SAFETY: the list holds `count` entries (the call's contract).
            let m = unsafe { *list.add(i) };
            check(w, &m, t.ctx.device)?;
        }
        Ok(())
    })();
    status(r)
}
