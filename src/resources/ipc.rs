//! Sharing pool allocations between processes: export a pointer
//! (`cuMemPoolExportPointer`), import it in another process
//! (`cuMemPoolImportPointer`) through a cache.
//!
//! A real driver that is asked to import the same allocation twice returns a second
//! address for the same mapping, and the first free unmaps both (see
//! `shared/background/cuda-core-error-policy-review.txt`). So cudrv imports each export
//! at most once: later imports of it return a clone of the live import. Every
//! decision about the last clone is made under the cache lock: the drop that frees a
//! mapping frees it, waits for the free to complete (the free is stream-ordered) and
//! unregisters it while holding the lock, so a concurrent importer can never import an
//! entry that is being freed. If the free fails, the mapping stays registered and is
//! leaked, so that it is reused rather than mapped twice. Reports are made after the
//! lock is released.

use std::cell::Cell;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::memory::DeviceBuffer;
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_steps_in_context, create_in_context, Undo};
use crate::sys::{CUdeviceptr, CUmemPoolPtrExportData, CUresult};
use crate::Driver;

/// What identifies a pool allocation to another process (`CUmemPoolPtrExportData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpcExport(pub [u8; 64]);

/// The export data alone: importing it through another handle of the same pool must
/// not map it again.
type Key = [u8; 64];
type Cache = HashMap<Key, Weak<ImportInner>>;

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

fn cache() -> MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

impl DeviceBuffer {
    /// The data another process imports this pool allocation with
    /// (`cuMemPoolExportPointer`). The pool must be shareable.
    pub fn export_ipc(&self) -> Result<IpcExport, CudaError> {
        let d = self.context().driver();
        let mut data = CUmemPoolPtrExportData::default();
        let ptr = self.as_raw();
        // SAFETY: `data` is a valid out-pointer; the allocation is live.
        let status = unsafe { d.p().cuMemPoolExportPointer(&mut data, ptr) };
        CudaError::check(d, "cuMemPoolExportPointer", status)?;
        Ok(IpcExport(data.reserved))
    }
}

/// A pool allocation imported from another process. Clones share one mapping; the last
/// one frees it (`cuMemFreeAsync` on the stream given at import, waited for).
pub struct ImportedBuffer(ManuallyDrop<Arc<ImportInner>>);

struct ImportInner {
    key: Key,
    /// A view of the mapping, never handed out (a clone could outlive the mapping).
    buffer: DeviceBuffer,
    stream: Stream,
    _pool: MemoryPool,
}

