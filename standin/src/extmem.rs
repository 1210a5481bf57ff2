//! External memory (`cuImportExternalMemory`, `cuExternalMemoryGetMappedBuffer`,
//! `cuExternalMemoryGetMappedMipmappedArray`, `cuDestroyExternalMemory`), answered as the
//! real driver answers on a Linux machine with no graphics API and no NvSci (recorded:
//! cases `extmem.*`, driver 580.159.04,
//! `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`).
//!
//! What such a machine can import is a POSIX file descriptor of the driver's own memory:
//! `CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD` of a descriptor that
//! `cuMemExportToShareableHandle` gave for virtual memory (`vmm.rs`: a file mapped shared,
//! known by its inode; another process's stand-in export is mapped here too). The size
//! the import describes is not checked against the memory (the real driver takes twice
//! the exported size); no buffer or array is laid past the memory, though (refused with
//! CUDA_ERROR_INVALID_VALUE: not recorded). A mapped buffer is device memory over the same
//! bytes, at its offset: what the virtual memory mapping writes, the buffer reads, and
//! back; it is freed with `cuMemFree` and outlives the object. A mapped mipmapped array's
//! levels lie one after another from the descriptor's offset, each an array of the
//! stand-in's layout (row after row) over the same bytes (the real layout is the
//! driver's own, opaque). The object owns the descriptor from a successful import and
//! closes it when destroyed.
//!
//! A descriptor that names no driver memory (a negative one, `/dev/null`) is refused by
//! the kernel driver: CUDA_ERROR_UNKNOWN. Windows handle types (opaque Win32, D3D11,
//! D3D12) have no meaning on Linux, NvSciBuf needs the NvSci libraries and dma-buf import
//! is a Tegra feature: CUDA_ERROR_NOT_SUPPORTED (a null NvSciBuf object:
//! CUDA_ERROR_INVALID_VALUE). A null object: CUDA_ERROR_INVALID_VALUE; an unknown (or
//! destroyed) one: CUDA_ERROR_INVALID_HANDLE (not recorded: the real driver may crash).

use std::ffi::c_int;
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::array::{Array, Desc, Mipmap};
use crate::model::extres::{ExtMem, ImportedFd};
use crate::model::handles::fresh;
use crate::model::memory::Owner;
use crate::run::backing::Backing;
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const DEDICATED: u32 = 1;
type T = CUexternalMemoryHandleType;

/// The memory a file descriptor of this process names, if it is exported driver memory:
/// its size, device and bytes.
pub(crate) fn exported_memory(w: &World, fd: c_int) -> Option<(usize, i32, Arc<Backing>)> {
    let inode = crate::vmm::inode_of(fd)?;
    let mut v = lock(&w.vmm);
    if let Some((size, device, backing)) = v.exported.get(&inode) {
        return Some((*size, *device, Arc::clone(backing)));
    }
    // Another process's export: its file, mapped shared here (on device 0).
    let (size, backing) = crate::vmm::foreign(fd)?;
    let backing = Arc::new(backing);
    v.exported.insert(inode, (size, 0, Arc::clone(&backing)));
    Some((size, 0, backing))
}

