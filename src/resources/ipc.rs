//! Sharing pool allocations between processes: export a pointer
//! (`cuMemPoolExportPointer`), import it in another process (`cuMemPoolImportPointer`)
//! through a cache.
//!
//! A real driver that is asked to import the same allocation twice returns a second
//! address for the same mapping, and the first free unmaps both (see
//! `shared/background/cuda-core-error-policy-review.txt`). So cudrv imports each export
//! at most once: later imports of it return a clone of the live import.
//!
//! The cache holds, per export, either the live import or a note that it is being
//! imported or its last clone freed. Decisions are made under the cache lock, but the
//! driver calls (the import; the free and the wait for it: the free is stream-ordered,
//! and the stream may hold host functions, which are user code) run with the lock
//! released; an importer that finds the note waits, without the lock, until that work is
//! done, then looks again. So no one calls the driver or waits for user code while
//! holding the lock, and an export is never mapped twice. A mapping whose free failed
//! stays registered (leaked), so that it is reused rather than mapped again. A mapping
//! that must not be handed out (its size could not be read, or its free was queued but
//! not waited for) and could not be released is kept apart: never handed out, and
//! released (freed, the free waited for) by the next import of its export before that
//! one maps it afresh; if that fails too, the import fails. Reports are made after the
//! lock is released.
//!
//! An import on a thread running a driver callback (a host function, a host node, a
//! user-object destructor, or a reporter called there) is refused at once with
//! `CUDA_ERROR_NOT_PERMITTED`, as the driver answers CUDA calls there: it could otherwise
//! wait for a free that waits for that very callback.

use std::cell::Cell;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard, Weak};

use crate::call;
use crate::error::{CudaError, Error};
use crate::report::Arg;
use crate::resources::host_fn::in_driver_callback;
use crate::resources::memory::{DeviceBuffer, Keeper};
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
use crate::resources::view::{sealed, DeviceSlice, DeviceSliceMut, DeviceView, DeviceViewMut};
use crate::scope::cleanup_steps_in_context;
use crate::sys::{CUdeviceptr, CUmemPoolPtrExportData, CUresult};
use crate::Driver;

/// What identifies a pool allocation to another process (`CUmemPoolPtrExportData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpcExport(pub [u8; 64]);

/// The export data alone: importing it through another handle of the same pool must
/// not map it again.
type Key = [u8; 64];

enum Slot {
    /// The import, while a clone of it lives (or leaked: then for ever).
    Live(Weak<ImportInner>),
    /// Being imported, or its last clone being freed, by a thread that does so without
    /// the lock; other importers wait for `Pending::done`, then look again.
    Pending(Arc<Pending>),
    /// A mapping that is never handed out, and that the next import releases first.
    Apart(Apart),
}

/// A mapping of an export that must never be handed out: its size could not be read, or
/// its free was queued but not waited for (so it may already be gone), and releasing it
/// failed. It stays mapped (leaked) until an import of its export releases it.
struct Apart {
    ptr: CUdeviceptr,
    /// Whether its free is queued on `stream` (then only the wait for it is left).
    queued: bool,
    stream: Stream,
    _pool: MemoryPool,
}

impl Apart {
    /// Frees the mapping on its stream, unless that is queued already, and waits for the
    /// free, in the stream's context. On error `queued` says whether the free is queued.
    fn release(&mut self) -> Result<(), CudaError> {
        let (d, ptr, s) = (self.stream.context().driver(), self.ptr, self.stream.as_raw());
        let (queued, stream) = (&mut self.queued, &self.stream);
        stream.run(|| {
            if !*queued {
                // SAFETY: the mapping is ours, never handed out, and not freed yet.
                unsafe { d.pc().cuMemFreeAsync(ptr, s) }?;
                *queued = true;
            }
            d.typed().cuStreamSynchronize(stream.live())
        })
    }

    /// Why the export cannot be imported now, as a note.
    fn note(&self) -> String {
        let left = if self.queued { "its queued free could not be waited for" } else { "it could not be freed" };
        format!(
            "an earlier mapping of this export at {:#x} cannot be handed out and {left}: it stays apart (leaked) \
             and the export is not mapped again until it is released (a later import tries again)",
            self.ptr
        )
    }
}

#[derive(Default)]
struct Pending {
    done: Mutex<bool>,
    finished: Condvar,
}

