//! Memory pools and IPC export/import, with the duplicate-mapping behaviour of a real
//! driver (nvbug 5570902, `shared/background/cuda-core-error-policy-review.txt`).

mod common;

use std::ffi::{c_int, c_void};

use common::{driver, new_context, ok};
use cudrv::sys::{
    CUdeviceptr, CUmemAllocationHandleType as H, CUmemAllocationType, CUmemLocationType, CUmemPoolProps,
    CUmemPoolPtrExportData, CUmemoryPool, CUresult, CUstream,
};
use cudrv::Driver;
use cudrv_standin::{ledger, AllocationKind};

fn props(handles: H, device: c_int) -> CUmemPoolProps {
    let mut p = CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        handleTypes: handles,
        ..Default::default()
    };
    p.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.__bindgen_anon_1.id = device;
    p
}

fn create_pool(d: &Driver, handles: H) -> CUmemoryPool {
    let mut pool = std::ptr::null_mut();
    // SAFETY: valid out-pointer and properties.
    ok(unsafe { d.p().cuMemPoolCreate(&mut pool, &props(handles, 0)) });
    pool
}

fn read(d: &Driver, ptr: CUdeviceptr) -> Result<[u8; 4], CUresult> {
    let mut b = [0u8; 4];
    // SAFETY: a 4-byte host buffer.
    match unsafe { d.p().cuMemcpyDtoH(b.as_mut_ptr().cast(), ptr, 4) } {
        CUresult::CUDA_SUCCESS => Ok(b),
        e => Err(e),
    }
}

fn import(d: &Driver, pool: CUmemoryPool, data: &mut CUmemPoolPtrExportData) -> CUdeviceptr {
    let mut ptr = 0;
    // SAFETY: valid out-pointer and export data.
    ok(unsafe { d.p().cuMemPoolImportPointer(&mut ptr, pool, data) });
    ptr
}

#[test]
fn pool_properties_and_default_pools() {
    let d = driver();
    let p = d.p();
    let mut pool = std::ptr::null_mut();
    // SAFETY: valid out-pointers and properties.
    unsafe {
        for (bad, why) in [
            (props(H::CU_MEM_HANDLE_TYPE_WIN32, 0), "handle type"),
            (props(H::CU_MEM_HANDLE_TYPE_NONE, 5), "device id"),
        ] {
            assert_eq!(p.cuMemPoolCreate(&mut pool, &bad), CUresult::CUDA_ERROR_INVALID_VALUE, "{why}");
        }
        let mut invalid = props(H::CU_MEM_HANDLE_TYPE_NONE, 0);
        invalid.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_INVALID;
        assert_eq!(p.cuMemPoolCreate(&mut pool, &invalid), CUresult::CUDA_ERROR_INVALID_VALUE);
        let mut host = props(H::CU_MEM_HANDLE_TYPE_NONE, 0);
        host.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST;
        ok(p.cuMemPoolCreate(&mut pool, &host));
        ok(p.cuMemPoolDestroy(pool));

        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDeviceGetDefaultMemPool(&mut a, 0));
        ok(p.cuDeviceGetDefaultMemPool(&mut b, 0));
        assert_eq!(a, b);
        assert_eq!(p.cuDeviceGetDefaultMemPool(&mut a, 3), CUresult::CUDA_ERROR_INVALID_DEVICE);
        // The default pool is never destroyed.
        assert_eq!(p.cuMemPoolDestroy(b), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemPoolTrimTo(b, 0));
    }
}

