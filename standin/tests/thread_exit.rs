//! Calls made at thread exit, from the destructor of a thread-local that outlives the
//! stand-in's own thread-local state (issue 8: the stand-in panicked inside an
//! `extern "C"` entry there, which aborts the process). The scenario runs in a child
//! process, so that an abort fails the test instead of ending the test binary.

mod common;

use std::cell::RefCell;
use std::sync::Mutex;

use common::{child_scenario, ok, run_child};
use cudrv::sys::{CUcontext, CUresult, CUstream};
use cudrv::Driver;
use cudrv_standin::{faults, StandIn, Times};

/// What the destructor saw: each call and its status, and the contexts it read.
static SEEN: Mutex<Vec<(&'static str, CUresult, usize)>> = Mutex::new(Vec::new());

fn note(call: &'static str, status: CUresult, ctx: CUcontext) {
    SEEN.lock().unwrap().push((call, status, ctx as usize));
}

/// A driver, stream and context held by a thread-local, used when it is dropped.
struct Held {
    d: &'static Driver,
    stream: CUstream,
    ctx: CUcontext,
}

impl Drop for Held {
    fn drop(&mut self) {
        let p = self.d.p();
        let none = std::ptr::null_mut();
        // SAFETY: valid out-pointers; handles from the stand-in.
        unsafe {
            let mut c = 0x77 as CUcontext;
            note("cuCtxGetCurrent", p.cuCtxGetCurrent(&mut c), c);
            let mut ptr = 0;
            note("cuMemAlloc", p.cuMemAlloc(&mut ptr, 16), none);
            note("cuStreamDestroy", p.cuStreamDestroy(self.stream), none);
            note("cuCtxPushCurrent", p.cuCtxPushCurrent(self.ctx), none);
            let mut c = none;
            note("cuCtxGetCurrent", p.cuCtxGetCurrent(&mut c), c);
            note("cuMemAlloc", p.cuMemAlloc(&mut ptr, 16), none);
            note("cuMemFree", p.cuMemFree(ptr), none);
            let mut popped = none;
            note("cuCtxPopCurrent", p.cuCtxPopCurrent(&mut popped), popped);
            note("cuCtxPopCurrent", p.cuCtxPopCurrent(&mut popped), none);
            faults::inject_on_this_thread(cudrv::call::cuDeviceGetCount, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
            let mut n = 0;
            note("cuDeviceGetCount", p.cuDeviceGetCount(&mut n), none);
            note("cuDeviceGetCount", p.cuDeviceGetCount(&mut n), none);
        }
    }
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

#[test]
fn a_thread_local_dropped_at_thread_exit_can_still_call_the_driver() {
    run_child("thread_exit", &[]);
}

#[test]
#[ignore = "run by run_child"]
fn child() {
    let Some(scenario) = child_scenario() else {
        return;
    };
    assert_eq!(scenario, "thread_exit");
    let d: &'static Driver = Box::leak(Box::new(StandIn::new(13050).unwrap().load(Default::default()).unwrap()));
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    let (ctx, stream) = std::thread::spawn(move || {
        // The program's thread-local is set up first, so it is destroyed after every
        // thread-local the stand-in sets up later (destructors run in reverse order).
        HELD.with(|h| assert!(h.borrow().is_none()));
        let p = d.p();
        let mut ctx = std::ptr::null_mut();
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            ok(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0));
            ok(p.cuStreamCreate(&mut stream, 0));
        }
        HELD.with(|h| *h.borrow_mut() = Some(Held { d, stream, ctx }));
        (ctx as usize, stream as usize)
    })
    .join()
    .expect("the thread ends cleanly");

    let seen = SEEN.lock().unwrap().clone();
    let calls: Vec<_> = seen.iter().map(|(c, s, _)| (*c, *s)).collect();
    let (success, invalid_ctx) = (CUresult::CUDA_SUCCESS, CUresult::CUDA_ERROR_INVALID_CONTEXT);
    assert_eq!(
        calls,
        [
            // The stack the thread had is gone: no current context, as for a new thread.
            ("cuCtxGetCurrent", success),
            ("cuMemAlloc", invalid_ctx),
            ("cuStreamDestroy", success),
            // A context pushed now is current until popped.
            ("cuCtxPushCurrent", success),
            ("cuCtxGetCurrent", success),
            ("cuMemAlloc", success),
            ("cuMemFree", success),
            ("cuCtxPopCurrent", success),
            ("cuCtxPopCurrent", invalid_ctx),
            // Faults injected for this thread still apply to it only.
            ("cuDeviceGetCount", CUresult::CUDA_ERROR_UNKNOWN),
            ("cuDeviceGetCount", success),
        ]
    );
    // cuCtxGetCurrent with none current writes NULL (driver-facts.md, conformance suite).
    assert_eq!(seen[0].2, 0);
    assert_eq!(seen[4].2, ctx);
    assert_eq!(seen[7].2, ctx);
    assert!(!cudrv_standin::ledger().handle_is_live("stream", stream as u64));
    // The context outlives the thread and can be destroyed from here.
    // SAFETY: a context from the stand-in.
    ok(unsafe { d.p().cuCtxDestroy(ctx as CUcontext) });
    println!("SCENARIO-PASSED");
}
