//! Views and the traits for device memory of `T` (issue 18, item 1): borrowed sub-ranges
//! of every kind of device memory, checked before any driver call, made without one,
//! usable wherever a buffer is (copies, fills, peer copies, kernel arguments), and
//! functions written once over `DeviceSlice`/`DeviceSliceMut` for every kind.

mod common;

use std::ptr::null_mut;

use common::{my_reports, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{
    Context, DeviceBuffer, DeviceSlice, DeviceSliceMut, ImportedBuffer, LaunchConfig, MemoryPool, Module, PinnedBuffer,
    Stream,
};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// The refusal's text, checking that it is an `InvalidArgument` of `what`.
fn refused<T: std::fmt::Debug>(r: Result<T, cudrv::InvalidArgument>, what: &str) -> String {
    let e = r.unwrap_err();
    assert_eq!(e.what(), what, "{e}");
    e.why().to_string()
}

#[test]
fn views_are_sub_ranges_of_their_parent() {
    let ctx = context();
    let buf = DeviceBuffer::from_slice(&ctx, &(0..10u32).collect::<Vec<_>>()).unwrap();
    let base = buf.as_raw();
    let mid = buf.slice(2..6).unwrap();
    assert_eq!((mid.as_raw(), mid.len()), (base + 8, 4));
    assert_eq!(mid.to_vec().unwrap(), [2, 3, 4, 5]);
    // A view of a view is a view of the same parent.
    let inner = mid.slice(1..=2).unwrap();
    assert_eq!((inner.as_raw(), inner.to_vec().unwrap()), (base + 12, vec![3, 4]));
    assert_eq!(buf.slice(..).unwrap().as_raw(), base);
    assert_eq!(buf.slice(7..).unwrap().to_vec().unwrap(), [7, 8, 9]);
    assert_eq!(buf.slice(..3).unwrap().to_vec().unwrap(), [0, 1, 2]);
    let (head, tail) = buf.split_at(4).unwrap();
    assert_eq!((head.len(), tail.len(), tail.as_raw()), (4, 6, base + 16));
    assert_eq!(tail.to_vec().unwrap(), [4, 5, 6, 7, 8, 9]);
    let chunks: Vec<Vec<u32>> = buf.chunks(4).unwrap().map(|c| c.to_vec().unwrap()).collect();
    assert_eq!(chunks, [vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]);
    assert_eq!(buf.chunks(4).unwrap().len(), 3);
    assert_eq!(buf.chunks(10).unwrap().count(), 1);
    assert_eq!(mid.context().as_raw(), ctx.as_raw());
}

#[test]
fn out_of_bounds_ranges_are_refused_naming_the_range_and_the_length() {
    let ctx = context();
    let mut buf = DeviceBuffer::<f32>::alloc(&ctx, 8).unwrap();
    let why = refused(buf.slice(3..9), "DeviceView::slice");
    assert!(why.contains("3..9") && why.contains("8 values"), "{why}");
    let (start, end) = (5, 3);
    let why = refused(buf.slice(start..end), "DeviceView::slice");
    assert!(why.contains("5..3"), "{why}");
    let why = refused(buf.slice(..=usize::MAX), "DeviceView::slice");
    assert!(why.contains(&format!("..={}", usize::MAX)), "{why}");
    let why = refused(buf.slice_mut(0..=8).map(|v| v.len()), "DeviceView::slice");
    assert!(why.contains("0..=8") && why.contains("8 values"), "{why}");
    let why = refused(buf.split_at(9), "DeviceView::split_at");
    assert!(why.contains('9') && why.contains("8 values"), "{why}");
    assert!(buf.split_at_mut(9).is_err());
    refused(buf.chunks(0).map(|c| c.len()), "DeviceView::chunks");
    assert!(buf.chunks_mut(0).is_err());
    // A view's own bounds are its length, not its parent's.
    let view = buf.slice(2..4).unwrap();
    let why = refused(view.slice(0..3), "DeviceView::slice");
    assert!(why.contains("0..3") && why.contains("2 values"), "{why}");
    // Copies that do not fit a view are refused before any driver call.
    let mut view = buf.slice_mut(6..).unwrap();
    let e = view.copy_from_host(&[1.0, 2.0, 3.0]).unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)) && e.to_string().contains("3 values"), "{e}");
    let e = view.copy_to_host(&mut [0.0; 3]).unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)), "{e}");
}

