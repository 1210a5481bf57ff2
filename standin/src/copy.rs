//! Copies and memsets: `cuMemcpyHtoD`/`DtoH`/`DtoD`, `cuMemsetD8`, and their stream forms
//! (done at once: see `stream.rs`). Touching freed memory is CUDA_ERROR_ILLEGAL_ADDRESS and
//! a use after free in the ledger; an address outside every allocation is
//! CUDA_ERROR_INVALID_VALUE (see `memory.rs`).

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
}
