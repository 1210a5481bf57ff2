//! Virtual memory management: address reservations ([`AddressRange`]), physical
//! allocations ([`PhysicalMemory`]), mappings of one into the other ([`Mapping`]) with
//! access for one or several devices, export and import of physical allocations as POSIX
//! file descriptors, and a [`GrowableBuffer`] that reserves a large range once and maps
//! chunks into it as it grows.
//!
//! Every object is a handle of the one handle core (the integer handles
//! `CUmemGenericAllocationHandle` and addresses), and an `Err` means nothing was created.
//! Drops run in the order the driver needs: a [`Mapping`] holds clones of its range and
//! of its physical allocation, so it is unmapped (`cuMemUnmap`) before the allocation is
//! released (`cuMemRelease`) and before the range is freed (`cuMemAddressFree`).
//! None of these calls needs a current context (the location names the device); each
//! object keeps the context it was made for alive, and copies through a mapping run in it.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use crate::device::Device;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::flags::ShareableHandleTypes;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::memory::{DeviceBuffer, DeviceRepr};
use crate::resources::values::value_count;
use crate::resources::view::{sealed, slices_through, DeviceSlice, DeviceSliceMut, DeviceView, DeviceViewMut};
use crate::sys::{
    CUdevice, CUdeviceptr, CUmemAccessDesc, CUmemAccess_flags, CUmemAllocationGranularity_flags,
    CUmemAllocationHandleType, CUmemAllocationProp, CUmemAllocationType, CUmemGenericAllocationHandle, CUmemLocation,
    CUmemLocationType,
};

/// What a mapping lets a device do with its memory (`CU_MEM_ACCESS_FLAGS_PROT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// No access (takes access away).
    None,
    /// Read only.
    Read,
    /// Read and write.
    ReadWrite,
}

impl Access {
    fn raw(self) -> CUmemAccess_flags {
        match self {
            Access::None => CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE,
            Access::Read => CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
            Access::ReadWrite => CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        }
    }

    fn from_raw(bits: u64) -> Access {
        match bits {
            1 => Access::Read,
            3 => Access::ReadWrite,
            _ => Access::None,
        }
    }
}

/// The location of `device`'s memory.
fn device_location(device: CUdevice) -> CUmemLocation {
    let mut location = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
    location.__bindgen_anon_1.id = device;
    location
}

/// `cuMemSetAccess` of `len` bytes at `ptr`, one descriptor per device.
fn set_access(
    driver: &'static crate::Driver,
    ptr: CUdeviceptr,
    len: usize,
    access: &[(&Device, Access)],
) -> Result<(), Error> {
    let descs: Vec<CUmemAccessDesc> = access
        .iter()
        .map(|&(device, a)| CUmemAccessDesc { location: device_location(device.as_raw()), flags: a.raw() })
        .collect();
    // SAFETY: `descs` holds `descs.len()` descriptors; the driver checks that the bytes are
    // mapped (the callers hold the mappings' range).
    unsafe { Ok(driver.pc().cuMemSetAccess(ptr, len, descs.as_ptr(), descs.len())?) }
}

/// Properties of pinned device memory on `device` exportable as `types`.
fn device_prop(device: CUdevice, types: ShareableHandleTypes) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CUmemAllocationHandleType(types.bits()),
        location: device_location(device),
        ..Default::default()
    }
}

kind!(
    /// The kind of an address reservation: freed with `cuMemAddressFree(address, size)` by
    /// the last clone; every mapping in it holds a clone, so none is left by then.
    ReservationKind: CUdeviceptr = "AddressRange", owner ReservationOwner, driver |o| o.context.driver(),
    context |_o| None, release cuMemAddressFree |o| (o.size)
);

/// What a reservation keeps: its context and size.
pub(crate) struct ReservationOwner {
    context: Context,
    size: usize,
}

/// A range of device addresses reserved with `cuMemAddressReserve`, with no memory
/// behind it until a [`Mapping`] maps some. Clones share it; the last one frees it, after
/// every mapping in it (each holds a clone) is unmapped.
#[derive(Clone)]
pub struct AddressRange(pub(crate) Handle<ReservationKind>);
handle_type!(AddressRange: ReservationKind => CUdeviceptr);

