//! CUDA arrays: opaque, driver-laid-out memory for textures and surfaces, of one, two or
//! three dimensions (`cuArrayCreate`, `cuArray3DCreate`), each element `channels` values of
//! one [`ArrayFormat`]; their descriptors read back (`cuArray3DGetDescriptor`); copies to
//! and from host and device memory (2D/3D copies, `copy3d.rs`); destroyed through the one
//! handle core (`cuArrayDestroy`).
//!
//! Uses across streams: an array remembers the streams its asynchronous copies were queued
//! on; its synchronous copies wait for them first (`cuStreamSynchronize` each), and its
//! destroy waits for them and for its context's work (`cuCtxSynchronize`: kernels read and
//! write arrays through texture and surface objects, launches cudrv does not see), so an
//! array is never destroyed under work that uses it.

use std::sync::Mutex;

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::flags::ArrayFlags;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::stream::Stream;
use crate::sys::{CUarray, CUarray_format, CUcontext, CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR};
use crate::table::Call;

/// The type of each channel of an array element (`CUarray_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayFormat {
    /// `u8` (`CU_AD_FORMAT_UNSIGNED_INT8`).
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// A 16-bit float (`CU_AD_FORMAT_HALF`).
    F16,
    /// `f32` (`CU_AD_FORMAT_FLOAT`).
    F32,
}

impl ArrayFormat {
    /// The bytes of one channel.
    pub const fn bytes(self) -> usize {
        match self {
            ArrayFormat::U8 | ArrayFormat::I8 => 1,
            ArrayFormat::U16 | ArrayFormat::I16 | ArrayFormat::F16 => 2,
            ArrayFormat::U32 | ArrayFormat::I32 | ArrayFormat::F32 => 4,
        }
    }

    /// The driver's value.
    pub const fn to_raw(self) -> CUarray_format {
        match self {
            ArrayFormat::U8 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
            ArrayFormat::U16 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16,
            ArrayFormat::U32 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32,
            ArrayFormat::I8 => CUarray_format::CU_AD_FORMAT_SIGNED_INT8,
            ArrayFormat::I16 => CUarray_format::CU_AD_FORMAT_SIGNED_INT16,
            ArrayFormat::I32 => CUarray_format::CU_AD_FORMAT_SIGNED_INT32,
            ArrayFormat::F16 => CUarray_format::CU_AD_FORMAT_HALF,
            ArrayFormat::F32 => CUarray_format::CU_AD_FORMAT_FLOAT,
        }
    }

    /// The format the driver's value names; `None` for one cudrv does not name.
    pub fn from_raw(raw: CUarray_format) -> Option<ArrayFormat> {
        [
            ArrayFormat::U8,
            ArrayFormat::U16,
            ArrayFormat::U32,
            ArrayFormat::I8,
            ArrayFormat::I16,
            ArrayFormat::I32,
            ArrayFormat::F16,
            ArrayFormat::F32,
        ]
        .into_iter()
        .find(|f| f.to_raw() == raw)
    }
}

/// The shape and element of an array: `width` elements (a 1D array: `height` and `depth`
/// 0), `height` rows (2D: `depth` 0), `depth` slices or layers; each element `channels`
/// (1, 2 or 4) values of `format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayDescriptor {
    /// Elements in a row.
    pub width: usize,
    /// Rows (0 for a 1D array).
    pub height: usize,
    /// Slices, or layers of a layered array (0 for a 1D or 2D array).
    pub depth: usize,
    /// The type of each channel.
    pub format: ArrayFormat,
    /// Channels per element: 1, 2 or 4.
    pub channels: u32,
    /// `cuArray3DCreate`'s flags.
    pub flags: ArrayFlags,
}

impl ArrayDescriptor {
    /// A 1D array of `width` elements.
    pub fn d1(width: usize, format: ArrayFormat, channels: u32) -> ArrayDescriptor {
        ArrayDescriptor { width, height: 0, depth: 0, format, channels, flags: ArrayFlags::NONE }
    }

    /// A 2D array of `height` rows of `width` elements.
    pub fn d2(width: usize, height: usize, format: ArrayFormat, channels: u32) -> ArrayDescriptor {
        ArrayDescriptor { width, height, depth: 0, format, channels, flags: ArrayFlags::NONE }
    }

