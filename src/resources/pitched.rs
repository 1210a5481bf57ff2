//! Pitched device memory (`cuMemAllocPitch`): a 2D allocation of `height` rows of `width`
//! values of `T`, each row starting `pitch` bytes after the one before, the pitch chosen by
//! the driver so rows are aligned for 2D copies and texture reads. Its rows are views
//! ([`DeviceView`]), its copies are 2D copies (`copy3d.rs`).
//!
//! The allocation is a device allocation like [`crate::DeviceBuffer`]'s (the same shared
//! core, `memory.rs`): it keeps its context alive, remembers the streams other than the
//! legacy stream it was used on, and its `cuMemFree` waits for them. A pitched buffer of no
//! bytes (a width or a height of 0) makes no driver call: it has the null address and a
//! pitch of 0.

use std::marker::PhantomData;

use crate::error::{Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::{Handle, Ownership};
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::memory::{DeviceMemory, DeviceRepr, MemoryOwner};
use crate::resources::view::{DeviceView, DeviceViewMut};
use crate::sys::CUdeviceptr;

/// A pitched 2D allocation of `height` rows of `width` values of `T` (`cuMemAllocPitch`),
/// row `y` starting at `as_raw() + y * pitch()`. Clones share it; the last one frees it
/// (`cuMemFree`, after the work queued on the streams it was used on). Its memory between
/// the end of a row and the start of the next is never read or written by cudrv.
pub struct PitchedBuffer<T = u8> {
    mem: Handle<DeviceMemory>,
    width: usize,
    height: usize,
    pitch: usize,
    _values: PhantomData<T>,
}

impl<T> Clone for PitchedBuffer<T> {
    fn clone(&self) -> PitchedBuffer<T> {
        PitchedBuffer {
            mem: self.mem.clone(),
            width: self.width,
            height: self.height,
            pitch: self.pitch,
            _values: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for PitchedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PitchedBuffer({:#x}, {} x {} values, pitch {} bytes)",
            self.as_raw(),
            self.width,
            self.height,
            self.pitch
        )
    }
}

impl<T: DeviceRepr> PitchedBuffer<T> {
    /// Allocates `height` rows of `width` values in `context` (`cuMemAllocPitch`, with the
    /// element size the driver's rule allows: `T`'s size rounded up to 4, 8 or 16 bytes),
    /// uninitialised. The driver chooses the pitch ([`PitchedBuffer::pitch`]). On error
    /// nothing is allocated. A width or a height of 0 makes no driver call (null address,
    /// pitch 0).
    pub fn alloc(context: &Context, width: usize, height: usize) -> Result<PitchedBuffer<T>, Error> {
        let what = "PitchedBuffer::alloc";
        let row = width.checked_mul(size_of::<T>()).ok_or_else(|| {
            InvalidArgument::new(what, format!("width: {width} values of {} bytes overflow usize", size_of::<T>()))
        })?;
        let owner = MemoryOwner::freed_with_mem_free(context);
        if row == 0 || height == 0 {
            let mem = Handle::new(owner, 0, Ownership::Borrowed);
            return Ok(PitchedBuffer { mem, width, height, pitch: 0, _values: PhantomData });
        }
        let element = match size_of::<T>() {
            0..=4 => 4,
            5..=8 => 8,
            _ => 16,
        };
        let t = context.driver().typed();
        let mut pitch = 0usize;
        let create = || {
            let (ptr, p) = t.cuMemAllocPitch(row, height, element)?;
            pitch = p;
            Ok(ptr)
        };
        let mem = Handle::create_in(owner, context.as_raw(), create)?;
        Ok(PitchedBuffer { mem, width, height, pitch, _values: PhantomData })
    }

    pub(crate) fn check_whole(&self, what: &'static str, len: usize) -> Result<(), InvalidArgument> {
        if self.width.checked_mul(self.height) != Some(len) {
            let why = format!("{len} values for {} rows of {} values", self.height, self.width);
            return Err(InvalidArgument::new(what, why));
        }
        Ok(())
    }
}

impl<T> PitchedBuffer<T> {
    /// The device address of row 0; 0 (null) for a buffer of no bytes.
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.mem.raw()
    }

    /// The number of values in a row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The bytes from the start of one row to the start of the next, as the driver chose
    /// them (at least `width * size_of::<T>()`); 0 for a buffer of no bytes.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        self.mem.owner().context()
    }

    /// The allocation's shared state (for copies and texture objects).
    pub(crate) fn allocation(&self) -> &Handle<DeviceMemory> {
        &self.mem
    }

    /// The address of row `y`, or an error naming `what` past the last row.
    fn row_address(&self, what: &'static str, y: usize) -> Result<CUdeviceptr, InvalidArgument> {
        if y >= self.height {
            return Err(InvalidArgument::new(what, format!("row {y} is past the last of {} rows", self.height)));
        }
        // y < height, and height rows of `pitch` bytes were allocated: no overflow.
        Ok(self.as_raw().saturating_add((y as u64).saturating_mul(self.pitch as u64)))
    }

    /// Row `y`, `width` values, as a view (no driver call). A row past the last is an
    /// [`InvalidArgument`].
    pub fn row(&self, y: usize) -> Result<DeviceView<'_, T>, InvalidArgument> {
        let ptr = self.row_address("PitchedBuffer::row", y)?;
        Ok(DeviceView::within(&self.mem, ptr, self.width))
    }

    /// Row `y` as a writable view (no driver call). A row past the last is an
    /// [`InvalidArgument`].
    pub fn row_mut(&mut self, y: usize) -> Result<DeviceViewMut<'_, T>, InvalidArgument> {
        let ptr = self.row_address("PitchedBuffer::row_mut", y)?;
        Ok(DeviceView::within(&self.mem, ptr, self.width).into_mut())
    }
}

// SAFETY: the parameter is the address of row 0 (8 bytes), kept in the allocation's core
// for the life of the buffer.
unsafe impl<T> KernelArg for PitchedBuffer<T> {
    fn param(&self) -> *mut std::ffi::c_void {
        (self.mem.raw_ref() as *const u64).cast_mut().cast()
    }

    fn memory_use(&self) -> Option<ArgUse<'_>> {
        Some(ArgUse(&self.mem))
    }

    fn param_size(&self) -> usize {
        size_of::<CUdeviceptr>()
    }

    fn param_context(&self) -> Option<&Context> {
        Some(self.context())
    }
}
