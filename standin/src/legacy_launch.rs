//! The legacy (deprecated) launch API: `cuFuncSetBlockShape`, `cuFuncSetSharedSize`,
//! `cuParamSetSize`, `cuParamSeti`, `cuParamSetf`, `cuParamSetv`, `cuParamSetTexRef`,
//! `cuLaunch`, `cuLaunchGrid`, `cuLaunchGridAsync`, and `cuFuncSetSharedMemConfig`.
//!
//! Each function keeps a launch configuration (`model/legacy.rs`): a block shape (1 x 1 x 1
//! until set), a dynamic shared memory size and a parameter buffer written at byte
//! offsets. A launch passes that buffer's first `cuParamSetSize` bytes, then zeros up to
//! the kernel's parameters' size (a parameter past the size reads as 0), as the kernel's
//! parameter buffer (`CU_LAUNCH_PARAM_BUFFER_POINTER`, each parameter at its natural
//! alignment) through `cuLaunchKernel`'s path (`launch.rs`), so the kernel really runs, in
//! stream order: `cuLaunch` over a 1x1 grid and `cuLaunchGrid` on the NULL stream,
//! `cuLaunchGridAsync` on its stream.
//!
//! Checked as driver 580.159.04 answers (conformance `legacy_launch.*` and the probes of
//! docs/driver-facts.md, issue 29; CUDA_ERROR_INVALID_VALUE unless said): no current
//! context is CUDA_ERROR_INVALID_CONTEXT; a function that is not one
//! CUDA_ERROR_INVALID_HANDLE. The setters check what they set: a block dimension below 1,
//! x or y above 1024, z above 64 or more than 1024 threads; a dynamic shared size above
//! the function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` (48 KiB unless raised);
//! a parameter size or a written parameter's end past 32764 bytes, a NULL `cuParamSetv`
//! source (even of 0 bytes); a write of no bytes is accepted at any offset. (A negative
//! offset of a write of some bytes crashes the real driver, SIGSEGV; here it is
//! CUDA_ERROR_INVALID_VALUE.) A failed setter keeps the earlier setting. A launch is
//! checked as `cuLaunchKernel` checks its grid; a parameter size above what the kernel's
//! parameters take is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. `cuParamSetTexRef` takes a live
//! reference (else CUDA_ERROR_INVALID_HANDLE) that is bound to memory, with texture unit
//! `CU_PARAM_TR_DEFAULT`; the kernel reads its module's references by name, so nothing is
//! kept.

use std::ffi::{c_int, c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, status};
use crate::model::legacy::{Binding, LaunchConfig, PARAM_BUFFER_BYTES};
use crate::module::Runs;
use crate::run::lock::lock;
use crate::world::World;

/// Runs `edit` on function `f`'s launch configuration, after checking the current
/// context and the function; on error nothing changes.
fn edit<R>(
    w: &World,
    f: CUfunction,
    edit: impl FnOnce(&mut LaunchConfig) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    w.contexts.current()?;
    crate::module::kernel_of(w, from_ptr(f))?;
    let mut c = lock(&w.legacy).launch.get(&from_ptr(f)).cloned().unwrap_or_default();
    let r = edit(&mut c)?;
    lock(&w.legacy).launch.insert(from_ptr(f), c);
    Ok(r)
}

/// The most threads of a block, and of its x, y and z dimensions.
const MAX_BLOCK: (u64, [u32; 3]) = (1024, [1024, 1024, 64]);

pub(crate) unsafe fn cu_func_set_block_shape(w: &World, f: CUfunction, x: c_int, y: c_int, z: c_int) -> CUresult {
    status(edit(w, f, |c| {
        let dims = [x, y, z].map(|d| u32::try_from(d).unwrap_or(0));
        let threads: u64 = dims.iter().map(|&d| u64::from(d)).product();
        let (max_threads, max_dims) = MAX_BLOCK;
        if dims.contains(&0) || dims.iter().zip(max_dims).any(|(&d, m)| d > m) || threads > max_threads {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        c.block = dims;
        Ok(())
    }))
}

pub(crate) unsafe fn cu_func_set_shared_size(w: &World, f: CUfunction, bytes: c_uint) -> CUresult {
    status(edit(w, f, |c| {
        if bytes > crate::func_attr::max_dynamic_shared(w, from_ptr(f)) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        c.shared = bytes;
        Ok(())
    }))
}

pub(crate) unsafe fn cu_param_set_size(w: &World, f: CUfunction, bytes: c_uint) -> CUresult {
    status(edit(w, f, |c| {
        let n = usize::try_from(bytes).ok().filter(|&n| n <= PARAM_BUFFER_BYTES);
        c.size = n.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        Ok(())
    }))
}

pub(crate) unsafe fn cu_param_seti(w: &World, f: CUfunction, offset: c_int, value: c_uint) -> CUresult {
    status(edit(w, f, |c| c.set_bytes(offset, &value.to_le_bytes())))
}

pub(crate) unsafe fn cu_param_setf(w: &World, f: CUfunction, offset: c_int, value: f32) -> CUresult {
    status(edit(w, f, |c| c.set_bytes(offset, &value.to_le_bytes())))
}

/// `cuParamSetv`: `numbytes` bytes from `ptr` (NULL: CUDA_ERROR_INVALID_VALUE).
pub(crate) unsafe fn cu_param_setv(
    w: &World,
    f: CUfunction,
    offset: c_int,
    ptr: *mut c_void,
    numbytes: c_uint,
) -> CUresult {
    status(edit(w, f, |c| {
        if ptr.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let n = usize::try_from(numbytes).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if n > PARAM_BUFFER_BYTES {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: `ptr` is non-null (checked above) and, as `cuParamSetv` requires, points
        // to `numbytes` readable bytes; `n` is that count (bounded by the buffer's size).
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), n) };
        c.set_bytes(offset, bytes)
    }))
}

