//! `cuMemcpy3DBatchAsync` (12.8; 13.0 drops the failure index): a batch of 3D copies
//! between pointers and arrays, each turned into the `CUDA_MEMCPY3D` that `copy3d.rs`
//! does (a pointer operand is unified memory: device memory if a live allocation holds
//! it), in the batch's order on the stream.
//!
//! Checked before any copy (CUDA_ERROR_INVALID_VALUE, failure index SIZE_MAX): at least
//! one operation, a non-null list, flags 0, a stream that is not the legacy NULL stream
//! (NULL or `CU_STREAM_LEGACY`: "Must not be default NULL stream"). Then each operation
//! (its index as the failure index): a non-zero extent, a known operand type, a row length
//! and layer height each zero (tightly packed) or at least the extent's, a valid source
//! access order, copy flags of `CUmemcpyFlags` only, a live array (an unknown one:
//! CUDA_ERROR_INVALID_VALUE), the same element size at both ends of an
//! array-to-array copy; and what `cuMemcpy3DAsync` checks. The extent is in elements: 1
//! byte for pointer-to-pointer copies, else the array's element size.

use cudrv::sys::*;

use crate::copy3d::copy_3d;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
type T = CUmemcpy3DOperandType;

/// One end of a copy in `CUDA_MEMCPY3D`'s terms: memory type, pointer, array, pitch,
/// rows per slice, byte offset x, y, z.
type End = (CUmemorytype, CUdeviceptr, CUarray, usize, usize, [usize; 3]);

/// The element size an operand fixes (an array's), if any.
fn array_element(w: &World, o: &CUmemcpy3DOperand) -> Result<Option<usize>, CUresult> {
    match o.type_ {
        T::CU_MEMCPY_OPERAND_TYPE_POINTER => Ok(None),
        T::CU_MEMCPY_OPERAND_TYPE_ARRAY => {
            // SAFETY: the operand's type says the union holds an array.
            let a = unsafe { o.op.array.array };
            Ok(Some(crate::array::find(w, a).map_err(|_| INVALID)?.desc.element_bytes()))
        }
        _ => Err(INVALID),
    }
}

/// An operand as one end of a `CUDA_MEMCPY3D`.
fn end(o: &CUmemcpy3DOperand, extent: &CUextent3D, elem: usize) -> Result<End, CUresult> {
    if o.type_ == T::CU_MEMCPY_OPERAND_TYPE_ARRAY {
        // SAFETY: the operand's type says the union holds an array.
        let a = unsafe { o.op.array };
        let x = a.offset.x.checked_mul(elem).ok_or(INVALID)?;
        return Ok((CUmemorytype::CU_MEMORYTYPE_ARRAY, 0, a.array, 0, 0, [x, a.offset.y, a.offset.z]));
    }
    // SAFETY: the operand's type says the union holds a pointer.
    let p = unsafe { o.op.ptr };
    if (p.rowLength != 0 && p.rowLength < extent.width) || (p.layerHeight != 0 && p.layerHeight < extent.height) {
        return Err(INVALID);
    }
    let row = if p.rowLength == 0 { extent.width } else { p.rowLength };
    let rows = if p.layerHeight == 0 { extent.height } else { p.layerHeight };
    let pitch = row.checked_mul(elem).ok_or(INVALID)?;
    Ok((CUmemorytype::CU_MEMORYTYPE_UNIFIED, p.ptr, std::ptr::null_mut(), pitch, rows, [0; 3]))
}

/// The `CUDA_MEMCPY3D` of one operation.
fn descriptor(w: &World, op: &CUDA_MEMCPY3D_BATCH_OP) -> Result<CUDA_MEMCPY3D, CUresult> {
    let e = op.extent;
    if e.width == 0 || e.height == 0 || e.depth == 0 {
        return Err(INVALID);
    }
    type O = CUmemcpySrcAccessOrder;
    let orders = [
        O::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
        O::CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL,
        O::CU_MEMCPY_SRC_ACCESS_ORDER_ANY,
    ];
    if !orders.contains(&op.srcAccessOrder)
        || op.flags & !CUmemcpyFlags::CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE.0 != 0
    {
        return Err(INVALID);
    }
    let elem = match (array_element(w, &op.src)?, array_element(w, &op.dst)?) {
        (Some(a), Some(b)) if a != b => return Err(INVALID),
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => 1,
    };
    let (sk, sp, sa, spitch, srows, [sx, sy, sz]) = end(&op.src, &e, elem)?;
    let (dk, dp, da, dpitch, drows, [dx, dy, dz]) = end(&op.dst, &e, elem)?;
    Ok(CUDA_MEMCPY3D {
        srcXInBytes: sx,
        srcY: sy,
        srcZ: sz,
        srcMemoryType: sk,
        srcHost: sp as usize as *const std::ffi::c_void,
        srcDevice: sp,
        srcArray: sa,
        srcPitch: spitch,
        srcHeight: srows,
        dstXInBytes: dx,
        dstY: dy,
        dstZ: dz,
        dstMemoryType: dk,
        dstHost: dp as usize as *mut std::ffi::c_void,
        dstDevice: dp,
        dstArray: da,
        dstPitch: dpitch,
        dstHeight: drows,
        WidthInBytes: e.width.checked_mul(elem).ok_or(INVALID)?,
        Height: e.height,
        Depth: e.depth,
        ..Default::default()
    })
}

/// The batch; on failure the status and the failing operation's index (SIZE_MAX: none).
///
/// # Safety
/// `ops` is null or holds `n` operations.
unsafe fn batch(
    w: &'static World,
    n: usize,
    ops: *const CUDA_MEMCPY3D_BATCH_OP,
    flags: u64,
    s: CUstream,
) -> Result<(), (CUresult, usize)> {
    let general = |st| (st, usize::MAX);
    w.contexts.current().map_err(general)?;
    if n == 0 || ops.is_null() || flags != 0 || s.is_null() || s as usize == 1 {
        return Err(general(INVALID));
    }
    crate::stream::resolve(w, s).map_err(general)?;
    let mut plans = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: `ops` holds `n` operations (the call's contract).
        let op = unsafe { *ops.add(i) };
        plans.push(descriptor(w, &op).map_err(|st| (st, i))?);
    }
    for (i, d) in plans.iter().enumerate() {
        // SAFETY: a descriptor made above, on the stack.
        match unsafe { copy_3d(w, d, Some(s)) } {
            CUresult::CUDA_SUCCESS => {}
            st => return Err((st, i)),
        }
    }
    Ok(())
}

/// `cuMemcpy3DBatchAsync_v13000`.
pub(crate) unsafe fn cu_memcpy_3d_batch_async(
    w: &'static World,
    n: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    flags: u64,
    s: CUstream,
) -> CUresult {
    // SAFETY: the caller's list, as the call's contract describes it.
    match unsafe { batch(w, n, ops, flags, s) } {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err((st, _)) => st,
    }
}

/// `cuMemcpy3DBatchAsync_v12080`: as `_v13000`, and on failure the failing operation's
/// index in `*fail_idx` (SIZE_MAX when it concerns none).
pub(crate) unsafe fn cu_memcpy_3d_batch_async_v12080(
    w: &'static World,
    n: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    fail_idx: *mut usize,
    flags: u64,
    s: CUstream,
) -> CUresult {
    // SAFETY: the caller's list, as the call's contract describes it.
    match unsafe { batch(w, n, ops, flags, s) } {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err((st, i)) => {
            if !fail_idx.is_null() {
                // SAFETY: a non-null out-pointer from the caller.
                unsafe { fail_idx.write(i) };
            }
            st
        }
    }
}
