//! `cudrv-conformance`: runs the conformance suite against the driver cudrv loads
//! (`CUDRV_LIBCUDA`, else the system's `libcuda.so.1`) and compares runs.
//!
//! ```text
//! cudrv-conformance run [--jobs N] [--timeout S] [--only PREFIX] [--pending]   one line per case
//! cudrv-conformance compare ACTUAL [--expected F] [--differences F] [--emulated 12.4]
//! cudrv-conformance case NAME                                      one case, in-process
//! cudrv-conformance list
//! ```
//! Exit codes: 0 success (compare: agreement apart from the listed differences), 1 a
//! comparison failed, 2 usage or I/O error.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use cudrv_conformance::{cases, record, runner, DIFFERENCES, EXPECTED};

#[derive(Parser)]
#[command(version, about = "Replays a fixed sequence of driver calls and compares the answers with the real driver's")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Runs the suite, each case in a child process, and prints one line per case.
    Run {
        /// Cases run at once.
        #[arg(long, default_value_t = 4)]
        jobs: usize,
        /// Seconds after which a case counts as hung (`HANG`).
        #[arg(long, default_value_t = 20)]
        timeout: u64,
        /// Only the cases whose names start with this.
        #[arg(long)]
        only: Option<String>,
        /// The pending cases (written, their real answers not yet recorded) instead of
        /// the suite.
        #[arg(long)]
        pending: bool,
    },
    /// Runs one case in this process and prints its line.
    Case { name: String },
    /// Lists the cases.
    List,
    /// Compares a run's output with the reference (the committed H200 answers by default).
    Compare {
        /// The run's output (`run` writes it to stdout).
        actual: std::path::PathBuf,
        /// The reference output.
        #[arg(long)]
        expected: Option<std::path::PathBuf>,
        /// The list of deliberate differences.
        #[arg(long)]
        differences: Option<std::path::PathBuf>,
        /// The driver version the run emulated, when it is older than the reference's
        /// (cases needing newer entries are then expected to be gated).
        #[arg(long)]
        emulated: Option<String>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Cmd::Run { jobs, timeout, only, pending } => run(jobs, timeout, only, pending),
        Cmd::Case { name } => match cases::every().iter().find(|c| c.name == name) {
            Some(case) => {
                println!("{}", runner::run_case(case));
                ExitCode::SUCCESS
            }
            None => usage(&format!("no case named {name}")),
        },
        Cmd::List => {
            cases::all().iter().for_each(|c| println!("{}", c.name));
            ExitCode::SUCCESS
        }
        Cmd::Compare { actual, expected, differences, emulated } => compare(actual, expected, differences, emulated),
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("cudrv-conformance: {message}");
    ExitCode::from(2)
}

fn run(jobs: usize, timeout: u64, only: Option<String>, pending: bool) -> ExitCode {
    let all = if pending { cases::pending() } else { cases::all() };
    let chosen: Vec<_> =
        all.into_iter().filter(|c| only.as_ref().is_none_or(|p| c.name.starts_with(p.as_str()))).collect();
    let driver = match cudrv::driver() {
        Ok(d) => d,
        Err(e) => return usage(&format!("no driver: {e}")),
    };
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    unsafe { driver.p().cuDriverGetVersion(&mut version) };
    println!("# cudrv-conformance {}: {} cases", env!("CARGO_PKG_VERSION"), chosen.len());
    println!("# driver-version: {version}");
    println!("# driver: {}", driver.source());
    let options = runner::Options { jobs, timeout: Duration::from_secs(timeout) };
    match runner::run_all(&chosen, &options) {
        Ok(lines) => {
            lines.iter().for_each(|l| println!("{l}"));
            ExitCode::SUCCESS
        }
        Err(e) => usage(&format!("could not run a case: {e}")),
    }
}

fn compare(
    actual: std::path::PathBuf,
    expected: Option<std::path::PathBuf>,
    differences: Option<std::path::PathBuf>,
    emulated: Option<String>,
) -> ExitCode {
    let read = |p: &std::path::Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let texts = (|| -> Result<_, String> {
        let actual = read(&actual)?;
        let expected = expected.as_deref().map(read).transpose()?.unwrap_or_else(|| EXPECTED.to_string());
        let differences = differences.as_deref().map(read).transpose()?.unwrap_or_else(|| DIFFERENCES.to_string());
        Ok((actual, expected, differences))
    })();
    let (actual, expected, differences) = match texts {
        Ok(t) => t,
        Err(e) => return usage(&e),
    };
    let emulated = match emulated.as_deref().map(|v| record::parse_version(v).ok_or(v)) {
        Some(Err(v)) => return usage(&format!("--emulated {v}: expected MAJOR.MINOR")),
        Some(Ok(v)) => Some(v),
        None => None,
    };
    let c = record::compare(
        &record::parse_all(&expected),
        &record::parse_all(&actual),
        &record::parse_differences(&differences),
        emulated,
    );
    print!("{}", record::summary(&c));
    if c.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
