//! Pinned host memory: `cuMemAllocHost`, `cuMemHostAlloc`, `cuMemHostGetFlags`,
//! `cuMemFreeHost`. The buffers are
//! ordinary host memory, listed in the ledger as [`crate::AllocationKind::Pinned`]. Size 0
//! gives NULL, and freeing NULL succeeds (driver-facts.md, "Edge cases").

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::run::lock::lock;
use crate::world::World;

const VALID_FLAGS: c_uint = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;

fn alloc(w: &World, pp: *mut *mut c_void, size: usize, flags: c_uint) -> Result<(), CUresult> {
    non_null(pp)?;
    // facts (conformance): a failed allocation writes NULL.
    write(pp, std::ptr::null_mut())?;
    if flags & !VALID_FLAGS != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let c = w.contexts.current()?;
    write(pp, lock(&w.memory).alloc_pinned(size, crate::model::memory::Owner::of(&c), flags)?.cast())
}

/// `cuMemHostGetFlags`: the flags the allocation holding `p` (any address inside it) was
/// made with, and CU_MEMHOSTALLOC_DEVICEMAP, which the real driver always adds (0 and
/// `cuMemAllocHost` give 2, PORTABLE gives 3); any other address is
/// CUDA_ERROR_INVALID_VALUE and writes nothing (docs/driver-facts.md, "Pinned host memory").
pub(crate) unsafe fn cu_mem_host_get_flags(w: &World, flags: *mut c_uint, p: *mut c_void) -> CUresult {
    status(non_null(flags).and_then(|()| {
        w.contexts.current()?;
        write(flags, lock(&w.memory).pinned_flags(from_ptr(p))? | CU_MEMHOSTALLOC_DEVICEMAP)
    }))
}

pub(crate) unsafe fn cu_mem_alloc_host(w: &World, pp: *mut *mut c_void, size: usize) -> CUresult {
    status(alloc(w, pp, size, 0))
}

pub(crate) unsafe fn cu_mem_host_alloc(w: &World, pp: *mut *mut c_void, size: usize, flags: c_uint) -> CUresult {
    status(alloc(w, pp, size, flags))
}

/// `cuMemFreeHost`: NULL succeeds (facts); a freed buffer is CUDA_ERROR_INVALID_VALUE and
/// a double free in the ledger.
pub(crate) unsafe fn cu_mem_free_host(w: &World, p: *mut c_void) -> CUresult {
    if p.is_null() {
        return CUresult::CUDA_SUCCESS;
    }
    let range = lock(&w.memory).describe(from_ptr(p)).map(|i| (i.start, i.size));
    let r = lock(&w.memory).free_pinned(from_ptr(p));
    if let (Ok(()), Some((start, size))) = (&r, range) {
        w.sanitizer.forget(start, size);
    }
    status(r)
}
