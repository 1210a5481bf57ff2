//! Driver calls from inside a program's callback: a host function (`cuLaunchHostFunc`), a
//! graph host node and a user object destructor. driver-facts.md, "Edge cases on the real
//! driver": inside a host function every driver call answers CUDA_ERROR_NOT_PERMITTED,
//! even `cuCtxGetCurrent`; the CUDA documentation forbids CUDA calls in host nodes and
//! user object destructors too, and the stand-in answers them the same.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::{driver, eventually, new_context, ok};
use cudrv::sys::{CUresult, CUstream, CUDA_HOST_NODE_PARAMS};
use cudrv::Driver;

/// What a callback tries, and what each call answered.
struct Attempt<'a> {
    d: &'a Driver,
    /// The stream the callback runs on (NULL for a user object destructor).
    own: CUstream,
    other: CUstream,
    counter: AtomicUsize,
    answers: Mutex<Vec<(&'static str, CUresult)>>,
}

impl<'a> Attempt<'a> {
    fn new(d: &'a Driver, own: CUstream, other: CUstream) -> Attempt<'a> {
        Attempt { d, own, other, counter: AtomicUsize::new(0), answers: Mutex::new(Vec::new()) }
    }

    fn arg(&self) -> *mut c_void {
        self as *const Self as *mut c_void
    }

    /// Asserts that the callback ran, every call answered CUDA_ERROR_NOT_PERMITTED and the
    /// host function it tried to queue never ran.
    fn check(&self) {
        let answers = self.answers.lock().unwrap();
        assert_eq!(answers.len(), 9, "{answers:?}");
        for (call, status) in answers.iter() {
            assert_eq!(*status, CUresult::CUDA_ERROR_NOT_PERMITTED, "{call}");
        }
        assert_eq!(self.counter.load(Ordering::SeqCst), 0);
    }
}

/// Calls the driver from a callback and records the answers.
unsafe extern "C" fn try_the_driver(data: *mut c_void) {
    // SAFETY: an `Attempt` that outlives the callback (the tests wait for it).
    let a = unsafe { &*(data as *const Attempt) };
    let p = a.d.p();
    let count = &a.counter as *const AtomicUsize as *mut c_void;
    let (mut ctx, mut n, mut ptr, mut s) = (std::ptr::null_mut(), 0, 0, std::ptr::null_mut());
    // SAFETY: valid out-pointers and handles (the answers are what is checked).
    let answers = unsafe {
        [
            ("cuCtxGetCurrent", p.cuCtxGetCurrent(&mut ctx)),
            ("cuInit", p.cuInit(0)),
            ("cuDeviceGetCount", p.cuDeviceGetCount(&mut n)),
            ("cuMemAlloc", p.cuMemAlloc(&mut ptr, 16)),
            ("cuStreamCreate", p.cuStreamCreate(&mut s, 0)),
            ("cuLaunchHostFunc", p.cuLaunchHostFunc(a.other, Some(common::count), count)),
            ("cuStreamSynchronize(other)", p.cuStreamSynchronize(a.other)),
            // The real driver never returns from this one (see the crate docs).
            ("cuStreamSynchronize(own)", p.cuStreamSynchronize(a.own)),
            // An entry the stand-in does not emulate.
            ("cuMipmappedArrayDestroy", p.cuMipmappedArrayDestroy(std::ptr::null_mut())),
        ]
    };
    a.answers.lock().unwrap().extend(answers);
}

fn new_stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

#[test]
fn a_host_function_may_not_call_the_driver() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let (own, other) = (new_stream(&d), new_stream(&d));
    let a = Attempt::new(&d, own, other);
    // SAFETY: `a` outlives the work (synchronised below); handles from the stand-in.
    unsafe {
        ok(p.cuLaunchHostFunc(own, Some(try_the_driver), a.arg()));
        ok(p.cuStreamSynchronize(own));
        ok(p.cuStreamSynchronize(other));
        a.check();
        // Outside the callback, the same thread's calls work again (a new host function on
        // the same stream's driver thread).
        let mut dev = -1;
        ok(p.cuCtxGetDevice(&mut dev));
        let b = Attempt::new(&d, own, other);
        ok(p.cuLaunchHostFunc(own, Some(try_the_driver), b.arg()));
        ok(p.cuCtxSynchronize());
        b.check();
        ok(p.cuStreamDestroy(own));
        ok(p.cuStreamDestroy(other));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_graph_host_node_may_not_call_the_driver() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let (own, other) = (new_stream(&d), new_stream(&d));
    let a = Attempt::new(&d, own, other);
    // SAFETY: valid out-pointers and parameters; `a` outlives the launch (synchronised).
    unsafe {
        let (mut g, mut node, mut exec) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuGraphCreate(&mut g, 0));
        let params = CUDA_HOST_NODE_PARAMS { fn_: Some(try_the_driver), userData: a.arg() };
        ok(p.cuGraphAddHostNode(&mut node, g, std::ptr::null(), 0, &params));
        ok(p.cuGraphInstantiateWithFlags(&mut exec, g, 0));
        ok(p.cuGraphLaunch(exec, own));
        ok(p.cuStreamSynchronize(own));
        ok(p.cuStreamSynchronize(other));
        a.check();
        ok(p.cuGraphExecDestroy(exec));
        ok(p.cuGraphDestroy(g));
        ok(p.cuStreamDestroy(own));
        ok(p.cuStreamDestroy(other));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn a_user_object_destructor_may_not_call_the_driver() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let other = new_stream(&d);
    let a = Attempt::new(&d, std::ptr::null_mut(), other);
    // SAFETY: valid out-pointer; `a` outlives the destructor (waited for).
    unsafe {
        let mut o = std::ptr::null_mut();
        ok(p.cuUserObjectCreate(&mut o, a.arg(), Some(try_the_driver), 1, 1));
        ok(p.cuUserObjectRelease(o, 1));
        assert!(eventually(|| a.answers.lock().unwrap().len() == 9));
        ok(p.cuStreamSynchronize(other));
        a.check();
        ok(p.cuStreamDestroy(other));
        ok(p.cuCtxDestroy(ctx));
    }
}
