//! Device allocation entry points: `cuMemAlloc`, `cuMemFree`, `cuMemGetInfo`,
//! `cuMemGetAddressRange` and the
//! stream-ordered `cuMemAllocAsync`/`cuMemFreeAsync` (done at once: see `stream.rs`; on a
//! capturing stream CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the capture: no
//! memory nodes).
//!
//! Behaviour follows `docs/driver-facts.md` ("facts").

use cudrv::sys::*;

use crate::context;
use crate::entry::{non_null, status, write};
use crate::ledger::AllocationKind;
use crate::memory::Owner;
use crate::{capture, memory, pool_attr, stream};

/// `cuMemAlloc`: facts: size 0 is CUDA_ERROR_INVALID_VALUE, `1 << 62` is
/// CUDA_ERROR_OUT_OF_MEMORY.
pub(crate) unsafe fn cu_mem_alloc(dptr: *mut CUdeviceptr, size: usize) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        // facts (conformance): a failed allocation writes 0.
        write(dptr, 0)?;
        let c = context::current()?;
        capture::before_unsafe_call(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)?;
        write(dptr, memory::alloc(size, AllocationKind::Device, None, Owner::of(&c))?)
    });
    status(r)
}

/// `cuMemFree`: facts: 0 is SUCCESS (even with no current context). A freed address:
/// CUDA_ERROR_INVALID_VALUE and a double free in the ledger.
pub(crate) unsafe fn cu_mem_free(dptr: CUdeviceptr) -> CUresult {
    if dptr == 0 {
        return CUresult::CUDA_SUCCESS;
    }
    status(context::current().and_then(|_| memory::free(dptr)))
}

pub(crate) unsafe fn cu_mem_get_info(free: *mut usize, total: *mut usize) -> CUresult {
    let r = non_null(free).and_then(|()| {
        non_null(total)?;
        context::current()?;
        let (f, t) = memory::info();
        write(free, f)?;
        write(total, t)
    });
    status(r)
}

/// `cuMemGetAddressRange`: either out-pointer may be null. Outside every live allocation:
/// CUDA_ERROR_NOT_FOUND, with base and size written as 0 (facts).
pub(crate) unsafe fn cu_mem_get_address_range(base: *mut CUdeviceptr, size: *mut usize, dptr: CUdeviceptr) -> CUresult {
    let r = context::current().and_then(|_| {
        let (start, len) =
            memory::range(dptr).or_else(|e| if e == CUresult::CUDA_ERROR_NOT_FOUND { Ok((0, 0)) } else { Err(e) })?;
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

/// `cuMemAllocAsync`: from the current pool of the stream's device, at once. Size 0
/// gives 0 (facts).
pub(crate) unsafe fn cu_mem_alloc_async(dptr: *mut CUdeviceptr, size: usize, s: CUstream) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        write(dptr, 0)?;
        let t = stream::resolve(s)?;
        capture::refuse(s)?;
        if size == 0 {
            return write(dptr, 0);
        }
        let pool = pool_attr::current_pool(t.ctx.device)?;
        write(dptr, memory::alloc(size, AllocationKind::Async, Some(pool), Owner::of(&t.ctx))?)
    });
    status(r)
}

/// `cuMemFreeAsync`: at once; as `cuMemFree` (0 succeeds, facts).
pub(crate) unsafe fn cu_mem_free_async(dptr: CUdeviceptr, s: CUstream) -> CUresult {
    let r = stream::resolve(s).and_then(|_| {
        capture::refuse(s)?;
        match dptr {
            0 => Ok(()),
            _ => memory::free(dptr),
        }
    });
    status(r)
}
