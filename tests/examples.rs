//! Runs every example program against the stand-in driver (the `cdylib`, as
//! `CUDRV_LIBCUDA`) and checks that it exits 0 and prints its verification line; runs
//! `version_fallback` under every emulated driver version and checks the path it takes.
//!
//! This test builds nothing: the example binaries are the ones in `target/<profile>/examples/`
//! that `cargo test` (without target filters) or `cargo build --examples` builds. A missing
//! or out-of-date binary fails the test with the command to run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Examples that need a real GPU: `handles_check` and `real_driver_check` check what only
/// a real driver does.
const GPU_ONLY: &[&str] = &["handles_check", "real_driver_check"];

/// Every example the stand-in runs: its name, `CUDRV_STANDIN_DEVICES`, and the line (a part
/// of it) that says its result was verified.
const EXAMPLES: &[(&str, u32, &str)] = &[
    ("device_query", 1, "device 0: cudrv stand-in device"),
    ("vector_add", 1, "vector_add through a library: 1048576 values, 0 wrong"),
    ("saxpy_streams", 1, "saxpy over 4 streams: 1048576 values, 0 wrong"),
    ("graph_replay", 1, "(captured kernel node): host node ran 100 times, 65536 values, 0 wrong"),
    (
        "host_callback",
        1,
        "host functions ran in this order: [\"launch_host_fn\", \"HostFn\"], on a driver thread: true, data copied: true",
    ),
    ("ipc", 1, "65536 values, 0 wrong"),
    ("version_fallback", 1, "4 copies of 65536 values, 0 wrong"),
    ("multi_gpu", 1, "multi_gpu: needs two GPUs, this machine has 1; nothing to do"),
    ("multi_gpu", 2, "scaled on device 1, 0 wrong\nmodule functions launched with the other device's context current: [0, 0] wrong"),
    ("dependable_check", 1, "dependable_check: 12 checks passed, 0 failed"),
    ("views", 1, "views: every result verified, 0 wrong"),
    ("cross_stream", 1, "cross_stream: 3 programs, 5 rounds of 1048576 values, 0 wrong"),
    ("graph_memory_uses", 1, "graph_memory_uses: 5 programs, 5 rounds, 0 wrong"),
    ("virtual_memory", 1, "virtual_memory: every result verified, 0 wrong"),
    // Its kernels (module globals, dynamic shared memory) run on the stand-in's PTX executor.
    ("kernel_features", 1, "kernel_features: 53 checks passed, 0 failed"),
    ("array_texture", 1, "array_texture: every result verified, 0 wrong"),
    ("managed_memory", 1, "managed_memory: every result verified, 0 wrong"),
    ("vmm_ipc", 1, "vmm_ipc: shared between two processes, every value verified, 0 wrong"),
    ("split_reduction", 1, "split_reduction: every sum verified, 0 wrong"),
    ("green_contexts", 1, "green_contexts: two green contexts scaled 1048576 values each, 0 wrong"),
    ("ipc_event", 1, "ipc_event: the child waited for the event (exit status: 0); 65536 values, 0 wrong"),
    ("big_shared", 1, "8 blocks of 65536 bytes of shared memory, 131072 values, 0 wrong"),
    ("jit_link", 1, "jit_link: scale_f32 from the linked image: 65536 values, 0 wrong"),
    ("matmul_occupancy", 1, "96x96 product in"),
    ("graph_explicit", 1, "graph_explicit: 3 launches, host node ran 3 times, 65536 values, 0 wrong"),
    ("graph_conditional", 1, "counter 0, 65536 values, 0 wrong"),
];

/// `target/<profile>`: this test runs as `target/<profile>/deps/examples-<hash>`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// The stand-in library, as cargo builds it for the tests (or `CUDRV_STANDIN_LIB`).
fn standin_lib() -> PathBuf {
    let built = profile_dir().join("deps").join("libcudrv_standin.so");
    let lib = std::env::var_os("CUDRV_STANDIN_LIB").map(PathBuf::from).unwrap_or(built);
    assert!(lib.exists(), "no stand-in library at {}", lib.display());
    lib
}

/// The example's binary; fails if it is missing or older than its source.
fn example(name: &str) -> PathBuf {
    let bin = profile_dir().join("examples").join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(format!("{name}.rs"));
    let hint = "build the examples first: `cargo build --examples` (plain `cargo test` builds them too)";
    let built = std::fs::metadata(&bin).and_then(|m| m.modified());
    let written = std::fs::metadata(&source).and_then(|m| m.modified()).unwrap();
    match built {
        Ok(built) => assert!(built >= written, "{} is older than {}: {hint}", bin.display(), source.display()),
        Err(e) => panic!("{}: {e}: {hint}", bin.display()),
    }
    bin
}

