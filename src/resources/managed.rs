//! Managed (unified) memory: [`ManagedBuffer`] (`cuMemAllocManaged`), which both the host
//! and the device address at one pointer, with its stream attachment
//! (`cuStreamAttachMemAsync`), prefetches (`cuMemPrefetchAsync`), advice (`cuMemAdvise`)
//! and range attributes (`cuMemRangeGetAttribute`), all typed.
//!
//! A managed buffer is device memory of `T` like any other ([`DeviceSlice`],
//! [`DeviceSliceMut`], views, kernel arguments), and records its uses on streams as a
//! [`crate::DeviceBuffer`] does (`memory.rs`). Its host access is safe because it needs
//! `&mut self` (no view, launch builder or copy borrows it meanwhile) and first waits for
//! every stream the buffer was used on (docs/memory.md, "Managed memory").
//!
//! The prefetch and the advice take a location (12.2's `cuMemPrefetchAsync_v2` and
//! `cuMemAdvise_v2`) where the driver has them, and the device ordinal forms (8.0)
//! otherwise: the program names a [`ManagedLocation`] either way.

use std::ffi::c_void;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::memory::{DeviceBuffer, DeviceRepr};
use crate::resources::stream::Stream;
use crate::resources::values::value_count;
use crate::resources::view::slices_through;
use crate::sys::{
    CUdevice, CUdevice_attribute, CUdeviceptr, CUmemAttach_flags, CUmemLocation, CUmemLocationType, CUmem_advise,
    CUmem_range_attribute,
};

/// `CU_DEVICE_CPU`: the host, where the 8.0 forms take a device ordinal.
const DEVICE_CPU: CUdevice = -1;
/// `CU_DEVICE_INVALID`: no location (or not the same one over the whole range).
const DEVICE_INVALID: CUdevice = -2;

/// Who may access a managed allocation (`CU_MEM_ATTACH_*`): at allocation
/// (`cuMemAllocManaged`: `Global` or `Host`) and when attached to a stream
/// ([`ManagedBuffer::attach_async`], `cuStreamAttachMemAsync`: any of the three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManagedAttach {
    /// Any stream of any device (`CU_MEM_ATTACH_GLOBAL`).
    Global,
    /// The host only, until attached to a stream with [`ManagedBuffer::attach_async`]
    /// (`CU_MEM_ATTACH_HOST`; on devices with concurrent managed access the device may
    /// still reach it).
    Host,
    /// The stream it is attached on only (`CU_MEM_ATTACH_SINGLE`): for
    /// [`ManagedBuffer::attach_async`] only (an allocation refuses it, as the driver does),
    /// and not on the legacy default stream, which the driver refuses.
    Single,
}

impl ManagedAttach {
    fn bits(self) -> u32 {
        match self {
            ManagedAttach::Global => CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0,
            ManagedAttach::Host => CUmemAttach_flags::CU_MEM_ATTACH_HOST.0,
            ManagedAttach::Single => CUmemAttach_flags::CU_MEM_ATTACH_SINGLE.0,
        }
    }
}

/// The attach flags of `cuStreamAttachMemAsync`, one enum with the allocation's since 0.2.
#[deprecated(since = "0.2.0", note = "use `ManagedAttach`, which has `Single` too")]
pub type StreamAttach = ManagedAttach;

/// Where managed memory is prefetched to, preferred, or accessed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ManagedLocation {
    /// A device, by ordinal.
    Device(CUdevice),
    /// The host (`CU_DEVICE_CPU`, `CU_MEM_LOCATION_TYPE_HOST`).
    Host,
}

impl ManagedLocation {
    /// The location of `context`'s device.
    pub fn device_of(context: &Context) -> ManagedLocation {
        ManagedLocation::Device(context.device().as_raw())
    }

    /// As 12.2's forms take it.
    fn raw(self) -> CUmemLocation {
        let (type_, id) = match self {
            ManagedLocation::Device(d) => (CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, d),
            ManagedLocation::Host => (CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, 0),
        };
        let mut location = CUmemLocation { type_, ..Default::default() };
        location.__bindgen_anon_1.id = id;
        location
    }

