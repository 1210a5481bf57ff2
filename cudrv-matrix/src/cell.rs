//! One cell of the matrix: the command run once under one driver version.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use crate::groups::{Groups, StartError};

/// Environment variable naming the file cudrv appends the gated entries a program asked for
/// to, one `<entry name>\t<availability>` line per entry and process.
pub const ENV_GATED_LOG: &str = "CUDRV_GATED_LOG";
/// Environment variable telling the command which cell it runs in (`12.4`).
pub const ENV_MATRIX_VERSION: &str = "CUDRV_MATRIX_VERSION";

/// How much of the end of a cell's output is read to find its last lines.
const TAIL_BYTES: u64 = 256 * 1024;

/// What to run for one version.
#[derive(Debug)]
pub struct Spec {
    /// The driver version (driver form, `12040`).
    pub version: u32,
    /// Variables set for the command.
    pub set: Vec<(&'static str, OsString)>,
    /// Variables removed from the command's environment.
    pub remove: Vec<&'static str>,
    /// Where the command's stdout and stderr go (created).
    pub output: PathBuf,
    /// The gated-entry log (`CUDRV_GATED_LOG`); created by the program, if at all.
    pub gated_log: PathBuf,
    /// After this long the command is killed and the cell fails (`--timeout`).
    pub timeout: Option<std::time::Duration>,
}

/// How a cell's command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signal(i32),
    /// It could not be started (the message says why).
    NotStarted(String),
    /// It started but its end could not be observed.
    Lost(String),
    /// It ran longer than the cell's timeout and was killed.
    TimedOut,
}

/// A gated entry the program asked for: an entry point the driver (as capped) lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gated {
    /// The entry's name, e.g. `cuMemcpyBatchAsync`.
    pub name: String,
    /// Its availability text, e.g. `needs driver 12.8` (empty if the line had none).
    pub availability: String,
}

/// The result of one cell.
#[derive(Clone, Debug)]
pub struct CellResult {
    /// The driver version (driver form).
    pub version: u32,
    /// How the command ended.
    pub outcome: Outcome,
    /// Wall time from start to end, in seconds.
    pub seconds: f64,
    /// The gated entries asked for, sorted by name, each once.
    pub gated: Vec<Gated>,
    /// On failure, the last lines of combined stdout and stderr; `None` on success.
    pub tail: Option<Vec<String>>,
}

impl CellResult {
    /// Whether the command exited with status 0.
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Exited(0)
    }
}

/// Runs `command` (program and arguments; empty is reported as not started) for `spec`
/// as the leader of a process group of its own, registered in `groups`, keeping up to
/// `tail_lines` lines of output on failure (see [`pick_tail`]). Whatever is left of the
/// group when the command ends, or at the timeout, is killed. Never panics: every problem
/// is an [`Outcome`].
pub fn run(command: &[OsString], spec: &Spec, tail_lines: usize, groups: &Groups) -> CellResult {
    let started = Instant::now();
    let outcome = execute(command, spec, groups);
    let seconds = started.elapsed().as_secs_f64();
    let passed = outcome == Outcome::Exited(0);
    let tail = match &outcome {
        _ if passed => None,
        Outcome::NotStarted(message) => Some(vec![message.clone()]),
        Outcome::Lost(message) => {
            let mut lines = last_lines(&spec.output, tail_lines);
            lines.push(message.clone());
            Some(lines)
        }
        Outcome::Exited(_) | Outcome::Signal(_) | Outcome::TimedOut => Some(last_lines(&spec.output, tail_lines)),
    };
    CellResult { version: spec.version, outcome, seconds, gated: read_gated(&spec.gated_log), tail }
}

