//! Managed memory (issue 18, item 6) on the stand-in: a managed buffer is device memory of
//! T (copies, views, kernel arguments) whose safe host access waits for the work queued on
//! it; attachment, prefetch (12.2's form and, on an older driver, 8.0's), advice and range
//! attributes; pointer attributes of managed memory; no bytes.

use std::time::Duration;

use cudrv::sys::CUresult;
use cudrv::{
    Context, DeviceBuffer, DeviceSlice, DeviceSliceMut, LaunchConfig, ManagedAdvice, ManagedAttach, ManagedBuffer,
    ManagedLocation, MemoryType, Module, PointerAttributes, Stream, StreamFlags,
};
use cudrv_standin::StandIn;

mod common;
use common::gate;

/// A world of its own at `version`, and its device's primary context.
fn world(version: u32) -> (StandIn, Context) {
    common::isolated_world(version)
}

fn newest() -> (StandIn, Context) {
    world(cudrv::table::HEADER_VERSION)
}

#[test]
fn host_values_reach_a_kernel_and_come_back() {
    let (_s, ctx) = newest();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let scale = Module::from_ptx(&ctx, include_str!("../examples/kernels/scale_f32.ptx"))
        .unwrap()
        .function("scale_f32")
        .unwrap();
    let mut buf = ManagedBuffer::<f32>::zeroed(&ctx, 1000, ManagedAttach::Global).unwrap();
    for (i, v) in buf.as_mut_slice().unwrap().iter_mut().enumerate() {
        *v = i as f32;
    }
    buf.prefetch_async(ManagedLocation::device_of(&ctx), &stream).unwrap();
    let (s, n) = (2.0f32, 1000i32);
    let mut launch = scale.builder(&stream);
    launch.arg(&buf).arg(&s).arg(&n);
    // SAFETY: scale_f32(float* x, float s, int n) over the buffer's 1000 values.
    unsafe { launch.launch(LaunchConfig::for_num_elems(1000)) }.unwrap();
    drop(launch);
    buf.prefetch_async(ManagedLocation::Host, &stream).unwrap();
    // No synchronize: the host access waits for the stream the buffer was used on.
    let values = buf.as_slice().unwrap();
    assert!(values.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32));
    // It is device memory of T: copies and views.
    let copy = DeviceBuffer::<f32>::alloc(&ctx, 10).unwrap();
    copy.copy_from_device(&buf.slice(10..20).unwrap()).unwrap();
    assert_eq!(copy.to_vec().unwrap(), (10..20).map(|i| 2.0 * i as f32).collect::<Vec<_>>());
    buf.slice_mut(..2).unwrap().copy_from_host(&[7.0, 8.0]).unwrap();
    assert_eq!(buf.as_slice().unwrap()[..3], [7.0, 8.0, 4.0]);
}

#[test]
fn host_access_waits_for_work_queued_on_a_blocked_stream() {
    let (_s, ctx) = newest();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let mut buf = ManagedBuffer::<u32>::from_slice(&ctx, &[1; 4096], ManagedAttach::Global).unwrap();
    let tx = gate(&stream);
    buf.fill_async(7, &stream).unwrap();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        let _ = tx.send(());
    });
    // The fill is queued behind the gate: the host access must wait for it.
    assert!(buf.as_slice().unwrap().iter().all(|&v| v == 7));
    opener.join().unwrap();
}

