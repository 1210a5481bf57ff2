//! The driver's legacy (deprecated) launch API, context attach counts and the multi-device
//! cooperative launch: `cuFuncSetBlockShape`, `cuFuncSetSharedSize`, `cuParamSet*`,
//! `cuLaunch`, `cuLaunchGrid`, `cuLaunchGridAsync`, `cuFuncSetSharedMemConfig`,
//! `cuCtxAttach`, `cuCtxDetach`, `cuLaunchCooperativeKernelMultiDevice`. Pending: not yet
//! recorded on the H200 (the stand-in answers in `standin/src/legacy_launch.rs`,
//! `legacy_ctx.rs` and `coop_multi.rs`).
//!
//! Not called: a destroyed or made-up function handle (the driver reads through it).

use std::os::raw::c_void;

use super::{
    alloc, case, handle, other_context, read_f32, scale_kernel, step, stream, with, write_f32, Case, Env, Out,
};
use cudrv::sys::*;

/// The parameter buffer of `scale_f32(float* x, float s, int n)`: x at 0, s at 8, n at 12.
const SCALE_PARAMS: u32 = 16;

/// `scale_f32` with x = 4 floats [1, 2, 3, 4], s = 2 and n = 4 set through `cuParamSet*`
/// (the size set to `size`) and a block of `block` threads; returns the function and x.
unsafe fn prepared(e: &Env, size: u32, block: [i32; 3]) -> Result<(CUfunction, CUdeviceptr), Out> {
    let f = scale_kernel(e)?;
    let x = alloc(e, 16)?;
    write_f32(e, x, &[1.0, 2.0, 3.0, 4.0])?;
    let mut xp = x;
    let made = |what: &str, st: CUresult| super::made(what, st, ());
    // SAFETY: a live function; `xp` holds 8 bytes.
    made("cuParamSetv", unsafe { e.p.cuParamSetv(f, 0, (&raw mut xp).cast(), 8) })?;
    // SAFETY: a live function.
    made("cuParamSetf", unsafe { e.p.cuParamSetf(f, 8, 2.0) })?;
    // SAFETY: a live function.
    made("cuParamSeti", unsafe { e.p.cuParamSeti(f, 12, 4) })?;
    // SAFETY: a live function.
    made("cuParamSetSize", unsafe { e.p.cuParamSetSize(f, size) })?;
    if block != [0; 3] {
        // SAFETY: a live function.
        made("cuFuncSetBlockShape", unsafe { e.p.cuFuncSetBlockShape(f, block[0], block[1], block[2]) })?;
    }
    Ok((f, x))
}

/// The launch's status, the synchronisation's, and whether x was scaled.
fn outcome(e: &Env, st: CUresult, x: CUdeviceptr) -> Out {
    // SAFETY: no arguments.
    let sync = unsafe { e.p.cuCtxSynchronize() };
    let back = with!(read_f32(e, x, 4));
    Out::of(st).eq("then_synchronize", sync).eq("scaled", back == [2.0, 4.0, 6.0, 8.0])
}

/// `cuLaunchGrid` of the prepared `scale_f32` over `grid` blocks.
unsafe fn grid_launch(e: &Env, size: u32, block: [i32; 3], grid: (i32, i32)) -> Out {
    // SAFETY: the case's live context is current.
    let (f, x) = with!(unsafe { prepared(e, size, block) });
    // SAFETY: a live function.
    let st = unsafe { e.p.cuLaunchGrid(f, grid.0, grid.1) };
    outcome(e, st, x)
}

/// A `CUDA_LAUNCH_PARAMS` entry of `scale_f32` over 4 floats, one block of 32 on `s`.
fn multi_entry(f: CUfunction, s: CUstream, args: &mut [*mut c_void; 3]) -> CUDA_LAUNCH_PARAMS {
    CUDA_LAUNCH_PARAMS {
        function: f,
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 32,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        hStream: s,
        kernelParams: args.as_mut_ptr(),
    }
}

