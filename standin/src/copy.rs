//! Copies and memsets: `cuMemcpyHtoD`/`DtoH`/`DtoD`, `cuMemsetD8`/`D16`/`D32`, and their
//! stream forms (in stream order: see `stream.rs`; recorded as graph nodes on a capturing
//! stream). The synchronous forms run on the legacy default stream: they wait for its work
//! and for the work of the context's blocking streams (not non-blocking ones), then are
//! done before they return. Touching freed memory is CUDA_ERROR_INVALID_VALUE when the
//! call is made (as on a real driver: not sticky) and a use after free in the ledger; an
//! address outside every allocation is CUDA_ERROR_INVALID_VALUE (see `memory.rs`). A
//! queued copy whose memory is freed before it runs fails when it runs: the context is
//! left sticky-failed with CUDA_ERROR_ILLEGAL_ADDRESS, as a fault on a GPU.

use std::ffi::{c_uchar, c_void};

use cudrv::sys::*;

use crate::entry::status;
use crate::model::graph::{CopyNode, End, MemsetNode, Node};
use crate::world::World;
use crate::{capture, stream};

/// Does `node` (nothing when `empty`) in the current context, after the work of the legacy
/// stream and the blocking streams (synchronous forms), or queues it in the stream's order;
/// on a capturing stream records it instead.
pub(crate) fn ordered(w: &'static World, s: Option<CUstream>, empty: bool, node: Node) -> CUresult {
    // Work on the legacy stream (the synchronous forms use it) would wait for a capturing
    // stream: STREAM_CAPTURE_IMPLICIT (driver-facts.md, conformance on the H200).
    if s.is_none_or(capture::is_default) {
        if let Err(e) = capture::before_unsafe_call(w, CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) {
            return e;
        }
    }
    let r = match s {
        None => w.contexts.current().and_then(|ctx| {
            if empty {
                return Ok(());
            }
            crate::graph_node::check(w, &node)?;
            ctx.wait_legacy()?;
            ctx.usable()?;
            crate::sanitized::synchronous(w, &ctx, &node)
        }),
        Some(s) => {
            stream::resolve(w, s).and_then(|t| if empty { Ok(()) } else { capture::record_or_run(w, s, node, &t) })
        }
    };
    status(r)
}

/// Copies `n` bytes in the current context (`s`: `None`) or in stream order.
pub(crate) fn copy(w: &'static World, dst: End, src: End, n: usize, s: Option<CUstream>) -> CUresult {
    ordered(w, s, n == 0, Node::Copy(CopyNode { dst, src, len: n }))
}

fn htod(w: &'static World, dst: CUdeviceptr, src: *const c_void, n: usize, s: Option<CUstream>) -> CUresult {
    copy(w, End::Device(dst), End::Host(src as usize), n, s)
}

fn dtoh(w: &'static World, dst: *mut c_void, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    copy(w, End::Host(dst as usize), End::Device(src), n, s)
}

fn dtod(w: &'static World, dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: Option<CUstream>) -> CUresult {
    copy(w, End::Device(dst), End::Device(src), n, s)
}

fn memset(w: &'static World, dst: CUdeviceptr, value: c_uchar, n: usize, s: Option<CUstream>) -> CUresult {
    memset_wide(w, dst, u32::from(value), 1, n, s)
}

/// `n` values of `value` (`width` bytes each) from `dst`, which must be aligned to them
/// (a real driver refuses a misaligned address with CUDA_ERROR_INVALID_VALUE).
fn memset_wide(
    w: &'static World,
    dst: CUdeviceptr,
    value: u32,
    width: usize,
    n: usize,
    s: Option<CUstream>,
) -> CUresult {
    match MemsetNode::new(dst, value, width, n) {
        Ok(node) => ordered(w, s, n == 0, Node::Memset(node)),
        // The context is checked first.
        Err(e) => match ordered(w, s, true, Node::Empty) {
            CUresult::CUDA_SUCCESS => e,
            other => other,
        },
    }
}

pub(crate) unsafe fn cu_memset_d16(w: &'static World, dst: CUdeviceptr, value: u16, n: usize) -> CUresult {
    memset_wide(w, dst, value.into(), 2, n, None)
}

pub(crate) unsafe fn cu_memset_d16_async(
    w: &'static World,
    dst: CUdeviceptr,
    value: u16,
    n: usize,
    s: CUstream,
) -> CUresult {
    memset_wide(w, dst, value.into(), 2, n, Some(s))
}

pub(crate) unsafe fn cu_memset_d32(w: &'static World, dst: CUdeviceptr, value: u32, n: usize) -> CUresult {
    memset_wide(w, dst, value, 4, n, None)
}

pub(crate) unsafe fn cu_memset_d32_async(
    w: &'static World,
    dst: CUdeviceptr,
    value: u32,
    n: usize,
    s: CUstream,
) -> CUresult {
    memset_wide(w, dst, value, 4, n, Some(s))
}

pub(crate) unsafe fn cu_memcpy_htod(w: &'static World, dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    htod(w, dst, src, n, None)
}

pub(crate) unsafe fn cu_memcpy_dtoh(w: &'static World, dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    dtoh(w, dst, src, n, None)
}

pub(crate) unsafe fn cu_memcpy_dtod(w: &'static World, dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult {
    dtod(w, dst, src, n, None)
}

pub(crate) unsafe fn cu_memcpy_htod_async(
    w: &'static World,
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
    s: CUstream,
) -> CUresult {
    htod(w, dst, src, n, Some(s))
}

pub(crate) unsafe fn cu_memcpy_dtoh_async(
    w: &'static World,
    dst: *mut c_void,
    src: CUdeviceptr,
    n: usize,
    s: CUstream,
) -> CUresult {
    dtoh(w, dst, src, n, Some(s))
}

pub(crate) unsafe fn cu_memcpy_dtod_async(
    w: &'static World,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    n: usize,
    s: CUstream,
) -> CUresult {
    dtod(w, dst, src, n, Some(s))
}

pub(crate) unsafe fn cu_memset_d8(w: &'static World, dst: CUdeviceptr, value: c_uchar, n: usize) -> CUresult {
    memset(w, dst, value, n, None)
}

pub(crate) unsafe fn cu_memset_d8_async(
    w: &'static World,
    dst: CUdeviceptr,
    value: c_uchar,
    n: usize,
    s: CUstream,
) -> CUresult {
    memset(w, dst, value, n, Some(s))
}
