//! Zero lengths, the same for every kind of memory (issue 18, item 3): a buffer of no
//! bytes (`DeviceBuffer::alloc(ctx, 0)`, `from_slice(&ctx, &[])`, `alloc_async(.., 0)`, a
//! pool's `alloc_async(.., 0)`, `PinnedBuffer::zeroed(ctx, 0)`, a view of no values) is
//! made without a driver call, has the null address, gives up nothing dangling through
//! `into_raw`, and every copy, fill and view of it is a no-op that returns `Ok`.
//!
//! "Without a driver call" is checked by arming every call these operations could make to
//! fail once on this thread (with an error nothing else answers), running them, and then
//! making each call once: each must still answer the armed error, so none was made.

mod common;

use common::{my_reports, standin_driver};
use cudrv::sys::{CUmem_advise, CUmem_range_attribute, CUresult};
use cudrv::{
    Call, Context, DeviceBuffer, DeviceSlice, DeviceSliceMut, ManagedAdvice, ManagedAttach, ManagedBuffer,
    ManagedLocation, MemoryPool, PinnedBuffer, Stream,
};
use cudrv_standin::{faults, Times};
use std::ptr::null_mut;

/// The armed error: no call of these tests answers it otherwise.
const MARK: CUresult = CUresult::CUDA_ERROR_ECC_UNCORRECTABLE;

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

type Probe = Box<dyn Fn() -> CUresult>;

/// Every call a zero-length operation could make, with a call of it whose arguments the
/// stand-in would refuse with another error (or that does nothing), for the check.
fn probes() -> Vec<(Call, Probe)> {
    let p = standin_driver().p();
    // SAFETY (every probe): an armed fault answers before the arguments are read; were it
    // not armed, the null pointers and zero sizes are refused or move nothing.
    unsafe {
        vec![
            (cudrv::call::cuMemAlloc, Box::new(move || p.cuMemAlloc(null_mut(), 0)) as Probe),
            (cudrv::call::cuMemAllocAsync, Box::new(move || p.cuMemAllocAsync(null_mut(), 0, null_mut()))),
            (
                cudrv::call::cuMemAllocFromPoolAsync,
                Box::new(move || p.cuMemAllocFromPoolAsync(null_mut(), 0, null_mut(), null_mut())),
            ),
            (cudrv::call::cuMemFree, Box::new(move || p.cuMemFree(0))),
            (cudrv::call::cuMemFreeAsync, Box::new(move || p.cuMemFreeAsync(0, null_mut()))),
            (cudrv::call::cuMemcpyHtoD, Box::new(move || p.cuMemcpyHtoD(0, std::ptr::null(), 0))),
            (cudrv::call::cuMemcpyDtoH, Box::new(move || p.cuMemcpyDtoH(null_mut(), 0, 0))),
            (cudrv::call::cuMemcpyDtoD, Box::new(move || p.cuMemcpyDtoD(0, 0, 0))),
            (cudrv::call::cuMemcpyHtoDAsync, Box::new(move || p.cuMemcpyHtoDAsync(0, std::ptr::null(), 0, null_mut()))),
            (cudrv::call::cuMemcpyDtoHAsync, Box::new(move || p.cuMemcpyDtoHAsync(null_mut(), 0, 0, null_mut()))),
            (cudrv::call::cuMemcpyDtoDAsync, Box::new(move || p.cuMemcpyDtoDAsync(0, 0, 0, null_mut()))),
            (
                cudrv::call::cuMemcpyPeerAsync,
                Box::new(move || p.cuMemcpyPeerAsync(0, null_mut(), 0, null_mut(), 0, null_mut())),
            ),
            (cudrv::call::cuMemsetD8, Box::new(move || p.cuMemsetD8(0, 0, 0))),
            (cudrv::call::cuMemsetD32, Box::new(move || p.cuMemsetD32(0, 0, 0))),
            (cudrv::call::cuMemsetD8Async, Box::new(move || p.cuMemsetD8Async(0, 0, 0, null_mut()))),
            (cudrv::call::cuMemsetD32Async, Box::new(move || p.cuMemsetD32Async(0, 0, 0, null_mut()))),
            (cudrv::call::cuMemAllocHost, Box::new(move || p.cuMemAllocHost(null_mut(), 0))),
            (cudrv::call::cuMemHostAlloc, Box::new(move || p.cuMemHostAlloc(null_mut(), 0, 0))),
            (cudrv::call::cuMemFreeHost, Box::new(move || p.cuMemFreeHost(null_mut()))),
            (cudrv::call::cuEventCreate, Box::new(move || p.cuEventCreate(null_mut(), 0))),
            (cudrv::call::cuEventRecord, Box::new(move || p.cuEventRecord(null_mut(), null_mut()))),
            (cudrv::call::cuEventSynchronize, Box::new(move || p.cuEventSynchronize(null_mut()))),
            (cudrv::call::cuStreamWaitEvent, Box::new(move || p.cuStreamWaitEvent(null_mut(), null_mut(), 0))),
            (cudrv::call::cuCtxGetCurrent, Box::new(move || p.cuCtxGetCurrent(null_mut()))),
            (cudrv::call::cuMemAllocManaged, Box::new(move || p.cuMemAllocManaged(null_mut(), 0, 0))),
            (cudrv::call::cuStreamAttachMemAsync, Box::new(move || p.cuStreamAttachMemAsync(null_mut(), 0, 0, 0))),
            (
                cudrv::call::cuMemPrefetchAsync,
                Box::new(move || p.cuMemPrefetchAsync(0, 0, Default::default(), 0, null_mut())),
            ),
            (cudrv::call::cuMemAdvise, Box::new(move || p.cuMemAdvise(0, 0, CUmem_advise(0), Default::default()))),
            (
                cudrv::call::cuMemRangeGetAttribute,
                Box::new(move || p.cuMemRangeGetAttribute(null_mut(), 0, CUmem_range_attribute(0), 0, 0)),
            ),
            (cudrv::call::cuStreamIsCapturing, Box::new(move || p.cuStreamIsCapturing(null_mut(), null_mut()))),
        ]
    }
}

