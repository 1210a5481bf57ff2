//! Rules of DESIGN.md ("The stand-in driver") that check themselves: they read the
//! stand-in's source, so a change that breaks one fails here with the file and line.

use std::path::{Path, PathBuf};

#[path = "../../tests/common/sources.rs"]
mod walker;
use walker::code;

/// Every hand-written `.rs` file under `standin/src/` (`generated/` excluded), with its text.
fn sources() -> Vec<(PathBuf, String)> {
    walker::sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
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

/// The `static` items of hand-written stand-in code, allowed with the reason: everything
/// else an emulated driver remembers is a field of its `World` (DESIGN.md, "One World").
const ALLOWED_STATICS: &[(&str, &str, &str)] = &[
    ("src/world.rs", "WORLDS", "the worlds themselves"),
    ("src/gpa.rs", "SLOT_LOCK", "hands out slots"),
    ("src/lib.rs", "ENV_INSTANCE", "the default world's version, read once"),
    ("src/install.rs", "INSTALLED", "cudrv's process-wide driver is process-wide"),
    ("src/errors.rs", "STRINGS", "constant error texts"),
    ("src/model/device.rs", "FROM_ENV", "CUDRV_STANDIN_DEVICES, read once"),
    ("src/model/handles.rs", "NEXT_HANDLE", "handles unique across worlds"),
    ("src/model/context.rs", "THREADS", "each thread's state, keyed by world"),
    ("src/model/context.rs", "TOP", "a cache of THREADS: this thread's current context"),
    ("src/run/kernels.rs", "REGISTRY", "host kernels are code, shared by every world"),
    ("src/run/kernels.rs", "LIBRARIES", "stand-in libraries kernels are forwarded to"),
    ("src/run/ptx.rs", "NEXT", "numbers for PTX launches, unique across worlds"),
    ("src/run/ptx.rs", "SEEN", "the allocations a host thread's PTX blocks touched in one launch"),
    ("src/run/thread.rs", "THREAD_KEY", "thread names"),
    ("src/run/thread.rs", "NEXT_THREAD_KEY", "thread names"),
    ("src/run/callback.rs", "INSIDE", "whether this thread runs a program's callback"),
    ("src/run/queue.rs", "WORKING_FOR", "the queue this driver thread serves"),
    ("src/run/footprint.rs", "OPEN", "the footprint of the sanitized operation this thread does"),
    ("src/sanitize/config.rs", "FROM_ENV", "CUDRV_STANDIN_SANITIZE, read once"),
    ("src/run/schedule.rs", "ON", "the adversarial schedule is process-wide, as its variable"),
    ("src/run/schedule.rs", "SEED", "the adversarial schedule is process-wide, as its variable"),
    ("src/sanitize/report.rs", "REPORTED", "sanitizer reports of the process, for its exit status"),
];

/// The name a line declares as a `static`, if it declares one.
fn static_name(code: &str) -> Option<&str> {
    let t = code.trim_start();
    let t = t.strip_prefix("pub(crate) ").or_else(|| t.strip_prefix("pub ")).unwrap_or(t);
    let rest = t.strip_prefix("static ")?;
    let rest = rest.strip_prefix("mut ").unwrap_or(rest);
    rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().filter(|n| !n.is_empty())
}

#[test]
fn driver_state_lives_in_the_world() {
    let mut found = Vec::new();
    for (path, text) in sources() {
        let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            if let Some(s) = static_name(code(line)) {
                if !ALLOWED_STATICS.iter().any(|&(f, n, _)| f == name && n == s) {
                    found.push(format!("{name}:{}: {s}", i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "state outside the World (make it a World field):\n{}", found.join("\n"));
    assert_eq!(static_name("    static STATE: Mutex<u8> = Mutex::new(0);"), Some("STATE"));
    assert_eq!(static_name("pub(crate) static X: u8 = 0;"), Some("X"));
    assert_eq!(static_name("fn f(x: &'static str)"), None);
}

/// The source file a module path names (`model::memory` -> `src/model/memory.rs`), if
/// there is one: the longest prefix of the path that is a file.
fn file_of(root: &Path, path: &[&str]) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| {
        let parts = path.get(..n)?;
        let file = parts.iter().fold(root.to_path_buf(), |p, part| p.join(part)).with_extension("rs");
        file.exists().then_some(file)
    })
}

/// Every file `text` (the file `file`) takes a name from: `crate::a::b` paths, and in the
/// crate root its own modules' paths (`world::World`); the root's `pub use` re-exports
/// and `mod` declarations are its facade, not uses.
fn imports(root: &Path, file: &Path, text: &str, modules: &[String]) -> Vec<PathBuf> {
    let is_root = file.ends_with("src/lib.rs");
    let mut out = Vec::new();
    for line in text.lines().map(code) {
        let t = line.trim_start();
        if is_root && (t.starts_with("pub use ") || t.starts_with("mod ") || t.starts_with("pub mod ")) {
            continue;
        }
        let words: Vec<&str> = line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).collect();
        for w in words {
            let parts: Vec<&str> = w.split("::").filter(|p| !p.is_empty()).collect();
            let path: Vec<&str> = match parts.first() {
                Some(&"crate") => parts.get(1..).unwrap_or_default().to_vec(),
                Some(first) if is_root && modules.iter().any(|m| m == first) && parts.len() > 1 => parts.clone(),
                _ => continue,
            };
            if let Some(f) = file_of(root, &path) {
                if f != file {
                    out.push(f);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// DESIGN.md ("Layout"): no file takes a name from a file that takes one from it, by any
/// path (model/ and run/ below the entry modules, the world above the model).
#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources();
    let modules: Vec<String> = files
        .iter()
        .filter(|(p, _)| p.parent() == Some(root.as_path()))
        .filter_map(|(p, _)| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    let graph: Vec<(PathBuf, Vec<PathBuf>)> =
        files.iter().map(|(p, t)| (p.clone(), imports(&root, p, t, &modules))).collect();
    let edges = |f: &PathBuf| graph.iter().find(|(p, _)| p == f).map(|(_, e)| e.clone()).unwrap_or_default();
    // The import graph has an edge to check the detector on.
    assert!(edges(&root.join("world.rs")).contains(&root.join("model/memory.rs")));
    let mut cycles = Vec::new();
    for (start, _) in &graph {
        // A path from `start` back to `start`, by depth-first search.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in edges(&at) {
                if next == *start {
                    let names: Vec<String> =
                        path.iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
                    cycles.push(names.join(" -> "));
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next, p));
                }
            }
        }
    }
    cycles.sort();
    cycles.dedup();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}
