//! The virtual devices: what every one of them is, and how many a world has.

use std::ffi::{c_int, c_uint};

use cudrv::sys::CUresult;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::LazyLock;

/// The name of every virtual device (`cuDeviceGetName`).
pub const DEVICE_NAME: &str = "cudrv stand-in device";
/// The memory of every virtual device in bytes (`cuDeviceTotalMem`): 80 GiB.
pub const DEVICE_TOTAL_MEM: usize = 80 << 30;
/// The compute capability of every virtual device (major, minor): 9.0.
pub const DEVICE_CC: (c_int, c_int) = (9, 0);
/// The multiprocessor count of every virtual device
/// (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`).
pub const DEVICE_SM_COUNT: c_int = 132;
/// The most virtual devices there can be.
pub const MAX_DEVICES: c_int = 8;
/// Environment variable choosing the number of virtual devices (0 to [`MAX_DEVICES`]).
pub const ENV_DEVICES: &str = "CUDRV_STANDIN_DEVICES";

/// The most dynamic shared memory a block may use (an H200's opt-in limit, 227 KiB).
pub(crate) const MAX_SHARED_OPTIN: c_int = 227 << 10;
/// The PCI device number of device 0 (`0000:00:06.0`, as on the machine of
/// driver-facts.md); device `d` is `6 + d` on bus 0.
pub(crate) const FIRST_PCI_DEVICE: c_int = 6;

/// The number of devices a world has: `set` (its own setting) when it is 0 or more, else
/// `CUDRV_STANDIN_DEVICES` (0 to 8; another value is ignored), default 1.
pub(crate) fn count(set: &AtomicI32) -> c_int {
    static FROM_ENV: LazyLock<c_int> = LazyLock::new(|| {
        std::env::var(ENV_DEVICES)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| (0..=MAX_DEVICES).contains(n))
            .unwrap_or(1)
    });
    match set.load(Ordering::Acquire) {
        n if n >= 0 => n,
        _ => *FROM_ENV,
    }
}

/// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE when the grid's blocks cannot all be resident
/// (a shape the launch refuses anyway, zero or over 1024 threads a block, is left to it).
pub(crate) fn check_resident(grid: [c_uint; 3], block: [c_uint; 3]) -> Result<(), CUresult> {
    let product = |dims: [c_uint; 3]| dims.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)));
    let (Some(threads @ 1..=1024), Some(blocks)) = (product(block), product(grid)) else {
        return Ok(());
    };
    let per_sm = (2048 / threads).min(32);
    if blocks > per_sm.saturating_mul(u64::from(DEVICE_SM_COUNT.unsigned_abs())) {
        return Err(CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    }
    Ok(())
}
