//! Memory pools (`cuMemPoolCreate`), their stream-ordered allocations, and the sharing of
//! a pool with another process through a POSIX file descriptor.

use std::ffi::c_void;

use crate::device::Device;
use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::memory::{DeviceBuffer, DeviceRepr};
use crate::resources::stream::Stream;
use crate::sys::{
    CUmemAccessDesc, CUmemAccess_flags, CUmemAllocationHandleType, CUmemAllocationType, CUmemLocation,
    CUmemLocationType, CUmemPoolProps, CUmemoryPool,
};

kind!(
    /// The memory pool kind: owned by its context, destroyed in it.
    PoolKind: CUmemoryPool = "MemoryPool", owner Context, driver |o| o.driver(), context |o| Some(o.as_raw()),
    release cuMemPoolDestroy
);

handle_type!(
    /// A memory pool. Clones share it; the last one destroys it (if owned) in its
    /// context. Allocations from it keep it alive.
    MemoryPool: PoolKind => CUmemoryPool, adopt: &Context, "a memory pool"
);

/// The location of `device`'s memory.
fn device_location(device: i32) -> CUmemLocation {
    let mut location = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
    location.__bindgen_anon_1.id = device;
    location
}

impl MemoryPool {
    /// Creates a pool of device memory on `context`'s device. With `shareable`, its
    /// allocations can be exported to another process (POSIX file descriptor handles).
    /// On error nothing is created.
    pub fn new(context: &Context, shareable: bool) -> Result<MemoryPool, CudaError> {
        let mut props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: device_location(context.device()),
            ..Default::default()
        };
        if shareable {
            props.handleTypes = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        let pc = context.driver().pc();
        // SAFETY: valid out-pointer and properties.
        let create = |raw: &mut CUmemoryPool| unsafe { pc.cuMemPoolCreate(raw, &props) };
        Handle::create_out(context.clone(), context.as_raw(), create).map(MemoryPool)
    }

    /// The device's default pool (`cuDeviceGetDefaultMemPool`), which is never destroyed.
    pub fn device_default(context: &Context) -> Result<MemoryPool, CudaError> {
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        unsafe { context.driver().pc().cuDeviceGetDefaultMemPool(&mut raw, context.device()) }?;
        Ok(MemoryPool(Handle::new(context.clone(), raw, Ownership::Borrowed)))
    }

    /// Opens a pool another process exported with [`MemoryPool::export_fd`]. The last clone
    /// destroys this process's view of it. On error nothing is imported.
    pub fn import_fd(context: &Context, fd: i32) -> Result<MemoryPool, CudaError> {
        let pc = context.driver().pc();
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let handle = fd as isize as *mut c_void;
        // SAFETY: for POSIX fds the handle argument is the fd itself, cast to a pointer.
        let create = |raw: &mut CUmemoryPool| unsafe { pc.cuMemPoolImportFromShareableHandle(raw, handle, kind, 0) };
        Handle::create_out(context.clone(), context.as_raw(), create).map(MemoryPool)
    }

    /// The context it was made in.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// Lets `device` read (and, with `write`, write) the pool's memory
    /// (`cuMemPoolSetAccess`): for a pool imported on another device, or peers of its own.
    pub fn set_access(&self, device: &Device, write: bool) -> Result<(), CudaError> {
        let flags = if write {
            CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        } else {
            CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ
        };
        let desc = CUmemAccessDesc { location: device_location(device.as_raw()), flags };
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        // SAFETY: one valid descriptor; the pool is live.
        self.context().run(|| unsafe { pc.cuMemPoolSetAccess(raw, &desc, 1) })
    }

    /// Allocates `len` values of `T` from the pool, ordered on `stream`
    /// (`cuMemAllocFromPoolAsync`); freed on the same stream. On error nothing is
    /// allocated.
    pub fn alloc_async<T: DeviceRepr>(&self, stream: &Stream, len: usize) -> Result<DeviceBuffer<T>, Error> {
        DeviceBuffer::alloc_ordered(stream, Some(self), len)
    }

    /// A file descriptor another process can open the pool with
    /// (`cuMemPoolExportToShareableHandle`). The caller owns the descriptor.
    pub fn export_fd(&self) -> Result<i32, CudaError> {
        let pc = self.0.driver().pc();
        let mut fd: i32 = -1;
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        // SAFETY: for POSIX fds the driver writes an int through the handle pointer.
        unsafe { pc.cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), self.as_raw(), kind, 0) }?;
        Ok(fd)
    }
}
