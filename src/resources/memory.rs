//! Typed device memory: synchronous (`cuMemAlloc`/`cuMemFree`) and stream-ordered
//! (`cuMemAllocAsync`/`cuMemFreeAsync`, which remember their deallocation stream)
//! allocations of `T`, and the device's free and total memory (`cuMemGetInfo`). Their
//! copies, fills and views are those of every kind of device memory (`view.rs`).
//!
//! An allocation of no bytes calls no driver function: it is the null address, owned by
//! nobody (never freed), so every kind of buffer of length 0 behaves the same on every
//! driver (a real one refuses `cuMemAlloc(0)` but gives null for `cuMemAllocAsync(0)`).

use std::marker::PhantomData;

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::handle::{Handle, Kind, Ownership};
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
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

/// The kind of a device allocation.
pub(crate) struct DeviceMemory;

/// How an allocation is given back, and what it keeps alive.
pub(crate) struct MemoryOwner {
    context: Context,
    release: Release,
}

impl MemoryOwner {
    /// The context the allocation belongs to.
    pub(crate) fn context(&self) -> &Context {
        &self.context
    }
}

enum Release {
    Free,
    FreeAsync { stream: Stream, _pool: Option<MemoryPool> },
}

impl Kind for DeviceMemory {
    type Raw = CUdeviceptr;
    type Owner = MemoryOwner;
    const NAME: &'static str = "DeviceBuffer";
    const NULL: CUdeviceptr = 0;
    fn driver(owner: &MemoryOwner) -> &'static Driver {
        owner.context.driver()
    }
    fn addr(raw: CUdeviceptr) -> usize {
        raw as usize
    }
    fn arg(_: &MemoryOwner, raw: CUdeviceptr, _: Ownership) -> Arg {
        Arg::Hex(raw)
    }
    fn release_call(owner: &MemoryOwner, _: Ownership) -> Call {
        match owner.release {
            Release::Free => call::cuMemFree,
            Release::FreeAsync { .. } => call::cuMemFreeAsync,
        }
    }
    fn release_context(owner: &MemoryOwner) -> Option<CUcontext> {
        match &owner.release {
            Release::Free => Some(owner.context.as_raw()),
            Release::FreeAsync { stream, .. } => Some(stream.context().as_raw()),
        }
    }
    unsafe fn release(owner: &MemoryOwner, raw: CUdeviceptr, _: Ownership) -> Result<(), CudaError> {
        let pc = owner.context.driver().pc();
        match &owner.release {
            // SAFETY: released once, from the last clone.
            Release::Free => unsafe { pc.cuMemFree(raw) },
            // SAFETY: as above; the stream is live (we hold it).
            Release::FreeAsync { stream, .. } => unsafe { pc.cuMemFreeAsync(raw, stream.as_raw()) },
        }
    }
}

/// A device allocation of `len` values of `T`. Clones share it; the last one frees it (if
/// owned): with `cuMemFree` in its context, or, for a stream-ordered one, with
/// `cuMemFreeAsync` on the stream it remembers. It keeps its context, stream and pool
/// alive.
///
/// Work queued on streams is ordered by the streams: copies, fills and launches that
/// touch the same buffer from two streams need an event between them (as in CUDA C).
/// Dropping the last clone is a use too: a stream-ordered buffer is freed on its
/// deallocation stream, so work on other streams that uses it must be ordered before
/// that stream (e.g. `deallocation_stream().wait_event(..)` on an event recorded after
/// it) before the last clone is dropped; a `cuMemFree`d buffer is freed when dropped, so
/// wait for the work that uses it first.
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

    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len.saturating_mul(std::mem::size_of::<T>())
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.mem.owner().context
    }

    /// The stream a stream-ordered allocation is freed on.
    pub fn deallocation_stream(&self) -> Option<&Stream> {
        match &self.mem.owner().release {
            Release::FreeAsync { stream, .. } => Some(stream),
            Release::Free => None,
        }
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` values in `context` (`cuMemAlloc`), uninitialised. On error nothing
    /// is allocated. No bytes (`len` 0) make no driver call: the buffer has the null
    /// address, and every copy, fill and view of it is a no-op.
    pub fn alloc(context: &Context, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let bytes = bytes_of::<T>("DeviceBuffer::alloc", len)?;
        if bytes == 0 {
            return Ok(DeviceBuffer::empty(MemoryOwner { context: context.clone(), release: Release::Free }, len));
        }
        let pc = context.driver().pc();
        let create = || {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: `ptr` is a valid out-pointer.
            unsafe { pc.cuMemAlloc(&mut ptr, bytes) }?;
            Ok(ptr)
        };
        let owner = MemoryOwner { context: context.clone(), release: Release::Free };
        let mem = Handle::create_in(owner, context.as_raw(), create)?;
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
            return Ok(DeviceBuffer::empty(MemoryOwner { context: context.clone(), release }, len));
        }
        let (pc, s) = (context.driver().pc(), stream.as_raw());
        let create = || {
            let mut ptr: CUdeviceptr = 0;
            match pool {
                // SAFETY: `ptr` is a valid out-pointer; stream and pool are live.
                Some(pool) => unsafe { pc.cuMemAllocFromPoolAsync(&mut ptr, bytes, pool.as_raw(), s) }?,
                // SAFETY: as above.
                None => unsafe { pc.cuMemAllocAsync(&mut ptr, bytes, s) }?,
            }
            Ok(ptr)
        };
        let release = Release::FreeAsync { stream: stream.clone(), _pool: pool.cloned() };
        let mem = Handle::create_in(MemoryOwner { context: context.clone(), release }, context.as_raw(), create)?;
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

    /// A buffer of no bytes: the null address, which nothing frees.
    fn empty(owner: MemoryOwner, len: usize) -> DeviceBuffer<T> {
        DeviceBuffer { mem: Handle::new(owner, 0, Ownership::Borrowed), len, _values: PhantomData }
    }

    fn adopt(context: &Context, ptr: CUdeviceptr, len: usize, ownership: Ownership) -> DeviceBuffer<T> {
        let owner = MemoryOwner { context: context.clone(), release: Release::Free };
        DeviceBuffer { mem: Handle::new(owner, ptr, ownership), len, _values: PhantomData }
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
    pub fn of_current_context(driver: &'static Driver) -> Result<MemoryInfo, CudaError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: both are valid out-pointers.
        unsafe { driver.pc().cuMemGetInfo(&mut free, &mut total) }?;
        Ok(MemoryInfo { free, total })
    }
}

impl Context {
    /// The free and total memory of this context's device (`cuMemGetInfo` with this
    /// context current). On error the calling thread's context is unchanged.
    pub fn memory_info(&self) -> Result<MemoryInfo, CudaError> {
        let driver = self.driver();
        self.run(|| MemoryInfo::of_current_context(driver))
    }
}
