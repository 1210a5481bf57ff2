//! cudrv-matrix end to end: grids over the stand-in built with the workspace, exit codes,
//! the JSON document, the gated-entry log, and `--real` over the stand-in loaded as if it
//! were the system's driver.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Variables of the caller's environment that would change what the runner does.
const CLEARED: &[&str] = &[
    "CUDRV_LIBCUDA",
    "CUDRV_MAX_DRIVER_VERSION",
    "CUDRV_STANDIN_VERSION",
    "CUDRV_STANDIN_LIB",
    "CUDRV_GATED_LOG",
    "CUDRV_MATRIX_VERSION",
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

/// Runs the runner (`exe`) with `args` and `env` in a clean environment, with its temporary
/// folder in a fresh one, and checks that it left nothing there.
fn run_exe(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(args).env("TMPDIR", tmp.path());
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
    let detail = out.stdout.split_once("Gated entries asked for:\n").unwrap().1;
    assert_eq!(
        detail.lines().collect::<Vec<_>>(),
        [
            "  11.8  cuLaunchHostFunc_v2  needs driver 13.1",
            "  11.8  cuMemcpyBatchAsync  needs driver 12.8",
            "  13.0  cuLaunchHostFunc_v2  needs driver 13.1",
        ]
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
fn usage_errors_exit_2() {
    for args in [
        &["--versions", "12.x", "--", "true"][..],
        &["--versions", "14.0", "--", "true"],
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
