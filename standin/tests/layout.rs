//! Rules of DESIGN.md ("The stand-in driver") that check themselves: they read the
//! stand-in's source, so a change that breaks one fails here with the file and line.

use std::path::{Path, PathBuf};

/// Every hand-written `.rs` file under `standin/src/` (`generated/` excluded), with its text.
fn sources() -> Vec<(PathBuf, String)> {
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
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    assert!(out.len() > 20, "found only {} source files", out.len());
    out
}

/// The code of a line: what is left once a `//` comment is cut off (doc comments included).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Whether `code` has a string literal starting with a CUDA name: `"cuX`, `c"cuX` or
/// `r"cuX` (a `"` followed by `cu` and a capital letter).
fn names_a_cuda_call(code: &str) -> bool {
    code.match_indices("\"cu").any(|(i, _)| code[i + 3..].starts_with(|c: char| c.is_ascii_uppercase()))
}

#[test]
fn the_detector_sees_cuda_names_in_strings() {
    assert!(names_a_cuda_call(r#"enter!("cuMemAlloc");"#));
    assert!(names_a_cuda_call(r#"let s = c"cuInit";"#));
    assert!(!names_a_cuda_call(r#"let s = "cuda"; // "cuMemAlloc""#.split("//").next().unwrap()));
    assert!(!names_a_cuda_call("faults::take(cudrv::call::cuMemAlloc)"));
}

/// Entries, fault points and tables name calls by identifiers the compiler checks
/// (`cudrv::call::cuMemAlloc`, a `Table` field), never by a string that a typo would
/// silently break: no CUDA name typed as a string in hand-written stand-in code.
#[test]
fn no_cuda_name_is_typed_as_a_string() {
    let mut found = Vec::new();
    for (path, text) in sources() {
        let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
        for (i, line) in text.lines().enumerate() {
            if names_a_cuda_call(code(line)) {
                found.push(format!("{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "CUDA names typed as strings (name the call instead):\n{}", found.join("\n"));
}
