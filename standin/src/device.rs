//! Devices: count, name, memory, attributes and UUID of the virtual devices
//! (`model/device.rs` says what each one is).

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;

use cudrv::sys::*;

use crate::entry::put;
use crate::model::device::{DEVICE_NAME, DEVICE_TOTAL_MEM};
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

/// `cuDeviceGetAttribute`: the value of `crate::device_attributes`' table for the
/// emulated version. CUDA_ERROR_INVALID_DEVICE for a device the world lacks;
/// CUDA_ERROR_INVALID_VALUE, writing nothing, for a number the emulated version does not
/// know or a null `value`.
pub(crate) unsafe fn cu_device_get_attribute(
    w: &World,
    value: *mut c_int,
    attrib: CUdevice_attribute,
    dev: CUdevice,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    match crate::device_attributes::value(w.version.load(Ordering::Acquire), attrib, dev) {
        Some(v) => put(value, v),
        None => CUresult::CUDA_ERROR_INVALID_VALUE,
    }
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
