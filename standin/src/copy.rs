//! Copies and memsets: `cuMemcpyHtoD`/`DtoH`/`DtoD`, `cuMemsetD8`/`D16`/`D32`, and their
//! stream forms (done at once: see `stream.rs`; recorded as graph nodes on a capturing
//! stream). Touching freed memory is CUDA_ERROR_INVALID_VALUE (as on a real driver: not
//! sticky) and a use after free in the ledger; an address outside every allocation is
//! CUDA_ERROR_INVALID_VALUE (see `memory.rs`).

use std::ffi::{c_uchar, c_void};

use cudrv::sys::*;

use crate::entry::{enter, register, status};
use crate::graph_node::{CopyNode, End, MemsetNode, Node};
use crate::{capture, context, stream};

/// Does `node` (nothing when `empty`) in the current context (synchronous forms) or the
/// stream's; on a capturing stream records it instead.
fn ordered(s: Option<CUstream>, empty: bool, node: Node) -> CUresult {
    // Work on the legacy stream (the synchronous forms use it) would wait for a capturing
    // stream: STREAM_CAPTURE_IMPLICIT (driver-facts.md, conformance on the H200).
    if s.is_none_or(capture::is_default) {
        if let Err(e) = capture::before_unsafe_call(CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) {
            return e;
        }
    }
    let r = match s {
        None => context::current().and_then(|ctx| if empty { Ok(()) } else { node.run(&ctx) }),
        Some(s) => {
            stream::resolve(s).and_then(|t| if empty { Ok(()) } else { capture::record_or_run(s, node, &t.ctx) })
        }
    };
    status(r)
}

/// Copies `n` bytes in the current context (`s`: `None`) or in stream order.
pub(crate) fn copy(dst: End, src: End, n: usize, s: Option<CUstream>) -> CUresult {
    ordered(s, n == 0, Node::Copy(CopyNode { dst, src, len: n }))
}

fn htod(dst: CUdeviceptr, src: *const c_void, n: usize, s: Option<CUstream>) -> CUresult {
    copy(End::Device(dst), End::Host(src as usize), n, s)
}

fn dtoh(dst: *mut c_void, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    copy(End::Host(dst as usize), End::Device(src), n, s)
}

fn dtod(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    copy(End::Device(dst), End::Device(src), n, s)
}

fn memset(dst: CUdeviceptr, value: c_uchar, n: usize, s: Option<CUstream>) -> CUresult {
    memset_wide(dst, u32::from(value), 1, n, s)
}

/// `n` values of `value` (`width` bytes each) from `dst`, which must be aligned to them
/// (a real driver refuses a misaligned address with CUDA_ERROR_INVALID_VALUE).
fn memset_wide(dst: CUdeviceptr, value: u32, width: usize, n: usize, s: Option<CUstream>) -> CUresult {
    match MemsetNode::new(dst, value, width, n) {
        Ok(node) => ordered(s, n == 0, Node::Memset(node)),
        // The context is checked first.
        Err(e) => match ordered(s, true, Node::Empty) {
            CUresult::CUDA_SUCCESS => e,
            other => other,
        },
    }
}

unsafe extern "C" fn cu_memset_d16(dst: CUdeviceptr, value: u16, n: usize) -> CUresult {
    enter!("cuMemsetD16");
    memset_wide(dst, value.into(), 2, n, None)
}

unsafe extern "C" fn cu_memset_d16_async(dst: CUdeviceptr, value: u16, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemsetD16Async");
    memset_wide(dst, value.into(), 2, n, Some(s))
}

unsafe extern "C" fn cu_memset_d32(dst: CUdeviceptr, value: u32, n: usize) -> CUresult {
    enter!("cuMemsetD32");
    memset_wide(dst, value, 4, n, None)
}

unsafe extern "C" fn cu_memset_d32_async(dst: CUdeviceptr, value: u32, n: usize, s: CUstream) -> CUresult {
    enter!("cuMemsetD32Async");
    memset_wide(dst, value, 4, n, Some(s))
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
