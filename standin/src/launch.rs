//! `cuLaunchKernel` and `cuLaunchKernelEx`: a kernel of PTX runs on the PTX executor
//! (`run/ptx.rs`, its blocks in parallel on the host's cores), or its registered host
//! implementation (`kernels.rs`), over the grid in stream order (`stream.rs`: at once on
//! the calling thread if the stream is idle, else on its driver thread); a kernel of
//! a fake image runs nothing, except that launching the kernel named `fault` makes the
//! launch's context sticky-failed (CUDA_ERROR_ILLEGAL_ADDRESS).
//!
//! A kernel's fault never fails its launch: as on a GPU, the launch returns success and
//! the fault, held by the context (sticky-failed), shows at the next synchronisation and
//! at every later call that uses the context (`model/stream.rs`, `Target::submit`;
//! docs/stand-in.md, "Kernel faults").
//!
//! Launch limits are checked as a real driver checks them (driver-facts.md): a zero
//! dimension, a block of more than 1024 threads or z above 64, a grid y or z above 65535
//! or x at or above 2^31, or more dynamic shared memory than a block may opt in to (227
//! KiB) is CUDA_ERROR_INVALID_VALUE.
//!
//! On a capturing stream a launch becomes a kernel node instead (`capture.rs`).

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status};
use crate::model::graph::{KernelCode, KernelNode, Node};
use crate::model::memory::Owner;
use crate::module::Runs;
use crate::run::kernels::Param;
use crate::world::World;
use crate::{capture, module, stream};

/// `extra` keys (cuda.h's `CU_LAUNCH_PARAM_*`, pointers with these values).
const PARAM_END: usize = 0;
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
/// The most `extra` entries read before giving up on finding its end.
const MAX_EXTRA: usize = 64;
/// The most parameter bytes a kernel may take (CUDA 12.1 and later).
const MAX_PARAM_BYTES: usize = 32764;

