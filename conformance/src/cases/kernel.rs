//! Kernels beyond launching (issue 15, items 1-4): parameter layout, attributes set per
//! device and the carveout, cache configurations, library and PTX globals, occupancy and
//! cluster occupancy, what JIT options write, and the PTX `.version`/`.target` gating.
//! Recorded on the H200 (`expected/h200-driver-13000.txt`).

use std::ffi::{c_int, c_void};

use super::{
    case, handle, made, number, other_context, scale_kernel, sentinel, step, stream, with, Case, Env, Out, SCALE_PTX,
    UNTOUCHED,
};
use cudrv::call;
use cudrv::sys::*;

type FA = CUfunction_attribute;

/// scale_f32 and three visible globals: 64 bytes, a constant of 4 floats with an
/// initialiser, and a managed `u32`.
const GLOBALS_PTX: &str = concat!(
    include_str!("../../../examples/kernels/scale_f32.ptx"),
    "\n.visible .global .align 4 .b8 table[64];\n",
    ".visible .const .align 4 .f32 coeffs[4] = {1.0, 2.0, 3.0, 4.0};\n",
    ".visible .global .attribute(.managed) .align 4 .u32 managed_value;\n\0"
);

/// PTX with an instruction that is not one (driver-facts.md: INVALID_PTX, the log names it).
const BROKEN_PTX: &str =
    ".version 7.0\n.target sm_50\n.address_size 64\n\n.visible .entry broken()\n{\n\tbogus_instruction;\n\tret;\n}\n\0";

/// A library loaded from `image`, without options.
fn library(e: &Env, image: &str) -> Result<CUlibrary, Out> {
    let mut l = std::ptr::null_mut();
    let (o, v) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a NUL-terminated image; no options.
    let st = unsafe { e.p.cuLibraryLoadData(&mut l, image.as_ptr().cast(), o, v, 0, std::ptr::null_mut(), v, 0) };
    made("cuLibraryLoadData", st, l)
}

/// scale_f32 of a library of [`SCALE_PTX`].
fn library_kernel(e: &Env) -> Result<CUkernel, Out> {
    let l = library(e, SCALE_PTX)?;
    let mut k = std::ptr::null_mut();
    // SAFETY: a live library, a NUL-terminated name, a valid out-pointer.
    made("cuLibraryGetKernel", unsafe { e.p.cuLibraryGetKernel(&mut k, l, c"scale_f32".as_ptr()) }, k)
}

/// A module of [`GLOBALS_PTX`] in the current context.
fn globals_module(e: &Env) -> Result<CUmodule, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image and a valid out-pointer.
    made("cuModuleLoadData", unsafe { e.p.cuModuleLoadData(&mut m, GLOBALS_PTX.as_ptr().cast()) }, m)
}

/// `cuFuncGetParamInfo` of scale_f32's parameter `index`.
fn param_info(e: &Env, index: usize) -> Out {
    let f = with!(scale_kernel(e));
    let (mut offset, mut size) = (UNTOUCHED as usize, UNTOUCHED as usize);
    // SAFETY: a live function and valid out-pointers.
    let st = unsafe { e.p.cuFuncGetParamInfo(f, index, &mut offset, &mut size) };
    Out::of(st).eq("offset", number(offset as u64)).eq("size", number(size as u64))
}

/// Dynamic shared memory of 64 bytes per thread.
extern "C" fn per_thread_64(block: c_int) -> usize {
    usize::try_from(block).unwrap_or(0) * 64
}

/// `cuOccupancyMaxActiveClusters` and `cuOccupancyMaxPotentialClusterSize` of scale_f32
/// over a grid of 16 blocks of `block` threads with clusters of `cluster` blocks (none: no
/// attribute).
fn clusters(e: &Env, block: u32, cluster: Option<u32>) -> Out {
    let f = with!(scale_kernel(e));
    let mut attr =
        CUlaunchAttribute { id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, ..Default::default() };
    attr.value.clusterDim.x = cluster.unwrap_or(1);
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    let config = CUlaunchConfig {
        gridDimX: 16,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: std::ptr::null_mut(),
        attrs: &mut attr,
        numAttrs: u32::from(cluster.is_some()),
    };
    let (mut active, mut size) = (-7, -7);
    // SAFETY: a live function; the configuration and its attribute live across the calls.
    let st = unsafe { e.p.cuOccupancyMaxActiveClusters(&mut active, f, &config) };
    // SAFETY: as above.
    let st2 = unsafe { e.p.cuOccupancyMaxPotentialClusterSize(&mut size, f, &config) };
    Out::of(st).eq("clusters", active).eq("size_status", st2).eq("size", size)
}

