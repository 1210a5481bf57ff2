//! Device attributes: the one table of what `cuDeviceGetAttribute` answers for every
//! attribute number, and the last attribute each emulated driver version knows.
//!
//! Every value is the H200's (driver 580.159.04, CUDA 13.0; the committed copy of
//! `h200-device-attributes.txt`, `standin/tests/data/h200-device-attributes.txt`), but
//! for two kinds of row:
//! - a value the stand-in's configuration decides (device ordinal, multiprocessor count,
//!   compute capability, ...) comes from `model/device.rs`, where the rest of the stand-in
//!   reads it (they agree with the H200's for device 0);
//! - a capability is reported present only when the stand-in emulates it (`has(true)`: the
//!   family of entry points is in `table.rs`; a unit test there checks every such row
//!   against the table, so that implementing an entry and forgetting its row fails). Those
//!   the stand-in lacks read 0 where the H200 reads 1; each is listed in
//!   `conformance/deliberate-differences.txt` and docs/stand-in.md ("Device attributes").
//!
//! Numbers past the newest attribute the emulated version knows answer
//! CUDA_ERROR_INVALID_VALUE, as a real driver does for an attribute its `cuda.h` did not
//! have (the H200: 148..=159 at 13.0; the CUDA Programming Guide says the same of 11.2
//! drivers asked for `MEMPOOL_SUPPORTED_HANDLE_TYPES`). See [`known_below`].

use std::ffi::c_int;

use cudrv::sys::{CUdevice, CUdevice_attribute};

use crate::model::device::{
    CLOCK_RATE_KHZ, DEVICE_CC, DEVICE_SM_COUNT, FIRST_PCI_DEVICE, MAX_SHARED_OPTIN, SHARED_PER_MULTIPROCESSOR,
};

use CUdevice_attribute as A;

/// How a row's value is found.
#[derive(Clone, Copy)]
pub(crate) enum Value {
    /// The same on every device.
    Fixed(c_int),
    /// The device's own (from its ordinal).
    PerDevice(fn(CUdevice) -> c_int),
}

/// 1 when the stand-in emulates a capability, else 0.
const fn has(emulated: bool) -> Value {
    Value::Fixed(if emulated { 1 } else { 0 })
}

use Value::{Fixed, PerDevice};

/// `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR` as a bit of a handle-type mask.
const POSIX_FD_BIT: c_int = 1;

/// The PCI id of the H200's GPU (`CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID`: device 0x2335,
/// vendor 0x10de) and of its board (`GPU_PCI_SUBSYSTEM_ID`: 0x18bf, vendor 0x10de).
const GPU_PCI_DEVICE_ID: c_int = 0x2335_10de;
const GPU_PCI_SUBSYSTEM_ID: c_int = 0x18bf_10de;

