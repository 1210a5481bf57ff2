//! Graphs of host nodes, graph execs, and user objects.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::Duration;

use common::{driver, eventually, new_context, ok, Call, Probe};
use cudrv::sys::{
    CUgraph, CUgraphExec, CUgraphInstantiateResult, CUgraphNode, CUresult, CUuserObject, CUDA_GRAPH_INSTANTIATE_PARAMS,
    CUDA_HOST_NODE_PARAMS,
};
use cudrv::Driver;
use cudrv_standin::ledger;

fn leak<T: Default>() -> &'static T {
    Box::leak(Box::default())
}

fn new_graph(d: &Driver) -> CUgraph {
    let mut g = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuGraphCreate(&mut g, 0) });
    g
}

fn host_node(
    d: &Driver,
    g: CUgraph,
    deps: &[CUgraphNode],
    f: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
) -> Result<CUgraphNode, CUresult> {
    let params = CUDA_HOST_NODE_PARAMS { fn_: Some(f), userData: arg };
    let mut n = std::ptr::null_mut();
    // SAFETY: valid out-pointer, dependencies and parameters.
    match unsafe { d.p().cuGraphAddHostNode(&mut n, g, deps.as_ptr(), deps.len(), &params) } {
        CUresult::CUDA_SUCCESS => Ok(n),
        e => Err(e),
    }
}

fn instantiate(d: &Driver, g: CUgraph) -> CUgraphExec {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuGraphInstantiateWithFlags(&mut e, g, 0) });
    e
}

#[test]
fn host_nodes_run_in_order_on_the_stream() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let probe: &'static Probe = leak();
    let calls: &'static [Call] = Box::leak((0..3).map(|tag| Call { probe, tag }).collect());
    let g = new_graph(&d);
    let a = host_node(&d, g, &[], common::record, calls[0].arg()).unwrap();
    let b = host_node(&d, g, &[a], common::record, calls[1].arg()).unwrap();
    let mut empty = std::ptr::null_mut();
    // SAFETY: valid out-pointer and dependencies.
    ok(unsafe { p.cuGraphAddEmptyNode(&mut empty, g, [b].as_ptr(), 1) });
    host_node(&d, g, &[empty], common::record, calls[2].arg()).unwrap();
    // A dependency must be a node of the graph.
    let other = new_graph(&d);
    assert_eq!(host_node(&d, other, &[a], common::record, calls[0].arg()), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
    let exec = instantiate(&d, g);
    // SAFETY: handles from the stand-in; the calls are leaked.
    unsafe {
        let mut s = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s, 0));
        ok(p.cuGraphLaunch(exec, s));
        ok(p.cuGraphLaunch(exec, std::ptr::null_mut()));
        ok(p.cuGraphLaunch(exec, s));
        ok(p.cuCtxSynchronize());
        // Each launch runs its nodes in order on one driver thread (the two streams'
        // threads may interleave).
        let log = probe.log.lock().unwrap().clone();
        assert_eq!(log.len(), 9);
        let mut threads: Vec<ThreadId> = log.iter().map(|(_, t)| *t).collect();
        threads.dedup();
        for t in threads {
            assert_ne!(t, std::thread::current().id());
            let tags: Vec<usize> = log.iter().filter(|(_, x)| *x == t).map(|(g, _)| *g).collect();
            assert!(tags.chunks(3).all(|c| c == [0, 1, 2]), "{tags:?}");
        }

        // The other instantiation entry points.
        let (mut e2, mut err) = (std::ptr::null_mut(), 0x55 as CUgraphNode);
        let mut log = [0x7f_i8 as std::ffi::c_char; 8];
        ok(p.cuGraphInstantiate_v11000(&mut e2, g, &mut err, log.as_mut_ptr(), log.len()));
        assert!(err.is_null());
        assert_eq!(log[0], 0);
        let mut params = CUDA_GRAPH_INSTANTIATE_PARAMS::default();
        let mut e3 = std::ptr::null_mut();
        ok(p.cuGraphInstantiateWithParams(&mut e3, g, &mut params));
        assert_eq!(params.result_out, CUgraphInstantiateResult::CUDA_GRAPH_INSTANTIATE_SUCCESS);
        for e in [e2, e3, exec] {
            ok(p.cuGraphExecDestroy(e));
        }
        // facts ("Edge cases"): destroyed graphs and execs answer CUDA_ERROR_INVALID_VALUE.
        assert_eq!(p.cuGraphExecDestroy(exec), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuGraphLaunch(exec, s), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuGraphDestroy(g));
        ok(p.cuGraphDestroy(other));
        assert_eq!(p.cuGraphDestroy(g), CUresult::CUDA_ERROR_INVALID_VALUE);
        let l = ledger();
        assert!(l.double_destroys.contains(&("graph exec", exec as usize as u64)));
        assert!(l.double_destroys.contains(&("graph", g as usize as u64)));
        assert!(!l.handle_is_live("graph", g as usize as u64));
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}