impl AddressRange {
    /// Reserves `size` bytes of addresses (a multiple of [`PhysicalMemory::granularity`]) aligned to
    /// `alignment` (0: the driver's default) for `context`'s device. On error nothing is
    /// reserved.
    pub fn reserve(context: &Context, size: usize, alignment: usize) -> Result<AddressRange, Error> {
        let pc = context.driver().pc();
        let owner = ReservationOwner { context: context.clone(), size };
        // SAFETY: valid out-pointer; no address hint, no flags.
        let create = |raw: &mut CUdeviceptr| unsafe { pc.cuMemAddressReserve(raw, size, alignment, 0, 0) };
        Ok(Handle::create_out(owner, context.as_raw(), create).map(AddressRange)?)
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.0.owner().size
    }

    /// Sets what each device may do with `len` bytes from `offset` (`cuMemSetAccess` over
    /// the range, one descriptor per device): several adjacent mappings at once, where
    /// [`Mapping::set_access`] sets one. Every byte of it must be mapped; a part outside
    /// the range is an [`InvalidArgument`] before any driver call. On error the access is
    /// as it was.
    pub fn set_access(&self, offset: usize, len: usize, access: &[(&Device, Access)]) -> Result<(), Error> {
        if offset.checked_add(len).is_none_or(|end| end > self.size()) {
            let why = format!("{len} bytes from offset {offset} of a {}-byte range", self.size());
            return Err(InvalidArgument::new("AddressRange::set_access", why).into());
        }
        set_access(self.0.driver(), self.as_raw() + offset as u64, len, access)
    }

    /// The context it was reserved for.
    pub fn context(&self) -> &Context {
        &self.0.owner().context
    }
}

kind!(
    /// The kind of a physical allocation: released with `cuMemRelease` by the last clone (a
    /// mapping of it holds a clone, and the driver keeps the memory of a released handle
    /// while it is mapped anyway).
    PhysicalKind: CUmemGenericAllocationHandle = "PhysicalMemory", owner PhysicalOwner,
    driver |o| o.device.driver(), context |_o| None, release cuMemRelease
);

/// What a physical allocation keeps: its device, size and shareable handle types.
pub(crate) struct PhysicalOwner {
    device: Device,
    size: usize,
    types: ShareableHandleTypes,
}

/// Physical device memory made with `cuMemCreate` (or imported from a file descriptor),
/// mapped into address ranges with [`Mapping::map`]. Clones share the handle; the last one
/// releases it (the driver frees the memory once it is also unmapped everywhere).
#[derive(Clone)]
pub struct PhysicalMemory(pub(crate) Handle<PhysicalKind>);
handle_type!(PhysicalMemory: PhysicalKind => CUmemGenericAllocationHandle);

impl PhysicalMemory {
    /// The allocation granularity of device memory on `device` exportable as `types`: the
    /// minimum (`recommended == false`) or the recommended one
    /// (`cuMemGetAllocationGranularity`, which needs no context). Sizes of physical
    /// allocations, reservations and mappings are multiples of it.
    pub fn granularity(
        device: &Device,
        types: impl Into<ShareableHandleTypes>,
        recommended: bool,
    ) -> Result<usize, Error> {
        let prop = device_prop(device.as_raw(), types.into());
        let option = if recommended {
            CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
        } else {
            CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM
        };
        let mut g = 0usize;
        // SAFETY: valid out-pointer and properties.
        unsafe { device.driver().pc().cuMemGetAllocationGranularity(&mut g, &prop, option) }?;
        Ok(g)
    }

    /// Allocates `size` bytes (a multiple of [`PhysicalMemory::granularity`]) of device
    /// memory on `device` (`cuMemCreate`, which needs no context), exportable as `types`
    /// (e.g. [`ShareableHandleTypes::POSIX_FD`]; [`ShareableHandleTypes::NONE`] for none).
    /// On error nothing is allocated.
    pub fn new(device: &Device, size: usize, types: impl Into<ShareableHandleTypes>) -> Result<PhysicalMemory, Error> {
        let types = types.into();
        let pc = device.driver().pc();
        let prop = device_prop(device.as_raw(), types);
        let owner = PhysicalOwner { device: *device, size, types };
        let mut raw: CUmemGenericAllocationHandle = 0;
        // SAFETY: valid out-pointer and properties; no flags.
        unsafe { pc.cuMemCreate(&mut raw, size, &prop, 0) }?;
        Ok(PhysicalMemory(Handle::new(owner, raw, Ownership::Owned)))
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.0.owner().size
    }

    /// The device its memory is on.
    pub fn device(&self) -> Device {
        self.0.owner().device
    }

    /// The shareable handle types it was made exportable as.
    pub fn shareable_types(&self) -> ShareableHandleTypes {
        self.0.owner().types
    }