    /// As 8.0's forms take it: a device ordinal, or `CU_DEVICE_CPU`.
    fn ordinal(self) -> CUdevice {
        match self {
            ManagedLocation::Device(d) => d,
            ManagedLocation::Host => DEVICE_CPU,
        }
    }

    /// A device ordinal or `CU_DEVICE_CPU` as a range attribute gives it; `None` for
    /// `CU_DEVICE_INVALID` (no location, or not one location over the whole range).
    fn from_ordinal(v: i32) -> Option<ManagedLocation> {
        match v {
            DEVICE_CPU => Some(ManagedLocation::Host),
            d if d >= 0 => Some(ManagedLocation::Device(d)),
            _ => None,
        }
    }
}

/// Advice about how managed memory is used (`cuMemAdvise`, `CU_MEM_ADVISE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManagedAdvice {
    /// Mostly read: each processor that reads it may keep a read-only copy.
    SetReadMostly,
    /// Undoes [`ManagedAdvice::SetReadMostly`].
    UnsetReadMostly,
    /// Where its pages should live.
    SetPreferredLocation(ManagedLocation),
    /// Undoes [`ManagedAdvice::SetPreferredLocation`].
    UnsetPreferredLocation,
    /// That a location accesses it, so its pages stay mapped there.
    SetAccessedBy(ManagedLocation),
    /// Undoes [`ManagedAdvice::SetAccessedBy`] for that location.
    UnsetAccessedBy(ManagedLocation),
}

impl ManagedAdvice {
    fn raw(self) -> (CUmem_advise, ManagedLocation) {
        type A = CUmem_advise;
        // The location of the advice that takes none is ignored by the driver.
        match self {
            ManagedAdvice::SetReadMostly => (A::CU_MEM_ADVISE_SET_READ_MOSTLY, ManagedLocation::Host),
            ManagedAdvice::UnsetReadMostly => (A::CU_MEM_ADVISE_UNSET_READ_MOSTLY, ManagedLocation::Host),
            ManagedAdvice::SetPreferredLocation(l) => (A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION, l),
            ManagedAdvice::UnsetPreferredLocation => (A::CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, ManagedLocation::Host),
            ManagedAdvice::SetAccessedBy(l) => (A::CU_MEM_ADVISE_SET_ACCESSED_BY, l),
            ManagedAdvice::UnsetAccessedBy(l) => (A::CU_MEM_ADVISE_UNSET_ACCESSED_BY, l),
        }
    }
}

/// A managed range's attributes (`cuMemRangeGetAttribute`), each over the whole range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ManagedRangeAttributes {
    /// Whether every page has [`ManagedAdvice::SetReadMostly`].
    pub read_mostly: bool,
    /// The preferred location of every page; `None` if none was set, or the pages differ.
    pub preferred_location: Option<ManagedLocation>,
    /// The locations every page is advised to be accessed by.
    pub accessed_by: Vec<ManagedLocation>,
    /// Where every page was last prefetched to (asked for: the prefetch may not have run
    /// yet); `None` if never, or the pages differ.
    pub last_prefetch_location: Option<ManagedLocation>,
}

