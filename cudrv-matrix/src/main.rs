#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, clippy::unreachable)]
//! cudrv-matrix: runs a command once per CUDA driver version, under the stand-in driver
//! emulating each version or under the real driver capped at each, and prints the grid.

mod cell;
mod render;
mod scratch;
mod versions;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use clap::Parser;
use cudrv::{version, Driver, LoadOptions};

use crate::cell::{CellResult, Outcome, Spec};
use crate::render::{Run, Setup};
use crate::scratch::Scratch;

const AFTER_HELP: &str = "\
Each cell runs the command with its own environment:
  --stand-in (default)  CUDRV_LIBCUDA=<the stand-in library>, CUDRV_STANDIN_VERSION=X.Y,
                        CUDRV_MAX_DRIVER_VERSION removed
  --real                CUDRV_MAX_DRIVER_VERSION=X.Y (the driver found as cudrv finds it:
                        CUDRV_LIBCUDA, else libcuda.so.1)
  both                  CUDRV_GATED_LOG=<a file of the cell>, CUDRV_MATRIX_VERSION=X.Y
`--versions all` (the default) is every CUDA minor release from 11.3 up to the newest the
stand-in emulates, or up to the real driver's own version.

The stand-in library is --stand-in-lib, else CUDRV_STANDIN_LIB, else libcudrv_standin.so
next to this executable (or in its deps/ folder), as cargo builds it.

Exit codes:
  0  every cell passed (exited with status 0)
  1  some cell failed (a non-zero status or a signal)
  2  usage or setup error: bad arguments, no stand-in library, no real driver for --real,
     a version the driver cannot be, or a command that could not be started";

/// Command-line arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cudrv-matrix",
    version,
    about = "Runs a command once per CUDA driver version and prints the grid",
    after_help = AFTER_HELP
)]
struct Args {
    /// The driver versions: a comma-separated list such as 11.8,12.0,12.4, or `all`
    #[arg(long, value_name = "LIST|all", default_value = "all")]
    versions: String,

    /// Run each cell under the stand-in driver emulating the version (the default)
    #[arg(long, conflicts_with = "real")]
    stand_in: bool,

    /// Run each cell under the system's driver capped at the version
    #[arg(long)]
    real: bool,

    /// The stand-in library (libcudrv_standin.so)
    #[arg(long, value_name = "PATH", conflicts_with = "real")]
    stand_in_lib: Option<PathBuf>,

    /// How many cells run at once [default: the number of CPUs]
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,

    /// How many lines of a failed cell's output to show
    #[arg(long, value_name = "N", default_value_t = 20)]
    tail: usize,
    /// Kill a cell's command after SECS seconds; the cell fails as timed out.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<std::time::Duration>,

    /// Print one JSON document (schema_version 1) instead of the text grid
    #[arg(long)]
    json: bool,

    /// The command to run in each cell, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Exit code: every cell passed.
const EXIT_PASSED: u8 = 0;
/// Exit code: some cell failed.
const EXIT_FAILED: u8 = 1;
/// Exit code: usage or setup error.
const EXIT_SETUP: u8 = 2;

/// Environment variable naming the stand-in library.
const ENV_STANDIN_LIB: &str = "CUDRV_STANDIN_LIB";
/// The stand-in library's file name as cargo builds it.
const STANDIN_FILE: &str = "libcudrv_standin.so";

/// Writes `message` to stderr as one line prefixed with `cudrv-matrix: `.
fn say(message: &str) {
    // Nothing sensible is left to do if stderr cannot be written.
    let _ = writeln!(std::io::stderr().lock(), "cudrv-matrix: {message}");
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            say(&message);
            ExitCode::from(EXIT_SETUP)
        }
    }
}

