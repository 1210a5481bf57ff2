//! cudrv-matrix end to end: grids over the stand-in built with the workspace, exit codes,
//! the JSON document, the gated-entry log, and `--real` over the stand-in loaded as if it
//! were the system's driver.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod xsd;

/// Variables of the caller's environment that would change what the runner does.
const CLEARED: &[&str] = &[
    "CUDRV_LIBCUDA",
    "CUDRV_MAX_DRIVER_VERSION",
    "CUDRV_STANDIN_VERSION",
    "CUDRV_STANDIN_LIB",
    "CUDRV_GATED_LOG",
    "CUDRV_MATRIX_VERSION",
    "CARGO_TARGET_DIR",
    "RUST_BACKTRACE",
];

/// Set for the probe test when it runs as a cell's command.
const PROBE: &str = "CUDRV_MATRIX_TEST_PROBE";

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }

    /// The grid rows: the lines that start with a version.
    fn rows(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()) && l.contains("  "))
            .collect()
    }
}

/// Runs the runner (`exe`) with `args` and `env` in a clean environment, in an empty
/// folder (so that it finds no `target/` there), with its temporary folder in a fresh
/// one, and checks that it left nothing there.
fn run_exe(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let cwd = tempfile::tempdir().unwrap();
    run_exe_in(exe, args, env, cwd.path())
}

/// [`run_exe`] in the folder `cwd`.
fn run_exe_in(exe: &Path, args: &[&str], env: &[(&str, &str)], cwd: &Path) -> Out {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(args).env("TMPDIR", tmp.path()).current_dir(cwd);
    for name in CLEARED {
        cmd.env_remove(name);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "the runner left {left:?} in its temporary folder");
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn matrix(args: &[&str], env: &[(&str, &str)]) -> Out {
    run_exe(Path::new(env!("CARGO_BIN_EXE_cudrv-matrix")), args, env)
}

/// The versions of the cells of a JSON document, in order.
fn versions(doc: &Value) -> Vec<String> {
    doc["cells"].as_array().unwrap().iter().map(|c| c["version"].as_str().unwrap().to_string()).collect()
}

/// The cell of `version` in a JSON document.
fn cell<'a>(doc: &'a Value, version: &str) -> &'a Value {
    doc["cells"].as_array().unwrap().iter().find(|c| c["version"] == version).unwrap()
}

/// The gated names of a cell.
fn gated(cell: &Value) -> Vec<String> {
    cell["gated"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap().to_string()).collect()
}

