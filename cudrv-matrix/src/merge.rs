//! `cudrv-matrix merge A.json B.json ...`: the `--json` documents of several runs (one CI
//! runner per driver, say) read back into one grid.

use std::path::{Path, PathBuf};

use cudrv::version;
use serde_json::Value;

use crate::cell::{CellResult, Gated, Outcome};
use crate::render::{Run, Setup, Source, SCHEMA_VERSION, TIMED_OUT};

/// Reads the documents and merges their cells into one run, in version order (then setup
/// label). Returns a one-line message for a file that cannot be read or is not a
/// cudrv-matrix document of this schema version, for files of different commands, and
/// for a cell (a version under one setup: the stand-in, or a real driver's version) that
/// two files both have, naming both.
pub fn merge(files: &[PathBuf]) -> Result<Run, String> {
    let mut sources: Vec<Source> = Vec::new();
    let mut command: Option<(Vec<String>, String)> = None;
    let mut cells: Vec<(usize, CellResult)> = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let doc = read(path)?;
        let bad = |what: &str| format!("{name}: not a cudrv-matrix --json document ({what})");
        if doc.get("schema_version").and_then(Value::as_u64) != Some(u64::from(SCHEMA_VERSION)) {
            return Err(format!("{name}: not a cudrv-matrix --json document of schema_version {SCHEMA_VERSION}"));
        }
        let this: Vec<String> = doc
            .get("command")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(|v| v.as_str().map(String::from)).collect())
            .ok_or_else(|| bad("no command"))?;
        match &command {
            None => command = Some((this, name.clone())),
            Some((first, first_file)) if *first != this => {
                return Err(format!(
                    "{first_file} and {name} ran different commands ({} and {}): their cells do not make one grid",
                    first.join(" "),
                    this.join(" ")
                ))
            }
            Some(_) => {}
        }
        let default_setup = setup_of(&doc);
        for c in doc.get("cells").and_then(Value::as_array).ok_or_else(|| bad("no cells"))? {
            let setup = match c.get("mode") {
                Some(_) => setup_of(c),
                None => default_setup.clone(),
            }
            .ok_or_else(|| bad("a cell of unknown mode"))?;
            let cell = read_cell(c).ok_or_else(|| bad("a cell without a version or outcome"))?;
            // The file a cell came from: this one, or the one a merged document names.
            let file = c.get("source").and_then(Value::as_str).map_or_else(|| name.clone(), |f| format!("{name}:{f}"));
            if let Some((other, _)) = cells.iter().find(|(s, o)| {
                o.version == cell.version && sources.get(*s).is_some_and(|s| s.setup.label() == setup.label())
            }) {
                let other = sources.get(*other).and_then(|s| s.file.clone()).unwrap_or_default();
                return Err(format!(
                    "cell {} ({}) is in both {other} and {file}: run each version once per driver, or merge only one of them",
                    version::display(cell.version),
                    setup.label()
                ));
            }
            let index = match sources.iter().position(|s| s.setup == setup && s.file.as_deref() == Some(&file)) {
                Some(i) => i,
                None => {
                    sources.push(Source { setup, file: Some(file) });
                    sources.len() - 1
                }
            };
            cells.push((index, cell));
        }
    }
    cells.sort_by(|(a, x), (b, y)| {
        let label = |i: &usize| sources.get(*i).map(|s| s.setup.label()).unwrap_or_default();
        (x.version, label(a)).cmp(&(y.version, label(b)))
    });
    Ok(Run { sources, command: command.map(|(c, _)| c).unwrap_or_default(), cells })
}

fn read(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

/// The setup a document (or a merged document's cell) names: `mode` with `stand_in_lib`
/// or `driver`.
fn setup_of(v: &Value) -> Option<Setup> {
    match v.get("mode")?.as_str()? {
        "stand-in" => {
            let library = v.get("stand_in_lib").and_then(Value::as_str).unwrap_or_default();
            Some(Setup::StandIn { library: PathBuf::from(library) })
        }
        "real" => {
            let driver = v.get("driver")?;
            let version = version::parse(driver.get("version")?.as_str()?)?;
            let path = driver.get("path").and_then(Value::as_str).unwrap_or_default().to_string();
            Some(Setup::Real { version, path })
        }
        _ => None,
    }
}

/// A cell of a document, as it was run.
fn read_cell(c: &Value) -> Option<CellResult> {
    let version = version::parse(c.get("version")?.as_str()?)?;
    let int = |key: &str| c.get(key).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok());
    let error = c.get("error").and_then(Value::as_str).map(String::from);
    let outcome = match (int("exit_code"), int("signal"), error) {
        (Some(code), _, _) => Outcome::Exited(code),
        (None, Some(sig), _) => Outcome::Signal(sig),
        (None, None, Some(e)) if e == TIMED_OUT => Outcome::TimedOut,
        (None, None, Some(e)) if c.get("outcome").and_then(Value::as_str) == Some("not started") => {
            Outcome::NotStarted(e)
        }
        (None, None, Some(e)) => Outcome::Lost(e),
        (None, None, None) => return None,
    };
    let gated = c
        .get("gated")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|g| {
                    Some(Gated {
                        name: g.get("name")?.as_str()?.to_string(),
                        availability: g.get("availability").and_then(Value::as_str).unwrap_or_default().to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let tail = c
        .get("output_tail")
        .and_then(Value::as_array)
        .map(|lines| lines.iter().map(|l| l.as_str().unwrap_or_default().to_string()).collect());
    let seconds = c.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
    Some(CellResult { version, outcome, seconds, gated, tail })
}
