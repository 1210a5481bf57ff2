//! 2D and 3D copies: `cuMemcpy2D`, `cuMemcpy2DUnaligned`, `cuMemcpy2DAsync`, `cuMemcpy3D`,
//! `cuMemcpy3DAsync`, between host memory, device memory and arrays (an array's memory is
//! device memory, `model/array.rs`), with pitches, offsets and (3D) rows per slice.
//!
//! A copy is checked whole when it is called — its memory types, its arrays, each end's
//! pitch against its x offset plus the width, an array's extent, every row's memory live —
//! and refused with CUDA_ERROR_INVALID_VALUE before any byte moves. It is then cut into
//! its rows, each a plain copy (`copy.rs`): the synchronous forms run them after the legacy
//! stream's work, the asynchronous ones queue them in stream order (or, on a capturing
//! stream, record them: one memcpy node per row, where a real driver records one node).
//! `cuMemcpy2DUnaligned` is `cuMemcpy2D` here (no alignment rule is emulated).

use cudrv::sys::*;

use crate::entry::{non_null, status};
use crate::model::array::{rows, Side};
use crate::model::graph::{CopyNode, End, Node};
use crate::run::lock::lock;
use crate::world::World;
use crate::{array, capture, stream};

/// One end of a copy as the descriptor gives it.
struct Given {
    kind: CUmemorytype,
    host: usize,
    device: CUdeviceptr,
    array: CUarray,
    pitch: usize,
    rows: usize,
    x: usize,
    y: usize,
    z: usize,
}

/// The end resolved: its side, and (for an end that is not an array) its x offset, which
/// the pitch must hold together with the width.
fn side(w: &World, g: &Given) -> Result<(Side, usize), CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    let linear = |host: bool, base: u64| -> Result<(Side, usize), CUresult> {
        let row = g.z.checked_mul(g.rows).and_then(|r| r.checked_add(g.y)).ok_or(invalid)?;
        let offset = row.checked_mul(g.pitch).and_then(|o| o.checked_add(g.x)).ok_or(invalid)?;
        let start = base.checked_add(offset as u64).ok_or(invalid)?;
        Ok((Side { host, start, pitch: g.pitch, rows: g.rows, array: None }, g.x))
    };
    match g.kind {
        CUmemorytype::CU_MEMORYTYPE_HOST => linear(true, g.host as u64),
        CUmemorytype::CU_MEMORYTYPE_DEVICE => linear(false, g.device),
        // Unified addressing: device memory if a live allocation holds it.
        CUmemorytype::CU_MEMORYTYPE_UNIFIED => {
            let device = lock(&w.memory).allocation_at(g.device).is_ok();
            linear(!device, g.device)
        }
        CUmemorytype::CU_MEMORYTYPE_ARRAY => {
            let a = array::find(w, g.array)?;
            let (row_bytes, (rows, slices)) = (a.desc.row_bytes(), a.desc.rows_slices());
            let row = g.z.checked_mul(rows).and_then(|r| r.checked_add(g.y)).ok_or(invalid)?;
            let offset = row.checked_mul(row_bytes).and_then(|o| o.checked_add(g.x)).ok_or(invalid)?;
            let start = a.address.checked_add(offset as u64).ok_or(invalid)?;
            let array = Some(((row_bytes, rows, slices), (g.x, g.y, g.z)));
            Ok((Side { host: false, start, pitch: row_bytes, rows, array }, 0))
        }
        _ => Err(invalid),
    }
}

/// The plain copies of each row.
fn plan(
    w: &World,
    dst: &Given,
    src: &Given,
    width: usize,
    height: usize,
    depth: usize,
) -> Result<Vec<CopyNode>, CUresult> {
    let (d, dx) = side(w, dst)?;
    let (s, sx) = side(w, src)?;
    let end = |host: bool, a: u64| if host { End::Host(a as usize) } else { End::Device(a) };
    let nodes = rows(d, s, width, height, depth, (dx, sx))?
        .into_iter()
        .map(|(to, from)| CopyNode { dst: end(d.host, to), src: end(s.host, from), len: width })
        .collect();
    Ok(nodes)
}

