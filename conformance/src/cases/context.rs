//! Contexts: primary and created, the context stack, queries, and what is left of a
//! destroyed one.

use super::{case, handle, made, number, number32, sentinel, step, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// Creates a context on device 0 with `cuCtxCreate_v3020` (in every driver since 3.2); it
/// is current afterwards.
fn create(e: &Env) -> Result<CUcontext, Out> {
    let mut c = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuCtxCreate_v3020", unsafe { e.p.cuCtxCreate_v3020(&mut c, 0, e.dev) }, c)
}

/// Retains device 0's primary context and releases it again so that it is destroyed;
/// leaves the dead handle current.
fn dead_primary(e: &Env) -> Result<CUcontext, Out> {
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointers and a live device.
    unsafe {
        made("cuDevicePrimaryCtxRetain", e.p.cuDevicePrimaryCtxRetain(&mut c, e.dev), ())?;
        made("cuCtxSetCurrent", e.p.cuCtxSetCurrent(c), ())?;
        made("cuDevicePrimaryCtxRelease", e.p.cuDevicePrimaryCtxRelease(e.dev), c)
    }
}

/// A created context, destroyed; nothing current.
fn dead_created(e: &Env) -> Result<CUcontext, Out> {
    let c = create(e)?;
    // SAFETY: a live context of this case.
    made("cuCtxDestroy", unsafe { e.p.cuCtxDestroy(c) }, c)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("context.current_none", Init, |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxGetCurrent(&mut c)).eq("ctx", handle(c))
        }),
        case!("context.current_before_init", Bare, |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxGetCurrent(&mut c)).eq("ctx", handle(c))
        }),
        case!("context.current_primary", Ctx, |e| {
            let mut c: CUcontext = sentinel();
            let st = e.p.cuCtxGetCurrent(&mut c);
            Out::of(st).eq("is_primary", c == e.ctx)
        }),
        case!("context.get_device_none", Init, |e| {
            let mut d = -7;
            Out::of(e.p.cuCtxGetDevice(&mut d)).eq("device", d)
        }),
        case!("context.get_device", Ctx, |e| {
            let mut d = -7;
            Out::of(e.p.cuCtxGetDevice(&mut d)).eq("device", d)
        }),
        case!("context.synchronize_none", Init, |e| { Out::of(e.p.cuCtxSynchronize()) }),
        case!("context.synchronize", Ctx, |e| { Out::of(e.p.cuCtxSynchronize()) }),
        case!("context.api_version", Ctx, |e| {
            let mut v = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetApiVersion(e.ctx, &mut v)).eq("version", number32(v))
        }),
        case!("context.api_version_null_ctx", Ctx, |e| {
            let mut v = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetApiVersion(std::ptr::null_mut(), &mut v)).eq("version", number32(v))
        }),
        case!("context.flags", Ctx, |e| {
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetFlags(&mut f)).eq("flags", number32(f))
        }),
        case!("context.limit_stack", Ctx, |e| { limit(e, CUlimit::CU_LIMIT_STACK_SIZE, true) }),
        case!("context.limit_malloc_heap", Ctx, |e| { limit(e, CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, false) }),
        case!("context.limit_printf_fifo", Ctx, |e| { limit(e, CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE, false) }),
        case!("context.limit_unknown", Ctx, |e| { limit(e, CUlimit(0x7777), true) }),
        case!("context.set_limit_stack", Ctx, |e| {
            step!(e.p.cuCtxSetLimit(CUlimit::CU_LIMIT_STACK_SIZE, 4096));
            limit(e, CUlimit::CU_LIMIT_STACK_SIZE, true)
        }),
        case!("context.stream_priority_range", Ctx, |e| {
            let (mut least, mut greatest) = (-77, -77);
            let st = e.p.cuCtxGetStreamPriorityRange(&mut least, &mut greatest);
            Out::of(st).eq("least", least).eq("greatest", greatest)
        }),
        case!("context.push_null", Init, |e| { Out::of(e.p.cuCtxPushCurrent(std::ptr::null_mut())) }),
        case!("context.pop_empty", Init, |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxPopCurrent(&mut c)).eq("ctx", handle(c))
        }),
        case!("context.push_pop", Ctx, |e| {
            step!(e.p.cuCtxPushCurrent(e.ctx));
            let mut c: CUcontext = sentinel();
            let st = e.p.cuCtxPopCurrent(&mut c);
            Out::of(st).eq("popped_primary", c == e.ctx)
        }),
        case!("context.set_current_null", Ctx, |e| {
            let st = e.p.cuCtxSetCurrent(std::ptr::null_mut());
            let mut c: CUcontext = sentinel();
            let _ = e.p.cuCtxGetCurrent(&mut c);
            Out::of(st).eq("current", handle(c))
        }),
        case!("context.create", Init, |e| {
            let mut c: CUcontext = sentinel();
            let st = e.p.cuCtxCreate_v3020(&mut c, 0, e.dev);
            let mut cur: CUcontext = sentinel();
            let _ = e.p.cuCtxGetCurrent(&mut cur);
            Out::of(st).eq("ctx", handle(c)).eq("made_current", cur == c)
        }),
        case!("context.create_bad_device", Init, |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxCreate_v3020(&mut c, 0, 99)).eq("ctx", handle(c))
        }),
        case!("context.created_flags_0", Init, |e| {
            let _c = with!(create(e));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetFlags(&mut f)).eq("flags", number32(f))
        }),
        case!("context.created_flags_0x14", Init, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuCtxCreate_v3020(&mut c, 0x14, e.dev));
            let mut f = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetFlags(&mut f)).eq("flags", number32(f))
        }),
        case!("context.create_bad_flags", Init, |e| {
            let mut c: CUcontext = sentinel();
            Out::of(e.p.cuCtxCreate_v3020(&mut c, 0xffff_0000, e.dev)).eq("ctx", handle(c))
        }),
        case!("context.destroy_created", Init, |e| {
            let c = with!(create(e));
            let st = e.p.cuCtxDestroy(c);
            let mut cur: CUcontext = sentinel();
            let _ = e.p.cuCtxGetCurrent(&mut cur);
            Out::of(st).eq("current", handle(cur))
        }),
        case!("context.destroy_twice", Init, |e| {
            let c = with!(dead_created(e));
            Out::of(e.p.cuCtxDestroy(c))
        }),
        case!("context.destroyed_set_current", Init, |e| {
            let c = with!(dead_created(e));
            Out::of(e.p.cuCtxSetCurrent(c))
        }),
        case!("context.destroyed_push", Init, |e| {
            let c = with!(dead_created(e));
            Out::of(e.p.cuCtxPushCurrent(c))
        }),
        case!("context.destroyed_then_alloc", Init, |e| {
            let c = with!(dead_created(e));
            step!(e.p.cuCtxSetCurrent(c));
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAlloc(&mut d, 256)).eq("dptr", number(d))
        }),
        case!("context.destroyed_then_synchronize", Init, |e| {
            let c = with!(dead_created(e));
            step!(e.p.cuCtxSetCurrent(c));
            Out::of(e.p.cuCtxSynchronize())
        }),
        case!("context.destroyed_then_stream", Init, |e| {
            let c = with!(dead_created(e));
            step!(e.p.cuCtxSetCurrent(c));
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuStreamCreate(&mut s, 0)).info("stream", handle(s))
        }),
        case!("context.destroyed_get_device", Init, |e| {
            let c = with!(dead_created(e));
            step!(e.p.cuCtxSetCurrent(c));
            let mut d = -7;
            Out::of(e.p.cuCtxGetDevice(&mut d)).eq("device", d)
        }),
        case!("context.destroyed_api_version", Init, |e| {
            let c = with!(dead_created(e));
            let mut v = UNTOUCHED as u32;
            Out::of(e.p.cuCtxGetApiVersion(c, &mut v)).eq("version", number32(v))
        }),
        case!("primary.retain_twice_same", Init, |e| {
            let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
            step!(e.p.cuDevicePrimaryCtxRetain(&mut a, e.dev));
            let st = e.p.cuDevicePrimaryCtxRetain(&mut b, e.dev);
            Out::of(st).eq("same", a == b)
        }),
        case!("primary.release_unretained", Init, |e| { Out::of(e.p.cuDevicePrimaryCtxRelease(e.dev)) }),
        case!("primary.release_bad_device", Init, |e| { Out::of(e.p.cuDevicePrimaryCtxRelease(99)) }),
        case!("primary.state_after_release", Init, |e| {
            with!(dead_primary(e));
            let (mut flags, mut active) = (UNTOUCHED as u32, -7);
            let st = e.p.cuDevicePrimaryCtxGetState(e.dev, &mut flags, &mut active);
            Out::of(st).eq("flags", number32(flags)).eq("active", active)
        }),
        case!("primary.released_then_alloc", Init, |e| {
            with!(dead_primary(e));
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAlloc(&mut d, 256)).eq("dptr", number(d))
        }),
        case!("primary.released_then_stream", Init, |e| {
            with!(dead_primary(e));
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuStreamCreate(&mut s, 0)).info("stream", handle(s))
        }),
        case!("primary.released_then_synchronize", Init, |e| {
            with!(dead_primary(e));
            Out::of(e.p.cuCtxSynchronize())
        }),
        case!("primary.released_get_current", Init, |e| {
            let c = with!(dead_primary(e));
            let mut cur: CUcontext = sentinel();
            let st = e.p.cuCtxGetCurrent(&mut cur);
            Out::of(st).eq("still_current", cur == c)
        }),
        case!("primary.released_stream_of_it", Init, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuDevicePrimaryCtxRetain(&mut c, e.dev));
            step!(e.p.cuCtxSetCurrent(c));
            let mut s = std::ptr::null_mut();
            step!(e.p.cuStreamCreate(&mut s, 0));
            step!(e.p.cuDevicePrimaryCtxRelease(e.dev));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("primary.released_memory_of_it", Init, |e| {
            let mut c = std::ptr::null_mut();
            step!(e.p.cuDevicePrimaryCtxRetain(&mut c, e.dev));
            step!(e.p.cuCtxSetCurrent(c));
            let mut d = 0;
            step!(e.p.cuMemAlloc(&mut d, 256));
            step!(e.p.cuDevicePrimaryCtxRelease(e.dev));
            Out::of(e.p.cuMemsetD8(d, 1, 256))
        }),
        case!("primary.retain_after_release", Init, |e| {
            with!(dead_primary(e));
            let mut c = std::ptr::null_mut();
            let st = e.p.cuDevicePrimaryCtxRetain(&mut c, e.dev);
            step!(e.p.cuCtxSetCurrent(c));
            let mut d = UNTOUCHED;
            let alloc = e.p.cuMemAlloc(&mut d, 256);
            Out::of(st).eq("alloc_in_new", alloc)
        }),
        case!("primary.reset_with_live_memory", Ctx, |e| {
            let mut d = 0;
            step!(e.p.cuMemAlloc(&mut d, 256));
            let st = e.p.cuDevicePrimaryCtxReset(e.dev);
            let after = e.p.cuMemsetD8(d, 1, 256);
            Out::of(st).eq("memset_after", after)
        }),
        case!("primary.set_flags", Init, |e| {
            let st = e.p.cuDevicePrimaryCtxSetFlags(e.dev, CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0);
            let (mut flags, mut active) = (UNTOUCHED as u32, -7);
            let _ = e.p.cuDevicePrimaryCtxGetState(e.dev, &mut flags, &mut active);
            Out::of(st).eq("flags", number32(flags))
        }),
        case!("primary.get_state_bad_device", Init, |e| {
            let (mut flags, mut active) = (0, 0);
            Out::of(e.p.cuDevicePrimaryCtxGetState(99, &mut flags, &mut active))
        }),
    ]
}

/// One context limit; `compared`: whether the value must match.
fn limit(e: &Env, which: CUlimit, compared: bool) -> Out {
    let mut v = UNTOUCHED as usize;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuCtxGetLimit(&mut v, which) };
    let out = Out::of(st);
    if compared {
        out.eq("value", number(v as u64))
    } else {
        out.info("value", number(v as u64))
    }
}