/// Every occupancy query of scale_f32 (blocks of 256, potential block size, dynamic shared
/// memory for 2 blocks of 256, clusters of 2 and the potential cluster size on a created
/// stream), first with the case's context current, then with `current` (null: none):
/// the statuses with `current`, and whether each answer matched.
fn occupancy_with_current(e: &Env, current: CUcontext) -> Out {
    let f = with!(scale_kernel(e));
    let s = with!(stream(e));
    let ask = || {
        let mut attr =
            CUlaunchAttribute { id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, ..Default::default() };
        attr.value.clusterDim.x = 2;
        attr.value.clusterDim.y = 1;
        attr.value.clusterDim.z = 1;
        let mut config = CUlaunchConfig {
            gridDimX: 16,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: 128,
            blockDimY: 1,
            blockDimZ: 1,
            hStream: s,
            attrs: &mut attr,
            numAttrs: 1,
            ..Default::default()
        };
        let (mut blocks, mut grid, mut block, mut bytes, mut clusters, mut size) = (-7, -7, -7, 0usize, -7, -7);
        // SAFETY: a live function and stream; valid out-pointers; the configuration and
        // its attribute live across the calls.
        let statuses = unsafe {
            [
                e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut blocks, f, 256, 0),
                e.p.cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, None, 0, 0),
                e.p.cuOccupancyAvailableDynamicSMemPerBlock(&mut bytes, f, 2, 256),
                e.p.cuOccupancyMaxActiveClusters(&mut clusters, f, &config),
                {
                    config.numAttrs = 0;
                    e.p.cuOccupancyMaxPotentialClusterSize(&mut size, f, &config)
                },
            ]
        };
        (statuses, [blocks as i64, grid as i64, block as i64, bytes as i64, clusters as i64, size as i64])
    };
    let (_, want) = ask();
    // SAFETY: a live context, or null.
    step!(unsafe { e.p.cuCtxSetCurrent(current) });
    let (statuses, got) = ask();
    let names = ["blocks", "potential_block_size", "available_smem", "active_clusters", "potential_cluster_size"];
    let mut out = Out::of(CUresult::CUDA_SUCCESS);
    for (name, st) in names.iter().zip(statuses) {
        out = out.eq(name, st);
    }
    let same: Vec<bool> = want.iter().zip(&got).map(|(a, b)| a == b).collect();
    out.eq("answers_same", format!("{same:?}"))
}

