//! Device and pinned memory, copies, and the ledger. "facts" is `docs/driver-facts.md`.
//! The ledger is process-wide: each test looks for its own addresses only.

mod common;

use std::ffi::c_void;

use common::{driver, driver_ptds, new_context, ok};
use cudrv::sys::{CUdeviceptr, CUresult, CU_MEMHOSTALLOC_PORTABLE};
use cudrv::Driver;
use cudrv_standin::{ledger, AllocationKind, DEVICE_TOTAL_MEM};

fn alloc(d: &Driver, size: usize) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut p, size) });
    assert_ne!(p, 0);
    p
}

#[test]
fn copies_round_trip() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let (a, b) = (alloc(&d, 1024), alloc(&d, 1024));
    assert_ne!(a, b);
    let data: Vec<u8> = (0..1024).map(|i| (i % 251) as u8).collect();
    let mut back = vec![0u8; 1024];
    // SAFETY: host buffers of the sizes passed; device addresses from the stand-in.
    unsafe {
        ok(p.cuMemcpyHtoD(a, data.as_ptr().cast(), 1024));
        ok(p.cuMemcpyDtoD(b, a, 1024));
        ok(p.cuMemsetD8(b + 100, 0xab, 10));
        ok(p.cuMemcpyDtoH(back.as_mut_ptr().cast(), b, 1024));
        assert_eq!(back[..100], data[..100]);
        assert!(back[100..110].iter().all(|&x| x == 0xab));
        assert_eq!(back[110..], data[110..]);
        // Interior addresses work; a copy past the end or outside every allocation is
        // INVALID_VALUE; a length of 0 does nothing.
        let mut four = [0u8; 4];
        ok(p.cuMemcpyDtoH(four.as_mut_ptr().cast(), a + 4, 4));
        assert_eq!(four, [4, 5, 6, 7]);
        assert_eq!(p.cuMemcpyDtoH(back.as_mut_ptr().cast(), a + 1020, 8), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemcpyHtoD(0x1234, data.as_ptr().cast(), 4), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemcpyHtoD(0x1234, data.as_ptr().cast(), 0));
        // A device address is not a host pointer.
        assert_eq!(p.cuMemcpyHtoD(a, b as usize as *const c_void, 4), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemcpyHtoD(a, std::ptr::null(), 4), CUresult::CUDA_ERROR_INVALID_VALUE);
        // Stream forms, on a stream and on the default stream.
        let mut s = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s, 0));
        ok(p.cuMemsetD8Async(a, 0x11, 1024, s));
        ok(p.cuMemcpyDtoDAsync(b, a, 512, std::ptr::null_mut()));
        ok(p.cuMemcpyHtoDAsync(b + 512, data.as_ptr().cast(), 512, s));
        ok(p.cuMemcpyDtoHAsync(back.as_mut_ptr().cast(), b, 1024, s));
        ok(p.cuStreamSynchronize(s));
        assert!(back[..512].iter().all(|&x| x == 0x11));
        assert_eq!(back[512..], data[..512]);
        ok(p.cuStreamDestroy(s));
        ok(p.cuMemFree(a));
        ok(p.cuMemFree(b));
        ok(p.cuCtxDestroy(ctx));
    }
}

/// New memory reads as zeros (deterministic, where a GPU gives whatever was there), and a
/// read of it is what the sanitizer's `init` check reports: checked in a sanitized world of
/// its own, so that the suite stays clean under `CUDRV_STANDIN_SANITIZE=all`.
#[test]
fn new_memory_reads_as_zero_and_reading_it_is_an_uninitialised_read() {
    let s = cudrv_standin::StandIn::isolated(13050).unwrap();
    s.sanitize("init").unwrap();
    let d = s.load(cudrv::LoadOptions::default()).unwrap();
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    new_context(&d);
    let a = alloc(&d, 1024);
    let mut back = vec![0xffu8; 1024];
    // SAFETY: a host buffer of the size passed; a device address from the stand-in.
    ok(unsafe { d.p().cuMemcpyDtoH(back.as_mut_ptr().cast(), a, 1024) });
    assert!(back.iter().all(|&x| x == 0));
    let reports = s.sanitizer_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].kind, "uninit");
    assert!(reports[0].text.contains("1024 bytes never written"), "{}", reports[0].text);
}