/// Runs `bin` under the stand-in with `devices` devices (and `version`, if given).
fn run(bin: &Path, devices: u32, version: Option<&str>) -> Output {
    run_with(bin, devices, version, &[])
}

/// As [`run`], with `env` set too.
fn run_with(bin: &Path, devices: u32, version: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin);
    cmd.envs(env.iter().copied()).env_remove("CUDRV_STANDIN_SANITIZE_LOG");
    cmd.env("CUDRV_LIBCUDA", standin_lib())
        .env("CUDRV_STANDIN_DEVICES", devices.to_string())
        .env_remove("CUDRV_MAX_DRIVER_VERSION")
        .env_remove("CUDRV_STANDIN_VERSION");
    if let Some(v) = version {
        cmd.env("CUDRV_STANDIN_VERSION", v);
    }
    cmd.output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_example_passes_on_the_stand_in_and_prints_its_verification() {
    let mut failures = Vec::new();
    for &(name, devices, verified) in EXAMPLES {
        let out = run(&example(name), devices, None);
        let text = text(&out);
        if !(out.status.success() && text.contains(verified)) {
            failures.push(format!("{name} ({devices} devices): {}, want {verified:?}:\n{text}", out.status));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The stand-in's sanitizer (docs/sanitizer.md) finds no stream-order race and no read of
/// unwritten device memory in any example, with its streams' work delayed in the
/// adversarial schedule of seed 3:
/// each still passes, with no report (a report would also make it exit non-zero).
#[test]
fn every_example_runs_clean_under_the_sanitizer() {
    let mut failures = Vec::new();
    for &(name, devices, verified) in EXAMPLES {
        let out = run_with(&example(name), devices, None, &[("CUDRV_STANDIN_SANITIZE", "all,schedule=3")]);
        let text = text(&out);
        // The schedule's seed is announced; a report would be a line of its own.
        let reported = text.contains("report(s); exit status");
        if !(out.status.success() && text.contains(verified)) || reported {
            failures.push(format!("{name} ({devices} devices): {}:\n{text}", out.status));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_example_file_is_run_here_or_listed_as_gpu_only() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".rs")) else {
            continue;
        };
        let covered = EXAMPLES.iter().any(|(e, _, _)| *e == name) || GPU_ONLY.contains(&name);
        assert!(covered, "examples/{name}.rs is neither run by this test nor listed as GPU-only");
    }
}

/// The minor versions of every CUDA release from 11.3 to 13.5 (there was no 12.7).
const VERSIONS: &[&str] = &[
    "11.3", "11.4", "11.5", "11.6", "11.7", "11.8", "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8",
    "12.9", "13.0", "13.1", "13.2", "13.3", "13.4", "13.5",
];

#[test]
fn version_fallback_takes_the_path_each_version_offers() {
    let bin = example("version_fallback");
    for v in VERSIONS {
        let (major, minor) = v.split_once('.').unwrap();
        let code = major.parse::<u32>().unwrap() * 1000 + minor.parse::<u32>().unwrap() * 10;
        let out = run(&bin, 1, Some(v));
        let text = text(&out);
        assert!(out.status.success(), "{v}: {}:\n{text}", out.status);
        assert!(text.contains(&format!("driver {v}.0")), "{v}: not the emulated version:\n{text}");
        let kernels = if code >= 12000 { "kernels: cuLibraryLoadData" } else { "kernels: cuModuleLoadData" };
        let copies = match code {
            13000.. => "copies: cuMemcpyBatchAsync_v13000",
            12080.. => "copies: cuMemcpyBatchAsync_v12080",
            _ => "copies: cuMemcpyDtoDAsync per buffer",
        };
        assert!(text.contains(kernels) && text.contains(copies), "{v}: want {kernels:?} and {copies:?}:\n{text}");
        // The stand-in emulates both batch variants: no fallback where the program asks.
        assert!(!text.contains("answered"), "{v}: the batch copy fell back:\n{text}");
    }
}

#[test]
fn version_fallback_passes_every_cell_of_the_matrix() {
    let matrix = profile_dir().join("cudrv-matrix");
    if !matrix.exists() {
        eprintln!(
            "{} is not built: the matrix is not run (build it with `cargo build -p cudrv-matrix`)",
            matrix.display()
        );
        return;
    }
    let out = Command::new(&matrix)
        .args(["--stand-in", "--versions", "all", "--jobs", "2", "--stand-in-lib"])
        .arg(standin_lib())
        .arg("--")
        .arg(example("version_fallback"))
        .output()
        .unwrap();
    let text = text(&out);
    assert!(out.status.success(), "{}:\n{text}", out.status);
    let cells = VERSIONS.len();
    assert!(text.contains(&format!("{cells} of {cells} passed")), "{text}");
}
