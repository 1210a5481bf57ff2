//! Function and kernel attributes and cache configuration: `cuFuncGetAttribute`,
//! `cuFuncSetAttribute`, `cuKernelGetAttribute`, `cuKernelSetAttribute` (kept per
//! device), `cuFuncSetCacheConfig`, `cuKernelSetCacheConfig`, `cuCtxSetCacheConfig` and
//! `cuCtxGetCacheConfig`, and the parameter layout (`cuFuncGetParamInfo`,
//! `cuKernelGetParamInfo`, and from 13.2 `cuFuncGetParamCount`, `cuKernelGetParamCount`).
//!
//! Every kernel has an empty kernel's attributes on an H200: 1024 threads, 4 registers, no
//! constant memory, PTX and binary version 9.0 (driver-facts.md, "Edge cases"); a kernel
//! the PTX executor runs reports the static shared memory and the local memory per thread
//! its PTX declares (ptxas may allocate less local memory; the registers stay 4: PTX
//! declares virtual registers, which say nothing of what ptxas allocates). Settable: the dynamic shared memory a launch may ask for (48 KiB until
//! set; up to the device's opt-in limit, 227 KiB), which launches check; the preferred
//! shared-memory carveout (-1 until set, then the set value, -1..=100); the required
//! cluster dimensions (0..=16 each), the non-portable cluster size flag (0 or 1) and the
//! cluster scheduling policy (0..=2). Another attribute is read-only
//! (CUDA_ERROR_INVALID_VALUE), an unknown one CUDA_ERROR_INVALID_VALUE.
//!
//! The parameter layout is the PTX `.param` list's (each parameter at its alignment), or a
//! fake image's `kernel NAME params SIZE...`; a fake image kernel without `params` answers
//! CUDA_ERROR_NOT_SUPPORTED (the stand-in does not know it). An index past the last
//! parameter is CUDA_ERROR_INVALID_VALUE; the kernel form answers
//! CUDA_ERROR_INVALID_CONTEXT without a current context, as the H200 does.

use std::ffi::c_int;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, write};
use crate::module;
use crate::run::lock::lock;
use crate::world::World;

type F = CUfunction_attribute;

/// The "device" under which a function's (not a kernel's) settings are kept.
const FUNCTION: c_int = -1;

/// The dynamic shared memory a function may use without opting in.
const DEFAULT_DYNAMIC_SHARED: c_int = 48 << 10;

/// The value set for `attr` of handle `f` on `dev` (a function: [`FUNCTION`]).
fn set_value(w: &World, f: u64, dev: c_int, attr: F) -> Option<c_int> {
    lock(&w.func_attrs).get(&(f, dev, attr.0)).copied()
}

/// The dynamic shared memory (bytes) a launch of function `f` may ask for (a kernel
/// launched as a function: the most it was given on any device).
pub(crate) fn max_dynamic_shared(w: &World, f: u64) -> u32 {
    let attr = F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.0;
    let attrs = lock(&w.func_attrs);
    let v = attrs
        .get(&(f, FUNCTION, attr))
        .copied()
        .or_else(|| attrs.iter().filter(|((h, _, a), _)| *h == f && *a == attr).map(|(_, v)| *v).max());
    u32::try_from(v.unwrap_or(DEFAULT_DYNAMIC_SHARED)).unwrap_or(0)
}

/// The registers each thread of `f` uses (for occupancy).
pub(crate) fn registers(w: &World, f: u64) -> c_int {
    set_value(w, f, FUNCTION, F::CU_FUNC_ATTRIBUTE_NUM_REGS).unwrap_or(4)
}

/// The cluster dimensions `f` was given (`REQUIRED_CLUSTER_*`), 0 for each not set.
pub(crate) fn required_cluster(w: &World, f: u64) -> [c_int; 3] {
    [
        F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
        F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
    ]
    .map(|a| set_value(w, f, FUNCTION, a).unwrap_or(0))
}

/// Whether `f` may be launched in clusters of more than 8 blocks.
pub(crate) fn non_portable_cluster(w: &World, f: u64) -> bool {
    set_value(w, f, FUNCTION, F::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).unwrap_or(0) != 0
}

