//! Occupancy: the six `cuOccupancy*` entries, computed from the emulated H200's limits as
//! the CUDA occupancy calculator computes them.
//!
//! Limits of a multiprocessor (compute capability 9.0): 2048 threads (64 warps), 32
//! blocks, 65536 registers allocated per warp in units of 256, 228 KiB of shared memory
//! of which each block also takes 1 KiB reserved, allocated in units of 128 bytes. A
//! function uses its `NUM_REGS` registers per thread (4) and may use the dynamic shared
//! memory its `MAX_DYNAMIC_SHARED_SIZE_BYTES` allows (48 KiB until set); a block that
//! asks more, or more threads than 1024, fits 0 times.
//!
//! A block size of 0 or less, or a negative block-size limit, is CUDA_ERROR_INVALID_VALUE
//! (a limit of 0 is none; a block above 1024 threads fits 0 times), as the H200 answers
//! (`scripts/probes/occupancy_block_size.c`, docs/gpu-runs/h200/occupancy_block_size.txt).
//!
//! The block-size entries need a current context (CUDA_ERROR_INVALID_CONTEXT, as the H200
//! answers); the two cluster entries do not (driver 580 answers them with none current,
//! `scripts/probes/context_free_calls.c`). With another context current every entry
//! answers for the function as with its own.
//! `cuOccupancyMaxPotentialBlockSize*` calls the block-size callback on the calling
//! thread, with no stand-in lock held, trying block sizes from the largest down in steps
//! of a warp and stopping at the first that fills a multiprocessor.
//!
//! Clusters (`cuOccupancyMaxActiveClusters`, `cuOccupancyMaxPotentialClusterSize`): the
//! potential cluster size is 8 (16 with `NON_PORTABLE_CLUSTER_SIZE_ALLOWED`), 0 if a block
//! does not fit; the active clusters are 0 without a cluster dimension (attribute or the
//! function's `REQUIRED_CLUSTER_*`), else the H200's measured answer for the cluster's
//! size and the blocks a multiprocessor holds (at most 8 count), from the table
//! `model::device::ACTIVE_CLUSTERS` (16 sizes by 8 residencies, recorded on the H200).

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::model::device::{active_clusters, DEVICE_SM_COUNT};
use crate::world::World;
use crate::{func_attr, module};

const THREADS_PER_SM: i64 = 2048;
const WARP: i64 = 32;
const BLOCKS_PER_SM: i64 = 32;
const REGISTERS_PER_SM: i64 = 65536;
const REGISTER_UNIT: i64 = 256;
const SHARED_PER_SM: i64 = 228 << 10;
const SHARED_RESERVED_PER_BLOCK: i64 = 1 << 10;
const SHARED_UNIT: i64 = 128;
const MAX_THREADS_PER_BLOCK: i64 = 1024;

/// What occupancy needs of a function.
#[derive(Clone, Copy, Debug)]
struct Func {
    registers: i64,
    max_dynamic: i64,
}

/// The function (or kernel cast to one) `f`, with a context current.
fn func(w: &World, f: CUfunction) -> Result<(u64, Func), CUresult> {
    w.contexts.current()?;
    func_of(w, f)
}

/// The function (or kernel cast to one) `f`, whatever context is current.
fn func_of(w: &World, f: CUfunction) -> Result<(u64, Func), CUresult> {
    let h = from_ptr(f);
    module::kernel_of(w, h)?;
    let registers = i64::from(func_attr::registers(w, h).max(1));
    Ok((h, Func { registers, max_dynamic: i64::from(func_attr::max_dynamic_shared(w, h)) }))
}

/// `n / unit`, rounded up (`n >= 0`, `unit > 0`).
fn div_up(n: i64, unit: i64) -> i64 {
    (n + unit - 1) / unit
}

fn round_up(n: i64, unit: i64) -> i64 {
    div_up(n, unit) * unit
}

/// Blocks of `block` threads and `dynamic` bytes of dynamic shared memory one
/// multiprocessor holds at once.
fn blocks_per_sm(f: Func, block: i64, dynamic: i64) -> i64 {
    if block <= 0 || block > MAX_THREADS_PER_BLOCK || dynamic > f.max_dynamic {
        return 0;
    }
    let warps = div_up(block, WARP);
    let by_warps = (THREADS_PER_SM / WARP) / warps;
    let per_warp = round_up(f.registers * WARP, REGISTER_UNIT);
    let by_registers = (REGISTERS_PER_SM / per_warp) / warps;
    let shared = round_up(dynamic + SHARED_RESERVED_PER_BLOCK, SHARED_UNIT);
    let by_shared = SHARED_PER_SM / shared;
    BLOCKS_PER_SM.min(by_warps).min(by_registers).min(by_shared)
}

