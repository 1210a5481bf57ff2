//! Host memory registration: `cuMemHostRegister` and `cuMemHostUnregister` over the
//! pinned memory of `model/memory.rs`. The program's memory becomes pinned, mapped host
//! memory (its device pointer is its own address, as for `cuMemHostAlloc`'s), listed in
//! the ledger as [`crate::AllocationKind::Registered`] until it is unregistered. Flags
//! beyond portable, device map, IO memory and read-only: CUDA_ERROR_INVALID_VALUE.

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, status};
use crate::model::memory::Owner;
use crate::run::lock::lock;
use crate::world::World;

const VALID_FLAGS: c_uint = CU_MEMHOSTREGISTER_PORTABLE
    | CU_MEMHOSTREGISTER_DEVICEMAP
    | CU_MEMHOSTREGISTER_IOMEMORY
    | CU_MEMHOSTREGISTER_READ_ONLY;

/// `cuMemHostRegister`: NULL, size 0 or an unknown flag: CUDA_ERROR_INVALID_VALUE; memory
/// that overlaps registered or pinned memory: CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
pub(crate) unsafe fn cu_mem_host_register(w: &World, p: *mut c_void, size: usize, flags: c_uint) -> CUresult {
    let r = (|| {
        let c = w.contexts.current()?;
        if flags & !VALID_FLAGS != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        lock(&w.memory).register_host(p.cast(), size, Owner::of(&c), flags)
    })();
    status(r)
}

/// `cuMemHostUnregister`: the first address of a registration; an address inside one:
/// CUDA_ERROR_INVALID_VALUE; any other address: CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED.
pub(crate) unsafe fn cu_mem_host_unregister(w: &World, p: *mut c_void) -> CUresult {
    status(w.contexts.current().and_then(|_| lock(&w.memory).unregister_host(from_ptr(p))))
}