#[test]
fn making_a_view_calls_no_driver_function() {
    let ctx = context();
    let mut buf = DeviceBuffer::<u32>::alloc(&ctx, 64).unwrap();
    // Anything a view could ask the driver is armed to fail once; the probes below
    // consume each fault, so a view that called one would have failed or left it unarmed.
    const MARK: CUresult = CUresult::CUDA_ERROR_ECC_UNCORRECTABLE;
    let calls = [cudrv::call::cuCtxGetCurrent, cudrv::call::cuMemGetAddressRange, cudrv::call::cuPointerGetAttribute];
    for call in calls {
        faults::inject_on_this_thread(call, MARK, Times::Once);
    }
    let total: usize = buf.chunks(5).unwrap().map(|c| c.len()).sum();
    let (a, b) = buf.split_at(10).unwrap();
    let c = b.slice(3..7).unwrap();
    let lens = (a.len(), b.len(), c.len());
    let mut written = 0;
    for chunk in buf.chunks_mut(16).unwrap() {
        written += chunk.len();
    }
    let (m, n) = buf.split_at_mut(1).unwrap();
    let p = standin_driver().p();
    // SAFETY: each call answers the armed fault before reading its arguments.
    let probes = unsafe {
        [
            p.cuCtxGetCurrent(null_mut()),
            p.cuMemGetAddressRange(null_mut(), null_mut(), 0),
            p.cuPointerGetAttribute(null_mut(), cudrv::sys::CUpointer_attribute(1), 0),
        ]
    };
    assert_eq!(probes, [MARK; 3], "a view made a driver call");
    assert_eq!((total, lens, written, m.len(), n.len()), (64, (10, 54, 4), 64, 1, 63));
}

#[test]
fn copies_and_fills_through_views_touch_only_their_range() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let mut buf = DeviceBuffer::from_slice(&ctx, &[0u32; 12]).unwrap();
    buf.slice_mut(2..5).unwrap().fill(7).unwrap();
    buf.slice_mut(5..7).unwrap().copy_from_host(&[1, 2]).unwrap();
    buf.slice_mut(7..9).unwrap().fill_async(9, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [0, 0, 7, 7, 7, 1, 2, 9, 9, 0, 0, 0]);
    // Device to device within one buffer: the two halves of a split never overlap.
    let (head, mut tail) = buf.split_at_mut(6).unwrap();
    tail.copy_from_device(&head).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [0, 0, 7, 7, 7, 1, 0, 0, 7, 7, 7, 1]);
    // Between buffers, asynchronously, and from a view into a buffer's start.
    let other = DeviceBuffer::from_slice(&ctx, &[5u32, 6, 7, 8]).unwrap();
    buf.slice_mut(9..).unwrap().copy_from_device_async(&other.slice(1..).unwrap(), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.slice(8..).unwrap().to_vec().unwrap(), [7, 6, 7, 8]);
    other.copy_from_device(&buf.slice(..2).unwrap()).unwrap();
    assert_eq!(other.to_vec().unwrap(), [0, 0, 7, 8]);
    // Peer copies take views too (here within one context).
    other.copy_from_peer_async(&buf.slice(2..4).unwrap(), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(other.to_vec().unwrap(), [7, 7, 7, 8]);
    // Host copies of a part.
    let mut host = [0u32; 3];
    buf.slice(3..6).unwrap().copy_to_host(&mut host).unwrap();
    assert_eq!(host, [7, 7, 1]);
    assert!(my_reports().is_empty());
}