/// The stand-in library the runner found next to itself (it reports it in JSON).
fn stand_in_lib() -> String {
    let out = matrix(&["--versions", "12.0", "--json", "--", "true"], &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let lib = out.json()["stand_in_lib"].as_str().unwrap().to_string();
    assert!(Path::new(&lib).is_file());
    lib
}

#[test]
fn a_passing_command_passes_in_every_cell() {
    let out = matrix(&["--versions", "12.4,11.3,12.0", "--", "sh", "-c", "exit 0"], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let rows = out.rows();
    assert_eq!(rows.len(), 3, "{}", out.stdout);
    for (row, v) in rows.iter().zip(["11.3", "12.0", "12.4"]) {
        assert!(row.starts_with(&format!("{v}  pass ")), "{row}");
        assert!(row.ends_with("gated: 0"), "{row}");
    }
    assert!(out.stdout.contains("3 of 3 passed (stand-in)"), "{}", out.stdout);
    assert!(out.stdout.lines().next().unwrap().contains("command: sh -c 'exit 0'"), "{}", out.stdout);
}

#[test]
fn sanitize_sets_the_stand_ins_variable_in_every_cell_and_refuses_an_unknown_check() {
    let script = r#"[ "$CUDRV_STANDIN_SANITIZE" = "races,schedule=4" ]"#;
    let out = matrix(&["--versions", "12.4,13.0", "--sanitize", "races,schedule=4", "--", "sh", "-c", script], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let out = matrix(&["--versions", "12.4", "--sanitize", "racy", "--", "true"], &[]);
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("unknown check `racy`"), "{}", out.stderr);
}

#[test]
fn a_command_failing_below_12_0_fails_only_there() {
    let script = r#"case "$CUDRV_STANDIN_VERSION" in 11.*) echo "first line"; echo "too old: $CUDRV_STANDIN_VERSION" >&2; exit 4;; esac; echo fine"#;
    let out = matrix(&["--versions", "11.3,11.8,12.0,13.0", "--tail", "1", "--", "sh", "-c", script], &[]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let rows = out.rows();
    assert_eq!(rows.len(), 4, "{}", out.stdout);
    assert!(rows[0].starts_with("11.3  FAIL ") && rows[0].ends_with("[exit 4]"), "{}", rows[0]);
    assert!(rows[1].starts_with("11.8  FAIL "), "{}", rows[1]);
    assert!(rows[2].starts_with("12.0  pass ") && rows[3].starts_with("13.0  pass "), "{}", out.stdout);
    assert!(out.stdout.contains("2 of 4 passed, 2 failed (stand-in): 11.3, 11.8"), "{}", out.stdout);
    // The tails, after the grid: stderr included, only the last line (--tail 1), no passing cell.
    let tails = out.stdout.split_once("\n--- 11.3: exit 4 ---\n").unwrap().1;
    assert!(tails.starts_with("too old: 11.3\n"), "{tails}");
    assert!(tails.contains("--- 11.8: exit 4 ---\ntoo old: 11.8\n"), "{tails}");
    assert!(!tails.contains("first line") && !tails.contains("fine") && !tails.contains("12.0"), "{tails}");

    let out = matrix(&["--versions", "11.8,12.0", "--json", "--", "sh", "-c", script], &[]);
    assert_eq!(out.code, Some(1));
    let doc = out.json();
    let old = cell(&doc, "11.8");
    assert_eq!(old["passed"], false);
    assert_eq!(old["exit_code"], 4);
    assert_eq!(old["signal"], Value::Null);
    assert_eq!(old["output_tail"], serde_json::json!(["first line", "too old: 11.8"]));
    let new = cell(&doc, "12.0");
    assert_eq!(new["passed"], true);
    assert_eq!(new["exit_code"], 0);
    assert_eq!(new["output_tail"], Value::Null);
    assert_eq!(doc["summary"], serde_json::json!({"cells": 2, "passed": 1, "failed": 1}));
}

#[test]
fn a_signal_is_a_failure() {
    let out = matrix(&["--versions", "12.4", "--json", "--", "sh", "-c", "echo dying; kill -9 $$"], &[]);
    assert_eq!(out.code, Some(1));
    let doc = out.json();
    let c = cell(&doc, "12.4");
    assert_eq!(
        (c["passed"].clone(), c["exit_code"].clone(), c["signal"].clone()),
        (false.into(), Value::Null, 9.into())
    );
    assert_eq!(c["output_tail"], serde_json::json!(["dying"]));

    let out = matrix(&["--versions", "12.4", "--", "sh", "-c", "kill -9 $$"], &[]);
    assert_eq!(out.code, Some(1));
    assert!(out.rows()[0].ends_with("[signal 9 (SIGKILL)]"), "{}", out.stdout);
    assert!(out.stdout.contains("--- 12.4: signal 9 (SIGKILL) ---\n(no output)\n"), "{}", out.stdout);
}

#[test]
fn a_command_that_hangs_is_killed_at_the_timeout() {
    let out = matrix(
        &["--versions", "12.4,13.0", "--timeout", "1", "--json", "--", "sh", "-c", "echo waiting; sleep 30"],
        &[],
    );
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let doc = out.json();
    for v in ["12.4", "13.0"] {
        let c = cell(&doc, v);
        assert_eq!(c["passed"], false);
        assert_eq!(c["error"], "timed out: killed");
        assert_eq!(c["output_tail"], serde_json::json!(["waiting"]));
    }
    let out = matrix(&["--versions", "12.4", "--timeout", "1", "--", "sh", "-c", "sleep 30"], &[]);
    assert!(out.rows()[0].contains("timed out"), "{}", out.stdout);
}

/// The tiny stand-in for cudrv's side of CUDRV_GATED_LOG: appends `name<TAB>availability`
/// lines, here from two processes of the same cell, with a duplicate.
const GATED_WRITER: &str = r#"
case "$CUDRV_STANDIN_VERSION" in
  11.*|12.[0-7]) sh -c 'printf "cuMemcpyBatchAsync\tneeds driver 12.8\n" >> "$CUDRV_GATED_LOG"'
                 printf "cuMemcpyBatchAsync\tneeds driver 12.8\n" >> "$CUDRV_GATED_LOG"
                 printf "cuLaunchHostFunc_v2\tneeds driver 13.1\n" >> "$CUDRV_GATED_LOG";;
  13.0) printf "cuLaunchHostFunc_v2\tneeds driver 13.1\n" >> "$CUDRV_GATED_LOG";;
esac
"#;

#[test]
fn gated_entries_are_read_per_cell_and_deduplicated() {
    let args = ["--versions", "11.8,12.8,13.0,13.5", "--", "sh", "-c", GATED_WRITER];
    let out = matrix(&args, &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let rows = out.rows();
    assert!(rows[0].ends_with("gated: 2 (cuLaunchHostFunc_v2, cuMemcpyBatchAsync)"), "{}", rows[0]);
    assert!(rows[1].ends_with("gated: 0"), "{}", rows[1]);
    assert!(rows[2].ends_with("gated: 1 (cuLaunchHostFunc_v2)"), "{}", rows[2]);
    assert!(rows[3].ends_with("gated: 0"), "{}", rows[3]);
    // One line per entry, with the cells that asked for it.
    let detail = out.stdout.split_once("Gated entries asked for (entry, availability, cells):\n").unwrap().1;
    assert_eq!(
        detail.lines().collect::<Vec<_>>(),
        ["  cuLaunchHostFunc_v2  needs driver 13.1  11.8, 13.0", "  cuMemcpyBatchAsync   needs driver 12.8  11.8",]
    );

    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(&args);
    let doc = matrix(&json_args, &[]).json();
    let old = cell(&doc, "11.8");
    assert_eq!(gated(old), ["cuLaunchHostFunc_v2", "cuMemcpyBatchAsync"]);
    assert_eq!(old["gated"][1]["availability"], "needs driver 12.8");
    assert_eq!(gated(cell(&doc, "12.8")), Vec::<String>::new());
    assert_eq!(gated(cell(&doc, "13.0")), ["cuLaunchHostFunc_v2"]);
}

#[test]
fn every_cell_has_its_own_environment_and_the_grid_is_in_version_order() {
    // Each cell records what it saw as a "gated" line; the oldest cell finishes last.
    let script = r#"[ "$CUDRV_STANDIN_VERSION" = 11.3 ] && sleep 0.3
[ -f "$CUDRV_LIBCUDA" ] || exit 7
[ -z "$CUDRV_MAX_DRIVER_VERSION" ] || exit 8
printf "saw-%s-%s\tx\n" "$CUDRV_STANDIN_VERSION" "$CUDRV_MATRIX_VERSION" >> "$CUDRV_GATED_LOG""#;
    let out = matrix(
        &["--versions", "all", "--jobs", "4", "--json", "--", "sh", "-c", script],
        &[("CUDRV_MAX_DRIVER_VERSION", "12.0")],
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc = out.json();
    let list = versions(&doc);
    let expected = [
        "11.3", "11.4", "11.5", "11.6", "11.7", "11.8", "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8",
        "12.9", "13.0", "13.1", "13.2", "13.3", "13.4", "13.5",
    ];
    assert_eq!(list, expected);
    for v in expected {
        assert_eq!(gated(cell(&doc, v)), [format!("saw-{v}-{v}")]);
    }

    let out = matrix(&["--versions", "13.5,11.3,12.4,12.0,11.8", "-j", "4", "--", "sh", "-c", script], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let firsts: Vec<&str> = out.rows().iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(firsts, ["11.3", "11.8", "12.0", "12.4", "13.5"]);
}

#[test]
fn the_json_document() {
    let out = matrix(&["--versions", "12.0", "--json", "--", "sh", "-c", "exit 0"], &[]);
    assert_eq!(out.code, Some(0));
    let doc = out.json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["mode"], "stand-in");
    assert_eq!(doc["driver"], Value::Null);
    assert_eq!(doc["command"], serde_json::json!(["sh", "-c", "exit 0"]));
    let c = cell(&doc, "12.0");
    for key in ["version", "passed", "exit_code", "signal", "error", "seconds", "gated", "output_tail"] {
        assert!(c.get(key).is_some(), "cell has no {key}: {c}");
    }
    assert!(c["seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(c["error"], Value::Null);
}

/// Run by the runner as a cell's command (see `cells_load_the_driver_of_their_version`):
/// cudrv, loaded as any program loads it, sees the cell's version. Does nothing otherwise.
#[test]
fn probe() {
    if std::env::var_os(PROBE).is_none() {
        return;
    }
    if std::env::var_os(PROBE).is_some_and(|p| p == "panic") {
        panic!("the probe's own panic message");
    }
    let want = std::env::var("CUDRV_MATRIX_VERSION").unwrap();
    let driver = cudrv::driver().unwrap();
    assert_eq!(cudrv::version::display(driver.version_code()), want);
    let own = std::env::var(PROBE).unwrap();
    assert_eq!(cudrv::version::display(driver.driver_version_code()), if own == "stand-in" { want } else { own });
    assert!(driver.path().is_some());
}

fn probe_command() -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    vec![exe.display().to_string(), "--exact".into(), "probe".into(), "--test-threads".into(), "1".into()]
}

#[test]
fn cells_load_the_driver_of_their_version() {
    let mut args = vec!["--versions", "11.3,11.8,12.0,12.8,13.5", "-j", "2", "--"];
    let cmd = probe_command();
    args.extend(cmd.iter().map(String::as_str));
    let out = matrix(&args, &[(PROBE, "stand-in")]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_eq!(out.rows().len(), 5);

    // The same probe fails when the cell's driver is not what it expects.
    let out = matrix(&args, &[(PROBE, "9.9")]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
}

#[test]
fn real_mode_caps_the_driver_it_finds() {
    // The stand-in loaded through CUDRV_LIBCUDA plays the system's driver, version 12.1.
    let lib = stand_in_lib();
    let env = [("CUDRV_LIBCUDA", lib.as_str()), ("CUDRV_STANDIN_VERSION", "12.1"), (PROBE, "12.1")];
    let cmd = probe_command();
    let mut args = vec!["--real", "--json", "--"];
    args.extend(cmd.iter().map(String::as_str));
    let out = matrix(&args, &env);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc = out.json();
    assert_eq!(doc["mode"], "real");
    assert_eq!(doc["driver"]["version"], "12.1");
    assert_eq!(doc["stand_in_lib"], Value::Null);
    assert_eq!(versions(&doc), ["11.3", "11.4", "11.5", "11.6", "11.7", "11.8", "12.0", "12.1"]);

    let out = matrix(
        &[
            "--real",
            "--versions",
            "11.8,12.0",
            "--",
            "sh",
            "-c",
            r#"[ "$CUDRV_MAX_DRIVER_VERSION" = "$CUDRV_MATRIX_VERSION" ]"#,
        ],
        &env,
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with(&format!("cudrv-matrix: real driver 12.1 ({lib})")), "{}", out.stdout);

    let out = matrix(&["--real", "--versions", "12.0,12.4", "--", "true"], &env);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("12.4 is above the driver's own version 12.1"), "{}", out.stderr);
}

#[test]
fn real_mode_without_a_driver_is_a_setup_error() {
    let out = matrix(&["--real", "--", "true"], &[("CUDRV_LIBCUDA", "/nonexistent/libcuda.so.1")]);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("cudrv-matrix: --real needs a CUDA driver"), "{}", out.stderr);
}

#[test]
fn a_missing_stand_in_library_is_a_setup_error() {
    let out = matrix(&["--stand-in-lib", "/nonexistent/libcudrv_standin.so", "--", "true"], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("--stand-in-lib /nonexistent/libcudrv_standin.so: no such file"), "{}", out.stderr);
    let out = matrix(&["--", "true"], &[("CUDRV_STANDIN_LIB", "/nonexistent/lib.so")]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("CUDRV_STANDIN_LIB /nonexistent/lib.so"), "{}", out.stderr);

    // A runner with nothing next to it.
    let dir = tempfile::tempdir().unwrap();
    let alone: PathBuf = dir.path().join("cudrv-matrix");
    std::fs::copy(env!("CARGO_BIN_EXE_cudrv-matrix"), &alone).unwrap();
    let out = run_exe(&alone, &["--", "true"], &[]);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("no stand-in library: looked for"), "{}", out.stderr);
    // ... works when told where it is.
    let lib = stand_in_lib();
    let out = run_exe(&alone, &["--versions", "12.0", "--", "true"], &[("CUDRV_STANDIN_LIB", lib.as_str())]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn an_installed_runner_finds_the_stand_in_in_the_cargo_target_folder() {
    let lib = stand_in_lib();
    let dir = tempfile::tempdir().unwrap();
    let alone: PathBuf = dir.path().join("bin").join("cudrv-matrix");
    std::fs::create_dir_all(alone.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_cudrv-matrix"), &alone).unwrap();
    // Where `cargo test` puts it in a crate that depends on cudrv-standin.
    let place = |target: &Path, profile: &str| {
        let deps = target.join(profile).join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::copy(&lib, deps.join("libcudrv_standin.so")).unwrap();
    };
    let custom = dir.path().join("custom-target");
    place(&custom, "release");
    let args = ["--versions", "12.0", "--json", "--", "true"];
    let out = run_exe(&alone, &args, &[("CARGO_TARGET_DIR", custom.to_str().unwrap())]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let found = out.json()["stand_in_lib"].as_str().unwrap().to_string();
    assert!(found.ends_with("custom-target/release/deps/libcudrv_standin.so"), "{found}");

    // Without CARGO_TARGET_DIR: the target/ folder of the current folder or a parent.
    let krate = dir.path().join("my-crate");
    place(&krate.join("target"), "debug");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let out = run_exe_in(&alone, &args, &[], &krate.join("src"));
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let found = out.json()["stand_in_lib"].as_str().unwrap().to_string();
    assert!(found.ends_with("my-crate/target/debug/deps/libcudrv_standin.so"), "{found}");

    // Nowhere: the message says where it looked and what to do.
    let out = run_exe(&alone, &args, &[("CARGO_TARGET_DIR", dir.path().join("none").to_str().unwrap())]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("`cargo install` does not install it"), "{}", out.stderr);
    assert!(out.stderr.contains("--stand-in-lib PATH or set CUDRV_STANDIN_LIB"), "{}", out.stderr);
}

#[test]
fn version_with_other_arguments_is_refused_not_a_silent_pass() {
    // `--version 12.4 -- cargo test` is a typo for `--versions`: it must not exit 0.
    for args in [
        &["--version", "12.4", "--", "sh", "-c", "exit 1"][..],
        &["-V", "12.4", "--", "true"],
        &["--versions", "12.0", "--version", "--", "true"],
        &["--version=12.4", "--", "true"],
        &["--version", "--", "true"],
    ] {
        let out = matrix(args, &[]);
        assert_eq!(out.code, Some(2), "{args:?}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
        assert!(out.stderr.contains("use --versions (e.g. --versions 12.4 -- cargo test)"), "{}", out.stderr);
    }
    for flag in ["--version", "-V"] {
        let out = matrix(&[flag], &[]);
        assert_eq!(out.code, Some(0));
        assert_eq!(out.stdout, format!("cudrv-matrix {}\n", env!("CARGO_PKG_VERSION")));
    }
    // After `--` it belongs to the command.
    let out = matrix(&["--versions", "12.0", "--", "sh", "-c", "exit 0", "--version"], &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
}

#[test]
fn a_closed_stdout_is_exit_5() {
    let exe = env!("CARGO_BIN_EXE_cudrv-matrix");
    let run = |args: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let out = Command::new("sh")
            .args(["-c", r#""$@" >&-"#, "sh", exe])
            .args(args)
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = run(&["--versions", "12.0", "--", "true"]);
    assert_eq!(code, Some(5), "{stderr}");
    assert!(stderr.contains("stdout is closed"), "{stderr}");
    let (code, _) = run(&["merge", "/nonexistent.json"]);
    assert_eq!(code, Some(5));
    // /dev/null is a stdout like any other.
    let out = Command::new(exe).args(["--versions", "12.0", "--", "true"]).stdout(std::process::Stdio::null()).output();
    assert_eq!(out.unwrap().status.code(), Some(0));
}

#[test]
fn a_stdout_that_cannot_be_written_is_exit_5() {
    // `cudrv-matrix ... >/dev/full` (ENOSPC) and a closed pipe (EPIPE): the grid, the JSON,
    // merge's grid, the help and the version are all results that did not arrive: exit 5
    // and a line on stderr saying so, never 0 with nothing shown.
    let dir = tempfile::tempdir().unwrap();
    let doc = json_run(dir.path(), "a.json", &["--versions", "12.0", "--", "true"], &[]);
    let cases = [
        &["--versions", "12.0", "--", "true"][..],
        &["--versions", "12.0", "--json", "--", "true"],
        &["merge", doc.as_str()],
        &["--help"],
        &["-h"],
        &["help"],
        &["merge", "--help"],
        &["help", "merge"],
        &["--version"],
        &["-V"],
    ];
    let exe = env!("CARGO_BIN_EXE_cudrv-matrix");
    for args in cases {
        for (what, stdout) in [("/dev/full", full()), ("a closed pipe", closed_pipe())] {
            let tmp = tempfile::tempdir().unwrap();
            let out = Command::new(exe).args(args).env("TMPDIR", tmp.path()).stdout(stdout).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(5), "{args:?} to {what}: {stderr}");
            let last = stderr.lines().last().unwrap_or_default();
            assert!(last.starts_with("cudrv-matrix: "), "{args:?} to {what}: {stderr}");
            let why = if what == "/dev/full" { "No space left on device" } else { "Broken pipe" };
            assert!(last.contains(why), "{args:?} to {what}: {stderr}");
            assert!(!stderr.contains("panicked"), "{args:?} to {what}: {stderr}");
        }
    }
    // The same help to a stdout that takes it is exit 0.
    let out = Command::new(exe).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Exit codes:"));
}

/// `/dev/full` as a stdout: every write fails with ENOSPC.
fn full() -> std::process::Stdio {
    std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap().into()
}

/// A socket whose other end is already closed, as a stdout: every write fails with EPIPE
/// (Rust ignores SIGPIPE), with no race against a reader.
fn closed_pipe() -> std::process::Stdio {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(ours);
    std::os::fd::OwnedFd::from(theirs).into()
}

#[test]
fn each_cell_ends_with_a_progress_line_on_stderr() {
    let out = matrix(&["--versions", "11.8,12.4,13.0", "--", "sh", "-c", "[ $CUDRV_MATRIX_VERSION != 12.4 ]"], &[]);
    assert_eq!(out.code, Some(1));
    let progress: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("cudrv-matrix: [")).collect();
    assert_eq!(progress.len(), 3, "{}", out.stderr);
    for (i, line) in progress.iter().enumerate() {
        assert!(line.starts_with(&format!("cudrv-matrix: [{}/3] ", i + 1)), "{line}");
    }
    for v in ["11.8 pass in ", "12.4 FAIL [exit 1] in ", "13.0 pass in "] {
        assert_eq!(progress.iter().filter(|l| l.contains(v)).count(), 1, "{v}: {}", out.stderr);
    }
}

#[test]
fn versions_take_majors_ranges_and_only_releases() {
    let list = |spec: &str| {
        let out = matrix(&["--versions", spec, "--json", "--", "true"], &[]);
        assert_eq!(out.code, Some(0), "{spec}: {}", out.stderr);
        versions(&out.json())
    };
    assert_eq!(list("12"), ["12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8", "12.9"]);
    assert_eq!(list("12.6-13.0"), ["12.6", "12.8", "12.9", "13.0"]);
    assert_eq!(list("13.4-13,11.8"), ["11.8", "13.4", "13.5"]);
    let out = matrix(&["--versions", "12.7", "--", "true"], &[]);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("12.7 is not a CUDA release; the releases are 11.3 11.4 11.5 11.6 11.7 11.8 12.0"),
        "{}",
        out.stderr
    );
}

/// Writes its own pid to `$PIDS/<cell version>`, then becomes `sleep 777`: a grandchild
/// of the runner (the cell's `sh` waits for it), as `sh -c 'sleep 777; true'` makes one.
const SLEEPER: &str = r#"sh -c 'echo $$ > "$PIDS/$CUDRV_MATRIX_VERSION"; exec sleep 777'; true"#;

/// Whether `pid` is a live (not zombie) `sleep`.
fn sleeping(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
    stat.contains("(sleep)") && state != Some(Some('Z'))
}

/// The pids the sleepers of `dir` wrote (waits up to a minute for `count` of them).
fn sleeper_pids(dir: &Path, count: usize) -> Vec<i32> {
    for _ in 0..1200 {
        let pids: Vec<i32> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
            .filter_map(|t| t.trim().parse().ok())
            .collect();
        if pids.len() == count {
            return pids;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the cells' sleeps did not all start (their pid files are missing)");
}

/// Checks that no sleeper of `pids` is left (after a grace of up to 10 s for SIGKILL to
/// land); kills any that is, so that a failing test leaves nothing behind.
fn assert_no_sleeper_left(pids: &[i32]) {
    let mut left: Vec<i32> = pids.to_vec();
    for _ in 0..200 {
        left.retain(|&p| sleeping(p));
        if left.is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for &p in &left {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), nix::sys::signal::Signal::SIGKILL);
    }
    panic!("the cells' sleeps {left:?} survived the runner");
}

#[test]
fn the_timeout_kills_the_whole_process_group() {
    let pids = tempfile::tempdir().unwrap();
    let out = matrix(
        &["--versions", "12.0,12.4", "-j", "2", "--timeout", "5", "--json", "--", "sh", "-c", SLEEPER],
        &[("PIDS", pids.path().to_str().unwrap())],
    );
    let sleepers = sleeper_pids(pids.path(), 2);
    assert_no_sleeper_left(&sleepers);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    for v in ["12.0", "12.4"] {
        assert_eq!(cell(&out.json(), v)["error"], "timed out: killed");
    }
}

#[test]
fn what_a_cell_leaves_running_is_killed_when_it_ends() {
    let pids = tempfile::tempdir().unwrap();
    let script = r#"sh -c 'echo $$ > "$PIDS/$CUDRV_MATRIX_VERSION"; exec sleep 777' &
while [ ! -s "$PIDS/$CUDRV_MATRIX_VERSION" ]; do sleep 0.01; done"#;
    let out = matrix(&["--versions", "12.0", "--", "sh", "-c", script], &[("PIDS", pids.path().to_str().unwrap())]);
    let sleepers = sleeper_pids(pids.path(), 1);
    assert_no_sleeper_left(&sleepers);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
}

#[test]
fn a_signal_to_the_runner_kills_every_cell_and_removes_its_scratch_folder() {
    use nix::sys::signal::{kill, Signal};
    for (signal, code, name) in
        [(Signal::SIGINT, 130, "SIGINT"), (Signal::SIGTERM, 143, "SIGTERM"), (Signal::SIGHUP, 129, "SIGHUP")]
    {
        let pids = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudrv-matrix"));
        for name in CLEARED {
            cmd.env_remove(name);
        }
        let mut runner = cmd
            .args(["--versions", "11.8,12.0,12.4", "-j", "2", "--", "sh", "-c", SLEEPER])
            .env("PIDS", pids.path())
            .env("TMPDIR", tmp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Two cells run (-j 2); the third waits for a slot.
        let sleepers = sleeper_pids(pids.path(), 2);
        let runner_pid = nix::unistd::Pid::from_raw(i32::try_from(runner.id()).unwrap());
        kill(runner_pid, signal).unwrap();
        let mut status = None;
        for _ in 0..600 {
            status = runner.try_wait().unwrap();
            if status.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let Some(status) = status else {
            let _ = runner.kill();
            assert_no_sleeper_left(&sleepers);
            panic!("{name}: the runner did not stop");
        };
        let out = runner.wait_with_output().unwrap();
        assert_no_sleeper_left(&sleepers);
        assert_eq!(status.code(), Some(code), "{name}: {status}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("stopped by {name}: every cell was killed")), "{stderr}");
        assert_eq!(out.stdout, b"", "{name}");
        // The third cell never started; the scratch folder is gone.
        assert_eq!(std::fs::read_dir(pids.path()).unwrap().count(), 2, "{name}");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: the runner left {left:?}");
    }
}

#[test]
fn a_panic_message_is_in_the_tail_under_rust_backtrace() {
    let mut args = vec!["--versions", "12.0", "--tail", "10", "--json", "--"];
    let cmd = probe_command();
    args.extend(cmd.iter().map(String::as_str));
    let out = matrix(&args, &[(PROBE, "panic"), ("RUST_BACKTRACE", "1")]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let doc = out.json();
    let tail: Vec<&str> =
        cell(&doc, "12.0")["output_tail"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(tail.len() <= 10, "{tail:#?}");
    let at = tail.iter().position(|l| l.contains("panicked at")).unwrap_or_else(|| panic!("{tail:#?}"));
    assert_eq!(tail.get(at + 1), Some(&"the probe's own panic message"), "{tail:#?}");
    // And the end of the output, the harness's verdict.
    assert!(tail.last().unwrap().contains("test result: FAILED"), "{tail:#?}");
}

/// Validates `xml` against tests/junit.xsd (tests/xsd: every rule the schema states):
/// `Err` with one line per error, naming the element, its line and what is wrong.
fn check_junit(xml: &Path) -> Result<(), String> {
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("junit.xsd");
    let schema =
        xsd::Schema::load(&std::fs::read_to_string(&xsd).unwrap()).unwrap_or_else(|e| panic!("junit.xsd: {e}"));
    schema.validate(&std::fs::read_to_string(xml).unwrap()).map_err(|errors| errors.join("\n"))
}

fn validate_junit(xml: &Path) {
    if let Err(e) = check_junit(xml) {
        panic!("{} does not validate against junit.xsd:\n{e}", xml.display());
    }
}

/// A cell per outcome: pass, exit status, signal, and output that XML must escape.
const MIXED: &str = r#"printf "cuMemcpyBatchAsync\tneeds driver 12.8\n" >> "$CUDRV_GATED_LOG"
case "$CUDRV_MATRIX_VERSION" in
  11.8) printf '<tag attr="x"> & \033[31mred\033[0m \001 ]]>\n'; exit 3;;
  12.0) kill -9 $$;;
esac"#;

#[test]
fn the_junit_report_validates_against_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("matrix.xml");
    let out = matrix(&["--versions", "11.8,12.0,12.4", "--junit", xml.to_str().unwrap(), "--", "sh", "-c", MIXED], &[]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    // The text grid is still printed.
    assert_eq!(out.rows().len(), 3, "{}", out.stdout);
    validate_junit(&xml);
    let text = std::fs::read_to_string(&xml).unwrap();
    assert_eq!(text.matches("<testcase ").count(), 3, "{text}");
    assert!(text.contains(r#"<testsuites name="cudrv-matrix" tests="3""#), "{text}");
    assert!(text.contains(r#"failures="2""#), "{text}");
    assert!(text.contains(r#"<testcase name="11.8" classname="cudrv-matrix.stand-in""#), "{text}");
    assert!(
        text.contains(r#"<failure message="exit 3" type="exit">&lt;tag attr=&quot;x&quot;&gt; &amp; red"#),
        "{text}"
    );
    assert!(text.contains(r#"<failure message="signal 9 (SIGKILL)" type="signal">(no output)</failure>"#), "{text}");
    assert!(text.contains("<system-out>gated: cuMemcpyBatchAsync needs driver 12.8</system-out>"), "{text}");
}

#[test]
fn the_junit_test_fails_on_a_report_that_breaks_the_schema() {
    // The schema is strict enough to catch a broken report: a test case without a class
    // name, a negative time.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.xml");
    std::fs::write(
        &bad,
        r#"<testsuites tests="1" failures="0" errors="0"><testsuite name="s" tests="1" failures="0" errors="0"><testcase name="12.4" time="-1"/></testsuite></testsuites>"#,
    )
    .unwrap();
    let e = check_junit(&bad).unwrap_err();
    assert!(e.contains("<testcase> at line 1, column 101: attribute 'classname' is required but missing"), "{e}");
    assert!(e.contains("attribute 'time' = \"-1\" is not a valid seconds: less than its minimum"), "{e}");
    assert_eq!(e.lines().count(), 2, "{e}");
}

/// A valid report, then one break of each rule junit.xsd states: what the checker says.
#[test]
fn the_junit_check_enforces_each_rule_of_the_schema() {
    let schema = xsd::Schema::load(include_str!("junit.xsd")).unwrap();
    let valid = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="cudrv-matrix" tests="2" failures="1" errors="0" skipped="0" time="1.5" timestamp="2026-12-03T17:04:46.123+01:00" uuid="u">
  <testsuite name="s" tests="2" failures="1" errors="0" skipped="0" time="0" timestamp="2026-12-03T17:04:46Z" hostname="h" id="1" package="p">
    <properties><property name="k" value=""/></properties>
    <testcase name="12.4" classname="c" time="0.25" assertions="3" file="f" line="7">
      <properties/>
      <failure message="exit 1" type="exit">details &amp; more</failure>
      <system-out>out</system-out>
      <system-err>err</system-err>
    </testcase>
    <testcase name="13.0" classname="c"><skipped message="m"/></testcase>
    <system-out/>
  </testsuite>
</testsuites>"#;
    assert_eq!(schema.validate(valid), Ok(()));
    // (what replaces what in the valid report, what the message must say)
    let breaks: &[(&str, &str, &str)] = &[
        // The root element's required attributes.
        (
            r#"name="cudrv-matrix" tests="2""#,
            r#"name="cudrv-matrix""#,
            "<testsuites> at line 2, column 1: attribute 'tests' is required but missing",
        ),
        // Integer and decimal attributes.
        (
            r#"failures="1" errors="0" skipped="0" time="1.5""#,
            r#"failures="1.0" errors="0" skipped="0" time="1.5""#,
            "attribute 'failures' = \"1.0\" is not a valid xs:nonNegativeInteger (not an integer)",
        ),
        (
            r#"errors="0" skipped="0" time="0""#,
            r#"errors="-2" skipped="0" time="0""#,
            "attribute 'errors' = \"-2\" is not a valid xs:nonNegativeInteger (negative)",
        ),
        (
            r#"skipped="0" time="0""#,
            r#"skipped="x" time="0""#,
            "attribute 'skipped' = \"x\" is not a valid xs:nonNegativeInteger",
        ),
        (r#"time="0.25""#, r#"time="1e3""#, "attribute 'time' = \"1e3\" is not a valid seconds (not a decimal number)"),
        (
            r#"time="0.25""#,
            r#"time="-0.01""#,
            "attribute 'time' = \"-0.01\" is not a valid seconds: less than its minimum",
        ),
        (r#"line="7""#, r#"line="seven""#, "attribute 'line' = \"seven\" is not a valid xs:nonNegativeInteger"),
        // Dates and times.
        (
            "2026-12-03T17:04:46Z",
            "2026-02-30T17:04:46Z",
            "attribute 'timestamp' = \"2026-02-30T17:04:46Z\" is not a valid xs:dateTime",
        ),
        (
            "2026-12-03T17:04:46Z",
            "2026-12-03 17:04:46",
            "is not a valid xs:dateTime (not an xs:dateTime: no 'T' between date and time)",
        ),
        ("2026-12-03T17:04:46Z", "2026-12-03T25:00:00Z", "the time is out of range"),
        // Non-empty names.
        (
            r#"<testcase name="12.4""#,
            r#"<testcase name="""#,
            "attribute 'name' = \"\" is not a valid nonEmpty: shorter than 1 characters",
        ),
        (
            r#"<property name="k""#,
            r#"<property name="""#,
            "<property> at line 4, column 17: attribute 'name' = \"\" is not a valid nonEmpty",
        ),
        (r#" value="""#, "", "<property> at line 4, column 17: attribute 'value' is required but missing"),
        // Undeclared attributes.
        (
            r#"uuid="u""#,
            r#"uuid="u" version="1""#,
            "<testsuites> at line 2, column 1: attribute 'version' is not allowed",
        ),
        (
            r#"<skipped message="m"/>"#,
            r#"<skipped message="m" type="t"/>"#,
            "<skipped> at line 11, column 41: attribute 'type' is not allowed",
        ),
        (
            "<system-out>out",
            r#"<system-out a="1">out"#,
            "<system-out> at line 8, column 7: attribute 'a' is not allowed",
        ),
        // Children: which, how many, in which order.
        (
            r#"<testcase name="13.0" classname="c"><skipped message="m"/></testcase>"#,
            r#"<testcases name="13.0"/>"#,
            "<testsuite> at line 3, column 3: child element <testcases> is not expected here",
        ),
        (
            "<properties/>",
            "<property name=\"x\" value=\"y\"/>",
            "<testcase> at line 5, column 5: child element <property> is not expected here",
        ),
        (
            "<system-out>out</system-out>",
            "<failure/>",
            "<testcase> at line 5, column 5: child element <failure> is not expected here",
        ),
        (
            "<system-out>out</system-out>\n      <system-err>err</system-err>",
            "<system-err>err</system-err><system-out>out</system-out>",
            "child element <system-out> is not expected here",
        ),
        (
            "<properties/>\n      <failure",
            "<failure/><properties/>\n      <failure",
            "child element <properties> is not expected here",
        ),
        (
            "<system-out/>\n  </testsuite>",
            "<system-out/><testcase name=\"x\" classname=\"c\"/>\n  </testsuite>",
            "<testsuite> at line 3, column 3: child element <testcase> is not expected here",
        ),
        (
            "<testsuite name=\"s\"",
            "<properties/><testsuite name=\"s\"",
            "<testsuites> at line 2, column 1: missing child element: expected <testsuite>, found <properties>",
        ),
        // Text where only elements are allowed, elements where only text is.
        (
            "<properties/>",
            "stray text<properties/>",
            "<testcase> at line 5, column 5: text \"stray text\" is not allowed here (child elements only)",
        ),
        (
            "<skipped message=\"m\"/>",
            "<skipped message=\"m\"><b/></skipped>",
            "<skipped> at line 11, column 41: text only, found child element <b>",
        ),
        (
            "<property name=\"k\" value=\"\"/>",
            "<property name=\"k\" value=\"\">v</property>",
            "<property> at line 4, column 17: text \"v\" is not allowed here",
        ),
        // Elements in a namespace: the schema's are in none.
        (
            "<testsuites name",
            "<testsuites xmlns=\"urn:x\" name",
            "in namespace urn:x, the schema's elements are in none",
        ),
        // Not XML at all.
        ("</testsuites>", "", "not well-formed XML"),
    ];
    // The root element.
    let errors = schema.validate(r#"<testsuite name="s" tests="0" failures="0" errors="0"/>"#).unwrap_err();
    assert_eq!(errors, ["<testsuite> at line 1, column 1: not a root element the schema declares (<testsuites>)"]);
    for (from, to, message) in breaks {
        assert!(valid.contains(from), "{from:?} is not in the valid report");
        let broken = valid.replacen(from, to, 1);
        let errors = schema.validate(&broken).expect_err(&format!("{from:?} -> {to:?} should not validate"));
        assert!(errors.iter().any(|e| e.contains(message)), "{from:?} -> {to:?}: {message:?} not in {errors:#?}");
    }
}

/// The checker refuses a schema construct it does not implement rather than skipping
/// the rule.
#[test]
fn the_junit_check_refuses_schema_rules_it_does_not_know() {
    let schema = include_str!("junit.xsd");
    for (from, to, message) in [
        (
            r#"<xs:minInclusive value="0"/>"#,
            r#"<xs:maxInclusive value="9"/>"#,
            "the facet xs:maxInclusive on xs:decimal is not implemented",
        ),
        (r#"type="xs:dateTime""#, r#"type="xs:date""#, "the built-in type xs:date is not implemented"),
        (
            r#"elementFormDefault="qualified""#,
            r#"targetNamespace="urn:x""#,
            "attribute 'targetNamespace' is not implemented",
        ),
        (
            r#"<xs:choice minOccurs="0" maxOccurs="1">"#,
            r#"<xs:choice minOccurs="0" maxOccurs="1"><xs:any/>"#,
            "xs:any is not implemented",
        ),
        (
            r#"type="nonEmpty" use="required""#,
            r#"type="nonEmpty" use="required" default="x""#,
            "attribute 'default' is not implemented",
        ),
        (r#"type="seconds"/>"#, r#"type="testcase"/>"#, "where a simple type is needed"),
        (r#"type="problem""#, r#"type="problems""#, "none is defined"),
    ] {
        assert!(schema.contains(from), "{from:?} is not in junit.xsd");
        let changed = schema.replacen(from, to, 1);
        let e = xsd::Schema::load(&changed).err().unwrap_or_else(|| panic!("{from:?} -> {to:?} was accepted"));
        assert!(e.contains(message), "{from:?} -> {to:?}: {e}");
    }
}

#[test]
fn json_file_and_text_grid_together() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.json");
    let out = matrix(&["--versions", "12.0,12.4", "--json", file.to_str().unwrap(), "--", "true"], &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.rows().len(), 2, "{}", out.stdout);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(versions(&doc), ["12.0", "12.4"]);
    assert_eq!(cell(&doc, "12.4")["outcome"], "passed");
    // A report that cannot be written is exit 5.
    let out = matrix(&["--versions", "12.0", "--json", "/nonexistent/m.json", "--", "true"], &[]);
    assert_eq!(out.code, Some(5), "{}", out.stderr);
    let out = matrix(&["--versions", "12.0", "--junit", "/nonexistent/m.xml", "--", "true"], &[]);
    assert_eq!(out.code, Some(5), "{}", out.stderr);
}

/// Runs a matrix writing its JSON to `dir/name`; returns that path.
fn json_run(dir: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let file = dir.join(name).to_str().unwrap().to_string();
    let mut all = vec!["--json", file.as_str()];
    all.extend_from_slice(args);
    let out = matrix(&all, env);
    assert!(out.code == Some(0) || out.code == Some(1), "{}", out.stderr);
    file
}

#[test]
fn merge_reads_several_runs_into_one_grid() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"[ "$CUDRV_MATRIX_VERSION" != 12.4 ] || { echo "fails on 12.4"; exit 2; }"#;
    let a = json_run(dir.path(), "a.json", &["--versions", "12.4,11.8", "--", "sh", "-c", script], &[]);
    let b = json_run(dir.path(), "b.json", &["--versions", "13.0,12.0", "--", "sh", "-c", script], &[]);
    let xml = dir.path().join("merged.xml");
    let out = matrix(&["merge", &b, &a, "--junit", xml.to_str().unwrap()], &[]);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let firsts: Vec<&str> = out.rows().iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(firsts, ["11.8", "12.0", "12.4", "13.0"], "{}", out.stdout);
    assert!(out.stdout.contains("3 of 4 passed, 1 failed (stand-in): 12.4"), "{}", out.stdout);
    assert!(out.stdout.contains("--- 12.4: exit 2 ---\nfails on 12.4\n"), "{}", out.stdout);
    validate_junit(&xml);
    assert_eq!(std::fs::read_to_string(&xml).unwrap().matches("<testcase ").count(), 4);

    let out = matrix(&["merge", &a, &b, "--json"], &[]);
    let doc = out.json();
    assert_eq!(versions(&doc), ["11.8", "12.0", "12.4", "13.0"]);
    assert_eq!(doc["summary"], serde_json::json!({"cells": 4, "passed": 3, "failed": 1}));
    assert_eq!(cell(&doc, "13.0")["source"], b.as_str());
    assert_eq!(doc["sources"].as_array().unwrap().len(), 2);
    // A merged document merges again.
    let merged = dir.path().join("ab.json");
    std::fs::write(&merged, &out.stdout).unwrap();
    let c = json_run(dir.path(), "c.json", &["--versions", "13.5", "--", "sh", "-c", script], &[]);
    let out = matrix(&["merge", merged.to_str().unwrap(), &c], &[]);
    assert_eq!(out.rows().len(), 5, "{}{}", out.stdout, out.stderr);
}

#[test]
fn merge_refuses_a_cell_two_files_have() {
    let dir = tempfile::tempdir().unwrap();
    let a = json_run(dir.path(), "a.json", &["--versions", "12.0,12.4", "--", "true"], &[]);
    let b = json_run(dir.path(), "b.json", &["--versions", "12.4,13.0", "--", "true"], &[]);
    let out = matrix(&["merge", &a, &b], &[]);
    assert_eq!(out.code, Some(2), "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains(&format!("cell 12.4 (stand-in) is in both {a} and {b}")), "{}", out.stderr);

    // Other commands, or not a document at all.
    let c = json_run(dir.path(), "c.json", &["--versions", "11.8", "--", "sh", "-c", "true"], &[]);
    let out = matrix(&["merge", &a, &c], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("ran different commands"), "{}", out.stderr);
    let out = matrix(&["merge", &a, "/nonexistent.json"], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("/nonexistent.json"), "{}", out.stderr);
    std::fs::write(dir.path().join("x.json"), "{}").unwrap();
    let out = matrix(&["merge", dir.path().join("x.json").to_str().unwrap()], &[]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("not a cudrv-matrix --json document"), "{}", out.stderr);
}

#[test]
fn merge_keeps_cells_of_different_drivers_apart() {
    // Two CI runners, one driver each (the stand-in playing drivers 12.1 and 12.4), each
    // capping its driver at 12.0 and at its own version.
    let dir = tempfile::tempdir().unwrap();
    let lib = stand_in_lib();
    let runner = |name: &str, driver: &str| {
        let env = [("CUDRV_LIBCUDA", lib.as_str()), ("CUDRV_STANDIN_VERSION", driver)];
        let list = format!("12.0,{driver}");
        json_run(dir.path(), name, &["--real", "--versions", &list, "--", "true"], &env)
    };
    let (a, b) = (runner("a.json", "12.1"), runner("b.json", "12.4"));
    let out = matrix(&["merge", &a, &b], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let rows: Vec<Vec<&str>> = out.rows().iter().map(|r| r.split_whitespace().take(4).collect()).collect();
    assert_eq!(
        rows,
        [
            ["12.0", "real", "12.1", "pass"],
            ["12.0", "real", "12.4", "pass"],
            ["12.1", "real", "12.1", "pass"],
            ["12.4", "real", "12.4", "pass"]
        ]
    );
    assert!(out.stdout.contains("4 of 4 passed (real)"), "{}", out.stdout);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--versions", "12.x", "--", "true"][..],
        &["--versions", "14.0", "--", "true"],
        &["--versions", "12.7", "--", "true"],
        &["--versions", "14", "--", "true"],
        &["--versions", "13.0-12.0", "--", "true"],
        &["--versions", "12.4,", "--", "true"],
        &["--jobs", "0", "--", "true"],
        &["--real", "--stand-in", "--", "true"],
        &["--versions", "12.0"],
        &["--versions", "12.0", "--", "/nonexistent/command"],
        &["--timeout", "-1", "--", "true"],
        &["--timeout", "0", "--", "true"],
        &["--timeout", "soon", "--", "true"],
    ] {
        let out = matrix(args, &[]);
        assert_eq!(out.code, Some(2), "{args:?}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
    }
}

#[test]
fn cudrv_info_passes_on_every_stand_in_version() {
    // cudrv-info is another workspace binary; it is there when the workspace was built.
    let dir = Path::new(env!("CARGO_BIN_EXE_cudrv-matrix")).parent().unwrap();
    let info = dir.join("cudrv-info");
    if !info.is_file() {
        eprintln!("{} was not built; skipped", info.display());
        return;
    }
    let out = matrix(&["--json", "--", info.to_str().unwrap()], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let doc = out.json();
    assert_eq!(versions(&doc).len(), 21);
    assert!(doc["cells"].as_array().unwrap().iter().all(|c| c["passed"] == true));
}

#[test]
fn output_is_not_left_over_between_cells() {
    // Every cell has its own output file: a cell's tail never shows another's output.
    let script = r#"echo "from $CUDRV_MATRIX_VERSION"; exit 1"#;
    let out = matrix(&["--versions", "11.3,12.0,13.0", "-j", "3", "--json", "--", "sh", "-c", script], &[]);
    assert_eq!(out.code, Some(1));
    let doc = out.json();
    for v in ["11.3", "12.0", "13.0"] {
        assert_eq!(cell(&doc, v)["output_tail"], serde_json::json!([format!("from {v}")]));
    }
}

/// A C program linked with `-lcuda` (no CUDA headers): prints the driver version and exits
/// 0 if it is the cell's (`CUDRV_MATRIX_VERSION`).
const LINKED_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int cuDriverGetVersion(int *version);
int main(void) {
    int v = 0, major = 0, minor = 0;
    const char *want = getenv("CUDRV_MATRIX_VERSION");
    if (cuDriverGetVersion(&v) != 0) return 2;
    if (!want || sscanf(want, "%d.%d", &major, &minor) != 2) return 3;
    printf("libcuda.so.1 says %d\n", v);
    return v == major * 1000 + minor * 10 ? 0 : 1;
}
"#;

#[test]
fn a_program_linked_with_lcuda_loads_the_stand_in_of_its_cell() {
    let dir = tempfile::tempdir().unwrap();
    let lib = stand_in_lib();
    // Linked against the stand-in as libcuda.so, as against a CUDA toolkit's stub.
    std::os::unix::fs::symlink(&lib, dir.path().join("libcuda.so")).unwrap();
    let source = dir.path().join("linked.c");
    std::fs::write(&source, LINKED_C).unwrap();
    let program = dir.path().join("linked");
    let cc = Command::new("cc")
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .arg(format!("-L{}", dir.path().display()))
        .arg("-lcuda")
        .output()
        .expect("this test needs a C compiler, `cc` (install gcc or clang)");
    assert!(cc.status.success(), "cc: {}", String::from_utf8_lossy(&cc.stderr));
    // No LD_LIBRARY_PATH of ours: each cell's path finds libcuda.so.1 (the stand-in).
    let out = matrix(&["--versions", "11.8,12.4,13.0", "--", program.to_str().unwrap()], &[]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_eq!(out.rows().len(), 3, "{}", out.stdout);
}
