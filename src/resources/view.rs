//! Device memory of `T`, whatever made it: the traits [`DeviceSlice`] (read access) and
//! [`DeviceSliceMut`] (write access), which buffers, pool allocations, imported IPC
//! buffers and views implement; views, borrowed sub-ranges of them; and the copies and
//! fills they all share, implemented once, over a view.
//!
//! A view is an address, a length and a reference to its parent allocation's shared state
//! (the `Handle` of the allocation): creating one makes no driver call and allocates
//! nothing. The reference keeps the parent borrowed (it cannot be dropped while the view
//! lives) and is what a view's uses across streams are recorded on (`memory.rs`,
//! DESIGN.md "Device memory of T"): every asynchronous copy and fill records its use on
//! its stream before it is queued, and every synchronous one waits for the allocation's
//! streams first.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::Handle;
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::memory::{DeviceBuffer, DeviceMemory, DeviceRepr};
use crate::resources::pinned::PinnedBuffer;
use crate::resources::stream::Stream;
use crate::resources::values::value_count;
use crate::sys::CUdeviceptr;
use crate::Pc;

pub(crate) mod sealed {
    /// Only cudrv's kinds of device memory implement [`super::DeviceSlice`]: the copies
    /// trust the address and length a kind gives, and each kind's view names its
    /// allocation (for the tracking of uses across streams).
    pub trait Sealed {}
}

/// A borrowed, read-only range of device memory holding `len` values of `T`: all of a
/// buffer, or a part of it ([`DeviceSlice::slice`], [`DeviceSlice::split_at`],
/// [`DeviceSlice::chunks`]). It borrows its parent, which cannot be dropped while the
/// view lives. Making one makes no driver call and allocates nothing; a view of no bytes
/// has the null address. It is a kernel argument (its device address), like a buffer.
pub struct DeviceView<'a, T> {
    ptr: CUdeviceptr,
    len: usize,
    /// The parent allocation: what the view's uses belong to.
    mem: &'a Handle<DeviceMemory>,
    _values: PhantomData<&'a [T]>,
}

/// A borrowed, writable range of device memory holding `len` values of `T`
/// ([`DeviceSliceMut::slice_mut`], [`DeviceSliceMut::split_at_mut`],
/// [`DeviceSliceMut::chunks_mut`]): the parent is borrowed mutably while it lives, so the
/// views of one handle that can be written never overlap. (A buffer's clones share its
/// memory: as with `&DeviceBuffer` methods, writes through two clones are ordered by
/// their streams, not by Rust's borrows.) It reads like a [`DeviceView`].
pub struct DeviceViewMut<'a, T> {
    view: DeviceView<'a, T>,
    _mut: PhantomData<&'a mut [T]>,
}

/// The views of `size` values each (the last may be shorter) of a range of device memory,
/// in order: [`DeviceSlice::chunks`].
pub struct DeviceChunks<'a, T> {
    rest: DeviceView<'a, T>,
    size: usize,
}

/// The writable views of `size` values each (the last may be shorter), in order:
/// [`DeviceSliceMut::chunks_mut`]. They never overlap.
pub struct DeviceChunksMut<'a, T> {
    chunks: DeviceChunks<'a, T>,
    _mut: PhantomData<&'a mut [T]>,
}

/// Device memory holding values of `T` that can be read: [`DeviceBuffer`] (also pool
/// allocations), [`crate::ManagedBuffer`], [`crate::ImportedBuffer`] and
/// [`crate::Mapping`] (bytes), [`crate::GrowableBuffer`], [`DeviceView`] and
/// [`DeviceViewMut`].
/// A function written once over `&impl DeviceSlice<T>` takes any of them.
///
/// Implemented by cudrv's kinds of memory only (the trait is sealed). Every method checks
/// its arguments before any driver call ([`InvalidArgument`]); one that moves no bytes
/// (an empty range) makes no driver call and returns `Ok`.
///
/// Uses across streams are safe (docs/memory.md): an asynchronous copy or fill records its
/// stream as a use of the memory's allocation (the allocation's free waits for it; a
/// stream-ordered allocation's first use on another stream waits for the allocation), and
/// a synchronous copy or fill first waits for the work queued on the allocation's streams
/// (its own and those it was used on: one `cuStreamSynchronize` each).
pub trait DeviceSlice<T: DeviceRepr>: sealed::Sealed {
    /// All of it, as a view (no driver call, no allocation).
    fn as_view(&self) -> DeviceView<'_, T>;

    /// The device address of its first value; 0 (null) if it has no bytes.
    fn as_raw(&self) -> CUdeviceptr {
        self.as_view().ptr
    }

    /// The number of values.
    fn len(&self) -> usize {
        self.as_view().len
    }

    /// Whether it holds no values.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its size in bytes.
    fn size_bytes(&self) -> usize {
        self.as_view().bytes()
    }

    /// The context its memory belongs to.
    fn context(&self) -> &Context {
        self.as_view().context()
    }

