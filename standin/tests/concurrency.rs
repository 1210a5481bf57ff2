//! 16 threads make and drop handles at once, with faults injected at random: nothing
//! deadlocks, every callback runs once, and nothing a thread destroyed stays live.

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{driver, eventually};
use cudrv::sys::{CUresult, CUDA_HOST_NODE_PARAMS};
use cudrv_standin::{faults, ledger, Times};

const THREADS: usize = 16;
const ROUNDS: usize = 60;

/// Entries a fault may hit.
const FAULTY: [cudrv::Call; 16] = [
    cudrv::call::cuCtxCreate,
    cudrv::call::cuStreamCreate,
    cudrv::call::cuEventCreate,
    cudrv::call::cuMemAlloc,
    cudrv::call::cuLaunchHostFunc,
    cudrv::call::cuMemcpyHtoD,
    cudrv::call::cuEventRecord,
    cudrv::call::cuStreamSynchronize,
    cudrv::call::cuMemFree,
    cudrv::call::cuStreamDestroy,
    cudrv::call::cuEventDestroy,
    cudrv::call::cuCtxDestroy,
    cudrv::call::cuGraphCreate,
    cudrv::call::cuGraphLaunch,
    cudrv::call::cuUserObjectCreate,
    cudrv::call::cuGraphDestroy,
];

static HOST_CALLS: AtomicUsize = AtomicUsize::new(0);
static DESTRUCTORS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn host(_: *mut c_void) {
    HOST_CALLS.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn destructor(_: *mut c_void) {
    DESTRUCTORS.fetch_add(1, Ordering::SeqCst);
}

/// xorshift64.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Retries a destroy until the injected fault (which fires once) is spent.
#[track_caller]
fn destroy(mut f: impl FnMut() -> CUresult) {
    for _ in 0..3 {
        if f() == CUresult::CUDA_SUCCESS {
            return;
        }
    }
    panic!("destroy kept failing");
}

/// One thread's work; returns (host functions launched, user objects made, handles).
fn work(seed: u64) -> (usize, usize, Vec<(&'static str, u64)>) {
    let d = driver();
    let p = d.p();
    let mut rng = seed | 1;
    let (mut launched, mut objects, mut handles) = (0, 0, Vec::new());
    for _ in 0..ROUNDS {
        faults::clear();
        if next(&mut rng) % 2 == 0 {
            let symbol = FAULTY[(next(&mut rng) % FAULTY.len() as u64) as usize];
            faults::inject_on_this_thread(symbol, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
        }
        // SAFETY: valid out-pointers and buffers; handles from the stand-in.
        unsafe {
            let mut ctx = std::ptr::null_mut();
            if p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0) != CUresult::CUDA_SUCCESS {
                continue;
            }
            handles.push(("context", ctx as usize as u64));
            let mut s = std::ptr::null_mut();
            if p.cuStreamCreate(&mut s, 0) == CUresult::CUDA_SUCCESS {
                handles.push(("stream", s as usize as u64));
                if p.cuLaunchHostFunc(s, Some(host), std::ptr::null_mut()) == CUresult::CUDA_SUCCESS {
                    launched += 1;
                }
                let mut e = std::ptr::null_mut();
                if p.cuEventCreate(&mut e, 0) == CUresult::CUDA_SUCCESS {
                    handles.push(("event", e as usize as u64));
                    let _ = p.cuEventRecord(e, s);
                    let _ = p.cuEventQuery(e);
                    destroy(|| p.cuEventDestroy(e));
                }
                let mut ptr = 0;
                if p.cuMemAlloc(&mut ptr, 256) == CUresult::CUDA_SUCCESS {
                    let data = [7u8; 256];
                    let _ = p.cuMemcpyHtoDAsync(ptr, data.as_ptr().cast(), 256, s);
                    let _ = p.cuMemcpyHtoD(ptr, data.as_ptr().cast(), 256);
                    destroy(|| p.cuMemFree(ptr));
                    handles.push(("allocation", ptr));
                }
                let mut g = std::ptr::null_mut();
                if p.cuGraphCreate(&mut g, 0) == CUresult::CUDA_SUCCESS {
                    handles.push(("graph", g as usize as u64));
                    let params = CUDA_HOST_NODE_PARAMS { fn_: Some(host), userData: std::ptr::null_mut() };
                    let mut node = std::ptr::null_mut();
                    let mut o = std::ptr::null_mut();
                    if p.cuUserObjectCreate(&mut o, std::ptr::null_mut(), Some(destructor), 1, 1)
                        == CUresult::CUDA_SUCCESS
                    {
                        objects += 1;
                        ok_or_release(p.cuGraphRetainUserObject(g, o, 1, 1), || p.cuUserObjectRelease(o, 1));
                    }
                    if p.cuGraphAddHostNode(&mut node, g, std::ptr::null(), 0, &params) == CUresult::CUDA_SUCCESS {
                        let mut exec = std::ptr::null_mut();
                        if p.cuGraphInstantiateWithFlags(&mut exec, g, 0) == CUresult::CUDA_SUCCESS {
                            if p.cuGraphLaunch(exec, s) == CUresult::CUDA_SUCCESS {
                                launched += 1;
                            }
                            destroy(|| p.cuGraphExecDestroy(exec));
                        }
                    }
                    destroy(|| p.cuGraphDestroy(g));
                }
                let _ = p.cuStreamSynchronize(s);
                destroy(|| p.cuStreamDestroy(s));
            }
            destroy(|| p.cuCtxDestroy(ctx));
        }
    }
    faults::clear();
    (launched, objects, handles)
}

/// Releases the caller's reference if the graph did not take it.
fn ok_or_release(status: CUresult, release: impl FnOnce() -> CUresult) {
    if status != CUresult::CUDA_SUCCESS {
        destroy_once(release);
    }
}

fn destroy_once(f: impl FnOnce() -> CUresult) {
    assert_eq!(f(), CUresult::CUDA_SUCCESS);
}

#[test]
fn sixteen_threads_with_random_faults() {
    let workers: Vec<_> =
        (0..THREADS as u64).map(|i| std::thread::spawn(move || work(0x9e37_79b9_7f4a_7c15 ^ (i * 7919)))).collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let launched: usize = results.iter().map(|r| r.0).sum();
    let objects: usize = results.iter().map(|r| r.1).sum();
    assert!(launched > 0 && objects > 0);
    // Every stream was synchronised or destroyed (its work still runs): all host
    // functions and destructors run exactly once.
    assert!(eventually(|| HOST_CALLS.load(Ordering::SeqCst) == launched));
    assert!(eventually(|| DESTRUCTORS.load(Ordering::SeqCst) == objects));
    let l = ledger();
    for (kind, h) in results.iter().flat_map(|r| r.2.iter()) {
        if *kind == "allocation" {
            assert!(l.allocation(*h).is_none(), "allocation {h:#x} still live");
        } else {
            assert!(!l.handle_is_live(kind, *h), "{kind} {h:#x} still live");
        }
    }
    assert!(l.double_destroys.is_empty(), "{:?}", l.double_destroys);
    assert!(l.double_frees.is_empty() && l.use_after_free.is_empty());
    assert_eq!(HOST_CALLS.load(Ordering::SeqCst), launched);
}
