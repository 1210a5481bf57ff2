//! Typed page-locked host memory (`cuMemAllocHost`/`cuMemFreeHost`), the safe source and
//! destination of asynchronous copies.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Mutex;

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::event::Event;
use crate::resources::flags::{EventFlags, HostAllocFlags};
use crate::resources::handle::{kind, Ownership, Unique};
use crate::resources::memory::DeviceRepr;
use crate::resources::stream::Stream;
use crate::resources::values::value_count;
use crate::scope::cleanup_steps_in_context;

kind!(
    /// The kind of a pinned host allocation: freed in its context.
    PinnedMemory: *mut c_void = "PinnedBuffer", owner Context, in its context, release cuMemFreeHost
);

/// `len` values of `T` in page-locked host memory. Not `Clone`: it has one owner, so its
/// contents are read and written through `&self`/`&mut self` like a `Vec`'s.
///
/// Asynchronous copies to or from it ([`crate::DeviceBuffer::copy_from_pinned_async`],
/// [`crate::DeviceBuffer::copy_to_pinned_async`]) mark it in use until the copy is done
/// (an event recorded after it): reading or writing it ([`PinnedBuffer::as_slice`],
/// [`PinnedBuffer::as_mut_slice`]) and dropping it wait for that event first, so the host
/// never sees a copy half done and the memory is never freed under one. This holds for
/// any number of copies queued from any number of threads on any streams: each is queued
/// under the buffer's lock after the earlier ones (its stream waits for the event, the
/// event is recorded after it), so the one event covers them all. (Copies from one buffer
/// on two streams are therefore done one after the other.) A copy on a stream of another
/// context, which cannot record the event, is waited for before the call returns; no
/// wait ever happens under the lock.
///
/// A buffer of no bytes makes no driver call: no memory, no event; its address is null
/// (never a dangling one, not even from [`PinnedBuffer::into_raw`]), its slices are empty
/// and every copy of it is a no-op.
pub struct PinnedBuffer<T> {
    mem: Unique<PinnedMemory>,
    len: usize,
    /// Recorded after every asynchronous copy that uses the buffer (each waits for it
    /// first); `None` for a buffer of no bytes, which no copy uses.
    in_use: Option<Event>,
    /// Why a queued copy could not be covered by `in_use` (nor waited for). Its lock is
    /// also held while a use is queued (wait for `in_use`, the copy, record `in_use`), so
    /// that uses queued by several threads chain: the event covers every one of them. It
    /// is never held across a wait.
    failed: Mutex<Option<CudaError>>,
    _values: PhantomData<T>,
}

impl<T> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.mem.fmt_debug(f)
    }
}

impl<T: DeviceRepr> PinnedBuffer<T> {
    /// Allocates `len` zeroed values of page-locked host memory in `context`
    /// (`cuMemAllocHost`). On error nothing is allocated. No bytes make no driver call
    /// (the null address).
    pub fn zeroed(context: &Context, len: usize) -> Result<PinnedBuffer<T>, Error> {
        PinnedBuffer::alloc(context, len, None)
    }

    /// As [`PinnedBuffer::zeroed`], allocated with `flags` (`cuMemHostAlloc`; a
    /// [`HostAllocFlags`] or its raw bits, which the driver judges). On error nothing is
    /// allocated.
    pub fn zeroed_with(
        context: &Context,
        len: usize,
        flags: impl Into<HostAllocFlags>,
    ) -> Result<PinnedBuffer<T>, Error> {
        PinnedBuffer::alloc(context, len, Some(flags.into()))
    }

    /// [`PinnedBuffer::zeroed_with`].
    #[deprecated(since = "0.2.0", note = "use `PinnedBuffer::zeroed_with` (an `x_with` is `x` with its flags)")]
    pub fn zeroed_with_flags(
        context: &Context,
        len: usize,
        flags: impl Into<HostAllocFlags>,
    ) -> Result<PinnedBuffer<T>, Error> {
        PinnedBuffer::zeroed_with(context, len, flags)
    }