impl Clone for ImportedBuffer {
    fn clone(&self) -> ImportedBuffer {
        ImportedBuffer(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

/// Imports `export` from `pool` and returns the address and the size of the mapping. If
/// the size cannot be read, the mapping is freed again.
fn import_pointer(
    d: &Driver,
    pool: &MemoryPool,
    export: &IpcExport,
    stream: &Stream,
) -> Result<(CUdeviceptr, usize), CudaError> {
    let mut ptr: CUdeviceptr = 0;
    let mut data = CUmemPoolPtrExportData { reserved: export.0 };
    // SAFETY: valid out-pointer and export data; the pool is live. `p` only: nothing here
    // runs user code while the cache lock is held.
    let status = unsafe { d.p().cuMemPoolImportPointer(&mut ptr, pool.as_raw(), &mut data) };
    CudaError::check(d, "cuMemPoolImportPointer", status)?;
    let mut len = 0usize;
    // SAFETY: valid out-pointer; the base may be null.
    let status = unsafe { d.p().cuMemGetAddressRange(std::ptr::null_mut(), &mut len, ptr) };
    if let Err(e) = CudaError::check(d, "cuMemGetAddressRange", status) {
        // SAFETY: the mapping was just made and nothing else uses it.
        let undo = unsafe { d.p().cuMemFreeAsync(ptr, stream.as_raw()) };
        let note = match undo {
            CUresult::CUDA_SUCCESS => format!("the import at {ptr:#x} was freed again"),
            s => format!("freeing the import at {ptr:#x} failed too ({}); it is leaked", s.0),
        };
        return Err(e.with_note(note));
    }
    Ok((ptr, len))
}

impl ImportedBuffer {
    /// Imports the allocation `export` names from `pool` (imported with
    /// [`MemoryPool::import_fd`]); it will be freed on `stream`. If this process already
    /// holds an import of it (through any pool handle), that one is returned. On error
    /// nothing is imported.
    pub fn import(pool: &MemoryPool, export: &IpcExport, stream: &Stream) -> Result<ImportedBuffer, CudaError> {
        let key = export.0;
        let mut cache = cache();
        if let Some(live) = cache.get(&key).and_then(Weak::upgrade) {
            return Ok(ImportedBuffer(ManuallyDrop::new(live)));
        }
        let context = stream.context();
        let (d, s) = (context.driver(), stream.as_raw());
        let create = || import_pointer(d, pool, export, stream);
        let undo = Undo {
            call: "cuMemFreeAsync",
            arg: |m: &(CUdeviceptr, usize)| Arg::Hex(m.0),
            // SAFETY: the mapping was just made and nothing else uses it.
            run: |m: &(CUdeviceptr, usize)| unsafe { d.p().cuMemFreeAsync(m.0, s) },
        };
        let (ptr, len) = create_in_context(d, context.as_raw(), create, undo)?;
        // SAFETY: the mapping is freed by ImportedBuffer's drop, never through this view,
        // which is never handed out.
        let buffer = unsafe { DeviceBuffer::borrowed(context, ptr, len) };
        let inner = Arc::new(ImportInner { key, buffer, stream: stream.clone(), _pool: pool.clone() });
        cache.insert(key, Arc::downgrade(&inner));
        Ok(ImportedBuffer(ManuallyDrop::new(inner)))
    }

    /// The device address in this process.
    pub fn as_raw(&self) -> CUdeviceptr {
        self.0.buffer.as_raw()
    }

    /// The size of the mapping in bytes, as the driver reports it.
    pub fn len(&self) -> usize {
        self.0.buffer.len()
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the start of the mapping into `dst` (see [`DeviceBuffer::copy_to_host`]).
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), CudaError> {
        self.0.buffer.copy_to_host(dst)
    }

    /// Copies `src` to the start of the mapping (see [`DeviceBuffer::copy_from_host`]).
    pub fn copy_from_host(&self, src: &[u8]) -> Result<(), CudaError> {
        self.0.buffer.copy_from_host(src)
    }

    /// Sets every byte of the mapping to `value`.
    pub fn fill(&self, value: u8) -> Result<(), CudaError> {
        self.0.buffer.fill(value)
    }
}

impl Drop for ImportedBuffer {
    fn drop(&mut self) {
        let mut cache = cache();
        // SAFETY: drop runs once, and the field is not used after this.
        let inner = unsafe { ManuallyDrop::take(&mut self.0) };
        // Under the lock: either another clone remains (then only the count drops, still
        // under the lock), or this is the last one and we free it.
        let inner = match Arc::try_unwrap(inner) {
            Ok(inner) => inner,
            Err(shared) => {
                drop(shared);
                return;
            }
        };
        let (d, ptr, s) = (inner.stream.context().driver(), inner.buffer.as_raw(), inner.stream.as_raw());
        let ctx = Some(inner.stream.context().as_raw());
        let unmapped = Cell::new(false);
        let free = || {
            // SAFETY: the mapping is ours and this is its last handle.
            match unsafe { d.p().cuMemFreeAsync(ptr, s) } {
                CUresult::CUDA_SUCCESS => unmapped.set(true),
                status => return Err(("cuMemFreeAsync", status)),
            }
            // The free is stream-ordered: wait for it, so that no import of the same
            // allocation can be made before the mapping is really gone.
            // SAFETY: the stream is live (we hold it).
            match unsafe { d.p().cuStreamSynchronize(s) } {
                CUresult::CUDA_SUCCESS => Ok(()),
                status => Err(("cuStreamSynchronize", status)),
            }
        };
        // Still under the lock, once the free is done (or was not possible): unregister
        // the mapping, or, if it is still mapped, keep it registered and leak it, so that
        // a later import reuses it instead of mapping it a second time. Then unlock.
        let settle = || {
            if unmapped.get() {
                cache.remove(&inner.key);
            } else {
                let leaked = Arc::new(inner);
                cache.insert(leaked.key, Arc::downgrade(&leaked));
                std::mem::forget(leaked);
            }
            drop(cache);
        };
        cleanup_steps_in_context(d, ctx, "cuMemFreeAsync", Arg::Hex(ptr), free, settle);
    }
}
