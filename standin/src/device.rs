//! Devices: count, name, memory, attributes and UUID of the virtual devices
//! (`model/device.rs` says what each one is).

use std::ffi::{c_char, c_int};

use cudrv::sys::*;

use crate::entry::put;
use crate::model::device::{
    DEVICE_CC, DEVICE_NAME, DEVICE_SM_COUNT, DEVICE_TOTAL_MEM, FIRST_PCI_DEVICE, MAX_SHARED_OPTIN,
};
use crate::world::World;

/// Whether `dev` is a device ordinal of `w`.
pub(crate) fn valid_device(w: &World, dev: CUdevice) -> bool {
    (0..w.device_count()).contains(&dev)
}

pub(crate) unsafe fn cu_device_get_count(w: &World, count: *mut c_int) -> CUresult {
    put(count, w.device_count())
}

pub(crate) unsafe fn cu_device_get(w: &World, device: *mut CUdevice, ordinal: c_int) -> CUresult {
    // facts: cuDeviceGet(&d, 5) on a one-GPU machine -> CUDA_ERROR_INVALID_DEVICE.
    if !valid_device(w, ordinal) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(device, ordinal)
}

/// `cuDeviceGetName`: facts: a negative length writes the whole name (as if the buffer
/// were large enough); length 0 crashes a real driver, here CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_device_get_name(w: &World, name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    // SAFETY: the caller's buffer has room for `len` bytes (any length for a negative one).
    unsafe { put_string(name, len, DEVICE_NAME) }
}

/// Writes `s` and a NUL into the caller's buffer of `len` bytes, cut to fit;
/// CUDA_ERROR_INVALID_VALUE for a null buffer or length 0. A negative length writes all
/// of `s`, as a real driver does for `cuDeviceGetName`.
///
/// # Safety
/// `buf` is null or has room for `len` bytes (for all of `s` and its NUL when negative).
pub(crate) unsafe fn put_string(buf: *mut c_char, len: c_int, s: &str) -> CUresult {
    if buf.is_null() || len == 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let bytes = s.as_bytes();
    let room = usize::try_from(len).map_or(bytes.len(), |l| l - 1);
    let n = bytes.len().min(room);
    // SAFETY: the buffer has room for n + 1 bytes (see above).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    CUresult::CUDA_SUCCESS
}

pub(crate) unsafe fn cu_device_total_mem(w: &World, bytes: *mut usize, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(bytes, DEVICE_TOTAL_MEM)
}

pub(crate) unsafe fn cu_device_get_attribute(
    w: &World,
    value: *mut c_int,
    attrib: CUdevice_attribute,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    type A = CUdevice_attribute;
    let v = match attrib {
        a if a.0 == 0 || a.0 >= A::CU_DEVICE_ATTRIBUTE_MAX.0 => return CUresult::CUDA_ERROR_INVALID_VALUE,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => DEVICE_CC.0,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR => DEVICE_CC.1,
        A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT => DEVICE_SM_COUNT,
        A::CU_DEVICE_ATTRIBUTE_WARP_SIZE => 32,
        A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X | A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y => 1024,
        A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z => 64,
        A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X => c_int::MAX,
        A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y | A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z => 65535,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK => 48 << 10,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => MAX_SHARED_OPTIN,
        A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => 228 << 10,
        A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR => 2048,
        A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR => 32,
        A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH => 1,
        A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING | A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY => 1,
        A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED => 1,
        A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID => FIRST_PCI_DEVICE + dev,
        A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK => 65536,
        A::CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS => 1,
        // Managed memory, migrated and accessed concurrently by host and device (an H200's).
        A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY | A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS => 1,
        _ => 0,
    };
    put(value, v)
}

pub(crate) unsafe fn cu_device_get_uuid(w: &World, uuid: *mut CUuuid, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let mut bytes = [0 as c_char; 16];
    for (b, s) in bytes.iter_mut().zip(b"cudrv-standin-0".iter().chain(std::iter::once(&0u8))) {
        *b = *s as c_char;
    }
    if let Some(last) = bytes.get_mut(15) {
        *last = c_char::try_from(dev).unwrap_or(0);
    }
    put(uuid, CUuuid { bytes })
}
