//! Copies to and from arrays by byte offset — `cuMemcpyHtoA`, `cuMemcpyAtoH`,
//! `cuMemcpyDtoA`, `cuMemcpyAtoD`, `cuMemcpyAtoA`, `cuMemcpyHtoAAsync`,
//! `cuMemcpyAtoHAsync` — and the 3D copies between contexts, `cuMemcpy3DPeer` and
//! `cuMemcpy3DPeerAsync`.
//!
//! A copy by offset is the one-row 2D copy of `copy3d.rs` (checked whole, done after the
//! legacy stream's work or queued in stream order, recorded on a capturing stream): the
//! array end starts `offset` bytes into the array's first row and the copy must stay in
//! that row (a 1D array's row is all of it). `cuMemcpyAtoA` copies bytes: the CUDA
//! documentation asks for elements of one size and a count that is a multiple of it, but
//! the H200 does not check either (`copy_array.atoa_*`), nor does the stand-in.
//!
//! A peer 3D copy is the 3D copy of `copy3d.rs` once each device end's context (its
//! `srcContext`/`dstContext`), when not null, is found live and usable (the H200 copies
//! with null contexts: `copy_array.peer_3d_null_contexts`); the contexts of host and array
//! ends are ignored (for arrays, the documentation says so). The levels of detail are
//! ignored (level 0). `cuMemcpy3DPeerAsync` on a capturing stream answers
//! CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture, as
//! `cuMemcpyPeerAsync` does here (`peer.rs`).
//!
//! Checked against the H200 (`copy_array.*`).

use std::ffi::c_void;

use cudrv::sys::*;

use crate::copy3d::{copy_2d, copy_3d};
use crate::entry::{from_ptr, non_null};
use crate::world::World;
use crate::{array, capture, stream};

const HOST: CUmemorytype = CUmemorytype::CU_MEMORYTYPE_HOST;
const DEVICE: CUmemorytype = CUmemorytype::CU_MEMORYTYPE_DEVICE;
const ARRAY: CUmemorytype = CUmemorytype::CU_MEMORYTYPE_ARRAY;

/// One end of a copy by offset.
#[derive(Clone, Copy)]
enum At {
    Host(*const c_void),
    Device(CUdeviceptr),
    Array(CUarray, usize),
}

/// The copy of `n` bytes from `src` to `dst`, as a one-row 2D copy.
fn by_offset(w: &'static World, dst: At, src: At, n: usize, s: Option<CUstream>) -> CUresult {
    let mut c = CUDA_MEMCPY2D { WidthInBytes: n, Height: 1, ..Default::default() };
    match dst {
        At::Host(p) => (c.dstMemoryType, c.dstHost, c.dstPitch) = (HOST, p.cast_mut(), n),
        At::Device(d) => (c.dstMemoryType, c.dstDevice, c.dstPitch) = (DEVICE, d, n),
        At::Array(a, x) => (c.dstMemoryType, c.dstArray, c.dstXInBytes) = (ARRAY, a, x),
    }
    match src {
        At::Host(p) => (c.srcMemoryType, c.srcHost, c.srcPitch) = (HOST, p, n),
        At::Device(d) => (c.srcMemoryType, c.srcDevice, c.srcPitch) = (DEVICE, d, n),
        At::Array(a, x) => (c.srcMemoryType, c.srcArray, c.srcXInBytes) = (ARRAY, a, x),
    }
    // SAFETY: a descriptor of the caller's pointers, as the call's contract gives them.
    unsafe { copy_2d(w, &c, s) }
}

pub(crate) unsafe fn cu_memcpy_htoa(
    w: &'static World,
    dst: CUarray,
    offset: usize,
    src: *const c_void,
    n: usize,
) -> CUresult {
    by_offset(w, At::Array(dst, offset), At::Host(src), n, None)
}

pub(crate) unsafe fn cu_memcpy_atoh(
    w: &'static World,
    dst: *mut c_void,
    src: CUarray,
    offset: usize,
    n: usize,
) -> CUresult {
    by_offset(w, At::Host(dst.cast_const()), At::Array(src, offset), n, None)
}

pub(crate) unsafe fn cu_memcpy_htoa_async(
    w: &'static World,
    dst: CUarray,
    offset: usize,
    src: *const c_void,
    n: usize,
    s: CUstream,
) -> CUresult {
    by_offset(w, At::Array(dst, offset), At::Host(src), n, Some(s))
}

