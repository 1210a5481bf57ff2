//! Sharing pool allocations between processes: export a pointer
//! (`cuMemPoolExportPointer`), import it in another process
//! (`cuMemPoolImportPointer`) through a cache.
//!
//! A real driver that is asked to import the same allocation twice returns a second
//! address for the same mapping, and the first free unmaps both (see
//! `shared/background/cuda-core-error-policy-review.txt`). So cudrv imports each export
//! at most once per pool: later imports of it return a clone of the live import. Every
//! decision about the last clone is made under the cache lock: the import that frees a
//! mapping unregisters it and frees it while holding the lock, so a concurrent importer
//! can never import an entry that is being freed. Reports are made after the lock is
//! released.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::memory::DeviceBuffer;
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUdeviceptr, CUmemPoolPtrExportData};

/// What identifies a pool allocation to another process (`CUmemPoolPtrExportData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpcExport(pub [u8; 64]);

type Key = (usize, [u8; 64]);

static CACHE: LazyLock<Mutex<HashMap<Key, std::sync::Weak<ImportInner>>>> = LazyLock::new(Mutex::default);

fn cache() -> MutexGuard<'static, HashMap<Key, std::sync::Weak<ImportInner>>> {
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
/// one frees it (`cuMemFreeAsync` on the stream given at import).
pub struct ImportedBuffer(Option<Arc<ImportInner>>);

struct ImportInner {
    key: Key,
    buffer: DeviceBuffer,
    stream: Stream,
    _pool: MemoryPool,
}

impl Clone for ImportedBuffer {
    fn clone(&self) -> ImportedBuffer {
        ImportedBuffer(self.0.clone())
    }
}

impl ImportedBuffer {
    /// Imports the allocation `export` names from `pool` (imported with
    /// [`MemoryPool::import_fd`]), `len` bytes long; it will be freed on `stream`. If this
    /// process already holds an import of it from `pool`, that one is returned. On error
    /// nothing is imported.
    pub fn import(
        pool: &MemoryPool,
        export: &IpcExport,
        stream: &Stream,
        len: usize,
    ) -> Result<ImportedBuffer, CudaError> {
        let key = (pool.as_raw() as usize, export.0);
        let mut cache = cache();
        if let Some(live) = cache.get(&key).and_then(std::sync::Weak::upgrade) {
            return Ok(ImportedBuffer(Some(live)));
        }
        let context = stream.context();
        let (d, s, raw_pool) = (context.driver(), stream.as_raw(), pool.as_raw());
        let create = || {
            let mut ptr: CUdeviceptr = 0;
            let mut data = CUmemPoolPtrExportData { reserved: export.0 };
            // SAFETY: valid out-pointer and export data; the pool is live. `p` only:
            // nothing here runs user code while the cache lock is held.
            let status = unsafe { d.p().cuMemPoolImportPointer(&mut ptr, raw_pool, &mut data) };
            CudaError::check(d, "cuMemPoolImportPointer", status)?;
            Ok(ptr)
        };
        let undo = Undo {
            call: "cuMemFreeAsync",
            arg: |p: &CUdeviceptr| Arg::Hex(*p),
            // SAFETY: the mapping was just made and nothing else uses it.
            run: |p: &CUdeviceptr| unsafe { d.p().cuMemFreeAsync(*p, s) },
        };
        let ptr = create_in_context(d, context.as_raw(), create, undo)?;
        // SAFETY: the mapping is freed by ImportedBuffer's drop, never through this view.
        let buffer = unsafe { DeviceBuffer::borrowed(context, ptr, len) };
        let inner = Arc::new(ImportInner { key, buffer, stream: stream.clone(), _pool: pool.clone() });
        cache.insert(key, Arc::downgrade(&inner));
        Ok(ImportedBuffer(Some(inner)))
    }

    /// The imported memory (a view: dropping it frees nothing).
    pub fn buffer(&self) -> Option<&DeviceBuffer> {
        self.0.as_ref().map(|i| &i.buffer)
    }

    /// The device address in this process.
    pub fn as_raw(&self) -> CUdeviceptr {
        self.0.as_ref().map_or(0, |i| i.buffer.as_raw())
    }
}

impl Drop for ImportedBuffer {
    fn drop(&mut self) {
        let Some(inner) = self.0.take() else { return };
        let mut guard = Some(cache());
        // Under the lock: either another clone remains (then only the count drops, still
        // under the lock), or this is the last one and we unregister and free it.
        let inner = match Arc::try_unwrap(inner) {
            Ok(inner) => inner,
            Err(shared) => {
                drop(shared);
                return;
            }
        };
        if let Some(cache) = guard.as_mut() {
            cache.remove(&inner.key);
        }
        let (d, ptr, s) = (inner.stream.context().driver(), inner.buffer.as_raw(), inner.stream.as_raw());
        // SAFETY: the mapping is ours and this is its last handle.
        let free = || unsafe { d.p().cuMemFreeAsync(ptr, s) };
        let ctx = Some(inner.stream.context().as_raw());
        let unlock = || drop(guard.take());
        cleanup_in_context(d, ctx, "cuMemFreeAsync", Arg::Hex(ptr), free, unlock);
    }
}
