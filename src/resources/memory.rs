//! Typed device memory: synchronous (`cuMemAlloc`/`cuMemFree`) and stream-ordered
//! (`cuMemAllocAsync`/`cuMemFreeAsync`, which remember their deallocation stream)
//! allocations of `T`, and the device's free and total memory (`cuMemGetInfo`). Their
//! copies, fills and views are those of every kind of device memory (`view.rs`).
//!
//! Uses across streams (DESIGN.md, "Device memory of T"): an allocation remembers, in its
//! shared core ([`MemoryOwner`]), the streams other than its own that it was used on
//! ([`Uses`]). A use on its own stream (a stream-ordered allocation's) costs one pointer
//! comparison; a use on a stream it already knows, one atomic load; the first use on
//! another stream takes a lock, and for a stream-ordered allocation makes that stream wait
//! for the allocation (an event recorded on the allocation's stream). Its free waits for
//! them: a stream-ordered free is ordered after every stream it was used on (an event
//! recorded on each, which the freeing stream waits for), a `cuMemFree` waits for those
//! streams first. Synchronous copies and fills wait for the allocation's streams (its own
//! and the others) before they run on the legacy stream.
//!
//! An allocation of no bytes calls no driver function: it is the null address, owned by
//! nobody (never freed), so every kind of buffer of length 0 behaves the same on every
//! driver (a real one refuses `cuMemAlloc(0)` but gives null for `cuMemAllocAsync(0)`).

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::event::Event;
use crate::resources::flags::EventFlags;
use crate::resources::handle::{kind, Handle, Ownership};
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
use crate::resources::values::value_count;
use crate::sys::{CUcontext, CUdeviceptr};
use crate::table::Call;
use crate::Driver;

/// Plain data that can live in device memory and be copied bytewise to and from it.
///
/// # Safety
/// `T` must have no padding whose value matters, hold no host pointers or references,
/// have no `Drop`, and every bit pattern the device may write must be a valid `T` (so
/// not `bool`, `char` or enums). Implemented for the integer and float types and arrays
/// of them; implement it for your own `#[repr(C)]` structs of such fields.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not plain data (`DeviceRepr`): a kernel argument or copy cannot hold it by value",
    note = "device memory is passed as a view: `launch.arg(&x.as_view())` (`use cudrv::prelude::*`); \
            a `Mapping`'s bytes as values of `T`: `mapping.as_view().cast::<T>()?`"
)]
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => {$(
        // SAFETY: a plain number: every bit pattern is valid, no padding, no pointers.
        unsafe impl DeviceRepr for $t {}
    )*};
}
device_repr!(u8, i8, u16, i16, u32, i32, u64, i64, u128, i128, usize, isize, f32, f64);

// SAFETY: an array of plain data is plain data.
unsafe impl<T: DeviceRepr, const N: usize> DeviceRepr for [T; N] {}

/// How an allocation is given back, what it keeps alive, and the streams it was used on.
pub(crate) struct MemoryOwner {
    context: Context,
    release: Release,
    uses: Uses,
    /// For memory whose handle does not keep it valid (an import's mapping, which its
    /// `ImportedBuffer` frees): gives another reference to what does, for a graph that
    /// keeps the memory (`None` once that is gone).
    keeper: Option<Keeper>,
}

/// See [`MemoryOwner::keeper`].
pub(crate) type Keeper = Box<dyn Fn() -> Option<Arc<dyn Send + Sync>> + Send + Sync>;

/// The streams other than its own an allocation was used on, which its free and its
/// synchronous copies wait for.
#[derive(Default)]
pub(crate) struct Uses {
    /// The raw handle of the stream added last (0: none, or the legacy stream): a use on
    /// it needs no lock. A stream in `streams` is held alive, so its handle is never reused
    /// while it is there.
    last: AtomicUsize,
    /// How many streams `streams` holds (0: nothing to wait for, no lock taken).
    count: AtomicUsize,
    /// Set by [`DeviceBuffer::disable_use_tracking`]: uses are not recorded.
    untracked: AtomicBool,
    /// Set when a use was seen on a capturing stream (not recorded: the graph's launches
    /// use the memory whenever they run). A managed buffer then refuses safe host access.
    captured: AtomicBool,
    /// Managed memory: every use asks whether its stream is capturing (the fast paths
    /// are skipped), so that a use captured into a graph is never missed.
    checks_capture: bool,
    /// The streams, each once.
    streams: Mutex<Vec<Stream>>,
}