#[test]
fn prefetch_advice_and_range_attributes() {
    let (_s, ctx) = newest();
    let stream = Stream::new(&ctx, 0).unwrap();
    let buf = ManagedBuffer::<u8>::zeroed(&ctx, 1 << 16, ManagedAttach::Global).unwrap();
    let a = buf.range_attributes().unwrap();
    assert_eq!((a.read_mostly, a.preferred_location, a.last_prefetch_location), (false, None, None));
    assert!(a.accessed_by.is_empty());
    let dev = ManagedLocation::device_of(&ctx);
    buf.prefetch_async(dev, &stream).unwrap();
    buf.advise(ManagedAdvice::SetReadMostly).unwrap();
    buf.advise(ManagedAdvice::SetPreferredLocation(ManagedLocation::Host)).unwrap();
    buf.advise(ManagedAdvice::SetAccessedBy(dev)).unwrap();
    buf.advise(ManagedAdvice::SetAccessedBy(ManagedLocation::Host)).unwrap();
    let a = buf.range_attributes().unwrap();
    assert!(a.read_mostly);
    assert_eq!(a.preferred_location, Some(ManagedLocation::Host));
    assert_eq!(a.accessed_by, [dev, ManagedLocation::Host]);
    assert_eq!(a.last_prefetch_location, Some(dev));
    buf.advise(ManagedAdvice::UnsetReadMostly).unwrap();
    buf.advise(ManagedAdvice::UnsetPreferredLocation).unwrap();
    buf.advise(ManagedAdvice::UnsetAccessedBy(ManagedLocation::Host)).unwrap();
    buf.prefetch_async(ManagedLocation::Host, &stream).unwrap();
    let a = buf.range_attributes().unwrap();
    assert_eq!((a.read_mostly, a.preferred_location), (false, None));
    assert_eq!((a.accessed_by, a.last_prefetch_location), (vec![dev], Some(ManagedLocation::Host)));
    // A device the system does not have: the driver's answer, naming the call.
    let e = buf.advise(ManagedAdvice::SetPreferredLocation(ManagedLocation::Device(7))).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_DEVICE));
    let e = buf.prefetch_async(ManagedLocation::Device(7), &stream).unwrap_err();
    assert!(e.to_string().contains("cuMemPrefetchAsync"), "{e}");
    stream.synchronize().unwrap();
}

#[test]
fn before_12_2_the_device_ordinal_forms_are_used() {
    let (_s, ctx) = world(12010);
    assert!(ctx.driver().entry("cuMemPrefetchAsync").is_some_and(|e| !e.availability.is_resolved()));
    let stream = Stream::new(&ctx, 0).unwrap();
    let buf = ManagedBuffer::<u32>::zeroed(&ctx, 100, ManagedAttach::Host).unwrap();
    buf.attach_async(&stream, ManagedAttach::Single).unwrap();
    buf.prefetch_async(ManagedLocation::device_of(&ctx), &stream).unwrap();
    buf.advise(ManagedAdvice::SetAccessedBy(ManagedLocation::Host)).unwrap();
    let a = buf.range_attributes().unwrap();
    assert_eq!(
        (a.last_prefetch_location, a.accessed_by),
        (Some(ManagedLocation::Device(0)), vec![ManagedLocation::Host])
    );
    stream.synchronize().unwrap();
}

#[test]
fn attaching_to_one_stream_is_refused_on_the_legacy_stream() {
    let (_s, ctx) = newest();
    let buf = ManagedBuffer::<u32>::zeroed(&ctx, 100, ManagedAttach::Host).unwrap();
    let legacy = Stream::legacy_default(&ctx);
    assert_eq!(
        buf.attach_async(&legacy, ManagedAttach::Single).unwrap_err().code(),
        Some(CUresult::CUDA_ERROR_INVALID_VALUE)
    );
    buf.attach_async(&legacy, ManagedAttach::Global).unwrap();
}

#[test]
fn pointer_attributes_of_managed_memory() {
    let (s, ctx) = newest();
    let buf = ManagedBuffer::<u64>::zeroed(&ctx, 64, ManagedAttach::Global).unwrap();
    let inside = buf.as_raw() + 8;
    let a = PointerAttributes::of(ctx.driver(), inside).unwrap();
    assert_eq!((a.memory_type, a.managed, a.device, a.context), (Some(MemoryType::Device), true, 0, ctx.as_raw()));
    assert_eq!((a.range_start, a.range_size), (buf.as_raw(), 512));
    assert_eq!((a.host_pointer as u64, a.device_pointer, a.mapped), (inside, inside, true));
    assert_eq!(buf.as_host_ptr() as u64, buf.as_raw(), "one address for host and device");
    assert!(s.ledger().live.iter().any(|l| l.address == buf.as_raw() && l.size == 512));
    let raw = buf.as_raw();
    drop(buf);
    assert!(!s.ledger().live.iter().any(|l| l.address == raw), "freed when dropped");
}
