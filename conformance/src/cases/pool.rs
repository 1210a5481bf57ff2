//! Stream-ordered memory and memory pools.

use super::{case, handle, made, number, sentinel, step, stream, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// Pool properties: pinned device memory on device 0, no shareable handles.
fn props(location_type: CUmemLocationType) -> CUmemPoolProps {
    let mut p = CUmemPoolProps { allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED, ..Default::default() };
    p.location.type_ = location_type;
    p.location.__bindgen_anon_1.id = 0;
    p
}

/// A created pool on device 0.
fn pool(e: &Env) -> Result<CUmemoryPool, Out> {
    let mut p = std::ptr::null_mut();
    let pr = props(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE);
    // SAFETY: valid properties and out-pointer.
    made("cuMemPoolCreate", unsafe { e.p.cuMemPoolCreate(&mut p, &pr) }, p)
}

/// A `u64`-wide pool attribute.
fn attr(e: &Env, p: CUmemoryPool, a: CUmemPool_attribute) -> (CUresult, u64) {
    let mut v = UNTOUCHED;
    // SAFETY: an out-value of 8 bytes, as wide as the attributes asked here.
    let st = unsafe { e.p.cuMemPoolGetAttribute(p, a, (&raw mut v).cast()) };
    (st, v)
}

type PA = CUmemPool_attribute;

pub fn cases() -> Vec<Case> {
    vec![
        case!("async.alloc_free", Ctx, |e| {
            let s = with!(stream(e));
            let mut d = UNTOUCHED;
            step!(e.p.cuMemAllocAsync(&mut d, 1 << 20, s));
            let st = e.p.cuMemFreeAsync(d, s);
            Out::of(st).eq("then_synchronize", e.p.cuStreamSynchronize(s))
        }),
        case!("async.alloc_zero", Ctx, |e| {
            let s = with!(stream(e));
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAllocAsync(&mut d, 0, s)).eq("dptr", number(d))
        }),
        case!("async.free_zero", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuMemFreeAsync(0, s))
        }),
        case!("async.alloc_null_stream", Ctx, |e| {
            let mut d = UNTOUCHED;
            let st = e.p.cuMemAllocAsync(&mut d, 256, std::ptr::null_mut());
            Out::of(st).eq("written", d != UNTOUCHED)
        }),
        case!("async.alloc_no_context", Init, |e| {
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAllocAsync(&mut d, 256, std::ptr::null_mut())).eq("dptr", number(d))
        }),
        case!("async.free_twice", Ctx, |e| {
            let s = with!(stream(e));
            let mut d = 0;
            step!(e.p.cuMemAllocAsync(&mut d, 256, s));
            step!(e.p.cuMemFreeAsync(d, s));
            step!(e.p.cuStreamSynchronize(s));
            Out::of(e.p.cuMemFreeAsync(d, s))
        }),
        case!("async.free_sync_allocation", Ctx, |e| {
            let s = with!(stream(e));
            let mut d = 0;
            step!(e.p.cuMemAlloc(&mut d, 256));
            let st = e.p.cuMemFreeAsync(d, s);
            Out::of(st).eq("then_synchronize", e.p.cuStreamSynchronize(s))
        }),
        case!("pool.device_default", Init, |e| {
            let mut p: CUmemoryPool = sentinel();
            Out::of(e.p.cuDeviceGetDefaultMemPool(&mut p, e.dev)).eq("pool", handle(p))
        }),
        case!("pool.device_current", Init, |e| {
            let (mut p, mut d) = (sentinel(), std::ptr::null_mut());
            step!(e.p.cuDeviceGetDefaultMemPool(&mut d, e.dev));
            let st = e.p.cuDeviceGetMemPool(&mut p, e.dev);
            Out::of(st).eq("is_default", p == d)
        }),
        case!("pool.device_bad_device", Init, |e| {
            let mut p: CUmemoryPool = sentinel();
            Out::of(e.p.cuDeviceGetDefaultMemPool(&mut p, 99)).eq("pool", handle(p))
        }),
        case!("pool.create_destroy", Ctx, |e| {
            let p = with!(pool(e));
            Out::of(e.p.cuMemPoolDestroy(p))
        }),
        case!("pool.create_unknown_location", Ctx, |e| {
            let mut p: CUmemoryPool = sentinel();
            let pr = props(CUmemLocationType(0x77));
            Out::of(e.p.cuMemPoolCreate(&mut p, &pr)).eq("pool", handle(p))
        }),
        case!("pool.create_bad_device", Ctx, |e| {
            let mut p: CUmemoryPool = sentinel();
            let mut pr = props(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE);
            pr.location.__bindgen_anon_1.id = 99;
            Out::of(e.p.cuMemPoolCreate(&mut p, &pr)).eq("pool", handle(p))
        }),
        case!("pool.alloc_from", Ctx, |e| {
            let p = with!(pool(e));
            let s = with!(stream(e));
            let mut d = UNTOUCHED;
            let st = e.p.cuMemAllocFromPoolAsync(&mut d, 4096, p, s);
            step!(e.p.cuMemFreeAsync(d, s));
            Out::of(st).eq("then_synchronize", e.p.cuStreamSynchronize(s))
        }),
        case!("pool.alloc_from_zero", Ctx, |e| {
            let p = with!(pool(e));
            let s = with!(stream(e));
            let mut d = UNTOUCHED;
            Out::of(e.p.cuMemAllocFromPoolAsync(&mut d, 0, p, s)).eq("dptr", number(d))
        }),
        case!("pool.release_threshold", Ctx, |e| {
            let p = with!(pool(e));
            let (st, v) = attr(e, p, PA::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
            Out::of(st).eq("value", number(v))
        }),
        case!("pool.set_release_threshold", Ctx, |e| {
            let p = with!(pool(e));
            let mut v: u64 = 1 << 20;
            step!(e.p.cuMemPoolSetAttribute(p, PA::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, (&raw mut v).cast()));
            let (st, v) = attr(e, p, PA::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
            Out::of(st).eq("value", number(v))
        }),
        case!("pool.reserved_current_empty", Ctx, |e| {
            let p = with!(pool(e));
            let (st, v) = attr(e, p, PA::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            Out::of(st).eq("value", number(v))
        }),
        case!("pool.used_current_after_alloc", Ctx, |e| {
            let p = with!(pool(e));
            let s = with!(stream(e));
            let mut d = 0;
            step!(e.p.cuMemAllocFromPoolAsync(&mut d, 1 << 20, p, s));
            step!(e.p.cuStreamSynchronize(s));
            let (st, v) = attr(e, p, PA::CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
            Out::of(st).eq("at_least_1_mib", v != UNTOUCHED && v >= 1 << 20)
        }),
        case!("pool.reuse_follow_event", Ctx, |e| {
            let p = with!(pool(e));
            let mut v: u32 = 77;
            let st =
                e.p.cuMemPoolGetAttribute(p, PA::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, (&raw mut v).cast());
            Out::of(st).eq("value", v)
        }),
        case!("pool.unknown_attribute", Ctx, |e| {
            let p = with!(pool(e));
            let (st, _) = attr(e, p, CUmemPool_attribute(0x7777));
            Out::of(st)
        }),
        case!("pool.trim", Ctx, |e| {
            let p = with!(pool(e));
            Out::of(e.p.cuMemPoolTrimTo(p, 0))
        }),
    ]
}
