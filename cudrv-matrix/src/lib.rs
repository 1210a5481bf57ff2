#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, clippy::unreachable)]
//! cudrv-matrix: runs a command once per CUDA driver version, under the stand-in driver
//! emulating each version or under the real driver capped at each, and prints the grid.
//!
//! The command line is this library's [`run_cli`], which the binary calls; [`check_cli`]
//! checks a command line as a run does before it starts anything, and runs nothing (the
//! fuzz target in `fuzz/` feeds both random arguments in-process).

mod cell;
mod groups;
mod merge;
mod render;
mod standin_lib;
mod versions;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use clap::{Parser, Subcommand};
use cudrv::{version, Driver, LoadOptions};

use crate::cell::{CellResult, Outcome, Spec};
use crate::groups::Groups;
use crate::render::{Run, Setup, Source};

const AFTER_HELP: &str = "\
Each cell runs the command with its own environment, as the leader of a process group of
its own (whatever it starts is killed with it, at --timeout and when the cell ends):
  --stand-in (default)  CUDRV_LIBCUDA=<the stand-in library>, CUDRV_STANDIN_VERSION=X.Y,
                        LD_LIBRARY_PATH=<a folder with it as libcuda.so.1>:<the runner's>
                        (so -lcuda programs load it too), CUDRV_MAX_DRIVER_VERSION removed
  --real                CUDRV_MAX_DRIVER_VERSION=X.Y (the driver found as cudrv finds it:
                        CUDRV_LIBCUDA, else libcuda.so.1)
  both                  CUDRV_GATED_LOG=<a file of the cell>, CUDRV_MATRIX_VERSION=X.Y

--versions takes a comma-separated list of released CUDA versions (11.8,12.4), major
versions (12: every 12.x release), ranges (12.0-13.0: every release between, both
included) or `all` (the default): every release from 11.3 up to the newest the stand-in
emulates, or up to the real driver's own version. There was no CUDA 12.7.

A line on stderr reports each cell as it ends; the grid (stdout) is in version order.
--json FILE and --junit FILE write the results as JSON and as JUnit XML as well; a bare
--json (write it just before `--`, or last after merge's files) prints the JSON instead
of the grid. `merge` reads --json files of several runs (one per machine or driver) into
one grid. --version (-V) alone prints this tool's version; with anything else it is
refused (a typo for --versions).

The stand-in library is --stand-in-lib, else CUDRV_STANDIN_LIB, else libcudrv_standin.so
next to this executable (or in its deps/ folder), else in $CARGO_TARGET_DIR (or the
target/ folder of the current folder or a parent) under debug/ or release/ (or their
deps/). `cargo install cudrv-matrix` installs the runner only.

Examples:
  cudrv-matrix -- cargo test
  cudrv-matrix --versions 11.8,12,13.0 --timeout 600 --junit matrix.xml -- cargo test
  cudrv-matrix --real --json driver-580.json -- ./target/release/my-tool
  cudrv-matrix merge runner-a.json runner-b.json --junit matrix.xml

Exit codes:
  0    every cell passed (exited with status 0)
  1    some cell failed (a non-zero status, a signal, or the timeout)
  2    usage or setup error: bad arguments, no stand-in library, no real driver for --real,
       a version that is not a release or that the driver cannot be, a command that could
       not be started; for merge, a file that is not a --json document, or a cell two
       files both have
  5    a result could not be written (stdout closed or full, --json or --junit FILE)
  129, 130, 143  stopped by SIGHUP, SIGINT, SIGTERM: every cell was killed";

/// Command-line arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cudrv-matrix",
    about = "Runs a command once per CUDA driver version and prints the grid",
    after_help = AFTER_HELP,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    sub: Option<Sub>,

    #[command(flatten)]
    run: Args,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// Merges the --json files of several runs (several machines, one driver each) into
    /// one grid; a cell (a version under one driver) in two files is refused
    Merge(MergeArgs),
}

/// Where the results go, for a run and for merge.
#[derive(clap::Args, Debug)]
struct Outputs {
    /// Write the JSON document (schema_version 1) to FILE as well; with no FILE (or `-`),
    /// print it instead of the text grid
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,

    /// Write a JUnit XML report to FILE: one test case per cell, failures with their tail
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// The --json files
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    #[command(flatten)]
    out: Outputs,
}

#[derive(clap::Args, Debug)]
struct Args {
    /// The driver versions: releases (11.8,12.4), majors (12), ranges (12.0-13.0), or all
    #[arg(long, value_name = "LIST", default_value = "all")]
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

    /// Run each cell under the stand-in's sanitizer with these checks (races, init, shared,
    /// schedule=SEED, all): sets CUDRV_STANDIN_SANITIZE; a cell that reports fails
    #[arg(long, value_name = "LIST", conflicts_with = "real", value_parser = parse_sanitize)]
    sanitize: Option<String>,