impl Pending {
    fn wait(&self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.finished.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finish(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.finished.notify_all();
    }
}

static CACHE: LazyLock<Mutex<HashMap<Key, Slot>>> = LazyLock::new(Mutex::default);

fn cache() -> MutexGuard<'static, HashMap<Key, Slot>> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> DeviceBuffer<T> {
    /// The data another process imports this pool allocation with
    /// (`cuMemPoolExportPointer`). The pool must be shareable.
    pub fn export_ipc(&self) -> Result<IpcExport, Error> {
        let mut data = CUmemPoolPtrExportData::default();
        // SAFETY: `data` is a valid out-pointer; the allocation is live.
        unsafe { self.context().driver().pc().cuMemPoolExportPointer(&mut data, self.as_raw()) }?;
        Ok(IpcExport(data.reserved))
    }
}

/// A pool allocation imported from another process. Clones share one mapping; the last
/// one frees it (`cuMemFreeAsync` on the stream given at import, ordered after its uses on
/// other streams as a buffer's free is, and waited for). If that
/// free fails, the mapping stays registered (leaked) and a later import reuses it; if
/// only the wait fails, the mapping is never handed out again: the next import of its
/// export waits for the free first. Either failure is reported.
pub struct ImportedBuffer(ManuallyDrop<Arc<ImportInner>>);

struct ImportInner {
    key: Key,
    /// A view of the mapping, never handed out (a clone could outlive the mapping).
    buffer: DeviceBuffer<u8>,
    stream: Stream,
    _pool: MemoryPool,
}

impl Clone for ImportedBuffer {
    fn clone(&self) -> ImportedBuffer {
        ImportedBuffer(ManuallyDrop::new(Arc::clone(&self.0)))
    }
}

impl std::fmt::Debug for ImportedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ImportedBuffer({:#x})", self.as_raw())
    }
}

/// What an import left mapped.
#[derive(Clone, Copy)]
enum Mapped {
    Nothing,
    /// A mapping and its size.
    Sized(CUdeviceptr, usize),
    /// A mapping whose size is unknown and that could not be released; `queued`: its free
    /// is queued but was not waited for.
    Unsized {
        ptr: CUdeviceptr,
        queued: bool,
    },
}

/// Imports `export` from `pool`, setting `mapped` to what is mapped as it changes, and
/// returns the mapping and its size. If the size cannot be read, the mapping is freed
/// again (on `stream`, waited for); if that fails, `mapped` says what is left.
fn import_pointer(
    d: &'static Driver,
    pool: &MemoryPool,
    export: &IpcExport,
    stream: &Stream,
    mapped: &mut Mapped,
) -> Result<(CUdeviceptr, usize), CudaError> {
    let mut data = CUmemPoolPtrExportData { reserved: export.0 };
    // Checked only: nothing here reports (the caller reports, if at all, after settling
    // the cache).
    let ptr = d.typed().cuMemPoolImportPointer(pool.live(), &mut data)?;
    *mapped = Mapped::Unsized { ptr, queued: false };
    let mut len = 0usize;
    // SAFETY: valid out-pointer; the base may be null.
    if let Err(e) = unsafe { d.pc().cuMemGetAddressRange(std::ptr::null_mut(), &mut len, ptr) } {
        // SAFETY: the mapping was just made and nothing else uses it; the free is
        // stream-ordered, so it is waited for before the export may be mapped again.
        let note = match unsafe { d.pc().cuMemFreeAsync(ptr, stream.as_raw()) } {
            Err(f) => format!(
                "freeing the import at {ptr:#x} again failed too ({f}); it stays registered apart, leaked, and is \
                 never handed out: the next import of this export frees it first"
            ),
            Ok(()) => {
                *mapped = Mapped::Unsized { ptr, queued: true };
                match d.typed().cuStreamSynchronize(stream.live()) {
                    Ok(()) => {
                        *mapped = Mapped::Nothing;
                        format!("the import at {ptr:#x} was freed again")
                    }
                    Err(w) => format!(
                        "the import at {ptr:#x} was freed again, but waiting for the free failed ({w}); it stays \
                         registered apart and is never handed out: the next import of this export waits for the \
                         free first"
                    ),
                }
            }
        };
        return Err(e.with_note(note));
    }
    *mapped = Mapped::Sized(ptr, len);
    Ok((ptr, len))
}