    /// Exports it as a new POSIX file descriptor (`cuMemExportToShareableHandle`), which
    /// the caller owns (closed when dropped). It must have been made with
    /// [`ShareableHandleTypes::POSIX_FD`]. Pass it to another process (over a Unix
    /// socket) with the size, and import it there with
    /// [`PhysicalMemory::import_fd`].
    pub fn export_fd(&self) -> Result<OwnedFd, Error> {
        let mut fd: std::ffi::c_int = -1;
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let pc = self.0.driver().pc();
        // SAFETY: for a POSIX descriptor the driver writes an `int` at the pointer.
        unsafe { pc.cuMemExportToShareableHandle((&raw mut fd).cast(), self.0.raw(), kind, 0) }?;
        // SAFETY: on success the driver made a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Imports physical memory of `size` bytes from a POSIX file descriptor another
    /// process (or this one) exported with [`PhysicalMemory::export_fd`]
    /// (`cuMemImportFromShareableHandle`); the descriptor stays the caller's. `size` is
    /// the exporter's (the driver does not say it): a mapping of another size fails. On
    /// error nothing is imported.
    pub fn import_fd(device: &Device, fd: impl AsFd, size: usize) -> Result<PhysicalMemory, Error> {
        let pc = device.driver().pc();
        let raw_fd = fd.as_fd().as_raw_fd();
        let types = ShareableHandleTypes::POSIX_FD;
        let owner = PhysicalOwner { device: *device, size, types };
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let mut raw: CUmemGenericAllocationHandle = 0;
        // SAFETY: valid out-pointer; the descriptor is passed as the pointer's value (as
        // the C API takes it) and stays open for the call (borrowed).
        unsafe { pc.cuMemImportFromShareableHandle(&mut raw, raw_fd as isize as *mut std::ffi::c_void, kind) }?;
        Ok(PhysicalMemory(Handle::new(owner, raw, Ownership::Owned)))
    }
}

/// What keeps a mapping's addresses valid until it is unmapped: its memory and its
/// range, dropped in this order after the unmap (so the memory is released before the
/// range is freed).
struct MappingParts {
    _memory: PhysicalMemory,
    _range: AddressRange,
}

/// All of a [`PhysicalMemory`] mapped at an address of an [`AddressRange`]
/// (`cuMemMap`). Clones share it; the last one (or the last graph or object that keeps
/// its memory) unmaps it, after the work queued on every stream it was used on, then lets
/// go of its memory and then its range (released and freed after it, in that order, if it
/// held their last clones). If that wait or the unmap fails, the mapping, its memory and
/// its range are leaked and the failure reported.
///
/// A new mapping is not accessible: give devices access with [`Mapping::set_access`].
/// It is device memory of bytes ([`DeviceSlice<u8>`]): copies, fills and views run in
/// its range's context, and its uses on streams are tracked as a buffer's are.
#[derive(Clone)]
pub struct Mapping {
    bytes: DeviceBuffer<u8>,
    memory: PhysicalMemory,
    range: AddressRange,
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({:#x}, {} bytes)", self.as_raw(), self.size())
    }
}

impl Mapping {
    /// Maps all of `memory` at `offset` bytes into `range`. `offset` plus the memory's
    /// size beyond the range is an [`InvalidArgument`], before any driver call; the driver
    /// refuses an offset that is not a multiple of the granularity and an address already
    /// mapped. On error nothing is mapped.
    pub fn map(range: &AddressRange, offset: usize, memory: &PhysicalMemory) -> Result<Mapping, Error> {
        let size = memory.size();
        if offset.checked_add(size).is_none_or(|end| end > range.size()) {
            let message = format!("{size} bytes at offset {offset} do not fit a range of {} bytes", range.size());
            return Err(InvalidArgument::new("Mapping::map", message).into());
        }
        let address = range.as_raw() + offset as u64;
        let context = range.context();
        let pc = context.driver().pc();
        let handle = memory.as_raw();
        let parts = MappingParts { _memory: memory.clone(), _range: range.clone() };
        // SAFETY: the address range is reserved and the memory live (both held by `parts`).
        let map = || unsafe { pc.cuMemMap(address, size, 0, handle, 0) };
        // SAFETY: once mapped, `size` bytes at `address` stay mapped until the buffer's
        // release unmaps them, and `parts` keeps the memory and the range until then.
        let bytes = unsafe { DeviceBuffer::mapped(context, address, size, Box::new(parts), map) }?;
        Ok(Mapping { bytes, memory: memory.clone(), range: range.clone() })
    }

    /// The address it is mapped at.
    #[inline]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.bytes.as_raw()
    }

