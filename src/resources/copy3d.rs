//! 2D and 3D copies (`CUDA_MEMCPY2D`, `CUDA_MEMCPY3D`) as typed builders: [`Copy2D`] and
//! [`Copy3D`]. Each end is a host slice, device memory of `T` (a buffer or a view) with a
//! pitch, a [`PitchedBuffer`], or an [`Array`]; offsets, pitches and extents are in values
//! of `T` and rows, and are checked before any driver call ([`InvalidArgument`] naming the
//! end and the field). A copy that moves no bytes (a width, height or depth of 0) makes no
//! driver call.
//!
//! Ordering (docs/memory.md): a synchronous copy (`cuMemcpy2D`, `cuMemcpy2DUnaligned`,
//! `cuMemcpy3D`) first waits for the work queued on its ends' streams (device memory: as
//! every synchronous copy does, `memory.rs`; arrays: the streams of their asynchronous
//! copies); an asynchronous one (`cuMemcpy2DAsync`, `cuMemcpy3DAsync`) records its stream
//! as a use of each end first (so no end is freed or destroyed under it).

use std::marker::PhantomData;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::pc::Pc;
use crate::resources::array::Array;
use crate::resources::context::Context;
use crate::resources::handle::Handle;
use crate::resources::memory::{DeviceMemory, DeviceRepr};
use crate::resources::pitched::PitchedBuffer;
use crate::resources::stream::Stream;
use crate::resources::view::{DeviceSlice, DeviceSliceMut};
use crate::sys::{CUmemorytype, CUstream, CUDA_MEMCPY2D, CUDA_MEMCPY3D};

/// What one end of a copy is.
#[derive(Clone, Copy)]
enum Place<'a> {
    /// Host memory of `bytes` bytes.
    Host { ptr: *mut u8, bytes: usize },
    /// Device memory of `bytes` bytes at `ptr`, part of the allocation `mem`.
    Device { ptr: u64, bytes: usize, mem: &'a Handle<DeviceMemory> },
    /// An array.
    Array(&'a Array),
}

/// One end of a copy: where, its pitch in bytes, its rows per slice (3D: `None` for a 2D
/// copy), and the offset of the copied region (x in bytes, row, slice).
#[derive(Clone, Copy)]
struct End<'a> {
    place: Place<'a>,
    /// In values of `T` as given, in bytes once checked (and as a pitched buffer gives it).
    pitch: usize,
    /// Whether `pitch` is in bytes already.
    pitch_in_bytes: bool,
    rows: Option<usize>,
    x: usize,
    y: usize,
    z: usize,
}

/// What a checked copy needs: its ends and its extent in bytes, rows and slices.
struct Plan<'a> {
    src: End<'a>,
    dst: End<'a>,
    width: usize,
    height: usize,
    depth: usize,
}

/// The shape and ends of a copy, as both builders collect them.
struct Spec<'a, T> {
    src: Option<End<'a>>,
    dst: Option<End<'a>>,
    src_at: (usize, usize, usize),
    dst_at: (usize, usize, usize),
    width: usize,
    height: usize,
    depth: usize,
    _values: PhantomData<&'a mut [T]>,
}

/// `a * b`, or an error naming `field`.
fn mul(what: &'static str, field: String, a: usize, b: usize) -> Result<usize, InvalidArgument> {
    a.checked_mul(b).ok_or_else(|| InvalidArgument::new(what, format!("{field}: {a} x {b} overflows usize")))
}

