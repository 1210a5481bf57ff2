//! Device allocation entry points: `cuMemAlloc`, `cuMemFree`, `cuMemGetInfo`,
//! `cuMemGetAddressRange` and the stream-ordered `cuMemAllocAsync`/`cuMemFreeAsync` (on a
//! capturing stream they record graph memory nodes, `graph_mem.rs`).
//!
//! A stream-ordered allocation is made when it is called (its address is returned); its
//! free is queued in stream order (`stream.rs`) and done when the stream reaches it: only
//! then does its range go back to the pool, whose next allocation of the same size reuses
//! it (`model/memory.rs`). `cuMemFree` frees at once, without waiting for queued work that
//! uses the memory (such work then fails when it runs).
//!
//! Behaviour follows `docs/driver-facts.md` ("facts").

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::model::memory::AllocationKind;
use crate::model::memory::Owner;
use crate::run::lock::lock;
use crate::world::World;
use crate::{capture, pool_attr, stream};

/// `cuMemAlloc`: facts: size 0 is CUDA_ERROR_INVALID_VALUE, `1 << 62` is
/// CUDA_ERROR_OUT_OF_MEMORY.
pub(crate) unsafe fn cu_mem_alloc(w: &World, dptr: *mut CUdeviceptr, size: usize) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        // facts (conformance): a failed allocation writes 0.
        write(dptr, 0)?;
        let c = w.contexts.current()?;
        capture::before_unsafe_call(w, CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)?;
        let a = lock(&w.memory).alloc(size, AllocationKind::Device, None, Owner::of(&c))?;
        w.sanitizer.allocated(a, size);
        write(dptr, a)
    });
    status(r)
}

/// `cuMemFree`: facts: 0 is SUCCESS (even with no current context). A freed address:
/// CUDA_ERROR_INVALID_VALUE and a double free in the ledger.
pub(crate) unsafe fn cu_mem_free(w: &World, dptr: CUdeviceptr) -> CUresult {
    if dptr == 0 {
        return CUresult::CUDA_SUCCESS;
    }
    let range = lock(&w.memory).range(dptr).ok();
    let r = w.contexts.current().and_then(|_| lock(&w.memory).free(dptr));
    if r.is_ok() {
        if let Some((start, size)) = range {
            w.sanitizer.forget(start, size);
        }
        crate::managed::forget(w, dptr);
    }
    status(r)
}

pub(crate) unsafe fn cu_mem_get_info(w: &World, free: *mut usize, total: *mut usize) -> CUresult {
    let r = non_null(free).and_then(|()| {
        non_null(total)?;
        w.contexts.current()?;
        let (f, t) = lock(&w.memory).info();
        write(free, f)?;
        write(total, t)
    });
    status(r)
}

/// `cuMemGetAddressRange`: either out-pointer may be null. Outside every live allocation:
/// CUDA_ERROR_NOT_FOUND, with base and size written as 0 (facts).
pub(crate) unsafe fn cu_mem_get_address_range(
    w: &World,
    base: *mut CUdeviceptr,
    size: *mut usize,
    dptr: CUdeviceptr,
) -> CUresult {
    let r = w.contexts.current().and_then(|_| {
        let (start, len) = lock(&w.memory).range(dptr).or_else(|e| {
            if e == CUresult::CUDA_ERROR_NOT_FOUND {
                Ok((0, 0))
            } else {
                Err(e)
            }
        })?;
        let found = len != 0;
        if !base.is_null() {
            write(base, start)?;
        }
        if !size.is_null() {
            write(size, len)?;
        }
        if found {
            Ok(())
        } else {
            Err(CUresult::CUDA_ERROR_NOT_FOUND)
        }
    });
    status(r)
}

/// `cuMemAllocAsync`: from the current pool of the stream's device, made now (a range its
/// pool got back from a free already done, if one of that size is there). Size 0 gives 0
/// (facts).
pub(crate) unsafe fn cu_mem_alloc_async(w: &World, dptr: *mut CUdeviceptr, size: usize, s: CUstream) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        write(dptr, 0)?;
        let t = stream::resolve(w, s)?;
        // Captured: an allocation node (`graph_mem.rs`).
        if let Some(a) = crate::graph_mem::capture_alloc(w, s, size, t.ctx.device, Owner::of(&t.ctx))? {
            return write(dptr, a);
        }
        if size == 0 {
            return write(dptr, 0);
        }
        let pool = pool_attr::current_pool(w, t.ctx.device)?;
        let a = lock(&w.memory).alloc(size, AllocationKind::Async, Some(pool), Owner::of(&t.ctx))?;
        w.sanitizer.allocated(a, size);
        write(dptr, a)
    });
    status(r)
}

/// `cuMemFreeAsync`: queued in stream order (0 succeeds, facts). An address that starts no
/// live allocation, or whose free is queued already, is refused at once
/// (CUDA_ERROR_INVALID_VALUE; a double free in the ledger).
pub(crate) unsafe fn cu_mem_free_async(w: &'static World, dptr: CUdeviceptr, s: CUstream) -> CUresult {
    let r = stream::resolve(w, s).and_then(|t| {
        // Captured: a free node (`graph_mem.rs`).
        if crate::graph_mem::capture_free(w, s, dptr)? {
            return Ok(());
        }
        if dptr == 0 {
            return Ok(());
        }
        lock(&w.memory).begin_free(dptr)?;
        let op = w.sanitizer.issue(&t, from_ptr(s), || format!("stream-ordered free of {dptr:#x}"));
        t.submit(move || crate::sanitized::free(w, op.as_ref(), dptr)).map(drop)
    });
    status(r)
}