#[test]
fn pinned_copies_through_views_are_guarded_like_a_buffers() {
    let ctx = context();
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING).unwrap();
    let mut buf = DeviceBuffer::from_slice(&ctx, &[0.0f32; 8]).unwrap();
    let src = PinnedBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0]).unwrap();
    buf.slice_mut(4..7).unwrap().copy_from_pinned_async(&src, &stream).unwrap();
    let mut dst = PinnedBuffer::<f32>::zeroed(&ctx, 2).unwrap();
    buf.slice(5..).unwrap().copy_to_pinned_async(&mut dst, &stream).unwrap();
    // Reading the pinned buffer waits for the copy (its guard event covers it).
    assert_eq!(dst.as_slice().unwrap(), [2.0, 3.0]);
    let mut host = [0.0f32; 2];
    // SAFETY: `host` outlives the copy, which the synchronize below waits for.
    unsafe { buf.slice(4..6).unwrap().copy_to_host_async(&mut host, &stream) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(host, [1.0, 2.0]);
    let src = [4.0f32];
    // SAFETY: `src` outlives the copy, which the synchronize below waits for.
    unsafe { buf.slice_mut(7..).unwrap().copy_from_host_async(&src, &stream) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn chunks_mut_are_disjoint_writable_views_in_order() {
    let ctx = context();
    let mut buf = DeviceBuffer::<u16>::alloc(&ctx, 10).unwrap();
    let mut chunks = buf.chunks_mut(4).unwrap();
    assert_eq!(chunks.len(), 3);
    for (i, mut chunk) in (&mut chunks).enumerate() {
        chunk.fill(i as u16 + 1).unwrap();
    }
    assert!(chunks.next().is_none());
    assert_eq!(buf.to_vec().unwrap(), [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
}

#[test]
fn a_view_is_a_kernel_argument() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, include_str!("../examples/kernels/scale_f32.ptx")).unwrap();
    let scale = module.function("scale_f32").unwrap();
    let mut buf = DeviceBuffer::from_slice(&ctx, &[1.0f32; 8]).unwrap();
    // scale_f32(float* x, float s, int n): x[i] *= s for i < n, on the second half only.
    let (s, n) = (3.0f32, 4i32);
    let (_, tail) = buf.split_at_mut(4).unwrap();
    let mut launch = scale.builder(&stream);
    launch.arg(&tail).arg(&s).arg(&n);
    // SAFETY: the arguments match scale_f32(float*, float, int); the view's parent lives
    // until the synchronize below.
    unsafe { launch.launch(LaunchConfig::for_num_elems(4)) }.unwrap();
    drop(launch);
    let view = buf.slice(..2).unwrap();
    let mut launch = scale.builder(&stream);
    let (s, n) = (5.0f32, 2i32);
    launch.arg(&view).arg(&s).arg(&n);
    // SAFETY: as above.
    unsafe { launch.launch(LaunchConfig::for_num_elems(2)) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(buf.to_vec().unwrap(), [5.0, 5.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0]);
    assert!(my_reports().is_empty());
}

/// A library function written once: the sum of any device memory of `u32`, read in chunks
/// of `chunk` values.
fn sum_in_chunks(mem: &impl DeviceSlice<u32>, chunk: usize) -> Result<u64, cudrv::Error> {
    let mut sum = 0u64;
    for part in mem.chunks(chunk)? {
        sum += part.to_vec()?.iter().map(|&v| u64::from(v)).sum::<u64>();
    }
    Ok(sum)
}

/// Another: fills `dst` with `0, 1, 2, ...` and copies it into the start of `copy`.
fn iota_and_copy<D: DeviceSliceMut<u32>, C: DeviceSliceMut<u32>>(dst: &mut D, copy: &mut C) -> cudrv::Result<()> {
    let values: Vec<u32> = (0..dst.len() as u32).collect();
    dst.copy_from_host(&values)?;
    copy.copy_from_device(dst)
}

#[test]
fn functions_written_once_take_every_kind_of_device_memory() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let mut plain = DeviceBuffer::<u32>::alloc(&ctx, 10).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    let mut pooled = pool.alloc_async::<u32>(&stream, 10).unwrap();
    let mut ordered = DeviceBuffer::<u32>::alloc_async(&stream, 10).unwrap();
    stream.synchronize().unwrap();
    iota_and_copy(&mut plain, &mut pooled).unwrap();
    iota_and_copy(&mut ordered.slice_mut(5..).unwrap(), &mut plain.slice_mut(..5).unwrap()).unwrap();
    assert_eq!(sum_in_chunks(&plain, 3).unwrap(), 10 + (5..10).sum::<u64>());
    assert_eq!(sum_in_chunks(&pooled, 4).unwrap(), 45);
    assert_eq!(sum_in_chunks(&pooled.slice(1..3).unwrap(), 1).unwrap(), 3);
    assert_eq!(sum_in_chunks(&ordered.slice_mut(5..).unwrap(), 2).unwrap(), 10);
    assert!(sum_in_chunks(&plain, 0).is_err());
}

#[test]
fn imported_buffers_are_device_memory_with_views() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
    let imported_pool = MemoryPool::import_fd(&ctx, pool.export_fd().unwrap()).unwrap();
    let exported = pool.alloc_async::<u8>(&stream, 256).unwrap();
    stream.synchronize().unwrap();
    let mut import = ImportedBuffer::import(&imported_pool, &exported.export_ipc().unwrap(), &stream).unwrap();
    assert_eq!(DeviceSlice::len(&import), 256);
    import.fill(0).unwrap();
    import.slice_mut(16..32).unwrap().fill(3).unwrap();
    let (head, mut tail) = import.split_at_mut(128).unwrap();
    tail.copy_from_device(&head).unwrap();
    let bytes = exported.to_vec().unwrap();
    let expected: Vec<u8> = (0..256).map(|i| if (16..32).contains(&(i % 128)) { 3 } else { 0 }).collect();
    assert_eq!(bytes, expected, "the import's views wrote the exporter's memory");
    assert_eq!(import.slice(128 + 16..128 + 18).unwrap().to_vec().unwrap(), [3, 3]);
    drop(import);
    assert!(my_reports().is_empty());
}
