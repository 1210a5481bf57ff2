//! Initialisation, the driver version and devices.

use std::os::raw::c_char;

use super::{case, number32, Case, Out, UNTOUCHED};
use cudrv::sys::*;

type A = CUdevice_attribute;

pub fn cases() -> Vec<Case> {
    vec![
        case!("init.flags_0", Bare, |e| { Out::of(e.p.cuInit(0)) }),
        case!("init.flags_1", Bare, |e| { Out::of(e.p.cuInit(1)) }),
        case!("init.twice", Bare, |e| {
            let first = e.p.cuInit(0);
            Out::of(e.p.cuInit(0)).eq("first", first)
        }),
        case!("init.device_count_before_init", Bare, |e| {
            let mut n = -7;
            Out::of(e.p.cuDeviceGetCount(&mut n)).eq("count", n)
        }),
        case!("version.driver_get_version", Bare, |e| {
            let mut v = -7;
            Out::of(e.p.cuDriverGetVersion(&mut v)).info("version", v)
        }),
        case!("version.driver_get_version_null", Bare, |e| { Out::of(e.p.cuDriverGetVersion(std::ptr::null_mut())) }),
        case!("device.count", Init, |e| {
            let mut n = -7;
            let st = e.p.cuDeviceGetCount(&mut n);
            Out::of(st).eq("at_least_one", n >= 1)
        }),
        case!("device.count_null", Init, |e| { Out::of(e.p.cuDeviceGetCount(std::ptr::null_mut())) }),
        case!("device.get_0", Init, |e| {
            let mut d = -7;
            Out::of(e.p.cuDeviceGet(&mut d, 0)).eq("device", d)
        }),
        case!("device.get_negative", Init, |e| {
            let mut d = -7;
            Out::of(e.p.cuDeviceGet(&mut d, -1)).eq("device", d)
        }),
        case!("device.get_past_count", Init, |e| {
            let mut n = 0;
            super::step!(e.p.cuDeviceGetCount(&mut n));
            let mut d = -7;
            Out::of(e.p.cuDeviceGet(&mut d, n)).eq("device", d)
        }),
        case!("device.get_null", Init, |e| { Out::of(e.p.cuDeviceGet(std::ptr::null_mut(), 0)) }),
        case!("device.name", Init, |e| {
            let mut buf = [0 as c_char; 256];
            let st = e.p.cuDeviceGetName(buf.as_mut_ptr(), 256, e.dev);
            Out::of(st).info("name", super::text(buf.as_ptr())).eq("nonempty", buf[0] != 0)
        }),
        case!("device.name_length_4", Init, |e| {
            let mut buf = [b'#' as c_char; 16];
            let st = e.p.cuDeviceGetName(buf.as_mut_ptr(), 4, e.dev);
            let terminated = buf.iter().take(4).any(|&c| c == 0);
            Out::of(st).eq("terminated_within_4", terminated).eq("byte_4_untouched", buf[4] == b'#' as c_char)
        }),
        case!("device.name_length_0", Init, |e| {
            let mut buf = [b'#' as c_char; 16];
            Out::of(e.p.cuDeviceGetName(buf.as_mut_ptr(), 0, e.dev)).eq("written", buf[0] != b'#' as c_char)
        }),
        case!("device.name_length_negative", Init, |e| {
            let mut buf = [0 as c_char; 256];
            let st = e.p.cuDeviceGetName(buf.as_mut_ptr(), -1, e.dev);
            Out::of(st).eq("nonempty", buf[0] != 0)
        }),
        case!("device.name_bad_device", Init, |e| {
            let mut buf = [0 as c_char; 64];
            Out::of(e.p.cuDeviceGetName(buf.as_mut_ptr(), 64, 99))
        }),
        case!("device.total_mem", Init, |e| {
            let mut b: usize = 0;
            let st = e.p.cuDeviceTotalMem(&mut b, e.dev);
            Out::of(st).eq("nonzero", b > 0).info("bytes", b)
        }),
        case!("device.uuid", Init, |e| {
            let mut u = CUuuid::default();
            let st = e.p.cuDeviceGetUuid(&mut u, e.dev);
            Out::of(st).eq("nonzero", u.bytes.iter().any(|&b| b != 0))
        }),
        case!("device.pci_bus_id", Init, |e| {
            let mut buf = [0 as c_char; 64];
            let st = e.p.cuDeviceGetPCIBusId(buf.as_mut_ptr(), 64, e.dev);
            let id = super::text(buf.as_ptr());
            Out::of(st).info("id", &id).eq("shape", pci_shape(&id))
        }),
        case!("device.by_pci_bus_id", Init, |e| {
            let mut buf = [0 as c_char; 64];
            super::step!(e.p.cuDeviceGetPCIBusId(buf.as_mut_ptr(), 64, e.dev));
            let mut d = -7;
            Out::of(e.p.cuDeviceGetByPCIBusId(&mut d, buf.as_ptr())).eq("device", d)
        }),
        case!("device.by_pci_bus_id_unknown", Init, |e| {
            let mut d = -7;
            Out::of(e.p.cuDeviceGetByPCIBusId(&mut d, c"0000:ff:1f.7".as_ptr())).eq("device", d)
        }),
        case!("device.attribute_max_threads", Init, |e| {
            attr(e, A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, true)
        }),
        case!("device.attribute_max_block_dim_z", Init, |e| { attr(e, A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, true) }),
        case!("device.attribute_max_grid_dim_x", Init, |e| { attr(e, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, true) }),
        case!("device.attribute_max_grid_dim_y", Init, |e| { attr(e, A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, true) }),
        case!("device.attribute_warp_size", Init, |e| { attr(e, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, true) }),
        case!("device.attribute_cc_major", Init, |e| {
            attr(e, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, false)
        }),
        case!("device.attribute_sm_count", Init, |e| { attr(e, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, false) }),
        case!("device.attribute_shared_optin", Init, |e| {
            attr(e, A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, false)
        }),
        case!("device.attribute_memory_pools", Init, |e| {
            attr(e, A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, true)
        }),
        case!("device.attribute_unknown", Init, |e| { attr(e, CUdevice_attribute(100_000), true) }),
        case!("device.attribute_bad_device", Init, |e| {
            let mut v = -7;
            Out::of(e.p.cuDeviceGetAttribute(&mut v, A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99)).eq("value", v)
        }),
        case!("device.can_access_peer_self", Init, |e| {
            let mut v = -7;
            Out::of(e.p.cuDeviceCanAccessPeer(&mut v, e.dev, e.dev)).eq("value", v)
        }),
        case!("device.primary_state_unretained", Init, |e| {
            let (mut flags, mut active) = (UNTOUCHED as u32, -7);
            let st = e.p.cuDevicePrimaryCtxGetState(e.dev, &mut flags, &mut active);
            Out::of(st).eq("flags", number32(flags)).eq("active", active)
        }),
        case!("device.primary_state_retained", Ctx, |e| {
            let (mut flags, mut active) = (UNTOUCHED as u32, -7);
            let st = e.p.cuDevicePrimaryCtxGetState(e.dev, &mut flags, &mut active);
            Out::of(st).eq("flags", number32(flags)).eq("active", active)
        }),
    ]
}

/// One device attribute; `compared`: whether the stand-in must report the same value.
fn attr(e: &super::Env, a: CUdevice_attribute, compared: bool) -> Out {
    let mut v = -7;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuDeviceGetAttribute(&mut v, a, e.dev) };
    let out = Out::of(st);
    if compared {
        out.eq("value", v)
    } else {
        out.info("value", v)
    }
}

/// `dddd:bb:dd.f` as `hex4:hex2:hex2.digit`, or `other`.
fn pci_shape(id: &str) -> &'static str {
    let hex = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_hexdigit());
    let parts: Vec<&str> = id.split([':', '.']).collect();
    match parts.as_slice() {
        [a, b, c, d] if hex(a, 4) && hex(b, 2) && hex(c, 2) && hex(d, 1) => "dddd:bb:dd.f",
        [a, b, c, d] if hex(a, 8) && hex(b, 2) && hex(c, 2) && hex(d, 1) => "dddddddd:bb:dd.f",
        _ => "other",
    }
}
