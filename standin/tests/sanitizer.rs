//! The sanitizer's corpus (docs/sanitizer.md): programs with a seeded stream-order bug
//! must be reported, programs ordered by CUDA's rules must not.
//!
//! The C programs (`tests/sanitizer/corpus.c`, one case per argument) are built with `cc`
//! against the cdylib as `libcuda.so` and run under `CUDRV_STANDIN_SANITIZE=races`: a
//! race is a text report on stderr, a JSON line in `CUDRV_STANDIN_SANITIZE_LOG`, a
//! summary line and exit status 66. The Rust programs run in-process over cudrv's raw
//! layer on a world of their own (`StandIn::sanitize`).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

mod common;

use common::cdylib;

const C_CORPUS: &str = include_str!("sanitizer/corpus.c");

/// Each C case and whether it has a seeded race.
const C_CASES: &[(&str, bool)] = &[
    ("kernel_then_copy_unordered", true),
    ("copy_then_kernel_unordered", true),
    ("memsets_unordered", true),
    ("event_recorded_too_early", true),
    ("nonblocking_then_sync_copy", true),
    ("free_async_while_used", true),
    ("pinned_written_then_read_unordered", true),
    ("graph_then_kernel_unordered", true),
    ("same_stream", false),
    ("event_wait", false),
    ("stream_synchronize", false),
    ("stream_query", false),
    ("event_synchronize", false),
    ("event_query", false),
    ("context_synchronize", false),
    ("legacy_stream_implicit", false),
    ("context_wait_event", false),
    ("host_function_then_event", false),
    ("free_async_ordered", false),
    ("reads_only", false),
    ("graph_then_event", false),
];

/// The corpus built once for the binary: its directory (kept) and executable.
fn corpus() -> &'static (tempfile::TempDir, PathBuf) {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::copy(cdylib(), lib.join("libcuda.so")).unwrap();
        std::fs::copy(cdylib(), lib.join("libcuda.so.1")).unwrap();
        let source = dir.path().join("corpus.c");
        std::fs::write(&source, C_CORPUS).unwrap();
        let exe = dir.path().join("corpus");
        let out = Command::new("cc")
            .args(["-std=c99", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&source)
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lcuda")
            .output()
            .unwrap_or_else(|e| panic!("these tests build a C program with `cc` (install gcc or clang): {e}"));
        assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
        (dir, exe)
    })
}

/// Runs case `name` with `env` (the sanitizer's variables unset unless given); the output
/// and the log's lines.
fn run_case(name: &str, env: &[(&str, &str)]) -> (Output, Vec<String>) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (dir, exe) = corpus();
    let log = dir.path().join(format!("{name}-{}.jsonl", RUNS.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_file(&log);
    let mut cmd = Command::new(exe);
    cmd.arg(name)
        .env_remove("CUDRV_STANDIN_VERSION")
        .env_remove("CUDRV_STANDIN_SANITIZE")
        .env_remove("CUDRV_STANDIN_SANITIZE_EXITCODE")
        .env("CUDRV_STANDIN_SANITIZE_LOG", &log);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let lines = std::fs::read_to_string(&log).map(|s| s.lines().map(str::to_owned).collect()).unwrap_or_default();
    (out, lines)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_seeded_race_of_the_c_corpus_is_reported_and_no_correct_program_is() {
    let mut wrong = Vec::new();
    for &(name, race) in C_CASES {
        let (out, log) = run_case(name, &[("CUDRV_STANDIN_SANITIZE", "races")]);
        let err = stderr(&out);
        let ran = String::from_utf8_lossy(&out.stdout).contains(&format!("corpus: {name} ran"));
        let ok = if race {
            ran && out.status.code() == Some(66)
                && err.contains("cudrv-standin sanitizer: race: ")
                && err.contains("report(s); exit status 66")
                && !log.is_empty()
                && log.iter().all(|l| l.starts_with("{\"kind\":\"race\",\"first\":{\"op\":") && l.ends_with('}'))
        } else {
            ran && out.status.success() && !err.contains("sanitizer") && log.is_empty()
        };
        if !ok {
            wrong.push(format!("{name} (race: {race}): {:?}\n{err}{}", out.status, log.join("\n")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn a_report_names_both_operations_their_streams_the_bytes_and_the_allocation() {
    let (out, log) = run_case("kernel_then_copy_unordered", &[("CUDRV_STANDIN_SANITIZE", "races")]);
    let err = stderr(&out);
    let line = err.lines().find(|l| l.contains("race:")).unwrap();
    assert!(line.contains("kernel `fill` (grid 8x1x1, block 128x1x1) on stream 0x"), "{line}");
    assert!(line.contains(" writes and copy of 4096 bytes from device 0x"), "{line}");
    assert!(line.contains(" reads 4096 bytes in [0x"), "{line}");
    assert!(line.contains("of Device device allocation 0x"), "{line}");
    assert_eq!(log.len(), 1, "{log:?}");
    let json = &log[0];
    for part in ["\"access\":\"write\"", "\"access\":\"read\"", "\"bytes\":4096", "\"op\":\"kernel `fill`"] {
        assert!(json.contains(part), "{part} in {json}");
    }
}

#[test]
fn without_the_variable_nothing_is_checked_and_the_exit_status_can_be_chosen() {
    let (out, log) = run_case("kernel_then_copy_unordered", &[]);
    assert!(out.status.success() && log.is_empty() && !stderr(&out).contains("sanitizer"), "{}", stderr(&out));
    let env = [("CUDRV_STANDIN_SANITIZE", "races"), ("CUDRV_STANDIN_SANITIZE_EXITCODE", "9")];
    let (out, _) = run_case("memsets_unordered", &env);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let (out, _) = run_case("same_stream", &[("CUDRV_STANDIN_SANITIZE", "racez")]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("CUDRV_STANDIN_SANITIZE=racez: unknown check `racez`; nothing is checked"));
}
