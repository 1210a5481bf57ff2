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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// The stand-in library at this path.
    StandIn { library: PathBuf },
    /// The real driver: its own version (driver form) and its path.
    Real { version: u32, path: String },
}

impl Setup {
    /// `stand-in` or `real`.
    pub fn mode(&self) -> &'static str {
        match self {
            Setup::StandIn { .. } => "stand-in",
            Setup::Real { .. } => "real",
        }
    }

    /// `stand-in` or `real 13.0`: what tells cells of one version apart in a merged grid.
    pub fn label(&self) -> String {
        match self {
            Setup::StandIn { .. } => "stand-in".into(),
            Setup::Real { version: v, .. } => format!("real {}", version::display(*v)),
        }
    }

    /// `stand-in /…/libcudrv_standin.so` or `real driver 13.0 (/…/libcuda.so.1)`.
    fn describe(&self) -> String {
        match self {
            Setup::StandIn { library } => format!("stand-in {}", library.display()),
            Setup::Real { version: v, path } => format!("real driver {} ({path})", version::display(*v)),
        }
    }
}

/// Where cells came from: a setup, and for a merged grid the file that held them.
#[derive(Clone, Debug)]
pub struct Source {
    /// The driver setup.
    pub setup: Setup,
    /// The `--json` file (`cudrv-matrix merge`), `None` for cells run here.
    pub file: Option<String>,
}

/// A whole run, or several merged, for rendering.
#[derive(Debug)]
pub struct Run {
    /// Where the cells came from (one source for a run).
    pub sources: Vec<Source>,
    /// The command.
    pub command: Vec<String>,
    /// The cells in version order (then setup label), each with the index of its source.
    pub cells: Vec<(usize, CellResult)>,
}

impl Run {
    fn setup_of(&self, source: usize) -> Option<&Setup> {
        self.sources.get(source).map(|s| &s.setup)
    }

    /// Whether cells of several setups (stand-in, or real drivers of several versions)
    /// are in the grid: then each row names its setup.
    fn several_setups(&self) -> bool {
        let mut labels: Vec<String> = self.sources.iter().map(|s| s.setup.label()).collect();
        labels.sort();
        labels.dedup();
        labels.len() > 1
    }

