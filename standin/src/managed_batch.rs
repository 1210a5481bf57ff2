//! Batches of managed-memory operations (13.0): `cuMemPrefetchBatchAsync`,
//! `cuMemDiscardBatchAsync`, `cuMemDiscardAndPrefetchBatchAsync`; and
//! `cuMemBatchDecompressAsync` (12.6), which the H200 has no engine for.
//!
//! As the H100's driver 580.159.04 answers them (recording 2026-12-05, conformance
//! `managed_batch.*`), every refusal is CUDA_ERROR_INVALID_VALUE. Checked before anything
//! is done: at least one operation, non-null arrays, flags 0, a stream that is not the
//! legacy NULL stream (the documentation: "Must not be legacy NULL stream": NULL and
//! `CU_STREAM_LEGACY`, in the per-thread variants too; `CU_STREAM_PER_THREAD` is allowed),
//! and the location list: 1 to `count` locations, the first index 0, each index below
//! `count` (not necessarily above the one before, as the documentation has it: equal
//! indices were taken), each location one `cuMemPrefetchAsync_v2` takes (a device that is
//! not one: INVALID_VALUE here). Then the operations are done in order, each range checked
//! as it comes (inside one managed allocation, at least one byte, as `cuMemPrefetchAsync`,
//! `managed.rs`): a refused range stops the batch, the operations before it done.
//!
//! A prefetch is remembered as `cuMemPrefetchAsync` remembers it (the range attributes
//! report it). A discard makes the contents undefined on a real GPU; the stand-in keeps
//! them (any value is an allowed "indeterminate value") and changes nothing else.
//!
//! `cuMemBatchDecompressAsync`: CUDA_ERROR_NOT_SUPPORTED (with a current context), before
//! any argument is looked at, `*errorIndex` untouched, as the H100's driver 580.159.04
//! answers on a device without a decompression engine (recording 2026-12-05: NULL params,
//! a count of 0 and flags 1 too; `CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK` and
//! `_MAXIMUM_LENGTH` read 0).

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::managed::location;
use crate::model::managed::Location;
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// The `i`th element of a caller's array.
///
/// # Safety
/// `p` points to more than `i` elements.
unsafe fn nth<T: Copy>(p: *const T, i: usize) -> T {
    // SAFETY: `i` is within the caller's array (see above).
    unsafe { *p.add(i) }
}

/// The arguments every batch checks before anything: at least one operation, non-null
/// arrays, flags 0, a stream that is not the legacy NULL stream.
fn basics(
    w: &World,
    dptrs: *const CUdeviceptr,
    sizes: *const usize,
    count: usize,
    flags: u64,
    s: CUstream,
) -> Result<(), CUresult> {
    if count == 0 || dptrs.is_null() || sizes.is_null() || flags != 0 || s.is_null() || s as usize == 1 {
        return Err(INVALID);
    }
    stream::resolve(w, s).map(drop)
}

/// Operation `i`'s range, inside one managed allocation and of at least one byte.
///
/// # Safety
/// `dptrs` and `sizes` hold more than `i` elements.
unsafe fn range(w: &World, dptrs: *const CUdeviceptr, sizes: *const usize, i: usize) -> Result<(u64, usize), CUresult> {
    // SAFETY: both arrays hold more than `i` elements (see above).
    let (p, n) = unsafe { (nth(dptrs, i), nth(sizes, i)) };
    lock(&w.managed).holding(p, n).ok_or(INVALID)?;
    Ok((p, n))
}

