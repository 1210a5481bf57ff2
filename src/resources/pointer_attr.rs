//! Pointer attributes as one typed query (`cuPointerGetAttributes`): what kind of memory
//! an address is in, which device and context it belongs to, whether it is managed, the
//! allocation it lies in and its buffer id, its device and host addresses, whether it is
//! mapped, the handle types it can be exported as, its pool, access and mapping.

use std::ffi::{c_uint, c_void};

use crate::error::Error;
use crate::resources::flags::ShareableHandleTypes;
use crate::resources::vmm::Access;
use crate::sys::{CUcontext, CUdeviceptr, CUmemoryPool, CUmemorytype, CUpointer_attribute};
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
    /// The address a kernel uses for it (`CU_POINTER_ATTRIBUTE_DEVICE_POINTER`; for host
    /// memory mapped into the device, the mapped address); 0 if it has none.
    pub device_pointer: CUdeviceptr,
    /// The address the host uses for it (`CU_POINTER_ATTRIBUTE_HOST_POINTER`: pinned,
    /// registered and managed memory); null if the host cannot address it.
    pub host_pointer: *mut c_void,
    /// Whether the address is backed by memory (`CU_POINTER_ATTRIBUTE_MAPPED`: false for a
    /// reserved virtual address nothing is mapped at).
    pub mapped: bool,
    /// The shareable handle types the allocation may be exported as
    /// (`CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES`; a physical allocation's
    /// [`crate::PhysicalMemory::shareable_types`]).
    pub allowed_handle_types: ShareableHandleTypes,
    /// Whether it can be shared with `cuIpcGetMemHandle` (legacy IPC).
    pub legacy_ipc_capable: bool,
    /// Whether it can be used for GPUDirect RDMA.
    pub gpu_direct_rdma_capable: bool,
    /// What the current context's device may do with it (`CU_POINTER_ATTRIBUTE_ACCESS_FLAGS`).
    pub access: Access,
    /// The raw pool it was allocated from (`cuMemAllocFromPoolAsync`, `cuMemAllocAsync`);
    /// null otherwise.
    pub mempool: CUmemoryPool,
    /// The start of the physical mapping that holds it (`CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR`);
    /// `None` on a driver before 12.0 (not asked).
    pub mapping_base: Option<CUdeviceptr>,
    /// The size of that mapping (`CU_POINTER_ATTRIBUTE_MAPPING_SIZE`); `None` before 12.0.
    pub mapping_size: Option<usize>,
    /// A process-wide id of the physical allocation (`CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID`);
    /// `None` before 12.0.
    pub memory_block_id: Option<u64>,
}

/// The attributes asked for, with the driver version from which cudrv asks each (older
/// drivers refuse the whole query for an attribute they do not know).
const ASKED: [(CUpointer_attribute, u32); 18] = {
    type A = CUpointer_attribute;
    [
        (A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0),
        (A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 0),
        (A::CU_POINTER_ATTRIBUTE_CONTEXT, 0),
        (A::CU_POINTER_ATTRIBUTE_IS_MANAGED, 0),
        (A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 0),
        (A::CU_POINTER_ATTRIBUTE_RANGE_SIZE, 0),
        (A::CU_POINTER_ATTRIBUTE_BUFFER_ID, 0),
        (A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER, 0),
        (A::CU_POINTER_ATTRIBUTE_HOST_POINTER, 0),
        (A::CU_POINTER_ATTRIBUTE_MAPPED, 0),
        (A::CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, 0),
        (A::CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, 0),
        (A::CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, 0),
        (A::CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, 0),
        (A::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 0),
        (A::CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, 12000),
        (A::CU_POINTER_ATTRIBUTE_MAPPING_SIZE, 12000),
        (A::CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, 12000),
    ]
};

impl PointerAttributes {
    /// Reads the attributes of `ptr` (a device address, or a host address of pinned,
    /// registered or managed memory) through `driver`, in one `cuPointerGetAttributes`
    /// call (the attributes a driver before 12.0 does not know are not asked: their fields
    /// are `None`). Needs no current context, except for [`PointerAttributes::access`],
    /// which is the current context's device's.
    pub fn of(driver: &'static Driver, ptr: CUdeviceptr) -> Result<PointerAttributes, Error> {
        let version = driver.version_code();
        // Every value is read into 8 zeroed bytes: the 4-byte ones land in the low half
        // (little-endian, as every platform cudrv supports).
        let mut values = [0u64; ASKED.len()];
        let mut attrs: Vec<CUpointer_attribute> = Vec::with_capacity(ASKED.len());
        let mut data: Vec<*mut c_void> = Vec::with_capacity(ASKED.len());
        for (&(attr, since), value) in ASKED.iter().zip(values.iter_mut()) {
            if version >= since {
                attrs.push(attr);
                data.push((value as *mut u64).cast());
            }
        }
        let count = attrs.len() as c_uint;
        // SAFETY: one out-value of 8 bytes per attribute, as wide as the widest the driver
        // writes (4 bytes, a pointer or 8 bytes).
        unsafe { driver.pc().cuPointerGetAttributes(count, attrs.as_mut_ptr(), data.as_mut_ptr(), ptr) }?;
        let [memory_type, device, context, managed, range_start, range_size, buffer_id, device_pointer, host_pointer, mapped, handle_types, legacy_ipc, rdma, access, mempool, mapping_base, mapping_size, block_id] =
            values;
        let low = |v: u64| v as u32;
        let newer = |v: u64| (version >= 12000).then_some(v);
        Ok(PointerAttributes {
            memory_type: MemoryType::from_raw(low(memory_type)),
            device: low(device) as i32,
            context: context as usize as CUcontext,
            managed: low(managed) != 0,
            range_start,
            range_size: range_size as usize,
            buffer_id,
            device_pointer,
            host_pointer: host_pointer as usize as *mut c_void,
            mapped: low(mapped) != 0,
            allowed_handle_types: ShareableHandleTypes::from_bits_retain(low(handle_types)),
            legacy_ipc_capable: low(legacy_ipc) != 0,
            gpu_direct_rdma_capable: low(rdma) != 0,
            access: match low(access) {
                1 => Access::Read,
                3 => Access::ReadWrite,
                _ => Access::None,
            },
            mempool: mempool as usize as CUmemoryPool,
            mapping_base: newer(mapping_base),
            mapping_size: newer(mapping_size).map(|s| s as usize),
            memory_block_id: newer(block_id),
        })
    }
}