/// `cuParamSetTexRef`: a reference that is not one is CUDA_ERROR_INVALID_HANDLE; one with
/// nothing bound, or a texture unit other than `CU_PARAM_TR_DEFAULT`,
/// CUDA_ERROR_INVALID_VALUE (driver 580.159.04). The kernel reads its module's references
/// by name, so nothing is kept.
pub(crate) unsafe fn cu_param_set_tex_ref(w: &World, f: CUfunction, unit: c_int, texref: CUtexref) -> CUresult {
    status(edit(w, f, |_| {
        let bound = lock(&w.legacy).texrefs.get(from_ptr(texref))?.binding != Binding::None;
        if unit != CU_PARAM_TR_DEFAULT || !bound {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    }))
}

/// The bytes the parameters of `f`'s kernel take (the end of its last one), if known (not
/// for a kernel of a fake image).
fn kernel_param_bytes(w: &World, f: CUfunction) -> Result<Option<usize>, CUresult> {
    let (name, runs) = crate::module::kernel_of(w, from_ptr(f))?;
    let end = |params: &mut dyn Iterator<Item = (usize, usize)>| {
        params.fold(0usize, |end, (size, align)| {
            end.checked_next_multiple_of(align.max(1)).unwrap_or(usize::MAX).saturating_add(size)
        })
    };
    Ok(match runs {
        Some(Runs::Host(code)) => Some(end(&mut code.params.iter().map(|p| (p.size(), p.align())))),
        Some(Runs::Ptx(ptx, _)) => ptx.module.kernel_info(&name).map(|info| {
            let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
            end(&mut info.params.iter().map(|p| (to_usize(p.size), to_usize(p.align))))
        }),
        None => None,
    })
}

/// Launches `f` with its legacy configuration over `grid` on stream `s`.
fn launch(w: &World, f: CUfunction, grid: [c_int; 3], s: CUstream) -> Result<(), CUresult> {
    let kernel = kernel_param_bytes(w, f)?;
    let config = lock(&w.legacy).launch.get(&from_ptr(f)).cloned().unwrap_or_default();
    let grid = grid.map(|d| u32::try_from(d).unwrap_or(0));
    if grid.contains(&0) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    if kernel.is_some_and(|k| config.size > k) {
        return Err(CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    }
    let mut params = config.params(kernel.unwrap_or(0));
    let mut size = params.len();
    // CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END.
    let mut extra: [*mut c_void; 5] = [
        std::ptr::without_provenance_mut(1),
        params.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(2),
        (&raw mut size).cast(),
        std::ptr::null_mut(),
    ];
    // SAFETY: `extra` is a well-formed, END-terminated list whose buffer holds `size`
    // bytes; both live until the launch has read its parameters (it copies them).
    unsafe {
        crate::launch::launch(w, f, grid, config.block, config.shared, s, std::ptr::null_mut(), extra.as_mut_ptr())
    }
}

pub(crate) unsafe fn cu_launch(w: &World, f: CUfunction) -> CUresult {
    status(launch(w, f, [1, 1, 1], std::ptr::null_mut()))
}

pub(crate) unsafe fn cu_launch_grid(w: &World, f: CUfunction, width: c_int, height: c_int) -> CUresult {
    status(launch(w, f, [width, height, 1], std::ptr::null_mut()))
}

pub(crate) unsafe fn cu_launch_grid_async(
    w: &World,
    f: CUfunction,
    width: c_int,
    height: c_int,
    s: CUstream,
) -> CUresult {
    status(launch(w, f, [width, height, 1], s))
}

/// `cuFuncSetSharedMemConfig` (deprecated): as `cuCtxSetSharedMemConfig`, a known value is
/// accepted and changes nothing (the device's bank size is fixed); another is
/// CUDA_ERROR_INVALID_VALUE; a function that is not one CUDA_ERROR_INVALID_HANDLE.
pub(crate) unsafe fn cu_func_set_shared_mem_config(w: &World, f: CUfunction, config: CUsharedconfig) -> CUresult {
    let r = w.contexts.current().and_then(|_| {
        crate::module::kernel_of(w, from_ptr(f))?;
        if config.0 > 2 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(())
    });
    status(r)
}