/// Runs `op` with every call of [`probes`] armed to fail once on this thread, then checks
/// that `op` made none of them (each still answers the armed error once).
fn without_driver_calls(op: impl FnOnce()) {
    let probes = probes();
    for (call, _) in &probes {
        faults::inject_on_this_thread(*call, MARK, Times::Once);
    }
    op();
    let made: Vec<String> =
        probes.iter().filter(|(_, probe)| probe() != MARK).map(|(call, _)| call.to_string()).collect();
    assert!(made.is_empty(), "made driver calls: {made:?}");
}

/// Every copy and fill of `buf` (no values) is `Ok` (run under [`without_driver_calls`]).
fn every_operation_is_a_no_op<M: DeviceSliceMut<u32>>(buf: &mut M, stream: &Stream, full: &DeviceBuffer<u32>) {
    assert_eq!((buf.as_raw(), buf.len(), buf.size_bytes(), buf.is_empty()), (0, 0, 0, true));
    let empty_pinned = PinnedBuffer::<u32>::zeroed(full.context(), 0).unwrap();
    let mut empty_pinned_out = PinnedBuffer::<u32>::zeroed(full.context(), 0).unwrap();
    buf.copy_from_host(&[]).unwrap();
    buf.copy_to_host(&mut []).unwrap();
    assert_eq!(buf.to_vec().unwrap(), Vec::<u32>::new());
    buf.fill(7).unwrap();
    buf.fill_async(7, stream).unwrap();
    buf.copy_from_device(&full.slice(..0).unwrap()).unwrap();
    buf.copy_from_device_async(&full.slice(4..4).unwrap(), stream).unwrap();
    buf.copy_from_peer_async(&full.slice(..0).unwrap(), stream).unwrap();
    buf.copy_from_pinned_async(&empty_pinned, stream).unwrap();
    buf.copy_to_pinned_async(&mut empty_pinned_out, stream).unwrap();
    // SAFETY: nothing is copied (and the slices outlive the calls anyway).
    unsafe {
        buf.copy_from_host_async(&[], stream).unwrap();
        buf.copy_to_host_async(&mut [], stream).unwrap();
    }
    // Into a buffer with values, from no values: nothing moves.
    full.copy_from_device(buf).unwrap();
    full.copy_from_device_async(buf, stream).unwrap();
    full.copy_from_peer_async(buf, stream).unwrap();
    // Views of it are empty and null too; a range past its end is refused.
    let view = buf.slice(..).unwrap();
    assert_eq!((view.as_raw(), view.len()), (0, 0));
    assert_eq!(buf.chunks(3).unwrap().count(), 0);
    let (a, b) = buf.split_at_mut(0).unwrap();
    assert_eq!((a.as_raw(), b.as_raw(), a.len(), b.len()), (0, 0, 0, 0));
    assert!(buf.slice(..1).is_err());
    // A copy that does not fit is refused before any driver call, as for any length.
    let e = buf.copy_from_host(&[1]).unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)), "{e}");
}

#[test]
fn device_buffers_of_no_values_are_null_and_made_without_a_driver_call() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    let full = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4]).unwrap();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        let mut alloc = DeviceBuffer::<u32>::alloc(&ctx, 0).unwrap();
        let mut from_slice = DeviceBuffer::<u32>::from_slice(&ctx, &[]).unwrap();
        let mut ordered = DeviceBuffer::<u32>::alloc_async(&stream, 0).unwrap();
        let mut pooled = pool.alloc_async::<u32>(&stream, 0).unwrap();
        assert!(ordered.deallocation_stream().is_some(), "it still belongs to its stream");
        for buf in [&mut alloc, &mut from_slice, &mut ordered, &mut pooled] {
            every_operation_is_a_no_op(buf, &stream, &full);
        }
        // Dropping frees nothing (cuMemFree / cuMemFreeAsync are armed).
        drop((alloc, from_slice, ordered, pooled));
    });
    assert_eq!(full.to_vec().unwrap(), [1, 2, 3, 4], "no copy touched the full buffer");
    assert!(my_reports().is_empty());
}