/// What a user object's destructor records.
#[derive(Default)]
struct Destroyed {
    count: AtomicUsize,
    thread: Mutex<Option<ThreadId>>,
}

unsafe extern "C" fn destroy(data: *mut c_void) {
    // SAFETY: a leaked `Destroyed`.
    let d = unsafe { &*(data as *const Destroyed) };
    *d.thread.lock().unwrap() = Some(std::thread::current().id());
    d.count.fetch_add(1, Ordering::SeqCst);
}

fn user_object(d: &Driver, destroyed: &'static Destroyed, refs: u32) -> CUuserObject {
    let mut o = std::ptr::null_mut();
    let arg = destroyed as *const Destroyed as *mut c_void;
    // SAFETY: valid out-pointer; the argument is leaked.
    ok(unsafe { d.p().cuUserObjectCreate(&mut o, arg, Some(destroy), refs, 1) });
    o
}

#[test]
fn user_objects_are_destroyed_on_a_driver_thread_at_zero() {
    let d = driver();
    let p = d.p();
    let destroyed: &'static Destroyed = leak();
    let o = user_object(&d, destroyed, 1);
    // SAFETY: handles from the stand-in.
    unsafe {
        ok(p.cuUserObjectRetain(o, 2));
        ok(p.cuUserObjectRelease(o, 2));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(destroyed.count.load(Ordering::SeqCst), 0);
        assert_eq!(p.cuUserObjectRelease(o, 2), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuUserObjectRelease(o, 1));
        assert!(eventually(|| destroyed.count.load(Ordering::SeqCst) == 1));
        assert_ne!(*destroyed.thread.lock().unwrap(), Some(std::thread::current().id()));
        assert_eq!(p.cuUserObjectRelease(o, 1), CUresult::CUDA_ERROR_INVALID_HANDLE);
        assert!(ledger().double_destroys.contains(&("user object", o as usize as u64)));
        // The flags must be CU_USER_OBJECT_NO_DESTRUCTOR_SYNC; the count positive.
        let mut bad = std::ptr::null_mut();
        let arg = destroyed as *const Destroyed as *mut c_void;
        assert_eq!(p.cuUserObjectCreate(&mut bad, arg, Some(destroy), 1, 0), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuUserObjectCreate(&mut bad, arg, Some(destroy), 0, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuUserObjectCreate(&mut bad, arg, None, 1, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(destroyed.count.load(Ordering::SeqCst), 1, "exactly once");
}

#[test]
fn graphs_and_execs_own_references_until_their_work_is_done() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let destroyed: &'static Destroyed = leak();
    let probe: &'static Probe = leak();
    let call: &'static Call = Box::leak(Box::new(Call { probe, tag: 1 }));
    let o = user_object(&d, destroyed, 1);
    let g = new_graph(&d);
    host_node(&d, g, &[], common::gated, call.arg()).unwrap();
    // SAFETY: handles from the stand-in; the call is leaked.
    unsafe {
        // The graph takes the caller's reference (move), and one more of its own.
        ok(p.cuGraphRetainUserObject(g, o, 1, 1));
        ok(p.cuGraphRetainUserObject(g, o, 1, 0));
        ok(p.cuGraphReleaseUserObject(g, o, 1));
        assert_eq!(p.cuGraphReleaseUserObject(g, o, 5), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuGraphRetainUserObject(g, o, 1, 8), CUresult::CUDA_ERROR_INVALID_VALUE);
        let exec = instantiate(&d, g);
        // The exec holds its own reference: destroying the graph destroys nothing.
        ok(p.cuGraphDestroy(g));
        let mut s = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s, 0));
        ok(p.cuGraphLaunch(exec, s));
        // Destroyed while its launch waits: the reference is released after the launch.
        ok(p.cuGraphExecDestroy(exec));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(destroyed.count.load(Ordering::SeqCst), 0);
        probe.open();
        ok(p.cuStreamSynchronize(s));
        assert_eq!(probe.tags(), [1]);
        assert!(eventually(|| destroyed.count.load(Ordering::SeqCst) == 1));
        ok(p.cuStreamDestroy(s));
        ok(p.cuCtxDestroy(ctx));
    }
}
