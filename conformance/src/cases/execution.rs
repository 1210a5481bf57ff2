//! Streams and execution resources (issue 15, items 6 and 8): stream attributes, the
//! shared memory configuration, green contexts (the H200's SM split granularity), and
//! IPC event handles. Recorded on the H200 (`expected/h200-driver-13000.txt`).

use super::{case, handle, made, number32, sentinel, step, stream, with, Case, Env, Out};
use cudrv::sys::*;
use cudrv::{call, Call};

type Id = CUstreamAttrID;

/// Reads attribute `id` of `s` as its raw 64 bytes' first words.
fn get_attr(e: &Env, s: CUstream, id: Id) -> (CUresult, CUstreamAttrValue) {
    let mut v = CUstreamAttrValue::default();
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuStreamGetAttribute(s, id, &mut v) };
    (st, v)
}

/// Every SM of device 0, as `cuDeviceGetDevResource` gives them.
fn device_sms(e: &Env) -> Result<CUdevResource, Out> {
    let mut r = CUdevResource::default();
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuDeviceGetDevResource(e.dev, &mut r, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM) };
    made("cuDeviceGetDevResource", st, r)
}

/// The SM count of `r` (an SM resource).
fn sms(r: &CUdevResource) -> u32 {
    // SAFETY: an SM resource's `sm` member (plain integers).
    unsafe { r.__bindgen_anon_1.sm.smCount }
}

/// A green context of the first group of a split of device 0's SMs with `min` each.
fn green(e: &Env, min: u32) -> Result<CUgreenCtx, Out> {
    let all = device_sms(e)?;
    let mut group = CUdevResource::default();
    let mut n = 1;
    // SAFETY: one result slot; valid pointers.
    let st = unsafe { e.p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), 0, min) };
    made("cuDevSmResourceSplitByCount", st, ())?;
    let mut desc: CUdevResourceDesc = std::ptr::null_mut();
    // SAFETY: one resource; valid out-pointer.
    made("cuDevResourceGenerateDesc", unsafe { e.p.cuDevResourceGenerateDesc(&mut desc, &mut group, 1) }, ())?;
    let mut g: CUgreenCtx = std::ptr::null_mut();
    let flags = CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0;
    // SAFETY: a descriptor from the driver; valid out-pointer.
    made("cuGreenCtxCreate", unsafe { e.p.cuGreenCtxCreate(&mut g, desc, e.dev, flags) }, g)
}

const GREEN: &[Call] = &[call::cuDeviceGetDevResource, call::cuDevSmResourceSplitByCount, call::cuGreenCtxCreate];

