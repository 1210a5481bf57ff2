//! Regression tests for what the fuzz targets found (`fuzz/`, DESIGN.md "Fuzzing"): each
//! input that aborted the process (or asked the allocator for more than any machine has)
//! now gets a clear error. The test binary's allocator records the largest request made on
//! each thread, so a test also sees an allocation the system happened to refuse.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{driver, new_context};
use cudrv::sys::*;

/// The system allocator, recording the largest size asked for on each thread.
struct Recording;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn record(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// The largest allocation `f` asked for on this thread, and its result.
fn largest_allocation<R>(f: impl FnOnce() -> R) -> (usize, R) {
    LARGEST.with(|l| l.set(0));
    let r = f();
    (LARGEST.with(Cell::get), r)
}

/// standin_calls: `cuMemHostAlloc` of 1 TiB asked the allocator for 1 TiB (the address
/// sanitizer aborts on it; with overcommit the allocation can succeed and the process die
/// when the memory is touched). Pinned memory beyond the host's physical memory is refused
/// before anything is allocated, as a real driver (which must page-lock it) refuses it.
#[test]
fn pinned_memory_beyond_the_host_is_refused_without_an_attempt() {
    let d = driver();
    let p = d.p();
    let _ctx = new_context(&d);
    for size in [1usize << 40, 1 << 50, usize::MAX / 2] {
        let mut host = std::ptr::dangling_mut::<std::ffi::c_void>();
        // SAFETY: a valid out-pointer.
        let (largest, status) = largest_allocation(|| unsafe { p.cuMemHostAlloc(&mut host, size, 0) });
        assert_eq!(status, CUresult::CUDA_ERROR_OUT_OF_MEMORY, "{size}");
        assert!(host.is_null(), "{size}");
        assert!(largest < 1 << 30, "{size}: an allocation of {largest} bytes was asked for");
        // SAFETY: as above.
        let (largest, status) = largest_allocation(|| unsafe { p.cuMemAllocHost(&mut host, size) });
        assert_eq!(status, CUresult::CUDA_ERROR_OUT_OF_MEMORY, "{size}");
        assert!(largest < 1 << 30, "{size}: an allocation of {largest} bytes was asked for");
    }
    // What the host has is still given.
    let mut host = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the buffer is freed once.
    unsafe {
        assert_eq!(p.cuMemHostAlloc(&mut host, 1 << 20, 0), CUresult::CUDA_SUCCESS);
        assert!(!host.is_null());
        assert_eq!(p.cuMemFreeHost(host), CUresult::CUDA_SUCCESS);
    }
}
