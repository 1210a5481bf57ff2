//! Tensor maps (12.0+): `cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col`,
//! `cuTensorMapEncodeIm2colWide` and `cuTensorMapReplaceAddress`. The rules and the
//! stand-in's own 128-byte encoding are `model/tensor_map.rs`'s; here, the C arguments.
//!
//! As the H100's driver 580.159.04 answers them (recording 2026-12-05, conformance
//! `tensor_map.*`), each encoder needs a current context (CUDA_ERROR_INVALID_CONTEXT), a
//! non-null map (any alignment: the driver wrote one 8 bytes off its 64-byte alignment),
//! non-null arrays (`globalStrides` too at rank 1, where it has no element) and the checks
//! of `model::tensor_map::before_encoding`: a refusal there (CUDA_ERROR_INVALID_VALUE)
//! leaves the map untouched. Then the map is written, and the rest of the rules checked: a
//! refusal there is CUDA_ERROR_INVALID_VALUE with the map written. The bytes are the
//! stand-in's encoding, not the driver's (opaque to programs).
//!
//! `cuTensorMapReplaceAddress` changes only the address in a map the stand-in wrote
//! (other 128 bytes are refused: the stand-in's reading); the new address must be non-null
//! and 16-byte aligned whatever the map's interleave, as on the H100. A NULL map crashed
//! the H100's driver; here it is CUDA_ERROR_INVALID_VALUE.

use std::ffi::{c_int, c_void};

use cudrv::sys::*;

use crate::entry::status;
use crate::model::tensor_map::{self as tm, Common, Kind, Shape};
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// The first `n` (at most `N`) elements of a caller's array; the rest default. A NULL
/// array is refused even when `n` is 0 (the driver refuses NULL strides at rank 1:
/// conformance tensor_map.tiled_rank_1_null_strides).
///
/// # Safety
/// `p` is null or points to at least `min(n, N)` elements of `T`, aligned.
unsafe fn read<T: Copy + Default, const N: usize>(p: *const T, n: usize) -> Result<[T; N], CUresult> {
    if p.is_null() {
        return Err(INVALID);
    }
    let mut out = [T::default(); N];
    for (i, o) in out.iter_mut().enumerate().take(n) {
        // SAFETY: `i < min(n, N)`, within the caller's array (see above).
        *o = unsafe { *p.add(i) };
    }
    Ok(out)
}

/// The map pointer: non-null (any alignment).
fn map_ok(m: *mut CUtensorMap) -> Result<(), CUresult> {
    if m.is_null() {
        return Err(INVALID);
    }
    Ok(())
}

/// The map's 128 bytes as words, read whatever its alignment.
///
/// # Safety
/// `m` is non-null and points to 128 readable bytes.
unsafe fn load(m: *mut CUtensorMap) -> [u64; 16] {
    // SAFETY: 128 readable bytes (see above); an unaligned read needs no alignment.
    unsafe { m.cast::<[u64; 16]>().read_unaligned() }
}

/// Writes the map's 128 bytes, whatever its alignment.
///
/// # Safety
/// `m` is non-null and points to 128 writable bytes.
unsafe fn store(m: *mut CUtensorMap, words: [u64; 16]) {
    // SAFETY: 128 writable bytes (see above); an unaligned write needs no alignment.
    unsafe { m.cast::<[u64; 16]>().write_unaligned(words) }
}

/// The arguments every encoder shares (a rank outside 1..=5 is refused before anything
/// is read).
///
/// # Safety
/// The arrays hold `rank` (`strides`: `rank - 1`) elements, or are NULL.
#[allow(clippy::too_many_arguments)] // the C signature's arguments
unsafe fn common(
    t: CUtensorMapDataType,
    rank: cuuint32_t,
    address: *mut c_void,
    dims: *const cuuint64_t,
    strides: *const cuuint64_t,
    element_strides: *const cuuint32_t,
    (interleave, swizzle, l2, oob): (
        CUtensorMapInterleave,
        CUtensorMapSwizzle,
        CUtensorMapL2promotion,
        CUtensorMapFloatOOBfill,
    ),
) -> Result<Common, CUresult> {
    if !(1..=5).contains(&rank) {
        return Err(INVALID);
    }
    let n = rank as usize;
    Ok(Common {
        data_type: t.0,
        rank,
        address: address as u64,
        // SAFETY: `n` elements (the call's contract); `n - 1` strides.
        dims: unsafe { read(dims, n)? },
        // SAFETY: as above.
        strides: unsafe { read(strides, n - 1)? },
        // SAFETY: as above.
        element_strides: unsafe { read(element_strides, n)? },
        interleave: interleave.0,
        swizzle: swizzle.0,
        l2: l2.0,
        oob: oob.0,
    })
}

/// The checks before encoding, the map written, then the other checks (see the module's
/// note).
///
/// # Safety
/// `m` is non-null and points to the caller's 128-byte map.
unsafe fn finish(m: *mut CUtensorMap, kind: Kind, c: &Common, shape: &Shape) -> Result<(), CUresult> {
    tm::before_encoding(c, shape)?;
    // SAFETY: the caller's 128 bytes (see above).
    unsafe { store(m, tm::encode(kind, c, shape)) };
    tm::check(c, shape)?;
    tm::not_on_sm90(c)
}