    /// Gives up ownership: returns its address, which cudrv will no longer unmap, if this
    /// is the only handle of it (no clone, graph or object keeps it); otherwise returns it
    /// unchanged. Its memory and range are then kept for the rest of the process.
    pub fn into_raw(self) -> Result<CUdeviceptr, Mapping> {
        let Mapping { bytes, memory, range } = self;
        bytes.into_raw().map_err(|bytes| Mapping { bytes, memory, range })
    }

    /// Unmaps it now if this is its only handle, returning whether the unmap worked (a
    /// drop reports a failure instead). On error it is returned, still mapped.
    fn try_unmap(self) -> Result<(), (Mapping, Option<CudaError>)> {
        let Mapping { bytes, memory, range } = self;
        bytes.try_release().map_err(|(bytes, e)| (Mapping { bytes, memory, range }, e))
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.memory.size()
    }

    /// The range it is mapped in.
    pub fn range(&self) -> &AddressRange {
        &self.range
    }

    /// The memory it maps.
    pub fn memory(&self) -> &PhysicalMemory {
        &self.memory
    }

    /// Sets what each device may do with it (`cuMemSetAccess`, one descriptor per
    /// device). On error the access is as it was.
    pub fn set_access(&self, access: &[(&Device, Access)]) -> Result<(), Error> {
        set_access(self.range.0.driver(), self.as_raw(), self.size(), access)
    }

    /// What `device` may do with it (`cuMemGetAccess`).
    pub fn access(&self, device: &Device) -> Result<Access, Error> {
        let mut flags = 0u64;
        let location = device_location(device.as_raw());
        // SAFETY: valid out-pointer and location; the address is mapped.
        unsafe { self.range.0.driver().pc().cuMemGetAccess(&mut flags, &location, self.as_raw()) }?;
        Ok(Access::from_raw(flags))
    }
}

impl sealed::Sealed for Mapping {}

/// The mapping's bytes. A view borrows the mapping, so it stays mapped while the view lives.
impl DeviceSlice<u8> for Mapping {
    fn as_view(&self) -> DeviceView<'_, u8> {
        self.bytes.as_view()
    }
}

impl DeviceSliceMut<u8> for Mapping {
    fn as_view_mut(&mut self) -> DeviceViewMut<'_, u8> {
        self.bytes.as_view().into_mut()
    }
}

/// Device memory of up to `max_len` values of `T` that grows without moving: one
/// address range reserved for all of it, and physical chunks mapped into it (with
/// read-write access for its context's device) as [`GrowableBuffer::grow`] asks for more,
/// as allocators with expandable segments do. Its address never changes, so views and
/// kernel arguments made before a growth stay valid for what they covered.
///
/// Dropping it waits for the work queued on every stream it was used on, then unmaps and
/// releases every chunk, then frees the range; a graph or object that keeps its memory
/// (a graph node's argument) keeps the chunks it covered mapped until it is dropped too.
pub struct GrowableBuffer<T> {
    chunks: Vec<Mapping>,
    /// How many of `chunks`, from the first, have read-write access for the device.
    accessible: usize,
    range: AddressRange,
    chunk_size: usize,
    len: usize,
    values: DeviceBuffer<T>,
}

impl<T> std::fmt::Debug for GrowableBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GrowableBuffer({:#x}, len {}, {} chunks)", self.range.as_raw(), self.len, self.chunks.len())
    }
}

impl<T: DeviceRepr> GrowableBuffer<T> {
    /// Reserves room for `max_len` values of `T` in `context`, mapped in chunks of the
    /// recommended granularity; nothing is mapped yet (length 0). On error nothing is
    /// reserved.
    pub fn new(context: &Context, max_len: usize) -> Result<GrowableBuffer<T>, Error> {
        let chunk_size = PhysicalMemory::granularity(&context.device(), ShareableHandleTypes::NONE, true)?;
        GrowableBuffer::with_chunk_size(context, max_len, chunk_size)
    }

    /// [`GrowableBuffer::new`] with chunks of `chunk_size` bytes (a multiple of
    /// [`PhysicalMemory::granularity`]; 0 is an [`InvalidArgument`]).
    pub fn with_chunk_size(context: &Context, max_len: usize, chunk_size: usize) -> Result<GrowableBuffer<T>, Error> {
        let what = "GrowableBuffer::new";
        let bytes = max_len
            .checked_mul(size_of::<T>())
            .ok_or_else(|| InvalidArgument::new(what, format!("{max_len} values overflow usize")))?;
        if chunk_size == 0 {
            return Err(InvalidArgument::new(what, "a chunk size of 0").into());
        }
        let reserved = bytes
            .div_ceil(chunk_size)
            .max(1)
            .checked_mul(chunk_size)
            .ok_or_else(|| InvalidArgument::new(what, format!("{bytes} bytes overflow usize")))?;
        let range = AddressRange::reserve(context, reserved, 0)?;
        // SAFETY: a buffer of no values (never dereferenced, never freed).
        let values = unsafe { DeviceBuffer::borrowed(context, range.as_raw(), 0) };
        Ok(GrowableBuffer { chunks: Vec::new(), accessible: 0, range, chunk_size, len: 0, values })
    }