pub(crate) unsafe fn cu_memcpy_atoh_async(
    w: &'static World,
    dst: *mut c_void,
    src: CUarray,
    offset: usize,
    n: usize,
    s: CUstream,
) -> CUresult {
    by_offset(w, At::Host(dst.cast_const()), At::Array(src, offset), n, Some(s))
}

pub(crate) unsafe fn cu_memcpy_dtoa(
    w: &'static World,
    dst: CUarray,
    offset: usize,
    src: CUdeviceptr,
    n: usize,
) -> CUresult {
    by_offset(w, At::Array(dst, offset), At::Device(src), n, None)
}

pub(crate) unsafe fn cu_memcpy_atod(
    w: &'static World,
    dst: CUdeviceptr,
    src: CUarray,
    offset: usize,
    n: usize,
) -> CUresult {
    by_offset(w, At::Device(dst), At::Array(src, offset), n, None)
}

/// `cuMemcpyAtoA`: `n` bytes, whatever the arrays' element sizes; an unknown array:
/// CUDA_ERROR_INVALID_HANDLE. Nothing is copied on error.
pub(crate) unsafe fn cu_memcpy_atoa(
    w: &'static World,
    dst: CUarray,
    dst_offset: usize,
    src: CUarray,
    src_offset: usize,
    n: usize,
) -> CUresult {
    match array::find(w, dst).and_then(|_| array::find(w, src)) {
        Ok(_) => by_offset(w, At::Array(dst, dst_offset), At::Array(src, src_offset), n, None),
        Err(e) => e,
    }
}

/// Checks the context of a device end of a peer copy: null, or live and usable. Host and
/// array ends name none.
fn check_end(w: &World, kind: CUmemorytype, ctx: CUcontext) -> Result<(), CUresult> {
    if !ctx.is_null() && matches!(kind, CUmemorytype::CU_MEMORYTYPE_DEVICE | CUmemorytype::CU_MEMORYTYPE_UNIFIED) {
        w.contexts.lookup(from_ptr(ctx))?.usable()?;
    }
    Ok(())
}

/// A peer 3D copy: its contexts checked, then the 3D copy it describes.
///
/// # Safety
/// `p` is null or the caller's descriptor.
unsafe fn copy_3d_peer(w: &'static World, p: *const CUDA_MEMCPY3D_PEER, s: Option<CUstream>) -> CUresult {
    let r = non_null(p).and_then(|()| {
        // SAFETY: non-null; the caller's descriptor.
        let c = unsafe { *p };
        check_end(w, c.srcMemoryType, c.srcContext)?;
        check_end(w, c.dstMemoryType, c.dstContext)?;
        Ok(CUDA_MEMCPY3D {
            srcXInBytes: c.srcXInBytes,
            srcY: c.srcY,
            srcZ: c.srcZ,
            srcLOD: c.srcLOD,
            srcMemoryType: c.srcMemoryType,
            srcHost: c.srcHost,
            srcDevice: c.srcDevice,
            srcArray: c.srcArray,
            srcPitch: c.srcPitch,
            srcHeight: c.srcHeight,
            dstXInBytes: c.dstXInBytes,
            dstY: c.dstY,
            dstZ: c.dstZ,
            dstLOD: c.dstLOD,
            dstMemoryType: c.dstMemoryType,
            dstHost: c.dstHost,
            dstDevice: c.dstDevice,
            dstArray: c.dstArray,
            dstPitch: c.dstPitch,
            dstHeight: c.dstHeight,
            WidthInBytes: c.WidthInBytes,
            Height: c.Height,
            Depth: c.Depth,
            ..Default::default()
        })
    });
    match r {
        // SAFETY: a descriptor built from the caller's, of the caller's pointers.
        Ok(c) => unsafe { copy_3d(w, &c, s) },
        Err(e) => e,
    }
}

/// `cuMemcpy3DPeer`: on the current context's legacy stream.
pub(crate) unsafe fn cu_memcpy_3d_peer(w: &'static World, p: *const CUDA_MEMCPY3D_PEER) -> CUresult {
    // SAFETY: forwarded from the program.
    unsafe { copy_3d_peer(w, p, None) }
}

/// `cuMemcpy3DPeerAsync`: in stream order; not on a capturing stream (see above).
pub(crate) unsafe fn cu_memcpy_3d_peer_async(w: &'static World, p: *const CUDA_MEMCPY3D_PEER, s: CUstream) -> CUresult {
    if let Err(e) = stream::resolve(w, s).and_then(|_| capture::refuse(w, s)) {
        return e;
    }
    // SAFETY: forwarded from the program.
    unsafe { copy_3d_peer(w, p, Some(s)) }
}
