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

/// Active clusters of the H200 (`cuOccupancyMaxActiveClusters`), by cluster size (1 to 16
/// blocks, row) and by the blocks of the kernel one multiprocessor holds, at most 8
/// (column 1 to 8): measured on the H200 with driver 13.0
/// (`scripts/probes/cluster_occupancy.py`, docs/gpu-runs/h200/cluster-occupancy.txt).
/// The answer depends on nothing else; it reflects how the H200's multiprocessors are
/// grouped (clusters stay within one group), which no simpler rule reproduced.
pub const ACTIVE_CLUSTERS: [[u16; 8]; 16] = [
    [132, 264, 396, 528, 660, 792, 924, 1056],
    [66, 132, 198, 264, 330, 396, 462, 528],
    [39, 79, 124, 163, 203, 248, 287, 327],
    [30, 62, 92, 124, 154, 186, 216, 248],
    [22, 47, 69, 94, 124, 146, 171, 193],
    [17, 39, 62, 79, 101, 124, 141, 163],
    [15, 32, 47, 69, 84, 101, 124, 139],
    [15, 30, 45, 62, 77, 92, 107, 124],
    [9, 23, 37, 51, 60, 74, 88, 102],
    [7, 21, 30, 44, 58, 65, 79, 88],
    [7, 16, 28, 37, 51, 58, 72, 81],
    [7, 16, 28, 37, 44, 58, 65, 74],
    [7, 14, 23, 30, 42, 51, 58, 67],
    [7, 14, 21, 30, 37, 44, 58, 65],
    [7, 14, 21, 28, 37, 44, 51, 58],
    [7, 14, 21, 28, 35, 42, 49, 58],
];

/// [`ACTIVE_CLUSTERS`] for clusters of `size` blocks when a multiprocessor holds
/// `blocks_per_sm` of them: 0 where a block does not fit or the size is outside 1..=16.
pub fn active_clusters(size: i64, blocks_per_sm: i64) -> i64 {
    let per_sm = blocks_per_sm.min(8);
    let (Ok(row), Ok(column)) = (usize::try_from(size - 1), usize::try_from(per_sm - 1)) else {
        return 0;
    };
    ACTIVE_CLUSTERS.get(row).and_then(|r| r.get(column)).map_or(0, |&n| i64::from(n))
}
/// The most virtual devices there can be.
pub const MAX_DEVICES: c_int = 8;
/// Environment variable choosing the number of virtual devices (0 to [`MAX_DEVICES`]).
pub const ENV_DEVICES: &str = "CUDRV_STANDIN_DEVICES";

/// The most dynamic shared memory a block may use (an H200's opt-in limit, 227 KiB).
pub(crate) const MAX_SHARED_OPTIN: c_int = 227 << 10;
/// The shared memory of a multiprocessor (an H200's, 228 KiB).
pub(crate) const SHARED_PER_MULTIPROCESSOR: c_int = 228 << 10;
/// The clock rate every virtual device reports, in kHz (`CU_DEVICE_ATTRIBUTE_CLOCK_RATE`,
/// an H200's). The PTX executor's `%clock` and `%clock64` count host time at this rate
/// (`ptx/src/exec.rs`, `CLOCK_RATE_KHZ`), so a kernel that waits for N cycles waits about
/// N / 1.98 ns.
pub(crate) const CLOCK_RATE_KHZ: c_int = 1_980_000;
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