impl<'a, T: DeviceRepr> Spec<'a, T> {
    fn new(width: usize, height: usize, depth: usize) -> Spec<'a, T> {
        Spec { src: None, dst: None, src_at: (0, 0, 0), dst_at: (0, 0, 0), width, height, depth, _values: PhantomData }
    }

    fn end(place: Place<'a>, pitch: usize, rows: Option<usize>) -> End<'a> {
        // The pitch is in values here; `check` turns it into bytes.
        End { place, pitch, pitch_in_bytes: false, rows, x: 0, y: 0, z: 0 }
    }

    /// A host source (only read through its pointer).
    fn host(src: &'a [T], pitch: usize, rows: Option<usize>) -> End<'a> {
        let place = Place::Host { ptr: src.as_ptr().cast_mut().cast(), bytes: size_of_val(src) };
        Spec::<T>::end(place, pitch, rows)
    }

    /// A host destination.
    fn host_mut(dst: &'a mut [T], pitch: usize, rows: Option<usize>) -> End<'a> {
        let place = Place::Host { ptr: dst.as_mut_ptr().cast(), bytes: size_of_val(dst) };
        Spec::<T>::end(place, pitch, rows)
    }

    fn device(ptr: u64, len: usize, mem: &'a Handle<DeviceMemory>, pitch: usize, rows: Option<usize>) -> End<'a> {
        let place = Place::Device { ptr, bytes: len.saturating_mul(size_of::<T>()), mem };
        Spec::<T>::end(place, pitch, rows)
    }

    fn pitched(p: &'a PitchedBuffer<T>, rows: bool) -> End<'a> {
        let bytes = p.pitch().saturating_mul(p.height());
        let place = Place::Device { ptr: p.as_raw(), bytes, mem: p.allocation() };
        // A pitched buffer's pitch is the driver's, in bytes.
        End { place, pitch: p.pitch(), pitch_in_bytes: true, rows: rows.then_some(p.height()), x: 0, y: 0, z: 0 }
    }

    /// Checks the copy and turns values into bytes; `Ok(None)`: no bytes move.
    fn check(&self, what: &'static str) -> Result<Option<Plan<'a>>, InvalidArgument> {
        let src = self.src.ok_or_else(|| InvalidArgument::new(what, "no source was given"))?;
        let dst = self.dst.ok_or_else(|| InvalidArgument::new(what, "no destination was given"))?;
        if matches!((src.place, dst.place), (Place::Host { .. }, Place::Host { .. })) {
            return Err(InvalidArgument::new(
                what,
                "both ends are host memory (one must be device memory or an array)",
            ));
        }
        let size = size_of::<T>();
        let width = mul(what, "width".into(), self.width, size)?;
        if width == 0 || self.height == 0 || self.depth == 0 {
            return Ok(None);
        }
        let src = self.end_bytes(what, "source", src, self.src_at, width)?;
        let dst = self.end_bytes(what, "destination", dst, self.dst_at, width)?;
        Ok(Some(Plan { src, dst, width, height: self.height, depth: self.depth }))
    }

    /// One end in bytes, checked: its region lies within its memory (or array).
    fn end_bytes(
        &self,
        what: &'static str,
        name: &str,
        end: End<'a>,
        (x, y, z): (usize, usize, usize),
        width: usize,
    ) -> Result<End<'a>, InvalidArgument> {
        let size = size_of::<T>();
        let bad = |why: String| Err(InvalidArgument::new(what, format!("{name} {why}")));
        let x_bytes = mul(what, format!("{name} x offset"), x, size)?;
        let last_x = x_bytes.checked_add(width).ok_or_else(|| InvalidArgument::new(what, "x offset overflows"))?;
        let last_y = y.checked_add(self.height).ok_or_else(|| InvalidArgument::new(what, "y offset overflows"))?;
        let last_z = z.checked_add(self.depth).ok_or_else(|| InvalidArgument::new(what, "z offset overflows"))?;
        match end.place {
            Place::Array(a) => {
                let desc = a.desc();
                if desc.element_bytes() != size {
                    return bad(format!("array: an element is {} bytes, a value of T {size}", desc.element_bytes()));
                }
                let (w, h, d) = desc.extent();
                if last_x > w.saturating_mul(size) {
                    return bad(format!("x offset + width: {} elements past the array's width of {w}", last_x / size));
                }
                if last_y > h {
                    return bad(format!("y offset + height: {last_y} rows past the array's height of {h}"));
                }
                if last_z > d {
                    return bad(format!("z offset + depth: {last_z} slices past the array's depth of {d}"));
                }
                Ok(End { x: x_bytes, y, z, pitch: 0, pitch_in_bytes: true, ..end })
            }
            Place::Host { bytes, .. } | Place::Device { bytes, .. } => {
                let pitch =
                    if end.pitch_in_bytes { end.pitch } else { mul(what, format!("{name} pitch"), end.pitch, size)? };
                if pitch < last_x {
                    return bad(format!("pitch: {pitch} bytes is less than x offset + width ({last_x} bytes)"));
                }
                let rows = end.rows.unwrap_or(last_y);
                if last_y > rows {
                    return bad(format!("height: {last_y} rows (y offset + height) past its {rows} rows per slice"));
                }
                // The byte after the last one copied: (last slice, last row) + last x.
                let reach = (last_z - 1)
                    .checked_mul(rows)
                    .and_then(|r| r.checked_add(last_y - 1))
                    .and_then(|r| r.checked_mul(pitch))
                    .and_then(|b| b.checked_add(last_x));
                match reach {
                    Some(reach) if reach <= bytes => {
                        Ok(End { x: x_bytes, y, z, pitch, pitch_in_bytes: true, rows: Some(rows), ..end })
                    }
                    _ => bad(format!("extent: the copy reaches past the end of its {bytes} bytes")),
                }
            }
        }
    }
}

impl<'a> Plan<'a> {
    /// The context to run the copy in: a device end's or an array's (the destination's
    /// first).
    fn context(&self) -> Option<&'a Context> {
        [self.dst.place, self.src.place].into_iter().find_map(|p| match p {
            Place::Device { mem, .. } => Some(mem.owner().context()),
            Place::Array(a) => Some(a.context()),
            Place::Host { .. } => None,
        })
    }

    /// Waits for the ends' queued work, before a synchronous copy.
    fn settle(&self) -> Result<(), Error> {
        for end in [self.src, self.dst] {
            match end.place {
                Place::Device { mem, .. } => mem.owner().settle()?,
                Place::Array(a) => a.settle()?,
                Place::Host { .. } => {}
            }
        }
        Ok(())
    }

    /// Records the copy's use of its ends on `stream`; refuses a host end unless
    /// `host_ok`.
    fn used_on(&self, what: &'static str, stream: &Stream, host_ok: bool) -> Result<(), Error> {
        for end in [self.src, self.dst] {
            match end.place {
                Place::Device { mem, .. } => mem.owner().used_on(stream)?,
                Place::Array(a) => a.used_on(stream),
                Place::Host { .. } if !host_ok => {
                    let why = "a host end: an asynchronous copy from or to host memory is `run_async_host` (unsafe)";
                    return Err(InvalidArgument::new(what, why).into());
                }
                Place::Host { .. } => {}
            }
        }
        Ok(())
    }

    /// Issues the checked copy: on `stream`, `queue` once each end has recorded the
    /// stream as a use (a host end refused unless `host_ok`); with no stream, `run` in
    /// the ends' context once their queued work is done. Shared by 2D and 3D copies.
    fn issue(
        &self,
        what: &'static str,
        stream: Option<(&Stream, bool)>,
        queue: impl FnOnce(Pc, CUstream) -> Result<(), CudaError>,
        run: impl FnOnce(Pc) -> Result<(), CudaError>,
    ) -> Result<(), Error> {
        match stream {
            Some((stream, host_ok)) => {
                self.used_on(what, stream, host_ok)?;
                let (pc, s) = (stream.context().driver().pc(), stream.as_raw());
                Ok(stream.context().run(|| queue(pc, s))?)
            }
            None => {
                self.settle()?;
                let context = self.context().ok_or_else(|| InvalidArgument::new(what, "no device end"))?;
                let pc = context.driver().pc();
                Ok(context.run(|| run(pc))?)
            }
        }
    }

    fn raw_2d(&self) -> CUDA_MEMCPY2D {
        let mut c = CUDA_MEMCPY2D::default();
        let (s, d) = (self.src, self.dst);
        c.srcXInBytes = s.x;
        c.srcY = s.y;
        c.srcPitch = s.pitch;
        match s.place {
            Place::Host { ptr, .. } => {
                (c.srcMemoryType, c.srcHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, ptr.cast_const().cast())
            }
            Place::Device { ptr, .. } => (c.srcMemoryType, c.srcDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, ptr),
            Place::Array(a) => (c.srcMemoryType, c.srcArray) = (CUmemorytype::CU_MEMORYTYPE_ARRAY, a.as_raw()),
        }
        c.dstXInBytes = d.x;
        c.dstY = d.y;
        c.dstPitch = d.pitch;
        match d.place {
            Place::Host { ptr, .. } => (c.dstMemoryType, c.dstHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, ptr.cast()),
            Place::Device { ptr, .. } => (c.dstMemoryType, c.dstDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, ptr),
            Place::Array(a) => (c.dstMemoryType, c.dstArray) = (CUmemorytype::CU_MEMORYTYPE_ARRAY, a.as_raw()),
        }
        c.WidthInBytes = self.width;
        c.Height = self.height;
        c
    }

    fn raw_3d(&self) -> CUDA_MEMCPY3D {
        let mut c = CUDA_MEMCPY3D::default();
        let (s, d) = (self.src, self.dst);
        (c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch) = (s.x, s.y, s.z, s.pitch);
        c.srcHeight = s.rows.unwrap_or(0);
        match s.place {
            Place::Host { ptr, .. } => {
                (c.srcMemoryType, c.srcHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, ptr.cast_const().cast())
            }
            Place::Device { ptr, .. } => (c.srcMemoryType, c.srcDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, ptr),
            Place::Array(a) => (c.srcMemoryType, c.srcArray) = (CUmemorytype::CU_MEMORYTYPE_ARRAY, a.as_raw()),
        }
        (c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch) = (d.x, d.y, d.z, d.pitch);
        c.dstHeight = d.rows.unwrap_or(0);
        match d.place {
            Place::Host { ptr, .. } => (c.dstMemoryType, c.dstHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, ptr.cast()),
            Place::Device { ptr, .. } => (c.dstMemoryType, c.dstDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, ptr),
            Place::Array(a) => (c.dstMemoryType, c.dstArray) = (CUmemorytype::CU_MEMORYTYPE_ARRAY, a.as_raw()),
        }
        (c.WidthInBytes, c.Height, c.Depth) = (self.width, self.height, self.depth);
        c
    }
}

/// How a checked copy is issued.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Issue {
    Sync,
    Unaligned,
    Async,
}

/// A 2D copy of `height` rows of `width` values of `T` (`CUDA_MEMCPY2D`), built end by
/// end and then run: `Copy2D::new(w, h).src_host(&values, w).dst_array(&array).run()?`.
/// Pitches are in values of `T` for host and device memory (a [`PitchedBuffer`] brings
/// its own); offsets ([`Copy2D::src_offset`], [`Copy2D::dst_offset`]) in values and rows.
/// Everything is checked before any driver call: both ends given, not both host memory,
/// each end's pitch at least its x offset plus the width, its region within its memory or
/// array, an array's element the size of `T` ([`InvalidArgument`] naming the end and the
/// field). The ends are borrowed until the copy is run (a destination mutably).
pub struct Copy2D<'a, T> {
    spec: Spec<'a, T>,
}

/// A 3D copy of `depth` slices of `height` rows of `width` values of `T`
/// (`CUDA_MEMCPY3D`), built as [`Copy2D`] is; host and device ends also give their rows
/// per slice (the distance between slices is `rows * pitch`). A pitched buffer is one
/// slice per `height()` rows.
pub struct Copy3D<'a, T> {
    spec: Spec<'a, T>,
}

