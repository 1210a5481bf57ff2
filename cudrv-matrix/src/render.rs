//! The grid as text and as JSON.

use std::ffi::OsString;
use std::fmt::Write;
use std::path::PathBuf;

use cudrv::version;
use serde_json::{json, Value};

use crate::cell::{CellResult, Outcome};

/// The version of the JSON document's layout (`schema_version`).
pub const SCHEMA_VERSION: u32 = 1;
/// How many gated names a grid row shows before `...`.
const NAMES_IN_ROW: usize = 3;

/// What ran the cells.
#[derive(Debug)]
pub enum Setup {
    /// The stand-in library at this path.
    StandIn { library: PathBuf },
    /// The real driver: its own version (driver form) and its path.
    Real { version: u32, path: String },
}

impl Setup {
    fn mode(&self) -> &'static str {
        match self {
            Setup::StandIn { .. } => "stand-in",
            Setup::Real { .. } => "real",
        }
    }
}

/// A whole run, for rendering.
#[derive(Debug)]
pub struct Run<'a> {
    /// The driver setup.
    pub setup: &'a Setup,
    /// The command.
    pub command: &'a [OsString],
    /// The cells, in version order.
    pub cells: &'a [CellResult],
}

/// `sh -c 'exit 1'`: the command as a shell would take it.
fn shell_words(command: &[OsString]) -> String {
    let quote = |a: &OsString| {
        let s = a.to_string_lossy();
        let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+%@".contains(c));
        if plain {
            s.into_owned()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    command.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// `exit 1`, `signal 9 (SIGKILL)`, `not started`.
fn how(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Exited(code) => format!("exit {code}"),
        Outcome::Signal(sig) => match signal_name(*sig) {
            Some(name) => format!("signal {sig} ({name})"),
            None => format!("signal {sig}"),
        },
        Outcome::NotStarted(_) => "not started".into(),
        Outcome::Lost(_) => "lost".into(),
        Outcome::TimedOut => "timed out".into(),
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// The text report: a header line, one row per version, a summary line, the gated entries
/// by version (if any) and the failures' output tails.
pub fn text(run: &Run) -> String {
    let mut out = String::new();
    let driver = match run.setup {
        Setup::StandIn { library } => format!("stand-in {}", library.display()),
        Setup::Real { version: v, path } => format!("real driver {} ({path})", version::display(*v)),
    };
    let _ = writeln!(out, "cudrv-matrix: {driver}; command: {}", shell_words(run.command));
    let width = run.cells.iter().map(|c| version::display(c.version).len()).max().unwrap_or(4);
    for cell in run.cells {
        let status = if cell.passed() { "pass" } else { "FAIL" };
        let time = format!("{:.2}s", cell.seconds);
        let mut gated = format!("gated: {}", cell.gated.len());
        if !cell.gated.is_empty() {
            let names: Vec<&str> = cell.gated.iter().take(NAMES_IN_ROW).map(|g| g.name.as_str()).collect();
            let more = if cell.gated.len() > NAMES_IN_ROW { ", ..." } else { "" };
            let _ = write!(gated, " ({}{more})", names.join(", "));
        }
        let _ = write!(out, "{:<width$}  {status}  {time:>6}  {gated}", version::display(cell.version));
        if !cell.passed() {
            let _ = write!(out, "  [{}]", how(&cell.outcome));
        }
        out.push('\n');
    }
    let failed: Vec<String> = run.cells.iter().filter(|c| !c.passed()).map(|c| version::display(c.version)).collect();
    let total = run.cells.len();
    if failed.is_empty() {
        let _ = writeln!(out, "{total} of {total} passed ({})", run.setup.mode());
    } else {
        let _ = writeln!(
            out,
            "{} of {total} passed, {} failed ({}): {}",
            total - failed.len(),
            failed.len(),
            run.setup.mode(),
            failed.join(", ")
        );
    }
    if run.cells.iter().any(|c| !c.gated.is_empty()) {
        let _ = writeln!(out, "\nGated entries asked for:");
        for cell in run.cells.iter().filter(|c| !c.gated.is_empty()) {
            for g in &cell.gated {
                let _ = writeln!(out, "  {:<width$}  {}  {}", version::display(cell.version), g.name, g.availability);
            }
        }
    }
    for cell in run.cells {
        if let Some(lines) = &cell.tail {
            let _ = writeln!(out, "\n--- {}: {} ---", version::display(cell.version), how(&cell.outcome));
            if lines.is_empty() {
                let _ = writeln!(out, "(no output)");
            }
            for line in lines {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

/// The JSON document (schema version 1).
pub fn json(run: &Run) -> Value {
    let cells: Vec<Value> = run
        .cells
        .iter()
        .map(|c| {
            let (exit_code, signal, error) = match &c.outcome {
                Outcome::Exited(code) => (Some(*code), None, None),
                Outcome::Signal(sig) => (None, Some(*sig), None),
                Outcome::NotStarted(m) | Outcome::Lost(m) => (None, None, Some(m.clone())),
                Outcome::TimedOut => (None, None, Some("timed out: killed".to_string())),
            };
            json!({
                "version": version::display(c.version),
                "passed": c.passed(),
                "exit_code": exit_code,
                "signal": signal,
                "error": error,
                "seconds": (c.seconds * 1000.0).round() / 1000.0,
                "gated": c.gated.iter().map(|g| json!({"name": g.name, "availability": g.availability})).collect::<Vec<_>>(),
                "output_tail": c.tail,
            })
        })
        .collect();
    let (stand_in_lib, driver) = match run.setup {
        Setup::StandIn { library } => (Some(library.display().to_string()), Value::Null),
        Setup::Real { version: v, path } => (None, json!({"version": version::display(*v), "path": path})),
    };
    let passed = run.cells.iter().filter(|c| c.passed()).count();
    json!({
        "schema_version": SCHEMA_VERSION,
        "mode": run.setup.mode(),
        "command": run.command.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
        "stand_in_lib": stand_in_lib,
        "driver": driver,
        "summary": {"cells": run.cells.len(), "passed": passed, "failed": run.cells.len() - passed},
        "cells": cells,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_quoted_as_a_shell_takes_them() {
        let c: Vec<OsString> = ["sh", "-c", "exit 1", "it's", ""].iter().map(OsString::from).collect();
        assert_eq!(shell_words(&c), r"sh -c 'exit 1' 'it'\''s' ''");
    }
}
