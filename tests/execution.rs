//! Streams and execution resources (issue 15, items 6 and 8) through the safe layer, on
//! the stand-in: priorities, the per-thread default stream, stream attributes, capture
//! modes and capture info, context limits and cache configuration, green contexts, and
//! IPC events (exported here; opening one needs another process, as on the H200:
//! `examples/ipc_event.rs`, run by tests/examples.rs, follows one across two).

mod common;

use common::standin_driver;
use cudrv::{
    AccessPolicyWindow, AccessProperty, CacheConfig, CaptureMode, CaptureModeGuard, CaptureStatus, Context, Event,
    EventFlags, GreenContext, IpcEventHandle, Limit, MemSyncDomain, SmResource, Stream, StreamAttribute,
    StreamAttributeKind, StreamFlags, SyncPolicy,
};

fn context() -> Context {
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

#[test]
fn priorities_come_from_the_context_range_and_are_clamped() {
    let ctx = context();
    let range = ctx.stream_priority_range().unwrap();
    assert_eq!((range.least, range.greatest), (0, -5));
    assert!(range.contains(-3) && !range.contains(1) && !range.contains(-6));
    let high = Stream::with_priority(&ctx, StreamFlags::NON_BLOCKING, range.greatest).unwrap();
    assert_eq!(high.priority().unwrap(), -5);
    assert_eq!(high.flags().unwrap(), StreamFlags::NON_BLOCKING);
    let clamped = Stream::with_priority(&ctx, 0, -100).unwrap();
    assert_eq!(clamped.priority().unwrap(), -5);
    assert_eq!(Stream::new(&ctx, 0).unwrap().priority().unwrap(), 0);
}

#[test]
fn default_streams_are_handles() {
    let ctx = context();
    let per_thread = Stream::per_thread_default(&ctx);
    assert!(per_thread.is_default() && Stream::legacy_default(&ctx).is_default());
    assert_eq!(per_thread.as_raw() as usize, 2);
    assert_eq!(per_thread.priority().unwrap(), 0);
    per_thread.synchronize().unwrap();
    assert!(!Stream::new(&ctx, 0).unwrap().is_default());
}

#[test]
fn stream_id_and_context() {
    let ctx = context();
    let (a, b) = (Stream::new(&ctx, 0).unwrap(), Stream::new(&ctx, 0).unwrap());
    assert_ne!(a.id().unwrap(), b.id().unwrap());
    assert_eq!(a.driver_context().unwrap(), ctx.as_raw());
}

#[test]
fn stream_attributes_round_trip() {
    let ctx = context();
    let s = Stream::new(&ctx, 0).unwrap();
    // As on the H200: none set until one is.
    assert_eq!(s.attribute(StreamAttributeKind::SyncPolicy).unwrap(), StreamAttribute::SyncPolicy(SyncPolicy::NotSet));
    assert!(s.set_attribute(StreamAttribute::SyncPolicy(SyncPolicy::NotSet)).is_err());
    s.set_attribute(StreamAttribute::SyncPolicy(SyncPolicy::BlockingSync)).unwrap();
    assert_eq!(
        s.attribute(StreamAttributeKind::SyncPolicy).unwrap(),
        StreamAttribute::SyncPolicy(SyncPolicy::BlockingSync)
    );
    let window = StreamAttribute::AccessPolicyWindow(AccessPolicyWindow {
        base: 0x1000,
        bytes: 4096,
        hit_ratio: 0.5,
        hit: AccessProperty::Persisting,
        miss: AccessProperty::Streaming,
    });
    s.set_attribute(window).unwrap();
    assert_eq!(s.attribute(StreamAttributeKind::AccessPolicyWindow).unwrap(), window);
    s.set_attribute(StreamAttribute::MemSyncDomain(MemSyncDomain::Remote)).unwrap();
    assert_eq!(
        s.attribute(StreamAttributeKind::MemSyncDomain).unwrap(),
        StreamAttribute::MemSyncDomain(MemSyncDomain::Remote)
    );
    s.set_attribute(StreamAttribute::Priority(-2)).unwrap();
    assert_eq!(s.priority().unwrap(), -2);
    assert_eq!(s.attribute(StreamAttributeKind::Priority).unwrap(), StreamAttribute::Priority(-2));
    // A value the driver refuses changes nothing.
    let bad = StreamAttribute::AccessPolicyWindow(AccessPolicyWindow {
        base: 0x1000,
        bytes: 4096,
        hit_ratio: 2.0,
        hit: AccessProperty::Persisting,
        miss: AccessProperty::Streaming,
    });
    assert!(s.set_attribute(bad).is_err());
    assert_eq!(s.attribute(StreamAttributeKind::AccessPolicyWindow).unwrap(), window);
}

#[test]
fn capture_in_each_mode_with_info() {
    let ctx = context();
    let s = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let info = s.capture_info().unwrap();
    assert_eq!(info.status, CaptureStatus::None);
    assert!(info.graph.is_none() && info.dependencies.is_empty());
    let buf = cudrv::DeviceBuffer::<u32>::alloc(&ctx, 64).unwrap();
    let mut ids = Vec::new();
    for mode in [CaptureMode::Global, CaptureMode::ThreadLocal, CaptureMode::Relaxed] {
        // SAFETY: the captured fill's buffer outlives the graph, which is never launched.
        unsafe { s.begin_capture_with(mode) }.unwrap();
        let info = s.capture_info().unwrap();
        assert_eq!(info.status, CaptureStatus::Active);
        assert!(info.graph.is_some());
        assert!(info.dependencies.is_empty());
        buf.fill_async(1, &s).unwrap();
        let after = s.capture_info().unwrap();
        assert_eq!(after.id, info.id);
        assert_eq!(after.dependencies.len(), 1, "the fill's node");
        // SAFETY: the capture's graph, live while it runs; borrowed for these two calls.
        let captured = unsafe { cudrv::Graph::borrowed(&ctx, after.graph.unwrap()) };
        let nodes: Vec<_> = captured.nodes().unwrap().iter().map(|n| n.as_raw()).collect();
        assert_eq!(nodes, after.dependencies, "the fill's node is the graph's one node");
        drop(captured);
        ids.push(info.id);
        let graph = s.end_capture().unwrap();
        assert_eq!(Some(graph.as_raw()), info.graph);
        assert_eq!(s.capture_info().unwrap().status, CaptureStatus::None);
    }
    ids.dedup();
    assert_eq!(ids.len(), 3, "each capture has its own id");
}

#[test]
fn capture_mode_guard_restores_the_previous_mode() {
    let d = standin_driver();
    {
        let g = CaptureModeGuard::new(d, CaptureMode::Relaxed).unwrap();
        assert_eq!(g.previous(), Some(CaptureMode::Global));
        let inner = CaptureModeGuard::new(d, CaptureMode::ThreadLocal).unwrap();
        assert_eq!(inner.previous(), Some(CaptureMode::Relaxed));
    }
    let g = CaptureModeGuard::new(d, CaptureMode::Global).unwrap();
    assert_eq!(g.previous(), Some(CaptureMode::Global));
}

#[test]
fn limits_and_cache_config() {
    let ctx = Context::new(&standin_driver().device(0).unwrap(), 0).unwrap();
    assert_eq!(ctx.limit(Limit::StackSize).unwrap(), 1024);
    ctx.set_limit(Limit::StackSize, 4096).unwrap();
    assert_eq!(ctx.limit(Limit::StackSize).unwrap(), 4096);
    ctx.set_limit(Limit::MallocHeapSize, 64 << 20).unwrap();
    assert_eq!(ctx.limit(Limit::MallocHeapSize).unwrap(), 64 << 20);
    assert!(ctx.limit(Limit::Other(1000)).is_err());
    assert_eq!(ctx.cache_config().unwrap(), CacheConfig::PreferNone);
    ctx.set_cache_config(CacheConfig::PreferShared).unwrap();
    assert_eq!(ctx.cache_config().unwrap(), CacheConfig::PreferShared);
    // Another context's settings are its own.
    let other = Context::new(&standin_driver().device(0).unwrap(), 0).unwrap();
    assert_eq!(other.limit(Limit::StackSize).unwrap(), 1024);
    assert_eq!(other.cache_config().unwrap(), CacheConfig::PreferNone);
}

#[test]
fn green_contexts_split_the_sms_and_run_streams() {
    let d = standin_driver();
    let dev = d.device(0).unwrap();
    let all = SmResource::of_device(&dev).unwrap();
    assert_eq!(all.sm_count(), 132);
    // As on the H200: 15 co-scheduled groups of 8 SMs, not 16.
    assert_eq!(all.split_count(&dev, 8).unwrap(), 15);
    let split = all.split(&dev, 2, 10).unwrap();
    assert_eq!(split.groups.len(), 2);
    assert!(split.groups.iter().all(|g| g.sm_count() == 16));
    assert_eq!(split.remainder.sm_count(), 100);
    let greens: Vec<GreenContext> = split.groups.iter().map(|g| GreenContext::new(&dev, &[*g]).unwrap()).collect();
    assert_ne!(greens[0].context().as_raw(), greens[1].context().as_raw());
    for g in &greens {
        assert_eq!(g.sm_resource().unwrap().sm_count(), 16);
        let s = g.stream(-1).unwrap();
        assert_eq!(s.priority().unwrap(), -1);
        assert_eq!(s.driver_context().unwrap(), g.context().as_raw());
        let buf = cudrv::DeviceBuffer::<u32>::alloc(g.context(), 16).unwrap();
        buf.fill(7).unwrap();
        assert_eq!(buf.to_vec().unwrap(), vec![7; 16]);
        s.synchronize().unwrap();
    }
    // The stream keeps its green context alive after the green context's own handle goes.
    let s = greens[0].stream(0).unwrap();
    drop(greens);
    s.synchronize().unwrap();
}

#[test]
fn green_context_errors() {
    let d = standin_driver();
    let dev = d.device(0).unwrap();
    let all = SmResource::of_device(&dev).unwrap();
    assert!(all.split(&dev, 1, 200).is_err());
    assert!(GreenContext::new(&dev, &[]).is_err());
}

#[test]
fn ipc_event_handles_are_exported_and_refused_in_the_exporting_process() {
    use cudrv::sys::CUresult;
    let ctx = context();
    let timing = Event::new(&ctx, 0).unwrap();
    let refused = timing.export_ipc().expect_err("an event without INTERPROCESS has no handle");
    assert_eq!(refused.code(), Some(CUresult::CUDA_ERROR_INVALID_HANDLE), "{refused}");
    let e = Event::new(&ctx, EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING).unwrap();
    let handle = e.export_ipc().unwrap();
    assert_eq!(IpcEventHandle::from_hex(&handle.to_hex()), Some(handle));
    // As the H200 (conformance ipc_event.open_same_process, ipc_event.open_zeros).
    let same = Event::open_ipc(&ctx, &handle).expect_err("opened in the process that exported it");
    assert_eq!(same.code(), Some(CUresult::CUDA_ERROR_INVALID_CONTEXT), "{same}");
    assert!(IpcEventHandle::from_hex("zz").is_none());
    let zeros = Event::open_ipc(&ctx, &IpcEventHandle([0; 64])).expect_err("a handle no one exported");
    assert_eq!(zeros.code(), Some(CUresult::CUDA_ERROR_MAP_FAILED), "{zeros}");
}
