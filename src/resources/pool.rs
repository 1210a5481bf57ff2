//! Memory pools (`cuMemPoolCreate`), their stream-ordered allocations, and the sharing of
//! a pool with another process through a POSIX file descriptor.

use std::ffi::c_void;
use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::resources::memory::DeviceBuffer;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{
    CUmemAllocationHandleType, CUmemAllocationType, CUmemLocation, CUmemLocationType, CUmemPoolProps, CUmemoryPool,
};

/// A memory pool. Clones share it; the last one destroys it (if owned) in its context.
/// Allocations from it keep it alive.
#[derive(Clone)]
pub struct MemoryPool(Arc<PoolInner>);

struct PoolInner {
    context: Context,
    raw: CUmemoryPool,
    owned: bool,
}

// SAFETY: a CUmemoryPool is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for PoolInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for PoolInner {}

/// `{ type, id }` as every cuda.h from 11.8 to 13.5 lays out `CUmemLocation` (13.x makes
/// `id` part of a union): written this way so cudrv builds against all of them.
#[repr(C)]
struct LocationLayout {
    type_: u32,
    id: i32,
}

const _: () = assert!(std::mem::size_of::<CUmemLocation>() == std::mem::size_of::<LocationLayout>());

fn device_location(device: i32) -> CUmemLocation {
    let layout = LocationLayout { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE.0, id: device };
    // SAFETY: same size (checked above) and layout; every bit pattern is a valid CUmemLocation.
    unsafe { std::mem::transmute::<LocationLayout, CUmemLocation>(layout) }
}

impl MemoryPool {
    /// Creates a pool of device memory on `context`'s device. With `shareable`, its
    /// allocations can be exported to another process (POSIX file descriptor handles).
    /// On error nothing is created.
    pub fn new(context: &Context, shareable: bool) -> Result<MemoryPool, CudaError> {
        let d = context.driver();
        let mut props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: device_location(context.device()),
            ..Default::default()
        };
        if shareable {
            props.handleTypes = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        let create = || {
            let mut raw: CUmemoryPool = std::ptr::null_mut();
            // SAFETY: valid out-pointer and properties.
            CudaError::check(d, "cuMemPoolCreate", unsafe { d.p().cuMemPoolCreate(&mut raw, &props) })?;
            Ok(raw)
        };
        MemoryPool::create(context, create)
    }

    /// Runs `create` in `context`, destroying the pool again if only restoring the caller's
    /// context fails, and wraps it as owned.
    fn create(
        context: &Context,
        create: impl FnOnce() -> Result<CUmemoryPool, CudaError>,
    ) -> Result<MemoryPool, CudaError> {
        let d = context.driver();
        let undo = Undo {
            call: "cuMemPoolDestroy",
            arg: |p: &CUmemoryPool| handle_arg(*p),
            // SAFETY: the pool was just made and is used by nothing else.
            run: |p: &CUmemoryPool| unsafe { d.p().cuMemPoolDestroy(*p) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(MemoryPool::wrap(context, raw, true))
    }

    /// The device's default pool (`cuDeviceGetDefaultMemPool`), which is never destroyed.
    pub fn device_default(context: &Context) -> Result<MemoryPool, CudaError> {
        let d = context.driver();
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        let status = unsafe { d.p().cuDeviceGetDefaultMemPool(&mut raw, context.device()) };
        CudaError::check(d, "cuDeviceGetDefaultMemPool", status)?;
        Ok(MemoryPool::wrap(context, raw, false))
    }

    /// Opens a pool another process exported with [`MemoryPool::export_fd`]. The last clone
    /// destroys this process's view of it. On error nothing is imported.
    pub fn import_fd(context: &Context, fd: i32) -> Result<MemoryPool, CudaError> {
        let d = context.driver();
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let handle = fd as isize as *mut c_void;
        let create = || {
            let mut raw: CUmemoryPool = std::ptr::null_mut();
            // SAFETY: for POSIX fds the handle argument is the fd itself, cast to a pointer.
            let status = unsafe { d.p().cuMemPoolImportFromShareableHandle(&mut raw, handle, kind, 0) };
            CudaError::check(d, "cuMemPoolImportFromShareableHandle", status)?;
            Ok(raw)
        };
        MemoryPool::create(context, create)
    }

    /// Adopts a pool: the last clone destroys it.
    ///
    /// # Safety
    /// `raw` must be a live pool of `context`'s device that nothing else destroys.
    pub unsafe fn from_raw(context: &Context, raw: CUmemoryPool) -> MemoryPool {
        MemoryPool::wrap(context, raw, true)
    }

    /// Uses a pool someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must stay a live pool while this handle and its allocations are used.
    pub unsafe fn borrowed(context: &Context, raw: CUmemoryPool) -> MemoryPool {
        MemoryPool::wrap(context, raw, false)
    }

    fn wrap(context: &Context, raw: CUmemoryPool, owned: bool) -> MemoryPool {
        MemoryPool(Arc::new(PoolInner { context: context.clone(), raw, owned }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUmemoryPool {
        self.0.raw
    }

    /// The context it was made in.
    pub fn context(&self) -> &Context {
        &self.0.context
    }

    /// Allocates `len` bytes from the pool, ordered on `stream`
    /// (`cuMemAllocFromPoolAsync`); freed on the same stream. On error nothing is
    /// allocated.
    pub fn alloc_async(&self, stream: &Stream, len: usize) -> Result<DeviceBuffer, CudaError> {
        DeviceBuffer::alloc_ordered(stream, Some(self), len)
    }

    /// A file descriptor another process can open the pool with
    /// (`cuMemPoolExportToShareableHandle`). The caller owns the descriptor.
    pub fn export_fd(&self) -> Result<i32, CudaError> {
        let d = self.0.context.driver();
        let mut fd: i32 = -1;
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        // SAFETY: for POSIX fds the driver writes an int through the handle pointer.
        let status =
            unsafe { d.p().cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), self.0.raw, kind, 0) };
        CudaError::check(d, "cuMemPoolExportToShareableHandle", status)?;
        Ok(fd)
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the pool; its allocations hold clones, so none is left.
        let destroy = || unsafe { d.p().cuMemPoolDestroy(raw) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuMemPoolDestroy", handle_arg(raw), destroy, || {});
    }
}
