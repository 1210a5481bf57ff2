//! PCI bus ids: `cuDeviceGetPCIBusId` and `cuDeviceGetByPCIBusId`. Device `d` is
//! `0000:00:XX.0` with `XX` = 6 + `d` in hexadecimal (device 0 is `0000:00:06.0`, as on
//! the machine of driver-facts.md, "Edge cases"), matching the PCI attributes
//! `cuDeviceGetAttribute` reports.

use std::ffi::{c_char, c_int, CStr};

use cudrv::sys::*;

use crate::device::{put_string, valid_device};
use crate::entry::put;
use crate::model::device::FIRST_PCI_DEVICE;
use crate::world::World;

/// The bus id of `dev`.
fn bus_id(dev: CUdevice) -> String {
    format!("0000:00:{:02X}.0", FIRST_PCI_DEVICE + dev)
}

/// `cuDeviceGetPCIBusId`: the id cut to `len - 1` bytes and a NUL.
pub(crate) unsafe fn cu_device_get_pci_bus_id(w: &World, id: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    if len < 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's buffer has room for `len` bytes (non-negative, checked).
    unsafe { put_string(id, len, &bus_id(dev)) }
}

/// The domain, bus, device and function of an id of the forms `domain:bus:device.function`,
/// `domain:bus:device` or `bus:device.function` (hexadecimal, any case).
fn parse(id: &str) -> Option<(u32, u32, u32, u32)> {
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let (head, function) = match id.rsplit_once('.') {
        Some((h, f)) => (h, hex(f)?),
        None => (id, 0),
    };
    match head.split(':').collect::<Vec<_>>().as_slice() {
        [domain, bus, device] => Some((hex(domain)?, hex(bus)?, hex(device)?, function)),
        [bus, device] if id.contains('.') => Some((0, hex(bus)?, hex(device)?, function)),
        _ => None,
    }
}

/// `cuDeviceGetByPCIBusId`: CUDA_ERROR_INVALID_VALUE for a null or malformed id,
/// CUDA_ERROR_INVALID_DEVICE for one no device has.
pub(crate) unsafe fn cu_device_get_by_pci_bus_id(w: &World, dev: *mut CUdevice, id: *const c_char) -> CUresult {
    if dev.is_null() || id.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a non-null, NUL-terminated string from the caller.
    let id = unsafe { CStr::from_ptr(id) };
    let Some(wanted) = id.to_str().ok().and_then(parse) else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    match (0..w.device_count()).find(|&d| parse(&bus_id(d)) == Some(wanted)) {
        Some(d) => put(dev, d),
        None => CUresult::CUDA_ERROR_INVALID_DEVICE,
    }
}
