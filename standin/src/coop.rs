//! `cuLaunchCooperativeKernel`: as `cuLaunchKernel` (same limits, driver-facts.md "Edge
//! cases"), with the grid's blocks all resident at once: more blocks than the device's
//! multiprocessors can hold together (2048 threads and 32 blocks each) is
//! CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::status;
use crate::world::World;

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_launch_cooperative_kernel(
    w: &World,
    f: CUfunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem: c_uint,
    s: CUstream,
    params: *mut *mut c_void,
) -> CUresult {
    let (grid, block) = ([grid_x, grid_y, grid_z], [block_x, block_y, block_z]);
    // SAFETY: forwarded from the program; no `extra`.
    let launch = || unsafe { crate::launch::launch(w, f, grid, block, shared_mem, s, params, std::ptr::null_mut()) };
    status(crate::model::device::check_resident(grid, block).and_then(|()| launch()))
}