    /// The values in `range` (`2..6`, `..4`, `..`), as a view. A range that does not lie
    /// within the values is an [`InvalidArgument`] naming the range and the length.
    fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'_, T>, InvalidArgument> {
        self.as_view().slice(range)
    }

    /// The values before `mid` and from `mid` on, as two views. `mid` past the end is an
    /// [`InvalidArgument`].
    fn split_at(&self, mid: usize) -> Result<(DeviceView<'_, T>, DeviceView<'_, T>), InvalidArgument> {
        self.as_view().split_at(mid)
    }

    /// The views of `size` values each, in order (the last may be shorter; none for no
    /// values). A `size` of 0 is an [`InvalidArgument`].
    fn chunks(&self, size: usize) -> Result<DeviceChunks<'_, T>, InvalidArgument> {
        self.as_view().chunks(size)
    }

    /// Copies the first `dst.len()` values into `dst` (`cuMemcpyDtoH`, synchronous). A
    /// destination longer than this memory is refused before any driver call.
    fn copy_to_host(&self, dst: &mut [T]) -> Result<(), Error> {
        self.as_view().read_to_host("DeviceSlice::copy_to_host", dst)
    }

    /// All the values, copied to a new vector (`cuMemcpyDtoH`, synchronous). A vector
    /// the host cannot allocate is an [`InvalidArgument`] naming the size, never an abort.
    fn to_vec(&self) -> Result<Vec<T>, Error> {
        self.as_view().read_to_vec("DeviceSlice::to_vec")
    }

    /// Copies the first `dst.len()` values into the pinned buffer `dst`, ordered on
    /// `stream` (`cuMemcpyDtoHAsync`). `dst` waits for the copy before it can be read or
    /// freed.
    fn copy_to_pinned_async(&self, dst: &mut PinnedBuffer<T>, stream: &Stream) -> Result<(), Error> {
        self.as_view().read_to_pinned_async("DeviceSlice::copy_to_pinned_async", dst, stream)
    }

    /// Copies the first `dst.len()` values into `dst`, ordered on `stream`
    /// (`cuMemcpyDtoHAsync`).
    ///
    /// # Safety
    /// `dst` must stay allocated, and be neither read nor written, until the copy is done.
    /// [`DeviceSlice::copy_to_pinned_async`] is the safe form.
    unsafe fn copy_to_host_async(&self, dst: &mut [T], stream: &Stream) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.as_view().read_to_host_async("DeviceSlice::copy_to_host_async", dst, stream) }
    }
}

/// Device memory holding values of `T` that can be written: [`DeviceBuffer`],
/// [`crate::ImportedBuffer`] (bytes) and [`DeviceViewMut`]. Each copy writes from the
/// start of this memory; a source longer than it is refused before any driver call, and
/// a copy of no bytes makes no driver call. Overlapping source and destination give the
/// driver's (undefined) result.
pub trait DeviceSliceMut<T: DeviceRepr>: DeviceSlice<T> {
    /// All of it, as a writable view (no driver call, no allocation).
    fn as_view_mut(&mut self) -> DeviceViewMut<'_, T>;

    /// The values in `range`, as a writable view. A range that does not lie within the
    /// values is an [`InvalidArgument`] naming the range and the length.
    fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceViewMut<'_, T>, InvalidArgument> {
        let view = self.as_view_mut().view.slice(range)?;
        Ok(DeviceViewMut { view, _mut: PhantomData })
    }

    /// The values before `mid` and from `mid` on, as two writable views that do not
    /// overlap. `mid` past the end is an [`InvalidArgument`].
    #[allow(clippy::type_complexity)]
    fn split_at_mut(&mut self, mid: usize) -> Result<(DeviceViewMut<'_, T>, DeviceViewMut<'_, T>), InvalidArgument> {
        let (head, tail) = self.as_view_mut().view.split_at(mid)?;
        Ok((DeviceViewMut { view: head, _mut: PhantomData }, DeviceViewMut { view: tail, _mut: PhantomData }))
    }

    /// The writable views of `size` values each, in order (the last may be shorter). A
    /// `size` of 0 is an [`InvalidArgument`].
    fn chunks_mut(&mut self, size: usize) -> Result<DeviceChunksMut<'_, T>, InvalidArgument> {
        let rest = self.as_view_mut().view;
        Ok(DeviceChunksMut { chunks: rest.chunks(size)?, _mut: PhantomData })
    }

    /// Copies `src` to the start (`cuMemcpyHtoD`, synchronous).
    fn copy_from_host(&mut self, src: &[T]) -> Result<(), Error> {
        self.as_view_mut().view.write_from_host("DeviceSliceMut::copy_from_host", src)
    }

    /// Copies `src` (any device memory of `T` in this context) to the start
    /// (`cuMemcpyDtoD`, synchronous with respect to the host).
    fn copy_from_device<S: DeviceSlice<T> + ?Sized>(&mut self, src: &S) -> Result<(), Error> {
        self.as_view_mut().view.write_from_device("DeviceSliceMut::copy_from_device", src.as_view())
    }

    /// Copies `src` to the start, ordered on `stream` (`cuMemcpyDtoDAsync`).
    fn copy_from_device_async<S: DeviceSlice<T> + ?Sized>(&mut self, src: &S, stream: &Stream) -> Result<(), Error> {
        let what = "DeviceSliceMut::copy_from_device_async";
        self.as_view_mut().view.device_async(what, src.as_view(), stream, false)
    }

    /// Copies `src`, which may belong to another context or device, to the start, ordered
    /// on `stream` (`cuMemcpyPeerAsync` with both contexts; see
    /// [`DeviceBuffer::copy_from_peer_async`]).
    fn copy_from_peer_async<S: DeviceSlice<T> + ?Sized>(&mut self, src: &S, stream: &Stream) -> Result<(), Error> {
        let what = "DeviceSliceMut::copy_from_peer_async";
        self.as_view_mut().view.device_async(what, src.as_view(), stream, true)
    }

    /// Copies the pinned buffer `src` to the start, ordered on `stream`
    /// (`cuMemcpyHtoDAsync`). `src` waits for the copy before it can be written or freed.
    fn copy_from_pinned_async(&mut self, src: &PinnedBuffer<T>, stream: &Stream) -> Result<(), Error> {
        self.as_view_mut().view.write_from_pinned_async("DeviceSliceMut::copy_from_pinned_async", src, stream)
    }

    /// Copies `src` to the start, ordered on `stream` (`cuMemcpyHtoDAsync`).
    ///
    /// # Safety
    /// `src` must stay allocated and unwritten until the copy is done.
    /// [`DeviceSliceMut::copy_from_pinned_async`] is the safe form.
    unsafe fn copy_from_host_async(&mut self, src: &[T], stream: &Stream) -> Result<(), Error> {
        // SAFETY: forwarded from the caller.
        unsafe { self.as_view_mut().view.write_from_host_async("DeviceSliceMut::copy_from_host_async", src, stream) }
    }

    /// Sets every value to `value` (`cuMemsetD8`/`D16`/`D32`, synchronous). `T` must be
    /// 1, 2 or 4 bytes; other sizes are refused before any driver call, whatever the
    /// length.
    fn fill(&mut self, value: T) -> Result<(), Error> {
        self.as_view_mut().view.fill("DeviceSliceMut::fill", value)
    }

    /// Sets every value to `value`, ordered on `stream` (`cuMemsetD8Async`/`D16`/`D32`).
    fn fill_async(&mut self, value: T, stream: &Stream) -> Result<(), Error> {
        self.as_view_mut().view.fill_async("DeviceSliceMut::fill_async", value, stream)
    }
}

