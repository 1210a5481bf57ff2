#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! cudrv-info: shows the CUDA driver cudrv finds, its devices and the state of its
//! entry-point table. With no NVIDIA driver on the machine it says so on stderr and shows
//! the bundled stand-in driver instead (exit code 3).
//!
//! The command line is this library's [`run_cli`], which the binary calls and the fuzz
//! target (`fuzz/`) feeds random arguments in-process.

mod json;
mod render;
mod report;

use std::ffi::{c_int, OsString};
use std::io::Write;

use clap::Parser;
use cudrv::{Driver, LoadError, LoadOptions};

use crate::report::{Devices, Origin, Request, StateFilter};

/// Examples, the exit codes, the JSON schema's version and the environment, as `--help`
/// shows them after the options.
const AFTER_HELP: &str = "\
Examples:
  cudrv-info                         the driver, its devices and the entry table's counts
  cudrv-info --device 0 --all        every attribute of device 0, and every entry
  cudrv-info --entry cuMemAlloc      one entry: its state, the variant it binds, the
                                     driver it needs (exit 4 if it is not resolved)
  cudrv-info --max-version 12.4 --state gated
                                     the entries a 12.4 driver would not provide
  cudrv-info --driver stand-in --json
                                     the bundled stand-in's report, as JSON
  cudrv-info || test $? -eq 3        in a `set -e` script: a machine without a CUDA
                                     driver (exit 3, the stand-in shown) is no error

Exit codes:
  0  a driver was reported: one found on this machine, or the stand-in asked for with
     --driver stand-in; with --entry: the entry is resolved
  1  a driver was found but could not be used (older than 11.3, or cuDriverGetVersion failed)
  2  bad input: a --driver or CUDRV_LIBCUDA path that does not exist, is not a regular file
     or is not a CUDA driver, an unparsable version, an invalid CUDRV_* setting, a --device
     the driver does not have (or any --device when the devices cannot be listed), an
     --entry the header does not name, or a usage error
  3  no CUDA driver was found (no --driver, no CUDRV_LIBCUDA): one line on stderr says
     where it looked, and the report of the bundled stand-in driver is shown instead
     (also with --entry: the answer is then the stand-in's)
  4  --entry: the entry is not resolved (gated by the driver version or the cap, not in
     this driver, or a per-thread variant not requested)
  5  the report could not be written (stdout closed, a closed pipe, a full disk)

JSON (--json): one object; \"schema_version\" (now 1) changes when a key is removed or
retyped. \"driver\", \"devices\" and \"summary\" describe this machine's driver (or the
library named): with no NVIDIA driver, \"driver\" is null and \"devices\" is empty, and
the bundled stand-in's report is under \"stand_in\" (null otherwise). The schema is in
cudrv-info/README.md.

Environment:
  CUDRV_LIBCUDA                    the driver library to load (--driver overrides it)
  CUDRV_MAX_DRIVER_VERSION         a version cap (--max-version overrides it)
  CUDRV_PER_THREAD_DEFAULT_STREAM  1 to request the per-thread default stream variants
  CUDRV_STANDIN_VERSION            the version the stand-in emulates (default 13.5)
  CUDRV_STANDIN_DEVICES            the number of stand-in devices (0 to 8, default 1)";

/// Command-line arguments.
#[derive(Parser, Debug)]
#[command(
    name = "cudrv-info",
    version,
    about = "Shows the CUDA driver cudrv finds, its devices and its entry-point table",
    after_help = AFTER_HELP
)]
struct Args {
    /// The driver library to load, or `stand-in` for the bundled stand-in driver
    /// [default: CUDRV_LIBCUDA, else libcuda.so.1 through the system loader]
    #[arg(long, value_name = "PATH|stand-in")]
    driver: Option<OsString>,

    /// Behave as a driver of at most this version, e.g. 12.4
    #[arg(long, value_name = "X.Y")]
    max_version: Option<String>,

    /// Request the per-thread default stream variants (_ptds/_ptsz) and bind names to them
    #[arg(long)]
    per_thread_default_stream: bool,

    /// Show every device attribute and list every entry (variants and unversioned names)
    /// with its state
    #[arg(long)]
    all: bool,

    /// Show only device N (an ordinal, from 0)
    #[arg(long, value_name = "N")]
    device: Option<u32>,

