//! The source walker of the layout tests (cudrv's `tests/layout.rs` and the stand-in's
//! `standin/tests/layout.rs` include this file with `#[path]`).

use std::path::{Path, PathBuf};

/// Every hand-written `.rs` file under `root` (`generated/` excluded), with its text.
pub fn sources(root: &Path) -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "generated") {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    assert!(out.len() > 20, "found only {} source files under {}", out.len(), root.display());
    out
}

/// The code of a line: what is left once a `//` comment is cut off (doc comments included).
pub fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}
