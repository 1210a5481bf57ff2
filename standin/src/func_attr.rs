//! Function attributes: `cuFuncGetAttribute` and `cuKernelGetAttribute`, the same for
//! every kernel (an empty kernel's on an H200: 1024 threads, 4 registers, no static shared,
//! constant or local memory; driver-facts.md, "Edge cases"). An unknown attribute is
//! CUDA_ERROR_INVALID_VALUE. `cuFuncSetAttribute` sets the dynamic shared memory a
//! function may use (48 KiB until then; up to the device's opt-in limit), which launches
//! check, and the preferred carveout; the other attributes are read-only.

use std::ffi::c_int;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, write};
use crate::module;
use crate::run::lock::lock;
use crate::world::World;

type F = CUfunction_attribute;

/// The dynamic shared memory a function may use without opting in.
const DEFAULT_DYNAMIC_SHARED: c_int = 48 << 10;

/// The dynamic shared memory (bytes) a launch of function `f` may ask for.
pub(crate) fn max_dynamic_shared(w: &World, f: u64) -> u32 {
    let v = lock(&w.max_dynamic_shared).get(&f).copied().unwrap_or(DEFAULT_DYNAMIC_SHARED);
    u32::try_from(v).unwrap_or(0)
}

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

pub(crate) unsafe fn cu_func_get_attribute(w: &World, pi: *mut c_int, attr: F, f: CUfunction) -> CUresult {
    status(non_null(pi).and_then(|()| {
        module::kernel_of(w, from_ptr(f))?;
        match attr {
            F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                write(pi, c_int::try_from(max_dynamic_shared(w, from_ptr(f))).unwrap_or(c_int::MAX))
            }
            _ => write(pi, value(attr)?),
        }
    }))
}

/// `cuFuncSetAttribute`: the dynamic shared memory limit (at most the device's opt-in
/// limit) and the preferred carveout (-1 to 100, kept nowhere); other attributes are
/// read-only: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_func_set_attribute(w: &World, f: CUfunction, attr: F, v: c_int) -> CUresult {
    status(module::kernel_of(w, from_ptr(f)).and_then(|_| match attr {
        F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            if (0..=crate::model::device::MAX_SHARED_OPTIN).contains(&v) =>
        {
            lock(&w.max_dynamic_shared).insert(from_ptr(f), v);
            Ok(())
        }
        F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT if (-1..=100).contains(&v) => Ok(()),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }))
}

pub(crate) unsafe fn cu_kernel_get_attribute(
    w: &World,
    pi: *mut c_int,
    attr: F,
    kernel: CUkernel,
    dev: CUdevice,
) -> CUresult {
    status(non_null(pi).and_then(|()| {
        module::kernel_of(w, from_ptr(kernel))?;
        if !valid_device(w, dev) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        write(pi, value(attr)?)
    }))
}