    /// Answer for one entry (a variant such as cuMemAlloc_v3020, or a name such as
    /// cuMemAlloc): its state, the variant it binds, the driver version it needs
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,

    /// List the entries in these states only (comma-separated; implies the listing)
    #[arg(long, value_name = "STATE", value_enum, value_delimiter = ',')]
    state: Vec<StateFilter>,

    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
}

/// Exit code: a driver was reported (with `--entry`: the entry is resolved).
const EXIT_OK: u8 = 0;
/// Exit code: a driver was found but could not be used.
const EXIT_LOAD_FAILED: u8 = 1;
/// Exit code: bad input.
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code: no driver found; the stand-in was reported instead.
const EXIT_STAND_IN_FALLBACK: u8 = 3;
/// Exit code: `--entry` names an entry that is not resolved.
const EXIT_NOT_RESOLVED: u8 = 4;
/// Exit code: the report could not be written.
const EXIT_WRITE_FAILED: u8 = 5;

/// Why no report is shown: an exit code and a one-line message.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// The failure of loading a driver, with the exit code its kind calls for.
    fn load(e: &LoadError) -> Failure {
        let code = match e {
            LoadError::NotFound { .. }
            | LoadError::NotADriver { .. }
            | LoadError::InvalidSetting { .. }
            | LoadError::NotARegularFile { .. } => EXIT_BAD_INPUT,
            _ => EXIT_LOAD_FAILED,
        };
        Failure { code, message: e.to_string() }
    }

    /// [`Failure::load`] for a path given by `origin` (`--driver`, `CUDRV_LIBCUDA`), which
    /// a path that is not a regular file names.
    fn load_from(origin: &str, e: &LoadError) -> Failure {
        let mut failure = Failure::load(e);
        if matches!(e, LoadError::NotARegularFile { .. }) {
            failure.message = format!("{origin} {}", failure.message);
        }
        failure
    }

    fn bad_input(message: String) -> Failure {
        Failure { code: EXIT_BAD_INPUT, message }
    }
}

/// Writes `message` to stderr as one line prefixed with `cudrv-info: `.
fn say(message: &str) {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    // Nothing sensible is left to do if stderr cannot be written.
    let _ = writeln!(std::io::stderr().lock(), "cudrv-info: {line}");
}

/// A set, non-empty environment variable.
fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The load options: the environment's, then the flags. A flag replaces its variable,
/// which is then not read at all (so an invalid value of it is no error).
fn options(args: &Args) -> Result<LoadOptions, Failure> {
    let mut opts = match &args.max_version {
        None => LoadOptions::from_env().map_err(|e| Failure::load(&e))?,
        Some(_) => {
            let mut o = LoadOptions::default();
            if let Some(path) = var(cudrv::ENV_LIBCUDA) {
                o = o.with_path(path);
            }
            if let Some(v) = var(cudrv::ENV_PER_THREAD) {
                // The same values LoadOptions::from_env accepts.
                o.per_thread_default_stream = match v.to_string_lossy().as_ref() {
                    "1" | "true" | "yes" | "on" => true,
                    "0" | "false" | "no" | "off" => false,
                    other => {
                        return Err(Failure::bad_input(format!(
                            "{}={other:?} is not valid: expected 1 or 0",
                            cudrv::ENV_PER_THREAD
                        )))
                    }
                };
            }
            o
        }
    };
    if let Some(v) = &args.max_version {
        opts = opts.with_max_version(v).map_err(|e| {
            Failure::bad_input(match e {
                LoadError::InvalidSetting { value, expected, .. } => {
                    format!("--max-version {value:?} is not valid: expected {expected}")
                }
                other => other.to_string(),
            })
        })?;
    }
    if args.per_thread_default_stream {
        opts = opts.with_per_thread_default_stream(true);
    }
    Ok(opts)
}

