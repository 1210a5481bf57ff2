//! Mipmapped arrays: `cuMipmappedArrayCreate`, `cuMipmappedArrayGetLevel`,
//! `cuMipmappedArrayDestroy`.
//!
//! A mipmapped array is its levels: level 0 has the shape its descriptor gives, each next
//! level half the extents of the one before (at least 1; layers and cubemap faces kept),
//! and each level is an array of the stand-in's array model (`model/array.rs`) with its
//! own device memory, so copies to and from a level (`cuMemcpy2D`/`3D`, `cuMemcpyHtoA`,
//! ...) really move data. The number of levels asked for is clamped to
//! `1..=1 + floor(log2(largest extent))`, as the CUDA documentation says. A level belongs
//! to its mipmapped array: `cuArrayDestroy` refuses it, and destroying the mipmapped array
//! destroys its levels (handles to them are then unknown).
//!
//! Answers not yet recorded on the H200 (conformance cases `mipmap.*` pending): 0 levels
//! asked for, an unknown handle, a level past the last, destroying a level with
//! `cuArrayDestroy`.

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::array;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::array::{Desc, Mipmap};
use crate::model::memory::Owner;
use crate::run::lock::lock;
use crate::world::World;

/// Destroys the level arrays `levels` and frees their memory (the first error is kept,
/// every level is tried).
fn destroy_levels(w: &World, levels: &[u64]) -> Result<(), CUresult> {
    let mut result = Ok(());
    for &h in levels {
        let removed = lock(&w.arrays).arrays.remove(h);
        let freed = removed.and_then(|a| lock(&w.memory).free(a.address));
        if result.is_ok() {
            result = freed;
        }
    }
    result
}

fn create(
    w: &World,
    out: *mut CUmipmappedArray,
    desc: *const CUDA_ARRAY3D_DESCRIPTOR,
    asked: c_uint,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(desc)?;
    // SAFETY: non-null; the caller's descriptor.
    let d = unsafe { *desc };
    let c = w.contexts.current()?;
    let desc = Desc {
        width: d.Width,
        height: d.Height,
        depth: d.Depth,
        format: d.Format,
        channels: d.NumChannels,
        flags: d.Flags,
    };
    desc.check()?;
    let handle = crate::model::handles::fresh();
    let mut levels = Vec::new();
    for level in 0..desc.mipmap_levels(asked) {
        match array::make(w, desc.level(level), Owner::of(&c), Some(handle)) {
            Ok(h) => levels.push(h),
            Err(e) => {
                // Nothing is made: the levels made so far go again.
                let _ = destroy_levels(w, &levels);
                return Err(e);
            }
        }
    }
    lock(&w.arrays).mipmaps.insert_at(handle, Mipmap { desc, levels });
    write(out, to_ptr(handle))
}

/// `cuMipmappedArrayCreate`: a descriptor as `cuArray3DCreate` takes (checked alike:
/// CUDA_ERROR_INVALID_VALUE), in the current context (none: CUDA_ERROR_INVALID_CONTEXT).
/// On error nothing is made or written.
pub(crate) unsafe fn cu_mipmapped_array_create(
    w: &World,
    out: *mut CUmipmappedArray,
    desc: *const CUDA_ARRAY3D_DESCRIPTOR,
    levels: c_uint,
) -> CUresult {
    status(create(w, out, desc, levels))
}

/// `cuMipmappedArrayGetLevel`: the array of level `level`. A null out-pointer or a level
/// past the last: CUDA_ERROR_INVALID_VALUE; an unknown or destroyed mipmapped array:
/// CUDA_ERROR_INVALID_HANDLE; nothing written on error.
pub(crate) unsafe fn cu_mipmapped_array_get_level(
    w: &World,
    out: *mut CUarray,
    h: CUmipmappedArray,
    level: c_uint,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let a = lock(&w.arrays);
        let m = a.mipmaps.get(from_ptr(h))?;
        let level = usize::try_from(level).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let array = *m.levels.get(level).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        drop(a);
        write(out, to_ptr(array))
    });
    status(r)
}

/// `cuMipmappedArrayDestroy`: destroys it and its levels, freeing their memory at once
/// (as `cuArrayDestroy` does). An unknown or destroyed one: CUDA_ERROR_INVALID_HANDLE (a
/// double destroy in the ledger's registry).
pub(crate) unsafe fn cu_mipmapped_array_destroy(w: &World, h: CUmipmappedArray) -> CUresult {
    let r = lock(&w.arrays).mipmaps.remove(from_ptr(h));
    status(r.and_then(|m| destroy_levels(w, &m.levels)))
}

/// The level-0 shape of the live mipmapped array `h`.
pub(crate) fn find(w: &World, h: CUmipmappedArray) -> Result<Desc, CUresult> {
    lock(&w.arrays).mipmaps.get(from_ptr(h)).map(|m| m.desc)
}