/// `cuLaunchCooperativeKernelMultiDevice` of `n` copies of one `scale_f32` entry on a
/// created stream (`null_stream`: the NULL stream) with `flags`.
unsafe fn multi(e: &Env, n: usize, count: u32, flags: u32, null_stream: bool) -> Out {
    let f = with!(scale_kernel(e));
    let s = if null_stream { std::ptr::null_mut() } else { with!(stream(e)) };
    let x = with!(alloc(e, 16));
    with!(write_f32(e, x, &[1.0, 2.0, 3.0, 4.0]));
    let (mut xp, mut sc, mut k) = (x, 2.0f32, 4i32);
    let mut args: [*mut c_void; 3] = [(&raw mut xp).cast(), (&raw mut sc).cast(), (&raw mut k).cast()];
    let mut list = vec![multi_entry(f, s, &mut args); n];
    // SAFETY: `list` holds `n` entries; `count` is at most `n` but where a case says.
    let st = unsafe { e.p.cuLaunchCooperativeKernelMultiDevice(list.as_mut_ptr(), count, flags) };
    outcome(e, st, x)
}

fn launches() -> Vec<Case> {
    vec![
        case!("legacy_launch.grid_runs_kernel", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [32, 1, 1], (1, 1)) }),
        case!("legacy_launch.grid_two_blocks", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [2, 1, 1], (2, 1)) }),
        case!("legacy_launch.grid_zero_width", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [32, 1, 1], (0, 1)) }),
        case!("legacy_launch.grid_negative_height", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [32, 1, 1], (1, -1)) }),
        case!("legacy_launch.grid_without_block_shape", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [0; 3], (1, 1)) }),
        case!("legacy_launch.grid_param_size_short", Ctx, |e| { grid_launch(e, 8, [32, 1, 1], (1, 1)) }),
        case!("legacy_launch.grid_block_too_big", Ctx, |e| { grid_launch(e, SCALE_PARAMS, [2048, 1, 1], (1, 1)) }),
        case!("legacy_launch.launch_one_block", Ctx, |e| {
            let (f, x) = with!(prepared(e, SCALE_PARAMS, [32, 1, 1]));
            outcome(e, e.p.cuLaunch(f), x)
        }),
        case!("legacy_launch.grid_async_on_stream", Ctx, |e| {
            let (f, x) = with!(prepared(e, SCALE_PARAMS, [32, 1, 1]));
            let s = with!(stream(e));
            let st = e.p.cuLaunchGridAsync(f, 1, 1, s);
            let sync = e.p.cuStreamSynchronize(s);
            outcome(e, st, x).eq("stream_synchronize", sync)
        }),
        case!("legacy_launch.grid_null_function", Ctx, |e| { Out::of(e.p.cuLaunchGrid(std::ptr::null_mut(), 1, 1)) }),
        case!("legacy_launch.launch_null_function", Ctx, |e| { Out::of(e.p.cuLaunch(std::ptr::null_mut())) }),
        case!("legacy_launch.shared_size_too_big", Ctx, |e| {
            let (f, x) = with!(prepared(e, SCALE_PARAMS, [32, 1, 1]));
            let set = e.p.cuFuncSetSharedSize(f, 300 << 10);
            outcome(e, e.p.cuLaunchGrid(f, 1, 1), x).eq("set", set)
        }),
        case!("legacy_launch.shared_size_48k", Ctx, |e| {
            let (f, x) = with!(prepared(e, SCALE_PARAMS, [32, 1, 1]));
            let set = e.p.cuFuncSetSharedSize(f, 48 << 10);
            outcome(e, e.p.cuLaunchGrid(f, 1, 1), x).eq("set", set)
        }),
    ]
}