#[test]
fn destroying_a_pool_with_live_allocations_keeps_the_leak_visible() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let pool = create_pool(&d, H::CU_MEM_HANDLE_TYPE_NONE);
    let s: CUstream = std::ptr::null_mut();
    // SAFETY: valid out-pointers; handles from the stand-in.
    unsafe {
        let mut a = 0;
        ok(p.cuMemAllocFromPoolAsync(&mut a, 128, pool, s));
        assert_eq!(ledger().allocation(a).unwrap().kind, AllocationKind::Pool);
        let h = pool as usize as u64;
        assert!(ledger().handle_is_live("memory pool", h));
        ok(p.cuMemPoolDestroy(pool));
        let l = ledger();
        assert!(!l.handle_is_live("memory pool", h));
        assert!(l.allocation(a).is_some(), "the leak is visible");
        assert_eq!(p.cuMemPoolDestroy(pool), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(ledger().double_destroys.contains(&("memory pool", h)));
        assert_eq!(p.cuMemPoolTrimTo(pool, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemAllocFromPoolAsync(&mut a, 128, pool, s), CUresult::CUDA_ERROR_INVALID_VALUE);
        // Still usable and freeable.
        ok(p.cuMemsetD8(a, 1, 128));
        ok(p.cuMemFreeAsync(a, s));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn duplicate_imports_share_one_mapping_and_one_free_unmaps_them_all() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let s: CUstream = std::ptr::null_mut();
    let pool = create_pool(&d, H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    // SAFETY: valid out-pointers, buffers and handles throughout.
    unsafe {
        // The pool as a file descriptor, and the importing side's pool.
        let mut fd: c_int = -1;
        ok(p.cuMemPoolExportToShareableHandle(
            (&mut fd as *mut c_int).cast(),
            pool,
            H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0,
        ));
        assert!(fd > 0);
        assert_eq!(
            p.cuMemPoolExportToShareableHandle((&mut fd as *mut c_int).cast(), pool, H::CU_MEM_HANDLE_TYPE_FABRIC, 0,),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
        let mut imported = std::ptr::null_mut();
        ok(p.cuMemPoolImportFromShareableHandle(
            &mut imported,
            fd as usize as *mut c_void,
            H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0,
        ));
        assert!(!imported.is_null() && imported != pool);

        // An allocation and its export data.
        let mut a = 0;
        ok(p.cuMemAllocFromPoolAsync(&mut a, 64, pool, s));
        ok(p.cuMemcpyHtoD(a, [1u8, 2, 3, 4].as_ptr().cast(), 4));
        let mut data = CUmemPoolPtrExportData::default();
        ok(p.cuMemPoolExportPointer(&mut data, a));

        // The first import maps the same memory at a new address.
        let b = import(&d, imported, &mut data);
        assert_ne!(b, a);
        assert_eq!(read(&d, b), Ok([1, 2, 3, 4]));
        ok(p.cuMemsetD8(b, 9, 1));
        assert_eq!(read(&d, a), Ok([9, 2, 3, 4]));
        assert!(ledger().duplicate_imports.iter().all(|&x| x != b));

        // Importing again while b is mapped: another address for the same mapping.
        let c = import(&d, imported, &mut data);
        assert!(c != a && c != b);
        assert_eq!(read(&d, c), Ok([9, 2, 3, 4]));
        let l = ledger();
        assert!(l.duplicate_imports.contains(&c));
        assert_eq!(l.allocation(c).unwrap().kind, AllocationKind::Import);
        assert_eq!(l.allocation(b).unwrap().kind, AllocationKind::Import);

        // Freeing one unmaps both: b is now freed memory.
        ok(p.cuMemFreeAsync(c, s));
        // docs/driver-facts.md ("Edge cases"): a copy from freed memory is INVALID_VALUE.
        assert_eq!(read(&d, b), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(p.cuMemFree(b), CUresult::CUDA_ERROR_INVALID_VALUE);
        let l = ledger();
        assert!(l.use_after_free.contains(&b));
        assert!(l.double_frees.contains(&b));
        assert!(l.allocation(b).is_none() && l.allocation(c).is_none());
        // The exporter's allocation is unaffected.
        assert_eq!(read(&d, a), Ok([9, 2, 3, 4]));

        // With nothing mapped, a new import is not a duplicate.
        let e = import(&d, imported, &mut data);
        assert!(!ledger().duplicate_imports.contains(&e));
        // Freeing the exporter's allocation leaves the import mapped (this emulation).
        ok(p.cuMemFreeAsync(a, s));
        assert_eq!(read(&d, e), Ok([9, 2, 3, 4]));
        // ... but it can no longer be imported.
        let mut f = 0;
        assert_eq!(p.cuMemPoolImportPointer(&mut f, imported, &mut data), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemFree(e));

        // Import data must come from the stand-in, through a pool imported from the
        // exporting one.
        let mut a2 = 0;
        ok(p.cuMemAllocFromPoolAsync(&mut a2, 8, pool, s));
        ok(p.cuMemPoolExportPointer(&mut data, a2));
        assert_eq!(p.cuMemPoolImportPointer(&mut f, pool, &mut data), CUresult::CUDA_ERROR_INVALID_VALUE);
        let mut garbage = CUmemPoolPtrExportData::default();
        assert_eq!(p.cuMemPoolImportPointer(&mut f, imported, &mut garbage), CUresult::CUDA_ERROR_INVALID_VALUE);
        // An allocation from a pool without handle types cannot be exported.
        let mut plain = 0;
        ok(p.cuMemAllocAsync(&mut plain, 8, s));
        assert_eq!(p.cuMemPoolExportPointer(&mut data, plain), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemFreeAsync(plain, s));
        ok(p.cuMemFreeAsync(a2, s));
        ok(p.cuMemPoolDestroy(imported));
        ok(p.cuMemPoolDestroy(pool));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_pointer_is_exported_only_from_a_pool_that_was_exported() {
    // docs/driver-facts.md ("IPC: the order of exports").
    let d = driver();
    let _ctx = new_context(&d);
    let p = d.p();
    let pool = create_pool(&d, H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    let mut ptr: CUdeviceptr = 0;
    let stream: CUstream = std::ptr::null_mut();
    // SAFETY: valid out-pointers; a live pool; the legacy stream.
    unsafe {
        ok(p.cuMemAllocFromPoolAsync(&mut ptr, 256, pool, stream));
        let mut data = CUmemPoolPtrExportData::default();
        assert_eq!(p.cuMemPoolExportPointer(&mut data, ptr), CUresult::CUDA_ERROR_INVALID_VALUE, "pool not exported");
        let mut fd: c_int = -1;
        let handle = (&mut fd as *mut c_int).cast::<c_void>();
        ok(p.cuMemPoolExportToShareableHandle(handle, pool, H::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        ok(p.cuMemPoolExportPointer(&mut data, ptr));
        ok(p.cuMemFreeAsync(ptr, stream));
        ok(p.cuMemPoolDestroy(pool));
    }
}