/// Every attribute number a driver of 13.5 knows, in order, with its value.
#[rustfmt::skip]
pub(crate) const ATTRIBUTES: &[(A, Value)] = &[
    (A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, Fixed(1024)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, Fixed(1024)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, Fixed(1024)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, Fixed(64)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, Fixed(c_int::MAX)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, Fixed(65535)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, Fixed(65535)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, Fixed(48 << 10)),
    (A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, Fixed(64 << 10)),
    (A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, Fixed(32)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_PITCH, Fixed(c_int::MAX)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, Fixed(65536)),
    (A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, Fixed(CLOCK_RATE_KHZ)),
    (A::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, Fixed(512)),
    (A::CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Fixed(DEVICE_SM_COUNT)),
    (A::CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_INTEGRATED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, has(true)),
    // CU_COMPUTEMODE_DEFAULT.
    (A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH, Fixed(131072)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH, Fixed(131072)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT, Fixed(65536)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS, Fixed(2048)),
    (A::CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT, Fixed(512)),
    (A::CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED, Fixed(1)),
    // Device d is 0000:00:(6 + d).0 (pci.rs).
    (A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, PerDevice(|d| FIRST_PCI_DEVICE + d)),
    (A::CU_DEVICE_ATTRIBUTE_TCC_DRIVER, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, Fixed(3_201_000)),
    (A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, Fixed(6016)),
    (A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Fixed(60 << 20)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, Fixed(2048)),
    (A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, Fixed(3)),
    (A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS, Fixed(2048)),
    // Deprecated ("do not use"); the H200's answer.
    (A::CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, Fixed(8192)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, Fixed(8192)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, Fixed(32)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS, Fixed(2046)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH, Fixed(131072)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT, Fixed(65536)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH, Fixed(16384)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS, Fixed(2048)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS, Fixed(2048)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS, Fixed(2046)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH, Fixed(1 << 28)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH, Fixed(131072)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, Fixed(65000)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH, Fixed(2_097_120)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Fixed(DEVICE_CC.0)),
    (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Fixed(DEVICE_CC.1)),
    (A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH, Fixed(32768)),
    (A::CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, Fixed(SHARED_PER_MULTIPROCESSOR)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, Fixed(65536)),
    (A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, Fixed(0)),
    // A board of one GPU each: a group of its own (the H200's device 0: 0).
    (A::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID, PerDevice(|d| d)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, Fixed(2)),
    (A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, Fixed(1)),
    // Registered host memory has the same address on the device (host_register.rs).
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, Fixed(MAX_SHARED_OPTIN)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, Fixed(32)),
    // cuMemCreate accepts a compression type (compression is invisible to a program).
    (A::CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, Fixed(39_321_600)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, Fixed(128 << 20)),
    // No GPUDirect RDMA: there is no device for a third party to reach (H200: 1).
    (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, Fixed(1024)),
    (A::CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED, has(false)),
    (A::CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, Fixed(0)),
    // CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST: cuFlushGPUDirectRDMAWrites.
    (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, has(true)),
    // CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE (no RDMA; the H200: 100, OWNER).
    (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING, Fixed(0)),
    // POSIX_FILE_DESCRIPTOR pools (ipc.rs); no FABRIC ones (the H200: 9, both).
    (A::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
        Fixed(POSIX_FD_BIT)),
    (A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED, has(false)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, has(true)),
    // cuMemGetHandleForAddressRange is answered, but the stand-in has no dma-buf to give.
    (A::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, has(false)),
    (A::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT, Fixed(4)),
    (A::CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, has(true)),
    // Fabric allocations answer as on the H200 without an IMEX channel (vmm.rs).
    (A::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, Fixed(1)),
    // CU_DEVICE_NUMA_CONFIG_NONE, so no NUMA id of the GPU's memory.
    (A::CU_DEVICE_ATTRIBUTE_NUMA_CONFIG, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_NUMA_ID, Fixed(-1)),
    (A::CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MPS_ENABLED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, Fixed(GPU_PCI_DEVICE_ID)),
    (A::CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID, Fixed(GPU_PCI_SUBSYSTEM_ID)),
    // cuMemCreate takes device locations only (vmm.rs; the H200: 1).
    (A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, Fixed(0)),
    // Pools take host and host NUMA locations (pool.rs).
    (A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, has(true)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED, Fixed(0)),
    // Past 13.0 the H200's answers are not recorded: these are guesses (docs/stand-in.md).
    (A::CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED, has(true)),
    // One locality domain holding every multiprocessor.
    (A::CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT, Fixed(1)),
    (A::CU_DEVICE_ATTRIBUTE_MAX_OVERSIZED_SHARED_MEMORY_PER_BLOCK, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_D3D12_CIG_STREAMS_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_DMA_BUF_MMAP_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_MULTICAST_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT, Fixed(DEVICE_SM_COUNT)),
    (A::CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_SUPPORTED_HANDLE_TYPES, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_VULKAN_CIG_STREAMS_SUPPORTED, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_TENSOR_MAP_LARGE_TENSOR_MIN_SIZE, Fixed(0)),
    (A::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED, Fixed(0)),
];