fn execute(command: &[OsString], spec: &Spec, groups: &Groups) -> Outcome {
    let Some((program, args)) = command.split_first() else {
        return Outcome::NotStarted("no command given".into());
    };
    let (out, err) = match File::create(&spec.output).and_then(|f| f.try_clone().map(|g| (f, g))) {
        Ok(pair) => pair,
        Err(e) => return Outcome::NotStarted(format!("cannot create {}: {e}", spec.output.display())),
    };
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
    for name in &spec.remove {
        cmd.env_remove(name);
    }
    for (name, value) in &spec.set {
        cmd.env(name, value);
    }
    // The command is dropped by `start`, and with it the parent's copies of the output file.
    let (mut child, pgid) = match groups.start(cmd) {
        Ok(started) => started,
        Err(StartError::Stopped) => return Outcome::NotStarted("the runner was stopped".into()),
        Err(StartError::Spawn(e)) => {
            return Outcome::NotStarted(format!("cannot start {}: {e}", Path::new(program).display()))
        }
    };
    let timed_out = AtomicBool::new(false);
    let ended = std::thread::scope(|scope| {
        let (done, watch) = mpsc::channel::<()>();
        if let Some(limit) = spec.timeout {
            let timed_out = &timed_out;
            scope.spawn(move || {
                // Disconnected (the command ended first) or timed out.
                if watch.recv_timeout(limit) == Err(RecvTimeoutError::Timeout) {
                    timed_out.store(true, Ordering::SeqCst);
                    groups.kill(pgid);
                }
            });
        }
        // Waits for the leader to end without reaping it: while it is a zombie its pid, the
        // group's id, cannot be reused, so no kill below can reach another process group.
        let ended = wait_unreaped(pgid);
        drop(done);
        ended
    });
    // Kills what is left of the group (the leader's pid still reserved), then reaps.
    groups.finish(pgid);
    let waited = match ended {
        Ok(()) => child.wait(),
        Err(e) => Err(e),
    };
    // A command that ended by itself just as the limit passed keeps its own status.
    if timed_out.load(Ordering::SeqCst) && waited.as_ref().is_ok_and(|s| signal_of(s) == Some(nix::libc::SIGKILL)) {
        return Outcome::TimedOut;
    }
    match waited {
        Ok(status) => match (status.code(), signal_of(&status)) {
            (Some(code), _) => Outcome::Exited(code),
            (None, Some(sig)) => Outcome::Signal(sig),
            (None, None) => Outcome::Lost(format!("the command ended without a status ({status})")),
        },
        Err(e) => Outcome::Lost(format!("cannot wait for the command: {e}")),
    }
}

