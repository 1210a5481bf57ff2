//! Copies whose direction the driver works out from the addresses (unified addressing):
//! `cuMemcpy`, `cuMemcpyAsync` and `cuMemcpyBatchAsync` (done at once, as every copy: see
//! `stream.rs`). An address inside a live allocation is device memory; any other is the
//! program's host memory.

use cudrv::sys::*;

use crate::entry::{enter, register, status};
use crate::{context, memory, stream};

/// Copies `n` bytes from `src` to `dst`, each device or host memory.
fn copy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> Result<(), CUresult> {
    if n == 0 {
        return Ok(());
    }
    let device = |a: u64| memory::allocation_at(a).is_ok();
    match (device(dst), device(src)) {
        (true, true) => memory::copy_device(dst, src, n),
        (true, false) => memory::copy_to_device(dst, src as usize as *const u8, n),
        (false, true) => memory::copy_to_host(dst as usize as *mut u8, src, n),
        (false, false) if dst == 0 || src == 0 => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        (false, false) => {
            // SAFETY: both are the program's host memory of `n` bytes, as the call's
            // contract requires (a real driver copies them too).
            unsafe { std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, n) };
            Ok(())
        }
    }
}

unsafe extern "C" fn cu_memcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    enter!("cuMemcpy");
    status(context::current().and_then(|_| copy(dst, src, n)))
}

unsafe extern "C" fn cu_memcpy_async(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemcpyAsync");
    status(stream::resolve(s).and_then(|_| copy(dst, src, n)))
}

/// The `i`th element of a caller's array of `count`.
///
/// # Safety
/// `p` points to `count` elements.
unsafe fn nth<T: Copy>(p: *const T, i: usize) -> T {
    // SAFETY: `i < count`, the caller's array length.
    unsafe { *p.add(i) }
}

/// `cuMemcpyBatchAsync_v13000`: `count` copies, each from `srcs[i]` to `dsts[i]` of
/// `sizes[i]` bytes. The attributes are checked as a real driver needs them (at least
/// one, the first applying from copy 0) and otherwise not used.
unsafe extern "C" fn cu_memcpy_batch_async(
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    s: CUstream,
) -> CUresult {
    enter!("cuMemcpyBatchAsync");
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    if count == 0 || dsts.is_null() || srcs.is_null() || sizes.is_null() {
        return invalid;
    }
    if num_attrs == 0 || num_attrs > count || attrs.is_null() || attr_idxs.is_null() {
        return invalid;
    }
    // SAFETY: `attr_idxs` holds `num_attrs` >= 1 indices.
    if unsafe { nth(attr_idxs, 0) } != 0 {
        return invalid;
    }
    let r = stream::resolve(s).and_then(|_| {
        (0..count).try_for_each(|i| {
            // SAFETY: the three arrays hold `count` elements each (the call's contract).
            let (d, src, n) = unsafe { (nth(dsts, i), nth(srcs, i), nth(sizes, i)) };
            copy(d, src, n)
        })
    });
    status(r)
}

register! {
    cuMemcpy_v4000: PFN_cuMemcpy_v4000 => cu_memcpy,
    cuMemcpy_v7000_ptds: PFN_cuMemcpy_v7000_ptds => cu_memcpy,
    cuMemcpyAsync_v4000: PFN_cuMemcpyAsync_v4000 => cu_memcpy_async,
    cuMemcpyAsync_v7000_ptsz: PFN_cuMemcpyAsync_v7000_ptsz => cu_memcpy_async,
    cuMemcpyBatchAsync_v13000: PFN_cuMemcpyBatchAsync_v13000 => cu_memcpy_batch_async,
    cuMemcpyBatchAsync_v13000_ptsz: PFN_cuMemcpyBatchAsync_v13000_ptsz => cu_memcpy_batch_async,
}