fn setters() -> Vec<Case> {
    vec![
        case!("legacy_launch.block_shape_zero", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuFuncSetBlockShape(f, 0, 1, 1))
        }),
        case!("legacy_launch.block_shape_negative", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuFuncSetBlockShape(f, 32, -1, 1))
        }),
        case!("legacy_launch.block_shape_too_big", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuFuncSetBlockShape(f, 2048, 1, 1))
        }),
        case!("legacy_launch.block_shape_null_function", Ctx, |e| {
            Out::of(e.p.cuFuncSetBlockShape(std::ptr::null_mut(), 32, 1, 1))
        }),
        case!("legacy_launch.block_shape_no_context", Ctx, |e| {
            let f = with!(scale_kernel(e));
            step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
            let st = e.p.cuFuncSetBlockShape(f, 32, 1, 1);
            step!(e.p.cuCtxSetCurrent(e.ctx));
            Out::of(st)
        }),
        case!("legacy_launch.param_set_size_limits", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuParamSetSize(f, 4096))
                .eq("4097", e.p.cuParamSetSize(f, 4097))
                .eq("32764", e.p.cuParamSetSize(f, 32764))
                .eq("32768", e.p.cuParamSetSize(f, 32768))
        }),
        case!("legacy_launch.param_seti_limits", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuParamSeti(f, 4092, 1))
                .eq("4093", e.p.cuParamSeti(f, 4093, 1))
                .eq("32760", e.p.cuParamSeti(f, 32760, 1))
                .eq("negative", e.p.cuParamSeti(f, -4, 1))
        }),
        case!("legacy_launch.param_setf_past_end", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuParamSetf(f, 4096, 1.0))
        }),
        case!("legacy_launch.param_setv_limits", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut bytes = [0u8; 16];
            Out::of(e.p.cuParamSetv(f, 4080, bytes.as_mut_ptr().cast(), 16))
                .eq("past_end", e.p.cuParamSetv(f, 4081, bytes.as_mut_ptr().cast(), 16))
                .eq("zero_bytes", e.p.cuParamSetv(f, 0, bytes.as_mut_ptr().cast(), 0))
        }),
        case!("legacy_launch.param_setv_null", Ctx, |e| {
            let f = with!(scale_kernel(e));
            Out::of(e.p.cuParamSetv(f, 0, std::ptr::null_mut(), 4))
                .eq("zero_bytes", e.p.cuParamSetv(f, 0, std::ptr::null_mut(), 0))
        }),
        case!("legacy_launch.param_set_null_function", Ctx, |e| {
            Out::of(e.p.cuParamSeti(std::ptr::null_mut(), 0, 1))
                .eq("size", e.p.cuParamSetSize(std::ptr::null_mut(), 4))
                .eq("shared", e.p.cuFuncSetSharedSize(std::ptr::null_mut(), 0))
        }),
        case!("legacy_launch.param_set_tex_ref", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let mut t = std::ptr::null_mut();
            step!(e.p.cuTexRefCreate(&mut t));
            let st = e.p.cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, t);
            let unit0 = e.p.cuParamSetTexRef(f, 0, t);
            let null = e.p.cuParamSetTexRef(f, CU_PARAM_TR_DEFAULT, std::ptr::null_mut());
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("unit_0", unit0).eq("null_texref", null)
        }),
        case!("legacy_launch.func_shared_mem_config", Ctx, |e| {
            let f = with!(scale_kernel(e));
            let c = |v: u32| e.p.cuFuncSetSharedMemConfig(f, CUsharedconfig(v));
            Out::of(c(0))
                .eq("four_byte", c(1))
                .eq("eight_byte", c(2))
                .eq("3", c(3))
                .eq("null_function", e.p.cuFuncSetSharedMemConfig(std::ptr::null_mut(), CUsharedconfig(0)))
        }),
    ]
}

