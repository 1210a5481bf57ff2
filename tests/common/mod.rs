//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;

use cudrv::table::VARIANTS;
use cudrv::{Availability, Driver, EntryKind};

/// Counts of variant states in a loaded driver.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub resolved: usize,
    pub gated: usize,
    pub not_in_driver: usize,
    pub not_requested: usize,
}

pub fn counts(d: &Driver) -> Counts {
    let mut c = Counts::default();
    for e in d.entries().filter(|e| matches!(e.kind, EntryKind::Variant { .. })) {
        match e.availability {
            Availability::Resolved { .. } => c.resolved += 1,
            Availability::NeedsDriver { .. } => c.gated += 1,
            Availability::NotInDriver(_) => c.not_in_driver += 1,
            Availability::NotRequested => c.not_requested += 1,
            other => panic!("variant without a known state: {other:?}"),
        }
    }
    c
}

/// What the header table says a driver of `version` has, with or without the per-thread
/// default stream variants.
pub fn expected(version: u32, per_thread: bool) -> Counts {
    let mut c = Counts::default();
    for v in VARIANTS.iter() {
        if v.per_thread && !per_thread {
            c.not_requested += 1;
        } else if v.version <= version {
            c.resolved += 1;
        } else {
            c.gated += 1;
        }
    }
    c
}

/// The stand-in's cdylib, copied to a fresh temporary folder as `libcuda.so.1`; the folder
/// is removed when the returned guard drops.
pub fn standin_libcuda(tag: &str) -> (tempfile::TempDir, PathBuf) {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        std::env::var_os("CUDRV_STANDIN_LIB").map(PathBuf::from),
        Some(deps.join("libcudrv_standin.so")),
        deps.parent().map(|p| p.join("libcudrv_standin.so")),
    ];
    let built =
        candidates.into_iter().flatten().find(|p| p.exists()).expect("the stand-in cdylib is built with the tests");
    let dir = tempfile::Builder::new().prefix(&format!("cudrv-test-{tag}-")).tempdir().unwrap();
    let target = dir.path().join("libcuda.so.1");
    std::fs::copy(&built, &target).unwrap();
    (dir, target)
}

/// One captured report: the thread it came from, its text, and the calling thread's
/// current context (as the stand-in driver saw it) when the reporter ran.
type Captured = (ThreadId, String, usize);

/// A reporter that keeps every report, with the thread it came from, so that parallel
/// tests each read only their own.
pub fn capture_reports() -> &'static Mutex<Vec<Captured>> {
    static REPORTS: OnceLock<&'static Mutex<Vec<Captured>>> = OnceLock::new();
    REPORTS.get_or_init(|| {
        let store: &'static Mutex<Vec<Captured>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        cudrv::set_reporter(move |r| {
            let mut c: cudrv::sys::CUcontext = std::ptr::null_mut();
            if let Some(d) = STANDIN.get() {
                // SAFETY: valid out-pointer.
                unsafe { d.p().cuCtxGetCurrent(&mut c) };
            }
            store.lock().unwrap().push((std::thread::current().id(), r.to_string(), c as usize))
        });
        store
    })
}

/// Reports made on this thread so far, with the current context at each, taken out of
/// the store.
pub fn my_reports_with_context() -> Vec<(String, usize)> {
    let me = std::thread::current().id();
    let mut all = capture_reports().lock().unwrap();
    let (mine, rest): (Vec<_>, Vec<_>) = all.drain(..).partition(|(t, _, _)| *t == me);
    *all = rest;
    mine.into_iter().map(|(_, m, c)| (m, c)).collect()
}

/// Reports made on this thread so far, taken out of the store.
pub fn my_reports() -> Vec<String> {
    my_reports_with_context().into_iter().map(|(m, _)| m).collect()
}

/// A process-lifetime stand-in driver of the newest version, with cuInit done.
static STANDIN: OnceLock<&'static cudrv::Driver> = OnceLock::new();

pub fn standin_driver() -> &'static cudrv::Driver {
    STANDIN.get_or_init(|| {
        let d = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().load(Default::default()).unwrap();
        let d: &'static cudrv::Driver = Box::leak(Box::new(d));
        // SAFETY: plain call.
        assert_eq!(unsafe { d.p().cuInit(0) }, cudrv::CUresult::CUDA_SUCCESS);
        d
    })
}

/// The calling thread's current context, asked of the driver itself (not of cudrv).
pub fn current_context(d: &cudrv::Driver) -> cudrv::sys::CUcontext {
    let mut c: cudrv::sys::CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { d.p().cuCtxGetCurrent(&mut c) }, cudrv::CUresult::CUDA_SUCCESS);
    c
}