/// The first attribute number a driver of each version does not know (its `cuda.h`'s
/// `CU_DEVICE_ATTRIBUTE_MAX`), from the version that brought it; drivers older than the
/// first row know numbers below 120 (11.3 added 116..=119:
/// `GPU_DIRECT_RDMA_*` and `MEMPOOL_SUPPORTED_HANDLE_TYPES`, which the CUDA Programming
/// Guide's stream-ordered allocator chapter says 11.2 drivers refuse).
///
/// Sources: `cuda.h` of each toolkit as cudarc 0.18.1 carries it (`src/driver/sys/mod.rs`,
/// one enum per toolkit 11.4 to 13.0: 120, 122 at 11.6, 125 at 11.7 and 11.8, 130 at 12.0,
/// 133 at 12.1, 135 at 12.2 to 12.4, 136 at 12.5 and 12.6, 144 at 12.8 and 12.9, 148 at
/// 13.0); the H200's driver (13.0: 147 known, 148 refused, h200-device-attributes.txt);
/// the Driver API reference of 13.1 (`ATOMIC_REDUCTION_SUPPORTED` = 148 the last) and
/// 13.4 (through `GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED` = 161); cudrv's
/// generated `sys.rs` (13.5: 162). Guesses: 12.7 (driver 565, no toolkit header) as 12.6;
/// 13.2 and 13.3 (no header seen) as 13.1.
pub(crate) const KNOWN_BELOW: &[(u32, u32)] = &[
    (11060, 122),
    (11070, 125),
    (12000, 130),
    (12010, 133),
    (12020, 135),
    (12050, 136),
    (12080, 144),
    (13000, 148),
    (13010, 149),
    (13040, 162),
];

/// The first attribute number a driver of `version` does not know (see [`KNOWN_BELOW`]).
pub(crate) fn known_below(version: u32) -> u32 {
    KNOWN_BELOW.iter().take_while(|&&(from, _)| from <= version).last().map_or(120, |&(_, limit)| limit)
}

/// What device `dev` answers for `attribute` on a driver of `version`: `None` (the caller
/// answers CUDA_ERROR_INVALID_VALUE) for 0 or a number the version does not know.
pub(crate) fn value(version: u32, attribute: A, dev: CUdevice) -> Option<c_int> {
    if !(1..known_below(version)).contains(&attribute.0) {
        return None;
    }
    ATTRIBUTES.iter().find(|(a, _)| *a == attribute).map(|&(_, v)| match v {
        Fixed(n) => n,
        PerDevice(f) => f(dev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_each_number_once_in_order_up_to_the_newest_header() {
        let numbers: Vec<u32> = ATTRIBUTES.iter().map(|(a, _)| a.0).collect();
        let expected: Vec<u32> = (1..A::CU_DEVICE_ATTRIBUTE_MAX.0).collect();
        assert_eq!(numbers, expected);
        assert_eq!(known_below(13050), A::CU_DEVICE_ATTRIBUTE_MAX.0);
    }

    #[test]
    fn the_limit_grows_with_the_version() {
        assert!(KNOWN_BELOW.windows(2).all(|w| matches!(w, [a, b] if a.0 < b.0 && a.1 < b.1)));
        assert_eq!(known_below(11030), 120);
        assert_eq!(known_below(12040), 135);
        assert_eq!(known_below(12070), 136);
        assert_eq!(known_below(13000), 148);
        assert_eq!(value(13000, A(147), 0), Some(0));
        assert_eq!(value(13000, A(148), 0), None);
        assert!(value(13050, A(148), 0).is_some());
        assert_eq!(value(13050, A(0), 0), None);
        assert_eq!(value(13050, A(u32::MAX), 0), None);
    }
}
