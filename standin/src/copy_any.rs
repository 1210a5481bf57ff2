//! Copies whose direction the driver works out from the addresses (unified addressing):
//! `cuMemcpy`, `cuMemcpyAsync` and `cuMemcpyBatchAsync`, done or captured as the copies of
//! `copy.rs` are. An address inside a live allocation is device memory; any other is the
//! program's host memory.

use cudrv::sys::*;

use crate::copy::copy;
use crate::run::lock::lock;
use crate::world::World;

use crate::model::graph::End;

/// Where `address` is: device memory if a live allocation holds it, else host memory.
fn end(w: &World, address: CUdeviceptr) -> End {
    match lock(&w.memory).allocation_at(address) {
        Ok(_) => End::Device(address),
        Err(_) => End::Host(address as usize),
    }
}

pub(crate) unsafe fn cu_memcpy(w: &'static World, dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    copy(w, end(w, dst), end(w, src), n, None)
}

pub(crate) unsafe fn cu_memcpy_async(
    w: &'static World,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    s: CUstream,
) -> CUresult {
    copy(w, end(w, dst), end(w, src), n, Some(s))
}

/// `cuMemcpyAsync_ptsz`: the same copy behind its own pointer, as a real driver gives the
/// per-thread variant one (driver-facts.md, `cuGetProcAddress` with flag 2).
pub(crate) unsafe fn cu_memcpy_async_ptsz(
    w: &'static World,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    s: CUstream,
) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { cu_memcpy_async(w, dst, src, n, s) }
}

/// The `i`th element of a caller's array.
///
/// # Safety
/// `p` points to more than `i` elements.
unsafe fn nth<T: Copy>(p: *const T, i: usize) -> T {
    // SAFETY: `i` is within the caller's array (see above).
    unsafe { *p.add(i) }
}

/// The copies of a batch: `count` copies, each from `srcs[i]` to `dsts[i]` of `sizes[i]`
/// bytes, in stream order. The attributes are checked as a real driver needs them (at
/// least one, the first applying from copy 0) and otherwise not used. On failure, the
/// index of the copy that failed (`usize::MAX`: none was tried).
///
/// # Safety
/// The arrays hold `count` (`attr_idxs`: `num_attrs`) elements, or are NULL.
#[allow(clippy::too_many_arguments)] // the C signature's arguments
unsafe fn batch(
    w: &'static World,
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    s: CUstream,
) -> Result<(), (CUresult, usize)> {
    let invalid = (CUresult::CUDA_ERROR_INVALID_VALUE, usize::MAX);
    if count == 0 || dsts.is_null() || srcs.is_null() || sizes.is_null() {
        return Err(invalid);
    }
    if num_attrs == 0 || num_attrs > count || attrs.is_null() || attr_idxs.is_null() {
        return Err(invalid);
    }
    // SAFETY: `attr_idxs` holds `num_attrs` >= 1 indices.
    if unsafe { nth(attr_idxs, 0) } != 0 {
        return Err(invalid);
    }
    for i in 0..count {
        // SAFETY: the three arrays hold `count` elements each (the call's contract).
        let (d, src, n) = unsafe { (nth(dsts, i), nth(srcs, i), nth(sizes, i)) };
        match copy(w, end(w, d), end(w, src), n, Some(s)) {
            CUresult::CUDA_SUCCESS => {}
            failed => return Err((failed, i)),
        }
    }
    Ok(())
}

/// `cuMemcpyBatchAsync_v13000`: see [`batch`].
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_memcpy_batch_async(
    w: &'static World,
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    s: CUstream,
) -> CUresult {
    // SAFETY: the caller's arrays, as the call's contract describes them.
    match unsafe { batch(w, dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, s) } {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err((status, _)) => status,
    }
}

/// `cuMemcpyBatchAsync_v12080`: as `_v13000`, and on failure the failing copy's index in
/// `*fail_idx` (`SIZE_MAX` when the arguments were refused before any copy).
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_memcpy_batch_async_v12080(
    w: &'static World,
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    fail_idx: *mut usize,
    s: CUstream,
) -> CUresult {
    // SAFETY: the caller's arrays, as the call's contract describes them.
    match unsafe { batch(w, dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, s) } {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err((status, index)) => {
            if !fail_idx.is_null() {
                // SAFETY: a non-null out-pointer from the caller.
                unsafe { fail_idx.write(index) };
            }
            status
        }
    }
}
