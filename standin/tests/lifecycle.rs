//! Initialisation, shutdown and the ledger reset. All are process-wide, so this file (its
//! own test process) has exactly one test.

use std::ffi::c_char;

use cudrv::sys::{CUresult, CUstream};
use cudrv::LoadOptions;
use cudrv_standin::{fake_image, ledger, ledger_reset, StandIn};

/// Undoes `shutdown` even if an assertion fails.
struct Restart;

impl Drop for Restart {
    fn drop(&mut self) {
        cudrv_standin::restart();
    }
}

#[track_caller]
fn ok(status: CUresult) {
    assert_eq!(status, CUresult::CUDA_SUCCESS);
}

#[test]
fn not_initialized_before_cu_init_and_deinitialized_after_shutdown() {
    let d = StandIn::new(13050).unwrap().load(LoadOptions::default()).unwrap();
    let p = d.p();
    let deinit = CUresult::CUDA_ERROR_DEINITIALIZED;
    // SAFETY: valid out-pointers and arguments throughout; after shutdown every entry
    // answers before looking at its arguments.
    unsafe {
        // Before cuInit.
        let mut n = 0;
        assert_eq!(p.cuDeviceGetCount(&mut n), CUresult::CUDA_ERROR_NOT_INITIALIZED);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0), CUresult::CUDA_ERROR_NOT_INITIALIZED);
        let mut v = 0;
        ok(p.cuDriverGetVersion(&mut v));
        ok(p.cuInit(0));

        // Some state to outlive the shutdown.
        ok(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0));
        let mut s: CUstream = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s, 0));
        let mut ptr = 0;
        ok(p.cuMemAlloc(&mut ptr, 64));

        {
            let _restart = Restart;
            cudrv_standin::shutdown();
            // Emulated entries, stubs and cuInit itself.
            assert_eq!(p.cuInit(0), deinit);
            assert_eq!(p.cuDeviceGetCount(&mut n), deinit);
            assert_eq!(p.cuCtxGetCurrent(&mut ctx), deinit);
            assert_eq!(p.cuCtxSetCurrent(std::ptr::null_mut()), deinit);
            assert_eq!(p.cuCtxDestroy(ctx), deinit);
            assert_eq!(p.cuMemFree(ptr), deinit);
            assert_eq!(p.cuMemFree(0), deinit);
            assert_eq!(p.cuStreamSynchronize(s), deinit);
            assert_eq!(p.cuStreamDestroy(s), deinit);
            assert_eq!(p.cuLaunchHostFunc(s, None, std::ptr::null_mut()), deinit);
            let image = fake_image(&["k"]);
            let mut m = std::ptr::null_mut();
            assert_eq!(p.cuModuleLoadData(&mut m, image.as_ptr().cast()), deinit);
            let mut g = std::ptr::null_mut();
            assert_eq!(p.cuGraphCreate(&mut g, 0), deinit);
            assert_eq!(p.cuUserObjectRelease(std::ptr::null_mut(), 1), deinit);
            assert_eq!(p.cuMemPoolCreate(&mut std::ptr::null_mut(), std::ptr::null()), deinit);
            assert_eq!(p.cuCtxGetApiVersion(ctx, &mut 0), deinit);
            let mut config = cudrv::sys::CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE;
            assert_eq!(p.cuCtxGetSharedMemConfig(&mut config), deinit, "a stub");
            assert_eq!(p.cuMipmappedArrayDestroy(std::ptr::null_mut()), deinit, "a stub");
            // Still answering: versions, error strings, cuGetProcAddress.
            ok(p.cuDriverGetVersion(&mut v));
            assert_eq!(v, 13050);
            let mut name: *const c_char = std::ptr::null();
            ok(p.cuGetErrorName(deinit, &mut name));
            ok(p.cuGetErrorString(deinit, &mut name));
            let mut pfn = std::ptr::null_mut();
            ok(p.cuGetProcAddress(c"cuMemAlloc".as_ptr(), &mut pfn, 3020, 0, std::ptr::null_mut()));
            assert!(!pfn.is_null());
        }

        // Restarted: everything is as it was.
        ok(p.cuDeviceGetCount(&mut n));
        ok(p.cuMemFree(ptr));
        ok(p.cuStreamDestroy(s));

        // ledger_reset forgets the mistakes and what was freed, not what is live.
        assert_eq!(p.cuMemFree(ptr), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuStreamDestroy(s), CUresult::CUDA_ERROR_INVALID_HANDLE);
        let mut live = 0;
        ok(p.cuMemAlloc(&mut live, 8));
        let l = ledger();
        assert_eq!(l.double_frees, [ptr]);
        assert_eq!(l.double_destroys, [("stream", s as usize as u64)]);
        assert!(l.allocation(live).is_some());
        ledger_reset();
        let l = ledger();
        assert!(l.double_frees.is_empty() && l.double_destroys.is_empty());
        assert_eq!(l.live.len(), 1);
        assert!(l.allocation(live).is_some());
        assert_eq!(l.live_handles, [("context", ctx as usize as u64)]);
        // A forgotten freed address is unknown; a destroy before the reset is only invalid.
        assert_eq!(p.cuMemFree(ptr), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuMemsetD8(ptr, 0, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuStreamDestroy(s), CUresult::CUDA_ERROR_INVALID_HANDLE);
        let l = ledger();
        assert!(l.double_frees.is_empty() && l.double_destroys.is_empty() && l.use_after_free.is_empty());
        ok(p.cuMemsetD8(live, 0, 8));
        ok(p.cuMemFree(live));
        ok(p.cuCtxDestroy(ctx));
        assert!(ledger().live_handles.is_empty());
    }
}