    /// A 3D array of `depth` slices of `height` rows of `width` elements.
    pub fn d3(width: usize, height: usize, depth: usize, format: ArrayFormat, channels: u32) -> ArrayDescriptor {
        ArrayDescriptor { width, height, depth, format, channels, flags: ArrayFlags::NONE }
    }

    /// The same, with `flags`.
    pub fn flags(self, flags: impl Into<ArrayFlags>) -> ArrayDescriptor {
        ArrayDescriptor { flags: flags.into(), ..self }
    }

    /// [`ArrayDescriptor::flags`].
    #[deprecated(since = "0.2.0", note = "use `ArrayDescriptor::flags` (a setter is named after what it sets)")]
    pub fn with_flags(self, flags: impl Into<ArrayFlags>) -> ArrayDescriptor {
        self.flags(flags)
    }

    /// The bytes of one element (`channels` values of `format`).
    pub fn element_bytes(&self) -> usize {
        self.format.bytes().saturating_mul(self.channels as usize)
    }

    /// The extent in elements, rows and slices that copies address: a height or depth of
    /// 0 counts as 1.
    pub fn extent(&self) -> (usize, usize, usize) {
        (self.width, self.height.max(1), self.depth.max(1))
    }

    /// Checks what cudrv can check before the driver is called.
    fn check(&self, what: &'static str) -> Result<(), InvalidArgument> {
        let bad = |why: String| Err(InvalidArgument::new(what, why));
        if self.width == 0 {
            return bad("width: an array needs at least one element in a row".into());
        }
        if !matches!(self.channels, 1 | 2 | 4) {
            return bad(format!("channels: {} (an element has 1, 2 or 4 channels)", self.channels));
        }
        if self.depth > 0 && self.height == 0 && !self.flags.contains(ArrayFlags::LAYERED) {
            return bad("height: a 3D array needs at least one row (a height of 0 with a depth)".into());
        }
        if self.flags.contains(ArrayFlags::LAYERED) && self.depth == 0 {
            return bad("depth: a layered array needs at least one layer".into());
        }
        if self.flags.contains(ArrayFlags::CUBEMAP) {
            let layered = self.flags.contains(ArrayFlags::LAYERED);
            let faces_ok = if layered { self.depth % 6 == 0 && self.depth > 0 } else { self.depth == 6 };
            if self.width != self.height || !faces_ok {
                let why = format!(
                    "a cubemap needs square faces and a depth of 6 (a multiple of 6 when layered), not {} x {} x {}",
                    self.width, self.height, self.depth
                );
                return bad(why);
            }
        }
        Ok(())
    }

    fn to_raw_3d(self) -> CUDA_ARRAY3D_DESCRIPTOR {
        CUDA_ARRAY3D_DESCRIPTOR {
            Width: self.width,
            Height: self.height,
            Depth: self.depth,
            Format: self.format.to_raw(),
            NumChannels: self.channels,
            Flags: self.flags.bits(),
        }
    }
}

/// What an array keeps alive and the streams it was used on.
pub(crate) struct ArrayOwner {
    context: Context,
    desc: ArrayDescriptor,
    /// The streams its asynchronous copies were queued on, each once.
    uses: Mutex<Vec<Stream>>,
}