impl ImportedBuffer {
    /// Imports the allocation `export` names from `pool` (imported with
    /// [`MemoryPool::import_fd`]); it will be freed on `stream`. If this process already
    /// holds an import of it (through any pool handle), that one is returned; if that
    /// import is being freed, this waits for the free and imports again.
    ///
    /// On error nothing is imported for the caller. A mapping that exists and whose size
    /// is known, but that cannot be handed out (restoring the caller's context failed),
    /// stays registered and leaked, as a note says, so that the export is never mapped
    /// twice. A mapping whose size could not be read is never handed out: it is freed
    /// again; if that (or the wait for the free) fails, it is kept apart, leaked, and the
    /// next import of the export first frees it (or waits for its queued free) and then
    /// maps the export afresh, or, if that fails again, returns that error with a note.
    /// So an `Ok` is always a live mapping with its real size.
    ///
    /// On a thread running a driver callback (a host function, a graph host node, a user
    /// object's destructor, or a reporter called from one) it returns
    /// `CUDA_ERROR_NOT_PERMITTED` at once, without calling the driver or waiting, as the
    /// driver answers CUDA calls there.
    pub fn import(pool: &MemoryPool, export: &IpcExport, stream: &Stream) -> Result<ImportedBuffer, Error> {
        let context = stream.context();
        let d = context.driver();
        if in_driver_callback() {
            let why = "not called: this thread is running a host function, host node or user-object destructor \
                       (or a report from one), where the driver forbids CUDA calls; an import there could wait \
                       for this very callback";
            return Err(Error::from(
                CudaError::with_driver(d, call::cuMemPoolImportPointer, CUresult::CUDA_ERROR_NOT_PERMITTED)
                    .with_note(why),
            ));
        }
        let key = export.0;
        let mut cache = cache();
        loop {
            match cache.get(&key) {
                Some(Slot::Live(weak)) => {
                    if let Some(live) = weak.upgrade() {
                        return Ok(ImportedBuffer(ManuallyDrop::new(live)));
                    }
                    break;
                }
                Some(Slot::Pending(pending)) => {
                    let pending = Arc::clone(pending);
                    drop(cache);
                    pending.wait();
                    cache = self::cache();
                }
                Some(Slot::Apart(_)) | None => break,
            }
        }
        // Mark the export as being imported and import it without the lock (the driver
        // calls may take their time); importers of the same export wait for this one.
        let pending = Arc::new(Pending::default());
        let earlier = match cache.insert(key, Slot::Pending(Arc::clone(&pending))) {
            Some(Slot::Apart(apart)) => Some(apart),
            _ => None,
        };
        drop(cache);
        // A mapping kept apart is released first: the export is never mapped twice. Once
        // released, it is dropped only at the end, with no lock held (its handles' drops
        // may call the driver and report).
        let mut earlier = earlier;
        let mut mapped = Mapped::Nothing;
        let (imported, still_apart) = match earlier.as_mut().map_or(Ok(()), Apart::release) {
            Err(e) => (Err(e), earlier.take()),
            Ok(()) => (context.run_raw(|| import_pointer(d, pool, export, stream, &mut mapped)), None),
        };
        let mut cache = self::cache();
        let result = match (imported, mapped, still_apart) {
            (Err(e), _, Some(apart)) => {
                // Releasing the earlier mapping failed: it stays apart, nothing new is mapped.
                let e = e.with_note(apart.note());
                cache.insert(key, Slot::Apart(apart));
                Err(e)
            }
            (Ok(mapping), _, _) => {
                Ok(ImportedBuffer(ManuallyDrop::new(register(&mut cache, key, mapping, stream, pool))))
            }
            (Err(e), Mapped::Nothing, _) => {
                cache.remove(&key);
                Err(e)
            }
            (Err(e), Mapped::Sized(ptr, len), _) => {
                // Registered for ever: the export is never mapped again.
                std::mem::forget(register(&mut cache, key, (ptr, len), stream, pool));
                let note =
                    format!("the mapping at {ptr:#x} stays registered and leaked: the export is never mapped twice");
                Err(e.with_note(note))
            }
            (Err(e), Mapped::Unsized { ptr, queued }, _) => {
                let apart = Apart { ptr, queued, stream: stream.clone(), _pool: pool.clone() };
                cache.insert(key, Slot::Apart(apart));
                Err(e)
            }
        };
        drop(cache);
        pending.finish();
        drop(earlier);
        Ok(result?)
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
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), crate::Error> {
        self.0.buffer.copy_to_host(dst)
    }

    /// Copies `src` to the start of the mapping (see [`DeviceBuffer::copy_from_host`]).
    pub fn copy_from_host(&self, src: &[u8]) -> Result<(), crate::Error> {
        self.0.buffer.copy_from_host(src)
    }

    /// Sets every byte of the mapping to `value`.
    pub fn fill(&self, value: u8) -> Result<(), crate::Error> {
        self.0.buffer.fill(value)
    }
}

impl sealed::Sealed for ImportedBuffer {}

/// The mapping's bytes: copies, fills and views as for any device memory. A view borrows
/// this handle, so the mapping outlives it.
impl DeviceSlice<u8> for ImportedBuffer {
    fn as_view(&self) -> DeviceView<'_, u8> {
        self.0.buffer.as_view()
    }
}

impl DeviceSliceMut<u8> for ImportedBuffer {
    fn as_view_mut(&mut self) -> DeviceViewMut<'_, u8> {
        self.0.buffer.as_view().into_mut()
    }
}

