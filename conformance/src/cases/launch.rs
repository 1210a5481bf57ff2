//! Kernel launches and the limits checked at launch.

use super::{
    alloc, case, launch_scale, other_context, read_f32, scale_kernel, step, stream, with, write_f32, Case, Env, Out,
    Shape,
};
use cudrv::sys::*;

/// Launches scale_f32 over 4 floats with the given shape on a fresh stream (threads past 4
/// do nothing); reports the status and whether the data was scaled.
fn shaped(e: &Env, grid: [u32; 3], block: [u32; 3], shared: u32) -> Out {
    let f = with!(scale_kernel(e));
    let s = with!(stream(e));
    let x = with!(alloc(e, 16));
    with!(write_f32(e, x, &[1.0, 2.0, 3.0, 4.0]));
    // SAFETY: a live function and stream of this case.
    let st = unsafe { launch_scale(e, f, Shape { grid, block, shared }, s, x, 4) };
    // SAFETY: a live stream.
    let sync = unsafe { e.p.cuStreamSynchronize(s) };
    let back = with!(read_f32(e, x, 4));
    Out::of(st).eq("then_synchronize", sync).eq("scaled", back == [2.0, 4.0, 6.0, 8.0])
}

/// The `cuLaunchKernelEx` configuration of scale_f32 over 4 floats: one block of 32 on
/// `s`, with `attrs`.
fn scale_config(s: CUstream, attrs: &mut [CUlaunchAttribute]) -> CUlaunchConfig {
    CUlaunchConfig {
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 32,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: s,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    }
}

/// A `cuLaunchKernelEx` of scale_f32 over 4 floats with `attrs`.
fn launch_ex(e: &Env, attrs: &mut [CUlaunchAttribute]) -> Out {
    let f = with!(scale_kernel(e));
    let s = with!(stream(e));
    let x = with!(alloc(e, 16));
    with!(write_f32(e, x, &[1.0, 2.0, 3.0, 4.0]));
    let cfg = scale_config(s, attrs);
    let (mut xp, mut sc, mut n) = (x, 2.0f32, 4i32);
    let mut args: [*mut std::os::raw::c_void; 3] = [(&raw mut xp).cast(), (&raw mut sc).cast(), (&raw mut n).cast()];
    // SAFETY: a valid configuration and arguments matching scale_f32's parameters.
    let st = unsafe { e.p.cuLaunchKernelEx(&cfg, f, args.as_mut_ptr(), std::ptr::null_mut()) };
    // SAFETY: a live stream.
    let sync = unsafe { e.p.cuStreamSynchronize(s) };
    let back = with!(read_f32(e, x, 4));
    Out::of(st).eq("then_synchronize", sync).eq("scaled", back == [2.0, 4.0, 6.0, 8.0])
}

/// Launches scale_f32 over 4 floats on a created stream of the case's context with
/// `current` current instead (null: none), through `cuLaunchKernel` or (`ex`)
/// `cuLaunchKernelEx`; the case's context is made current again to read the result.
fn launch_with_current(e: &Env, current: CUcontext, ex: bool) -> Out {
    let f = with!(scale_kernel(e));
    let s = with!(stream(e));
    let x = with!(alloc(e, 16));
    with!(write_f32(e, x, &[1.0, 2.0, 3.0, 4.0]));
    let (mut xp, mut sc, mut n) = (x, 2.0f32, 4i32);
    let mut args: [*mut std::os::raw::c_void; 3] = [(&raw mut xp).cast(), (&raw mut sc).cast(), (&raw mut n).cast()];
    let cfg = scale_config(s, &mut []);
    // SAFETY: a live context, or null.
    step!(unsafe { e.p.cuCtxSetCurrent(current) });
    let st = if ex {
        // SAFETY: a valid configuration and arguments matching scale_f32's parameters.
        unsafe { e.p.cuLaunchKernelEx(&cfg, f, args.as_mut_ptr(), std::ptr::null_mut()) }
    } else {
        // SAFETY: a live function and stream of this case.
        unsafe { launch_scale(e, f, Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 0 }, s, x, 4) }
    };
    // SAFETY: a live stream.
    let sync = unsafe { e.p.cuStreamSynchronize(s) };
    // SAFETY: a live context, or null.
    step!(unsafe { e.p.cuCtxSetCurrent(e.ctx) });
    let back = with!(read_f32(e, x, 4));
    Out::of(st).eq("then_synchronize", sync).eq("scaled", back == [2.0, 4.0, 6.0, 8.0])
}