impl<T> Clone for DeviceView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeviceView<'_, T> {}

impl<T> std::fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceView({:#x}, {} values, of ", self.ptr, self.len)?;
        self.mem.fmt_debug(f)?;
        write!(f, ")")
    }
}

impl<T> std::fmt::Debug for DeviceViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceViewMut({:#x}, {} values, of ", self.view.ptr, self.view.len)?;
        self.view.mem.fmt_debug(f)?;
        write!(f, ")")
    }
}

impl<T> std::fmt::Debug for DeviceChunks<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceChunks").field("rest", &self.rest).field("size", &self.size).finish()
    }
}

impl<T> std::fmt::Debug for DeviceChunksMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceChunksMut").field("rest", &self.chunks.rest).field("size", &self.chunks.size).finish()
    }
}

/// `range` as written (`2..6`, `2..=5`, `..`), for errors.
fn show(range: &impl RangeBounds<usize>) -> String {
    let start = match range.start_bound() {
        Bound::Included(s) => s.to_string(),
        Bound::Excluded(s) => format!("{s} (excluded)"),
        Bound::Unbounded => String::new(),
    };
    match range.end_bound() {
        Bound::Included(e) => format!("{start}..={e}"),
        Bound::Excluded(e) => format!("{start}..{e}"),
        Bound::Unbounded => format!("{start}.."),
    }
}

/// The start and end of `range` within `len` values, or an error naming both.
fn bounds(what: &'static str, range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize), InvalidArgument> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok((start, end)),
        _ => Err(out_of_bounds(what, &range, len)),
    }
}

/// The error of [`DeviceView::split_at`], kept out of its fast path.
#[cold]
#[inline(never)]
fn split_past_end(mid: usize, len: usize) -> InvalidArgument {
    InvalidArgument::new("DeviceView::split_at", format!("split point {mid} is past the end of {len} values"))
}

/// The error of [`bounds`], kept out of its fast path (formatting code in it kept the
/// check from being inlined: a view cost 12 ns instead of 2).
#[cold]
#[inline(never)]
fn out_of_bounds(what: &'static str, range: &impl RangeBounds<usize>, len: usize) -> InvalidArgument {
    InvalidArgument::new(what, format!("range {} is out of bounds of {len} values", show(range)))
}

/// Checks that `n` values fit in `len`.
fn check_fits(what: &'static str, n: usize, len: usize) -> Result<(), InvalidArgument> {
    if n > len {
        return Err(InvalidArgument::new(what, format!("{n} values do not fit in a range of {len}")));
    }
    Ok(())
}

impl<'a, T> DeviceView<'a, T> {
    /// The first `len` values of the allocation `mem` (whose own length the caller knows).
    pub(crate) fn whole(mem: &'a Handle<DeviceMemory>, len: usize) -> DeviceView<'a, T> {
        let ptr = if len.saturating_mul(size_of::<T>()) == 0 { 0 } else { mem.raw() };
        DeviceView { ptr, len, mem, _values: PhantomData }
    }

    /// `len` values at `ptr`, which the caller checked lie within the allocation `mem`
    /// (a row of a pitched buffer, `pitched.rs`).
    pub(crate) fn within(mem: &'a Handle<DeviceMemory>, ptr: CUdeviceptr, len: usize) -> DeviceView<'a, T> {
        let ptr = if len.saturating_mul(size_of::<T>()) == 0 { 0 } else { ptr };
        DeviceView { ptr, len, mem, _values: PhantomData }
    }

    /// Values `start..end`, which the caller checked lie within the view.
    fn part(self, start: usize, end: usize) -> DeviceView<'a, T> {
        let len = end.saturating_sub(start);
        let offset = (start as u64).saturating_mul(size_of::<T>() as u64);
        let ptr = if len.saturating_mul(size_of::<T>()) == 0 { 0 } else { self.ptr.saturating_add(offset) };
        DeviceView { ptr, len, mem: self.mem, _values: PhantomData }
    }

    /// The device address of its first value; 0 (null) if it has no bytes.
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.ptr
    }