    /// `cuMemAllocHost` without flags, else `cuMemHostAlloc`.
    fn alloc(context: &Context, len: usize, flags: Option<HostAllocFlags>) -> Result<PinnedBuffer<T>, Error> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            InvalidArgument::new("PinnedBuffer::zeroed", format!("{len} values of {} bytes overflow", size_of::<T>()))
        })?;
        let pc = context.driver().pc();
        if bytes == 0 {
            // Nothing to allocate, nothing to guard: the null address, never freed.
            let mem = Unique::new(context.clone(), std::ptr::null_mut(), Ownership::Borrowed);
            return Ok(PinnedBuffer { mem, len, in_use: None, failed: Mutex::new(None), _values: PhantomData });
        }
        // The event and the memory are made under one switch to the context.
        let mut in_use = None;
        let create = || {
            in_use = Some(Event::new_raw(context, EventFlags::DISABLE_TIMING)?);
            let ptr: *mut c_void = match flags {
                None => pc.0.typed().cuMemAllocHost(bytes)?,
                // The driver checks the flags.
                Some(flags) => pc.0.typed().cuMemHostAlloc(bytes, flags.bits())?,
            };
            // SAFETY: the driver gave `bytes` (more than 0) writable bytes at `ptr`.
            unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
            Ok(ptr)
        };
        let mem = Unique::create_in(context.clone(), context.as_raw(), create)?;
        let Some(in_use) = in_use else {
            // Cannot happen: the memory is made only after the event. Leak rather than
            // free memory that no event guards.
            let mut mem = mem;
            mem.leak();
            return Err(InvalidArgument::new("PinnedBuffer::zeroed", "internal error: no event was made").into());
        };
        Ok(PinnedBuffer { mem, len, in_use: Some(in_use), failed: Mutex::new(None), _values: PhantomData })
    }

    /// A pinned copy of `values`. On error nothing is allocated.
    pub fn from_slice(context: &Context, values: &[T]) -> Result<PinnedBuffer<T>, Error> {
        let mut buffer = PinnedBuffer::zeroed(context, values.len())?;
        buffer.as_mut_slice()?.copy_from_slice(values);
        Ok(buffer)
    }

    /// Gives up ownership: waits for pending copies, then returns the address, which
    /// cudrv will no longer free. Its context is kept alive for the rest of the process, so
    /// the address stays valid until freed by hand. On error (the wait failed) the buffer
    /// is returned. A buffer of no bytes returns the null pointer, which needs no free
    /// (`cuMemFreeHost` is never to be called on it), and keeps nothing alive.
    pub fn into_raw(self) -> Result<*mut c_void, (PinnedBuffer<T>, Error)> {
        if let Err(e) = self.wait() {
            return Err((self, Error::from(e)));
        }
        if self.in_use.is_none() {
            // No bytes: nothing was allocated, nothing is given up.
            return Ok(std::ptr::null_mut());
        }
        // Take the buffer apart without its `Drop`: the memory is given up with its owner
        // (the context stays alive); the guard event, now complete, is destroyed.
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped or used again; each field is read exactly once.
        let (mem, in_use, failed) =
            unsafe { (std::ptr::read(&this.mem), std::ptr::read(&this.in_use), std::ptr::read(&this.failed)) };
        drop((in_use, failed));
        Ok(mem.give_up())
    }

    /// The flags the memory was allocated with (`cuMemHostGetFlags`; the driver adds
    /// `DEVICEMAP`). A buffer of no bytes allocates nothing (its flags are not checked
    /// either): the driver answers `CUDA_ERROR_INVALID_VALUE` for its null address.
    pub fn flags(&self) -> Result<HostAllocFlags, Error> {
        let (pc, ptr) = (self.context().driver().pc(), self.as_raw());
        let mut bits = 0;
        // SAFETY: `ptr` is this buffer's pinned allocation (or, for no bytes, null, which the
        // driver refuses); `bits` is a valid out-pointer.
        self.context().run(|| unsafe { pc.cuMemHostGetFlags(&mut bits, ptr) })?;
        Ok(HostAllocFlags::from_bits_retain(bits))
    }

    /// The host address; null for a buffer of no bytes.
    pub fn as_raw(&self) -> *mut c_void {
        self.mem.raw()
    }

    pub(crate) fn as_ptr(&self) -> *const T {
        self.mem.raw().cast::<T>()
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut T {
        self.mem.raw().cast::<T>()
    }

    /// The address a slice of the values starts at: the memory, or for no bytes (the
    /// null address) a dangling, aligned one, as slices of no bytes need.
    fn slice_ptr(&self) -> *mut T {
        let ptr = self.mem.raw().cast::<T>();
        if ptr.is_null() {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            ptr
        }
    }

    value_count!(T, self => self.len);

    /// The context it was allocated in.
    pub fn context(&self) -> &Context {
        self.mem.owner()
    }

    /// The values, once every copy that writes them is done (waits for it). On error
    /// (the wait failed) nothing can be read.
    pub fn as_slice(&self) -> Result<&[T], Error> {
        self.wait()?;
        // SAFETY: the allocation holds `len` initialised values (zeroed or copied in), or
        // has no bytes (then the address is a dangling, aligned one); no copy is pending,
        // and `&mut self` excludes new ones while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(self.slice_ptr(), self.len) })
    }

    /// The values, for writing, once every copy that uses them is done (waits for it).
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], Error> {
        self.wait()?;
        // SAFETY: `len` initialised values (or none, at a dangling aligned address); no copy
        // is pending (waited for), and `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.slice_ptr(), self.len) })
    }

    /// Queues `copy` on `stream` as a use of the buffer, under one switch to the stream's
    /// context: first the stream waits for every earlier use (the buffer's event), then
    /// the copy, then the event is recorded after it (for a stream of another context,
    /// whose stream cannot record this event, the stream is waited for instead, with the
    /// lock released). So the event covers every use `&mut self` could overlap. If the
    /// copy was queued but could not be covered, it is waited for at once; if even that
    /// fails, the buffer is marked failed: it refuses access and is leaked rather than
    /// freed under a copy.
    pub(crate) fn use_on(
        &self,
        stream: &Stream,
        copy: impl FnOnce() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let Some(in_use) = &self.in_use else {
            // No bytes: no copy touches the buffer (the callers queue none).
            return stream.run(copy);
        };
        let t = stream.context().driver().typed();
        let same_context = in_use.context().as_raw() == stream.context().as_raw();
        let mut queued = false;
        let queuing = {
            // Held while the use is queued and covered: a use queued by another thread
            // meanwhile would otherwise wait for the event before this one is recorded, and
            // overwrite it. Never held across a wait (a wait may run host functions queued
            // on the stream: user code).
            let _order = self.failed.lock().unwrap_or_else(|p| p.into_inner());
            stream.run(|| {
                t.cuStreamWaitEvent(stream.live(), in_use.live(), 0)?;
                copy()?;
                queued = true;
                if same_context {
                    t.cuEventRecord(in_use.live(), stream.live())?;
                }
                Ok(())
            })
        };
        // A stream of another context cannot record the event: the use is waited for
        // before returning (outside the lock). Only `&mut self` (writes, drop) needs every
        // use covered, and it cannot overlap this call.
        let result = match queuing {
            Ok(()) if !same_context => stream.synchronize_raw(),
            other => other,
        };
        if let (true, Err(e)) = (queued, &result) {
            if let Err(wait) = stream.synchronize() {
                let failed = e.clone().with_note(format!("waiting for the queued copy failed too: {wait}"));
                *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(failed);
            }
        }
        result
    }
}