#[test]
fn views_of_no_values_are_null_and_every_operation_on_them_is_a_no_op() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let mut buf = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4]).unwrap();
    let full = DeviceBuffer::from_slice(&ctx, &[5u32, 6, 7, 8]).unwrap();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        for at in [0, 2, 4] {
            let mut view = buf.slice_mut(at..at).unwrap();
            every_operation_is_a_no_op(&mut view, &stream, &full);
        }
        let mut tail = buf.split_at_mut(4).unwrap().1;
        every_operation_is_a_no_op(&mut tail, &stream, &full);
    });
    assert_eq!(buf.to_vec().unwrap(), [1, 2, 3, 4]);
    assert_eq!(full.to_vec().unwrap(), [5, 6, 7, 8]);
}

#[test]
fn into_raw_of_a_buffer_of_no_bytes_is_null_and_needs_no_free() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        assert_eq!(DeviceBuffer::<f64>::alloc(&ctx, 0).unwrap().into_raw().unwrap(), 0);
        assert_eq!(DeviceBuffer::<f64>::alloc_async(&stream, 0).unwrap().into_raw().unwrap(), 0);
        let pinned = PinnedBuffer::<f64>::zeroed(&ctx, 0).unwrap();
        assert!(pinned.as_raw().is_null());
        assert!(pinned.into_raw().unwrap().is_null(), "never a dangling host pointer");
    });
    assert!(my_reports().is_empty());
}

#[test]
fn pinned_buffers_of_no_values_are_null_made_and_dropped_without_a_driver_call() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let device = DeviceBuffer::from_slice(&ctx, &[9u16; 4]).unwrap();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        let mut zeroed = PinnedBuffer::<u16>::zeroed(&ctx, 0).unwrap();
        let mut with_flags = PinnedBuffer::<u16>::zeroed_with(&ctx, 0, cudrv::HostAllocFlags::PORTABLE).unwrap();
        let from_slice = PinnedBuffer::<u16>::from_slice(&ctx, &[]).unwrap();
        for pinned in [&mut zeroed, &mut with_flags] {
            assert!(pinned.as_raw().is_null());
            assert_eq!((pinned.len(), pinned.size_bytes()), (0, 0));
            assert!(pinned.as_slice().unwrap().is_empty());
            assert!(pinned.as_mut_slice().unwrap().is_empty());
            device.copy_from_pinned_async(pinned, &stream).unwrap();
            device.copy_to_pinned_async(pinned, &stream).unwrap();
        }
        drop((zeroed, with_flags, from_slice));
    });
    assert_eq!(device.to_vec().unwrap(), [9; 4]);
    assert!(my_reports().is_empty());
}

#[test]
fn a_fill_value_of_a_size_no_memset_takes_is_refused_whatever_the_length() {
    let ctx = context();
    let empty = DeviceBuffer::<f64>::alloc(&ctx, 0).unwrap();
    let e = empty.fill(1.0).unwrap_err();
    assert!(e.to_string().contains("1, 2 or 4 bytes, not 8"), "{e}");
}

#[test]
fn values_of_no_size_are_bytes_of_nothing() {
    // A zero-sized `T`: any number of values is no bytes, so nothing is allocated.
    let ctx = context();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        let buf = DeviceBuffer::<[u32; 0]>::alloc(&ctx, 5).unwrap();
        assert_eq!((buf.as_raw(), buf.len(), buf.size_bytes()), (0, 5, 0));
        assert_eq!(buf.to_vec().unwrap().len(), 5);
        let view = buf.slice(1..3).unwrap();
        assert_eq!((view.as_raw(), view.len()), (0, 2));
    });
}

#[test]
fn managed_buffers_of_no_values_are_null_and_every_operation_on_them_is_a_no_op() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let full = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4]).unwrap();
    ctx.set_current().unwrap();
    without_driver_calls(|| {
        let mut buf = ManagedBuffer::<u32>::zeroed(&ctx, 0, ManagedAttach::Global).unwrap();
        let from_slice = ManagedBuffer::<u32>::from_slice(&ctx, &[], ManagedAttach::Host).unwrap();
        assert!(buf.as_host_ptr().is_null() && from_slice.as_raw() == 0);
        assert!(buf.as_slice().unwrap().is_empty() && buf.as_mut_slice().unwrap().is_empty());
        buf.attach_async(&stream, ManagedAttach::Single).unwrap();
        buf.prefetch_async(ManagedLocation::Host, &stream).unwrap();
        buf.advise(ManagedAdvice::SetAccessedBy(ManagedLocation::Device(0))).unwrap();
        assert_eq!(buf.range_attributes().unwrap(), Default::default());
        every_operation_is_a_no_op(&mut buf, &stream, &full);
        drop((buf, from_slice));
    });
    assert_eq!(full.to_vec().unwrap(), [1, 2, 3, 4]);
    assert!(my_reports().is_empty());
}