impl<T> std::fmt::Debug for Copy2D<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Copy2D({} x {} values)", self.spec.width, self.spec.height)
    }
}

impl<T> std::fmt::Debug for Copy3D<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Copy3D({} x {} x {} values)", self.spec.width, self.spec.height, self.spec.depth)
    }
}

/// The setters [`Copy2D`] and [`Copy3D`] share: a pitched buffer (`$slices`: as one
/// slice per `height()` rows) or an array as an end, each with its own doc line.
macro_rules! pitched_and_array_ends {
    ($slices:expr, $src_pitched:literal, $dst_pitched:literal, $src_array:literal, $dst_array:literal) => {
        #[doc = $src_pitched]
        pub fn src_pitched(mut self, src: &'a PitchedBuffer<T>) -> Self {
            self.spec.src = Some(Spec::pitched(src, $slices));
            self
        }

        #[doc = $dst_pitched]
        pub fn dst_pitched(mut self, dst: &'a mut PitchedBuffer<T>) -> Self {
            self.spec.dst = Some(Spec::pitched(dst, $slices));
            self
        }

        #[doc = $src_array]
        pub fn src_array(mut self, src: &'a Array) -> Self {
            self.spec.src = Some(Spec::<T>::end(Place::Array(src), 0, None));
            self
        }

        #[doc = $dst_array]
        pub fn dst_array(mut self, dst: &'a Array) -> Self {
            self.spec.dst = Some(Spec::<T>::end(Place::Array(dst), 0, None));
            self
        }
    };
}