    /// `stand-in`, `real`, or `mixed`.
    fn mode(&self) -> &'static str {
        match self.sources.split_first() {
            Some((first, rest)) if rest.iter().all(|s| s.setup.mode() == first.setup.mode()) => first.setup.mode(),
            Some(_) => "mixed",
            None => "stand-in",
        }
    }

    /// `12.4`, or `12.4 (real 13.0)` in a grid of several setups.
    fn cell_name(&self, source: usize, cell: &CellResult) -> String {
        match self.setup_of(source) {
            Some(setup) if self.several_setups() => format!("{} ({})", version::display(cell.version), setup.label()),
            _ => version::display(cell.version),
        }
    }
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
pub fn how(outcome: &Outcome) -> String {
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

pub fn signal_name(sig: i32) -> Option<&'static str> {
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

/// `11.3-12.6, 13.0`: the versions of `cells` (in grid order), where a run of three or
/// more cells that are consecutive releases is written as a range.
fn version_runs(versions: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(&first) = versions.get(i) {
        let mut j = i;
        while let (Some(&a), Some(&b)) = (versions.get(j), versions.get(j + 1)) {
            if crate::versions::next_release(a) != Some(b) {
                break;
            }
            j += 1;
        }
        let last = versions.get(j).copied().unwrap_or(first);
        if j >= i + 2 {
            parts.push(format!("{}-{}", version::display(first), version::display(last)));
            i = j + 1;
        } else {
            parts.push(version::display(first));
            i += 1;
        }
    }
    parts.join(", ")
}

/// A cell of a run: the index of its source and its version.
type CellKey = (usize, u32);

/// One row of the grid: `12.4  pass   0.03s  gated: 1 (cuX)`, with the setup after the
/// version in a grid of several setups and `[exit 1]` on a failure.
pub fn row(run: &Run, source: usize, cell: &CellResult, width: usize) -> String {
    let status = if cell.passed() { "pass" } else { "FAIL" };
    let time = format!("{:.2}s", cell.seconds);
    let mut gated = format!("gated: {}", cell.gated.len());
    if !cell.gated.is_empty() {
        let names: Vec<&str> = cell.gated.iter().take(NAMES_IN_ROW).map(|g| g.name.as_str()).collect();
        let more = if cell.gated.len() > NAMES_IN_ROW { ", ..." } else { "" };
        let _ = write!(gated, " ({}{more})", names.join(", "));
    }
    let mut out = format!("{:<width$}", version::display(cell.version));
    if run.several_setups() {
        let label = run.setup_of(source).map(Setup::label).unwrap_or_default();
        let _ = write!(out, "  {label:<12}");
    }
    let _ = write!(out, "  {status}  {time:>6}  {gated}");
    if !cell.passed() {
        let _ = write!(out, "  [{}]", how(&cell.outcome));
    }
    out
}

/// The text report: a header line, one row per cell, a summary line, the gated entries
/// (one line per entry, with the cells that asked for it) and the failures' output tails.
pub fn text(run: &Run) -> String {
    let mut out = String::new();
    let origin = match run.sources.as_slice() {
        [one] if one.file.is_none() => one.setup.describe(),
        many => {
            let files: Vec<String> =
                many.iter().map(|s| format!("{} ({})", s.file.as_deref().unwrap_or("-"), s.setup.describe())).collect();
            format!("merged {}", files.join(", "))
        }
    };
    let command: Vec<OsString> = run.command.iter().map(OsString::from).collect();
    let _ = writeln!(out, "cudrv-matrix: {origin}; command: {}", shell_words(&command));
    let width = run.cells.iter().map(|(_, c)| version::display(c.version).len()).max().unwrap_or(4);
    for (source, cell) in &run.cells {
        let _ = writeln!(out, "{}", row(run, *source, cell, width));
    }
    let failed: Vec<String> =
        run.cells.iter().filter(|(_, c)| !c.passed()).map(|(s, c)| run.cell_name(*s, c)).collect();
    let total = run.cells.len();
    if failed.is_empty() {
        let _ = writeln!(out, "{total} of {total} passed ({})", run.mode());
    } else {
        let _ = writeln!(
            out,
            "{} of {total} passed, {} failed ({}): {}",
            total - failed.len(),
            failed.len(),
            run.mode(),
            failed.join(", ")
        );
    }
    // Each entry once, with the cells (of each setup) that asked for it.
    let mut entries: Vec<(&str, &str, Vec<CellKey>)> = Vec::new();
    for (source, cell) in &run.cells {
        for g in &cell.gated {
            match entries.iter_mut().find(|(n, a, _)| *n == g.name && *a == g.availability) {
                Some((_, _, cells)) => cells.push((*source, cell.version)),
                None => entries.push((&g.name, &g.availability, vec![(*source, cell.version)])),
            }
        }
    }
    if !entries.is_empty() {
        entries.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let name_width = entries.iter().map(|(n, _, _)| n.len()).max().unwrap_or(0);
        let avail_width = entries.iter().map(|(_, a, _)| a.len()).max().unwrap_or(0);
        let _ = writeln!(out, "\nGated entries asked for (entry, availability, cells):");
        for (name, availability, cells) in &entries {
            // The cells by setup label (one label unless several setups are merged).
            let mut by_label: Vec<(String, Vec<u32>)> = Vec::new();
            for (source, v) in cells {
                let label = run.setup_of(*source).map(Setup::label).unwrap_or_default();
                match by_label.iter_mut().find(|(l, _)| *l == label) {
                    Some((_, versions)) => versions.push(*v),
                    None => by_label.push((label, vec![*v])),
                }
            }
            by_label.sort();
            let labels: Vec<String> = by_label
                .iter_mut()
                .map(|(label, versions)| {
                    versions.sort_unstable();
                    versions.dedup();
                    if run.several_setups() {
                        format!("{} ({label})", version_runs(versions))
                    } else {
                        version_runs(versions)
                    }
                })
                .collect();
            let all = if cells.len() == run.cells.len() && run.cells.len() > 1 { "every cell: " } else { "" };
            let _ = writeln!(out, "  {name:<name_width$}  {availability:<avail_width$}  {all}{}", labels.join("; "));
        }
    }
    for (source, cell) in &run.cells {
        if let Some(lines) = &cell.tail {
            let _ = writeln!(out, "\n--- {}: {} ---", run.cell_name(*source, cell), how(&cell.outcome));
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

/// `passed`, `exit`, `signal`, `timed out`, `not started` or `lost`: the JSON `outcome`.
fn outcome_word(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Exited(0) => "passed",
        Outcome::Exited(_) => "exit",
        Outcome::Signal(_) => "signal",
        Outcome::TimedOut => "timed out",
        Outcome::NotStarted(_) => "not started",
        Outcome::Lost(_) => "lost",
    }
}

/// The error text of a JSON cell for a command that timed out.
pub const TIMED_OUT: &str = "timed out: killed";

fn setup_json(setup: &Setup) -> (Value, Value) {
    match setup {
        Setup::StandIn { library } => (json!(library.display().to_string()), Value::Null),
        Setup::Real { version: v, path } => (Value::Null, json!({"version": version::display(*v), "path": path})),
    }
}

/// The JSON document (schema version 1). A merged grid also has `sources` (one per file)
/// and, in each cell, its `source`, `mode` and `driver`.
pub fn json(run: &Run) -> Value {
    let merged = run.sources.iter().any(|s| s.file.is_some());
    let cells: Vec<Value> = run
        .cells
        .iter()
        .map(|(source, c)| {
            let (exit_code, signal, error) = match &c.outcome {
                Outcome::Exited(code) => (Some(*code), None, None),
                Outcome::Signal(sig) => (None, Some(*sig), None),
                Outcome::NotStarted(m) | Outcome::Lost(m) => (None, None, Some(m.clone())),
                Outcome::TimedOut => (None, None, Some(TIMED_OUT.to_string())),
            };
            let mut cell = json!({
                "version": version::display(c.version),
                "passed": c.passed(),
                "outcome": outcome_word(&c.outcome),
                "exit_code": exit_code,
                "signal": signal,
                "error": error,
                "seconds": (c.seconds * 1000.0).round() / 1000.0,
                "gated": c.gated.iter().map(|g| json!({"name": g.name, "availability": g.availability})).collect::<Vec<_>>(),
                "output_tail": c.tail,
            });
            if let (true, Some(src), Some(obj)) = (merged, run.sources.get(*source), cell.as_object_mut()) {
                let (lib, driver) = setup_json(&src.setup);
                obj.insert("source".into(), json!(src.file));
                obj.insert("mode".into(), json!(src.setup.mode()));
                obj.insert("stand_in_lib".into(), lib);
                obj.insert("driver".into(), driver);
            }
            cell
        })
        .collect();
    // Top-level setup: the one setup, or null when several are merged.
    let (stand_in_lib, driver) = match run.sources.as_slice() {
        [first, rest @ ..] if rest.iter().all(|s| s.setup == first.setup) => setup_json(&first.setup),
        _ => (Value::Null, Value::Null),
    };
    let passed = run.cells.iter().filter(|(_, c)| c.passed()).count();
    let mut doc = json!({
        "schema_version": SCHEMA_VERSION,
        "mode": run.mode(),
        "command": run.command,
        "stand_in_lib": stand_in_lib,
        "driver": driver,
        "summary": {"cells": run.cells.len(), "passed": passed, "failed": run.cells.len() - passed},
        "cells": cells,
    });
    if let (true, Some(obj)) = (merged, doc.as_object_mut()) {
        let sources: Vec<Value> = run
            .sources
            .iter()
            .map(|s| {
                let (lib, driver) = setup_json(&s.setup);
                json!({"file": s.file, "mode": s.setup.mode(), "stand_in_lib": lib, "driver": driver})
            })
            .collect();
        obj.insert("sources".into(), Value::Array(sources));
    }
    doc
}

/// The JUnit XML report: one test suite per setup (`cudrv-matrix stand-in`,
/// `cudrv-matrix real 13.0`), one test case per cell, named by its version, with class
/// name `cudrv-matrix.stand-in` or `cudrv-matrix.real`. A failed cell is a `<failure>`
/// (exit status, signal, timeout) or an `<error>` (not started, lost) whose text is the
/// cell's output tail; the gated entries a cell asked for are its `<system-out>`.
///
/// Returns the serializer's message if the XML could not be written.
pub fn junit(run: &Run) -> Result<String, String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suites: Vec<(String, TestSuite)> = Vec::new();
    for (source, cell) in &run.cells {
        let Some(setup) = run.setup_of(*source) else { continue };
        let status = match &cell.outcome {
            _ if cell.passed() => TestCaseStatus::success(),
            outcome => {
                let kind = match outcome {
                    Outcome::NotStarted(_) | Outcome::Lost(_) => NonSuccessKind::Error,
                    _ => NonSuccessKind::Failure,
                };
                let mut status = TestCaseStatus::non_success(kind);
                status.set_message(how(outcome)).set_type(outcome_word(outcome));
                let lines = cell.tail.clone().unwrap_or_default();
                status.set_description(if lines.is_empty() { "(no output)".to_string() } else { lines.join("\n") });
                status
            }
        };
        let mut case = TestCase::new(version::display(cell.version), status);
        case.set_classname(format!("cudrv-matrix.{}", setup.mode()));
        // A merged file's figure may be anything: an unrepresentable one is left out.
        if let Ok(time) = std::time::Duration::try_from_secs_f64(cell.seconds) {
            case.set_time(time);
        }
        if !cell.gated.is_empty() {
            let gated: Vec<String> =
                cell.gated.iter().map(|g| format!("gated: {} {}", g.name, g.availability)).collect();
            case.set_system_out(gated.join("\n"));
        }
        let label = setup.label();
        match suites.iter_mut().find(|(l, _)| *l == label) {
            Some((_, suite)) => {
                suite.add_test_case(case);
            }
            None => {
                let mut suite = TestSuite::new(format!("cudrv-matrix {label}"));
                suite.add_test_case(case);
                suites.push((label, suite));
            }
        }
    }
    let mut report = Report::new("cudrv-matrix");
    report.add_test_suites(suites.into_iter().map(|(_, s)| s));
    report.to_string().map_err(|e| e.to_string())
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

    #[test]
    fn consecutive_releases_are_written_as_ranges() {
        assert_eq!(
            version_runs(&[11030, 11040, 11050, 12000, 12060, 12080, 12090, 13050]),
            "11.3-11.5, 12.0, 12.6-12.9, 13.5"
        );
        assert_eq!(version_runs(&[11080, 12000]), "11.8, 12.0");
        assert_eq!(version_runs(&[]), "");
        assert_eq!(version_runs(&[14020]), "14.2");
    }
}