fn import(
    w: &World,
    out: *mut CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_HANDLE_DESC,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(desc)?;
    // SAFETY: a non-null pointer to the caller's descriptor.
    let d = unsafe { &*desc };
    w.contexts.current()?;
    if d.size == 0 || d.flags & !DEDICATED != 0 {
        return Err(INVALID);
    }
    match d.type_ {
        T::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD => {}
        T::CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF => {
            // SAFETY: an NvSciBuf descriptor's union holds the object pointer.
            non_null(unsafe { d.handle.nvSciBufObject })?;
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        t if (2..=7).contains(&t.0) || t == T::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD => {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        _ => return Err(INVALID),
    }
    // SAFETY: an OPAQUE_FD descriptor's union holds the descriptor.
    let fd = unsafe { d.handle.fd };
    // No up-front check of the number: the kernel driver refuses what is not its memory.
    let (memory, device, backing) = exported_memory(w, fd).ok_or(CUresult::CUDA_ERROR_UNKNOWN)?;
    // The documentation gives the descriptor's ownership to the driver on a successful
    // import: closed when the object is destroyed.
    let fd = ImportedFd(fd);
    let h = fresh();
    lock(&w.extres).memories.insert(h, ExtMem { size: d.size, memory, device, backing, _fd: fd });
    write(out, to_ptr(h))
}

/// `cuImportExternalMemory`: an object over the memory an OPAQUE_FD descriptor of
/// exported driver memory names, of the size described (not checked against the memory).
/// Null pointers, a size of 0, unknown flags (only DEDICATED) or handle types:
/// CUDA_ERROR_INVALID_VALUE; a descriptor of no driver memory (negative ones too):
/// CUDA_ERROR_UNKNOWN; Windows, NvSciBuf and dma-buf types: CUDA_ERROR_NOT_SUPPORTED; no
/// current context: CUDA_ERROR_INVALID_CONTEXT. Nothing is written and the descriptor
/// stays the caller's on error.
pub(crate) unsafe fn cu_import_external_memory(
    w: &World,
    out: *mut CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_HANDLE_DESC,
) -> CUresult {
    status(import(w, out, desc))
}

/// The object `ext` names, as `(described size, memory size, device, bytes)`: a null
/// object: CUDA_ERROR_INVALID_VALUE; an unknown one: CUDA_ERROR_INVALID_HANDLE.
fn object(w: &World, ext: CUexternalMemory) -> Result<(u64, usize, i32, Arc<Backing>), CUresult> {
    non_null(ext)?;
    let x = lock(&w.extres);
    let m = x.memories.get(&from_ptr(ext)).ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
    Ok((m.size, m.memory, m.device, Arc::clone(&m.backing)))
}

/// Device memory at a fresh address over `size` bytes of `parent` from `offset`, which
/// must lie in the memory (`memory` bytes): else CUDA_ERROR_INVALID_VALUE.
fn map_view(
    w: &World,
    owner: Owner,
    parent: Arc<Backing>,
    memory: usize,
    offset: usize,
    size: usize,
) -> Result<u64, CUresult> {
    // `Backing::view` needs its offset inside the parent: checked here.
    if size == 0 || offset.checked_add(size).is_none_or(|end| end > memory) {
        return Err(INVALID);
    }
    let view = Arc::new(Backing::view(parent, offset).ok_or(INVALID)?);
    let mut m = lock(&w.memory);
    let address = m.reserve_addresses(size)?;
    m.map_backing(address, size, owner, view)?;
    Ok(address)
}

fn mapped_buffer(
    w: &World,
    out: *mut CUdeviceptr,
    ext: CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_BUFFER_DESC,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(desc)?;
    // SAFETY: a non-null pointer to the caller's descriptor.
    let d = unsafe { &*desc };
    non_null(ext)?;
    let ctx = w.contexts.current()?;
    let (limit, memory, device, parent) = object(w, ext)?;
    let end = d.offset.checked_add(d.size).ok_or(INVALID)?;
    if d.flags != 0 || d.size == 0 || end > limit {
        return Err(INVALID);
    }
    let offset = usize::try_from(d.offset).map_err(|_| INVALID)?;
    let size = usize::try_from(d.size).map_err(|_| INVALID)?;
    let address = map_view(w, Owner { ctx: ctx.handle, device }, parent, memory, offset, size)?;
    write(out, address)
}

/// `cuExternalMemoryGetMappedBuffer`: device memory over `[offset, offset + size)` of the
/// object's memory, freed with `cuMemFree`. Null pointers or object, flags, size 0 or a
/// range past the imported size: CUDA_ERROR_INVALID_VALUE (past the memory itself, when
/// the import described more: CUDA_ERROR_INVALID_VALUE too, not recorded); an unknown
/// object: CUDA_ERROR_INVALID_HANDLE. Nothing is written on error.
pub(crate) unsafe fn cu_external_memory_get_mapped_buffer(
    w: &World,
    out: *mut CUdeviceptr,
    ext: CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_BUFFER_DESC,
) -> CUresult {
    status(mapped_buffer(w, out, ext, desc))
}

fn mapped_mipmap(
    w: &World,
    out: *mut CUmipmappedArray,
    ext: CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(desc)?;
    // SAFETY: a non-null pointer to the caller's descriptor.
    let d = unsafe { &*desc };
    non_null(ext)?;
    let ctx = w.contexts.current()?;
    let (limit, memory, device, parent) = object(w, ext)?;
    // 0 levels: the real driver aborts (a listed difference).
    if d.numLevels == 0 {
        return Err(INVALID);
    }
    let a = d.arrayDesc;
    let shape = Desc {
        width: a.Width,
        height: a.Height,
        depth: a.Depth,
        format: a.Format,
        channels: a.NumChannels,
        flags: a.Flags,
    };
    shape.check()?;
    // The levels, one after another from the offset, within the imported size.
    let mut at = usize::try_from(d.offset).map_err(|_| INVALID)?;
    let mut placed = Vec::new();
    for level in 0..shape.mipmap_levels(d.numLevels) {
        let bytes = shape.level(level).bytes().ok_or(INVALID)?;
        placed.push((shape.level(level), at, bytes));
        at = at.checked_add(bytes).ok_or(INVALID)?;
    }
    if u64::try_from(at).map_err(|_| INVALID)? > limit {
        return Err(INVALID);
    }
    let handle = fresh();
    let owner = Owner { ctx: ctx.handle, device };
    let mut levels = Vec::new();
    for (level, offset, bytes) in placed {
        match map_view(w, owner, Arc::clone(&parent), memory, offset, bytes) {
            Ok(address) => {
                levels.push(lock(&w.arrays).arrays.insert(Array { desc: level, address, mipmap: Some(handle) }))
            }
            Err(e) => {
                // Nothing is made: the levels mapped so far go again.
                for h in levels {
                    let gone = lock(&w.arrays).arrays.remove(h);
                    let _ = gone.and_then(|a| lock(&w.memory).free(a.address));
                }
                return Err(e);
            }
        }
    }
    lock(&w.arrays).mipmaps.insert_at(handle, Mipmap { desc: shape, levels });
    write(out, to_ptr(handle))
}

/// `cuExternalMemoryGetMappedMipmappedArray`: a mipmapped array whose levels lie over the
/// object's memory from the descriptor's offset (see the module), destroyed with
/// `cuMipmappedArrayDestroy`. Null pointers or object, no levels (the real driver aborts),
/// a shape `cuMipmappedArrayCreate` refuses, or levels past the imported size or the
/// memory: CUDA_ERROR_INVALID_VALUE; an unknown object: CUDA_ERROR_INVALID_HANDLE; no
/// current context: CUDA_ERROR_INVALID_CONTEXT. Nothing is written on error.
pub(crate) unsafe fn cu_external_memory_get_mapped_mipmapped_array(
    w: &World,
    out: *mut CUmipmappedArray,
    ext: CUexternalMemory,
    desc: *const CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC,
) -> CUresult {
    status(mapped_mipmap(w, out, ext, desc))
}

/// `cuDestroyExternalMemory`: forgets the object and closes its descriptor; buffers and
/// arrays mapped from it stay until freed. A null object: CUDA_ERROR_INVALID_VALUE; an
/// unknown (or destroyed) one: CUDA_ERROR_INVALID_HANDLE.
pub(crate) unsafe fn cu_destroy_external_memory(w: &World, ext: CUexternalMemory) -> CUresult {
    if ext.is_null() {
        return INVALID;
    }
    match lock(&w.extres).memories.remove(&from_ptr(ext)) {
        Some(_) => CUresult::CUDA_SUCCESS,
        None => CUresult::CUDA_ERROR_INVALID_HANDLE,
    }
}