/// Refuses an unparsable or out-of-range stand-in setting (bad input, not ignored).
fn check_stand_in_settings() -> Result<(), Failure> {
    if let Some(text) = var(cudrv_standin::ENV_VERSION) {
        let text = text.to_string_lossy().into_owned();
        let valid = cudrv::version::parse(&text)
            .is_some_and(|v| (cudrv_standin::MIN_VERSION..=cudrv_standin::DEFAULT_VERSION).contains(&v));
        if !valid {
            return Err(Failure::bad_input(format!(
                "{}={text:?} is not valid: expected a version up to {}",
                cudrv_standin::ENV_VERSION,
                cudrv::version::display(cudrv_standin::DEFAULT_VERSION)
            )));
        }
    }
    const ENV_DEVICES: &str = "CUDRV_STANDIN_DEVICES";
    if let Some(text) = var(ENV_DEVICES) {
        let text = text.to_string_lossy().into_owned();
        if !text.parse::<c_int>().is_ok_and(|n| (0..=8).contains(&n)) {
            return Err(Failure::bad_input(format!(
                "{ENV_DEVICES}={text:?} is not valid: expected a number of devices from 0 to 8"
            )));
        }
    }
    Ok(())
}

/// The bundled stand-in driver (`CUDRV_STANDIN_VERSION`, default 13.5), loaded in-process.
fn stand_in(opts: LoadOptions) -> Result<Driver, Failure> {
    check_stand_in_settings()?;
    cudrv_standin::StandIn::from_env().load(opts).map_err(|e| Failure::load(&e))
}

/// Loads the driver the arguments ask for; returns it, where it came from, and the exit
/// code a successful report gets.
fn load(args: &Args) -> Result<(Driver, Origin, u8), Failure> {
    let opts = options(args)?;
    match &args.driver {
        Some(d) if d == "stand-in" => Ok((stand_in(opts)?, Origin::StandInRequested, EXIT_OK)),
        Some(d) if d.is_empty() => Err(Failure::bad_input("--driver needs a path, or stand-in".to_string())),
        Some(path) => {
            // SAFETY: the user named this file as the driver to inspect (cudrv refuses one
            // that is not a regular file before opening it).
            match unsafe { Driver::load(opts.with_path(path)) } {
                Ok(d) => Ok((d, Origin::Library, EXIT_OK)),
                Err(e) => Err(Failure::load_from("--driver", &e)),
            }
        }
        None => {
            // A path from CUDRV_LIBCUDA was asked for explicitly: no fallback for it.
            let explicit = opts.path.is_some();
            // SAFETY: the system's driver, or the one CUDRV_LIBCUDA names: trusted as cudrv::driver() trusts it.
            match unsafe { Driver::load(opts.clone()) } {
                Ok(d) => Ok((d, Origin::Library, EXIT_OK)),
                Err(LoadError::NotFound { looked, reason }) if !explicit => {
                    // Check the stand-in's settings before saying anything about it.
                    check_stand_in_settings()?;
                    // The error's advice (use the stand-in) is what happens next: not repeated.
                    say(&format!(
                        "no CUDA driver found: looked for {looked}: {reason}; showing the bundled stand-in driver instead"
                    ));
                    Ok((stand_in(opts)?, Origin::StandInFallback, EXIT_STAND_IN_FALLBACK))
                }
                Err(e) => Err(Failure::load_from(cudrv::ENV_LIBCUDA, &e)),
            }
        }
    }
}

/// Loads, gathers and renders; returns the output and its exit code.
fn run(args: &Args) -> Result<(String, u8), Failure> {
    let (driver, origin, code) = load(args)?;
    report(args, &driver, origin, code)
}

/// Gathers and renders the report of `driver`; returns the output and its exit code
/// (`code`, or [`EXIT_NOT_RESOLVED`] for an `--entry` that is not resolved).
fn report(args: &Args, driver: &Driver, origin: Origin, mut code: u8) -> Result<(String, u8), Failure> {
    let request = Request {
        all: args.all,
        states: args.state.clone(),
        device: args.device.map(|n| c_int::try_from(n).unwrap_or(c_int::MAX)),
        entry: args.entry.clone(),
    };
    let r = report::gather(driver, origin, &request);
    if let Some(n) = args.device {
        check_device(n, &r.devices)?;
    }
    match (&args.entry, &r.entry) {
        (Some(name), Some(None)) => {
            return Err(Failure::bad_input(format!(
                "--entry {name:?}: the pinned header (CUDA {}) has no variant or name of that name",
                cudrv::version::display(cudrv::table::HEADER_VERSION)
            )));
        }
        (_, Some(Some(e))) if code == EXIT_OK && !e.info.availability.is_resolved() => code = EXIT_NOT_RESOLVED,
        _ => {}
    }
    let out = if args.json { json::json(&r) } else { render::text(&r) };
    Ok((out, code))
}

