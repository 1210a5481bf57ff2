//! Typed device memory: synchronous (`cuMemAlloc`/`cuMemFree`) and stream-ordered
//! (`cuMemAllocAsync`/`cuMemFreeAsync`, which remember their deallocation stream)
//! allocations of `T`, and copies and fills between them and the host.

use std::marker::PhantomData;

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::handle::{Handle, Kind, Ownership};
use crate::resources::pinned::PinnedBuffer;
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

/// Checks that `n` values fit in a buffer of `len`.
fn check_fits(what: &'static str, n: usize, len: usize) -> Result<(), InvalidArgument> {
    if n > len {
        return Err(InvalidArgument::new(what, format!("{n} values do not fit in a buffer of {len}")));
    }
    Ok(())
}

impl<T> DeviceBuffer<T> {
    /// Gives up ownership: returns the address, which cudrv will no longer free, if this
    /// is the only clone; otherwise returns the buffer unchanged. Its context is kept alive
    /// for the rest of the process, so the address stays valid until freed by hand.
    pub fn into_raw(self) -> Result<CUdeviceptr, DeviceBuffer<T>> {
        let len = self.len;
        self.mem.into_raw().map_err(|mem| DeviceBuffer { mem, len, _values: PhantomData })
    }

    /// The device address.
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.mem.raw()
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
    /// is allocated.
    pub fn alloc(context: &Context, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let bytes = bytes_of::<T>("DeviceBuffer::alloc", len)?;
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
    /// freed on the same stream. On error nothing is allocated.
    pub fn alloc_async(stream: &Stream, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc_ordered(stream, None, len)
    }

    /// A new buffer holding a copy of `values` (`cuMemAlloc`, `cuMemcpyHtoD`). On error
    /// nothing is allocated.
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

    fn adopt(context: &Context, ptr: CUdeviceptr, len: usize, ownership: Ownership) -> DeviceBuffer<T> {
        let owner = MemoryOwner { context: context.clone(), release: Release::Free };
        DeviceBuffer { mem: Handle::new(owner, ptr, ownership), len, _values: PhantomData }
    }

    fn pc(&self) -> crate::Pc {
        self.context().driver().pc()
    }

    /// Copies `src` to the start of the buffer (`cuMemcpyHtoD`, synchronous). A source
    /// longer than the buffer is refused before any driver call.
    pub fn copy_from_host(&self, src: &[T]) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_from_host", src.len(), self.len)?;
        let (pc, ptr, bytes) = (self.pc(), self.as_raw(), size_of_val(src));
        // SAFETY: `src` is readable for `bytes`, which fit in the buffer.
        Ok(self.context().run(|| unsafe { pc.cuMemcpyHtoD(ptr, src.as_ptr().cast(), bytes) })?)
    }