    /// How many cells run at once [default: the number of CPUs]
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,

    /// How many lines of a failed cell's output to show (around its first panic or error
    /// line, and its last lines)
    #[arg(long, value_name = "N", default_value_t = 20)]
    tail: usize,

    /// Kill a cell's process group after SECS seconds; the cell fails as timed out
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<std::time::Duration>,

    #[command(flatten)]
    out: Outputs,

    /// The command to run in each cell, after `--`
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// A `--sanitize` list, checked as the stand-in reads it.
fn parse_sanitize(list: &str) -> Result<String, String> {
    cudrv_standin::SanitizeChecks::parse(list).map(|_| list.to_string())
}

/// Exit code: every cell passed.
const EXIT_PASSED: u8 = 0;
/// Exit code: some cell failed.
const EXIT_FAILED: u8 = 1;
/// Exit code: usage or setup error.
const EXIT_SETUP: u8 = 2;
/// Exit code: a result could not be written.
const EXIT_WRITE: u8 = 5;

/// The running cells' process groups, which the signal handler kills.
static GROUPS: Groups = Groups::new();

/// Writes `message` to stderr as one line prefixed with `cudrv-matrix: `.
fn say(message: &str) {
    // Nothing sensible is left to do if stderr cannot be written.
    let _ = writeln!(std::io::stderr().lock(), "cudrv-matrix: {message}");
}

/// A failure: its exit code and its one-line message.
struct Failure(u8, String);

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure(EXIT_SETUP, message)
    }
}

/// Runs cudrv-matrix with `args` (the program name first, as `std::env::args_os` gives
/// them): parses them, runs the cells or merges the files, writes the results; returns the
/// exit code (see `--help`). `stdout_closed`: standard output was closed when the process
/// started (nothing is run: exit code 5).
pub fn run_cli<I, T>(args: I, stdout_closed: bool) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    if stdout_closed {
        say("stdout is closed: the grid could not be written (redirect it to a file or /dev/null instead)");
        return EXIT_WRITE;
    }
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match parse(&args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match &cli.sub {
        Some(Sub::Merge(args)) => merge(args),
        None => run(&cli.run),
    };
    match result {
        Ok(code) => code,
        Err(Failure(code, message)) => {
            say(&message);
            code
        }
    }
}

/// Checks `args` as [`run_cli`] does before it starts a cell: the usage, `--version`, the
/// version list (against the stand-in's versions, or with `--real` against a driver of
/// `real_version`, which is not looked for), `--jobs`. Returns the versions of the cells
/// a run would have (none for `merge`, whose files are not read), or the exit code
/// `run_cli` would give (usage text and messages are written as it writes them). Runs no
/// command, reads and writes no file.
pub fn check_cli<I, T>(args: I, real_version: u32) -> Result<Vec<u32>, u8>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = parse(&args)?;
    if let Some(Sub::Merge(_)) = &cli.sub {
        return Ok(Vec::new());
    }
    let planned = versions::parse(&cli.run.versions).and_then(|request| match cli.run.jobs {
        Some(0) => Err("--jobs must be at least 1".to_string()),
        _ if cli.run.real => versions::for_real(&request, real_version),
        _ => versions::for_stand_in(&request),
    });
    planned.map_err(|message| {
        say(&message);
        EXIT_SETUP
    })
}

/// The parsed command line, or the exit code of `--version` or of a usage error (whose
/// message, or help text, clap has written).
fn parse(args: &[OsString]) -> Result<Cli, u8> {
    if let Some(code) = version_flag(args) {
        return Err(code);
    }
    Cli::try_parse_from(args).map_err(|e| clap_exit(&e))
}