/// `len` values of `T` in managed memory (`cuMemAllocManaged`): one address the host
/// and every device of the system can use, whose pages the driver migrates where they are
/// touched (or where [`ManagedBuffer::prefetch_async`] sends them). It is device memory of
/// `T` ([`DeviceSlice`](crate::DeviceSlice), [`DeviceSliceMut`](crate::DeviceSliceMut): copies, fills, views) and a kernel argument,
/// and is freed (`cuMemFree`) when dropped, after the work queued on every stream it was
/// used on, as a [`crate::DeviceBuffer`] is. Not `Clone`: it has one owner.
///
/// **Host access is safe**: [`ManagedBuffer::as_slice`] and [`ManagedBuffer::as_mut_slice`]
/// borrow it mutably (so nothing borrowed from it, a view, a launch builder, is alive, and
/// no other thread can queue work on it meanwhile) and first wait for every stream it was
/// used on (one `cuStreamSynchronize` each), so no queued copy or kernel touches the values
/// while the host does. On a device without concurrent managed access (before Pascal, or
/// Windows) they also synchronise its context: there, the host may not touch managed
/// memory while any kernel runs. A buffer used on a stream that was capturing, or held by a
/// graph, an executable graph, kernel node parameters or a texture object (any of which may
/// use it at any time, a launch of a graph after the slice was handed out included), refuses
/// safe host access; once those are dropped, its host access waits for their queued work
/// (a graph launch is a use on its stream, as a copy is). The `unsafe`
/// [`ManagedBuffer::as_slice_unchecked`] remains, with its rule. Every use on a stream asks the driver whether
/// the stream is capturing (`cuStreamIsCapturing`), which plain device buffers skip.
///
/// A buffer of no bytes makes no driver call: its address is null and every operation on
/// it is a no-op.
pub struct ManagedBuffer<T> {
    buf: DeviceBuffer<T>,
    /// The device has no concurrent managed access: host access also synchronises the
    /// context.
    exclusive: bool,
}

impl<T> std::fmt::Debug for ManagedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ManagedBuffer({:#x}, {} values)", self.buf.as_raw(), self.buf.len())
    }
}

impl<T: DeviceRepr> ManagedBuffer<T> {
    /// Allocates `len` zeroed values of managed memory in `context` (`cuMemAllocManaged`
    /// with `attach`), zeroed by the host (which touches every page there first). On error
    /// nothing is allocated. No bytes make no driver call (the null address).
    pub fn zeroed(context: &Context, len: usize, attach: ManagedAttach) -> Result<ManagedBuffer<T>, Error> {
        let buf = DeviceBuffer::alloc_managed(context, len, attach.bits())?;
        let exclusive = if buf.as_raw() == 0 { false } else { !concurrent_access(context)? };
        let bytes = buf.size_bytes();
        if bytes != 0 {
            // SAFETY: the driver gave `bytes` bytes of managed memory at this address,
            // which the host may write: nothing else uses it yet.
            unsafe { std::ptr::write_bytes(buf.as_raw() as usize as *mut u8, 0, bytes) };
        }
        Ok(ManagedBuffer { buf, exclusive })
    }

    /// A managed copy of `values`, written by the host. On error nothing is allocated.
    pub fn from_slice(context: &Context, values: &[T], attach: ManagedAttach) -> Result<ManagedBuffer<T>, Error> {
        let mut buf = ManagedBuffer::zeroed(context, values.len(), attach)?;
        buf.as_mut_slice()?.copy_from_slice(values);
        Ok(buf)
    }

    /// The values, read on the host, once no queued work uses them: waits for every stream
    /// it was used on first (see [`ManagedBuffer`]). An error if a wait fails, or if it
    /// was used on a capturing stream.
    pub fn as_slice(&mut self) -> Result<&[T], Error> {
        self.host_ready("ManagedBuffer::as_slice")?;
        // SAFETY: `len` initialised values (zeroed, then written by copies or kernels with
        // any bytes, all valid for T) at an address the host may use; no queued work uses
        // them (waited for) and `&mut self` keeps any from being queued while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts(self.slice_ptr(), self.len()) })
    }