/// `cuTensorMapEncodeTiled`.
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_tensor_map_encode_tiled(
    w: &World,
    m: *mut CUtensorMap,
    t: CUtensorMapDataType,
    rank: cuuint32_t,
    address: *mut c_void,
    dims: *const cuuint64_t,
    strides: *const cuuint64_t,
    boxes: *const cuuint32_t,
    element_strides: *const cuuint32_t,
    interleave: CUtensorMapInterleave,
    swizzle: CUtensorMapSwizzle,
    l2: CUtensorMapL2promotion,
    oob: CUtensorMapFloatOOBfill,
) -> CUresult {
    let r = (|| {
        w.contexts.current()?;
        map_ok(m)?;
        // SAFETY: the caller's arrays, as the call's contract describes them.
        let c = unsafe { common(t, rank, address, dims, strides, element_strides, (interleave, swizzle, l2, oob))? };
        // SAFETY: `rank` (1..=5) box dimensions.
        let boxes = unsafe { read(boxes, rank as usize)? };
        // SAFETY: `m` is non-null (checked): the caller's 128-byte map.
        unsafe { finish(m, Kind::Tiled, &c, &Shape::Tiled { boxes }) }
    })();
    status(r)
}

/// `cuTensorMapEncodeIm2col`: `rank - 2` corner offsets each (a rank of 1 or 2, refused
/// after encoding, reads none).
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_tensor_map_encode_im2col(
    w: &World,
    m: *mut CUtensorMap,
    t: CUtensorMapDataType,
    rank: cuuint32_t,
    address: *mut c_void,
    dims: *const cuuint64_t,
    strides: *const cuuint64_t,
    lower: *const c_int,
    upper: *const c_int,
    channels: cuuint32_t,
    pixels: cuuint32_t,
    element_strides: *const cuuint32_t,
    interleave: CUtensorMapInterleave,
    swizzle: CUtensorMapSwizzle,
    l2: CUtensorMapL2promotion,
    oob: CUtensorMapFloatOOBfill,
) -> CUresult {
    let r = (|| {
        w.contexts.current()?;
        map_ok(m)?;
        // SAFETY: the caller's arrays, as the call's contract describes them.
        let c = unsafe { common(t, rank, address, dims, strides, element_strides, (interleave, swizzle, l2, oob))? };
        let spatial = (rank as usize).saturating_sub(2);
        // SAFETY: `rank - 2` offsets each.
        let (lower, upper) = unsafe { (read(lower, spatial)?, read(upper, spatial)?) };
        let shape = Shape::Im2col { lower, upper, channels, pixels };
        // SAFETY: `m` is non-null (checked): the caller's 128-byte map.
        unsafe { finish(m, Kind::Im2col, &c, &shape) }
    })();
    status(r)
}

/// `cuTensorMapEncodeIm2colWide` (12.8): documented for compute capability 10.0, encoded
/// on 9.0 all the same (conformance tensor_map.im2col_wide_on_h200, recorded on an H100).
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_tensor_map_encode_im2col_wide(
    w: &World,
    m: *mut CUtensorMap,
    t: CUtensorMapDataType,
    rank: cuuint32_t,
    address: *mut c_void,
    dims: *const cuuint64_t,
    strides: *const cuuint64_t,
    lower: c_int,
    upper: c_int,
    channels: cuuint32_t,
    pixels: cuuint32_t,
    element_strides: *const cuuint32_t,
    interleave: CUtensorMapInterleave,
    mode: CUtensorMapIm2ColWideMode,
    swizzle: CUtensorMapSwizzle,
    l2: CUtensorMapL2promotion,
    oob: CUtensorMapFloatOOBfill,
) -> CUresult {
    let r = (|| {
        w.contexts.current()?;
        map_ok(m)?;
        // SAFETY: the caller's arrays, as the call's contract describes them.
        let c = unsafe { common(t, rank, address, dims, strides, element_strides, (interleave, swizzle, l2, oob))? };
        let shape = Shape::Wide { lower, upper, channels, pixels, mode: mode.0 };
        // SAFETY: `m` is non-null (checked): the caller's 128-byte map.
        unsafe { finish(m, Kind::Im2colWide, &c, &shape) }
    })();
    status(r)
}

/// `cuTensorMapReplaceAddress`: a non-null address aligned to 16 bytes, whatever the map
/// (see the module's note); only the address word changes, nothing on a refusal.
pub(crate) unsafe fn cu_tensor_map_replace_address(w: &World, m: *mut CUtensorMap, address: *mut c_void) -> CUresult {
    let r = (|| {
        w.contexts.current()?;
        map_ok(m)?;
        // SAFETY: non-null: the caller's 128-byte map.
        let mut words = unsafe { load(m) };
        let a = address as u64;
        if !tm::is_ours(&words) || a == 0 || a % tm::REPLACE_ALIGN != 0 {
            return Err(INVALID);
        }
        if let Some(slot) = words.get_mut(1) {
            *slot = a;
        }
        // SAFETY: as above.
        unsafe { store(m, words) };
        Ok(())
    })();
    status(r)
}
