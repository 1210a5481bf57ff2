//! Typed creation flags read back as given, raw bits are still accepted (the driver judges
//! them), and `into_raw` never hands out a handle whose context it has just destroyed.

mod common;

use common::{my_reports, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{
    Context, ContextFlags, DeviceBuffer, Event, EventFlags, HostAllocFlags, PinnedBuffer, Stream, StreamFlags,
};

fn created_context() -> Context {
    common::capture_reports();
    Context::new(&standin_driver().device(0).unwrap(), ContextFlags::SCHED_AUTO).unwrap()
}

#[test]
fn typed_flags_read_back_as_given() {
    let d = standin_driver();
    common::capture_reports();
    let ctx = Context::new(&d.device(0).unwrap(), ContextFlags::SCHED_BLOCKING_SYNC | ContextFlags::LMEM_RESIZE_TO_MAX)
        .unwrap();
    // docs/driver-facts.md: a created context's flags are exactly its creation flags.
    assert_eq!(ctx.flags().unwrap(), ContextFlags::SCHED_BLOCKING_SYNC | ContextFlags::LMEM_RESIZE_TO_MAX);
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    assert_eq!(stream.flags().unwrap(), StreamFlags::NON_BLOCKING);
    assert_eq!(Stream::new(&ctx, StreamFlags::DEFAULT).unwrap().flags().unwrap(), StreamFlags::DEFAULT);
    let event = Event::new(&ctx, EventFlags::DISABLE_TIMING | EventFlags::BLOCKING_SYNC).unwrap();
    event.record(&stream).unwrap();
    event.synchronize().unwrap();
    let pinned =
        PinnedBuffer::<u32>::zeroed_with(&ctx, 4, HostAllocFlags::PORTABLE | HostAllocFlags::DEVICEMAP).unwrap();
    assert_eq!(pinned.flags().unwrap(), HostAllocFlags::PORTABLE | HostAllocFlags::DEVICEMAP);
    assert_eq!(pinned.as_slice().unwrap(), [0; 4]);
    assert!(my_reports().is_empty());
}

#[test]
fn raw_bits_are_still_accepted_and_unknown_ones_refused_by_the_driver() {
    let ctx = created_context();
    // Raw bits, as before the typed flags.
    let stream = Stream::new(&ctx, 1).unwrap();
    assert_eq!(stream.flags().unwrap(), StreamFlags::NON_BLOCKING);
    let event = Event::new(&ctx, 2u32).unwrap();
    drop(event);
    // A bit cuda.h does not define is passed on as it is, and the driver refuses it.
    let e = Stream::new(&ctx, StreamFlags::from_bits_retain(0x100)).unwrap_err();
    assert_eq!(
        (e.call(), e.code()),
        (Some(cudrv::call::cuStreamCreate), Some(CUresult::CUDA_ERROR_INVALID_VALUE)),
        "{e}"
    );
    let e = PinnedBuffer::<u8>::zeroed_with(&ctx, 16, 0x40u32).unwrap_err();
    assert!(e.to_string().contains("cuMemHostAlloc failed: CUDA_ERROR_INVALID_VALUE"), "{e}");
    assert!(my_reports().is_empty());
}

/// Queries `stream` through the driver, after cudrv has given it up.
fn query(raw: cudrv::sys::CUstream) -> CUresult {
    // SAFETY: a plain query; a dead stream is answered with an error by the stand-in.
    unsafe { standin_driver().p().cuStreamQuery(raw) }
}

#[test]
fn into_raw_of_a_stream_keeps_its_context_alive() {
    let ctx = created_context();
    let stream = Stream::new(&ctx, 0).unwrap();
    // The stream holds the context's last clone.
    drop(ctx);
    let raw = stream.into_raw().unwrap();
    // Before the fix the context was destroyed on the way out: CONTEXT_IS_DESTROYED.
    assert_eq!(query(raw), CUresult::CUDA_SUCCESS);
    // SAFETY: the stream is live and no longer cudrv's.
    assert_eq!(unsafe { standin_driver().p().cuStreamDestroy(raw) }, CUresult::CUDA_SUCCESS);
    assert!(my_reports().is_empty());
}

#[test]
fn into_raw_of_an_event_keeps_its_context_alive() {
    let ctx = created_context();
    let event = Event::new(&ctx, EventFlags::DISABLE_TIMING).unwrap();
    drop(ctx);
    let raw = event.into_raw().unwrap();
    // SAFETY: a plain query of an event given up by cudrv.
    assert_eq!(unsafe { standin_driver().p().cuEventQuery(raw) }, CUresult::CUDA_SUCCESS);
    // SAFETY: as above.
    assert_eq!(unsafe { standin_driver().p().cuEventDestroy(raw) }, CUresult::CUDA_SUCCESS);
    assert!(my_reports().is_empty());
}

#[test]
fn into_raw_of_buffers_keeps_their_context_alive() {
    let d = standin_driver();
    let ctx = created_context();
    let device = DeviceBuffer::from_slice(&ctx, &[7u32, 8, 9]).unwrap();
    let pinned = PinnedBuffer::from_slice(&ctx, &[1u8, 2]).unwrap();
    let raw_ctx = ctx.as_raw();
    drop(ctx);
    let dptr = device.into_raw().unwrap();
    let hptr = pinned.into_raw().unwrap();
    // The context is alive: the memory can be read and freed in it.
    // SAFETY: the context is live (kept alive by the handles given up).
    assert_eq!(unsafe { d.p().cuCtxPushCurrent(raw_ctx) }, CUresult::CUDA_SUCCESS);
    let mut back = [0u32; 3];
    // SAFETY: `back` holds 12 bytes; `dptr` is a live 12-byte allocation.
    assert_eq!(unsafe { d.p().cuMemcpyDtoH(back.as_mut_ptr().cast(), dptr, 12) }, CUresult::CUDA_SUCCESS);
    assert_eq!(back, [7, 8, 9]);
    // SAFETY: both allocations were given up by cudrv and are freed once here.
    unsafe {
        assert_eq!(d.p().cuMemFree(dptr), CUresult::CUDA_SUCCESS);
        assert_eq!(d.p().cuMemFreeHost(hptr), CUresult::CUDA_SUCCESS);
    }
    let mut popped = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { d.p().cuCtxPopCurrent(&mut popped) }, CUresult::CUDA_SUCCESS);
    assert!(my_reports().is_empty());
}
