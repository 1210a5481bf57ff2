#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! cudrv-info: shows the CUDA driver cudrv finds, its devices and the state of its
//! entry-point table. With no NVIDIA driver on the machine it says so on stderr and shows
//! the bundled stand-in driver instead (exit code 3).

mod json;
mod render;
mod report;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use cudrv::{Driver, LoadError, LoadOptions};

use crate::report::Origin;

/// The exit codes, as `--help` documents them.
const AFTER_HELP: &str = "\
Exit codes:
  0  a driver was reported: one found on this machine, or the stand-in asked for with
     --driver stand-in
  1  a driver was found but could not be used (older than 11.3, or cuDriverGetVersion failed)
  2  bad input: a --driver or CUDRV_LIBCUDA path that does not exist or is not a CUDA
     driver, an unparsable version, an invalid CUDRV_* setting, or a usage error
  3  no CUDA driver was found (no --driver, no CUDRV_LIBCUDA): one line on stderr says
     where it looked, and the report of the bundled stand-in driver is shown instead

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

    /// List every entry (variants and unversioned names) with its state
    #[arg(long)]
    all: bool,

    /// Print the report as one JSON object
    #[arg(long)]
    json: bool,
}

/// Exit code: a driver was reported.
const EXIT_OK: u8 = 0;
/// Exit code: a driver was found but could not be used.
const EXIT_LOAD_FAILED: u8 = 1;
/// Exit code: bad input.
const EXIT_BAD_INPUT: u8 = 2;
/// Exit code: no driver found; the stand-in was reported instead.
const EXIT_STAND_IN_FALLBACK: u8 = 3;

/// Why no report is shown: an exit code and a one-line message.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// The failure of loading a driver, with the exit code its kind calls for.
    fn load(e: &LoadError) -> Failure {
        let code = match e {
            LoadError::NotFound { .. } | LoadError::NotADriver { .. } | LoadError::InvalidSetting { .. } => {
                EXIT_BAD_INPUT
            }
            LoadError::VersionQueryFailed { .. } | LoadError::TooOld { .. } => EXIT_LOAD_FAILED,
        };
        Failure { code, message: e.to_string() }
    }
}

/// Writes `message` to stderr as one line prefixed with `cudrv-info: `.
fn say(message: &str) {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    // Nothing sensible is left to do if stderr cannot be written.
    let _ = writeln!(std::io::stderr().lock(), "cudrv-info: {line}");
}

/// The load options: the environment's, then the flags.
fn options(args: &Args) -> Result<LoadOptions, Failure> {
    let mut opts = LoadOptions::from_env().map_err(|e| Failure::load(&e))?;
    if let Some(v) = &args.max_version {
        opts = opts.with_max_version(v).map_err(|e| Failure {
            code: EXIT_BAD_INPUT,
            message: match e {
                LoadError::InvalidSetting { value, expected, .. } => {
                    format!("--max-version {value:?} is not valid: expected {expected}")
                }
                other => other.to_string(),
            },
        })?;
    }
    if args.per_thread_default_stream {
        opts = opts.with_per_thread_default_stream(true);
    }
    Ok(opts)
}

/// The bundled stand-in driver (`CUDRV_STANDIN_VERSION`, default 13.5), loaded in-process.
/// An unparsable or out-of-range `CUDRV_STANDIN_VERSION` is bad input, not ignored.
fn stand_in(opts: LoadOptions) -> Result<Driver, Failure> {
    if let Some(text) = std::env::var_os(cudrv_standin::ENV_VERSION).filter(|v| !v.is_empty()) {
        let text = text.to_string_lossy().into_owned();
        let valid = cudrv::version::parse(&text)
            .is_some_and(|v| (cudrv_standin::MIN_VERSION..=cudrv_standin::DEFAULT_VERSION).contains(&v));
        if !valid {
            let message = format!(
                "{}={text:?} is not valid: expected a version up to {}",
                cudrv_standin::ENV_VERSION,
                cudrv::version::display(cudrv_standin::DEFAULT_VERSION)
            );
            return Err(Failure { code: EXIT_BAD_INPUT, message });
        }
    }
    cudrv_standin::StandIn::from_env().load(opts).map_err(|e| Failure::load(&e))
}

/// Loads the driver the arguments ask for; returns it, where it came from, and the exit
/// code a successful report gets.
fn load(args: &Args) -> Result<(Driver, Origin, u8), Failure> {
    let opts = options(args)?;
    match &args.driver {
        Some(d) if d == "stand-in" => Ok((stand_in(opts)?, Origin::StandInRequested, EXIT_OK)),
        Some(d) if d.is_empty() => {
            Err(Failure { code: EXIT_BAD_INPUT, message: "--driver needs a path, or stand-in".to_string() })
        }
        Some(path) => match Driver::load(opts.with_path(path)) {
            Ok(d) => Ok((d, Origin::Library, EXIT_OK)),
            Err(e) => Err(Failure::load(&e)),
        },
        None => {
            // A path from CUDRV_LIBCUDA was asked for explicitly: no fallback for it.
            let explicit = opts.path.is_some();
            match Driver::load(opts.clone()) {
                Ok(d) => Ok((d, Origin::Library, EXIT_OK)),
                Err(e @ LoadError::NotFound { .. }) if !explicit => {
                    say(&format!("{e}; showing the bundled stand-in driver instead"));
                    Ok((stand_in(opts)?, Origin::StandInFallback, EXIT_STAND_IN_FALLBACK))
                }
                Err(e) => Err(Failure::load(&e)),
            }
        }
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            // Help and version go to stdout with code 0, usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_BAD_INPUT));
        }
    };
    match load(&args) {
        Ok((driver, origin, code)) => {
            let r = report::gather(&driver, origin, args.all);
            let out = if args.json { render::json(&r) } else { render::text(&r) };
            // A closed stdout (`cudrv-info --all | head`) is not an error worth a message.
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush());
            ExitCode::from(code)
        }
        Err(f) => {
            say(&f.message);
            ExitCode::from(f.code)
        }
    }
}
