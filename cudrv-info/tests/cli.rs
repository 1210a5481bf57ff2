//! Runs the built `cudrv-info` binary and checks its output and exit codes.

use std::path::Path;
use std::process::{Command, Output};

/// Every variable cudrv or the stand-in reads, removed so the host's setup cannot leak in.
const ENV: [&str; 5] = [
    "CUDRV_LIBCUDA",
    "CUDRV_MAX_DRIVER_VERSION",
    "CUDRV_PER_THREAD_DEFAULT_STREAM",
    "CUDRV_STANDIN_VERSION",
    "CUDRV_STANDIN_DEVICES",
];

/// A command for the binary with a clean CUDRV_* environment.
fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cudrv-info"));
    for v in ENV {
        c.env_remove(v);
    }
    c.args(args);
    c
}

fn run(args: &[&str]) -> Output {
    cmd(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts the exit code, showing the output when it differs.
fn assert_code(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", stdout(o), stderr(o));
}

/// Asserts a bad-input failure: exit 2, nothing on stdout, one `cudrv-info: ` line on
/// stderr containing `needle`.
fn assert_bad_input(o: &Output, needle: &str) {
    assert_code(o, 2);
    assert_eq!(stdout(o), "");
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cudrv-info: "), "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_written_text(&err);
}

/// Asserts that a message is written text: no debug form of a cudrv type.
fn assert_written_text(message: &str) {
    for debug in ["cudaError_enum", "Status(", "Some(", "NotInDriver", "InvalidSetting {"] {
        assert!(!message.contains(debug), "debug text {debug:?} in: {message}");
    }
}

/// The output parsed as one JSON value (which also checks it is exactly one).
fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(o)))
}