/// What clap's parse error `e` asks for: a usage error goes to stderr (exit 2); help
/// (`--help`, `help merge`) goes to stdout (exit 0) and, like the grid, is checked: if it
/// cannot be written (stdout full, a closed pipe) the runner says so and exits 5 rather
/// than 0 with nothing shown. (clap's own `exit` ignores that error.)
fn clap_exit(e: &clap::Error) -> u8 {
    let code = u8::try_from(e.exit_code()).unwrap_or(EXIT_SETUP);
    if e.use_stderr() {
        // Nothing sensible is left to do if stderr cannot be written.
        let _ = e.print();
        return code;
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(e.render().to_string().as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => code,
        Err(write) => {
            say(&format!("the help could not be written to stdout: {write}"));
            EXIT_WRITE
        }
    }
}

/// `--version`/`-V`: alone, prints the version (exit 0). With anything else it is most
/// likely a typo for `--versions` (`--version 12.4 -- cargo test`), which must not pass a
/// CI job silently: refused with a hint (exit 2). `None`: no such flag before `--`.
fn version_flag(args: &[OsString]) -> Option<u8> {
    let args = args.get(1..).unwrap_or_default();
    let before: Vec<&OsString> = args.iter().take_while(|a| *a != "--").collect();
    let flag = before.iter().find(|a| {
        let a = a.to_string_lossy();
        a == "--version" || a == "-V" || a.starts_with("--version=")
    })?;
    if args.len() == 1 && (*flag == "--version" || *flag == "-V") {
        let mut out = std::io::stdout().lock();
        return Some(match writeln!(out, "cudrv-matrix {}", env!("CARGO_PKG_VERSION")).and_then(|()| out.flush()) {
            Ok(()) => EXIT_PASSED,
            Err(e) => {
                say(&format!("the version could not be written to stdout: {e}"));
                EXIT_WRITE
            }
        });
    }
    say(&format!(
        "{} prints this tool's version and takes nothing else; to choose driver versions use --versions (e.g. --versions 12.4 -- cargo test)",
        flag.to_string_lossy()
    ));
    Some(EXIT_SETUP)
}

/// The loader's search path variable.
const ENV_LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";

/// Makes `<scratch>/lib/libcuda.so.1`, a link to the stand-in `library`, and returns the
/// cells' `LD_LIBRARY_PATH`: that folder, then the runner's own path.
fn stand_in_loader_path(scratch: &Path, library: &Path) -> Result<OsString, String> {
    let dir = scratch.join("lib");
    let absolute = std::fs::canonicalize(library).map_err(|e| format!("{}: {e}", library.display()))?;
    std::fs::create_dir(&dir)
        .and_then(|()| std::os::unix::fs::symlink(&absolute, dir.join(cudrv::SYSTEM_LIBCUDA)))
        .map_err(|e| format!("cannot make {}: {e}", dir.join(cudrv::SYSTEM_LIBCUDA).display()))?;
    let mut paths = vec![dir];
    if let Some(old) = std::env::var_os(ENV_LD_LIBRARY_PATH) {
        paths.extend(std::env::split_paths(&old));
    }
    std::env::join_paths(paths).map_err(|e| format!("{ENV_LD_LIBRARY_PATH}: {e}"))
}

/// The real driver the cells will load (`CUDRV_LIBCUDA`, else the system's), uncapped:
/// its version and path. Returns a one-line message if there is none.
fn probe_real() -> Result<(u32, String), String> {
    let mut options = LoadOptions::default();
    if let Some(p) = std::env::var_os(cudrv::ENV_LIBCUDA).filter(|v| !v.is_empty()) {
        options = options.with_path(PathBuf::from(p));
    }
    // SAFETY: the system's driver, or the one CUDRV_LIBCUDA names, as cudrv::driver() trusts it.
    let driver = unsafe { Driver::load(options) }.map_err(|e| format!("--real needs a CUDA driver: {e}"))?;
    let path = match driver.path() {
        Some(p) => p.display().to_string(),
        None => cudrv::SYSTEM_LIBCUDA.to_string(),
    };
    Ok((driver.driver_version_code(), path))
}

/// Runs the matrix and prints it. Returns the exit code, or the code and a one-line
/// message for a usage, setup or write error.
fn run(args: &Args) -> Result<u8, Failure> {
    let request = versions::parse(&args.versions)?;
    let jobs = match args.jobs {
        Some(0) => return Err(Failure(EXIT_SETUP, "--jobs must be at least 1".into())),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let (setup, list) = if args.real {
        let (v, path) = probe_real()?;
        (Setup::Real { version: v, path }, versions::for_real(&request, v)?)
    } else {
        (Setup::StandIn { library: standin_lib::find(args.stand_in_lib.as_ref())? }, versions::for_stand_in(&request)?)
    };
    // Kept to the end: a signal while the results are written still stops the runner's cells
    // (there are none left) and is reported below only if it came before.
    let _signals = groups::handle_signals(&GROUPS).map_err(|e| format!("cannot handle signals: {e}"))?;
    let scratch = tempfile::Builder::new()
        .prefix("cudrv-matrix.")
        .tempdir()
        .map_err(|e| format!("cannot create a folder in {}: {e}", std::env::temp_dir().display()))?;
    // The stand-in as `libcuda.so.1` in a folder of its own, first on the loader's path: a
    // program linked with -lcuda, or another binding that opens libcuda.so.1 by name, loads
    // the stand-in too (the cdylib exports the whole driver API).
    let loader_path = match &setup {
        Setup::StandIn { library } => Some(stand_in_loader_path(scratch.path(), library)?),
        Setup::Real { .. } => None,
    };
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
            if let Some(path) = &loader_path {
                set.push((ENV_LD_LIBRARY_PATH, path.clone()));
            }
            if let Some(list) = &args.sanitize {
                set.push((cudrv_standin::ENV_SANITIZE, list.into()));
            }
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
    // Removes the scratch folder (the cells' groups are all gone: each is killed at its end).
    let removed = scratch.close();
    if let Some(signal) = GROUPS.stopped() {
        let name = render::signal_name(signal).unwrap_or("a signal");
        say(&format!("stopped by {name}: every cell was killed; no results written"));
        return Ok(u8::try_from(128 + signal).unwrap_or(EXIT_FAILED));
    }
    if let Err(e) = removed {
        say(&format!("the scratch folder could not be removed: {e}"));
    }
    // A command that starts nowhere is a setup error, not a grid of identical failures.
    if let Some(Outcome::NotStarted(message)) = cells.first().map(|c| &c.outcome) {
        if cells.iter().all(|c| matches!(c.outcome, Outcome::NotStarted(_))) {
            return Err(Failure(EXIT_SETUP, message.clone()));
        }
    }
    let run = Run {
        sources: vec![Source { setup, file: None }],
        command: args.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
        cells: cells.iter().map(|c| (0, c.clone())).collect(),
    };
    let code = if cells.iter().all(CellResult::passed) { EXIT_PASSED } else { EXIT_FAILED };
    let written = write_results(&run, &args.out);
    // A signal while the results were written (the handler is still installed) still
    // ends the run with 128 + the signal, as one before it would.
    if let Some(signal) = GROUPS.stopped() {
        let name = render::signal_name(signal).unwrap_or("a signal");
        say(&format!("stopped by {name} while the results were written"));
        return Ok(u8::try_from(128 + signal).unwrap_or(EXIT_FAILED));
    }
    written?;
    let not_started = cells.iter().find(|c| matches!(c.outcome, Outcome::NotStarted(_)));
    if let Some(Outcome::NotStarted(message)) = not_started.map(|c| &c.outcome) {
        say(message);
        return Ok(EXIT_SETUP);
    }
    Ok(code)
}

/// `cudrv-matrix merge`: the merged grid; exit 0 if every cell passed, else 1.
fn merge(args: &MergeArgs) -> Result<u8, Failure> {
    let run = merge::merge(&args.files)?;
    write_results(&run, &args.out)?;
    Ok(if run.cells.iter().all(|(_, c)| c.passed()) { EXIT_PASSED } else { EXIT_FAILED })
}

/// Writes the JUnit and JSON files asked for, then the grid (text, or JSON with a bare
/// `--json`) to stdout. Returns [`EXIT_WRITE`] and a message if one could not be written.
fn write_results(run: &Run, out: &Outputs) -> Result<(), Failure> {
    let failed = |what: &Path, e: &dyn std::fmt::Display| Failure(EXIT_WRITE, format!("{}: {e}", what.display()));
    if let Some(path) = &out.junit {
        let xml = render::junit(run).map_err(|e| failed(path, &e))?;
        std::fs::write(path, xml).map_err(|e| failed(path, &e))?;
    }
    let json_to_stdout = out.json.as_deref().is_some_and(|p| p == Path::new("-"));
    let doc = || {
        serde_json::to_string_pretty(&render::json(run))
            .map(|t| t + "\n")
            .map_err(|e| Failure(EXIT_WRITE, e.to_string()))
    };
    if let Some(path) = out.json.as_deref().filter(|_| !json_to_stdout) {
        std::fs::write(path, doc()?).map_err(|e| failed(path, &e))?;
    }
    let printed = if json_to_stdout { doc()? } else { render::text(run) };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(printed.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure(EXIT_WRITE, format!("stdout: {e}")))
}

/// Runs every cell, `jobs` at a time, with a line on stderr as each ends; the results are
/// in the order of `specs`. After a signal no new cell starts.
fn run_all(specs: &[Spec], command: &[OsString], jobs: usize, tail: usize) -> Vec<CellResult> {
    let next = AtomicUsize::new(0);
    // Held while a cell's count is taken and its line written, so the lines come out in
    // the order of their counts.
    let done = Mutex::new(0usize);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, specs.len().max(1)) {
            let (tx, next, done) = (tx.clone(), &next, &done);
            scope.spawn(move || {
                while let Some(spec) = specs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if GROUPS.stopped().is_some() {
                        break;
                    }
                    let result = cell::run(command, spec, tail, &GROUPS);
                    let mut count = done.lock().unwrap_or_else(|e| e.into_inner());
                    *count += 1;
                    let n = *count;
                    if GROUPS.stopped().is_none() {
                        let status = if result.passed() {
                            "pass".to_string()
                        } else {
                            format!("FAIL [{}]", render::how(&result.outcome))
                        };
                        say(&format!(
                            "[{n}/{}] {} {status} in {:.2}s",
                            specs.len(),
                            version::display(spec.version),
                            result.seconds
                        ));
                    }
                    drop(count);
                    // The receiver outlives the scope; a send cannot fail.
                    let _ = tx.send((spec.version, result));
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