    /// Copies the start of the buffer into `dst` (`cuMemcpyDtoH`, synchronous). A
    /// destination longer than the buffer is refused before any driver call.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_to_host", dst.len(), self.len)?;
        let (pc, ptr, bytes) = (self.pc(), self.as_raw(), size_of_val(dst));
        // SAFETY: `dst` is writable for `bytes`, which fit in the buffer; T: DeviceRepr
        // accepts any bytes.
        Ok(self.context().run(|| unsafe { pc.cuMemcpyDtoH(dst.as_mut_ptr().cast(), ptr, bytes) })?)
    }

    /// The whole buffer, copied to a new vector (`cuMemcpyDtoH`, synchronous).
    ///
    /// A vector the host cannot allocate (a buffer larger than host memory) is an
    /// [`InvalidArgument`] naming the size, returned before any driver call; the process is
    /// never aborted.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let mut out = Vec::<T>::new();
        out.try_reserve_exact(self.len).map_err(|e| {
            let why =
                format!("a host vector of {} values ({} bytes) cannot be allocated: {e}", self.len, self.size_bytes());
            InvalidArgument::new("DeviceBuffer::to_vec", why)
        })?;
        let (pc, ptr, bytes) = (self.pc(), self.as_raw(), self.size_bytes());
        // SAFETY: the vector has room for `len` values; the copy writes all of them.
        self.context().run(|| unsafe { pc.cuMemcpyDtoH(out.as_mut_ptr().cast(), ptr, bytes) })?;
        // SAFETY: the copy above initialised `len` values (any bytes are a valid T).
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    /// Copies `src` to the start of the buffer (`cuMemcpyDtoD`, synchronous with respect
    /// to the host). A longer source is refused before any driver call.
    pub fn copy_from_device(&self, src: &DeviceBuffer<T>) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_from_device", src.len, self.len)?;
        let (pc, dst, from, bytes) = (self.pc(), self.as_raw(), src.as_raw(), src.size_bytes());
        // SAFETY: both ranges are live allocations of at least `bytes`.
        Ok(self.context().run(|| unsafe { pc.cuMemcpyDtoD(dst, from, bytes) })?)
    }

    /// Copies `src` to the start of the buffer ordered on `stream` (`cuMemcpyDtoDAsync`).
    pub fn copy_from_device_async(&self, src: &DeviceBuffer<T>, stream: &Stream) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_from_device_async", src.len, self.len)?;
        let (pc, dst, from, bytes, s) = (self.pc(), self.as_raw(), src.as_raw(), src.size_bytes(), stream.as_raw());
        // SAFETY: both ranges are live allocations of at least `bytes`; the stream is live.
        Ok(stream.run(|| unsafe { pc.cuMemcpyDtoDAsync(dst, from, bytes, s) })?)
    }

    /// Copies the pinned buffer `src` to the start of this one, ordered on `stream`
    /// (`cuMemcpyHtoDAsync`). `src` waits for the copy before it can be written or freed.
    pub fn copy_from_pinned_async(&self, src: &PinnedBuffer<T>, stream: &Stream) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_from_pinned_async", src.len(), self.len)?;
        let (pc, ptr, bytes, s) = (self.pc(), self.as_raw(), src.size_bytes(), stream.as_raw());
        let host = src.as_ptr().cast();
        // SAFETY: `src` stays allocated and unwritten until the copy is done: the copy is
        // one of its uses, which it waits for before any write or its free.
        Ok(src.use_on(stream, || unsafe { pc.cuMemcpyHtoDAsync(ptr, host, bytes, s) })?)
    }

    /// Copies the start of this buffer into the pinned buffer `dst`, ordered on `stream`
    /// (`cuMemcpyDtoHAsync`). `dst` waits for the copy before it can be read or freed.
    pub fn copy_to_pinned_async(&self, dst: &mut PinnedBuffer<T>, stream: &Stream) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_to_pinned_async", dst.len(), self.len)?;
        let (pc, ptr, bytes, s) = (self.pc(), self.as_raw(), dst.size_bytes(), stream.as_raw());
        let host = dst.as_mut_ptr().cast();
        // SAFETY: as above, for reads of `dst`.
        Ok(dst.use_on(stream, || unsafe { pc.cuMemcpyDtoHAsync(host, ptr, bytes, s) })?)
    }

    /// Copies `src` to the start of the buffer ordered on `stream` (`cuMemcpyHtoDAsync`).
    ///
    /// # Safety
    /// `src` must stay allocated and unwritten until the copy is done (synchronise the
    /// stream, or an event recorded after it). [`DeviceBuffer::copy_from_pinned_async`]
    /// is the safe form.
    pub unsafe fn copy_from_host_async(&self, src: &[T], stream: &Stream) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_from_host_async", src.len(), self.len)?;
        let (pc, ptr, bytes, s) = (self.pc(), self.as_raw(), size_of_val(src), stream.as_raw());
        // SAFETY: the caller keeps `src` alive and unwritten until the copy is done.
        Ok(stream.run(|| unsafe { pc.cuMemcpyHtoDAsync(ptr, src.as_ptr().cast(), bytes, s) })?)
    }

    /// Copies the start of the buffer into `dst` ordered on `stream` (`cuMemcpyDtoHAsync`).
    ///
    /// # Safety
    /// `dst` must stay allocated, and be neither read nor written, until the copy is done.
    /// [`DeviceBuffer::copy_to_pinned_async`] is the safe form.
    pub unsafe fn copy_to_host_async(&self, dst: &mut [T], stream: &Stream) -> Result<(), Error> {
        check_fits("DeviceBuffer::copy_to_host_async", dst.len(), self.len)?;
        let (pc, ptr, bytes, s) = (self.pc(), self.as_raw(), size_of_val(dst), stream.as_raw());
        // SAFETY: the caller keeps `dst` alive and untouched until the copy is done.
        Ok(stream.run(|| unsafe { pc.cuMemcpyDtoHAsync(dst.as_mut_ptr().cast(), ptr, bytes, s) })?)
    }

    /// Sets every value to `value` (`cuMemsetD8`/`D16`/`D32`, synchronous). `T` must be
    /// 1, 2 or 4 bytes; other sizes are refused before any driver call.
    pub fn fill(&self, value: T) -> Result<(), Error> {
        let (pc, ptr, n) = (self.pc(), self.as_raw(), self.len);
        let fill = Fill::of("DeviceBuffer::fill", value)?;
        Ok(self.context().run(|| match fill {
            // SAFETY: the range is this live allocation.
            Fill::D8(v) => unsafe { pc.cuMemsetD8(ptr, v, n) },
            // SAFETY: as above.
            Fill::D16(v) => unsafe { pc.cuMemsetD16(ptr, v, n) },
            // SAFETY: as above.
            Fill::D32(v) => unsafe { pc.cuMemsetD32(ptr, v, n) },
        })?)
    }

    /// Sets every value to `value`, ordered on `stream` (`cuMemsetD8Async`/`D16`/`D32`).
    pub fn fill_async(&self, value: T, stream: &Stream) -> Result<(), Error> {
        let (pc, ptr, n, s) = (self.pc(), self.as_raw(), self.len, stream.as_raw());
        let fill = Fill::of("DeviceBuffer::fill_async", value)?;
        Ok(stream.run(|| match fill {
            // SAFETY: the range is this live allocation; the stream is live.
            Fill::D8(v) => unsafe { pc.cuMemsetD8Async(ptr, v, n, s) },
            // SAFETY: as above.
            Fill::D16(v) => unsafe { pc.cuMemsetD16Async(ptr, v, n, s) },
            // SAFETY: as above.
            Fill::D32(v) => unsafe { pc.cuMemsetD32Async(ptr, v, n, s) },
        })?)
    }
}

/// A fill value as the memset of its width takes it.
#[derive(Clone, Copy)]
enum Fill {
    D8(u8),
    D16(u16),
    D32(u32),
}

impl Fill {
    fn of<T: DeviceRepr>(what: &'static str, value: T) -> Result<Fill, InvalidArgument> {
        let bytes = size_of::<T>();
        match bytes {
            // SAFETY: T is plain data of exactly one byte.
            1 => Ok(Fill::D8(unsafe { std::mem::transmute_copy::<T, u8>(&value) })),
            // SAFETY: T is plain data of exactly two bytes.
            2 => Ok(Fill::D16(unsafe { std::mem::transmute_copy::<T, u16>(&value) })),
            // SAFETY: T is plain data of exactly four bytes.
            4 => Ok(Fill::D32(unsafe { std::mem::transmute_copy::<T, u32>(&value) })),
            _ => Err(InvalidArgument::new(what, format!("a fill value must be 1, 2 or 4 bytes, not {bytes}"))),
        }
    }
}