impl<T> PinnedBuffer<T> {
    /// Waits for every copy that uses the buffer; an error if one could not be covered.
    fn wait(&self) -> Result<(), CudaError> {
        if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            return Err(e.clone().with_note("a copy that uses this buffer may still be running: it cannot be used"));
        }
        match &self.in_use {
            Some(in_use) => Ok(in_use.synchronize_raw()?),
            None => Ok(()),
        }
    }
}

impl<T> Drop for PinnedBuffer<T> {
    /// Waits for the last copy that uses the buffer, then frees it (`cuMemFreeHost`), under
    /// one switch to its context. If the wait fails (or a copy could not be covered), or the
    /// context cannot be made current, the memory is leaked rather than freed under a copy,
    /// and one report names it as what leaked: its size and host address, and the free that
    /// was not called (`cuMemFreeHost(0x...) was not called: ...`), after the failed call
    /// that caused it (the wait, naming the event it was given). If only restoring the
    /// caller's context fails, the memory is still freed, and the failed restoration is
    /// reported, naming that context.
    fn drop(&mut self) {
        let Some(in_use) = &self.in_use else {
            // No bytes: nothing was allocated (the memory's handle frees nothing).
            return;
        };
        let bytes = self.len.saturating_mul(size_of::<T>());
        let (ptr, ev) = (self.mem.raw(), in_use.as_raw());
        let memory = Arg::Pointer(ptr as usize);
        let leaked = |why: &str| {
            format!(
                "{bytes} bytes of pinned memory at {memory} leaked: {}({memory}) was not called: {why}",
                call::cuMemFreeHost
            )
        };
        // From here on the handle core frees nothing: the memory is freed below, or leaked.
        self.mem.leak();
        if let Some(e) = self.failed.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            // The error is that of an earlier call (whose arguments are not kept): the
            // report names the buffer's event in its detail, not as that call's argument.
            let why = format!("a copy that uses them could not be covered by event {:#x} or waited for", ev as usize);
            crate::report::error(e, Arg::Opaque, Some(leaked(&why)));
            return;
        }
        // One switch to the buffer's context for the wait and the free. A report names the
        // failed call with the handle it was given (the event, or the memory for the free),
        // and the memory as what leaked; a context that cannot be made current is reported
        // as `cuMemFreeHost(<the memory>) was not called` too.
        let d = in_use.context().driver();
        let wait_and_free = || {
            d.typed().cuEventSynchronize(in_use.live()).map_err(|e| {
                let note = leaked("the copies that use them could not be waited for");
                (e.with_note(note), Arg::Pointer(ev as usize))
            })?;
            // SAFETY: the buffer's own allocation (more than 0 bytes), freed once, in its
            // context, after every copy that uses it; the handle no longer frees it.
            unsafe { d.pc().cuMemFreeHost(ptr) }.map_err(|e| (e, memory))
        };
        let ctx = Some(in_use.context().as_raw());
        cleanup_steps_in_context(d, ctx, call::cuMemFreeHost, memory, wait_and_free, || {});
    }
}
