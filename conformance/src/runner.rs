//! Runs cases: each in a process of its own (this program, `case NAME`), so that a case
//! that crashes or hangs the driver is recorded as `CRASH` or `HANG` and the rest go on.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cudrv::sys::CUresult;
use cudrv::{Availability, Driver};

use crate::cases::{Case, Env, Out, Setup};
use crate::record::{version_text, Field, Line};

/// Runs one case in this process, on cudrv's process-wide driver, and returns its line.
pub fn run_case(case: &Case) -> Line {
    match cudrv::driver() {
        Ok(driver) => run_case_on(case, driver),
        Err(e) => {
            line(case, Out { status: "SETUP_FAILED".into(), fields: Vec::new() }.eq("at", "load").info("error", e))
        }
    }
}

/// Runs one case in this process on `driver` and returns its line. The case assumes the
/// driver is as a new process finds it (for a stand-in: a fresh or reset world) and that
/// the calling thread has no current context.
pub fn run_case_on(case: &Case, driver: &'static Driver) -> Line {
    let out = match prepare(driver, case.setup) {
        Ok(env) => gate(driver, case).unwrap_or_else(|| (case.run)(&env)),
        Err(out) => out,
    };
    line(case, out)
}

/// The line of `case`, which answered `out`.
fn line(case: &Case, out: Out) -> Line {
    let mut fields = out.fields;
    if let Some((since, _)) = case.since {
        fields.push(Field { key: "since".into(), value: version_text(since), compared: false });
    }
    Line { case: case.name.to_string(), status: out.status, fields }
}

/// The case's answer when cudrv gates one of the entries it needs (no driver call made).
fn gate(driver: &Driver, case: &Case) -> Option<Out> {
    let (_, calls) = case.since?;
    calls.iter().find_map(|call| match driver.entry(call.name()).map(|e| e.availability) {
        Some(Availability::NeedsDriver { version }) => {
            Some(Out { status: "GATED".into(), fields: Vec::new() }.eq("needs", version_text(version)))
        }
        Some(Availability::Resolved { .. }) => None,
        other => Some(Out { status: "GATED".into(), fields: Vec::new() }.info("state", format!("{other:?}"))),
    })
}

/// Makes the state `setup` asks for on `driver`.
fn prepare(driver: &'static Driver, setup: Setup) -> Result<Env, Out> {
    let mut env = Env { p: driver.p(), dev: 0, ctx: std::ptr::null_mut() };
    if setup == Setup::Bare {
        return Ok(env);
    }
    let check = |what: &str, st: CUresult| crate::cases::made(what, st, ());
    // SAFETY: valid out-pointers; device 0 exists when cuDeviceGet says so.
    unsafe {
        check("cuInit", env.p.cuInit(0))?;
        check("cuDeviceGet", env.p.cuDeviceGet(&mut env.dev, 0))?;
        if setup == Setup::Ctx {
            check("cuDevicePrimaryCtxRetain", env.p.cuDevicePrimaryCtxRetain(&mut env.ctx, env.dev))?;
            check("cuCtxSetCurrent", env.p.cuCtxSetCurrent(env.ctx))?;
        }
    }
    Ok(env)
}

/// How to run the suite.
#[derive(Clone, Debug)]
pub struct Options {
    /// Cases at once.
    pub jobs: usize,
    /// How long a case may run before it counts as hung.
    pub timeout: Duration,
}

/// Runs `cases`, each in a child process of this program, `jobs` at once; returns their
/// lines in the order of `cases`.
pub fn run_all(cases: &[Case], options: &Options) -> std::io::Result<Vec<Line>> {
    let exe = std::env::current_exe()?;
    let next = AtomicUsize::new(0);
    let lines: Mutex<Vec<Option<Line>>> = Mutex::new(vec![None; cases.len()]);
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                match run_child(&exe, case.name, options.timeout) {
                    Ok(line) => {
                        if let Some(slot) = lines.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
                            *slot = Some(line);
                        }
                    }
                    Err(e) => {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        break;
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(lines.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flatten().collect())
}

/// Runs one case in a child process and turns how it ended into its line.
fn run_child(exe: &std::path::Path, name: &str, timeout: Duration) -> std::io::Result<Line> {
    let mut child = Command::new(exe).args(["case", name]).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut text)?;
    }
    let printed = text.lines().filter_map(Line::parse).find(|l| l.case == name);
    let ended = |status: &str, key: &str, value: String| Line {
        case: name.to_string(),
        status: status.to_string(),
        fields: vec![Field { key: key.into(), value, compared: false }],
    };
    Ok(match (status, printed) {
        (None, _) => ended("HANG", "after_s", timeout.as_secs().to_string()),
        (Some(_), Some(line)) => line,
        (Some(status), None) => {
            use std::os::unix::process::ExitStatusExt;
            match status.signal() {
                Some(signal) => ended("CRASH", "signal", signal.to_string()),
                None => ended("NO_ANSWER", "exit", status.code().unwrap_or(-1).to_string()),
            }
        }
    })
}