/// Registers the mapping `(ptr, len)` of the export `key`, to be freed on `stream`, as its
/// live import, and returns it. The buffer inside is a non-owning view: the import frees
/// the mapping (or leaks it), never the view, which is never handed out.
fn register(
    cache: &mut HashMap<Key, Slot>,
    key: Key,
    (ptr, len): (CUdeviceptr, usize),
    stream: &Stream,
    pool: &MemoryPool,
) -> Arc<ImportInner> {
    let inner = Arc::new_cyclic(|me: &std::sync::Weak<ImportInner>| {
        let me = me.clone();
        // A graph that keeps the mapping's memory keeps the import (a clone of it).
        let keeper: Keeper = Box::new(move || {
            me.upgrade().map(|inner| Arc::new(ImportedBuffer(ManuallyDrop::new(inner))) as Arc<dyn Send + Sync>)
        });
        // SAFETY: see above: the view never frees the mapping and never leaves the import;
        // a graph that keeps its memory keeps the import through `keeper`.
        let buffer = unsafe { DeviceBuffer::kept_elsewhere(stream.context(), ptr, len, keeper) };
        ImportInner { key, buffer, stream: stream.clone(), _pool: pool.clone() }
    });
    cache.insert(key, Slot::Live(Arc::downgrade(&inner)));
    inner
}

/// How far the free of a dropped import got.
#[derive(Clone, Copy)]
enum Freed {
    No,
    Queued,
    Done,
}

impl Drop for ImportedBuffer {
    fn drop(&mut self) {
        let mut cache = cache();
        // SAFETY: drop runs once, and the field is not used after this.
        let inner = unsafe { ManuallyDrop::take(&mut self.0) };
        // Under the lock: either another clone remains (then only the count drops), or this
        // is the last one: mark the export as being freed, and free it without the lock.
        let inner = match Arc::try_unwrap(inner) {
            Ok(inner) => inner,
            Err(shared) => {
                drop(shared);
                return;
            }
        };
        let freeing = Arc::new(Pending::default());
        cache.insert(inner.key, Slot::Pending(Arc::clone(&freeing)));
        drop(cache);

        let (d, ptr, s) = (inner.stream.context().driver(), inner.buffer.as_raw(), inner.stream.as_raw());
        let stream = inner.stream.clone();
        let ctx = Some(inner.stream.context().as_raw());
        let freed = Cell::new(Freed::No);
        let ordered = inner.buffer.allocation().owner().order_free_on(&inner.stream);
        let free = || {
            // Ordered after the mapping's uses on other streams (`memory.rs`); if that cannot
            // be arranged, it is not freed (kept registered, leaked).
            ordered.map_err(|e| (e, Arg::Hex(ptr)))?;
            // SAFETY: the mapping is ours and this is its last handle.
            unsafe { d.pc().cuMemFreeAsync(ptr, s) }.map_err(|e| (e, Arg::Hex(ptr)))?;
            freed.set(Freed::Queued);
            // The free is stream-ordered: wait for it, so that no import of the same
            // allocation can be made before the mapping is really gone.
            d.typed().cuStreamSynchronize(stream.live()).map_err(|e| {
                let note = format!(
                    "the free of the import at {ptr:#x} is queued: the next import of its export waits for it \
                     before mapping the export again"
                );
                (e.with_note(note), Arg::Pointer(s as usize))
            })?;
            freed.set(Freed::Done);
            Ok(())
        };
        // Once the free is done (or was not possible): unregister the mapping; if the free
        // was queued but not waited for, keep it apart (never handed out: it may be gone),
        // for the next import to wait for; if it is still mapped, keep it registered and
        // leak it, so that a later import reuses it instead of mapping it a second time.
        // Then wake the waiting importers. `inner` is dropped after the lock is released.
        let settle = || {
            let mut cache = self::cache();
            match freed.get() {
                Freed::Done => {
                    cache.remove(&inner.key);
                    drop(cache);
                }
                Freed::Queued => {
                    let apart = Apart { ptr, queued: true, stream: inner.stream.clone(), _pool: inner._pool.clone() };
                    cache.insert(inner.key, Slot::Apart(apart));
                    drop(cache);
                }
                Freed::No => {
                    let key = inner.key;
                    let leaked = Arc::new(inner);
                    cache.insert(key, Slot::Live(Arc::downgrade(&leaked)));
                    drop(cache);
                    std::mem::forget(leaked);
                }
            }
            freeing.finish();
        };
        cleanup_steps_in_context(d, ctx, call::cuMemFreeAsync, Arg::Hex(ptr), free, settle);
    }
}