    value_count!(T, self => self.len);

    /// The context its memory belongs to (the parent's).
    pub fn context(&self) -> &'a Context {
        self.mem.owner().context()
    }

    /// The values in `range` of this view, as a view of the same parent (see
    /// [`DeviceSlice::slice`]).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'a, T>, InvalidArgument> {
        let (start, end) = bounds("DeviceView::slice", range, self.len)?;
        Ok(self.part(start, end))
    }

    /// The values before `mid` and from `mid` on (see [`DeviceSlice::split_at`]).
    pub fn split_at(&self, mid: usize) -> Result<(DeviceView<'a, T>, DeviceView<'a, T>), InvalidArgument> {
        if mid > self.len {
            return Err(split_past_end(mid, self.len));
        }
        Ok((self.part(0, mid), self.part(mid, self.len)))
    }

    /// The views of `size` values each (see [`DeviceSlice::chunks`]).
    pub fn chunks(&self, size: usize) -> Result<DeviceChunks<'a, T>, InvalidArgument> {
        if size == 0 {
            return Err(InvalidArgument::new("DeviceView::chunks", "a chunk size of 0 values"));
        }
        Ok(DeviceChunks { rest: *self, size })
    }

    /// Where the address is kept while the view is borrowed: what a kernel parameter points to.
    pub(crate) fn raw_ref(&self) -> &CUdeviceptr {
        &self.ptr
    }

    /// The same range, writable: only for a kind's [`DeviceSliceMut::as_view_mut`], whose
    /// `&mut self` keeps the parent borrowed mutably for `'a`.
    pub(crate) fn into_mut(self) -> DeviceViewMut<'a, T> {
        DeviceViewMut { view: self, _mut: PhantomData }
    }

    /// The parent allocation (what the view's uses belong to).
    pub(crate) fn allocation(&self) -> &'a Handle<DeviceMemory> {
        self.mem
    }

    /// Records a use of the parent allocation on `stream` (see `memory.rs`), before work
    /// that uses the view is queued there.
    #[inline(always)]
    pub(crate) fn used_on(&self, stream: &Stream) -> Result<(), CudaError> {
        self.mem.owner().used_on(stream)
    }

    /// Waits for the work queued on the parent allocation's streams, before a synchronous
    /// copy or fill (see `memory.rs`).
    #[inline(always)]
    fn settle(&self) -> Result<(), CudaError> {
        self.mem.owner().settle()
    }

    fn bytes(&self) -> usize {
        self.len.saturating_mul(size_of::<T>())
    }

    fn pc(&self) -> Pc {
        self.context().driver().pc()
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// The device address of its first value; 0 (null) if it has no bytes.
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.view.ptr
    }

    value_count!(T, self => self.view.len);

    /// The context its memory belongs to (the parent's).
    pub fn context(&self) -> &'a Context {
        self.view.context()
    }

    /// Where the address is kept while the view is borrowed: what a kernel parameter points to.
    pub(crate) fn raw_ref(&self) -> &CUdeviceptr {
        &self.view.ptr
    }

    /// The parent allocation (what the view's uses belong to).
    pub(crate) fn allocation(&self) -> &'a Handle<DeviceMemory> {
        self.view.mem
    }
}

impl<'a, T> Iterator for DeviceChunks<'a, T> {
    type Item = DeviceView<'a, T>;

    fn next(&mut self) -> Option<DeviceView<'a, T>> {
        if self.rest.len == 0 {
            return None;
        }
        let n = self.size.min(self.rest.len);
        let (head, tail) = (self.rest.part(0, n), self.rest.part(n, self.rest.len));
        self.rest = tail;
        Some(head)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rest.len.div_ceil(self.size.max(1));
        (n, Some(n))
    }
}

impl<T> ExactSizeIterator for DeviceChunks<'_, T> {}

impl<'a, T> Iterator for DeviceChunksMut<'a, T> {
    type Item = DeviceViewMut<'a, T>;

    fn next(&mut self) -> Option<DeviceViewMut<'a, T>> {
        // Each chunk is handed out once and the chunks do not overlap.
        self.chunks.next().map(|view| DeviceViewMut { view, _mut: PhantomData })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl<T> ExactSizeIterator for DeviceChunksMut<'_, T> {}

impl<T> sealed::Sealed for DeviceView<'_, T> {}
impl<T: DeviceRepr> DeviceSlice<T> for DeviceView<'_, T> {
    fn as_view(&self) -> DeviceView<'_, T> {
        *self
    }
}

impl<T> sealed::Sealed for DeviceViewMut<'_, T> {}
impl<T: DeviceRepr> DeviceSlice<T> for DeviceViewMut<'_, T> {
    fn as_view(&self) -> DeviceView<'_, T> {
        self.view
    }
}
impl<T: DeviceRepr> DeviceSliceMut<T> for DeviceViewMut<'_, T> {
    fn as_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut { view: self.view, _mut: PhantomData }
    }
}

impl<T> sealed::Sealed for DeviceBuffer<T> {}
impl<T: DeviceRepr> DeviceSlice<T> for DeviceBuffer<T> {
    fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView::whole(self.allocation(), self.len())
    }
}
impl<T: DeviceRepr> DeviceSliceMut<T> for DeviceBuffer<T> {
    fn as_view_mut(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut { view: DeviceView::whole(self.allocation(), self.len()), _mut: PhantomData }
    }
}

