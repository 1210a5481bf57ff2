//! Memory information (issue 18, item 4): a device's free and total memory
//! (`cuMemGetInfo`), pool attributes as typed getters and setters, and `trim_to`.

mod common;

use common::{my_reports, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, MemoryInfo, MemoryPool, Stream};
use cudrv_standin::{faults, Times};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

#[test]
fn free_and_total_memory_of_a_context_and_of_the_current_one() {
    let ctx = context();
    let info = ctx.memory_info().unwrap();
    let device = standin_driver().device(0).unwrap();
    assert_eq!(info.total, device.total_memory().unwrap());
    assert!(info.free <= info.total, "{info:?}");
    ctx.set_current().unwrap();
    let current = MemoryInfo::of_current_context(standin_driver()).unwrap();
    assert_eq!(current.total, info.total);
}

#[test]
fn an_allocation_takes_its_size_from_the_free_memory() {
    // Tests in this file run in parallel, but only this one allocates 256 MiB at once: the
    // free memory drops by at least that while it lives.
    let ctx = context();
    let before = ctx.memory_info().unwrap();
    let bytes = 256 << 20;
    let buf = DeviceBuffer::<u8>::alloc(&ctx, bytes).unwrap();
    let during = ctx.memory_info().unwrap();
    assert!(during.free + bytes <= before.free + (64 << 20), "{before:?} -> {during:?}");
    drop(buf);
}

#[test]
fn memory_info_without_a_current_context_is_the_drivers_error() {
    let _ctx = context();
    // A fresh thread has no current context.
    let e = std::thread::spawn(|| MemoryInfo::of_current_context(standin_driver()).unwrap_err()).join().unwrap();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_CONTEXT), "{e}");
}

#[test]
fn a_failed_query_is_an_error_naming_the_call_and_leaves_the_context_alone() {
    let ctx = context();
    faults::inject_on_this_thread(cudrv::call::cuMemGetInfo, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    let e = ctx.memory_info().unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_UNKNOWN));
    assert!(e.to_string().contains("cuMemGetInfo"), "{e}");
    assert!(ctx.memory_info().is_ok());
}

#[test]
fn pool_settings_are_read_back_as_set() {
    let ctx = context();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), 0, "the default releases everything");
    pool.set_release_threshold(64 << 20).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), 64 << 20);
    pool.set_release_threshold(u64::MAX).unwrap();
    assert_eq!(pool.release_threshold().unwrap(), u64::MAX);
    assert!(pool.reuse_follow_event_dependencies().unwrap());
    assert!(pool.reuse_allow_opportunistic().unwrap());
    assert!(pool.reuse_allow_internal_dependencies().unwrap());
    pool.set_reuse_follow_event_dependencies(false).unwrap();
    pool.set_reuse_allow_opportunistic(false).unwrap();
    assert!(!pool.reuse_follow_event_dependencies().unwrap());
    assert!(!pool.reuse_allow_opportunistic().unwrap());
    assert!(pool.reuse_allow_internal_dependencies().unwrap(), "only what was set changed");
    pool.set_reuse_allow_internal_dependencies(false).unwrap();
    assert!(!pool.reuse_allow_internal_dependencies().unwrap());
    pool.set_reuse_follow_event_dependencies(true).unwrap();
    assert!(pool.reuse_follow_event_dependencies().unwrap());
    // Another pool keeps its own settings.
    let other = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    assert_eq!(other.release_threshold().unwrap(), 0);
    assert!(other.reuse_allow_opportunistic().unwrap());
    assert!(my_reports().is_empty());
}

#[test]
fn pool_usage_counts_live_allocations_and_high_marks_reset() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    assert_eq!(pool.used_current().unwrap(), 0);
    let a = pool.alloc_async::<u8>(&stream, 1 << 20).unwrap();
    let b = pool.alloc_async::<u8>(&stream, 1 << 20).unwrap();
    stream.synchronize().unwrap();
    let used = pool.used_current().unwrap();
    assert!(used >= 2 << 20, "{used}");
    assert!(pool.used_high().unwrap() >= used);
    assert!(pool.reserved_current().unwrap() >= used);
    assert!(pool.reserved_high().unwrap() >= pool.reserved_current().unwrap());
    drop(b);
    stream.synchronize().unwrap();
    let after = pool.used_current().unwrap();
    assert!(after < used, "{after} after a free, {used} before");
    assert!(pool.used_high().unwrap() >= used, "the high mark stays until reset");
    pool.reset_used_high().unwrap();
    assert_eq!(pool.used_high().unwrap(), pool.used_current().unwrap());
    pool.reset_reserved_high().unwrap();
    assert_eq!(pool.reserved_high().unwrap(), pool.reserved_current().unwrap());
    // Trimming never releases memory in use.
    pool.trim_to(0).unwrap();
    assert!(pool.reserved_current().unwrap() >= pool.used_current().unwrap());
    assert!(pool.used_current().unwrap() >= 1 << 20, "a's memory is still in use");
    drop(a);
    stream.synchronize().unwrap();
    pool.trim_to(0).unwrap();
    assert_eq!(pool.used_current().unwrap(), 0);
    assert!(my_reports().is_empty());
}

#[test]
fn a_refused_attribute_call_is_an_error_naming_it() {
    let ctx = context();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE).unwrap();
    faults::inject_on_this_thread(cudrv::call::cuMemPoolSetAttribute, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    let e = pool.set_release_threshold(1).unwrap_err();
    assert!(e.to_string().contains("cuMemPoolSetAttribute"), "{e}");
    assert_eq!(pool.release_threshold().unwrap(), 0, "unchanged");
    faults::inject_on_this_thread(cudrv::call::cuMemPoolTrimTo, CUresult::CUDA_ERROR_INVALID_VALUE, Times::Once);
    let e = pool.trim_to(0).unwrap_err();
    assert!(e.to_string().contains("cuMemPoolTrimTo"), "{e}");
}
