//! `cuLaunchKernel`: nothing runs; launching the kernel named `fault` makes the launch's
//! context sticky-failed, and the failure shows at the next synchronisation
//! (CUDA_ERROR_ILLEGAL_ADDRESS), as after a faulting kernel on a GPU.

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{enter, from_ptr, register, status};
use crate::{module, stream};

/// The kernel that faults.
pub const FAULT_KERNEL: &str = "fault";

fn launch(f: CUfunction, grid: [c_uint; 3], block: [c_uint; 3], s: CUstream) -> Result<(), CUresult> {
    let name = module::kernel_name(from_ptr(f))?;
    if grid.contains(&0) || block.contains(&0) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let t = stream::resolve(s)?;
    if name == FAULT_KERNEL {
        t.ctx.make_sticky();
    }
    Ok(())
}

/// `cuLaunchKernel`: `f` is a function, or a kernel cast to one.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn cu_launch_kernel(
    f: CUfunction,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    _shared_mem: c_uint,
    s: CUstream,
    _params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> CUresult {
    enter!("cuLaunchKernel");
    status(launch(f, [grid_x, grid_y, grid_z], [block_x, block_y, block_z], s))
}

register! {
    cuLaunchKernel_v4000: PFN_cuLaunchKernel_v4000 => cu_launch_kernel,
    cuLaunchKernel_v7000_ptsz: PFN_cuLaunchKernel_v7000_ptsz => cu_launch_kernel,
}