/// `--device n` against the devices read: bad input if the driver has no device `n`, and
/// also if the devices could not be listed at all (`cuInit` or `cuDeviceGetCount`
/// failed, e.g. `CUDA_ERROR_NO_DEVICE` from a driver on a machine without a GPU), where
/// showing the report without the device would look like an answer.
fn check_device(n: u32, devices: &Result<Devices, String>) -> Result<(), Failure> {
    match devices {
        Err(e) => Err(Failure::bad_input(format!("--device {n}: the devices cannot be listed: {e}"))),
        Ok(d) if d.list.is_empty() => {
            let have = match d.count {
                0 => "no devices".to_string(),
                1 => "1 device (ordinal 0)".to_string(),
                c => format!("{c} devices (ordinals 0 to {})", c - 1),
            };
            Err(Failure::bad_input(format!("--device {n}: the driver has {have}")))
        }
        Ok(_) => Ok(()),
    }
}

/// Writes `out` to stdout; exits with `code`, or with [`EXIT_WRITE_FAILED`] if it could
/// not be written: stdout closed when the process started, or a write error. Rust ignores
/// SIGPIPE, so a closed pipe is a write error here, as a full disk is: the output did not
/// arrive, and the exit code says so.
fn write_out(out: &str, code: u8, stdout_closed: bool) -> u8 {
    if stdout_closed {
        say("cannot write to stdout: it was closed when cudrv-info started");
        return EXIT_WRITE_FAILED;
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => code,
        Err(e) => {
            say(&format!("cannot write to stdout: {e}"));
            EXIT_WRITE_FAILED
        }
    }
}

/// Runs cudrv-info with `args` (the program name first, as `std::env::args_os` gives
/// them): parses them, loads the driver, writes the report to stdout and messages to
/// stderr; returns the exit code (see `--help`). `stdout_closed`: standard output was
/// closed when the process started (the report is then not written: exit code 5).
pub fn run_cli<I, T>(args: I, stdout_closed: bool) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let code = u8::try_from(e.exit_code()).unwrap_or(EXIT_BAD_INPUT);
            if e.use_stderr() {
                // A usage error: to stderr, code 2.
                let _ = e.print();
                return code;
            }
            // Help and version: to stdout, code 0, and checked like the report.
            return write_out(&e.render().to_string(), code, stdout_closed);
        }
    };
    match run(&args) {
        Ok((out, code)) => write_out(&out, code, stdout_closed),
        Err(f) => {
            say(&f.message);
            f.code
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use cudrv::sys::CUresult;
    use cudrv_standin::{faults, StandIn, Times};

    fn args(a: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("cudrv-info").chain(a.iter().copied())).unwrap()
    }

    #[test]
    fn a_device_is_refused_when_the_devices_cannot_be_listed() {
        // As a driver installed on a machine without a GPU answers.
        let driver = StandIn::new(13050).unwrap().load(LoadOptions::default()).unwrap();
        faults::inject_on_this_thread(cudrv::call::cuInit, CUresult::CUDA_ERROR_NO_DEVICE, Times::Once);
        let f = report(&args(&["--device", "0"]), &driver, Origin::StandInRequested, EXIT_OK).unwrap_err();
        assert_eq!(f.code, EXIT_BAD_INPUT);
        assert!(
            f.message.starts_with("--device 0: the devices cannot be listed: cuInit failed: CUDA_ERROR_NO_DEVICE"),
            "{}",
            f.message
        );

        // Without --device the failure is part of the report, which is shown.
        faults::inject_on_this_thread(cudrv::call::cuInit, CUresult::CUDA_ERROR_NO_DEVICE, Times::Once);
        let (out, code) = report(&args(&[]), &driver, Origin::StandInRequested, EXIT_OK).unwrap();
        assert_eq!(code, EXIT_OK);
        assert!(out.contains("\ndevices: unavailable: cuInit failed: CUDA_ERROR_NO_DEVICE"), "{out}");

        // With the devices listed, --device 0 is shown.
        let (out, code) = report(&args(&["--device", "0"]), &driver, Origin::StandInRequested, EXIT_OK).unwrap();
        assert_eq!(code, EXIT_OK);
        assert!(out.contains("\n  0: cudrv stand-in device"), "{out}");
    }
}