/// Makes no context current on this thread, through the driver.
pub fn clear_current(d: &cudrv::Driver) {
    // SAFETY: null is always accepted.
    assert_eq!(unsafe { d.p().cuCtxSetCurrent(std::ptr::null_mut()) }, cudrv::CUresult::CUDA_SUCCESS);
}

/// A NUL-terminated fake image with these kernels, as the stand-in accepts.
pub fn fake_image(kernels: &[&str]) -> Vec<u8> {
    let mut s = String::from("cudrv-fake-image\n");
    for k in kernels {
        s.push_str(&format!("kernel {k}\n"));
    }
    let mut v = s.into_bytes();
    v.push(0);
    v
}

/// The same image as a C string, for the safe `load_ptx` constructors.
pub fn fake_ptx(kernels: &[&str]) -> std::ffi::CString {
    std::ffi::CString::from_vec_with_nul(fake_image(kernels)).unwrap()
}

/// Runs the ignored test `child` of this test binary in a fresh process with
/// `CUDRV_TEST_CHILD=scenario` and `envs`, and checks that it passed. Used for scenarios
/// that change process-wide state (the reporter, the driver, the environment, the
/// stand-in's ledger or shutdown).
pub fn run_child(scenario: &str, envs: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    for var in ["CUDRV_LIBCUDA", "CUDRV_MAX_DRIVER_VERSION", "CUDRV_PER_THREAD_DEFAULT_STREAM", "CUDRV_STANDIN_VERSION"]
    {
        cmd.env_remove(var);
    }
    cmd.env("CUDRV_TEST_CHILD", scenario).envs(envs.iter().copied());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scenario {scenario}:\n{stdout}\n{stderr}");
    assert!(stdout.contains("SCENARIO-PASSED"), "scenario {scenario} did not run:\n{stdout}");
    stdout + &stderr
}

/// [`run_child`] under a watchdog: a child still running after `limit` is killed and the
/// test fails, saying that the scenario blocked. With `stdin_pipe`, the child's standard
/// input is a pipe that nobody writes to (kept open until the child ends).
pub fn run_child_within(scenario: &str, envs: &[(&str, &str)], limit: std::time::Duration, stdin_pipe: bool) -> String {
    use std::io::Read;
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    for var in ["CUDRV_LIBCUDA", "CUDRV_MAX_DRIVER_VERSION", "CUDRV_PER_THREAD_DEFAULT_STREAM", "CUDRV_STANDIN_VERSION"]
    {
        cmd.env_remove(var);
    }
    cmd.env("CUDRV_TEST_CHILD", scenario).envs(envs.iter().copied());
    cmd.stdin(if stdin_pipe { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let _stdin = child.stdin.take();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("scenario {scenario} was still blocked after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "scenario {scenario}:\n{stdout}\n{stderr}");
    assert!(stdout.contains("SCENARIO-PASSED"), "scenario {scenario} did not run:\n{stdout}");
    stdout + &stderr
}

/// Makes a FIFO at `path` (with `mkfifo`).
pub fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
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

/// Replaces the reporter with one that keeps every report, from any thread (for child
/// processes, where nothing else reports).
pub fn collect_all_reports() -> std::sync::Arc<Mutex<Vec<String>>> {
    let all: std::sync::Arc<Mutex<Vec<String>>> = std::sync::Arc::default();
    let sink = all.clone();
    cudrv::set_reporter(move |r| sink.lock().unwrap().push(r.to_string()));
    all
}

/// A stand-in world of its own emulating `version` (its ledger and faults are the
/// caller's), loaded, initialised, and its device's primary context.
pub fn isolated_world(version: u32) -> (cudrv_standin::StandIn, cudrv::Context) {
    let s = cudrv_standin::StandIn::isolated(version).unwrap();
    let d: &'static cudrv::Driver = Box::leak(Box::new(s.load(Default::default()).unwrap()));
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, cudrv::sys::CUresult::CUDA_SUCCESS);
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    (s, ctx)
}

/// Blocks `stream` with a host function until the returned sender sends (or is dropped),
/// so that the work queued behind it is really pending.
pub fn gate(stream: &cudrv::Stream) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv();
        })
        .unwrap();
    tx
}

/// Opens a gate from another thread after a while (so that a call that waits for the gated
/// stream returns only then; nothing asserts the time).
pub fn open_later(tx: std::sync::mpsc::Sender<()>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let _ = tx.send(());
    })
}

/// xorshift: a reproducible random sequence from its seed, with no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (not 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