/// The names of 0.1's copy ends, kept for code written against them: a copy's ends are
/// `src_*` and `dst_*`, as its offsets are (`from_*` names conversions).
macro_rules! renamed_ends {
    ($($old:ident => $new:ident ($($arg:ident: $ty:ty),*);)*) => {$(
        #[doc = concat!("[`Self::", stringify!($new), "`], under its 0.1 name.")]
        #[deprecated(since = "0.2.0", note = "use the `src_*`/`dst_*` setter of the same end")]
        pub fn $old(self, $($arg: $ty),*) -> Self {
            self.$new($($arg),*)
        }
    )*};
}

impl<'a, T: DeviceRepr> Copy2D<'a, T> {
    /// A copy of `height` rows of `width` values, with no ends yet.
    pub fn new(width: usize, height: usize) -> Copy2D<'a, T> {
        Copy2D { spec: Spec::new(width, height, 1) }
    }

    /// From host memory: rows `pitch` values apart.
    pub fn src_host(mut self, src: &'a [T], pitch: usize) -> Self {
        self.spec.src = Some(Spec::host(src, pitch, None));
        self
    }

    /// To host memory: rows `pitch` values apart.
    pub fn dst_host(mut self, dst: &'a mut [T], pitch: usize) -> Self {
        self.spec.dst = Some(Spec::host_mut(dst, pitch, None));
        self
    }

    /// From device memory of `T` (a buffer, a view, ...): rows `pitch` values apart.
    pub fn src_device(mut self, src: &'a (impl DeviceSlice<T> + ?Sized), pitch: usize) -> Self {
        let v = src.as_view();
        self.spec.src = Some(Spec::<T>::device(v.as_raw(), v.len(), v.allocation(), pitch, None));
        self
    }

    /// To device memory of `T`: rows `pitch` values apart.
    pub fn dst_device(mut self, dst: &'a mut (impl DeviceSliceMut<T> + ?Sized), pitch: usize) -> Self {
        let v = dst.as_view_mut();
        self.spec.dst = Some(Spec::<T>::device(v.as_raw(), v.len(), v.allocation(), pitch, None));
        self
    }

    pitched_and_array_ends!(
        false,
        "From a pitched buffer (its own pitch).",
        "To a pitched buffer (its own pitch).",
        "From an array (its elements must be the size of `T`).",
        "To an array (its elements must be the size of `T`). Arrays are shared handles: as \
         with `&DeviceBuffer` copies, writes through two clones are ordered by their streams."
    );

    renamed_ends! {
        from_host => src_host(src: &'a [T], pitch: usize);
        to_host => dst_host(dst: &'a mut [T], pitch: usize);
        from_device => src_device(src: &'a (impl DeviceSlice<T> + ?Sized), pitch: usize);
        to_device => dst_device(dst: &'a mut (impl DeviceSliceMut<T> + ?Sized), pitch: usize);
        from_pitched => src_pitched(src: &'a PitchedBuffer<T>);
        to_pitched => dst_pitched(dst: &'a mut PitchedBuffer<T>);
        from_array => src_array(src: &'a Array);
        to_array => dst_array(dst: &'a Array);
    }

    /// Starts reading the source at value `x` of row `y`.
    pub fn src_offset(mut self, x: usize, y: usize) -> Self {
        self.spec.src_at = (x, y, 0);
        self
    }

    /// Starts writing the destination at value `x` of row `y`.
    pub fn dst_offset(mut self, x: usize, y: usize) -> Self {
        self.spec.dst_at = (x, y, 0);
        self
    }

    /// Runs the copy (`cuMemcpy2D`, synchronous), after the work queued on its ends'
    /// streams. On error no bytes were copied if the arguments were refused.
    pub fn run(self) -> Result<(), Error> {
        issue_2d("Copy2D::run", &self.spec, Issue::Sync, None)
    }

    /// Runs the copy with `cuMemcpy2DUnaligned` (synchronous; for pitches and offsets the
    /// aligned form refuses).
    pub fn run_unaligned(self) -> Result<(), Error> {
        issue_2d("Copy2D::run_unaligned", &self.spec, Issue::Unaligned, None)
    }

    /// Queues the copy on `stream` (`cuMemcpy2DAsync`) between device memory and arrays; a
    /// host end is refused ([`Copy2D::run_async_host`] is the unsafe form). Each end records
    /// the stream as a use first.
    pub fn run_async(self, stream: &Stream) -> Result<(), Error> {
        issue_2d("Copy2D::run_async", &self.spec, Issue::Async, Some((stream, false)))
    }

    /// Queues the copy on `stream` (`cuMemcpy2DAsync`), host ends included.
    ///
    /// # Safety
    /// A host end must stay allocated, and (a destination) be neither read nor written, or
    /// (a source) not be written, until the copy is done.
    pub unsafe fn run_async_host(self, stream: &Stream) -> Result<(), Error> {
        issue_2d("Copy2D::run_async_host", &self.spec, Issue::Async, Some((stream, true)))
    }
}

impl<'a, T: DeviceRepr> Copy3D<'a, T> {
    /// A copy of `depth` slices of `height` rows of `width` values, with no ends yet.
    pub fn new(width: usize, height: usize, depth: usize) -> Copy3D<'a, T> {
        Copy3D { spec: Spec::new(width, height, depth) }
    }

    /// From host memory: rows `pitch` values apart, slices `rows` rows apart.
    pub fn src_host(mut self, src: &'a [T], pitch: usize, rows: usize) -> Self {
        self.spec.src = Some(Spec::host(src, pitch, Some(rows)));
        self
    }

    /// To host memory: rows `pitch` values apart, slices `rows` rows apart.
    pub fn dst_host(mut self, dst: &'a mut [T], pitch: usize, rows: usize) -> Self {
        self.spec.dst = Some(Spec::host_mut(dst, pitch, Some(rows)));
        self
    }

    /// From device memory of `T`: rows `pitch` values apart, slices `rows` rows apart.
    pub fn src_device(mut self, src: &'a (impl DeviceSlice<T> + ?Sized), pitch: usize, rows: usize) -> Self {
        let v = src.as_view();
        self.spec.src = Some(Spec::<T>::device(v.as_raw(), v.len(), v.allocation(), pitch, Some(rows)));
        self
    }

    /// To device memory of `T`: rows `pitch` values apart, slices `rows` rows apart.
    pub fn dst_device(mut self, dst: &'a mut (impl DeviceSliceMut<T> + ?Sized), pitch: usize, rows: usize) -> Self {
        let v = dst.as_view_mut();
        self.spec.dst = Some(Spec::<T>::device(v.as_raw(), v.len(), v.allocation(), pitch, Some(rows)));
        self
    }

    pitched_and_array_ends!(
        true,
        "From a pitched buffer (its own pitch; one slice).",
        "To a pitched buffer (its own pitch; one slice).",
        "From an array.",
        "To an array (see [`Copy2D::dst_array`])."
    );

    renamed_ends! {
        from_host => src_host(src: &'a [T], pitch: usize, rows: usize);
        to_host => dst_host(dst: &'a mut [T], pitch: usize, rows: usize);
        from_device => src_device(src: &'a (impl DeviceSlice<T> + ?Sized), pitch: usize, rows: usize);
        to_device => dst_device(dst: &'a mut (impl DeviceSliceMut<T> + ?Sized), pitch: usize, rows: usize);
        from_pitched => src_pitched(src: &'a PitchedBuffer<T>);
        to_pitched => dst_pitched(dst: &'a mut PitchedBuffer<T>);
        from_array => src_array(src: &'a Array);
        to_array => dst_array(dst: &'a Array);
    }

    /// Starts reading the source at value `x` of row `y` of slice `z`.
    pub fn src_offset(mut self, x: usize, y: usize, z: usize) -> Self {
        self.spec.src_at = (x, y, z);
        self
    }

    /// Starts writing the destination at value `x` of row `y` of slice `z`.
    pub fn dst_offset(mut self, x: usize, y: usize, z: usize) -> Self {
        self.spec.dst_at = (x, y, z);
        self
    }

    /// Runs the copy (`cuMemcpy3D`, synchronous), after the work queued on its ends'
    /// streams.
    pub fn run(self) -> Result<(), Error> {
        issue_3d("Copy3D::run", &self.spec, None)
    }

    /// Queues the copy on `stream` (`cuMemcpy3DAsync`) between device memory and arrays; a
    /// host end is refused ([`Copy3D::run_async_host`] is the unsafe form).
    pub fn run_async(self, stream: &Stream) -> Result<(), Error> {
        issue_3d("Copy3D::run_async", &self.spec, Some((stream, false)))
    }

    /// Queues the copy on `stream` (`cuMemcpy3DAsync`), host ends included.
    ///
    /// # Safety
    /// As [`Copy2D::run_async_host`].
    pub unsafe fn run_async_host(self, stream: &Stream) -> Result<(), Error> {
        issue_3d("Copy3D::run_async_host", &self.spec, Some((stream, true)))
    }
}

/// Checks and issues a 2D copy.
fn issue_2d<T: DeviceRepr>(
    what: &'static str,
    spec: &Spec<'_, T>,
    issue: Issue,
    stream: Option<(&Stream, bool)>,
) -> Result<(), Error> {
    let Some(plan) = spec.check(what)? else { return Ok(()) };
    let raw = plan.raw_2d();
    // SAFETY: every end was checked to hold the copied region and is borrowed until now;
    // asynchronous host ends are the caller's (`run_async_host`); the stream is live
    // (borrowed). The copy is a use of each end on it (recorded by `issue`).
    let queue = |pc: Pc, s| unsafe { pc.cuMemcpy2DAsync(&raw, s) };
    // SAFETY: `raw` is the checked plan: every end holds the copied region (pitch and
    // alignment included) and stays borrowed for the call.
    let run = |pc: Pc| unsafe {
        match issue {
            Issue::Unaligned => pc.cuMemcpy2DUnaligned(&raw),
            _ => pc.cuMemcpy2D(&raw),
        }
    };
    plan.issue(what, stream, queue, run)
}

/// Checks and issues a 3D copy.
fn issue_3d<T: DeviceRepr>(
    what: &'static str,
    spec: &Spec<'_, T>,
    stream: Option<(&Stream, bool)>,
) -> Result<(), Error> {
    let Some(plan) = spec.check(what)? else { return Ok(()) };
    let raw = plan.raw_3d();
    // SAFETY: every end was checked to hold the copied region (slices included) and is
    // borrowed until now; asynchronous host ends are the caller's (`run_async_host`); the
    // stream is live (borrowed). The copy is a use of each end on it (recorded by `issue`).
    let queue = |pc: Pc, s| unsafe { pc.cuMemcpy3DAsync(&raw, s) };
    // SAFETY: every end was checked to hold the copied region (slices included) and is
    // borrowed for the call.
    let run = |pc: Pc| unsafe { pc.cuMemcpy3D(&raw) };
    plan.issue(what, stream, queue, run)
}

/// The whole-array copies.
impl Array {
    /// Copies `src`, every element of the array in order (x fastest, then rows, then
    /// slices), into the array (`cuMemcpy3D`, synchronous). `T` must be one element's
    /// size and `src` hold exactly every element ([`InvalidArgument`] otherwise).
    pub fn copy_from_host<T: DeviceRepr>(&self, src: &[T]) -> Result<(), Error> {
        let (w, h, d) = self.desc().extent();
        self.check_whole::<T>("Array::copy_from_host", src.len())?;
        Copy3D::new(w, h, d).src_host(src, w, h).dst_array(self).run()
    }

    /// Every element of the array, in order, copied to a new vector (`cuMemcpy3D`).
    pub fn to_vec<T: DeviceRepr>(&self) -> Result<Vec<T>, Error> {
        let what = "Array::to_vec";
        let (w, h, d) = self.desc().extent();
        let n = self.check_whole::<T>(what, None)?;
        let mut out = Vec::<T>::new();
        out.try_reserve_exact(n).map_err(|e| InvalidArgument::new(what, format!("{n} values: {e}")))?;
        // SAFETY: T: DeviceRepr accepts any bytes; the copy writes every value before the
        // vector is returned (on error it is dropped unread).
        unsafe { out.set_len(n) };
        Copy3D::new(w, h, d).src_array(self).dst_host(&mut out, w, h).run()?;
        Ok(out)
    }

    /// Copies every element from `src` (device memory holding them in order) into the
    /// array (`cuMemcpy3D`).
    pub fn copy_from_device<T: DeviceRepr>(&self, src: &impl DeviceSlice<T>) -> Result<(), Error> {
        let (w, h, d) = self.desc().extent();
        self.check_whole::<T>("Array::copy_from_device", src.len())?;
        Copy3D::new(w, h, d).src_device(src, w, h).dst_array(self).run()
    }

    /// Copies every element into `dst` (device memory of exactly that many values), in
    /// order (`cuMemcpy3D`).
    pub fn copy_to_device<T: DeviceRepr>(&self, dst: &mut impl DeviceSliceMut<T>) -> Result<(), Error> {
        let (w, h, d) = self.desc().extent();
        self.check_whole::<T>("Array::copy_to_device", dst.len())?;
        Copy3D::new(w, h, d).src_array(self).dst_device(dst, w, h).run()
    }
}

/// The whole-buffer copies.
impl<T: DeviceRepr> PitchedBuffer<T> {
    /// A new pitched buffer holding `values` as `height` rows of `width` values, one row
    /// after another (`cuMemAllocPitch`, `cuMemcpy2D`). `values` must hold exactly
    /// `width * height` values ([`InvalidArgument`] otherwise, before any driver call).
    pub fn from_rows(context: &Context, width: usize, values: &[T]) -> Result<PitchedBuffer<T>, Error> {
        let height = values.len().checked_div(width).unwrap_or(0);
        if width.checked_mul(height) != Some(values.len()) {
            let why = format!("{} values are not whole rows of {width}", values.len());
            return Err(InvalidArgument::new("PitchedBuffer::from_rows", why).into());
        }
        let mut buffer = PitchedBuffer::alloc(context, width, height)?;
        buffer.copy_from_host(values)?;
        Ok(buffer)
    }

    /// Copies `src`, `height` rows of `width` values one after another, into the buffer
    /// (`cuMemcpy2D`, synchronous; see [`Copy2D`]). `src` must hold exactly `width *
    /// height` values.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<(), Error> {
        self.check_whole("PitchedBuffer::copy_from_host", src.len())?;
        let (width, height) = (self.width(), self.height());
        Copy2D::new(width, height).src_host(src, width).dst_pitched(self).run()
    }

    /// The buffer's rows, one after another, copied to a new vector (`cuMemcpy2D`,
    /// synchronous).
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let what = "PitchedBuffer::to_vec";
        let n = self.width().checked_mul(self.height()).ok_or_else(|| InvalidArgument::new(what, "size overflows"))?;
        let mut out = Vec::<T>::new();
        out.try_reserve_exact(n).map_err(|e| InvalidArgument::new(what, format!("{n} values: {e}")))?;
        // SAFETY: T: DeviceRepr is plain data (any bytes are a valid T), and the copy
        // below writes every value before the vector is returned; on error it is dropped
        // without being read.
        unsafe { out.set_len(n) };
        let (width, height) = (self.width(), self.height());
        Copy2D::new(width, height).src_pitched(self).dst_host(&mut out, width).run()?;
        Ok(out)
    }
}
