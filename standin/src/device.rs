//! Devices: count, name, memory, attributes and UUID of the virtual devices.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::LazyLock;

use cudrv::sys::*;

use crate::entry::put;

/// The name of every virtual device (`cuDeviceGetName`).
pub const DEVICE_NAME: &str = "cudrv stand-in device";
/// The memory of every virtual device in bytes (`cuDeviceTotalMem`): 80 GiB.
pub const DEVICE_TOTAL_MEM: usize = 80 << 30;
/// The compute capability of every virtual device (major, minor): 9.0.
pub const DEVICE_CC: (c_int, c_int) = (9, 0);
/// The multiprocessor count of every virtual device
/// (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`).
pub const DEVICE_SM_COUNT: c_int = 132;

/// The most dynamic shared memory a block may use (an H200's opt-in limit, 227 KiB).
pub(crate) const MAX_SHARED_OPTIN: c_int = 227 << 10;
/// The PCI device number of device 0 (`0000:00:06.0`, as on the machine of
/// driver-facts.md); device `d` is `6 + d` on bus 0.
pub(crate) const FIRST_PCI_DEVICE: c_int = 6;

/// The most virtual devices there can be.
pub const MAX_DEVICES: c_int = 8;
/// Environment variable choosing the number of virtual devices (0 to [`MAX_DEVICES`]).
pub const ENV_DEVICES: &str = "CUDRV_STANDIN_DEVICES";

/// The count set by [`set_device_count`]; -1: none set.
static SET_COUNT: AtomicI32 = AtomicI32::new(-1);

/// Number of virtual devices: the last [`set_device_count`], else `CUDRV_STANDIN_DEVICES`
/// (0 to 8; another value is ignored), default 1.
pub fn device_count() -> c_int {
    static FROM_ENV: LazyLock<c_int> = LazyLock::new(|| {
        std::env::var(ENV_DEVICES)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| (0..=MAX_DEVICES).contains(n))
            .unwrap_or(1)
    });
    match SET_COUNT.load(Ordering::Acquire) {
        n if n >= 0 => n,
        _ => *FROM_ENV,
    }
}

/// Sets the number of virtual devices of this process (0 to [`MAX_DEVICES`]), in place of
/// `CUDRV_STANDIN_DEVICES`, for every emulated version; returns `false` (and changes
/// nothing) for another count. Process-wide: meant for a test binary whose tests all want
/// the same count. Devices beyond a lowered count become invalid ordinals; what was made
/// on them stays as it is.
pub fn set_device_count(count: c_int) -> bool {
    if !(0..=MAX_DEVICES).contains(&count) {
        return false;
    }
    SET_COUNT.store(count, Ordering::Release);
    true
}

pub(crate) fn valid_device(dev: CUdevice) -> bool {
    (0..device_count()).contains(&dev)
}

pub(crate) unsafe fn cu_device_get_count(count: *mut c_int) -> CUresult {
    put(count, device_count())
}

pub(crate) unsafe fn cu_device_get(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    // facts: cuDeviceGet(&d, 5) on a one-GPU machine -> CUDA_ERROR_INVALID_DEVICE.
    if !valid_device(ordinal) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(device, ordinal)
}

/// `cuDeviceGetName`: facts: a negative length writes the whole name (as if the buffer
/// were large enough); length 0 crashes a real driver, here CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_device_get_name(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    if !valid_device(dev) {
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

pub(crate) unsafe fn cu_device_total_mem(bytes: *mut usize, dev: CUdevice) -> CUresult {
    if !valid_device(dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(bytes, DEVICE_TOTAL_MEM)
}

pub(crate) unsafe fn cu_device_get_attribute(value: *mut c_int, attrib: CUdevice_attribute, dev: CUdevice) -> CUresult {
    if !valid_device(dev) {
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
        _ => 0,
    };
    put(value, v)
}

pub(crate) unsafe fn cu_device_get_uuid(uuid: *mut CUuuid, dev: CUdevice) -> CUresult {
    if !valid_device(dev) {
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
