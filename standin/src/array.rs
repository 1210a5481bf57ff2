//! Pitched allocations and CUDA arrays: `cuMemAllocPitch`, `cuArrayCreate`,
//! `cuArray3DCreate`, `cuArrayGetDescriptor`, `cuArray3DGetDescriptor`, `cuArrayDestroy`.
//!
//! A pitched allocation is a device allocation of `pitch * height` bytes, the pitch the
//! row's bytes rounded up to [`PITCH_ALIGNMENT`](crate::model::array::PITCH_ALIGNMENT). An
//! array is an object with backing device memory (`model/array.rs`), freed when it is
//! destroyed (at once, as `cuMemFree` frees: queued work that still uses it fails when it
//! runs). Destroying a context does not destroy its arrays here.
//!
//! Answers not yet recorded on the H200 (conformance cases pending): an element size other
//! than 4, 8 or 16, or a width or height of 0, for `cuMemAllocPitch`; `cuArrayGetDescriptor`
//! of a 3D array; an unknown array handle.

use cudrv::sys::*;

use crate::capture;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::array::{pitch_of, Array, Desc};
use crate::model::memory::{AllocationKind, Owner};
use crate::run::lock::lock;
use crate::world::World;

/// `cuMemAllocPitch`: `height` rows of `width` bytes, each row `*pitch` bytes after the one
/// before. An element size other than 4, 8 or 16, a width or a height of 0:
/// CUDA_ERROR_INVALID_VALUE (0 written to both out-parameters).
pub(crate) unsafe fn cu_mem_alloc_pitch(
    w: &World,
    dptr: *mut CUdeviceptr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element: std::ffi::c_uint,
) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        non_null(pitch)?;
        write(dptr, 0)?;
        write(pitch, 0)?;
        let c = w.contexts.current()?;
        capture::before_unsafe_call(w, CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)?;
        if !matches!(element, 4 | 8 | 16) || width == 0 || height == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let p = pitch_of(width).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let size = p.checked_mul(height).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let address = lock(&w.memory).alloc(size, AllocationKind::Device, None, Owner::of(&c))?;
        w.sanitizer.allocated(address, size);
        write(pitch, p)?;
        write(dptr, address)
    });
    status(r)
}

/// Makes an array shaped as `desc` (checked) for `owner`, backed by device memory, and
/// returns its handle; `mipmap` is the mipmapped array it is a level of. On error nothing
/// is made.
pub(crate) fn make(w: &World, desc: Desc, owner: Owner, mipmap: Option<u64>) -> Result<u64, CUresult> {
    desc.check()?;
    let bytes = desc.bytes().ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
    let address = lock(&w.memory).alloc(bytes, AllocationKind::Array, None, owner)?;
    Ok(lock(&w.arrays).arrays.insert(Array { desc, address, mipmap }))
}

/// Makes an array shaped as `desc` in the current context, backed by device memory.
fn create(w: &World, ph: *mut CUarray, desc: Desc) -> Result<(), CUresult> {
    let c = w.contexts.current()?;
    let h = make(w, desc, Owner::of(&c), None)?;
    write(ph, to_ptr(h))
}

/// `cuArrayCreate`: a 1D (height 0) or 2D array.
pub(crate) unsafe fn cu_array_create(w: &World, ph: *mut CUarray, desc: *const CUDA_ARRAY_DESCRIPTOR) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        non_null(desc)?;
        // SAFETY: non-null; the caller's descriptor.
        let d = unsafe { *desc };
        let desc =
            Desc { width: d.Width, height: d.Height, depth: 0, format: d.Format, channels: d.NumChannels, flags: 0 };
        create(w, ph, desc)
    });
    status(r)
}

/// `cuArray3DCreate`: a 1D, 2D or 3D array, layered, cubemap or surface-writable by its
/// flags.
pub(crate) unsafe fn cu_array_3d_create(w: &World, ph: *mut CUarray, desc: *const CUDA_ARRAY3D_DESCRIPTOR) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        non_null(desc)?;
        // SAFETY: non-null; the caller's descriptor.
        let d = unsafe { *desc };
        let desc = Desc {
            width: d.Width,
            height: d.Height,
            depth: d.Depth,
            format: d.Format,
            channels: d.NumChannels,
            flags: d.Flags,
        };
        create(w, ph, desc)
    });
    status(r)
}

/// The live array `h` names.
pub(crate) fn find(w: &World, h: CUarray) -> Result<Array, CUresult> {
    lock(&w.arrays).arrays.get(from_ptr(h)).copied()
}

/// `cuArrayGetDescriptor`: of any array, a 3D one's depth left out (as on the H200).
pub(crate) unsafe fn cu_array_get_descriptor(w: &World, out: *mut CUDA_ARRAY_DESCRIPTOR, h: CUarray) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let d = find(w, h)?.desc;
        write(
            out,
            CUDA_ARRAY_DESCRIPTOR { Width: d.width, Height: d.height, Format: d.format, NumChannels: d.channels },
        )
    });
    status(r)
}

/// `cuArray3DGetDescriptor`: any array, with the flags it was made with.
pub(crate) unsafe fn cu_array_3d_get_descriptor(w: &World, out: *mut CUDA_ARRAY3D_DESCRIPTOR, h: CUarray) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let d = find(w, h)?.desc;
        write(
            out,
            CUDA_ARRAY3D_DESCRIPTOR {
                Width: d.width,
                Height: d.height,
                Depth: d.depth,
                Format: d.format,
                NumChannels: d.channels,
                Flags: d.flags,
            },
        )
    });
    status(r)
}

/// `cuArrayDestroy`: frees its memory at once. An unknown or destroyed array:
/// CUDA_ERROR_INVALID_HANDLE (a double destroy in the ledger). A level of a mipmapped
/// array belongs to it: success, as on the H200 (`mipmap.destroy_level_array`), and the
/// level is left as it is (the mipmapped array's destruction frees it).
pub(crate) unsafe fn cu_array_destroy(w: &World, h: CUarray) -> CUresult {
    let r = (|| {
        let mut arrays = lock(&w.arrays);
        if arrays.arrays.get(from_ptr(h))?.mipmap.is_some() {
            return Ok(());
        }
        let a = arrays.arrays.remove(from_ptr(h))?;
        drop(arrays);
        lock(&w.memory).free(a.address)
    })();
    status(r)
}