/// The one implementation of every copy and fill: a view is the destination (writes) or
/// the source (reads). Each checks its arguments first, returns `Ok` without a driver call
/// when no bytes move, and runs in the memory's context (or the stream's).
impl<T: DeviceRepr> DeviceView<'_, T> {
    pub(crate) fn write_from_host(self, what: &'static str, src: &[T]) -> Result<(), Error> {
        check_fits(what, src.len(), self.len)?;
        let (pc, ptr, bytes) = (self.pc(), self.ptr, size_of_val(src));
        if bytes == 0 {
            return Ok(());
        }
        self.settle()?;
        // SAFETY: `src` is readable for `bytes`, which fit in this live range.
        self.context().run(|| unsafe { pc.cuMemcpyHtoD(ptr, src.as_ptr().cast(), bytes) })
    }

    pub(crate) fn read_to_host(self, what: &'static str, dst: &mut [T]) -> Result<(), Error> {
        check_fits(what, dst.len(), self.len)?;
        let (pc, ptr, bytes) = (self.pc(), self.ptr, size_of_val(dst));
        if bytes == 0 {
            return Ok(());
        }
        self.settle()?;
        // SAFETY: `dst` is writable for `bytes`, which fit in this live range; T: DeviceRepr
        // accepts any bytes.
        self.context().run(|| unsafe { pc.cuMemcpyDtoH(dst.as_mut_ptr().cast(), ptr, bytes) })
    }

    pub(crate) fn read_to_vec(self, what: &'static str) -> Result<Vec<T>, Error> {
        let mut out = Vec::<T>::new();
        out.try_reserve_exact(self.len).map_err(|e| {
            let why = format!("a host vector of {} values ({} bytes) cannot be allocated: {e}", self.len, self.bytes());
            InvalidArgument::new(what, why)
        })?;
        let (pc, ptr, bytes) = (self.pc(), self.ptr, self.bytes());
        if bytes != 0 {
            self.settle()?;
            // SAFETY: the vector has room for `len` values; the copy writes all of them.
            self.context().run(|| unsafe { pc.cuMemcpyDtoH(out.as_mut_ptr().cast(), ptr, bytes) })?;
        }
        // SAFETY: the copy above initialised `len` values (any bytes are a valid T), or
        // there are no bytes to initialise (no values, or values of no size).
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    pub(crate) fn write_from_device(self, what: &'static str, src: DeviceView<'_, T>) -> Result<(), Error> {
        check_fits(what, src.len, self.len)?;
        let (pc, dst, from, bytes) = (self.pc(), self.ptr, src.ptr, src.bytes());
        if bytes == 0 {
            return Ok(());
        }
        self.settle()?;
        src.settle()?;
        // SAFETY: both ranges are live and at least `bytes` long.
        self.context().run(|| unsafe { pc.cuMemcpyDtoD(dst, from, bytes) })
    }

    /// A copy of `src` to the start of the view ordered on `stream`: `cuMemcpyDtoDAsync`,
    /// or for a `peer` copy `cuMemcpyPeerAsync` naming each memory's context (which may be
    /// another device's). Refused if it does not fit; no call for no bytes; both uses
    /// recorded.
    fn device_async(
        self,
        what: &'static str,
        src: DeviceView<'_, T>,
        stream: &Stream,
        peer: bool,
    ) -> Result<(), Error> {
        check_fits(what, src.len, self.len)?;
        let (pc, dst, from, bytes, s) = (self.pc(), self.ptr, src.ptr, src.bytes(), stream.as_raw());
        if bytes == 0 {
            return Ok(());
        }
        self.used_on(stream)?;
        src.used_on(stream)?;
        let (dst_ctx, src_ctx) = (self.context().as_raw(), src.context().as_raw());
        // SAFETY: both ranges are live and at least `bytes` long in their contexts, which
        // their parents hold; the stream is live.
        Ok(stream.run(|| unsafe {
            match peer {
                true => pc.cuMemcpyPeerAsync(dst, dst_ctx, from, src_ctx, bytes, s),
                false => pc.cuMemcpyDtoDAsync(dst, from, bytes, s),
            }
        })?)
    }

    pub(crate) fn write_from_pinned_async(
        self,
        what: &'static str,
        src: &PinnedBuffer<T>,
        stream: &Stream,
    ) -> Result<(), Error> {
        let host = src.as_ptr().cast_mut().cast();
        self.pinned_async(what, src, host, true, stream)
    }

    pub(crate) fn read_to_pinned_async(
        self,
        what: &'static str,
        dst: &mut PinnedBuffer<T>,
        stream: &Stream,
    ) -> Result<(), Error> {
        let host = dst.as_mut_ptr().cast();
        self.pinned_async(what, dst, host, false, stream)
    }

    /// A copy between the view and the pinned buffer at `host` (from it `to_device`, else
    /// into it, which the caller holds by `&mut`), ordered on `stream`.
    fn pinned_async(
        self,
        what: &'static str,
        pinned: &PinnedBuffer<T>,
        host: *mut std::ffi::c_void,
        to_device: bool,
        stream: &Stream,
    ) -> Result<(), Error> {
        // SAFETY: the pinned buffer stays allocated, unwritten (and, copied into, unread)
        // until the copy is done: the copy is one of its uses, which it waits for before any
        // access or its free.
        unsafe { self.host_async(what, host, pinned.len(), to_device, Some(pinned), stream) }
    }

    /// A copy between the view and `len` values of host memory at `host` (into the view
    /// `to_device`, else out of it), ordered on `stream`: refused if it does not fit, no
    /// call for no bytes, the view's use recorded; for a `pinned` buffer, also one of its
    /// uses.
    ///
    /// # Safety
    /// `host` holds `len` values and stays allocated, unwritten and (copied into) unread
    /// until the copy is done.
    unsafe fn host_async(
        self,
        what: &'static str,
        host: *mut std::ffi::c_void,
        len: usize,
        to_device: bool,
        pinned: Option<&PinnedBuffer<T>>,
        stream: &Stream,
    ) -> Result<(), Error> {
        check_fits(what, len, self.len)?;
        let (pc, ptr, bytes, s) = (self.pc(), self.ptr, len.saturating_mul(size_of::<T>()), stream.as_raw());
        if bytes == 0 {
            return Ok(());
        }
        self.used_on(stream)?;
        // SAFETY: the view's range is live and holds `bytes` (checked to fit); the caller
        // keeps `host`'s `bytes` as the copy needs them until it is done.
        let copy = || unsafe {
            match to_device {
                true => pc.cuMemcpyHtoDAsync(ptr, host, bytes, s),
                false => pc.cuMemcpyDtoHAsync(host, ptr, bytes, s),
            }
        };
        Ok(match pinned {
            Some(pinned) => pinned.use_on(stream, copy),
            None => stream.run(copy),
        }?)
    }

    /// # Safety
    /// `src` must stay allocated and unwritten until the copy is done.
    pub(crate) unsafe fn write_from_host_async(
        self,
        what: &'static str,
        src: &[T],
        stream: &Stream,
    ) -> Result<(), Error> {
        // SAFETY: the caller keeps `src` alive and unwritten until the copy is done.
        unsafe { self.host_async(what, src.as_ptr().cast_mut().cast(), src.len(), true, None, stream) }
    }

    /// # Safety
    /// `dst` must stay allocated, and be neither read nor written, until the copy is done.
    pub(crate) unsafe fn read_to_host_async(
        self,
        what: &'static str,
        dst: &mut [T],
        stream: &Stream,
    ) -> Result<(), Error> {
        // SAFETY: the caller keeps `dst` alive and untouched until the copy is done.
        unsafe { self.host_async(what, dst.as_mut_ptr().cast(), dst.len(), false, None, stream) }
    }

    pub(crate) fn fill(self, what: &'static str, value: T) -> Result<(), Error> {
        let fill = Fill::of(what, value)?;
        let (pc, ptr, n) = (self.pc(), self.ptr, self.len);
        if n == 0 {
            return Ok(());
        }
        self.settle()?;
        // SAFETY: the range is live and `n` values long, each of the width `Fill::of` chose
        // (the size of T) and the memset of that width writes.
        self.context().run(|| unsafe {
            match fill {
                Fill::D8(v) => pc.cuMemsetD8(ptr, v, n),
                Fill::D16(v) => pc.cuMemsetD16(ptr, v, n),
                Fill::D32(v) => pc.cuMemsetD32(ptr, v, n),
            }
        })
    }

    pub(crate) fn fill_async(self, what: &'static str, value: T, stream: &Stream) -> Result<(), Error> {
        let fill = Fill::of(what, value)?;
        let (pc, ptr, n, s) = (self.pc(), self.ptr, self.len, stream.as_raw());
        if n == 0 {
            return Ok(());
        }
        self.used_on(stream)?;
        // SAFETY: the range is live and `n` values long, each of the width `Fill::of` chose
        // (the size of T) and the memset of that width writes; the stream is live.
        Ok(stream.run(|| unsafe {
            match fill {
                Fill::D8(v) => pc.cuMemsetD8Async(ptr, v, n, s),
                Fill::D16(v) => pc.cuMemsetD16Async(ptr, v, n, s),
                Fill::D32(v) => pc.cuMemsetD32Async(ptr, v, n, s),
            }
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
        if !matches!(bytes, 1 | 2 | 4) {
            return Err(InvalidArgument::new(what, format!("a fill value must be 1, 2 or 4 bytes, not {bytes}")));
        }
        let mut raw = [0u8; 4];
        // SAFETY: `value` is `bytes` (at most 4) readable bytes of plain data (DeviceRepr),
        // which `raw` has room for.
        unsafe { std::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), raw.as_mut_ptr(), bytes) };
        Ok(match bytes {
            1 => Fill::D8(raw[0]),
            2 => Fill::D16(u16::from_ne_bytes([raw[0], raw[1]])),
            _ => Fill::D32(u32::from_ne_bytes(raw)),
        })
    }
}

/// Device slices of a kind of memory that is its field `$field`'s (a [`DeviceBuffer`] of
/// `T`): `Sealed`, [`DeviceSlice`] (with the doc given) and [`DeviceSliceMut`], each the
/// field's, so a wrapper's views, copies and checks are the buffer's.
macro_rules! slices_through {
    ($(#[$doc:meta])* $ty:ident . $field:ident) => {
        impl<T> $crate::resources::view::sealed::Sealed for $ty<T> {}

        $(#[$doc])*
        impl<T: $crate::resources::memory::DeviceRepr> $crate::resources::view::DeviceSlice<T> for $ty<T> {
            fn as_view(&self) -> $crate::resources::view::DeviceView<'_, T> {
                self.$field.as_view()
            }
        }

        impl<T: $crate::resources::memory::DeviceRepr> $crate::resources::view::DeviceSliceMut<T> for $ty<T> {
            fn as_view_mut(&mut self) -> $crate::resources::view::DeviceViewMut<'_, T> {
                self.$field.as_view_mut()
            }
        }
    };
}
pub(crate) use slices_through;

/// The copies between host memory and a kind of device memory with `&self` methods
/// (inside its `impl`): `host_copies!(DeviceBuffer, "buffer", as_view)`, where `as_view`
/// is the method giving the whole memory as a [`DeviceView`].
/// Each is its whole view's, named `Type::method` in its errors, so the checks, the
/// tracking of uses and the documentation are written once.
macro_rules! host_copies {
    ($ty:ident, $what:literal, $view:ident) => {
        #[doc = concat!("Copies `src` to the start of the ", $what, " (`cuMemcpyHtoD`, synchronous). A source")]
        #[doc = concat!("longer than the ", $what, " is refused before any driver call; an empty one makes no")]
        /// driver call.
        pub fn copy_from_host(&self, src: &[T]) -> Result<(), $crate::Error> {
            self.$view().write_from_host(concat!(stringify!($ty), "::copy_from_host"), src)
        }

        #[doc = concat!("Copies the start of the ", $what, " into `dst` (`cuMemcpyDtoH`, synchronous). A")]
        #[doc = concat!("destination longer than the ", $what, " is refused before any driver call.")]
        pub fn copy_to_host(&self, dst: &mut [T]) -> Result<(), $crate::Error> {
            self.$view().read_to_host(concat!(stringify!($ty), "::copy_to_host"), dst)
        }

        #[doc = concat!("The whole ", $what, ", copied to a new vector (`cuMemcpyDtoH`, synchronous).")]
        ///
        /// A vector the host cannot allocate (larger than host memory) is an
        /// [`InvalidArgument`](crate::InvalidArgument) naming the size, returned before any
        /// driver call; the process is never aborted.
        pub fn to_vec(&self) -> Result<Vec<T>, $crate::Error> {
            self.$view().read_to_vec(concat!(stringify!($ty), "::to_vec"))
        }

        #[doc = concat!("Copies the pinned buffer `src` to the start of the ", $what, ", ordered on `stream`")]
        /// (`cuMemcpyHtoDAsync`). `src` waits for the copy before it can be written or freed.
        pub fn copy_from_pinned_async(
            &self,
            src: &$crate::PinnedBuffer<T>,
            stream: &$crate::Stream,
        ) -> Result<(), $crate::Error> {
            self.$view().write_from_pinned_async(concat!(stringify!($ty), "::copy_from_pinned_async"), src, stream)
        }

        #[doc = concat!("Copies the start of the ", $what, " into the pinned buffer `dst`, ordered on `stream`")]
        /// (`cuMemcpyDtoHAsync`). `dst` waits for the copy before it can be read or freed.
        pub fn copy_to_pinned_async(
            &self,
            dst: &mut $crate::PinnedBuffer<T>,
            stream: &$crate::Stream,
        ) -> Result<(), $crate::Error> {
            self.$view().read_to_pinned_async(concat!(stringify!($ty), "::copy_to_pinned_async"), dst, stream)
        }

        #[doc = concat!("Copies `src` to the start of the ", $what, " ordered on `stream` (`cuMemcpyHtoDAsync`).")]
        ///
        /// # Safety
        /// `src` must stay allocated and unwritten until the copy is done (synchronise the
        /// stream, or an event recorded after it).
        #[doc = concat!("[`", stringify!($ty), "::copy_from_pinned_async`] is the safe form.")]
        pub unsafe fn copy_from_host_async(&self, src: &[T], stream: &$crate::Stream) -> Result<(), $crate::Error> {
            // SAFETY: the caller keeps `src` alive and unwritten until the copy is done.
            unsafe {
                self.$view().write_from_host_async(concat!(stringify!($ty), "::copy_from_host_async"), src, stream)
            }
        }

        #[doc = concat!("Copies the start of the ", $what, " into `dst` ordered on `stream` (`cuMemcpyDtoHAsync`).")]
        ///
        /// # Safety
        /// `dst` must stay allocated, and be neither read nor written, until the copy is done.
        #[doc = concat!("[`", stringify!($ty), "::copy_to_pinned_async`] is the safe form.")]
        pub unsafe fn copy_to_host_async(&self, dst: &mut [T], stream: &$crate::Stream) -> Result<(), $crate::Error> {
            // SAFETY: the caller keeps `dst` alive and untouched until the copy is done.
            unsafe { self.$view().read_to_host_async(concat!(stringify!($ty), "::copy_to_host_async"), dst, stream) }
        }
    };
}
pub(crate) use host_copies;

/// The copies and fills of [`DeviceBuffer`] (`&self`, as before the traits): each is the
/// trait's, named after the buffer in its errors.
impl<T: DeviceRepr> DeviceBuffer<T> {
    host_copies!(DeviceBuffer, "buffer", as_view);

    /// Allocates `len` values in `context` with every byte 0 (`cuMemAlloc`, then
    /// `cuMemsetD8`, synchronous). On error nothing is allocated (a failed memset frees the
    /// allocation again). No bytes make no driver call.
    pub fn zeroed(context: &Context, len: usize) -> Result<DeviceBuffer<T>, Error> {
        let buffer = DeviceBuffer::alloc(context, len)?;
        buffer.as_view().cast::<u8>()?.fill("DeviceBuffer::zeroed", 0)?;
        Ok(buffer)
    }

    /// Copies `src` (any device memory of `T`: a buffer, a view, an imported buffer) to
    /// the start of the buffer (`cuMemcpyDtoD`, synchronous with respect to the host). A
    /// longer source is refused before any driver call.
    pub fn copy_from_device<S: DeviceSlice<T> + ?Sized>(&self, src: &S) -> Result<(), Error> {
        self.as_view().write_from_device("DeviceBuffer::copy_from_device", src.as_view())
    }

    /// Copies `src` to the start of the buffer ordered on `stream` (`cuMemcpyDtoDAsync`).
    pub fn copy_from_device_async<S: DeviceSlice<T> + ?Sized>(&self, src: &S, stream: &Stream) -> Result<(), Error> {
        self.as_view().device_async("DeviceBuffer::copy_from_device_async", src.as_view(), stream, false)
    }

    /// Sets every value to `value` (`cuMemsetD8`/`D16`/`D32`, synchronous). `T` must be
    /// 1, 2 or 4 bytes; other sizes are refused before any driver call (whatever the
    /// length); an empty buffer makes no driver call.
    pub fn fill(&self, value: T) -> Result<(), Error> {
        self.as_view().fill("DeviceBuffer::fill", value)
    }

    /// Sets every value to `value`, ordered on `stream` (`cuMemsetD8Async`/`D16`/`D32`).
    pub fn fill_async(&self, value: T, stream: &Stream) -> Result<(), Error> {
        self.as_view().fill_async("DeviceBuffer::fill_async", value, stream)
    }

    /// Copies `src`, which may belong to another context or device, to the start of this
    /// buffer, ordered on `stream` (`cuMemcpyPeerAsync` with both memories' contexts).
    /// Works with or without peer access (without it the driver stages the copy). Order
    /// `src`'s producer before it with an event ([`Stream::wait_event`]). A source longer
    /// than this buffer is refused before any driver call.
    pub fn copy_from_peer_async<S: DeviceSlice<T> + ?Sized>(&self, src: &S, stream: &Stream) -> Result<(), Error> {
        self.as_view().device_async("DeviceBuffer::copy_from_peer_async", src.as_view(), stream, true)
    }
}

/// The same bytes read as values of `U`: the length in bytes must be a whole number of
/// `U`s and the address aligned for `U` ([`InvalidArgument`] naming which, otherwise).
fn cast_len<T, U>(what: &'static str, ptr: CUdeviceptr, len: usize) -> Result<usize, InvalidArgument> {
    let (from, to) = (size_of::<T>(), size_of::<U>());
    let bytes = len.saturating_mul(from);
    if to == 0 {
        return Err(InvalidArgument::new(what, "a type of no bytes"));
    }
    if bytes % to != 0 {
        return Err(InvalidArgument::new(what, format!("{bytes} bytes are not a whole number of {to}-byte values")));
    }
    if ptr % std::mem::align_of::<U>() as u64 != 0 {
        let align = std::mem::align_of::<U>();
        return Err(InvalidArgument::new(what, format!("address {ptr:#x} is not aligned to {align} bytes")));
    }
    Ok(bytes / to)
}

impl<'a, T: DeviceRepr> DeviceView<'a, T> {
    /// The same memory as values of `U` (plain data, so any bytes are a valid `U`): a
    /// [`Mapping`](crate::Mapping)'s bytes as `f32`s with `mapping.as_view().cast::<f32>()`.
    /// The length in bytes must be a whole number of `U`s and the address aligned for
    /// `U`; otherwise an [`InvalidArgument`] naming which, and nothing changes.
    ///
    /// ```
    /// # cudrv_standin::install().unwrap();
    /// use cudrv::prelude::*;
    /// let ctx = cudrv::init()?.device(0)?.primary_context()?;
    /// let bytes = cudrv::DeviceBuffer::from_slice(&ctx, &1.5f32.to_ne_bytes())?;
    /// assert_eq!(bytes.as_view().cast::<f32>()?.to_vec()?, [1.5]);
    /// assert!(bytes.slice(1..)?.cast::<f32>().is_err()); // 3 bytes
    /// # Ok::<(), cudrv::Error>(())
    /// ```
    pub fn cast<U: DeviceRepr>(self) -> Result<DeviceView<'a, U>, InvalidArgument> {
        let len = cast_len::<T, U>("DeviceView::cast", self.ptr, self.len)?;
        Ok(DeviceView { ptr: self.ptr, len, mem: self.mem, _values: PhantomData })
    }
}

