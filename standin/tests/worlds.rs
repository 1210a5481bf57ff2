//! Stand-ins in one process are independent: each `StandIn::isolated` is a world of its
//! own, and `StandIn::reset` returns a world to the state of a new process.

mod common;

use common::ok;
use cudrv::sys::{CUcontext, CUresult};
use cudrv::{Driver, LoadOptions};
use cudrv_standin::{StandIn, Times};

fn load(s: StandIn) -> Driver {
    let d = s.load(LoadOptions::default()).unwrap();
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    d
}

fn create_context(d: &Driver) -> CUcontext {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; no creation parameters.
    ok(unsafe { d.p().cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0) });
    ctx
}

#[test]
fn isolated_worlds_do_not_see_each_others_objects() {
    let (a, b) = (StandIn::isolated(13000).unwrap(), StandIn::isolated(13000).unwrap());
    assert_ne!(a, b);
    let (da, db) = (load(a), load(b));
    let ctx = create_context(&da);
    let h = ctx as u64;
    assert!(a.ledger().handle_is_live("context", h));
    assert!(!b.ledger().handle_is_live("context", h));
    // A's context is unknown to B: pushing it there is an invalid context.
    // SAFETY: the stand-in only looks the handle up.
    assert_eq!(unsafe { db.p().cuCtxPushCurrent(ctx) }, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    // This thread's current context is per world: B has none.
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { db.p().cuCtxGetCurrent(&mut current) });
    assert!(current.is_null());
    // SAFETY: valid out-pointer.
    ok(unsafe { da.p().cuCtxGetCurrent(&mut current) });
    assert_eq!(current, ctx);
    // Memory: an allocation of A is no address of B.
    let mut x = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { da.p().cuMemAlloc(&mut x, 256) });
    assert!(a.ledger().allocation(x).is_some());
    assert!(b.ledger().allocation(x).is_none());
    // SAFETY: destroys the context made above.
    ok(unsafe { da.p().cuCtxDestroy(ctx) });
}

#[test]
fn faults_settings_and_shutdown_stay_in_their_world() {
    let (a, b) = (StandIn::isolated(13050).unwrap(), StandIn::isolated(13050).unwrap());
    let (da, db) = (load(a), load(b));
    a.inject(cudrv::call::cuDeviceGetCount, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Always);
    assert!(a.set_device_count(3));
    let mut n = 0;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(da.p().cuDeviceGetCount(&mut n), CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        ok(db.p().cuDeviceGetCount(&mut n));
    }
    assert_eq!(n, b.device_count());
    a.clear_faults();
    // SAFETY: valid out-pointer.
    ok(unsafe { da.p().cuDeviceGetCount(&mut n) });
    assert_eq!(n, 3);
    a.shutdown();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(da.p().cuDeviceGetCount(&mut n), CUresult::CUDA_ERROR_DEINITIALIZED);
        ok(db.p().cuDeviceGetCount(&mut n));
    }
    a.restart();
}

#[test]
fn reset_returns_a_world_to_a_new_process() {
    let s = StandIn::isolated(13000).unwrap();
    let d = load(s);
    let ctx = create_context(&d);
    let mut x = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut x, 64) });
    assert!(s.set_device_count(2));
    s.reset();
    assert_eq!(s.ledger(), cudrv_standin::Ledger::default());
    assert_eq!(s.device_count(), cudrv_standin::device_count());
    let mut n = 0;
    let mut current = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the old context is only looked up.
    unsafe {
        assert_eq!(d.p().cuDeviceGetCount(&mut n), CUresult::CUDA_ERROR_NOT_INITIALIZED);
        ok(d.p().cuInit(0));
        ok(d.p().cuCtxGetCurrent(&mut current));
        assert!(current.is_null(), "this thread's context stack is gone");
        assert_eq!(d.p().cuCtxPushCurrent(ctx), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(d.p().cuMemFree(x), CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    assert_eq!(s.version(), 13000);
}