/// Whether `a` and `b` are the same stream (the legacy stream of two contexts is not).
fn same_stream(a: &Stream, b: &Stream) -> bool {
    a.as_raw() == b.as_raw() && (!a.as_raw().is_null() || a.context().as_raw() == b.context().as_raw())
}

impl MemoryOwner {
    fn new(context: &Context, release: Release) -> MemoryOwner {
        MemoryOwner { context: context.clone(), release, uses: Uses::default(), keeper: None }
    }

    /// The owner of an allocation made with a plain `cuMemAlloc`-style call in `context`
    /// and released with `cuMemFree` (a pitched allocation, `pitched.rs`).
    pub(crate) fn freed_with_mem_free(context: &Context) -> MemoryOwner {
        MemoryOwner::new(context, Release::Free)
    }

    /// The owner of a managed allocation: freed with `cuMemFree`; every use checks for a
    /// stream capture.
    fn managed(context: &Context) -> MemoryOwner {
        let uses = Uses { checks_capture: true, ..Uses::default() };
        MemoryOwner { context: context.clone(), release: Release::Free, uses, keeper: None }
    }

    /// Another reference to what keeps this memory valid when its handle does not (an
    /// import's mapping), for a graph that keeps the memory; `None` for memory its handle
    /// keeps (or frees) itself.
    pub(crate) fn keeper(&self) -> Option<Arc<dyn Send + Sync>> {
        self.keeper.as_ref().and_then(|k| k())
    }

    /// The context the allocation belongs to.
    pub(crate) fn context(&self) -> &Context {
        &self.context
    }

    /// The stream a stream-ordered allocation was made and is freed on.
    fn home(&self) -> Option<&Stream> {
        match &self.release {
            Release::FreeAsync { stream, .. } => Some(stream),
            Release::Free | Release::Kept { .. } => None,
        }
    }