/// The value of `attr` of `f` on `dev`: as set, else its default (the PTX and binary
/// versions are the device's compute capability, 9.0, as 90).
fn value(w: &World, f: u64, dev: c_int, attr: F) -> Result<c_int, CUresult> {
    if let Some(v) = set_value(w, f, dev, attr) {
        return Ok(v);
    }
    let ptx = || module::ptx_info(w, f);
    let v = match attr {
        F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => {
            ptx().map_or(0, |i| c_int::try_from(i.static_shared_bytes).unwrap_or(c_int::MAX))
        }
        F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => {
            ptx().map_or(0, |i| c_int::try_from(i.local_bytes).unwrap_or(c_int::MAX))
        }
        F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        F::CU_FUNC_ATTRIBUTE_NUM_REGS => 4,
        F::CU_FUNC_ATTRIBUTE_PTX_VERSION | F::CU_FUNC_ATTRIBUTE_BINARY_VERSION => 90,
        F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => DEFAULT_DYNAMIC_SHARED,
        F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => -1,
        a if (0..F::CU_FUNC_ATTRIBUTE_MAX.0).contains(&a.0) => 0,
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    Ok(v)
}

/// Sets `attr` of `f` on `dev` to `v` if it is settable and `v` is in its range.
fn set(w: &World, f: u64, dev: c_int, attr: F, v: c_int) -> Result<(), CUresult> {
    let allowed = match attr {
        F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => (0..=crate::model::device::MAX_SHARED_OPTIN).contains(&v),
        F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => (-1..=100).contains(&v),
        F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH
        | F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT
        | F::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH => (0..=16).contains(&v),
        F::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED => (0..=1).contains(&v),
        F::CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE => (0..=2).contains(&v),
        _ => false,
    };
    if !allowed {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    lock(&w.func_attrs).insert((f, dev, attr.0), v);
    Ok(())
}

pub(crate) unsafe fn cu_func_get_attribute(w: &World, pi: *mut c_int, attr: F, f: CUfunction) -> CUresult {
    status(non_null(pi).and_then(|()| {
        let f = from_ptr(f);
        module::kernel_of(w, f)?;
        match attr {
            F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                write(pi, c_int::try_from(max_dynamic_shared(w, f)).unwrap_or(c_int::MAX))
            }
            _ => write(pi, value(w, f, FUNCTION, attr)?),
        }
    }))
}

/// `cuFuncSetAttribute`: see the module's documentation for what may be set.
pub(crate) unsafe fn cu_func_set_attribute(w: &World, f: CUfunction, attr: F, v: c_int) -> CUresult {
    let f = from_ptr(f);
    status(module::kernel_of(w, f).and_then(|_| set(w, f, FUNCTION, attr, v)))
}

pub(crate) unsafe fn cu_kernel_get_attribute(
    w: &World,
    pi: *mut c_int,
    attr: F,
    kernel: CUkernel,
    dev: CUdevice,
) -> CUresult {
    status(non_null(pi).and_then(|()| {
        let k = from_ptr(kernel);
        module::kernel_of(w, k)?;
        if !valid_device(w, dev) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        write(pi, value(w, k, dev, attr)?)
    }))
}

/// `cuKernelSetAttribute`: kept for `dev` (read back by `cuKernelGetAttribute` of that
/// device); needs no current context (as on the H200).
pub(crate) unsafe fn cu_kernel_set_attribute(
    w: &World,
    attr: F,
    v: c_int,
    kernel: CUkernel,
    dev: CUdevice,
) -> CUresult {
    let k = from_ptr(kernel);
    status(module::kernel_of(w, k).and_then(|_| {
        if !module::is_kernel(w, k) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        if !valid_device(w, dev) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        set(w, k, dev, attr, v)
    }))
}

/// A cache configuration: CUDA_ERROR_INVALID_VALUE for an unknown one.
fn cache_config(config: CUfunc_cache) -> Result<u32, CUresult> {
    if (0..=CUfunc_cache::CU_FUNC_CACHE_PREFER_EQUAL.0).contains(&config.0) {
        Ok(config.0)
    } else {
        Err(CUresult::CUDA_ERROR_INVALID_VALUE)
    }
}

/// `cuFuncSetCacheConfig`: kept (nothing reads it back; a GPU treats it as a hint).
pub(crate) unsafe fn cu_func_set_cache_config(w: &World, f: CUfunction, config: CUfunc_cache) -> CUresult {
    let f = from_ptr(f);
    let r = module::kernel_of(w, f).and_then(|_| cache_config(config));
    status(r.map(|c| {
        lock(&w.cache_configs).insert((f, FUNCTION), c);
    }))
}

/// `cuKernelSetCacheConfig`: kept per device.
pub(crate) unsafe fn cu_kernel_set_cache_config(
    w: &World,
    kernel: CUkernel,
    config: CUfunc_cache,
    dev: CUdevice,
) -> CUresult {
    let k = from_ptr(kernel);
    let r = module::kernel_of(w, k).and_then(|_| {
        if !module::is_kernel(w, k) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        if !valid_device(w, dev) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        cache_config(config)
    });
    status(r.map(|c| {
        lock(&w.cache_configs).insert((k, dev), c);
    }))
}

/// `cuCtxSetCacheConfig`: the current context's preference (CUDA_ERROR_INVALID_CONTEXT
/// without one).
pub(crate) unsafe fn cu_ctx_set_cache_config(w: &World, config: CUfunc_cache) -> CUresult {
    let r = w.contexts.current().and_then(|c| Ok((c.handle, cache_config(config)?)));
    status(r.map(|(c, v)| {
        lock(&w.cache_configs).insert((c, FUNCTION), v);
    }))
}

/// `cuCtxGetCacheConfig`: as set, else CU_FUNC_CACHE_PREFER_NONE.
pub(crate) unsafe fn cu_ctx_get_cache_config(w: &World, config: *mut CUfunc_cache) -> CUresult {
    status(non_null(config).and_then(|()| {
        let c = w.contexts.current()?;
        let v = lock(&w.cache_configs).get(&(c.handle, FUNCTION)).copied().unwrap_or(0);
        write(config, CUfunc_cache(v))
    }))
}

/// The place of parameter `index` of handle `f`.
fn param_info(w: &World, f: u64, index: usize, offset: *mut usize, size: *mut usize) -> Result<(), CUresult> {
    let layout = module::params_of(w, f)?.ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
    let &(o, s) = layout.get(index).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if !offset.is_null() {
        write(offset, o)?;
    }
    if !size.is_null() {
        write(size, s)?;
    }
    Ok(())
}

/// `cuFuncGetParamInfo`.
pub(crate) unsafe fn cu_func_get_param_info(
    w: &World,
    f: CUfunction,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> CUresult {
    status(param_info(w, from_ptr(f), index, offset, size))
}

/// `cuKernelGetParamInfo`: CUDA_ERROR_INVALID_CONTEXT without a current context.
pub(crate) unsafe fn cu_kernel_get_param_info(
    w: &World,
    kernel: CUkernel,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> CUresult {
    let k = from_ptr(kernel);
    status(w.contexts.current().and_then(|_| {
        if !module::is_kernel(w, k) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        param_info(w, k, index, offset, size)
    }))
}

/// The number of parameters of handle `f`.
fn param_count(w: &World, f: u64, count: *mut usize) -> Result<(), CUresult> {
    non_null(count)?;
    let layout = module::params_of(w, f)?.ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
    write(count, layout.len())
}

/// `cuFuncGetParamCount` (13.2).
pub(crate) unsafe fn cu_func_get_param_count(w: &World, f: CUfunction, count: *mut usize) -> CUresult {
    status(param_count(w, from_ptr(f), count))
}

/// `cuKernelGetParamCount` (13.2): CUDA_ERROR_INVALID_CONTEXT without a current context,
/// as `cuKernelGetParamInfo`.
pub(crate) unsafe fn cu_kernel_get_param_count(w: &World, kernel: CUkernel, count: *mut usize) -> CUresult {
    let k = from_ptr(kernel);
    status(w.contexts.current().and_then(|_| {
        if !module::is_kernel(w, k) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        param_count(w, k, count)
    }))
}