fn check_shape(grid: [c_uint; 3], block: [c_uint; 3], shared: c_uint) -> Result<(), CUresult> {
    let threads = block.iter().try_fold(1u64, |n, &d| n.checked_mul(u64::from(d)));
    let [gx, gy, gz] = grid;
    if grid.contains(&0)
        || block.contains(&0)
        || threads.is_none_or(|t| t > 1024)
        || block[2] > 64
        || gx >= 1 << 31
        || gy > 65535
        || gz > 65535
        || i64::from(shared) > i64::from(crate::model::device::MAX_SHARED_OPTIN)
    {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

/// The value of each parameter in `layout`, from `kernelParams` or `extra` (one of them,
/// unless there are no parameters): CUDA_ERROR_INVALID_VALUE when both are given, none
/// is, a parameter pointer is null, the `extra` buffer is too small or malformed, or the
/// parameters take more than 32764 bytes.
///
/// # Safety
/// As `cuLaunchKernel` requires: `params` is null or holds a pointer to each parameter's
/// value; `extra` is null or a `CU_LAUNCH_PARAM_END`-terminated list of key/value pairs.
unsafe fn read_params(
    layout: &[Param],
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<Vec<Vec<u8>>, CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    let total = layout.iter().try_fold(0usize, |n, p| n.checked_add(p.size()));
    if total.is_none_or(|n| n > MAX_PARAM_BYTES) {
        return Err(invalid);
    }
    match (params.is_null(), extra.is_null()) {
        (false, false) => Err(invalid),
        (true, true) if layout.is_empty() => Ok(Vec::new()),
        (true, true) => Err(invalid),
        (false, true) => {
            let mut out = Vec::with_capacity(layout.len());
            for (i, p) in layout.iter().enumerate() {
                // SAFETY: the program passes one pointer per parameter.
                let value = unsafe { *params.add(i) };
                non_null(value)?;
                // SAFETY: it points to the parameter's value, of its size.
                out.push(unsafe { std::slice::from_raw_parts(value.cast::<u8>(), p.size()) }.to_vec());
            }
            Ok(out)
        }
        (true, false) => {
            let (mut buffer, mut size) = (None, None);
            let mut i = 0;
            loop {
                if i >= MAX_EXTRA {
                    return Err(invalid);
                }
                // SAFETY: the list goes on until its END key.
                let key = unsafe { *extra.add(i) } as usize;
                if key == PARAM_END {
                    break;
                }
                // SAFETY: every key but END is followed by its value.
                let value = unsafe { *extra.add(i + 1) };
                match key {
                    PARAM_BUFFER_POINTER => buffer = Some(value.cast::<u8>()),
                    PARAM_BUFFER_SIZE => {
                        non_null(value)?;
                        // SAFETY: the value of BUFFER_SIZE points to a size_t.
                        size = Some(unsafe { *value.cast::<usize>() });
                    }
                    _ => return Err(invalid),
                }
                i += 2;
            }
            let (Some(buffer), Some(size)) = (buffer, size) else {
                return Err(invalid);
            };
            non_null(buffer)?;
            let mut out = Vec::with_capacity(layout.len());
            let mut offset = 0usize;
            for p in layout {
                offset = offset.checked_next_multiple_of(p.align()).ok_or(invalid)?;
                let end = offset.checked_add(p.size()).filter(|&e| e <= size).ok_or(invalid)?;
                // SAFETY: the buffer has `size` bytes, and offset..end is inside it.
                out.push(unsafe { std::slice::from_raw_parts(buffer.add(offset), p.size()) }.to_vec());
                offset = end;
            }
            Ok(out)
        }
    }
}

/// A launch of `f` over this shape with these parameters, checked and read
/// (`cuLaunchKernel`, kernel nodes). The PTX module's globals are made, the first time, in
/// `owner`: a launch's stream's context (a launch needs no context current), or else the
/// current context's (a kernel node).
///
/// # Safety
/// As [`read_params`].
#[allow(clippy::too_many_arguments)] // the world, the C launch's arguments and the owner
pub(crate) unsafe fn kernel_node(
    w: &World,
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    owner: Option<Owner>,
) -> Result<KernelNode, CUresult> {
    let (name, runs) = module::kernel_of(w, from_ptr(f))?;
    check_shape(grid, block, shared)?;
    if shared > crate::func_attr::max_dynamic_shared(w, from_ptr(f)) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let (values, code) = match runs {
        // SAFETY: forwarded from the program.
        Some(Runs::Host(code)) => (unsafe { read_params(&code.params, params, extra) }?, Some(KernelCode::Host(code))),
        Some(Runs::Ptx(ptx, home)) => {
            let info = ptx.module.kernel_info(&name).ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
            // Static and dynamic shared memory together: at most what a block may opt in to.
            let total = info.static_shared_bytes.saturating_add(u64::from(shared));
            if total > u64::try_from(crate::model::device::MAX_SHARED_OPTIN).unwrap_or(0) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            let layout: Vec<Param> =
                info.params.iter().map(|p| Param::Bytes { size: p.size as usize, align: p.align as usize }).collect();
            // SAFETY: forwarded from the program.
            let values = unsafe { read_params(&layout, params, extra) }?;
            let m = module::home_module(w, home)?;
            let current = || w.contexts.current().map_or(Owner { ctx: 0, device: 0 }, |c| Owner::of(&c));
            let owner = owner.unwrap_or_else(current);
            let globals = crate::global::bind(w, m, &ptx, owner)?;
            (values, Some(KernelCode::Ptx { module: ptx.module, globals: globals.into(), shared }))
        }
        None => (Vec::new(), None),
    };
    Ok(KernelNode { name, code, grid, block, values, func: from_ptr(f), shared })
}

/// # Safety
/// As [`read_params`].
#[allow(clippy::too_many_arguments)] // the world and the C signature
pub(crate) unsafe fn launch(
    w: &World,
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    s: CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    // The stream names the context, which need not be current (driver 580 launches right
    // with none, or another one, current: docs/driver-facts.md); a bad stream is reported
    // after a bad function, as before.
    let t = stream::resolve(w, s);
    let owner = t.as_ref().ok().map(|t| Owner::of(&t.ctx));
    // SAFETY: forwarded from the program.
    let kernel = unsafe { kernel_node(w, f, grid, block, shared, params, extra, owner) }?;
    let t = t?;
    capture::record_or_run(w, s, Node::Kernel(kernel), &t)
}

/// Checks the attributes of a `cuLaunchKernelEx`: an unknown one is
/// CUDA_ERROR_INVALID_VALUE; a cluster shape that does not divide the grid is
/// CUDA_ERROR_INVALID_CLUSTER_SIZE (driver-facts.md, conformance on the H200), as is a
/// cluster of more than 8 blocks unless the function allows non-portable sizes, or
/// preferred cluster dimensions that are not a multiple of the cluster's; a cooperative
/// grid whose blocks cannot all be resident is CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE; a
/// programmatic event that is not a live event is CUDA_ERROR_INVALID_HANDLE; a memory
/// synchronisation domain other than 0 or 1, or an access policy window with a hit ratio
/// outside 0..=1 or an unknown property, is CUDA_ERROR_INVALID_VALUE. What they ask for
/// (priorities, domains, windows, programmatic dependent launch) is accepted and not
/// emulated: launches run in stream order.
///
/// # Safety
/// `attrs` is NULL or holds `n` attributes.
unsafe fn check_attributes(
    w: &World,
    f: CUfunction,
    attrs: *const CUlaunchAttribute,
    n: c_uint,
    grid: [c_uint; 3],
    block: [c_uint; 3],
) -> Result<(), CUresult> {
    type Id = CUlaunchAttributeID;
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    if attrs.is_null() {
        return if n == 0 { Ok(()) } else { Err(invalid) };
    }
    let mut cluster = None;
    let mut preferred = None;
    for i in 0..n as usize {
        // SAFETY: `i < n` (above).
        let a = unsafe { &*attrs.add(i) };
        match a.id {
            Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => {
                // SAFETY: the value of a cluster attribute is its dimensions.
                let d = unsafe { a.value.clusterDim };
                let dims = [d.x, d.y, d.z];
                if dims.iter().zip(grid).any(|(&c, g)| c == 0 || g % c != 0) {
                    return Err(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE);
                }
                let size = dims.iter().map(|&d| u64::from(d)).product::<u64>();
                let limit = if crate::func_attr::non_portable_cluster(w, from_ptr(f)) { 16 } else { 8 };
                if size > limit {
                    return Err(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE);
                }
                cluster = Some(dims);
            }
            Id::CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION => {
                // SAFETY: the value of this attribute is its dimensions.
                let d = unsafe { a.value.preferredClusterDim };
                preferred = Some([d.x, d.y, d.z]);
            }
            Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE => {
                // SAFETY: the value of a cooperative attribute is an int.
                let on = unsafe { a.value.cooperative } != 0;
                if on {
                    crate::model::device::check_resident(grid, block)?;
                }
            }
            Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT => {
                // SAFETY: the value of this attribute is an event and flags.
                let e = unsafe { a.value.programmaticEvent };
                crate::run::lock::lock(&w.events)
                    .get(from_ptr(e.event))
                    .map_err(|_| CUresult::CUDA_ERROR_INVALID_HANDLE)?;
            }
            Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN => {
                // SAFETY: the value of this attribute is a domain.
                let domain = unsafe { a.value.memSyncDomain };
                if domain.0 > 1 {
                    return Err(invalid);
                }
            }
            Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW => {
                // SAFETY: the value of this attribute is a window.
                let win = unsafe { a.value.accessPolicyWindow };
                if !(0.0..=1.0).contains(&win.hitRatio) || win.hitProp.0 > 2 || win.missProp.0 > 2 {
                    return Err(invalid);
                }
            }
            id if id.0 == 0 || id.0 > Id::CU_LAUNCH_ATTRIBUTE_SHARED_MEMORY_MODE.0 => return Err(invalid),
            _ => {}
        }
    }
    if let Some(p) = preferred {
        let c = cluster.unwrap_or([1, 1, 1]);
        if p.iter().zip(c).any(|(&p, c)| p == 0 || p % c != 0) {
            return Err(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE);
        }
    }
    Ok(())
}

/// `cuLaunchKernel`: `f` is a function, or a kernel cast to one. On a capturing stream it
/// becomes a kernel node; elsewhere the kernel runs in stream order. A fault of the kernel
/// (a memory access outside every live allocation: CUDA_ERROR_ILLEGAL_ADDRESS; a trap,
/// an assert, ...) leaves the context sticky-failed, and the launch returns success: the
/// next call that uses the context (a synchronisation) returns the fault.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_launch_kernel(
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
    extra: *mut *mut c_void,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { launch(w, f, [grid_x, grid_y, grid_z], [block_x, block_y, block_z], shared_mem, s, params, extra) })
}

/// `cuLaunchKernelEx`: as `cuLaunchKernel`, with the shape and stream from `config`; its
/// attributes are checked (`check_attributes`).
pub(crate) unsafe fn cu_launch_kernel_ex(
    w: &World,
    config: *const CUlaunchConfig,
    f: CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    if config.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a non-null pointer to the program's configuration.
    let c = unsafe { &*config };
    let (grid, block) = ([c.gridDimX, c.gridDimY, c.gridDimZ], [c.blockDimX, c.blockDimY, c.blockDimZ]);
    // SAFETY: `attrs` holds `numAttrs` attributes (the call's contract).
    if let Err(e) = unsafe { check_attributes(w, f, c.attrs, c.numAttrs, grid, block) } {
        return e;
    }
    // SAFETY: forwarded from the program.
    status(unsafe { launch(w, f, grid, block, c.sharedMemBytes, c.hStream, params, extra) })
}