    /// Moves the streams `from` was used on to this owner (`from` then has none): the
    /// same memory under a new handle, whose release waits for them instead
    /// (`GrowableBuffer::grow`).
    pub(crate) fn take_uses_from(&self, from: &MemoryOwner) {
        let taken = std::mem::take(&mut *from.uses.streams.lock().unwrap_or_else(|p| p.into_inner()));
        from.uses.count.store(0, Ordering::Release);
        from.uses.last.store(0, Ordering::Release);
        if from.uses.captured.load(Ordering::Acquire) {
            self.uses.captured.store(true, Ordering::Release);
        }
        let mut streams = self.uses.streams.lock().unwrap_or_else(|p| p.into_inner());
        for s in taken {
            if !streams.iter().any(|known| same_stream(known, &s)) {
                streams.push(s);
                self.uses.count.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// Records a use of the allocation on `stream`, before the work is queued there. On its
    /// own stream, or on one it knows already, this is a comparison or an atomic load. The
    /// first use on another stream remembers that stream (its free and its synchronous
    /// copies will wait for it) and, for a stream-ordered allocation, makes the stream wait
    /// for the allocation first (an event recorded on the allocation's stream). On error
    /// (that wait could not be queued) the caller must not queue its work.
    #[inline(always)]
    pub(crate) fn used_on(&self, stream: &Stream) -> Result<(), CudaError> {
        if let Some(home) = self.home() {
            if home.as_raw() == stream.as_raw() && same_stream(home, stream) {
                return Ok(());
            }
        }
        let raw = stream.as_raw() as usize;
        if raw != 0 && !self.uses.checks_capture && self.uses.last.load(Ordering::Acquire) == raw {
            return Ok(());
        }
        if self.uses.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        self.first_use_on(stream)
    }

    /// [`MemoryOwner::used_on`] for a stream not seen last: the lock is taken only to look
    /// and to add, never across a driver call.
    #[cold]
    fn first_use_on(&self, stream: &Stream) -> Result<(), CudaError> {
        if self.uses.checks_capture && stream.is_capturing_raw()? {
            self.uses.captured.store(true, Ordering::Release);
            return Ok(());
        }
        let lock = || self.uses.streams.lock().unwrap_or_else(|p| p.into_inner());
        let remember = |streams: &mut Vec<Stream>| {
            if !streams.iter().any(|s| same_stream(s, stream)) {
                streams.push(stream.clone());
                self.uses.count.fetch_add(1, Ordering::AcqRel);
            }
            self.uses.last.store(stream.as_raw() as usize, Ordering::Release);
        };
        {
            let mut streams = lock();
            if streams.iter().any(|s| same_stream(s, stream)) {
                remember(&mut streams);
                return Ok(());
            }
        }
        // A capturing stream records graph nodes, which run when the graph is launched:
        // those launches are not uses cudrv can see (nor wait for), and a capturing stream
        // cannot wait for an event recorded outside its capture.
        if stream.is_capturing_raw()? {
            self.uses.captured.store(true, Ordering::Release);
            return Ok(());
        }
        if let Some(home) = self.home() {
            // A stream-ordered allocation exists only from its point in its stream's order.
            let ready = Event::new_raw(home.context(), EventFlags::DISABLE_TIMING)?;
            ready.record_raw(home)?;
            stream.wait_event_raw(&ready)?;
        }
        remember(&mut lock());
        Ok(())
    }

    /// Whether a use was seen on a capturing stream: a graph may use the memory whenever
    /// it is launched, which nothing here waits for.
    pub(crate) fn was_captured(&self) -> bool {
        self.uses.captured.load(Ordering::Acquire)
    }

    /// The streams other than its own it was used on, and still to wait for (none after
    /// [`DeviceBuffer::disable_use_tracking`]).
    fn used_streams(&self) -> Vec<Stream> {
        if self.uses.count.load(Ordering::Acquire) == 0 || self.uses.untracked.load(Ordering::Relaxed) {
            return Vec::new();
        }
        self.uses.streams.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits, before a synchronous copy or fill of the allocation, for the work queued on
    /// its streams: its own (a stream-ordered allocation's) and the others it was used on
    /// (each `cuStreamSynchronize`; none for an allocation never used on a stream).
    #[inline]
    pub(crate) fn settle(&self) -> Result<(), CudaError> {
        if self.uses.untracked.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let Some(home) = self.home() {
            home.synchronize_raw()?;
        }
        if self.uses.count.load(Ordering::Acquire) == 0 {
            return Ok(());
        }
        self.used_streams().iter().try_for_each(Stream::synchronize_raw)
    }

    /// Orders a stream-ordered free on `free_stream` after every use on the other streams
    /// the allocation was used on: an event recorded on each (in its context), which
    /// `free_stream` waits for. A stream capturing now is skipped (its captured work runs
    /// when its graph is launched). On error the free must not be queued.
    pub(crate) fn order_free_on(&self, free_stream: &Stream) -> Result<(), CudaError> {
        for s in self.used_streams().iter().filter(|s| !same_stream(s, free_stream)) {
            if s.is_capturing_raw()? {
                continue;
            }
            let done = Event::new_raw(s.context(), EventFlags::DISABLE_TIMING)?;
            done.record_raw(s)?;
            free_stream.wait_event_raw(&done)?;
        }
        Ok(())
    }

    /// Waits, before a `cuMemFree`, for the work queued on every stream the allocation was
    /// used on (a stream capturing now is skipped, as above).
    fn wait_for_uses(&self) -> Result<(), CudaError> {
        for s in self.used_streams() {
            if !s.is_capturing_raw()? {
                s.synchronize_raw()?;
            }
        }
        Ok(())
    }
}

enum Release {
    Free,
    FreeAsync {
        stream: Stream,
        _pool: Option<MemoryPool>,
    },
    /// Memory that `keep` keeps valid (a mapping's physical memory and range, a growable
    /// buffer's chunks): the release waits for its uses, unmaps it (`cuMemUnmap` of
    /// `unmap` bytes) if `unmap` is set, and only then lets `keep` go; if a step fails,
    /// `keep` is leaked.
    Kept {
        unmap: Option<usize>,
        keep: Keep,
    },
}

impl Keep {
    fn new(what: Box<dyn Send + Sync>) -> Keep {
        Keep { what: ManuallyDrop::new(what), leaked: AtomicBool::new(false) }
    }
}

/// What a [`Release::Kept`] allocation keeps, dropped unless its last release failed.
struct Keep {
    what: ManuallyDrop<Box<dyn Send + Sync>>,
    /// Set when the last release failed: the memory may still be in use (or mapped), so
    /// what keeps it valid is leaked.
    leaked: AtomicBool,
}

impl Drop for Keep {
    fn drop(&mut self) {
        if !self.leaked.load(Ordering::Acquire) {
            // SAFETY: dropped once, here; never used after.
            unsafe { ManuallyDrop::drop(&mut self.what) }
        }
    }
}

kind!(
    /// The kind of a device allocation.
    DeviceMemory: CUdeviceptr = "DeviceBuffer", owner MemoryOwner, driver |o| o.context.driver(), release {
        fn release_call(owner: &MemoryOwner, _: Ownership) -> Call {
            match owner.release {
                Release::Free => call::cuMemFree,
                Release::FreeAsync { .. } => call::cuMemFreeAsync,
                Release::Kept { unmap: Some(_), .. } => call::cuMemUnmap,
                Release::Kept { unmap: None, .. } => call::cuStreamSynchronize,
            }
        }
        fn release_context(owner: &MemoryOwner) -> Option<CUcontext> {
            match &owner.release {
                Release::Free => Some(owner.context.as_raw()),
                Release::FreeAsync { stream, .. } => Some(stream.context().as_raw()),
                // Stream waits and unmapping name what they act on: no context needed.
                Release::Kept { .. } => None,
            }
        }
        unsafe fn release(owner: &MemoryOwner, raw: CUdeviceptr, _: Ownership) -> Result<(), CudaError> {
            let pc = owner.context.driver().pc();
            // The free waits for the uses on other streams; if that cannot be arranged, the
            // memory is leaked (the error is reported), never freed under them.
            let after_uses = match &owner.release {
                Release::FreeAsync { stream, .. } => owner.order_free_on(stream),
                Release::Free | Release::Kept { .. } => owner.wait_for_uses(),
            };
            // SAFETY: released once, from the last clone, after its uses (waited for, or
            // ordered before the free on `stream`, which we hold); a mapping is mapped at
            // `raw` while `keep` lives (released once, or again after a failed try).
            let released = after_uses.and_then(|()| unsafe {
                match &owner.release {
                    Release::Free => pc.cuMemFree(raw),
                    Release::FreeAsync { stream, .. } => pc.cuMemFreeAsync(raw, stream.as_raw()),
                    Release::Kept { unmap: Some(bytes), .. } => pc.cuMemUnmap(raw, *bytes),
                    Release::Kept { unmap: None, .. } => Ok(()),
                }
            });
            match &owner.release {
                Release::Kept { keep, .. } => {
                    keep.leaked.store(released.is_err(), Ordering::Release);
                    released.map_err(|e| e.with_note("what keeps the memory valid is leaked"))
                }
                _ => released,
            }
        }
    }
);

/// A device allocation of `len` values of `T`. Clones share it; the last one frees it (if
/// owned): with `cuMemFree` in its context, or, for a stream-ordered one, with
/// `cuMemFreeAsync` on the stream it remembers. It keeps its context, stream and pool
/// alive.
///
/// Its memory is never freed under work that uses it, nor used before it exists, whatever
/// streams use it (docs/memory.md): the buffer remembers the streams other than its own
/// that its copies, fills and kernel launches (through [`crate::Launch::arg`], views
/// included) used, and its free waits for them (a stream-ordered free on its deallocation
/// stream is ordered after an event recorded on each; a `cuMemFree` waits for them first);
/// a stream-ordered buffer's first use on another stream waits for its allocation. Its
/// synchronous copies and fills wait for the work queued on its streams. What this does
/// not order is the data: copies, fills and launches that touch the same buffer from two
/// streams still need an event between them to see each other's writes (as in CUDA C).
/// A graph whose node uses it holds it, and each launch of an executable graph is a use on
/// its stream. Work captured into a graph (`unsafe`) is not tracked: keep the buffer alive
/// while the graph's launches run. [`DeviceBuffer::disable_use_tracking`] is the expert's
/// `unsafe` way out.
pub struct DeviceBuffer<T = u8> {
    mem: Handle<DeviceMemory>,
    len: usize,
    _values: PhantomData<T>,
}

impl<T> Clone for DeviceBuffer<T> {
    fn clone(&self) -> DeviceBuffer<T> {
        DeviceBuffer { mem: self.mem.clone(), len: self.len, _values: PhantomData }
    }
}

impl<T> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.mem.fmt_debug(f)
    }
}

/// `len` values of `T` in bytes, or an error naming `what`.
fn bytes_of<T>(what: &'static str, len: usize) -> Result<usize, InvalidArgument> {
    len.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| InvalidArgument::new(what, format!("{len} values of {} bytes overflow usize", size_of::<T>())))
}

impl<T> DeviceBuffer<T> {
    /// Gives up ownership: returns the address, which cudrv will no longer free, if this
    /// is the only clone; otherwise returns the buffer unchanged. Its context is kept alive
    /// for the rest of the process, so the address stays valid until freed by hand.
    ///
    /// A buffer at the null address (one of no bytes that cudrv allocated) owns nothing:
    /// it returns `Ok(0)`, which needs no free, and keeps nothing alive.
    pub fn into_raw(self) -> Result<CUdeviceptr, DeviceBuffer<T>> {
        if self.as_raw() == 0 && self.mem.ownership() == Ownership::Borrowed {
            return Ok(0);
        }
        let len = self.len;
        self.mem.into_raw().map_err(|mem| DeviceBuffer { mem, len, _values: PhantomData })
    }