/// Occupancy of a module's function with its context not current (cudrv asks so from
/// driver 13.0, retrying with the context current on CUDA_ERROR_INVALID_CONTEXT).
pub fn named_context_cases() -> Vec<Case> {
    vec![
        case!("occupancy.all_no_context", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            occupancy_with_current(e, std::ptr::null_mut())
        }),
        case!("occupancy.all_other_context", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            let other = with!(other_context(e));
            occupancy_with_current(e, other)
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [kernel_cases(), gating_cases()].concat()
}

fn kernel_cases() -> Vec<Case> {
    vec![
        case!("kernel.param_info", Ctx, since 12040 &[call::cuFuncGetParamInfo], |e| {
            let f = with!(scale_kernel(e));
            let mut places = Vec::new();
            for i in 0..3 {
                let (mut offset, mut size) = (0usize, 0usize);
                step!(e.p.cuFuncGetParamInfo(f, i, &mut offset, &mut size));
                places.push(format!("{offset}:{size}"));
            }
            Out::of(CUresult::CUDA_SUCCESS).eq("places", places.join(","))
        }),
        case!("kernel.param_info_past_end", Ctx, since 12040 &[call::cuFuncGetParamInfo], |e| { param_info(e, 3) }),
        case!("kernel.kernel_param_info_no_context", Init, since 12040 &[call::cuKernelGetParamInfo], |e| {
            let k = with!(library_kernel(e));
            let (mut offset, mut size) = (UNTOUCHED as usize, UNTOUCHED as usize);
            let st = e.p.cuKernelGetParamInfo(k, 1, &mut offset, &mut size);
            Out::of(st).eq("offset", number(offset as u64)).eq("size", number(size as u64))
        }),
        case!("kernel.kernel_param_info", Ctx, since 12040 &[call::cuKernelGetParamInfo], |e| {
            let k = with!(library_kernel(e));
            let (mut offset, mut size) = (UNTOUCHED as usize, UNTOUCHED as usize);
            let st = e.p.cuKernelGetParamInfo(k, 2, &mut offset, &mut size);
            Out::of(st).eq("offset", number(offset as u64)).eq("size", number(size as u64))
        }),
        case!("kernel.set_attribute_per_device", Init, |e| {
            let k = with!(library_kernel(e));
            let a = FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            let st = e.p.cuKernelSetAttribute(a, 64 * 1024, k, e.dev);
            let mut v = -7;
            let _ = e.p.cuKernelGetAttribute(&mut v, a, k, e.dev);
            Out::of(st).eq("value", v)
        }),
        case!("kernel.carveout_default", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut v = -7;
            Out::of(e.p.cuFuncGetAttribute(&mut v, FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f))
                .eq("value", v)
        }),
        case!("kernel.carveout_set", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let a = FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
            let st = e.p.cuFuncSetAttribute(f, a, 100);
            let mut v = -7;
            let _ = e.p.cuFuncGetAttribute(&mut v, a, f);
            Out::of(st).eq("value", v)
        }),
        case!("kernel.set_read_only_attribute", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuFuncSetAttribute(f, FA::CU_FUNC_ATTRIBUTE_NUM_REGS, 8))
        }),
        case!("kernel.func_cache_config", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuFuncSetCacheConfig(f, CUfunc_cache::CU_FUNC_CACHE_PREFER_SHARED))
        }),
        case!("kernel.kernel_cache_config", Init, |e| {
            let k = with!(library_kernel(e));
            Out::of(e.p.cuKernelSetCacheConfig(k, CUfunc_cache::CU_FUNC_CACHE_PREFER_L1, e.dev))
        }),
        case!("kernel.ctx_cache_config", Ctx, |e| {
            step!(e.p.cuCtxSetCacheConfig(CUfunc_cache::CU_FUNC_CACHE_PREFER_SHARED));
            let mut c = CUfunc_cache(77);
            Out::of(e.p.cuCtxGetCacheConfig(&mut c)).eq("config", c.0)
        }),
        case!("global.module_ptx", Ctx, |e| {
            let m = with!(globals_module(e));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuModuleGetGlobal(&mut d, &mut n, m, c"coeffs".as_ptr());
            let mut values = [0f32; 4];
            if st == CUresult::CUDA_SUCCESS {
                step!(e.p.cuMemcpyDtoH(values.as_mut_ptr().cast::<c_void>(), d, 16));
            }
            Out::of(st).eq("bytes", number(n as u64)).eq("initialised", values == [1.0, 2.0, 3.0, 4.0])
        }),
        case!("global.library_no_context", Init, |e| {
            let l = with!(library(e, GLOBALS_PTX));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuLibraryGetGlobal(&mut d, &mut n, l, c"table".as_ptr());
            Out::of(st).eq("dptr", number(d)).eq("bytes", number(n as u64))
        }),
        case!("global.library", Ctx, |e| {
            let l = with!(library(e, GLOBALS_PTX));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuLibraryGetGlobal(&mut d, &mut n, l, c"table".as_ptr());
            Out::of(st).eq("dptr", handle(d as usize as *mut c_void)).eq("bytes", number(n as u64))
        }),
        case!("global.library_missing", Ctx, |e| {
            let l = with!(library(e, GLOBALS_PTX));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuLibraryGetGlobal(&mut d, &mut n, l, c"no_such_global".as_ptr());
            Out::of(st).eq("dptr", number(d)).eq("bytes", number(n as u64))
        }),
        case!("global.managed_not_managed", Ctx, |e| {
            let l = with!(library(e, GLOBALS_PTX));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuLibraryGetManaged(&mut d, &mut n, l, c"table".as_ptr());
            Out::of(st).eq("dptr", number(d)).eq("bytes", number(n as u64))
        }),
        case!("global.managed_no_context", Init, |e| {
            let l = with!(library(e, GLOBALS_PTX));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuLibraryGetManaged(&mut d, &mut n, l, c"managed_value".as_ptr());
            Out::of(st).eq("dptr", handle(d as usize as *mut c_void)).eq("bytes", number(n as u64))
        }),
        case!("occupancy.blocks_256", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 256, 0)).eq("blocks", n)
        }),
        case!("occupancy.blocks_256_shared_40k", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 256, 40 << 10)).eq("blocks", n)
        }),
        case!("occupancy.blocks_over_function_limit", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 256, 64 << 10)).eq("blocks", n)
        }),
        case!("occupancy.blocks_no_context", Ctx, |e| {
            let f = with!(scale_kernel(e));
            step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 256, 0)).eq("blocks", n)
        }),
        case!("occupancy.blocks_unknown_flag", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut n, f, 256, 0, 4)).eq("blocks", n)
        }),
        // Block sizes at the edges (issue 25): none, negative, one above the limit.
        case!("occupancy.blocks_zero", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 0, 0)).eq("blocks", n)
        }),
        case!("occupancy.blocks_negative", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&mut n, f, -1, 0, 0)).eq("blocks", n)
        }),
        case!("occupancy.blocks_1025", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut n = -7;
            Out::of(e.p.cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, 1025, 0)).eq("blocks", n)
        }),
        case!("occupancy.potential_block_size_negative_limit", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let (mut grid, mut block) = (-7, -7);
            let st = e.p.cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, None, 0, -1);
            Out::of(st).eq("min_grid", grid).eq("block", block)
        }),
        case!("occupancy.potential_block_size", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let (mut grid, mut block) = (-7, -7);
            let st = e.p.cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, None, 4096, 0);
            Out::of(st).eq("min_grid", grid).eq("block", block)
        }),
        case!("occupancy.potential_block_size_per_thread", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let (mut grid, mut block) = (-7, -7);
            let st = e.p.cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, Some(per_thread_64), 0, 0);
            Out::of(st).eq("min_grid", grid).eq("block", block)
        }),
        case!("occupancy.potential_block_size_limit_96", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let (mut grid, mut block) = (-7, -7);
            let st = e.p.cuOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, None, 0, 96);
            Out::of(st).eq("min_grid", grid).eq("block", block)
        }),
        case!("occupancy.available_smem", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut bytes = UNTOUCHED as usize;
            let st = e.p.cuOccupancyAvailableDynamicSMemPerBlock(&mut bytes, f, 2, 256);
            Out::of(st).eq("bytes", number(bytes as u64))
        }),
        case!("occupancy.available_smem_too_many_blocks", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut bytes = UNTOUCHED as usize;
            let st = e.p.cuOccupancyAvailableDynamicSMemPerBlock(&mut bytes, f, 3, 1024);
            Out::of(st).eq("bytes", number(bytes as u64))
        }),
        case!("occupancy.clusters_none", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            clusters(e, 128, None)
        }),
        case!("occupancy.clusters_2_of_128", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            clusters(e, 128, Some(2))
        }),
        case!("occupancy.clusters_4_of_256", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            clusters(e, 256, Some(4))
        }),
        case!("occupancy.clusters_8_of_1024", Ctx, since 11070 &[call::cuOccupancyMaxActiveClusters], |e| {
            clusters(e, 1024, Some(8))
        }),
        case!("jit.wall_time_and_logs", Ctx, |e| {
            let mut info = [0u8; 4096];
            let mut error = [0u8; 4096];
            type O = CUjit_option;
            let mut options = [
                O::CU_JIT_WALL_TIME,
                O::CU_JIT_INFO_LOG_BUFFER,
                O::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                O::CU_JIT_ERROR_LOG_BUFFER,
                O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                O::CU_JIT_LOG_VERBOSE,
            ];
            let mut values: [usize; 6] = [0, info.as_mut_ptr() as usize, 4096, error.as_mut_ptr() as usize, 4096, 1];
            let mut m = std::ptr::null_mut();
            let st = e.p.cuModuleLoadDataEx(
                &mut m,
                SCALE_PTX.as_ptr().cast(),
                6,
                options.as_mut_ptr(),
                values.as_mut_ptr().cast(),
            );
            let [a, b, c, d, ..] = values[0].to_ne_bytes();
            let ms = f32::from_ne_bytes([a, b, c, d]);
            Out::of(st)
                .eq("wall_is_float", ms.is_finite() && ms > 0.0 && ms < 60_000.0)
                .eq("info_written", values[2] > 0 && values[2] < 4096)
                .eq("error_written", values[4])
                .info("wall_bits", number(values[0] as u64))
                .info("info_size", number(values[2] as u64))
        }),
        case!("jit.broken_ptx", Ctx, |e| {
            let mut error = [0u8; 4096];
            type O = CUjit_option;
            let mut options = [O::CU_JIT_ERROR_LOG_BUFFER, O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
            let mut values: [usize; 2] = [error.as_mut_ptr() as usize, 4096];
            let mut m: CUmodule = sentinel();
            let st = e.p.cuModuleLoadDataEx(
                &mut m,
                BROKEN_PTX.as_ptr().cast(),
                2,
                options.as_mut_ptr(),
                values.as_mut_ptr().cast(),
            );
            let log = String::from_utf8_lossy(&error);
            Out::of(st)
                .eq("module", handle(m))
                .eq("log_names_it", log.contains("line 7") && log.contains("'bogus_instruction'"))
        }),
    ]
}

