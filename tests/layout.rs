//! Rules of DESIGN.md that check themselves: they read the source, so a change that breaks
//! one fails here with the file and line.

use std::path::{Path, PathBuf};

#[path = "common/sources.rs"]
mod walker;
use walker::code;

/// Every hand-written `.rs` file under `src/` (`generated/` excluded), with its text.
fn sources() -> Vec<(PathBuf, String)> {
    walker::sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string()
}

/// Lines of code (not comments) matching `hit` in files other than `allowed`.
fn offenders(allowed: &[&str], hit: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in sources() {
        let name = relative(&path);
        if allowed.contains(&name.as_str()) {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if hit(code(line)) {
                found.push(format!("{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn only_scope_switches_contexts() {
    let switches = ["cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPopCurrent"];
    let found = offenders(&["src/scope.rs"], |l| switches.iter().any(|s| l.contains(&format!("{s}("))));
    assert!(found.is_empty(), "context switching outside src/scope.rs:\n{}", found.join("\n"));
}

#[test]
fn library_code_never_reports_through_pw() {
    // `pw` runs the reporter: library code calls `p` or `pc` and reports after unlocking.
    let found = offenders(&["src/pw.rs", "src/lib.rs"], |l| l.contains(".pw()") || l.contains("pw::"));
    assert!(found.is_empty(), "library code calls pw:\n{}", found.join("\n"));
}

#[test]
fn no_thread_local_state() {
    let found = offenders(&[], |l| l.contains("thread_local!"));
    assert!(found.is_empty(), "thread-local state in src/:\n{}", found.join("\n"));
}

#[test]
fn no_cuda_name_typed_as_a_string() {
    // A call is named by its generated constant (`call::cuMemAlloc`), never by a string.
    let is_name = |l: &str| {
        l.split('"').skip(1).step_by(2).any(|s| {
            s.starts_with("cu")
                && s.chars().nth(2).is_some_and(|c| c.is_ascii_uppercase())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let found = offenders(&[], is_name);
    assert!(found.is_empty(), "CUDA names typed as strings:\n{}", found.join("\n"));
}

#[test]
fn handle_boilerplate_lives_in_the_core() {
    // Send/Sync are argued once (the handle core), and only the core releases handles.
    let send_sync = offenders(&["src/resources/handle.rs", "src/resources/host_fn.rs", "src/loader.rs"], |l| {
        l.contains("unsafe impl") && (l.contains("Send for") || l.contains("Sync for"))
    });
    assert!(send_sync.is_empty(), "Send/Sync argued outside the handle core:\n{}", send_sync.join("\n"));
    let releases = offenders(&["src/resources/handle.rs"], |l| l.contains("cleanup_in_context("));
    let outside: Vec<_> = releases.into_iter().filter(|l| !l.starts_with("src/scope.rs")).collect();
    assert!(outside.is_empty(), "a handle released outside the core:\n{}", outside.join("\n"));
}
