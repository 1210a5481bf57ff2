//! Helpers shared by the stand-in's tests.
#![allow(dead_code)]

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use cudrv::sys::{CUcontext, CUfunction, CUresult, CUstream};
use cudrv::{Driver, LoadOptions};
use cudrv_standin::StandIn;

/// A 13.5 stand-in driver, initialised: the default world, which the tests of a binary
/// share (and `cudrv_standin::ledger()` reads).
pub fn driver() -> Driver {
    driver_with(LoadOptions::default())
}

/// A 13.5 stand-in driver in a world of its own, initialised, with that world: for tests
/// whose kernels fault. A fault fails the whole world, as it fails the whole process on
/// the H200 (docs/driver-facts.md, "Kernel faults"), so a test that faults must not share
/// the world the other tests of its binary use.
pub fn driver_alone() -> (StandIn, Driver) {
    let s = StandIn::isolated(13050).unwrap();
    let d = s.load(LoadOptions::default()).unwrap();
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    (s, d)
}

/// The same with the per-thread default stream variants bound (`_ptds`/`_ptsz`).
pub fn driver_ptds() -> Driver {
    driver_with(LoadOptions::default().with_per_thread_default_stream(true))
}

fn driver_with(options: LoadOptions) -> Driver {
    let d = StandIn::new(13050).unwrap().load(options).unwrap();
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    d
}

/// The stand-in's cdylib, as cargo built it with the tests (next to the test binary, or
/// one folder up).
pub fn cdylib() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libcudrv_standin.so"), deps.parent().unwrap().join("libcudrv_standin.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("the stand-in cdylib is built with the tests")
}

/// Asserts CUDA_SUCCESS.
#[track_caller]
pub fn ok(status: CUresult) {
    assert_eq!(status, CUresult::CUDA_SUCCESS);
}

/// Makes a context on device 0 (pushed: current on this thread).
pub fn new_context(d: &Driver) -> CUcontext {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; no creation parameters.
    ok(unsafe { d.p().cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0) });
    assert!(!ctx.is_null());
    ctx
}

/// The current context, or null.
pub fn current(d: &Driver) -> CUcontext {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuCtxGetCurrent(&mut ctx) });
    ctx
}

/// Polls `f` until it holds or 10 seconds pass.
pub fn eventually(f: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    f()
}

/// Something host functions report to: how many ran, on which threads, in which order,
/// and a gate they can wait at.
#[derive(Default)]
pub struct Probe {
    pub count: AtomicUsize,
    pub log: Mutex<Vec<(usize, ThreadId)>>,
    open: Mutex<bool>,
    opened: Condvar,
}

impl Probe {
    /// Lets waiting host functions go on.
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    /// The tags logged, in order.
    pub fn tags(&self) -> Vec<usize> {
        self.log.lock().unwrap().iter().map(|(t, _)| *t).collect()
    }

    /// The threads the host functions ran on.
    pub fn threads(&self) -> Vec<ThreadId> {
        self.log.lock().unwrap().iter().map(|(_, t)| *t).collect()
    }

    fn wait_open(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }
}

/// A host function argument: a probe and a tag.
pub struct Call<'a> {
    pub probe: &'a Probe,
    pub tag: usize,
}

impl Call<'_> {
    pub fn arg(&self) -> *mut c_void {
        self as *const Self as *mut c_void
    }
}

/// Logs its tag and counts.
pub unsafe extern "C" fn record(data: *mut c_void) {
    // SAFETY: `data` is a `Call` that outlives the stream's work (the tests synchronise).
    let call = unsafe { &*(data as *const Call) };
    call.probe.log.lock().unwrap().push((call.tag, std::thread::current().id()));
    call.probe.count.fetch_add(1, Ordering::SeqCst);
}

/// Waits at the probe's gate, then logs like `record`.
pub unsafe extern "C" fn gated(data: *mut c_void) {
    // SAFETY: as in `record`.
    let call = unsafe { &*(data as *const Call) };
    call.probe.wait_open();
    // SAFETY: as above.
    unsafe { record(data) };
}

/// Counts the calls on a bare `AtomicUsize`.
pub unsafe extern "C" fn count(data: *mut c_void) {
    // SAFETY: `data` is an `AtomicUsize` that outlives the call (static or waited for).
    unsafe { &*(data as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

/// Runs the ignored test `child` of this test binary in a fresh process with
/// `CUDRV_TEST_CHILD=scenario` and `envs`, and checks that it passed (an abort fails it).
/// For scenarios that change process-wide state or may kill the process.
pub fn run_child(scenario: &str, envs: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    for var in ["CUDRV_LIBCUDA", "CUDRV_STANDIN_VERSION", "CUDRV_STANDIN_DEVICES"] {
        cmd.env_remove(var);
    }
    cmd.env("CUDRV_TEST_CHILD", scenario).envs(envs.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scenario {scenario} ({:?}):\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("SCENARIO-PASSED"), "scenario {scenario} did not run:\n{stdout}");
    stdout + &stderr
}

/// The scenario a `child` test was started for, or `None` when it was run directly (for
/// example with `--include-ignored`): then it does nothing.
pub fn child_scenario() -> Option<String> {
    let s = std::env::var("CUDRV_TEST_CHILD").ok();
    if s.is_none() {
        println!("not started by run_child: nothing to do");
    }
    s
}

/// `cuLaunchKernel` of `f` on `stream` with `params` (one pointer per parameter, each to
/// its value), `smem` bytes of dynamic shared memory and no extra options.
pub fn launch_kernel(
    d: &Driver,
    f: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    smem: u32,
    stream: CUstream,
    params: &mut [*mut c_void],
) -> CUresult {
    let [gx, gy, gz] = grid;
    let [bx, by, bz] = block;
    // SAFETY: the callers pass one pointer per parameter of `f`, each to a value of the
    // parameter's size, alive across the call; `stream` is a live stream or NULL.
    unsafe { d.p().cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, stream, params.as_mut_ptr(), std::ptr::null_mut()) }
}