fn check_flags(flags: c_uint) -> Result<(), CUresult> {
    if flags & !CUoccupancy_flags::CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE.0 != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

fn to_int(n: i64) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

fn max_active_blocks(
    w: &World,
    out: *mut c_int,
    f: CUfunction,
    block: c_int,
    dynamic: usize,
    flags: c_uint,
) -> Result<(), CUresult> {
    non_null(out)?;
    check_flags(flags)?;
    let (_, func) = func(w, f)?;
    // The H200 refuses a block of no threads (or fewer), and answers 0 for one above the
    // limit (scripts/probes/occupancy_block_size.c).
    if block <= 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let dynamic = i64::try_from(dynamic).unwrap_or(i64::MAX);
    write(out, to_int(blocks_per_sm(func, i64::from(block), dynamic)))
}

pub(crate) unsafe fn cu_occupancy_max_active_blocks_per_multiprocessor(
    w: &World,
    out: *mut c_int,
    f: CUfunction,
    block: c_int,
    dynamic: usize,
) -> CUresult {
    status(max_active_blocks(w, out, f, block, dynamic, 0))
}

pub(crate) unsafe fn cu_occupancy_max_active_blocks_per_multiprocessor_with_flags(
    w: &World,
    out: *mut c_int,
    f: CUfunction,
    block: c_int,
    dynamic: usize,
    flags: c_uint,
) -> CUresult {
    status(max_active_blocks(w, out, f, block, dynamic, flags))
}

/// The block size (a multiple of a warp, or the limit) that gives the most threads on a
/// multiprocessor, and the grid that fills the device with it.
///
/// # Safety
/// `callback`, if any, may be called with a block size.
#[allow(clippy::too_many_arguments)]
unsafe fn potential_block_size(
    w: &World,
    min_grid: *mut c_int,
    block_size: *mut c_int,
    f: CUfunction,
    callback: CUoccupancyB2DSize,
    dynamic: usize,
    limit: c_int,
    flags: c_uint,
) -> Result<(), CUresult> {
    non_null(min_grid)?;
    non_null(block_size)?;
    check_flags(flags)?;
    let (_, func) = func(w, f)?;
    // A negative limit is refused; 0 means none (the H200, as above).
    if limit < 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let max = if limit > 0 { i64::from(limit).min(MAX_THREADS_PER_BLOCK) } else { MAX_THREADS_PER_BLOCK };
    let (mut best_block, mut best_blocks, mut best_threads) = (0i64, 0i64, 0i64);
    let mut candidate = round_up(max, WARP);
    while candidate > 0 {
        let block = candidate.min(max);
        let smem = match callback {
            // SAFETY: the program's callback, called on this thread with no lock held.
            Some(cb) => unsafe { cb(to_int(block)) },
            None => dynamic,
        };
        let blocks = blocks_per_sm(func, block, i64::try_from(smem).unwrap_or(i64::MAX));
        if blocks * block > best_threads {
            (best_block, best_blocks, best_threads) = (block, blocks, blocks * block);
        }
        if best_threads == THREADS_PER_SM {
            break;
        }
        candidate -= WARP;
    }
    write(min_grid, to_int(best_blocks * i64::from(DEVICE_SM_COUNT)))?;
    write(block_size, to_int(best_block))
}

pub(crate) unsafe fn cu_occupancy_max_potential_block_size(
    w: &World,
    min_grid: *mut c_int,
    block_size: *mut c_int,
    f: CUfunction,
    callback: CUoccupancyB2DSize,
    dynamic: usize,
    limit: c_int,
) -> CUresult {
    // SAFETY: the program's callback.
    status(unsafe { potential_block_size(w, min_grid, block_size, f, callback, dynamic, limit, 0) })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_occupancy_max_potential_block_size_with_flags(
    w: &World,
    min_grid: *mut c_int,
    block_size: *mut c_int,
    f: CUfunction,
    callback: CUoccupancyB2DSize,
    dynamic: usize,
    limit: c_int,
    flags: c_uint,
) -> CUresult {
    // SAFETY: the program's callback.
    status(unsafe { potential_block_size(w, min_grid, block_size, f, callback, dynamic, limit, flags) })
}

/// `cuOccupancyAvailableDynamicSMemPerBlock`: the dynamic shared memory each of `blocks`
/// blocks of `block` threads may use when they share a multiprocessor, at most the
/// function's limit (49152 on the H200 for 2 blocks of 256 of a function that has not
/// opted in); 0 if they do not fit.
pub(crate) unsafe fn cu_occupancy_available_dynamic_smem_per_block(
    w: &World,
    out: *mut usize,
    f: CUfunction,
    blocks: c_int,
    block: c_int,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (_, func) = func(w, f)?;
        let (blocks, block) = (i64::from(blocks), i64::from(block));
        if blocks <= 0 || block <= 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // More blocks than a multiprocessor holds is refused (the H200's answer).
        if blocks_per_sm(Func { max_dynamic: i64::MAX, ..func }, block, 0) < blocks {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let each = SHARED_PER_SM / blocks - SHARED_RESERVED_PER_BLOCK;
        let each = (each / SHARED_UNIT * SHARED_UNIT).clamp(0, func.max_dynamic);
        write(out, usize::try_from(each).unwrap_or(0))
    });
    status(r)
}

/// The shape, dynamic shared memory and cluster dimensions of a launch configuration:
/// CUDA_ERROR_INVALID_VALUE for NULL, CUDA_ERROR_INVALID_CLUSTER_SIZE for a cluster that
/// does not divide the grid.
///
/// # Safety
/// `config` is NULL or a configuration whose `attrs` holds `numAttrs` attributes.
unsafe fn config_of(config: *const CUlaunchConfig) -> Result<(i64, i64, Option<[c_uint; 3]>), CUresult> {
    non_null(config)?;
    // SAFETY: non-null, the program's.
    let c = unsafe { &*config };
    let mut cluster = None;
    if !c.attrs.is_null() {
        for i in 0..c.numAttrs as usize {
            // SAFETY: `numAttrs` attributes.
            let a = unsafe { &*c.attrs.add(i) };
            if a.id == CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION {
                // SAFETY: a cluster attribute's value is its dimensions.
                let d = unsafe { a.value.clusterDim };
                cluster = Some([d.x, d.y, d.z]);
            }
        }
    }
    let grid = [c.gridDimX, c.gridDimY, c.gridDimZ];
    if let Some(dims) = cluster {
        if dims.iter().zip(grid).any(|(&d, g)| d == 0 || g % d != 0) {
            return Err(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE);
        }
    }
    let block = i64::from(c.blockDimX) * i64::from(c.blockDimY) * i64::from(c.blockDimZ);
    Ok((block, i64::from(c.sharedMemBytes), cluster))
}

/// `cuOccupancyMaxActiveClusters`: see the module's documentation.
pub(crate) unsafe fn cu_occupancy_max_active_clusters(
    w: &World,
    out: *mut c_int,
    f: CUfunction,
    config: *const CUlaunchConfig,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (h, func) = func_of(w, f)?;
        // SAFETY: the program's configuration.
        let (block, shared, cluster) = unsafe { config_of(config) }?;
        let required = func_attr::required_cluster(w, h);
        let dims = cluster
            .map(|d| d.map(i64::from))
            .or_else(|| required.iter().any(|&d| d > 0).then(|| required.map(|d| i64::from(d.max(1)))));
        let Some(dims) = dims else {
            return write(out, 0);
        };
        let size: i64 = dims.iter().product();
        let limit = if func_attr::non_portable_cluster(w, h) { 16 } else { 8 };
        if size > limit {
            return Err(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE);
        }
        write(out, to_int(active_clusters(size, blocks_per_sm(func, block, shared))))
    });
    status(r)
}

/// `cuOccupancyMaxPotentialClusterSize`: 8, 16 with the non-portable size allowed, 0 if
/// a block does not fit.
pub(crate) unsafe fn cu_occupancy_max_potential_cluster_size(
    w: &World,
    out: *mut c_int,
    f: CUfunction,
    config: *const CUlaunchConfig,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (h, func) = func_of(w, f)?;
        // SAFETY: the program's configuration.
        let (block, shared, _) = unsafe { config_of(config) }?;
        let limit = if func_attr::non_portable_cluster(w, h) { 16 } else { 8 };
        write(out, if blocks_per_sm(func, block, shared) > 0 { limit } else { 0 })
    });
    status(r)
}
