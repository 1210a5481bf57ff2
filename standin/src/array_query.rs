//! What an array or mipmapped array is made of: `cuArrayGetPlane`,
//! `cuArrayGetMemoryRequirements`, `cuMipmappedArrayGetMemoryRequirements`,
//! `cuArrayGetSparseProperties`, `cuMipmappedArrayGetSparseProperties`.
//!
//! The stand-in makes no multi-planar array (NV12 and the other planar formats are not
//! among its formats), no sparse one (`CUDA_ARRAY3D_SPARSE`) and none with deferred
//! mapping (`CUDA_ARRAY3D_DEFERRED_MAPPING`): its arrays are those the CUDA documentation
//! says these calls refuse with CUDA_ERROR_INVALID_VALUE, and so they answer, after the
//! out-pointer (null: CUDA_ERROR_INVALID_VALUE), the handle (unknown:
//! CUDA_ERROR_INVALID_HANDLE) and the device (CUDA_ERROR_INVALID_DEVICE) are checked.
//! Nothing is written on error.
//!
//! Answers not yet recorded on the H200 (conformance cases `array_query.*` pending): the
//! order of the checks and the codes of the unknown handle and device.

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::non_null;
use crate::entry::status;
use crate::world::World;
use crate::{array, mipmap};

/// What a refused query of a known, non-sparse, non-deferred, single-plane array answers.
const NOT_THAT_KIND: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// `cuArrayGetPlane`: every array here has one plane (no planar format): after the checks,
/// CUDA_ERROR_INVALID_VALUE, as the driver answers for a non-planar format.
pub(crate) unsafe fn cu_array_get_plane(w: &World, out: *mut CUarray, h: CUarray, _plane: c_uint) -> CUresult {
    let r = non_null(out).and_then(|()| array::find(w, h)).and(Err(NOT_THAT_KIND));
    status(r)
}

/// `cuArrayGetMemoryRequirements`: no array here has deferred mapping: after the checks,
/// CUDA_ERROR_INVALID_VALUE (whatever the device: so does the H200 for a device that is
/// not one, `array_query.memory_requirements_bad_device`).
pub(crate) unsafe fn cu_array_get_memory_requirements(
    w: &World,
    out: *mut CUDA_ARRAY_MEMORY_REQUIREMENTS,
    h: CUarray,
    _device: CUdevice,
) -> CUresult {
    let r = non_null(out).and_then(|()| array::find(w, h)).and(Err(NOT_THAT_KIND));
    status(r)
}

/// `cuMipmappedArrayGetMemoryRequirements`: as [`cu_array_get_memory_requirements`].
pub(crate) unsafe fn cu_mipmapped_array_get_memory_requirements(
    w: &World,
    out: *mut CUDA_ARRAY_MEMORY_REQUIREMENTS,
    h: CUmipmappedArray,
    _device: CUdevice,
) -> CUresult {
    let r = non_null(out).and_then(|()| mipmap::find(w, h)).and(Err(NOT_THAT_KIND));
    status(r)
}

/// `cuArrayGetSparseProperties`: no array here is sparse: after the checks,
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_array_get_sparse_properties(
    w: &World,
    out: *mut CUDA_ARRAY_SPARSE_PROPERTIES,
    h: CUarray,
) -> CUresult {
    status(non_null(out).and_then(|()| array::find(w, h)).and(Err(NOT_THAT_KIND)))
}

/// `cuMipmappedArrayGetSparseProperties`: as [`cu_array_get_sparse_properties`].
pub(crate) unsafe fn cu_mipmapped_array_get_sparse_properties(
    w: &World,
    out: *mut CUDA_ARRAY_SPARSE_PROPERTIES,
    h: CUmipmappedArray,
) -> CUresult {
    status(non_null(out).and_then(|()| mipmap::find(w, h)).and(Err(NOT_THAT_KIND)))
}
