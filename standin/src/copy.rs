//! Copies and memsets: `cuMemcpyHtoD`/`DtoH`/`DtoD`, `cuMemsetD8`/`D16`/`D32`, and their stream forms
//! (done at once: see `stream.rs`). Touching freed memory is CUDA_ERROR_INVALID_VALUE (as
//! on a real driver: not sticky) and a use after free in the ledger; an address outside
//! every allocation is CUDA_ERROR_INVALID_VALUE (see `memory.rs`).

use std::ffi::{c_uchar, c_void};

use cudrv::sys::*;

use crate::entry::{enter, register, status};
use crate::{context, memory, stream};

/// What a copy runs in: the current context (synchronous forms) or the stream's.
fn in_context(s: Option<CUstream>) -> Result<(), CUresult> {
    match s {
        None => context::current().map(drop),
        Some(s) => stream::resolve(s).map(drop),
    }
}

fn htod(dst: CUdeviceptr, src: *const c_void, n: usize, s: Option<CUstream>) -> CUresult {
    status(in_context(s).and_then(|()| match n {
        0 => Ok(()),
        n => memory::copy_to_device(dst, src.cast(), n),
    }))
}

fn dtoh(dst: *mut c_void, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    status(in_context(s).and_then(|()| match n {
        0 => Ok(()),
        n => memory::copy_to_host(dst.cast(), src, n),
    }))
}

fn dtod(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    status(in_context(s).and_then(|()| match n {
        0 => Ok(()),
        n => memory::copy_device(dst, src, n),
    }))
}

fn memset(dst: CUdeviceptr, value: c_uchar, n: usize, s: Option<CUstream>) -> CUresult {
    status(in_context(s).and_then(|()| match n {
        0 => Ok(()),
        n => memory::set(dst, value, n),
    }))
}

/// `n` values of `value` (2 or 4 bytes each) from `dst`, which must be aligned to them
/// (a real driver refuses a misaligned address with CUDA_ERROR_INVALID_VALUE).
fn memset_wide(dst: CUdeviceptr, value: &[u8], n: usize, s: Option<CUstream>) -> CUresult {
    let width = value.len() as u64;
    status(in_context(s).and_then(|()| {
        if width == 0 || dst % width != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let bytes = n.checked_mul(value.len()).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if bytes == 0 {
            return Ok(());
        }
        let pattern: Vec<u8> = value.iter().copied().cycle().take(bytes).collect();
        memory::copy_to_device(dst, pattern.as_ptr(), bytes)
    }))
}

unsafe extern "C" fn cu_memset_d16(dst: CUdeviceptr, value: u16, n: usize) -> CUresult {
    enter!("cuMemsetD16");
    memset_wide(dst, &value.to_ne_bytes(), n, None)
}

unsafe extern "C" fn cu_memset_d16_async(dst: CUdeviceptr, value: u16, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemsetD16Async");
    memset_wide(dst, &value.to_ne_bytes(), n, Some(s))
}

unsafe extern "C" fn cu_memset_d32(dst: CUdeviceptr, value: u32, n: usize) -> CUresult {
    enter!("cuMemsetD32");
    memset_wide(dst, &value.to_ne_bytes(), n, None)
}

unsafe extern "C" fn cu_memset_d32_async(dst: CUdeviceptr, value: u32, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemsetD32Async");
    memset_wide(dst, &value.to_ne_bytes(), n, Some(s))
}

unsafe extern "C" fn cu_memcpy_htod(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    enter!("cuMemcpyHtoD");
    htod(dst, src, n, None)
}

unsafe extern "C" fn cu_memcpy_dtoh(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    enter!("cuMemcpyDtoH");
    dtoh(dst, src, n, None)
}

unsafe extern "C" fn cu_memcpy_dtod(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    enter!("cuMemcpyDtoD");
    dtod(dst, src, n, None)
}

unsafe extern "C" fn cu_memcpy_htod_async(dst: CUdeviceptr, src: *const c_void, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemcpyHtoDAsync");
    htod(dst, src, n, Some(s))
}