/// The location of each of `count` operations, from the list of locations and the index
/// of the first operation each applies to: location `k` applies to the operations from
/// `idxs[k]` up to `idxs[k + 1]` (or `count`), none if that is not above; later locations
/// win. Checked whole before any operation is done.
///
/// # Safety
/// `locs` and `idxs` are null or hold `n` elements.
unsafe fn locations(
    w: &World,
    locs: *const CUmemLocation,
    idxs: *const usize,
    n: usize,
    count: usize,
) -> Result<Vec<Location>, CUresult> {
    if n == 0 || n > count || locs.is_null() || idxs.is_null() {
        return Err(INVALID);
    }
    let mut list = Vec::with_capacity(n);
    for k in 0..n {
        // SAFETY: both arrays hold `n` elements (the call's contract).
        let (first, loc) = unsafe { (nth(idxs, k), nth(locs, k)) };
        if first >= count || (k == 0 && first != 0) {
            return Err(INVALID);
        }
        // A device that is not one: CUDA_ERROR_INVALID_VALUE here (conformance
        // managed_batch.prefetch_bad_device), where cuMemPrefetchAsync_v2 answers
        // CUDA_ERROR_INVALID_DEVICE.
        let to = location(w, loc).map_err(|_| INVALID)?;
        list.push((first, to));
    }
    let mut out: Vec<Location> = Vec::new();
    for (k, &(first, to)) in list.iter().enumerate() {
        let end = list.get(k + 1).map_or(count, |&(next, _)| next);
        if out.len() < end {
            out.resize(end, to);
        }
        for slot in out.iter_mut().take(end).skip(first) {
            *slot = to;
        }
    }
    Ok(out)
}

/// Each operation's range checked in order, and `each` done with it: a range refused
/// stops the batch there, the operations before it done (conformance
/// managed_batch.prefetch_past_allocation).
///
/// # Safety
/// `dptrs` and `sizes` hold `count` elements.
unsafe fn in_order(
    w: &World,
    dptrs: *const CUdeviceptr,
    sizes: *const usize,
    count: usize,
    mut each: impl FnMut(usize, u64, usize),
) -> Result<(), CUresult> {
    for i in 0..count {
        // SAFETY: `i < count` (see above).
        let (p, n) = unsafe { range(w, dptrs, sizes, i)? };
        each(i, p, n);
    }
    Ok(())
}

/// Remembers a prefetch of `[p, p + n)` to `to`.
fn prefetch(w: &World, p: u64, n: usize, to: Option<Location>) {
    if let (Some((_, range)), Some(to)) = (lock(&w.managed).holding(p, n), to) {
        range.prefetched.set(p, p + n as u64, Some(to));
    }
}

/// `cuMemPrefetchBatchAsync`.
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_mem_prefetch_batch_async(
    w: &World,
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    locs: *mut CUmemLocation,
    idxs: *mut usize,
    n: usize,
    flags: u64,
    s: CUstream,
) -> CUresult {
    let r = basics(w, dptrs, sizes, count, flags, s)
        // SAFETY: the caller's arrays, as the call's contract describes them.
        .and_then(|()| unsafe { locations(w, locs, idxs, n, count) })
        // SAFETY: as above.
        .and_then(|to| unsafe { in_order(w, dptrs, sizes, count, |i, p, n| prefetch(w, p, n, to.get(i).copied())) });
    crate::entry::status(r)
}

/// `cuMemDiscardBatchAsync`: checked; the contents are kept (see the module's note).
pub(crate) unsafe fn cu_mem_discard_batch_async(
    w: &World,
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    flags: u64,
    s: CUstream,
) -> CUresult {
    let r = basics(w, dptrs, sizes, count, flags, s)
        // SAFETY: the caller's arrays, as the call's contract describes them.
        .and_then(|()| unsafe { in_order(w, dptrs, sizes, count, |_, _, _| {}) });
    crate::entry::status(r)
}

/// `cuMemDiscardAndPrefetchBatchAsync`: a discard (nothing here), then the prefetches.
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_mem_discard_and_prefetch_batch_async(
    w: &World,
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    locs: *mut CUmemLocation,
    idxs: *mut usize,
    n: usize,
    flags: u64,
    s: CUstream,
) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { cu_mem_prefetch_batch_async(w, dptrs, sizes, count, locs, idxs, n, flags, s) }
}

/// `cuMemBatchDecompressAsync`: see the module's note.
pub(crate) unsafe fn cu_mem_batch_decompress_async(
    w: &World,
    _params: *mut CUmemDecompressParams,
    _count: usize,
    _flags: c_uint,
    _error_index: *mut usize,
    _s: CUstream,
) -> CUresult {
    let r = w.contexts.current().and(Err(CUresult::CUDA_ERROR_NOT_SUPPORTED));
    crate::entry::status(r)
}
