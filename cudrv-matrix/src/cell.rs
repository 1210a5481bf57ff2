//! One cell of the matrix: the command run once under one driver version.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

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

/// Runs `command` (program and arguments; empty is reported as not started) for `spec`,
/// keeping the last `tail_lines` lines of output on failure. Never panics: every problem
/// is an [`Outcome`].
pub fn run(command: &[OsString], spec: &Spec, tail_lines: usize) -> CellResult {
    let started = Instant::now();
    let outcome = execute(command, spec);
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

fn execute(command: &[OsString], spec: &Spec) -> Outcome {
    let Some((program, args)) = command.split_first() else {
        return Outcome::NotStarted("no command given".into());
    };
    let describe = |e: std::io::Error| format!("cannot start {}: {e}", Path::new(program).display());
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
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::NotStarted(describe(e)),
    };
    // `cmd` holds the parent's copies of the output file; the child has its own.
    drop(cmd);
    let waited = match spec.timeout {
        None => child.wait(),
        Some(limit) => match wait_at_most(&mut child, limit) {
            Ok(Some(status)) => Ok(status),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::TimedOut;
            }
            Err(e) => Err(e),
        },
    };
    match waited {
        Ok(status) => match (status.code(), signal_of(&status)) {
            (Some(code), _) => Outcome::Exited(code),
            (None, Some(sig)) => Outcome::Signal(sig),
            (None, None) => Outcome::Lost(format!("the command ended without a status ({status})")),
        },
        Err(e) => Outcome::Lost(format!("cannot wait for the command: {e}")),
    }
}

/// Waits for `child` for at most `limit`; `None` if it is still running then.
fn wait_at_most(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
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

/// The last `n` lines of the file at `path` (lossy UTF-8), or one line saying why it could
/// not be read.
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
            let lines: Vec<&str> = text.lines().collect();
            let skip = lines.len().saturating_sub(n);
            lines.into_iter().skip(skip).map(str::to_string).collect()
        }
        Err(e) => vec![format!("(the output could not be read: {e})")],
    }
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