unsafe extern "C" fn cu_memcpy_dtoh_async(dst: *mut c_void, src: CUdeviceptr, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemcpyDtoHAsync");
    dtoh(dst, src, n, Some(s))
}

unsafe extern "C" fn cu_memcpy_dtod_async(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemcpyDtoDAsync");
    dtod(dst, src, n, Some(s))
}

unsafe extern "C" fn cu_memset_d8(dst: CUdeviceptr, value: c_uchar, n: usize) -> CUresult {
    enter!("cuMemsetD8");
    memset(dst, value, n, None)
}

unsafe extern "C" fn cu_memset_d8_async(dst: CUdeviceptr, value: c_uchar, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemsetD8Async");
    memset(dst, value, n, Some(s))
}

register! {
    cuMemcpyHtoD_v3020: PFN_cuMemcpyHtoD_v3020 => cu_memcpy_htod,
    cuMemcpyHtoD_v7000_ptds: PFN_cuMemcpyHtoD_v7000_ptds => cu_memcpy_htod,
    cuMemcpyDtoH_v3020: PFN_cuMemcpyDtoH_v3020 => cu_memcpy_dtoh,
    cuMemcpyDtoH_v7000_ptds: PFN_cuMemcpyDtoH_v7000_ptds => cu_memcpy_dtoh,
    cuMemcpyDtoD_v3020: PFN_cuMemcpyDtoD_v3020 => cu_memcpy_dtod,
    cuMemcpyDtoD_v7000_ptds: PFN_cuMemcpyDtoD_v7000_ptds => cu_memcpy_dtod,
    cuMemcpyHtoDAsync_v3020: PFN_cuMemcpyHtoDAsync_v3020 => cu_memcpy_htod_async,
    cuMemcpyHtoDAsync_v7000_ptsz: PFN_cuMemcpyHtoDAsync_v7000_ptsz => cu_memcpy_htod_async,
    cuMemcpyDtoHAsync_v3020: PFN_cuMemcpyDtoHAsync_v3020 => cu_memcpy_dtoh_async,
    cuMemcpyDtoHAsync_v7000_ptsz: PFN_cuMemcpyDtoHAsync_v7000_ptsz => cu_memcpy_dtoh_async,
    cuMemcpyDtoDAsync_v3020: PFN_cuMemcpyDtoDAsync_v3020 => cu_memcpy_dtod_async,
    cuMemcpyDtoDAsync_v7000_ptsz: PFN_cuMemcpyDtoDAsync_v7000_ptsz => cu_memcpy_dtod_async,
    cuMemsetD8_v3020: PFN_cuMemsetD8_v3020 => cu_memset_d8,
    cuMemsetD8_v7000_ptds: PFN_cuMemsetD8_v7000_ptds => cu_memset_d8,
    cuMemsetD8Async_v3020: PFN_cuMemsetD8Async_v3020 => cu_memset_d8_async,
    cuMemsetD8Async_v7000_ptsz: PFN_cuMemsetD8Async_v7000_ptsz => cu_memset_d8_async,
    cuMemsetD16_v3020: PFN_cuMemsetD16_v3020 => cu_memset_d16,
    cuMemsetD16_v7000_ptds: PFN_cuMemsetD16_v7000_ptds => cu_memset_d16,
    cuMemsetD16Async_v3020: PFN_cuMemsetD16Async_v3020 => cu_memset_d16_async,
    cuMemsetD16Async_v7000_ptsz: PFN_cuMemsetD16Async_v7000_ptsz => cu_memset_d16_async,
    cuMemsetD32_v3020: PFN_cuMemsetD32_v3020 => cu_memset_d32,
    cuMemsetD32_v7000_ptds: PFN_cuMemsetD32_v7000_ptds => cu_memset_d32,
    cuMemsetD32Async_v3020: PFN_cuMemsetD32Async_v3020 => cu_memset_d32_async,
    cuMemsetD32Async_v7000_ptsz: PFN_cuMemsetD32Async_v7000_ptsz => cu_memset_d32_async,
}