/// PTX version and target gating (issue 14), not yet recorded: the H200's answers for a
/// `.version` newer than its driver's JIT, a target above sm_90, and valid PTX.
/// The PTX gating cases: `.version` and `.target` against the driver's JIT.
fn gating_cases() -> Vec<Case> {
    vec![
        case!("jit.ptx_version_9_9", Ctx, |e| { load_gated(e, GATED_PTX_9_9) }),
        case!("jit.ptx_target_sm_100", Ctx, |e| { load_gated(e, GATED_PTX_SM_100) }),
        case!("jit.ptx_target_sm_100a", Ctx, |e| { load_gated(e, GATED_PTX_SM_100A) }),
        case!("jit.ptx_valid", Ctx, |e| { load_gated(e, GATED_PTX_VALID) }),
    ]
}

/// An empty kernel's PTX with these `.version` and `.target` lines.
macro_rules! gated_ptx {
    ($version:literal, $target:literal) => {
        concat!(
            ".version ",
            $version,
            "\n.target ",
            $target,
            "\n.address_size 64\n\n.visible .entry empty()\n{\n\tret;\n}\n\0"
        )
    };
}
const GATED_PTX_9_9: &str = gated_ptx!("9.9", "sm_90");
const GATED_PTX_SM_100: &str = gated_ptx!("8.8", "sm_100");
const GATED_PTX_SM_100A: &str = gated_ptx!("8.8", "sm_100a");
const GATED_PTX_VALID: &str = gated_ptx!("7.0", "sm_50");

/// `cuModuleLoadDataEx` of `ptx` with an error log: the status, whether the module was
/// written, and the log's first line (shown, not compared).
fn load_gated(e: &Env, ptx: &str) -> Out {
    let mut error = [0u8; 4096];
    type O = CUjit_option;
    let mut options = [O::CU_JIT_ERROR_LOG_BUFFER, O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values: [usize; 2] = [error.as_mut_ptr() as usize, 4096];
    let mut m: CUmodule = sentinel();
    // SAFETY: a NUL-terminated image; two options with their values, the buffer outliving
    // the call.
    let st = unsafe {
        e.p.cuModuleLoadDataEx(&mut m, ptx.as_ptr().cast(), 2, options.as_mut_ptr(), values.as_mut_ptr().cast())
    };
    let n = values[1].min(error.len());
    let log = String::from_utf8_lossy(error.get(..n).unwrap_or(&[])).into_owned();
    let first = log.lines().next().unwrap_or("").to_string();
    Out::of(st).eq("module", handle(m)).info("log", first)
}
