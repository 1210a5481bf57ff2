//! `cuLaunchCooperativeKernelMultiDevice` (deprecated): one cooperative launch per entry of
//! the list, each on its stream, checked first as `cuda.h` documents (nothing is launched
//! on error): a NULL list, no entries, more entries than devices or a flag other than
//! `CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC` and `..._NO_POST_LAUNCH_SYNC`
//! is CUDA_ERROR_INVALID_VALUE; so is two entries on one device, or grids, blocks or shared
//! memory sizes that differ between entries. An entry's stream must be a created one: the
//! NULL stream, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD` (driver 580.159.04,
//! docs/driver-facts.md, issue 29) or a stream that is not one is
//! CUDA_ERROR_INVALID_HANDLE; a grid whose blocks cannot all be resident
//! CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. The launches run in stream order on their
//! streams (the pre- and post-launch synchronisation between the streams is not
//! emulated: each entry runs after its own stream's earlier work).

use std::ffi::c_uint;

use cudrv::sys::*;

use crate::entry::{from_ptr, status};
use crate::model::stream::{STREAM_LEGACY, STREAM_PER_THREAD};
use crate::world::World;

const FLAGS: c_uint =
    CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC | CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;

/// The entries of the list, checked.
///
/// # Safety
/// `list` is NULL or holds `n` entries.
unsafe fn entries(
    w: &World,
    list: *const CUDA_LAUNCH_PARAMS,
    n: c_uint,
    flags: c_uint,
) -> Result<Vec<CUDA_LAUNCH_PARAMS>, CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    if list.is_null() || n == 0 || flags & !FLAGS != 0 || i64::from(n) > i64::from(w.device_count()) {
        return Err(invalid);
    }
    // SAFETY: non-null, with `n` entries (the call's contract).
    let all = unsafe { std::slice::from_raw_parts(list, n as usize) }.to_vec();
    let mut devices = Vec::new();
    let shape = |p: &CUDA_LAUNCH_PARAMS| {
        ([p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ], p.sharedMemBytes)
    };
    let first = all.first().map(shape).ok_or(invalid)?;
    for p in &all {
        if p.hStream.is_null() || matches!(from_ptr(p.hStream), STREAM_LEGACY | STREAM_PER_THREAD) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        let t = crate::stream::resolve(w, p.hStream)?;
        if devices.contains(&t.ctx.device) || shape(p) != first {
            return Err(invalid);
        }
        devices.push(t.ctx.device);
    }
    crate::model::device::check_resident(first.0, first.1)?;
    Ok(all)
}

pub(crate) unsafe fn cu_launch_cooperative_kernel_multi_device(
    w: &World,
    list: *mut CUDA_LAUNCH_PARAMS,
    n: c_uint,
    flags: c_uint,
) -> CUresult {
    let r = (|| {
        // SAFETY: `list` is NULL or holds `n` entries (`cuLaunchCooperativeKernelMultiDevice`'s
        // contract with the program).
        let all = unsafe { entries(w, list, n, flags) }?;
        for p in all {
            let (grid, block) = ([p.gridDimX, p.gridDimY, p.gridDimZ], [p.blockDimX, p.blockDimY, p.blockDimZ]);
            // SAFETY: each entry's `kernelParams` holds a pointer per parameter (the call's
            // contract); no `extra`.
            unsafe {
                crate::launch::launch(
                    w,
                    p.function,
                    grid,
                    block,
                    p.sharedMemBytes,
                    p.hStream,
                    p.kernelParams,
                    std::ptr::null_mut(),
                )
            }?;
        }
        Ok(())
    })();
    status(r)
}
