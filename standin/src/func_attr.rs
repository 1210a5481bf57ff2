//! Function attributes: `cuFuncGetAttribute` and `cuKernelGetAttribute`, the same for
//! every kernel (an empty kernel's on an H200: 1024 threads, 4 registers, no static shared,
//! constant or local memory; driver-facts.md, "Edge cases"). An unknown attribute is
//! CUDA_ERROR_INVALID_VALUE.

use std::ffi::c_int;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{enter, from_ptr, non_null, register, status, write};
use crate::module;

type F = CUfunction_attribute;

/// The value of `attr` (the PTX and binary versions are the device's compute capability,
/// 9.0, as 90).
fn value(attr: F) -> Result<c_int, CUresult> {
    let v = match attr {
        F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        F::CU_FUNC_ATTRIBUTE_NUM_REGS => 4,
        F::CU_FUNC_ATTRIBUTE_PTX_VERSION | F::CU_FUNC_ATTRIBUTE_BINARY_VERSION => 90,
        F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => 48 << 10,
        F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => -1,
        a if (0..F::CU_FUNC_ATTRIBUTE_MAX.0).contains(&a.0) => 0,
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    Ok(v)
}

unsafe extern "C" fn cu_func_get_attribute(pi: *mut c_int, attr: F, f: CUfunction) -> CUresult {
    enter!("cuFuncGetAttribute");
    status(non_null(pi).and_then(|()| {
        module::kernel_of(from_ptr(f))?;
        write(pi, value(attr)?)
    }))
}

unsafe extern "C" fn cu_kernel_get_attribute(pi: *mut c_int, attr: F, kernel: CUkernel, dev: CUdevice) -> CUresult {
    enter!("cuKernelGetAttribute");
    status(non_null(pi).and_then(|()| {
        module::kernel_of(from_ptr(kernel))?;
        if !valid_device(dev) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        write(pi, value(attr)?)
    }))
}

register! {
    cuFuncGetAttribute_v2020: PFN_cuFuncGetAttribute_v2020 => cu_func_get_attribute,
    cuKernelGetAttribute_v12000: PFN_cuKernelGetAttribute_v12000 => cu_kernel_get_attribute,
}