fn contexts() -> Vec<Case> {
    vec![
        case!("legacy_launch.ctx_attach_current", Ctx, |e| {
            let mut c: CUcontext = super::sentinel();
            let st = e.p.cuCtxAttach(&mut c, 0);
            let same = c == e.ctx;
            let detach = e.p.cuCtxDetach(e.ctx);
            let mut now = std::ptr::null_mut();
            step!(e.p.cuCtxGetCurrent(&mut now));
            Out::of(st).eq("same", same).eq("detach", detach).eq("still_current", now == e.ctx)
        }),
        case!("legacy_launch.ctx_attach_flags", Ctx, |e| {
            let mut c: CUcontext = super::sentinel();
            let st = e.p.cuCtxAttach(&mut c, 1);
            Out::of(st).eq("ctx", handle(c))
        }),
        case!("legacy_launch.ctx_attach_null", Ctx, |e| { Out::of(e.p.cuCtxAttach(std::ptr::null_mut(), 0)) }),
        case!("legacy_launch.ctx_attach_no_context", Init, |e| {
            let mut c: CUcontext = super::sentinel();
            let st = e.p.cuCtxAttach(&mut c, 0);
            Out::of(st).eq("ctx", handle(c))
        }),
        case!("legacy_launch.ctx_detach_destroys", Ctx, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuCtxCreate_v3020(&mut c, 0, e.dev));
            let mut a = std::ptr::null_mut();
            let attach = e.p.cuCtxAttach(&mut a, 0);
            let first = e.p.cuCtxDetach(c);
            let mut version = 0u32;
            let alive = e.p.cuCtxGetApiVersion(c, &mut version);
            let second = e.p.cuCtxDetach(c);
            let mut now = std::ptr::null_mut();
            let current = e.p.cuCtxGetCurrent(&mut now);
            step!(e.p.cuCtxSetCurrent(e.ctx));
            Out::of(attach)
                .eq("first_detach", first)
                .eq("alive_after_first", alive)
                .eq("second_detach", second)
                .eq("get_current", current)
                .eq("current_is_detached", now == c)
        }),
        case!("legacy_launch.ctx_detach_not_current", Ctx, |e| {
            let c = with!(other_context(e));
            let st = e.p.cuCtxDetach(c);
            step!(e.p.cuCtxDestroy(c));
            Out::of(st)
        }),
        case!("legacy_launch.ctx_detach_null", Ctx, |e| { Out::of(e.p.cuCtxDetach(std::ptr::null_mut())) }),
        case!("legacy_launch.ctx_detach_primary", Init, |e| {
            let mut dev = 0;
            step!(e.p.cuDeviceGet(&mut dev, 0));
            let mut c = std::ptr::null_mut();
            step!(e.p.cuDevicePrimaryCtxRetain(&mut c, dev));
            step!(e.p.cuCtxSetCurrent(c));
            let st = e.p.cuCtxDetach(c);
            step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
            step!(e.p.cuDevicePrimaryCtxRelease(dev));
            Out::of(st)
        }),
    ]
}

fn multi_device() -> Vec<Case> {
    vec![
        case!("legacy_launch.multi_device_one", Ctx, |e| { multi(e, 1, 1, 0, false) }),
        case!("legacy_launch.multi_device_no_sync_flags", Ctx, |e| {
            let flags = CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC
                | CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;
            multi(e, 1, 1, flags, false)
        }),
        case!("legacy_launch.multi_device_bad_flags", Ctx, |e| { multi(e, 1, 1, 4, false) }),
        case!("legacy_launch.multi_device_zero", Ctx, |e| { multi(e, 1, 0, 0, false) }),
        case!("legacy_launch.multi_device_null_stream", Ctx, |e| { multi(e, 1, 1, 0, true) }),
        case!("legacy_launch.multi_device_same_device_twice", Ctx, |e| { multi(e, 2, 2, 0, false) }),
        case!("legacy_launch.multi_device_null_list", Ctx, |e| {
            Out::of(e.p.cuLaunchCooperativeKernelMultiDevice(std::ptr::null_mut(), 1, 0))
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [launches(), setters(), contexts(), multi_device()].concat()
}