    /// Releases it now if this is its only handle (see `Handle::try_release`): `Ok` once
    /// released; otherwise the buffer back, still owned, with the error if one was tried.
    pub(crate) fn try_release(self) -> Result<(), (DeviceBuffer<T>, Option<CudaError>)> {
        let len = self.len;
        self.mem.try_release().map_err(|(mem, e)| (DeviceBuffer { mem, len, _values: PhantomData }, e))
    }

    /// The device address; 0 (null) for a buffer of no bytes that cudrv allocated. (One
    /// adopted with `from_raw`/`borrowed` keeps the address it was given, even for no
    /// values; its views of no bytes, [`crate::DeviceSlice::as_raw`] included, are null.)
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.mem.raw()
    }

    /// The allocation's shared state: what its views refer to.
    #[inline(always)]
    pub(crate) fn allocation(&self) -> &Handle<DeviceMemory> {
        &self.mem
    }

    /// Where the address is kept for the life of the buffer: what a kernel parameter points to.
    #[inline(always)]
    pub(crate) fn raw_ref(&self) -> &CUdeviceptr {
        self.mem.raw_ref()
    }

    value_count!(T, self => self.len);

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.mem.owner().context
    }

    /// Stops recording this allocation's uses across streams (for every clone and view of
    /// it): later uses on other streams are neither remembered nor waited for, its free is
    /// no longer ordered after the uses recorded so far, and its synchronous copies and
    /// fills no longer wait for its streams (they run on the legacy stream, which waits
    /// only for blocking streams). For code that orders its streams itself and wants no
    /// tracking cost at all (the cost: docs/memory.md).
    ///
    /// # Safety
    /// From this call on, the caller orders, for every clone and view: every use on a
    /// stream other than the allocation's own before its free (the last clone's drop: make
    /// [`DeviceBuffer::deallocation_stream`] wait for an event recorded after the use, or,
    /// for a `cuMemFree`d buffer, wait for the use to finish before dropping it); for a
    /// stream-ordered allocation, every first use on another stream after the allocation
    /// (that stream waits for an event recorded on the allocation's stream after it); and
    /// every synchronous copy or fill after the queued work that writes or reads it.
    pub unsafe fn disable_use_tracking(&self) {
        self.mem.owner().uses.untracked.store(true, Ordering::Relaxed);
    }

    /// The stream a stream-ordered allocation is freed on.
    pub fn deallocation_stream(&self) -> Option<&Stream> {
        self.mem.owner().home()
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` values in `context` (`cuMemAlloc`), uninitialised. On error nothing
    /// is allocated. No bytes (`len` 0) make no driver call: the buffer has the null
    /// address, and every copy, fill and view of it is a no-op.
    pub fn alloc(context: &Context, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let bytes = bytes_of::<T>("DeviceBuffer::alloc", len)?;
        if bytes == 0 {
            return Ok(DeviceBuffer::empty(MemoryOwner::new(context, Release::Free), len));
        }
        let t = context.driver().typed();
        let mem =
            Handle::create_in(MemoryOwner::new(context, Release::Free), context.as_raw(), || t.cuMemAlloc(bytes))?;
        Ok(DeviceBuffer { mem, len, _values: PhantomData })
    }

    /// Allocates `len` values ordered on `stream` (`cuMemAllocAsync`), uninitialised; it is
    /// freed on the same stream. On error nothing is allocated. No bytes make no driver
    /// call (the null address, as [`DeviceBuffer::alloc`]).
    pub fn alloc_async(stream: &Stream, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc_ordered(stream, None, len)
    }

    /// A new buffer holding a copy of `values` (`cuMemAlloc`, `cuMemcpyHtoD`). On error
    /// nothing is allocated. An empty slice makes no driver call.
    pub fn from_slice(context: &Context, values: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let buffer = DeviceBuffer::alloc(context, values.len())?;
        buffer.copy_from_host(values)?;
        Ok(buffer)
    }

    /// `cuMemAllocAsync`, or `cuMemAllocFromPoolAsync` from `pool`.
    pub(crate) fn alloc_ordered(
        stream: &Stream,
        pool: Option<&MemoryPool>,
        len: usize,
    ) -> Result<DeviceBuffer<T>, Error> {
        let bytes = bytes_of::<T>("DeviceBuffer::alloc_async", len)?;
        let context = stream.context();
        if bytes == 0 {
            let release = Release::FreeAsync { stream: stream.clone(), _pool: pool.cloned() };
            return Ok(DeviceBuffer::empty(MemoryOwner::new(context, release), len));
        }
        let t = context.driver().typed();
        let create = || match pool {
            Some(pool) => t.cuMemAllocFromPoolAsync(bytes, pool.live(), stream.live()),
            None => t.cuMemAllocAsync(bytes, stream.live()),
        };
        let release = Release::FreeAsync { stream: stream.clone(), _pool: pool.cloned() };
        let mem = Handle::create_in(MemoryOwner::new(context, release), context.as_raw(), create)?;
        Ok(DeviceBuffer { mem, len, _values: PhantomData })
    }

    /// Adopts an allocation of `len` values made with `cuMemAlloc`: the last clone frees it.
    ///
    /// # Safety
    /// `ptr` must be a live `cuMemAlloc` allocation of at least `len` values in `context`
    /// that nothing else frees.
    pub unsafe fn from_raw(context: &Context, ptr: CUdeviceptr, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer::adopt(context, ptr, len, Ownership::Owned)
    }

    /// Uses memory someone else owns; cudrv never frees it.
    ///
    /// # Safety
    /// `len` values at `ptr` must stay valid device memory of `context` while this handle
    /// is used.
    pub unsafe fn borrowed(context: &Context, ptr: CUdeviceptr, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer::adopt(context, ptr, len, Ownership::Borrowed)
    }

    /// Allocates `len` values of managed memory (`cuMemAllocManaged` with `flags`), freed
    /// with `cuMemFree` like a `cuMemAlloc` buffer: the allocation of a
    /// [`crate::ManagedBuffer`]. No bytes make no driver call (the null address). On error
    /// nothing is allocated.
    pub(crate) fn alloc_managed(context: &Context, len: usize, flags: u32) -> Result<DeviceBuffer<T>, Error> {
        let bytes = bytes_of::<T>("ManagedBuffer::zeroed", len)?;
        if bytes == 0 {
            return Ok(DeviceBuffer::empty(MemoryOwner::managed(context), len));
        }
        let t = context.driver().typed();
        // The driver checks the flags.
        let create = || t.cuMemAllocManaged(bytes, flags);
        let mem = Handle::create_in(MemoryOwner::managed(context), context.as_raw(), create)?;
        Ok(DeviceBuffer { mem, len, _values: PhantomData })
    }

    /// `len` values at `ptr` in `context`, which `keep` keeps valid (a growable buffer's
    /// chunks): the last clone's drop waits for the work queued on the streams it was
    /// used on, then drops `keep` (leaks it if the wait fails). No driver call.
    ///
    /// # Safety
    /// `len` values at `ptr` must be device memory of `context` while `keep` lives.
    pub(crate) unsafe fn kept_by(
        context: &Context,
        ptr: CUdeviceptr,
        len: usize,
        keep: Box<dyn Send + Sync>,
    ) -> DeviceBuffer<T> {
        let release = Release::Kept { unmap: None, keep: Keep::new(keep) };
        let mem = Handle::new(MemoryOwner::new(context, release), ptr, Ownership::Owned);
        DeviceBuffer { mem, len, _values: PhantomData }
    }

    /// `bytes` bytes mapped at `address` in `context` by `map` (run in the context), which
    /// `keep` keeps valid (a mapping's physical memory and range): the last clone's drop
    /// waits for the streams it was used on, unmaps it (`cuMemUnmap`), then drops `keep`
    /// (leaks it if either fails). On error nothing is mapped and `keep` is dropped.
    ///
    /// # Safety
    /// `keep` must keep `bytes` bytes at `address` mapped device memory of `context` once
    /// `map` succeeds, until they are unmapped.
    pub(crate) unsafe fn mapped(
        context: &Context,
        address: CUdeviceptr,
        bytes: usize,
        keep: Box<dyn Send + Sync>,
        map: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<DeviceBuffer<T>, CudaError> {
        let release = Release::Kept { unmap: Some(bytes), keep: Keep::new(keep) };
        let owner = MemoryOwner::new(context, release);
        let mem = Handle::create_in(owner, context.as_raw(), || map().map(|()| address))?;
        Ok(DeviceBuffer { mem, len: bytes / size_of::<T>().max(1), _values: PhantomData })
    }

    /// Memory someone else frees (an import's mapping), never freed by this handle; a
    /// graph that keeps it also keeps what `keeper` gives (what frees it).
    ///
    /// # Safety
    /// `len` values at `ptr` must be device memory of `context` while what `keeper` gives
    /// is alive, and `keeper` must give it while this handle is used.
    pub(crate) unsafe fn kept_elsewhere(
        context: &Context,
        ptr: CUdeviceptr,
        len: usize,
        keeper: Keeper,
    ) -> DeviceBuffer<T> {
        let owner = MemoryOwner { keeper: Some(keeper), ..MemoryOwner::new(context, Release::Free) };
        DeviceBuffer { mem: Handle::new(owner, ptr, Ownership::Borrowed), len, _values: PhantomData }
    }

    /// A buffer of no bytes: the null address, which nothing frees.
    fn empty(owner: MemoryOwner, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer { mem: Handle::new(owner, 0, Ownership::Borrowed), len, _values: PhantomData }
    }

    fn adopt(context: &Context, ptr: CUdeviceptr, len: usize, ownership: Ownership) -> DeviceBuffer<T> {
        DeviceBuffer {
            mem: Handle::new(MemoryOwner::new(context, Release::Free), ptr, ownership),
            len,
            _values: PhantomData,
        }
    }
}

/// A device's free and total memory, in bytes, as `cuMemGetInfo` reports them at one
/// moment (other contexts and processes allocate too: the free amount is a snapshot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemoryInfo {
    /// Bytes free on the device.
    pub free: usize,
    /// The device's memory, in bytes.
    pub total: usize,
}

impl MemoryInfo {
    /// The free and total memory of the device of the calling thread's current context
    /// (`cuMemGetInfo`). Without a current context the driver's error is returned.
    pub fn of_current_context(driver: &'static Driver) -> Result<MemoryInfo, Error> {
        Ok(MemoryInfo::query(driver)?)
    }

    fn query(driver: &'static Driver) -> Result<MemoryInfo, CudaError> {
        let (free, total) = driver.typed().cuMemGetInfo()?;
        Ok(MemoryInfo { free, total })
    }
}

impl Context {
    /// The free and total memory of this context's device (`cuMemGetInfo` with this
    /// context current). On error the calling thread's context is unchanged.
    pub fn memory_info(&self) -> Result<MemoryInfo, Error> {
        let driver = self.driver();
        Ok(self.run_raw(|| MemoryInfo::query(driver))?)
    }
}

impl MemoryPool {
    /// Allocates `len` values of `T` from the pool, ordered on `stream`
    /// (`cuMemAllocFromPoolAsync`); freed on the same stream. On error nothing is
    /// allocated.
    pub fn alloc_async<T: DeviceRepr>(&self, stream: &Stream, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc_ordered(stream, Some(self), len)
    }
}
