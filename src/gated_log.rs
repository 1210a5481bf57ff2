//! The record of calls to entries the driver does not resolve, for compatibility matrices
//! (`cudrv-matrix`): with `CUDRV_GATED_LOG=<file>` set, the first call in the process to
//! each unresolved entry appends one line `<entry>\t<why>` (`cuMemcpyBatchAsync\tneeds
//! driver 12.8`) to that file. Several processes may append to one file. Nothing is
//! recorded without the variable, and the calls' results are the same either way.
//!
//! The log must be a regular file (created if missing, in a folder that exists). A FIFO,
//! a device or a missing folder is never written (the file is opened non-blocking and
//! written only if it is a regular file, so a call never waits on it), and is reported
//! once when the process-wide driver is first obtained (`driver()`, `init()`,
//! `set_driver()`; a `p` call reports nothing).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::table::{Entry, NAME_COUNT, VARIANT_COUNT};

/// The variable naming the log file.
pub const ENV_GATED_LOG: &str = "CUDRV_GATED_LOG";

static SEEN: [AtomicBool; VARIANT_COUNT + NAME_COUNT] = [const { AtomicBool::new(false) }; VARIANT_COUNT + NAME_COUNT];
/// The log's path and, if it cannot be used, why.
static SETTING: OnceLock<Option<(PathBuf, Option<String>)>> = OnceLock::new();
/// Whether the setting's problem has been reported (once per process).
static REPORTED: AtomicBool = AtomicBool::new(false);

fn setting() -> Option<&'static (PathBuf, Option<String>)> {
    SETTING
        .get_or_init(|| {
            let path = PathBuf::from(std::env::var_os(ENV_GATED_LOG).filter(|v| !v.is_empty())?);
            let problem = problem_with(&path);
            Some((path, problem))
        })
        .as_ref()
}

/// Why `path` cannot be the log: not a regular file, or in a folder that does not exist.
fn problem_with(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(meta) => crate::loader::file_kind(&meta).map(|what| format!("it is {what}: the log must be a regular file")),
        Err(_) => {
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            (!folder.is_dir()).then(|| format!("its folder {} does not exist", folder.display()))
        }
    }
}

/// Reports, once per process, a `CUDRV_GATED_LOG` that cannot be used. Called when a
/// driver has been loaded, with no cudrv lock held (the reporter is user code).
pub(crate) fn check_setting() {
    let Some((path, Some(problem))) = setting() else {
        return;
    };
    if !REPORTED.swap(true, Ordering::Relaxed) {
        let message = format!("{}: nothing will be recorded: {problem}", path.display());
        crate::report::report(crate::report::Report::setting(ENV_GATED_LOG, message));
    }
}

/// Opens the log for appending without ever waiting (a FIFO without a reader would block
/// `open`), and only if it is a regular file.
fn open_log(path: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        /// `O_NONBLOCK` on Linux (every architecture cudrv is built for but alpha, MIPS,
        /// PA-RISC and SPARC, which cudrv does not support).
        const O_NONBLOCK: i32 = 0o4000;
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok().filter(std::fs::Metadata::is_file).map(|_| file)
}

/// Records a call to `entry`, which its driver does not resolve (once per entry): `line`
/// gives the line to write (the entry's name and state).
pub(crate) fn record(entry: Entry, line: impl FnOnce() -> Option<String>) {
    let Some((path, None)) = setting() else {
        return;
    };
    let index = match entry {
        Entry::Variant(i) => i,
        Entry::Name(i) => VARIANT_COUNT + i,
    };
    let first = SEEN.get(index).is_some_and(|seen| !seen.swap(true, Ordering::Relaxed));
    let Some(line) = line().filter(|_| first) else {
        return;
    };
    // One write of one short line to a file opened for appending: lines from several
    // processes do not interleave. A failure to record is not the program's failure.
    if let Some(mut file) = open_log(path) {
        let _ = file.write_all(line.as_bytes());
    }
}
