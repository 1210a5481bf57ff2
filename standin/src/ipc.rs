//! Memory pool IPC: exporting a pool as a file descriptor and importing it, exporting an
//! allocation and importing it at a new address. Export and import happen in one process
//! here; the "file descriptor" is a unique number, not a real descriptor.
//!
//! Duplicate imports and the unmapping of all of them by the free of one follow a real
//! driver (nvbug 5570902): see `memory.rs`.

use std::ffi::{c_int, c_ulonglong, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::pool::Pool;
use crate::pool;
use crate::run::lock::lock;
use crate::world::World;

/// Marks export data made by the stand-in.
const MAGIC: [u8; 8] = *b"cudrvIPC";

fn posix_fd(t: CUmemAllocationHandleType) -> Result<(), CUresult> {
    if t == CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
        Ok(())
    } else {
        Err(CUresult::CUDA_ERROR_INVALID_VALUE)
    }
}

fn export_pool(
    w: &World,
    out: *mut c_void,
    pool: CUmemoryPool,
    t: CUmemAllocationHandleType,
    flags: c_ulonglong,
) -> Result<(), CUresult> {
    non_null(out)?;
    posix_fd(t)?;
    let h = from_ptr(pool);
    if flags != 0 || !pool::find(w, h)?.exportable {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let fd = {
        let mut f = lock(&w.ipc_fds);
        let fd = f.next;
        f.next = fd.saturating_add(1);
        f.pools.insert(fd, h);
        fd
    };
    write(out.cast::<c_int>(), fd)
}

/// `cuMemPoolExportToShareableHandle`: writes an `int` "file descriptor" for a pool made
/// with POSIX_FILE_DESCRIPTOR handles; other handle types: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_pool_export_to_shareable_handle(
    w: &World,
    out: *mut c_void,
    pool: CUmemoryPool,
    t: CUmemAllocationHandleType,
    flags: c_ulonglong,
) -> CUresult {
    status(export_pool(w, out, pool, t, flags))
}

fn import_pool(
    w: &World,
    out: *mut CUmemoryPool,
    handle: *mut c_void,
    t: CUmemAllocationHandleType,
) -> Result<(), CUresult> {
    non_null(out)?;
    posix_fd(t)?;
    // A file descriptor is passed as the handle's value.
    let fd = c_int::try_from(handle as usize).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let source = *lock(&w.ipc_fds).pools.get(&fd).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    let exported = pool::find(w, source)?;
    let h = pool::add(w, Pool::imported(source, exported.device));
    write(out, to_ptr(h))
}

/// `cuMemPoolImportFromShareableHandle`: a new pool handle for the importing side.
pub(crate) unsafe fn cu_mem_pool_import_from_shareable_handle(
    w: &World,
    out: *mut CUmemoryPool,
    handle: *mut c_void,
    t: CUmemAllocationHandleType,
    _flags: c_ulonglong,
) -> CUresult {
    status(import_pool(w, out, handle, t))
}

fn export_pointer(w: &World, out: *mut CUmemPoolPtrExportData, ptr: CUdeviceptr) -> Result<(), CUresult> {
    non_null(out)?;
    let (pool, size) = lock(&w.memory).exportable(ptr)?;
    let pool = pool.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if !pool::find(w, pool)?.exportable {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // docs/driver-facts.md ("IPC"): a real driver exports a pointer only from a pool that
    // has been exported with cuMemPoolExportToShareableHandle.
    if !lock(&w.ipc_fds).pools.values().any(|&p| p == pool) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let mut data = CUmemPoolPtrExportData { reserved: [0; 64] };
    let fields = [ptr, pool, u64::try_from(size).unwrap_or(u64::MAX)];
    for (chunk, bytes) in
        data.reserved.chunks_exact_mut(8).zip(std::iter::once(MAGIC).chain(fields.iter().map(|f| f.to_le_bytes())))
    {
        chunk.copy_from_slice(&bytes);
    }
    write(out, data)
}

/// `cuMemPoolExportPointer`: export data naming the allocation (a live allocation at its
/// start, from an exportable pool that has been exported).
pub(crate) unsafe fn cu_mem_pool_export_pointer(
    w: &World,
    out: *mut CUmemPoolPtrExportData,
    ptr: CUdeviceptr,
) -> CUresult {
    status(export_pointer(w, out, ptr))
}

/// The `(address, pool)` export data names, if the stand-in made it.
fn parse(data: &CUmemPoolPtrExportData) -> Option<(u64, u64)> {
    let mut words = data.reserved.chunks_exact(8).map(|c| <[u8; 8]>::try_from(c).ok());
    (words.next()?? == MAGIC).then_some(())?;
    let address = u64::from_le_bytes(words.next()??);
    let pool = u64::from_le_bytes(words.next()??);
    Some((address, pool))
}

fn import_pointer(
    w: &World,
    out: *mut CUdeviceptr,
    pool: CUmemoryPool,
    data: *mut CUmemPoolPtrExportData,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(data)?;
    // SAFETY: a non-null pointer to the caller's export data.
    let (address, exporter) = parse(unsafe { &*data }).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if pool::find(w, from_ptr(pool))?.imported_from != Some(exporter) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    write(out, lock(&w.memory).import(address)?)
}

/// `cuMemPoolImportPointer`: a new address mapping the exported allocation, through a pool
/// imported from the exporting pool. Importing the same data again while an earlier import
/// is mapped gives another address (a duplicate import in the ledger).
pub(crate) unsafe fn cu_mem_pool_import_pointer(
    w: &World,
    out: *mut CUdeviceptr,
    pool: CUmemoryPool,
    data: *mut CUmemPoolPtrExportData,
) -> CUresult {
    status(import_pointer(w, out, pool, data))
}
