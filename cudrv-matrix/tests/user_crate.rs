//! A user's crate whose tests use the stand-in in one line (`cudrv_standin::install()`):
//! `standin/tests/user-crate`, a crate of its own outside the workspace, with cudrv and
//! cudrv-standin as path dependencies. Its `cargo test` passes on its own and under
//! `cudrv-matrix` (each cell a driver version the stand-in emulates).
//!
//! It builds in `<this workspace's target folder>/user-crate` (nothing is written into the
//! source tree but the crate's `Cargo.lock`, which git ignores), offline, from the
//! workspace's `Cargo.lock`: the crates it needs are those the workspace has downloaded.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Variables of the caller's environment that would change what the crate's tests see.
const CLEARED: &[&str] = &[
    "CUDRV_LIBCUDA",
    "CUDRV_MAX_DRIVER_VERSION",
    "CUDRV_PER_THREAD_DEFAULT_STREAM",
    "CUDRV_STANDIN_VERSION",
    "CUDRV_STANDIN_DEVICES",
    "CUDRV_STANDIN_LIB",
    "CUDRV_GATED_LOG",
    "CUDRV_MATRIX_VERSION",
];

/// The workspace's root (this crate's parent folder).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The target folder this test was built in: `<target>/<profile>/deps/<this test>`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// Runs `program args` in the user crate's folder with cargo's settings for it.
fn run(crate_dir: &Path, program: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(crate_dir).env("CARGO_TARGET_DIR", target_dir().join("user-crate"));
    for name in CLEARED {
        cmd.env_remove(name);
    }
    cmd.output().unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn a_user_crate_tests_on_the_stand_in_in_one_line_alone_and_under_the_matrix() {
    let root = workspace();
    let crate_dir = root.join("standin/tests/user-crate");
    if !root.join("standin/Cargo.toml").is_file() {
        // This package outside the cudrv workspace (from its .crate): no user crate to build.
        eprintln!("not in the cudrv workspace: the user crate is not tested");
        return;
    }
    // The crate's dependencies resolved as the workspace's are: offline, no newer versions.
    std::fs::copy(root.join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));

    let out = run(&crate_dir, &cargo, &["test", "--offline"]);
    let all = text(&out);
    assert!(out.status.success(), "cargo test in {}:\n{all}", crate_dir.display());
    assert!(all.contains("test adds_two_vectors ... ok"), "{all}");
    assert!(all.contains("test result: ok. 3 passed"), "{all}");

    // Each cell emulates its version: the crate's tests check the driver's version.
    let matrix = PathBuf::from(env!("CARGO_BIN_EXE_cudrv-matrix"));
    let cargo = cargo.to_str().unwrap();
    let args = ["--versions", "11.8,12.4,13.0", "--jobs", "1", "--", cargo, "test", "--offline"];
    let out = run(&crate_dir, &matrix, &args);
    let all = text(&out);
    assert!(out.status.success(), "cudrv-matrix -- cargo test in {}:\n{all}", crate_dir.display());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> =
        stdout.lines().filter(|l| ["11.8", "12.4", "13.0"].iter().any(|v| l.starts_with(v))).collect();
    assert_eq!(rows.len(), 3, "{all}");
    assert!(rows.iter().all(|r| r.contains("pass")), "{all}");
}

#[test]
fn the_stand_in_readme_shows_the_user_crate() {
    let root = workspace();
    if !root.join("standin/Cargo.toml").is_file() {
        eprintln!("not in the cudrv workspace: the stand-in's README is not checked");
        return;
    }
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let (readme, manifest) = (read("standin/README.md"), read("standin/tests/user-crate/Cargo.toml"));
    // The complete test it shows is the crate's, word for word.
    let test = read("standin/tests/user-crate/tests/add.rs");
    assert!(readme.contains(&format!("```text\n{test}```")), "standin/README.md does not show tests/add.rs");
    // The manifest lines it shows are the crate's (which has path dependencies).
    let profile = "[profile.dev.package.cudrv-standin]\nopt-level = 2\n";
    assert!(readme.contains(profile) && manifest.contains(profile));
    assert!(readme.contains("[dev-dependencies]\ncudrv-standin = \"0.1\"\n"));
    assert!(manifest.contains("[dev-dependencies]\ncudrv-standin = { path = \"../..\" }"));
}
