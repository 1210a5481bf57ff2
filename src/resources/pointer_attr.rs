//! Pointer attributes as one typed query (`cuPointerGetAttributes`): what kind of memory
//! an address is in, which device and context it belongs to, whether it is managed, the
//! allocation it lies in, and that allocation's buffer id.

use std::ffi::{c_uint, c_void};

use crate::error::CudaError;
use crate::sys::{CUcontext, CUdeviceptr, CUmemorytype, CUpointer_attribute};
use crate::Driver;

/// What kind of memory an address is in (`CU_MEMORYTYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryType {
    /// Host memory (pinned, registered or mapped).
    Host,
    /// Device memory (also managed memory, for which [`PointerAttributes::managed`] is true).
    Device,
    /// A CUDA array.
    Array,
    /// Unified memory.
    Unified,
    /// A value this version of cudrv does not know.
    Other(u32),
}

impl MemoryType {
    fn from_raw(v: u32) -> Option<MemoryType> {
        Some(match CUmemorytype(v) {
            CUmemorytype::CU_MEMORYTYPE_HOST => MemoryType::Host,
            CUmemorytype::CU_MEMORYTYPE_DEVICE => MemoryType::Device,
            CUmemorytype::CU_MEMORYTYPE_ARRAY => MemoryType::Array,
            CUmemorytype::CU_MEMORYTYPE_UNIFIED => MemoryType::Unified,
            _ if v == 0 => return None,
            _ => MemoryType::Other(v),
        })
    }
}

/// The attributes of one address, read with one `cuPointerGetAttributes` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PointerAttributes {
    /// The kind of memory; `None` for an address the driver did not allocate (the driver
    /// then answers zeros, not an error).
    pub memory_type: Option<MemoryType>,
    /// The device ordinal of the memory.
    pub device: i32,
    /// The raw context the memory was allocated in (null for memory of no context, such as
    /// memory from virtual memory management).
    pub context: CUcontext,
    /// Whether it is managed memory (`cuMemAllocManaged`).
    pub managed: bool,
    /// The first address of the allocation that holds it.
    pub range_start: CUdeviceptr,
    /// The size in bytes of that allocation.
    pub range_size: usize,
    /// An id the driver gives each allocation, never reused in the process.
    pub buffer_id: u64,
}

impl PointerAttributes {
    /// Reads the attributes of `ptr` (a device address, or a host address of pinned or
    /// registered memory) through `driver`. Needs no current context.
    pub fn of(driver: &'static Driver, ptr: CUdeviceptr) -> Result<PointerAttributes, CudaError> {
        type A = CUpointer_attribute;
        let mut attrs = [
            A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            A::CU_POINTER_ATTRIBUTE_CONTEXT,
            A::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
            A::CU_POINTER_ATTRIBUTE_BUFFER_ID,
        ];
        let (mut memory_type, mut device, mut managed) = (0u32, 0i32, 0u32);
        let (mut context, mut range_start, mut range_size, mut buffer_id): (CUcontext, u64, usize, u64) =
            (std::ptr::null_mut(), 0, 0, 0);
        let mut data: [*mut c_void; 7] = [
            (&raw mut memory_type).cast(),
            (&raw mut device).cast(),
            (&raw mut context).cast(),
            (&raw mut managed).cast(),
            (&raw mut range_start).cast(),
            (&raw mut range_size).cast(),
            (&raw mut buffer_id).cast(),
        ];
        let count = attrs.len() as c_uint;
        // SAFETY: one out-value per attribute, each as wide as the driver writes it (4 bytes
        // for the type, ordinal and managed flag; a pointer or 8 bytes for the others).
        unsafe { driver.pc().cuPointerGetAttributes(count, attrs.as_mut_ptr(), data.as_mut_ptr(), ptr) }?;
        Ok(PointerAttributes {
            memory_type: MemoryType::from_raw(memory_type),
            device,
            context,
            managed: managed != 0,
            range_start,
            range_size,
            buffer_id,
        })
    }
}