#[test]
fn allocation_facts() {
    let d = driver();
    let p = d.p();
    let mut ptr = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        // facts: cuMemFree(0) succeeds, even with no context.
        ok(p.cuMemFree(0));
        assert_eq!(p.cuMemAlloc(&mut ptr, 16), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        let ctx = new_context(&d);
        // facts: size 0 is INVALID_VALUE, 1 << 62 is OUT_OF_MEMORY.
        assert_eq!(p.cuMemAlloc(&mut ptr, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemAlloc(&mut ptr, 1 << 62), CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(p.cuMemAlloc(std::ptr::null_mut(), 16), CUresult::CUDA_ERROR_INVALID_VALUE);
        let (mut free, mut total) = (0, 0);
        ok(p.cuMemGetInfo(&mut free, &mut total));
        assert_eq!(total, DEVICE_TOTAL_MEM);
        assert!(free <= total);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn the_ledger_sees_leaks_double_frees_and_uses_after_free() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let a = alloc(&d, 256);
    let leaked = alloc(&d, 100);
    let l = ledger();
    let entry = l.allocation(a).unwrap();
    assert_eq!((entry.size, entry.kind), (256, AllocationKind::Device));
    assert!(l.allocation(leaked).is_some());
    let mut byte = [0u8; 1];
    // SAFETY: host buffers of the sizes passed; addresses from the stand-in.
    unsafe {
        ok(p.cuMemFree(a));
        assert!(ledger().allocation(a).is_none());
        // A freed address: INVALID_VALUE and a double free.
        assert_eq!(p.cuMemFree(a), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(ledger().double_frees.contains(&a));
        // Copying or setting freed memory: INVALID_VALUE (docs/driver-facts.md, "Edge
        // cases": not a sticky ILLEGAL_ADDRESS) and a use after free.
        assert_eq!(p.cuMemcpyDtoH(byte.as_mut_ptr().cast(), a + 8, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemsetD8(a, 1, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuCtxSynchronize());
        let l = ledger();
        assert!(l.use_after_free.contains(&(a + 8)));
        assert!(l.use_after_free.contains(&a));
        // An address that never was an allocation is only invalid.
        assert_eq!(p.cuMemFree(a + 8), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(!ledger().double_frees.contains(&(a + 8)));
        // Addresses are never reused.
        let again = alloc(&d, 256);
        assert_ne!(again, a);
        ok(p.cuMemFree(again));
        // The leak stays visible, even after its context is destroyed.
        ok(p.cuCtxDestroy(ctx));
        assert!(ledger().allocation(leaked).is_some());
        let ctx = new_context(&d);
        ok(p.cuMemFree(leaked));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn stream_ordered_allocations() {
    for d in [driver(), driver_ptds()] {
        let p = d.p();
        let ctx = new_context(&d);
        // SAFETY: valid out-pointers; handles from the stand-in.
        unsafe {
            let mut s = std::ptr::null_mut();
            ok(p.cuStreamCreate(&mut s, 0));
            let mut a = 0;
            ok(p.cuMemAllocAsync(&mut a, 64, s));
            assert_eq!(ledger().allocation(a).unwrap().kind, AllocationKind::Async);
            ok(p.cuMemsetD8Async(a, 3, 64, s));
            ok(p.cuMemFreeAsync(a, s));
            assert_eq!(p.cuMemFreeAsync(a, s), CUresult::CUDA_ERROR_INVALID_VALUE);
            assert!(ledger().double_frees.contains(&a));
            // docs/driver-facts.md ("Edge cases"): size 0 succeeds and gives 0.
            ok(p.cuMemAllocAsync(&mut a, 0, s));
            assert_eq!(a, 0);
            ok(p.cuStreamDestroy(s));
            assert_eq!(p.cuMemAllocAsync(&mut a, 64, s), CUresult::CUDA_ERROR_INVALID_HANDLE);
            ok(p.cuCtxDestroy(ctx));
        }
    }
}

#[test]
fn pinned_host_memory() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let dev = alloc(&d, 8);
    // SAFETY: valid out-pointers; the pinned buffers have the sizes asked for.
    unsafe {
        let mut host: *mut c_void = std::ptr::null_mut();
        ok(p.cuMemAllocHost(&mut host, 8));
        assert!(!host.is_null());
        let h = host.cast::<u8>();
        for i in 0..8 {
            *h.add(i) = i as u8 + 1;
        }
        ok(p.cuMemcpyHtoD(dev, host, 8));
        let mut back = [0u8; 8];
        ok(p.cuMemcpyDtoH(back.as_mut_ptr().cast(), dev, 8));
        assert_eq!(back, [1, 2, 3, 4, 5, 6, 7, 8]);
        let addr = host as usize as u64;
        let entry = *ledger().allocation(addr).unwrap();
        assert_eq!((entry.size, entry.kind), (8, AllocationKind::Pinned));
        ok(p.cuMemFreeHost(host));
        assert!(ledger().allocation(addr).is_none());
        assert_eq!(p.cuMemFreeHost(host), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(ledger().double_frees.contains(&addr));

        let mut other: *mut c_void = std::ptr::null_mut();
        ok(p.cuMemHostAlloc(&mut other, 16, CU_MEMHOSTALLOC_PORTABLE));
        assert_eq!(p.cuMemHostAlloc(&mut other, 16, 0x100), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemFreeHost(other));
        ok(p.cuMemFree(dev));
        ok(p.cuCtxDestroy(ctx));
    }
}
