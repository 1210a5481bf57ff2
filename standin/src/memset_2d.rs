//! 2D memsets: `cuMemsetD2D8`/`D2D16`/`D2D32` and their `Async` forms: `height` rows of
//! `width` values (1, 2 or 4 bytes each), `pitch` bytes apart, done or queued as the 1D
//! memsets of `copy.rs` are (the synchronous forms after the legacy stream's work, the
//! asynchronous ones in stream order, recorded as one memset node on a capturing stream).
//!
//! Checked when called, before anything is written (CUDA_ERROR_INVALID_VALUE): the address
//! aligned to the value's size, a pitch that holds a row (when there is more than one) and
//! keeps every row aligned, every row inside live memory. A width or height of 0 does
//! nothing (after the context or stream is checked).
//!
//! Answers not yet recorded on the H200 (conformance cases `memset_2d.*` pending): a
//! pitch below the row, a pitch that misaligns the rows, a zero width or height.

use std::ffi::{c_uchar, c_ushort};

use cudrv::sys::*;

use crate::copy::ordered;
use crate::model::graph::{MemsetNode, Node};
use crate::world::World;

/// The memset of `height` rows of `width` values of `size` bytes, `pitch` apart.
fn node(
    dst: CUdeviceptr,
    pitch: usize,
    value: u32,
    size: usize,
    width: usize,
    height: usize,
) -> Result<Node, CUresult> {
    let mut node = MemsetNode::new(dst, value, size, width)?;
    let row = width.checked_mul(size).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if height > 1 && (pitch < row || pitch % size != 0) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    (node.rows, node.pitch) = (height, pitch);
    Ok(Node::Memset(node))
}

/// Does or queues the 2D memset (`s`: `None` for the synchronous forms).
fn memset_2d(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: u32,
    size: usize,
    (width, height): (usize, usize),
    s: Option<CUstream>,
) -> CUresult {
    let empty = width == 0 || height == 0;
    match node(dst, pitch, value, size, width, height) {
        Ok(n) => ordered(w, s, empty, n),
        Err(e) => match ordered(w, s, true, Node::Empty) {
            // The context (or stream) is checked first.
            CUresult::CUDA_SUCCESS => e,
            other => other,
        },
    }
}

pub(crate) unsafe fn cu_memset_d2d8(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: c_uchar,
    width: usize,
    height: usize,
) -> CUresult {
    memset_2d(w, dst, pitch, value.into(), 1, (width, height), None)
}

pub(crate) unsafe fn cu_memset_d2d16(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: c_ushort,
    width: usize,
    height: usize,
) -> CUresult {
    memset_2d(w, dst, pitch, value.into(), 2, (width, height), None)
}

pub(crate) unsafe fn cu_memset_d2d32(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: u32,
    width: usize,
    height: usize,
) -> CUresult {
    memset_2d(w, dst, pitch, value, 4, (width, height), None)
}

pub(crate) unsafe fn cu_memset_d2d8_async(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: c_uchar,
    width: usize,
    height: usize,
    s: CUstream,
) -> CUresult {
    memset_2d(w, dst, pitch, value.into(), 1, (width, height), Some(s))
}

pub(crate) unsafe fn cu_memset_d2d16_async(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: c_ushort,
    width: usize,
    height: usize,
    s: CUstream,
) -> CUresult {
    memset_2d(w, dst, pitch, value.into(), 2, (width, height), Some(s))
}

pub(crate) unsafe fn cu_memset_d2d32_async(
    w: &'static World,
    dst: CUdeviceptr,
    pitch: usize,
    value: u32,
    width: usize,
    height: usize,
    s: CUstream,
) -> CUresult {
    memset_2d(w, dst, pitch, value, 4, (width, height), Some(s))
}
