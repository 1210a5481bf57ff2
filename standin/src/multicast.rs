//! Multicast objects (`cuMulticastCreate`, `cuMulticastAddDevice`, `cuMulticastBindMem`,
//! `cuMulticastBindAddr`, `cuMulticastUnbind`, `cuMulticastGetGranularity`), answered as
//! the driver answers on a machine without multicast: the stand-in's devices report
//! `CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED` (132) 0, as the H100 of the recording and the
//! project's H200s (single cards, no NVSwitch fabric) do.
//!
//! Recorded (driver 580.159.04, `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`,
//! cases `multicast.*`): there every multicast call answers CUDA_ERROR_NOT_SUPPORTED
//! before it looks at any argument: null properties or out-pointers, no devices, size 0,
//! flags, Windows handle types, an unknown granularity option, a device that is not one,
//! any handle, and no current context all get CUDA_ERROR_NOT_SUPPORTED, and nothing is
//! written. The stand-in answers so, for every call and both ABIs of `BindMem`/`BindAddr`.
//! `cuMulticastCreate`'s answer follows the same rule but is not recorded: no conformance
//! case may call it (it can take a host's GPUs down). A machine whose cards do support
//! multicast (NVSwitch systems) checks arguments instead: not emulated.

use std::ffi::c_ulonglong;

use cudrv::sys::*;

use crate::world::World;

/// Every multicast call's answer on a machine without multicast.
const NONE: CUresult = CUresult::CUDA_ERROR_NOT_SUPPORTED;

/// `cuMulticastCreate`: CUDA_ERROR_NOT_SUPPORTED, whatever the arguments (not recorded:
/// see the module). Nothing is written.
pub(crate) unsafe fn cu_multicast_create(
    _w: &World,
    _out: *mut CUmemGenericAllocationHandle,
    _prop: *const CUmulticastObjectProp,
) -> CUresult {
    NONE
}

/// `cuMulticastGetGranularity`: CUDA_ERROR_NOT_SUPPORTED, whatever the arguments or
/// context. Nothing is written.
pub(crate) unsafe fn cu_multicast_get_granularity(
    _w: &World,
    _out: *mut usize,
    _prop: *const CUmulticastObjectProp,
    _option: CUmulticastGranularity_flags,
) -> CUresult {
    NONE
}

/// `cuMulticastAddDevice`: CUDA_ERROR_NOT_SUPPORTED, whatever the handle or device.
pub(crate) unsafe fn cu_multicast_add_device(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _dev: CUdevice,
) -> CUresult {
    NONE
}

/// `cuMulticastBindMem` (12.1's form): CUDA_ERROR_NOT_SUPPORTED.
pub(crate) unsafe fn cu_multicast_bind_mem(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _mc_offset: usize,
    _mem: CUmemGenericAllocationHandle,
    _mem_offset: usize,
    _size: usize,
    _flags: c_ulonglong,
) -> CUresult {
    NONE
}

/// `cuMulticastBindMem` (13.1's form, naming the device): CUDA_ERROR_NOT_SUPPORTED (the
/// 12.1 form's rule; this form is not recorded).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_multicast_bind_mem_v2(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _dev: CUdevice,
    _mc_offset: usize,
    _mem: CUmemGenericAllocationHandle,
    _mem_offset: usize,
    _size: usize,
    _flags: c_ulonglong,
) -> CUresult {
    NONE
}

/// `cuMulticastBindAddr` (12.1's form): CUDA_ERROR_NOT_SUPPORTED.
pub(crate) unsafe fn cu_multicast_bind_addr(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _mc_offset: usize,
    _ptr: CUdeviceptr,
    _size: usize,
    _flags: c_ulonglong,
) -> CUresult {
    NONE
}

/// `cuMulticastBindAddr` (13.1's form, naming the device): CUDA_ERROR_NOT_SUPPORTED (the
/// 12.1 form's rule; this form is not recorded).
pub(crate) unsafe fn cu_multicast_bind_addr_v2(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _dev: CUdevice,
    _mc_offset: usize,
    _ptr: CUdeviceptr,
    _size: usize,
    _flags: c_ulonglong,
) -> CUresult {
    NONE
}

/// `cuMulticastUnbind`: CUDA_ERROR_NOT_SUPPORTED, whatever the handle or device.
pub(crate) unsafe fn cu_multicast_unbind(
    _w: &World,
    _mc: CUmemGenericAllocationHandle,
    _dev: CUdevice,
    _mc_offset: usize,
    _size: usize,
) -> CUresult {
    NONE
}