impl ArrayOwner {
    fn uses(&self) -> Vec<Stream> {
        self.uses.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

kind!(
    /// The kind of a CUDA array.
    ArrayKind: CUarray = "Array", owner ArrayOwner, driver |o| o.context.driver(), release {
        fn release_call(_: &ArrayOwner, _: Ownership) -> Call {
            call::cuArrayDestroy
        }
        fn release_context(owner: &ArrayOwner) -> Option<CUcontext> {
            Some(owner.context.as_raw())
        }
        unsafe fn release(owner: &ArrayOwner, raw: CUarray, _: Ownership) -> Result<(), CudaError> {
            let pc = owner.context.driver().pc();
            // Its copies' streams (perhaps of other contexts), then every kernel of its context
            // (texture and surface reads and writes): if either wait fails, the array is leaked
            // (reported), never destroyed under them.
            for s in owner.uses() {
                if !s.is_capturing_raw()? {
                    s.synchronize_raw()?;
                }
            }
            pc.0.typed().cuCtxSynchronize()?;
            // SAFETY: released once, from the last clone, after its uses.
            unsafe { pc.cuArrayDestroy(raw) }
        }
    }
);

/// A CUDA array (`cuArrayCreate`/`cuArray3DCreate`). Clones share it; the last one
/// destroys it (`cuArrayDestroy`) after the work that may use it: its copies' streams and
/// its context's kernels (one `cuCtxSynchronize`). Texture and surface objects over it keep
/// it alive. Its elements are laid out by the driver: they are reached only through 2D/3D
/// copies ([`Copy2D`](crate::Copy2D), [`Copy3D`](crate::Copy3D)) and, in kernels, texture and surface
/// objects.
#[derive(Clone)]
pub struct Array(pub(crate) Handle<ArrayKind>);
handle_type!(Array: ArrayKind => CUarray);

impl Array {
    /// Creates an array in `context` shaped as `desc`: `cuArrayCreate` for a 1D or 2D array
    /// without flags, `cuArray3DCreate` otherwise. A width of 0, a channel count other than
    /// 1, 2 or 4, a 3D array of no rows, a layered array of no layers and a cubemap that
    /// is not 6 square faces are refused before any driver call ([`InvalidArgument`]
    /// naming the field). On error nothing is created.
    pub fn new(context: &Context, desc: ArrayDescriptor) -> Result<Array, Error> {
        desc.check("Array::new")?;
        let t = context.driver().typed();
        let owner = ArrayOwner { context: context.clone(), desc, uses: Mutex::new(Vec::new()) };
        let handle = Handle::create_in(owner, context.as_raw(), || {
            if desc.depth == 0 && desc.flags == ArrayFlags::NONE {
                let d = CUDA_ARRAY_DESCRIPTOR {
                    Width: desc.width,
                    Height: desc.height,
                    Format: desc.format.to_raw(),
                    NumChannels: desc.channels,
                };
                t.cuArrayCreate(&d)
            } else {
                let d = desc.to_raw_3d();
                t.cuArray3DCreate(&d)
            }
        })?;
        Ok(Array(handle))
    }

    /// The descriptor it was created with (no driver call).
    pub fn desc(&self) -> &ArrayDescriptor {
        &self.0.owner().desc
    }

    /// The descriptor as the driver reports it (`cuArray3DGetDescriptor`). A format cudrv
    /// does not name is returned as an [`InvalidArgument`] naming it.
    pub fn descriptor(&self) -> Result<ArrayDescriptor, Error> {
        let d = self.context().run(|| self.0.driver().typed().cuArray3DGetDescriptor(self.live()))?;
        let format = ArrayFormat::from_raw(d.Format).ok_or_else(|| {
            InvalidArgument::new("Array::descriptor", format!("the driver reports format {}", d.Format.0))
        })?;
        Ok(ArrayDescriptor {
            width: d.Width,
            height: d.Height,
            depth: d.Depth,
            format,
            channels: d.NumChannels,
            flags: ArrayFlags::from_bits_retain(d.Flags),
        })
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.0.owner().context
    }

    /// Checks that `T` is one element and `len` (if given) is every element; returns the
    /// number of elements.
    pub(crate) fn check_whole<T>(
        &self,
        what: &'static str,
        len: impl Into<Option<usize>>,
    ) -> Result<usize, InvalidArgument> {
        let desc = self.desc();
        if desc.element_bytes() != size_of::<T>() {
            let why = format!("an element is {} bytes, a value of T {}", desc.element_bytes(), size_of::<T>());
            return Err(InvalidArgument::new(what, why));
        }
        let (w, h, d) = desc.extent();
        let n = w.checked_mul(h).and_then(|n| n.checked_mul(d)).ok_or_else(|| InvalidArgument::new(what, "size"))?;
        match len.into() {
            Some(len) if len != n => Err(InvalidArgument::new(what, format!("{len} values for {n} elements"))),
            _ => Ok(n),
        }
    }

    /// Records an asynchronous use on `stream` (before the work is queued there).
    pub(crate) fn used_on(&self, stream: &Stream) {
        let mut uses = self.0.owner().uses.lock().unwrap_or_else(|p| p.into_inner());
        let same = |s: &Stream| s.as_raw() == stream.as_raw() && s.context().as_raw() == stream.context().as_raw();
        if !uses.iter().any(same) {
            uses.push(stream.clone());
        }
    }

    /// Waits for the streams of its asynchronous copies, before a synchronous copy.
    pub(crate) fn settle(&self) -> Result<(), CudaError> {
        self.0.owner().uses().iter().try_for_each(Stream::synchronize_raw)
    }
}