/// Waits until the process `pid` has ended, leaving it unreaped (`waitid` with `WNOWAIT`).
#[cfg(target_os = "linux")]
fn wait_unreaped(pid: i32) -> std::io::Result<()> {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    loop {
        match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(_) => return Ok(()),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Elsewhere the wait that reaps is the only one: the group is killed after it.
#[cfg(not(target_os = "linux"))]
fn wait_unreaped(_pid: i32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Up to `n` lines of the end of the file at `path` (lossy UTF-8, trailing blank lines
/// left out), picked by [`pick_tail`], or one line saying why it could not be read.
pub fn last_lines(path: &Path, n: usize) -> Vec<String> {
    let read = || -> std::io::Result<String> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let start = len.saturating_sub(TAIL_BYTES);
        file.seek(SeekFrom::Start(start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        // A read that starts mid-file starts mid-line: drop the partial line.
        Ok(match (start > 0, text.split_once('\n')) {
            (true, Some((_, rest))) => rest.to_string(),
            _ => text,
        })
    };
    match read() {
        Ok(text) => {
            // Trailing blank lines (a test harness ends with one) say nothing.
            let mut lines: Vec<&str> = text.lines().collect();
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            pick_tail(&lines, n)
        }
        Err(e) => vec![format!("(the output could not be read: {e})")],
    }
}

/// Whether a line of output says what went wrong: a Rust panic (`thread 'x' panicked at`),
/// a compiler or cargo error (`error: `, `error[E0425]: `), or a `main` that returned an
/// error (`Error: `).
fn is_key_line(line: &str) -> bool {
    let t = line.trim_start();
    line.contains("panicked at") || t.starts_with("error:") || t.starts_with("error[") || t.starts_with("Error: ")
}

/// At most `n` of `lines`, for a failed cell: the last `n` when they hold the first key
/// line (a panic, else an error: [`is_key_line`]) or there is none; otherwise the lines
/// around that key line (a quarter of `n` before it), a line saying how many were left
/// out, and the last quarter of `n`. So a panic's message is shown even when a backtrace
/// (`RUST_BACKTRACE=1`) or a test harness's summary follows it.
pub fn pick_tail(lines: &[&str], n: usize) -> Vec<String> {
    let owned = |part: &[&str]| part.iter().map(|l| (*l).to_string()).collect::<Vec<_>>();
    let last_start = lines.len().saturating_sub(n);
    let key =
        lines.iter().position(|l| l.contains("panicked at")).or_else(|| lines.iter().position(|l| is_key_line(l)));
    let key = match key {
        Some(k) if k < last_start && n >= 4 => k,
        _ => return owned(lines.get(last_start..).unwrap_or_default()),
    };
    let end_count = n / 4;
    let window = n - end_count - 1;
    let start = key.saturating_sub(window / 4);
    let stop = (start + window).min(lines.len() - end_count);
    let mut out = owned(lines.get(start..stop).unwrap_or_default());
    let end_start = lines.len() - end_count;
    if stop < end_start {
        out.push(format!("[... {} lines left out ...]", end_start - stop));
    }
    out.extend(owned(lines.get(stop.max(end_start)..).unwrap_or_default()));
    out
}

/// The entries in a gated log, each once (the first availability text seen), sorted by
/// name. A missing or unreadable file means none. A line without a tab is a bare name.
pub fn read_gated(path: &Path) -> Vec<Gated> {
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    parse_gated(&String::from_utf8_lossy(&bytes))
}

/// [`read_gated`] over the file's text.
pub fn parse_gated(text: &str) -> Vec<Gated> {
    let mut out: Vec<Gated> = Vec::new();
    for line in text.lines() {
        let (name, availability) = line.split_once('\t').unwrap_or((line, ""));
        let name = name.trim();
        if name.is_empty() || out.iter().any(|g| g.name == name) {
            continue;
        }
        out.push(Gated { name: name.to_string(), availability: availability.trim().to_string() });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn gated_lines_are_deduplicated_and_sorted() {
        let text = "cuMemcpyBatchAsync\tneeds driver 12.8\ncuLibraryLoadData\tneeds driver 12.0\n\n\
                    cuMemcpyBatchAsync\tneeds driver 12.8\nbare\n";
        let g = parse_gated(text);
        let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["bare", "cuLibraryLoadData", "cuMemcpyBatchAsync"]);
        assert_eq!(g[2].availability, "needs driver 12.8");
        assert_eq!(g[0].availability, "");
    }

    fn numbered(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn the_tail_is_centred_on_the_panic() {
        // A panic followed by a long backtrace and a harness summary.
        let mut text = numbered(10);
        text.push("thread 'main' panicked at src/lib.rs:3:5:".into());
        text.push("the message".into());
        text.push("stack backtrace:".into());
        text.extend((0..60).map(|i| format!("  {i}: frame")));
        text.push("error: test failed, to rerun pass `--lib`".into());
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let tail = pick_tail(&lines, 20);
        assert_eq!(tail.len(), 20, "{tail:#?}");
        assert_eq!(tail[0], "line 7");
        assert_eq!(tail[3], "thread 'main' panicked at src/lib.rs:3:5:");
        assert_eq!(tail[4], "the message");
        assert_eq!(tail[13], "  7: frame");
        assert_eq!(tail[14], "[... 48 lines left out ...]");
        assert_eq!(tail[19], "error: test failed, to rerun pass `--lib`");
        // A panic within the last lines: the plain end.
        assert_eq!(pick_tail(&lines, 70), lines[lines.len() - 70..]);
        // Without a panic, the first error line.
        let mut text = numbered(30);
        text[5] = "error[E0425]: cannot find value `x`".into();
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        let tail = pick_tail(&lines, 8);
        let want = ["line 4", "error[E0425]: cannot find value `x`", "line 6", "line 7", "line 8"];
        assert_eq!(tail[..5], want);
        assert_eq!(tail[5..], ["[... 19 lines left out ...]", "line 28", "line 29"]);
        // Nothing to centre on: the end.
        let text = numbered(30);
        let lines: Vec<&str> = text.iter().map(String::as_str).collect();
        assert_eq!(pick_tail(&lines, 3), ["line 27", "line 28", "line 29"]);
        assert_eq!(pick_tail(&lines, 0), Vec::<String>::new());
    }

    #[test]
    fn last_lines_of_a_long_output() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        assert_eq!(last_lines(&path, 3), ["line 99997", "line 99998", "line 99999"]);
        assert!(last_lines(&dir.path().join("missing"), 3)[0].contains("could not be read"));
    }
}