    /// The values, written on the host, once no queued work uses them (as
    /// [`ManagedBuffer::as_slice`]).
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], Error> {
        self.host_ready("ManagedBuffer::as_mut_slice")?;
        // SAFETY: `len` initialised values the host may use (any bytes are valid for T); no
        // queued work uses them (waited for), and `&mut self` makes this the only access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.slice_ptr(), self.len()) })
    }

    /// The values, read on the host without waiting for anything: for a buffer used on a
    /// capturing stream, or code that orders its streams itself.
    ///
    /// # Safety
    /// While the slice lives, no work that writes the values may be queued or running on
    /// any device or stream (a graph launch included), and on a device without concurrent
    /// managed access no kernel may run in the buffer's context at all.
    pub unsafe fn as_slice_unchecked(&self) -> &[T] {
        // SAFETY: `len` initialised values at an address the host may use; the caller
        // keeps device writes away while the slice lives.
        unsafe { std::slice::from_raw_parts(self.slice_ptr(), self.len()) }
    }

    /// The host address of the values (the device address, as a host pointer); null for
    /// no bytes. Reading or writing through it is `unsafe` and keeps the rule of
    /// [`ManagedBuffer::as_slice_unchecked`] (for a write: no device work may use the
    /// values at all meanwhile).
    pub fn as_host_ptr(&self) -> *mut T {
        self.buf.as_raw() as usize as *mut T
    }

    /// Waits for the work queued on the buffer's streams (and, without concurrent managed
    /// access, the context); refuses a buffer used in a stream capture.
    fn host_ready(&self, what: &'static str) -> Result<(), Error> {
        let owner = self.buf.allocation().owner();
        if owner.was_captured() {
            let why = "it was used on a capturing stream: a graph may use it at any time (as_slice_unchecked is the unsafe way)";
            return Err(InvalidArgument::new(what, why).into());
        }
        if self.buf.allocation().is_shared() {
            let why = "a graph, executable graph, kernel node parameters or texture object holds it and may use it \
                       at any time, even while the slice lives: drop those first (as_slice_unchecked is the unsafe way)";
            return Err(InvalidArgument::new(what, why).into());
        }
        owner.settle()?;
        if self.exclusive {
            self.context().synchronize()?;
        }
        Ok(())
    }

    /// The address a slice starts at: the memory, or for no bytes a dangling, aligned one.
    fn slice_ptr(&self) -> *mut T {
        match self.buf.as_raw() {
            0 => std::ptr::NonNull::<T>::dangling().as_ptr(),
            p => p as usize as *mut T,
        }
    }

    /// Attaches it to `stream` as `attach` says (`cuStreamAttachMemAsync`, ordered on the
    /// stream, for the whole allocation). The attachment is one of its uses on the stream.
    /// No bytes: no driver call.
    pub fn attach_async(&self, stream: &Stream, attach: ManagedAttach) -> Result<(), Error> {
        let (pc, ptr, s) = (stream.context().driver().pc(), self.buf.as_raw(), stream.as_raw());
        if ptr == 0 {
            return Ok(());
        }
        self.buf.allocation().owner().used_on(stream)?;
        // SAFETY: a live managed allocation (length 0: all of it); the stream is live.
        Ok(stream.run(|| unsafe { pc.cuStreamAttachMemAsync(s, ptr, 0, attach.bits()) })?)
    }

    /// Migrates its pages to `to`, ordered on `stream` (`cuMemPrefetchAsync`: 12.2's form
    /// with a location, else 8.0's with a device ordinal). A use on the stream. No bytes:
    /// no driver call.
    pub fn prefetch_async(&self, to: ManagedLocation, stream: &Stream) -> Result<(), Error> {
        let (ptr, bytes) = (self.buf.as_raw(), self.buf.size_bytes());
        if bytes == 0 {
            return Ok(());
        }
        let driver = stream.context().driver();
        let (pc, s) = (driver.pc(), stream.as_raw());
        self.buf.allocation().owner().used_on(stream)?;
        // SAFETY: every form is given a live managed range of `bytes` and a live stream.
        stream.run(|| unsafe {
            match pc.cuMemPrefetchAsync(ptr, bytes, to.raw(), 0, s) {
                Err(e) if e.unresolved().is_some() => {
                    if driver.options().per_thread_default_stream {
                        pc.cuMemPrefetchAsync_v8000_ptsz(ptr, bytes, to.ordinal(), s)
                    } else {
                        pc.cuMemPrefetchAsync_v8000(ptr, bytes, to.ordinal(), s)
                    }
                }
                r => r,
            }
        })?;
        Ok(())
    }

    /// Advises the driver how the whole buffer is used (`cuMemAdvise`: 12.2's form with a
    /// location, else 8.0's). Synchronous, no stream. No bytes: no driver call.
    pub fn advise(&self, advice: ManagedAdvice) -> Result<(), Error> {
        let (ptr, bytes) = (self.buf.as_raw(), self.buf.size_bytes());
        if bytes == 0 {
            return Ok(());
        }
        let pc = self.context().driver().pc();
        let (raw, location) = advice.raw();
        // SAFETY: both forms (12.2's with a location, 8.0's with an ordinal) are given a
        // live managed range of `bytes`.
        self.context().run(|| unsafe {
            match pc.cuMemAdvise(ptr, bytes, raw, location.raw()) {
                Err(e) if e.unresolved().is_some() => pc.cuMemAdvise_v8000(ptr, bytes, raw, location.ordinal()),
                r => r,
            }
        })
    }

    /// Its range attributes (`cuMemRangeGetAttribute`, one call per attribute). No bytes:
    /// the defaults (nothing advised, never prefetched), without a driver call.
    pub fn range_attributes(&self) -> Result<ManagedRangeAttributes, Error> {
        let (ptr, bytes) = (self.buf.as_raw(), self.buf.size_bytes());
        if bytes == 0 {
            return Ok(ManagedRangeAttributes::default());
        }
        type R = CUmem_range_attribute;
        let pc = self.context().driver().pc();
        let get = |attr: R, out: &mut [i32]| {
            let size = size_of_val(out);
            // SAFETY: `out` has `size` writable bytes, a multiple of 4 as each attribute
            // takes; the range is a live managed allocation.
            unsafe { pc.cuMemRangeGetAttribute(out.as_mut_ptr().cast::<c_void>(), size, attr, ptr, bytes) }
        };
        self.context().run(|| {
            let (mut read_mostly, mut preferred, mut prefetched) = ([0i32], [0i32], [0i32]);
            get(R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, &mut read_mostly)?;
            get(R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, &mut preferred)?;
            get(R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, &mut prefetched)?;
            // Room for every device a system can have and the host.
            let mut accessed = [DEVICE_INVALID; 65];
            get(R::CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, &mut accessed)?;
            Ok(ManagedRangeAttributes {
                read_mostly: read_mostly[0] != 0,
                preferred_location: ManagedLocation::from_ordinal(preferred[0]),
                accessed_by: accessed.iter().filter_map(|&v| ManagedLocation::from_ordinal(v)).collect(),
                last_prefetch_location: ManagedLocation::from_ordinal(prefetched[0]),
            })
        })
    }

    /// The device address (equal to the host address); 0 for no bytes.
    pub fn as_raw(&self) -> CUdeviceptr {
        self.buf.as_raw()
    }

    value_count!(T, self => self.buf.len());

    /// The context it was allocated in.
    pub fn context(&self) -> &Context {
        self.buf.context()
    }
}

/// Whether `context`'s device has concurrent managed access
/// (`CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`).
fn concurrent_access(context: &Context) -> Result<bool, CudaError> {
    let attr = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS;
    Ok(context.driver().typed().cuDeviceGetAttribute(attr, context.device().as_raw())? != 0)
}

slices_through!(
    /// Its values, as device memory (the same address as the host's).
    ManagedBuffer.buf
);

// SAFETY: the buffer's own parameter: its device address, kept at a stable place for the
// buffer's life.
unsafe impl<T> KernelArg for ManagedBuffer<T> {
    fn param(&self) -> *mut c_void {
        self.buf.param()
    }

    fn memory_use(&self) -> Option<ArgUse<'_>> {
        self.buf.memory_use()
    }

    fn param_size(&self) -> usize {
        self.buf.param_size()
    }

    fn param_context(&self) -> Option<&Context> {
        self.buf.param_context()
    }
}