impl<'a, T: DeviceRepr> DeviceViewMut<'a, T> {
    /// The same memory as values of `U`, writable ([`DeviceView::cast`]).
    pub fn cast<U: DeviceRepr>(self) -> Result<DeviceViewMut<'a, U>, InvalidArgument> {
        let view = self.view.cast::<U>()?;
        Ok(DeviceViewMut { view, _mut: PhantomData })
    }
}

/// `KernelArg` for a kind of device memory of `T`: the parameter is its device address
/// (`raw_ref`), a use of its allocation (`allocation`), of its context (`context`).
macro_rules! device_memory_arg {
    ($($ty:ty),+ $(,)?) => {$(
        // SAFETY: the parameter is the memory's device address, kept at a stable place
        // (in the buffer, or in the view while it is borrowed) for as long as `self`.
        unsafe impl<T> KernelArg for $ty {
            fn param(&self) -> *mut std::ffi::c_void {
                (self.raw_ref() as *const u64).cast_mut().cast()
            }

            fn memory_use(&self) -> Option<ArgUse<'_>> {
                Some(ArgUse(self.allocation()))
            }

            fn param_size(&self) -> usize {
                std::mem::size_of::<u64>()
            }

            fn param_context(&self) -> Option<&Context> {
                Some(self.context())
            }
        }
    )+};
}

device_memory_arg!(DeviceBuffer<T>, DeviceView<'_, T>, DeviceViewMut<'_, T>);