/// The number after `key` (e.g. `"resolved: "`) in `text`.
fn number_after(text: &str, key: &str) -> usize {
    let rest = &text[text.find(key).unwrap_or_else(|| panic!("no {key:?} in:\n{text}")) + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

/// Whether the machine has a loadable NVIDIA driver (then the fallback cannot be shown):
/// decided from what the tool printed, never from its exit code alone.
fn real_driver_present(o: &Output) -> bool {
    let out = String::from_utf8_lossy(&o.stdout);
    let real = o.status.code() == Some(0) && !out.contains("cudrv stand-in") && !out.contains("\"stand_in\": {");
    if real {
        eprintln!("a CUDA driver is installed here; the no-driver fallback is not tested");
    }
    real
}

#[test]
fn stand_in_shows_its_device_and_resolved_entries() {
    let o = run(&["--driver", "stand-in"]);
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert!(out.starts_with("driver: cudrv stand-in (emulated CUDA 13.5; requested with --driver stand-in)\n"));
    assert!(out.contains("\nversion: 13.5\n"), "{out}");
    assert!(out.contains("bootstrap: cuGetProcAddress_v2"), "{out}");
    assert!(out.contains("  0: cudrv stand-in device, compute capability 9.0, 80.0 GiB"), "{out}");
    let resolved = number_after(&out, "  resolved: ");
    let variants = number_after(&out, "entry table: ");
    assert!(resolved > 0 && resolved < variants, "{out}");
    assert_eq!(number_after(&out, "gated by the driver version: "), 0);
}

#[test]
fn capped_stand_in_as_json() {
    let o = run(&["--driver", "stand-in", "--max-version", "12.4", "--json"]);
    assert_code(&o, 0);
    let v = json(&o);
    // The stand-in's report is under "stand_in", never at the top level.
    assert_eq!(v["origin"], "stand_in_requested");
    assert_eq!(v["driver"], serde_json::Value::Null);
    assert_eq!(v["devices"], serde_json::json!([]));
    let s = &v["stand_in"];
    assert_eq!(s["reason"], "requested");
    let d = &s["driver"];
    assert_eq!(d["version"], "12.4");
    assert_eq!(d["driver_version"], "13.5");
    assert_eq!(d["max_version"], "12.4");
    assert_eq!(d["capped"], true);
    assert_eq!(s["devices"][0]["name"], "cudrv stand-in device");
    assert_eq!(s["devices_error"], serde_json::Value::Null);
    let gated = s["summary"]["gated_by_version"].as_array().unwrap();
    assert!(gated.iter().any(|g| g["needs"] == "12.5" && g["count"].as_u64() > Some(0)), "{gated:?}");
    assert!(s["summary"]["gated"].as_u64() > Some(0));
    assert!(s["summary"]["names_unbound"].as_u64() > Some(0));
    assert!(s.get("entries").is_none() && v.get("entries").is_none(), "entries only with --all");
}

#[test]
fn capped_text_lists_gated_versions() {
    let o = run(&["--driver", "stand-in", "--max-version", "13.0"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("version: 13.0 (capped at 13.0; the driver reports 13.5)"), "{out}");
    assert!(out.contains("(needs 13.1: "), "{out}");
    assert!(!out.contains("needs 13.0"), "{out}");
}

#[test]
fn all_as_json_lists_every_entry() {
    let o = run(&["--driver", "stand-in", "--all", "--json"]);
    assert_code(&o, 0);
    let s = &json(&o)["stand_in"];
    let summary = &s["summary"];
    let variants = summary["variants"].as_u64().unwrap();
    let names = summary["names_bound"].as_u64().unwrap() + summary["names_unbound"].as_u64().unwrap();
    let entries = s["entries"].as_array().unwrap();
    let count = |kind: &str| entries.iter().filter(|e| e["kind"] == kind).count() as u64;
    assert_eq!(count("variant"), variants);
    assert_eq!(count("name"), names);
    assert!(entries.iter().any(|e| e["state"] == "not_requested"));
}

#[test]
fn all_as_text_shows_states_and_bindings() {
    let o = run(&["--driver", "stand-in", "--all", "--max-version", "12.0"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("\nvariants:\n") && out.contains("\nnames:\n"), "{out}");
    assert!(out.contains("needs driver 12.8, bound to nothing"), "{out}");
    assert!(out.contains("bound to cuInit_v2000"), "{out}");
    assert!(out.contains("not requested (per-thread"), "{out}");
}

#[test]
fn per_thread_option_requests_per_thread_variants() {
    let o = run(&["--driver", "stand-in", "--per-thread-default-stream"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("per-thread default stream: on"), "{out}");
    assert_eq!(number_after(&out, "--per-thread-default-stream): "), 0);
}

#[test]
fn stand_in_version_and_devices_come_from_the_environment() {
    let o = cmd(&["--driver", "stand-in"])
        .env("CUDRV_STANDIN_VERSION", "12.4")
        .env("CUDRV_STANDIN_DEVICES", "0")
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("emulated CUDA 12.4"), "{out}");
    assert!(out.contains("\ndevices: 0\n"), "{out}");
}

#[test]
fn a_too_old_driver_fails_to_load() {
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_VERSION", "11.0").output().unwrap();
    assert_code(&o, 1);
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is older than 11.3"), "{err}");
}

#[test]
fn no_driver_falls_back_to_the_stand_in() {
    let o = run(&[]);
    if real_driver_present(&o) {
        return;
    }
    assert_code(&o, 3);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cudrv-info: no CUDA driver found: looked for libcuda.so.1"));
    let out = stdout(&o);
    assert!(
        out.starts_with("driver: cudrv stand-in (emulated CUDA 13.5; no NVIDIA driver on this machine)\n"),
        "{out}"
    );
    assert!(out.contains("cudrv stand-in device"), "{out}");
}

#[test]
fn no_driver_falls_back_to_the_stand_in_as_json() {
    let o = run(&["--json"]);
    if real_driver_present(&o) {
        return;
    }
    assert_code(&o, 3);
    assert_eq!(stderr(&o).lines().count(), 1);
    let v = json(&o);
    assert_eq!(v["origin"], "stand_in_no_driver_found");
    // A script counting this machine's devices gets 0; the stand-in's are under its key.
    assert_eq!(v["devices"], serde_json::json!([]));
    assert_eq!(v["driver"], serde_json::Value::Null);
    assert_eq!(v["stand_in"]["reason"], "no_driver_found");
    assert_eq!(v["stand_in"]["devices"][0]["name"], "cudrv stand-in device");
}

/// The stand-in built as a `libcuda.so.1`-like library, if cargo built the cdylib.
fn stand_in_library() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_BIN_EXE_cudrv-info")).parent()?;
    let found =
        [dir.join("deps"), dir.to_path_buf()].into_iter().map(|d| d.join("libcudrv_standin.so")).find(|p| p.exists());
    if found.is_none() {
        eprintln!("libcudrv_standin.so was not built; loading a driver library is not tested");
    }
    found
}

#[test]
fn a_driver_library_is_reported_as_a_real_driver() {
    let Some(lib) = stand_in_library() else {
        return;
    };
    let lib = lib.to_str().unwrap();
    let o = run(&["--driver", lib]);
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert!(out.starts_with(&format!("driver: {lib}\n")), "{out}");
    assert!(out.contains("cudrv stand-in device"), "{out}");

    let o = cmd(&["--json"]).env("CUDRV_LIBCUDA", lib).env("CUDRV_STANDIN_VERSION", "11.8").output().unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["stand_in"], serde_json::Value::Null);
    assert_eq!(v["origin"], "library");
    assert_eq!(v["driver"]["version"], "11.8");
    assert_eq!(v["driver"]["get_proc_address"], "v1");
    assert_eq!(v["devices"][0]["name"], "cudrv stand-in device");
}

#[test]
fn a_missing_driver_path_is_bad_input() {
    let o = run(&["--driver", "/nonexistent"]);
    assert_bad_input(&o, "/nonexistent");
}

#[test]
fn a_missing_driver_path_from_the_environment_is_bad_input() {
    let o = cmd(&[]).env("CUDRV_LIBCUDA", "/nonexistent/libcuda.so.1").output().unwrap();
    assert_bad_input(&o, "/nonexistent/libcuda.so.1");
}

#[test]
fn a_library_that_is_not_a_driver_is_bad_input() {
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libm.so.6 not found");
    let o = run(&["--driver", libm]);
    assert_bad_input(&o, "not a CUDA driver");
}

#[test]
fn an_unparsable_version_is_bad_input() {
    assert_bad_input(&run(&["--max-version", "banana"]), "\"banana\"");
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_MAX_DRIVER_VERSION", "banana").output().unwrap();
    assert_bad_input(&o, "CUDRV_MAX_DRIVER_VERSION");
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["--no-such-flag"]);
    assert_code(&o, 2);
    assert_eq!(stdout(&o), "");
    assert_bad_input(&run(&["--driver", ""]), "--driver");
}

#[test]
fn help_documents_the_exit_codes() {
    let o = run(&["--help"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    for s in ["Exit codes:", "\n  0  ", "\n  1  ", "\n  2  ", "\n  3  ", "\n  4  ", "\n  5  ", "schema_version"] {
        assert!(out.contains(s), "no {s:?} in:\n{out}");
    }
}

#[test]
fn help_shows_examples_that_run() {
    let o = run(&["--help"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let start = out.find("\nExamples:\n").unwrap_or_else(|| panic!("no Examples section in:\n{out}"));
    let end = out.find("\nExit codes:").unwrap();
    assert!(start < end, "the examples come first:\n{out}");
    let examples: Vec<&str> = out[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("  cudrv-info"))
        .map(|l| l.split("  ").next().unwrap_or_default().trim())
        .collect();
    assert!((4..=8).contains(&examples.len()), "{examples:?}");
    assert!(out[start..end].contains("cudrv-info || test $? -eq 3"), "the set -e line:\n{out}");
    // Each example is a valid command line: it runs to a report (never a usage error).
    for e in examples {
        let args: Vec<&str> = e.split("||").next().unwrap_or_default().split_whitespace().collect();
        let o = run(&args);
        let err = stderr(&o);
        assert!(!err.contains("Usage:"), "cudrv-info {e}: {err}");
        match o.status.code() {
            Some(0 | 3 | 4) => assert!(!stdout(&o).is_empty(), "cudrv-info {e}"),
            // A driver with no device 0 (a machine without a GPU that has a driver).
            Some(2) if err.starts_with("cudrv-info: --device 0: ") => {}
            other => panic!("cudrv-info {e}: {other:?}\n{err}"),
        }
    }
}

#[test]
fn a_bad_stand_in_version_is_bad_input() {
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_VERSION", "banana").output().unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("CUDRV_STANDIN_VERSION=\"banana\" is not valid"), "{err}");
}

/// Runs `c` with a watchdog: a command that has not ended after a minute is killed and
/// the test fails (so a hang, the defect some tests guard against, cannot hang the suite).
fn output_with_watchdog(mut c: Command) -> Output {
    use std::process::Stdio;
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("cudrv-info did not end within a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_driver_path_that_is_not_a_regular_file_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("libcuda.so.1");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let link = dir.path().join("link.so");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();

    for path in [&fifo, &link] {
        let o = output_with_watchdog(cmd(&["--driver", path.to_str().unwrap()]));
        assert_bad_input(&o, "is a FIFO or a pipe: a CUDA driver library must be a regular file");
        // The same from the environment.
        let mut c = cmd(&[]);
        c.env("CUDRV_LIBCUDA", path);
        let o = output_with_watchdog(c);
        assert_bad_input(&o, "is a FIFO");
    }
    let o = run(&["--driver", dir.path().to_str().unwrap()]);
    assert_bad_input(&o, "is a directory");
}

#[test]
fn a_bad_stand_in_device_count_is_bad_input() {
    for bad in ["abc", "9", "-1"] {
        let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_DEVICES", bad).output().unwrap();
        assert_bad_input(&o, &format!("CUDRV_STANDIN_DEVICES=\"{bad}\" is not valid"));
    }
    let o = cmd(&[]).env("CUDRV_STANDIN_DEVICES", "abc").output().unwrap();
    if !real_driver_present(&o) {
        assert_bad_input(&o, "CUDRV_STANDIN_DEVICES=\"abc\" is not valid");
    }
}

#[test]
fn the_max_version_flag_overrides_a_bad_variable() {
    let o = cmd(&["--driver", "stand-in", "--max-version", "12.4"])
        .env("CUDRV_MAX_DRIVER_VERSION", "abc")
        .env("CUDRV_PER_THREAD_DEFAULT_STREAM", "1")
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("version: 12.4 (capped at 12.4; the driver reports 13.5)"), "{out}");
    // The other variables are still read.
    assert!(out.contains("per-thread default stream: on"), "{out}");
    let o = cmd(&["--driver", "stand-in", "--max-version", "12.4"])
        .env("CUDRV_PER_THREAD_DEFAULT_STREAM", "maybe")
        .output()
        .unwrap();
    assert_bad_input(&o, "CUDRV_PER_THREAD_DEFAULT_STREAM=\"maybe\" is not valid");
}

#[test]
fn messages_name_codes_instead_of_debug_text() {
    // An emulated 2.0 driver refuses cuDriverGetVersion at ABI 2020.
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_VERSION", "2.0").output().unwrap();
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("cuDriverGetVersion failed"), "{err}");
    assert!(err.contains("CUDA_ERROR_INVALID_VALUE (1)"), "{err}");
    assert_written_text(&err);
}

#[test]
fn a_full_stdout_is_an_error() {
    // `cudrv-info ... >/dev/full`: every write fails with ENOSPC. The report, the help and
    // the version alike: exit 5 and a line on stderr, never 0 with nothing shown.
    let cases = [
        &["--driver", "stand-in"][..],
        &["--driver", "stand-in", "--json", "--all"],
        &[],
        &["--help"],
        &["-h"],
        &["--version"],
        &["-V"],
    ];
    for args in cases {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = cmd(args).stdout(full).output().unwrap();
        assert_code(&o, 5);
        let err = stderr(&o);
        // Without a driver, the fallback line comes first.
        let last = err.lines().last().unwrap_or_default();
        assert!(last.starts_with("cudrv-info: cannot write to stdout: No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_closed_stdout_is_an_error() {
    // `cudrv-info >&-`: the shell closes descriptor 1 and runs the tool.
    for args in [&["--driver", "stand-in"][..], &["--driver", "stand-in", "--json"], &["--help"], &[]] {
        let mut c = Command::new("sh");
        c.arg("-c").arg(r#"exec "$0" "$@" >&-"#).arg(env!("CARGO_BIN_EXE_cudrv-info")).args(args);
        for v in ENV {
            c.env_remove(v);
        }
        let o = c.output().unwrap();
        assert_code(&o, 5);
        let err = stderr(&o);
        // Without a driver, the fallback line comes first.
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(last, "cudrv-info: cannot write to stdout: it was closed when cudrv-info started", "{args:?}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_closed_pipe_is_an_error() {
    // A socket whose other end is closed before the tool starts: every write fails with
    // EPIPE, with no race against the reader.
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(ours);
    let o = cmd(&["--driver", "stand-in", "--all"]).stdout(std::os::fd::OwnedFd::from(theirs)).output().unwrap();
    assert_code(&o, 5);
    let err = stderr(&o);
    assert!(err.starts_with("cudrv-info: cannot write to stdout: Broken pipe"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_schema_and_header_versions_are_shown() {
    let o = run(&["--driver", "stand-in", "--json"]);
    let v = json(&o);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["header_version"], "13.5");
    assert_eq!(v["header_version_code"], 13050);
    let o = run(&["--driver", "stand-in"]);
    assert!(stdout(&o).contains("\nheader: 13.5 "), "{}", stdout(&o));
}

#[test]
fn devices_show_their_uuid_and_pci_bus_id() {
    let o = run(&["--driver", "stand-in"]);
    let out = stdout(&o);
    assert!(out.contains("\n     UUID: GPU-63756472-762d-7374-616e-64696e2d3000\n"), "{out}");
    // The stand-in answers cuDeviceGetPCIBusId as the real driver of docs/driver-facts.md does.
    assert!(out.contains("\n     PCI bus id: 0000:00:06.0\n"), "{out}");
    assert!(!out.contains("multiprocessors:"), "attributes only with --all: {out}");

    let v = json(&run(&["--driver", "stand-in", "--json"]));
    let d = &v["stand_in"]["devices"][0];
    assert_eq!(d["uuid"], "GPU-63756472-762d-7374-616e-64696e2d3000");
    assert_eq!(d["pci_bus_id"], "0000:00:06.0");
    assert!(d.get("attributes").is_none());
}

#[test]
fn all_shows_the_device_attributes() {
    let o = run(&["--driver", "stand-in", "--all"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    for s in ["multiprocessors:", "warp size:", "max threads per block:", "compute mode:", "ECC enabled:"] {
        assert!(out.contains(s), "no {s:?} in:\n{out}");
    }
    let v = json(&run(&["--driver", "stand-in", "--all", "--json"]));
    let a = &v["stand_in"]["devices"][0]["attributes"];
    assert_eq!(a["multiprocessor_count"], 132);
    assert_eq!(a["warp_size"], 32);
    assert_eq!(a["max_threads_per_block"], 1024);
    assert_eq!(a["compute_mode"], "default");
    assert_eq!(a["ecc_enabled"], true);
    for key in ["clock_rate_khz", "l2_cache_size_bytes", "max_grid_dim_x", "cooperative_launch", "managed_memory"] {
        assert!(a.get(key).is_some(), "no {key} in {a}");
    }
}

#[test]
fn device_shows_only_that_device() {
    let o =
        cmd(&["--driver", "stand-in", "--device", "1", "--json"]).env("CUDRV_STANDIN_DEVICES", "3").output().unwrap();
    assert_code(&o, 0);
    let s = &json(&o)["stand_in"];
    assert_eq!(s["device_count"], 3);
    let devices = s["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0]["ordinal"], 1);

    let o = cmd(&["--driver", "stand-in", "--device", "2"]).env("CUDRV_STANDIN_DEVICES", "3").output().unwrap();
    assert!(stdout(&o).contains("devices: 3 (showing 1)\n  2: cudrv stand-in device"), "{}", stdout(&o));

    assert_bad_input(&run(&["--driver", "stand-in", "--device", "1"]), "--device 1: the driver has 1 device");
    let o = cmd(&["--driver", "stand-in", "--device", "0"]).env("CUDRV_STANDIN_DEVICES", "0").output().unwrap();
    assert_bad_input(&o, "the driver has no devices");
    assert_code(&run(&["--driver", "stand-in", "--device", "-1"]), 2);
}

#[test]
fn entry_answers_for_one_entry_with_an_exit_code() {
    let o = run(&["--driver", "stand-in", "--entry", "cuMemAlloc"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    for s in ["entry: cuMemAlloc\n", "bound to: cuMemAlloc_v3020\n", "state: resolved", "needs: driver 3.2\n"] {
        assert!(out.contains(s), "no {s:?} in:\n{out}");
    }
    assert!(!out.contains("entry table:"), "{out}");

    // Gated by the cap: exit 4.
    let o = run(&["--driver", "stand-in", "--max-version", "12.0", "--entry", "cuLaunchHostFunc_v13010", "--json"]);
    assert_code(&o, 4);
    let e = &json(&o)["stand_in"]["entry"];
    assert_eq!(e["state"], "needs_driver");
    assert_eq!(e["resolved"], false);
    assert_eq!(e["needs"], "13.1");
    assert_eq!(e["kind"], "variant");

    // A name bound to nothing under the cap, and a per-thread variant not requested.
    let o = run(&["--driver", "stand-in", "--max-version", "12.0", "--entry", "cuStreamGetDevice", "--json"]);
    assert_code(&o, 4);
    let e = &json(&o)["stand_in"]["entry"];
    assert_eq!(e["bound"], serde_json::Value::Null);
    assert_eq!(e["needs"], "12.8");
    assert_code(&run(&["--driver", "stand-in", "--entry", "cuMemcpyAsync_v7000_ptsz"]), 4);
    assert_code(
        &run(&["--driver", "stand-in", "--per-thread-default-stream", "--entry", "cuMemcpyAsync_v7000_ptsz"]),
        0,
    );

    assert_bad_input(&run(&["--driver", "stand-in", "--entry", "cuNoSuchCall"]), "\"cuNoSuchCall\"");
}

#[test]
fn entry_without_a_driver_answers_for_the_stand_in_with_code_3() {
    let o = run(&["--entry", "cuLaunchHostFunc_v13010", "--json"]);
    if real_driver_present(&o) {
        return;
    }
    assert_code(&o, 3);
    let v = json(&o);
    assert!(v.get("entry").is_none(), "{v}");
    assert_eq!(v["stand_in"]["entry"]["state"], "resolved");
}

#[test]
fn state_filters_the_listing() {
    for (filter, code) in [("gated", "needs_driver"), ("resolved", "resolved"), ("not-requested", "not_requested")] {
        let o = run(&["--driver", "stand-in", "--max-version", "12.0", "--state", filter, "--json"]);
        assert_code(&o, 0);
        let entries = json(&o)["stand_in"]["entries"].as_array().unwrap().clone();
        assert!(!entries.is_empty(), "{filter}");
        assert!(entries.iter().all(|e| e["state"] == code), "{filter}");
    }
    let o = run(&["--driver", "stand-in", "--max-version", "12.0", "--state", "missing,gated"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let listed = &out[out.find("\nvariants:\n").unwrap()..];
    assert!(listed.contains("needs driver 12.8"), "{out}");
    assert!(!listed.contains("resolved (ABI"), "{out}");
    assert_code(&run(&["--driver", "stand-in", "--state", "bogus"]), 2);
}