/// Checks every row, then does them (`s`: `None`, after the legacy stream's work) or queues
/// them in stream order (recorded on a capturing stream).
fn issue(w: &'static World, s: Option<CUstream>, nodes: Result<Vec<CopyNode>, CUresult>, empty: bool) -> CUresult {
    let r = match s {
        None => capture::before_unsafe_call(w, CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT).and_then(|()| {
            let ctx = w.contexts.current()?;
            if empty {
                return Ok(());
            }
            let nodes = nodes?;
            for n in &nodes {
                crate::graph_node::check(w, &Node::Copy(*n))?;
            }
            ctx.wait_legacy()?;
            ctx.usable()?;
            nodes.iter().try_for_each(|n| crate::sanitized::synchronous(w, &ctx, &Node::Copy(*n)))
        }),
        Some(s) => stream::resolve(w, s).and_then(|t| {
            if empty {
                return Ok(());
            }
            let nodes = nodes?;
            for n in &nodes {
                crate::graph_node::check(w, &Node::Copy(*n))?;
            }
            nodes.into_iter().try_for_each(|n| capture::record_or_run(w, s, Node::Copy(n), &t))
        }),
    };
    status(r)
}

/// A 2D copy.
///
/// # Safety
/// `p` is null or the caller's descriptor.
pub(crate) unsafe fn copy_2d(w: &'static World, p: *const CUDA_MEMCPY2D, s: Option<CUstream>) -> CUresult {
    if let Err(e) = non_null(p) {
        return e;
    }
    // SAFETY: non-null; the caller's descriptor.
    let c = unsafe { *p };
    let src = Given {
        kind: c.srcMemoryType,
        host: c.srcHost as usize,
        device: c.srcDevice,
        array: c.srcArray,
        pitch: c.srcPitch,
        rows: 0,
        x: c.srcXInBytes,
        y: c.srcY,
        z: 0,
    };
    let dst = Given {
        kind: c.dstMemoryType,
        host: c.dstHost as usize,
        device: c.dstDevice,
        array: c.dstArray,
        pitch: c.dstPitch,
        rows: 0,
        x: c.dstXInBytes,
        y: c.dstY,
        z: 0,
    };
    let empty = c.WidthInBytes == 0 || c.Height == 0;
    issue(w, s, plan(w, &dst, &src, c.WidthInBytes, c.Height, 1), empty)
}

/// A 3D copy.
///
/// # Safety
/// `p` is null or the caller's descriptor.
pub(crate) unsafe fn copy_3d(w: &'static World, p: *const CUDA_MEMCPY3D, s: Option<CUstream>) -> CUresult {
    if let Err(e) = non_null(p) {
        return e;
    }
    // SAFETY: non-null; the caller's descriptor.
    let c = unsafe { *p };
    // The levels of detail are ignored, as the H200 ignores them (no mipmapped arrays).
    if !c.reserved0.is_null() || !c.reserved1.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let src = Given {
        kind: c.srcMemoryType,
        host: c.srcHost as usize,
        device: c.srcDevice,
        array: c.srcArray,
        pitch: c.srcPitch,
        rows: c.srcHeight,
        x: c.srcXInBytes,
        y: c.srcY,
        z: c.srcZ,
    };
    let dst = Given {
        kind: c.dstMemoryType,
        host: c.dstHost as usize,
        device: c.dstDevice,
        array: c.dstArray,
        pitch: c.dstPitch,
        rows: c.dstHeight,
        x: c.dstXInBytes,
        y: c.dstY,
        z: c.dstZ,
    };
    // A linear end of a copy of several slices needs its rows per slice.
    let slices_need_rows =
        |g: &Given| c.Depth > 1 && g.kind != CUmemorytype::CU_MEMORYTYPE_ARRAY && g.rows < g.y + c.Height;
    if slices_need_rows(&src) || slices_need_rows(&dst) {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let empty = c.WidthInBytes == 0 || c.Height == 0 || c.Depth == 0;
    issue(w, s, plan(w, &dst, &src, c.WidthInBytes, c.Height, c.Depth), empty)
}

pub(crate) unsafe fn cu_memcpy_2d(w: &'static World, p: *const CUDA_MEMCPY2D) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { copy_2d(w, p, None) }
}

pub(crate) unsafe fn cu_memcpy_2d_async(w: &'static World, p: *const CUDA_MEMCPY2D, s: CUstream) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { copy_2d(w, p, Some(s)) }
}

pub(crate) unsafe fn cu_memcpy_3d(w: &'static World, p: *const CUDA_MEMCPY3D) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { copy_3d(w, p, None) }
}

pub(crate) unsafe fn cu_memcpy_3d_async(w: &'static World, p: *const CUDA_MEMCPY3D, s: CUstream) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { copy_3d(w, p, Some(s)) }
}