/// Launches on a created stream with its context not current (cudrv launches so from
/// driver 13.0, `scope::run_named`).
pub fn named_context_cases() -> Vec<Case> {
    vec![
        case!("launch.no_context", Ctx, |e| { launch_with_current(e, std::ptr::null_mut(), false) }),
        case!("launch.other_context", Ctx, |e| {
            let other = with!(other_context(e));
            launch_with_current(e, other, false)
        }),
        case!("launch.ex_no_context", Ctx, |e| { launch_with_current(e, std::ptr::null_mut(), true) }),
        case!("launch.ex_other_context", Ctx, |e| {
            let other = with!(other_context(e));
            launch_with_current(e, other, true)
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("launch.basic", Ctx, |e| { shaped(e, [1, 1, 1], [32, 1, 1], 0) }),
        case!("launch.block_1024", Ctx, |e| { shaped(e, [1, 1, 1], [1024, 1, 1], 0) }),
        case!("launch.block_1025", Ctx, |e| { shaped(e, [1, 1, 1], [1025, 1, 1], 0) }),
        case!("launch.block_2048", Ctx, |e| { shaped(e, [1, 1, 1], [2048, 1, 1], 0) }),
        case!("launch.block_32x32x2", Ctx, |e| { shaped(e, [1, 1, 1], [32, 32, 2], 0) }),
        case!("launch.block_z_64", Ctx, |e| { shaped(e, [1, 1, 1], [1, 1, 64], 0) }),
        case!("launch.block_z_65", Ctx, |e| { shaped(e, [1, 1, 1], [1, 1, 65], 0) }),
        case!("launch.block_zero", Ctx, |e| { shaped(e, [1, 1, 1], [0, 1, 1], 0) }),
        case!("launch.grid_zero", Ctx, |e| { shaped(e, [0, 1, 1], [32, 1, 1], 0) }),
        case!("launch.grid_y_65535", Ctx, |e| { shaped(e, [1, 65535, 1], [1, 1, 1], 0) }),
        case!("launch.grid_y_65536", Ctx, |e| { shaped(e, [1, 65536, 1], [32, 1, 1], 0) }),
        case!("launch.grid_z_65536", Ctx, |e| { shaped(e, [1, 1, 65536], [32, 1, 1], 0) }),
        case!("launch.grid_x_2_31", Ctx, |e| { shaped(e, [1 << 31, 1, 1], [32, 1, 1], 0) }),
        case!("launch.shared_48k", Ctx, |e| { shaped(e, [1, 1, 1], [32, 1, 1], 48 * 1024) }),
        case!("launch.shared_48k_plus_1", Ctx, |e| { shaped(e, [1, 1, 1], [32, 1, 1], 48 * 1024 + 1) }),
        case!("launch.shared_1m", Ctx, |e| { shaped(e, [1, 1, 1], [32, 1, 1], 1 << 20) }),
        case!("launch.shared_64k_opted_in", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let a = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            step!(e.p.cuFuncSetAttribute(f, a, 64 * 1024));
            let s = with!(stream(e));
            let x = with!(alloc(e, 16));
            let st = launch_scale(e, f, Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 64 * 1024 }, s, x, 4);
            Out::of(st).eq("then_synchronize", e.p.cuStreamSynchronize(s))
        }),
        case!("launch.null_function", Ctx, |e| {
            let x = with!(alloc(e, 16));
            let st = launch_scale(
                e,
                std::ptr::null_mut(),
                Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 0 },
                std::ptr::null_mut(),
                x,
                4,
            );
            Out::of(st)
        }),
        case!("launch.null_params", Ctx, |e| {
            let f = with!(scale_kernel(e));

            Out::of(e.p.cuLaunchKernel(
                f,
                1,
                1,
                1,
                32,
                1,
                1,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            ))
        }),
        case!("launch.legacy_stream", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let x = with!(alloc(e, 16));
            with!(write_f32(e, x, &[1.0, 2.0, 3.0, 4.0]));
            let st =
                launch_scale(e, f, Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 0 }, std::ptr::null_mut(), x, 4);
            let back = with!(read_f32(e, x, 4));
            Out::of(st).eq("scaled", back == [2.0, 4.0, 6.0, 8.0])
        }),
        case!("launch.destroyed_stream", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let s = with!(stream(e));
            step!(e.p.cuStreamDestroy(s));
            let x = with!(alloc(e, 16));
            Out::of(launch_scale(e, f, Shape { grid: [1, 1, 1], block: [32, 1, 1], shared: 0 }, s, x, 4))
        }),
        case!("launch.ex_basic", Ctx, |e| { launch_ex(e, &mut []) }),
        case!("launch.ex_cooperative", Ctx, |e| {
            let mut a =
                CUlaunchAttribute { id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE, ..Default::default() };
            a.value.cooperative = 1;
            launch_ex(e, &mut [a])
        }),
        case!("launch.ex_cluster_2", Ctx, |e| {
            let mut a = CUlaunchAttribute {
                id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                ..Default::default()
            };
            a.value.clusterDim.x = 2;
            a.value.clusterDim.y = 1;
            a.value.clusterDim.z = 1;
            launch_ex(e, &mut [a])
        }),
        case!("launch.ex_unknown_attribute", Ctx, |e| {
            let a = CUlaunchAttribute { id: CUlaunchAttributeID(0x777), ..Default::default() };
            launch_ex(e, &mut [a])
        }),
    ]
}