    value_count!(T, self => self.len);

    /// How many values it can hold before it maps another chunk.
    pub fn capacity(&self) -> usize {
        match size_of::<T>() {
            0 => usize::MAX,
            s => self.chunks.len() * self.chunk_size / s,
        }
    }

    /// The most values it can ever hold (what its range has room for).
    pub fn max_len(&self) -> usize {
        match size_of::<T>() {
            0 => usize::MAX,
            s => self.range.size() / s,
        }
    }

    /// The chunks mapped so far, in address order.
    pub fn mappings(&self) -> &[Mapping] {
        &self.chunks
    }

    /// The address range it lives in.
    pub fn range(&self) -> &AddressRange {
        &self.range
    }

    /// Grows it to `new_len` values (a length at or below the current one changes
    /// nothing), mapping as many chunks as that needs, each with read-write access for its
    /// context's device. New values are zero on the stand-in and unspecified on a GPU.
    /// Beyond [`GrowableBuffer::max_len`]: an [`InvalidArgument`]. On error its length
    /// and values are as they were: the chunks this call mapped are unmapped again, and a
    /// chunk whose unmap fails too stays mapped (reported), to be used by a later growth.
    pub fn grow(&mut self, new_len: usize) -> Result<(), Error> {
        if new_len <= self.len {
            return Ok(());
        }
        if new_len > self.max_len() {
            let message = format!("{new_len} values exceed the {} it was reserved for", self.max_len());
            return Err(InvalidArgument::new("GrowableBuffer::grow", message).into());
        }
        // At most `max_len` values: the bytes fit the reserved range.
        let bytes = new_len.saturating_mul(size_of::<T>());
        let before = self.chunks.len();
        if let Err(e) = self.map_until(bytes) {
            self.undo_growth(before);
            return Err(e);
        }
        let context = self.range.context();
        let keep: Box<dyn Send + Sync> = Box::new(self.chunks.clone());
        // SAFETY: `new_len` values from the range's start are mapped with read-write
        // access by the chunks, which `keep` holds until the buffer's last use is done.
        let values = unsafe { DeviceBuffer::kept_by(context, self.range.as_raw(), new_len, keep) };
        // The same memory: the new handle's release waits for what the old one was used by.
        values.allocation().owner().take_uses_from(self.values.allocation().owner());
        self.values = values;
        self.len = new_len;
        Ok(())
    }

    /// Maps chunks after the last until `bytes` bytes are mapped, then gives the device
    /// read-write access to every chunk that lacks it.
    fn map_until(&mut self, bytes: usize) -> Result<(), Error> {
        let context = self.range.context();
        while self.chunks.len() * self.chunk_size < bytes {
            let memory = PhysicalMemory::new(&context.device(), self.chunk_size, ShareableHandleTypes::NONE)?;
            let offset = self.chunks.len() * self.chunk_size;
            self.chunks.push(Mapping::map(&self.range, offset, &memory)?);
        }
        for chunk in self.chunks.iter().skip(self.accessible) {
            chunk.set_access(&[(&context.device(), Access::ReadWrite)])?;
            self.accessible += 1;
        }
        Ok(())
    }

    /// Unmaps the chunks mapped after the first `before`, last first. A chunk whose unmap
    /// fails stays (it is still mapped, and nothing else can map its addresses): the
    /// failure is reported and a later growth uses it.
    fn undo_growth(&mut self, before: usize) {
        while self.chunks.len() > before {
            let Some(chunk) = self.chunks.pop() else { break };
            let address = chunk.as_raw();
            if let Err((chunk, e)) = chunk.try_unmap() {
                self.chunks.push(chunk);
                if let Some(e) = e {
                    let detail = "undoing a failed growth: the chunk stays mapped, for a later growth to use";
                    crate::report::error(e, crate::report::Arg::Hex(address), Some(detail.into()));
                }
                break;
            }
            self.accessible = self.accessible.min(self.chunks.len());
        }
    }
}

slices_through!(
    /// Its `len` values. A view borrows the buffer, so it cannot shrink or be dropped while
    /// the view lives (it never shrinks).
    GrowableBuffer.values
);