/// A non-empty environment variable.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The stand-in library: the flag, the environment, or next to this executable. Returns a
/// one-line message if none exists.
fn find_stand_in(flag: Option<&PathBuf>) -> Result<PathBuf, String> {
    let given = match flag {
        Some(p) => Some((p.clone(), "--stand-in-lib")),
        None => env_path(ENV_STANDIN_LIB).map(|p| (p, ENV_STANDIN_LIB)),
    };
    if let Some((path, source)) = given {
        if !path.is_file() {
            return Err(format!("{source} {}: no such file", path.display()));
        }
        return std::fs::canonicalize(&path).map_err(|e| format!("{source} {}: {e}", path.display()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the stand-in library: {e}"))?;
    let mut candidates = Vec::new();
    if let Some(dir) = exe.parent() {
        candidates.push(dir.join(STANDIN_FILE));
        candidates.push(dir.join("deps").join(STANDIN_FILE));
        if dir.file_name().is_some_and(|n| n == "deps") {
            if let Some(up) = dir.parent() {
                candidates.push(up.join(STANDIN_FILE));
            }
        }
    }
    match candidates.iter().find(|p| p.is_file()) {
        Some(p) => std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display())),
        None => Err(format!(
            "no stand-in library: looked for {}; build it (cargo build -p cudrv-standin) and pass \
             --stand-in-lib PATH or set {ENV_STANDIN_LIB}",
            candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
        )),
    }
}

/// The real driver the cells will load (`CUDRV_LIBCUDA`, else the system's), uncapped:
/// its version and path. Returns a one-line message if there is none.
fn probe_real() -> Result<(u32, String), String> {
    let mut options = LoadOptions::default();
    if let Some(p) = env_path(cudrv::ENV_LIBCUDA) {
        options = options.with_path(p);
    }
    // SAFETY: the system's driver, or the one CUDRV_LIBCUDA names, as cudrv::driver() trusts it.
    let driver = unsafe { Driver::load(options) }.map_err(|e| format!("--real needs a CUDA driver: {e}"))?;
    let path = match driver.path() {
        Some(p) => p.display().to_string(),
        None => cudrv::SYSTEM_LIBCUDA.to_string(),
    };
    Ok((driver.driver_version_code(), path))
}

/// Runs the matrix and prints it. Returns the exit code, or a one-line message for a
/// usage or setup error.
fn run(args: &Args) -> Result<u8, String> {
    let request = versions::parse(&args.versions)?;
    let jobs = match args.jobs {
        Some(0) => return Err("--jobs must be at least 1".into()),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let (setup, list) = if args.real {
        let (v, path) = probe_real()?;
        (Setup::Real { version: v, path }, versions::for_real(request, v)?)
    } else {
        (Setup::StandIn { library: find_stand_in(args.stand_in_lib.as_ref())? }, versions::for_stand_in(request)?)
    };
    let scratch = Scratch::new().map_err(|e| e.to_string())?;
    let specs: Vec<Spec> = list
        .iter()
        .map(|&v| {
            let text = OsString::from(version::display(v));
            let (mut set, remove) = match &setup {
                Setup::StandIn { library } => (
                    vec![
                        (cudrv::ENV_LIBCUDA, library.clone().into_os_string()),
                        (cudrv_standin::ENV_VERSION, text.clone()),
                    ],
                    vec![cudrv::ENV_MAX_VERSION],
                ),
                Setup::Real { .. } => (vec![(cudrv::ENV_MAX_VERSION, text.clone())], vec![]),
            };
            let gated_log = scratch.path().join(format!("{}.gated", version::display(v)));
            set.push((cell::ENV_GATED_LOG, gated_log.clone().into_os_string()));
            set.push((cell::ENV_MATRIX_VERSION, text));
            Spec {
                version: v,
                set,
                remove,
                output: scratch.path().join(format!("{}.out", version::display(v))),
                gated_log,
                timeout: args.timeout,
            }
        })
        .collect();
    let cells = run_all(&specs, &args.command, jobs, args.tail);
    drop(scratch);
    // A command that starts nowhere is a setup error, not a grid of identical failures.
    if let Some(Outcome::NotStarted(message)) = cells.first().map(|c| &c.outcome) {
        if cells.iter().all(|c| matches!(c.outcome, Outcome::NotStarted(_))) {
            return Err(message.clone());
        }
    }

    let run = Run { setup: &setup, command: &args.command, cells: &cells };
    let printed = if args.json {
        let doc = render::json(&run);
        serde_json::to_string_pretty(&doc).map(|t| t + "\n").map_err(|e| e.to_string())?
    } else {
        render::text(&run)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(printed.as_bytes()).and_then(|()| stdout.flush()).map_err(|e| format!("stdout: {e}"))?;

    let not_started = cells.iter().find(|c| matches!(c.outcome, Outcome::NotStarted(_)));
    if let Some(Outcome::NotStarted(message)) = not_started.map(|c| &c.outcome) {
        say(message);
        return Ok(EXIT_SETUP);
    }
    Ok(if cells.iter().all(CellResult::passed) { EXIT_PASSED } else { EXIT_FAILED })
}

/// Runs every cell, `jobs` at a time; the results are in the order of `specs`.
fn run_all(specs: &[Spec], command: &[OsString], jobs: usize, tail: usize) -> Vec<CellResult> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, specs.len().max(1)) {
            let (tx, next) = (tx.clone(), &next);
            scope.spawn(move || {
                while let Some(spec) = specs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    // The receiver outlives the scope; a send cannot fail.
                    let _ = tx.send((spec.version, cell::run(command, spec, tail)));
                }
            });
        }
    });
    drop(tx);
    let mut results: Vec<(u32, CellResult)> = rx.into_iter().collect();
    results.sort_by_key(|(v, _)| *v);
    results.into_iter().map(|(_, r)| r).collect()
}

/// `--timeout SECS`: a positive number of seconds.
fn parse_timeout(text: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = text.parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    match std::time::Duration::try_from_secs_f64(secs) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("{text:?}: the timeout must be a positive number of seconds")),
    }
}