pub fn cases() -> Vec<Case> {
    vec![
        // Stream attributes.
        case!("stream_attr.sync_policy_default", Ctx, |e| {
            let s = with!(stream(e));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY);
            Out::of(st).eq("policy", number32(v.syncPolicy.0))
        }),
        case!("stream_attr.sync_policy_set_get", Ctx, |e| {
            let s = with!(stream(e));
            let mut v = CUstreamAttrValue::default();
            v.syncPolicy = CUsynchronizationPolicy::CU_SYNC_POLICY_BLOCKING_SYNC;
            step!(e.p.cuStreamSetAttribute(s, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY);
            Out::of(st).eq("policy", number32(v.syncPolicy.0))
        }),
        case!("stream_attr.sync_policy_bad", Ctx, |e| {
            let s = with!(stream(e));
            let mut v = CUstreamAttrValue::default();
            v.syncPolicy = CUsynchronizationPolicy(9);
            Out::of(e.p.cuStreamSetAttribute(s, Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v))
        }),
        case!("stream_attr.priority_get", Ctx, |e| {
            let mut s = std::ptr::null_mut();
            step!(e.p.cuStreamCreateWithPriority(&mut s, 0, -3));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY);
            Out::of(st).eq("priority", v.priority)
        }),
        case!("stream_attr.priority_set", Ctx, |e| {
            let s = with!(stream(e));
            let mut v = CUstreamAttrValue::default();
            v.priority = -2;
            let st = e.p.cuStreamSetAttribute(s, Id::CU_LAUNCH_ATTRIBUTE_PRIORITY, &v);
            let mut p = 77;
            let _ = e.p.cuStreamGetPriority(s, &mut p);
            Out::of(st).eq("priority_after", p)
        }),
        case!("stream_attr.window_default", Ctx, |e| {
            let s = with!(stream(e));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW);
            let w = v.accessPolicyWindow;
            Out::of(st).eq("bytes", w.num_bytes).eq("hit", number32(w.hitProp.0)).eq("miss", number32(w.missProp.0))
        }),
        case!("stream_attr.window_set_get", Ctx, |e| {
            let s = with!(stream(e));
            let mut d = 0;
            step!(e.p.cuMemAlloc(&mut d, 1 << 20));
            let mut v = CUstreamAttrValue::default();
            v.accessPolicyWindow.base_ptr = d as usize as *mut std::ffi::c_void;
            v.accessPolicyWindow.num_bytes = 1 << 20;
            v.accessPolicyWindow.hitRatio = 0.5;
            v.accessPolicyWindow.hitProp = CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING;
            v.accessPolicyWindow.missProp = CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING;
            step!(e.p.cuStreamSetAttribute(s, Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW);
            let w = v.accessPolicyWindow;
            Out::of(st)
                .eq("same_base", w.base_ptr as usize as u64 == d)
                .eq("bytes", w.num_bytes)
                .eq("ratio", w.hitRatio)
                .eq("hit", number32(w.hitProp.0))
        }),
        case!("stream_attr.window_bad_ratio", Ctx, |e| {
            let s = with!(stream(e));
            let mut v = CUstreamAttrValue::default();
            v.accessPolicyWindow.num_bytes = 4096;
            v.accessPolicyWindow.hitRatio = 2.0;
            Out::of(e.p.cuStreamSetAttribute(s, Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v))
        }),
        case!("stream_attr.mem_sync_domain_default", Ctx, |e| {
            let s = with!(stream(e));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN);
            Out::of(st).eq("domain", number32(v.memSyncDomain.0))
        }),
        case!("stream_attr.mem_sync_domain_map_default", Ctx, |e| {
            let s = with!(stream(e));
            let (st, v) = get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP);
            Out::of(st).eq("default", v.memSyncDomainMap.default_).eq("remote", v.memSyncDomainMap.remote)
        }),
        case!("stream_attr.launch_only_id", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(get_attr(e, s, Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE).0)
        }),
        case!("stream_attr.get_null_stream", Ctx, |e| {
            let (st, v) = get_attr(e, std::ptr::null_mut(), Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY);
            Out::of(st).eq("policy", number32(v.syncPolicy.0))
        }),
        case!("stream_attr.set_null_stream", Ctx, |e| {
            let mut v = CUstreamAttrValue::default();
            v.syncPolicy = CUsynchronizationPolicy::CU_SYNC_POLICY_SPIN;
            Out::of(e.p.cuStreamSetAttribute(std::ptr::null_mut(), Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v))
        }),
        // The deprecated shared memory configuration.
        case!("context.shared_mem_config_get", Ctx, |e| {
            let mut c = CUsharedconfig(77);
            Out::of(e.p.cuCtxGetSharedMemConfig(&mut c)).eq("config", number32(c.0))
        }),
        case!("context.shared_mem_config_set_eight", Ctx, |e| {
            let st = e.p.cuCtxSetSharedMemConfig(CUsharedconfig::CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE);
            let mut c = CUsharedconfig(77);
            let _ = e.p.cuCtxGetSharedMemConfig(&mut c);
            Out::of(st).eq("config_after", number32(c.0))
        }),
        case!("context.shared_mem_config_set_bad", Ctx, |e| {
            Out::of(e.p.cuCtxSetSharedMemConfig(CUsharedconfig(9)))
        }),
        case!("context.limit_persisting_l2", Ctx, |e| {
            let mut v = 77usize;
            Out::of(e.p.cuCtxGetLimit(&mut v, CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE)).eq("value", v)
        }),
        case!("context.limit_malloc_heap_set_get", Ctx, |e| {
            step!(e.p.cuCtxSetLimit(CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE, 64 << 20));
            let mut v = 77usize;
            Out::of(e.p.cuCtxGetLimit(&mut v, CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE)).eq("value", v)
        }),
        // Green contexts: the H200's SM resource and split granularity.
        case!("green.device_resource", Init, since 12040 GREEN, |e| {
            let mut r = CUdevResource::default();
            let st = e.p.cuDeviceGetDevResource(e.dev, &mut r, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM);
            let sm = r.__bindgen_anon_1.sm;
            Out::of(st)
                .eq("type", number32(r.type_.0))
                .eq("sms", sm.smCount)
                .eq("min_partition", sm.minSmPartitionSize)
                .eq("alignment", sm.smCoscheduledAlignment)
        }),
        case!("green.split_count_min_1", Init, since 12040 GREEN, |e| {
            let all = with!(device_sms(e));
            let mut n = 0;
            let st = e.p.cuDevSmResourceSplitByCount(std::ptr::null_mut(), &mut n, &all, std::ptr::null_mut(), 0, 1);
            Out::of(st).eq("groups", n)
        }),
        case!("green.split_min_9", Init, since 12040 GREEN, |e| {
            let all = with!(device_sms(e));
            let mut groups = [CUdevResource::default(); 2];
            let mut rest = CUdevResource::default();
            let mut n = 2;
            let st = e.p.cuDevSmResourceSplitByCount(groups.as_mut_ptr(), &mut n, &all, &mut rest, 0, 9);
            Out::of(st).eq("groups", n).eq("group_sms", sms(&groups[0])).eq("rest_sms", sms(&rest))
        }),
        case!("green.split_ignore_coscheduling_3", Init, since 12040 GREEN, |e| {
            let all = with!(device_sms(e));
            let mut group = CUdevResource::default();
            let mut n = 1;
            let f = CUdevSmResourceSplitByCount_flags::CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING.0;
            let st = e.p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), f, 3);
            Out::of(st).eq("groups", n).eq("group_sms", sms(&group))
        }),
        case!("green.split_too_big", Init, since 12040 GREEN, |e| {
            let all = with!(device_sms(e));
            let mut group = CUdevResource::default();
            let mut n = 1;
            Out::of(e.p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), 0, 200)).eq("groups", n)
        }),
        case!("green.create_bad_flags", Init, since 12040 GREEN, |e| {
            let all = with!(device_sms(e));
            let mut r = all;
            let mut desc: CUdevResourceDesc = std::ptr::null_mut();
            step!(e.p.cuDevResourceGenerateDesc(&mut desc, &mut r, 1));
            let mut g: CUgreenCtx = sentinel();
            Out::of(e.p.cuGreenCtxCreate(&mut g, desc, e.dev, 0)).eq("green", handle(g))
        }),
        case!("green.create_resource_and_stream", Init, since 12050 &[call::cuGreenCtxStreamCreate], |e| {
            let g = with!(green(e, 16));
            let mut r = CUdevResource::default();
            step!(e.p.cuGreenCtxGetDevResource(g, &mut r, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM));
            let mut s: CUstream = sentinel();
            let st = e.p.cuGreenCtxStreamCreate(&mut s, g, CUstream_flags::CU_STREAM_NON_BLOCKING.0, 0);
            let mut back: CUgreenCtx = std::ptr::null_mut();
            let _ = e.p.cuStreamGetGreenCtx(s, &mut back);
            Out::of(st).eq("sms", sms(&r)).eq("stream", handle(s)).eq("same_green", back == g)
        }),
        case!("green.stream_blocking_flags", Init, since 12050 &[call::cuGreenCtxStreamCreate], |e| {
            let g = with!(green(e, 16));
            let mut s: CUstream = sentinel();
            Out::of(e.p.cuGreenCtxStreamCreate(&mut s, g, 0, 0)).eq("stream", handle(s))
        }),
        case!("green.ctx_from_green", Init, since 12040 GREEN, |e| {
            let g = with!(green(e, 16));
            let mut c: CUcontext = sentinel();
            let st = e.p.cuCtxFromGreenCtx(&mut c, g);
            let mut current: CUcontext = std::ptr::null_mut();
            let _ = e.p.cuCtxGetCurrent(&mut current);
            Out::of(st).eq("context", handle(c)).eq("made_current", current == c)
        }),
        case!("green.destroy_twice", Init, since 12040 GREEN, |e| {
            let g = with!(green(e, 16));
            step!(e.p.cuGreenCtxDestroy(g));
            Out::of(e.p.cuGreenCtxDestroy(g))
        }),
        // IPC event handles.
        case!("ipc_event.get_without_interprocess", Ctx, |e| {
            let ev = with!(super::stream_event::event(e, CUevent_flags::CU_EVENT_DISABLE_TIMING.0));
            let mut h = CUipcEventHandle { reserved: [0; 64] };
            Out::of(e.p.cuIpcGetEventHandle(&mut h, ev))
        }),
        case!("ipc_event.create_interprocess_with_timing", Ctx, |e| {
            let mut ev: CUevent = sentinel();
            Out::of(e.p.cuEventCreate(&mut ev, CUevent_flags::CU_EVENT_INTERPROCESS.0)).eq("event", handle(ev))
        }),
        case!("ipc_event.get", Ctx, |e| {
            let f = CUevent_flags::CU_EVENT_INTERPROCESS.0 | CUevent_flags::CU_EVENT_DISABLE_TIMING.0;
            let ev = with!(super::stream_event::event(e, f));
            let mut h = CUipcEventHandle { reserved: [0; 64] };
            let st = e.p.cuIpcGetEventHandle(&mut h, ev);
            Out::of(st).eq("written", h.reserved.iter().any(|&b| b != 0))
        }),
        case!("ipc_event.open_same_process", Ctx, |e| {
            let f = CUevent_flags::CU_EVENT_INTERPROCESS.0 | CUevent_flags::CU_EVENT_DISABLE_TIMING.0;
            let ev = with!(super::stream_event::event(e, f));
            let mut h = CUipcEventHandle { reserved: [0; 64] };
            step!(e.p.cuIpcGetEventHandle(&mut h, ev));
            let mut opened: CUevent = sentinel();
            Out::of(e.p.cuIpcOpenEventHandle(&mut opened, h)).info("event", handle(opened))
        }),
        case!("ipc_event.open_zeros", Ctx, |e| {
            let mut opened: CUevent = sentinel();
            Out::of(e.p.cuIpcOpenEventHandle(&mut opened, CUipcEventHandle { reserved: [0; 64] }))
                .eq("event", handle(opened))
        }),
    ]
}
