//! The texture probe (`scripts/probes/texture/probe.c`, its kernels
//! `scripts/probes/texture/kernels.ptx`) on the stand-in, against the H200's recording
//! `docs/gpu-runs/h200/texture-probe-2026-12-05.txt`: every fetch, gather, query and surface
//! access the probe prints must print the same bits, except the lines listed in
//! `tests/data/texture-probe-differences.txt` (linear filtering not yet bit-exact); a
//! listed line the stand-in now prints as the H200 did fails too, so the list only
//! shrinks. As on the H200, `suld.b64` at a byte x that is not a multiple of 8 fails the
//! launch with CUDA_ERROR_MISALIGNED_ADDRESS (716) and the probe stops there. The probe is
//! built with `cc`, which this test needs.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

mod common;

const PROBE: &str = "../scripts/probes/texture/probe.c";
const KERNELS: &str = "../scripts/probes/texture/kernels.ptx";
const RECORDING: &str = "../docs/gpu-runs/h200/texture-probe-2026-12-05.txt";
const DIFFERENCES: &str = include_str!("data/texture-probe-differences.txt");

/// The probe's output on the stand-in.
fn probe_output() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("cudrv-texture-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("probe");
    let out = Command::new("cc")
        .args(["-O1", "-Wall", "-o"])
        .arg(&exe)
        .arg(root.join(PROBE))
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("this test builds a C program with `cc` (install gcc or clang): {e}"));
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe)
        .arg(root.join(KERNELS))
        .env("CUDRV_LIBCUDA", common::cdylib())
        .env_remove("CUDRV_STANDIN_VERSION")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the probe failed: {}{}", stdout, String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn the_texture_probe_prints_what_the_h200_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (probe, recording) = (root.join(PROBE), root.join(RECORDING));
    if !probe.exists() || !recording.exists() {
        // A packaged stand-in has no scripts/ or docs/.
        eprintln!("SKIPPED: no probe or recording at {} (outside the workspace)", probe.display());
        return;
    }
    let got = probe_output();
    assert!(!got.contains("\nerror "), "a driver call of the probe failed:\n{got}");
    assert!(got.lines().last().is_some_and(|l| l == "surf2d_b64  sync status 716"), "the probe did not reach its end");
    let want = std::fs::read_to_string(&recording).unwrap();
    // The recording's '#' lines are comments (where and how it was recorded).
    let want_lines: Vec<&str> = want.lines().filter(|l| !l.starts_with('#')).collect();
    let got_lines: Vec<&str> = got.lines().collect();
    assert_eq!(got_lines.len(), want_lines.len(), "the probe printed another number of lines than the H200");
    let listed: BTreeSet<&str> = DIFFERENCES.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    let differing: Vec<(&str, &str)> =
        want_lines.iter().zip(&got_lines).filter(|(w, g)| w != g).map(|(w, g)| (*w, *g)).collect();
    let unlisted: Vec<String> = differing
        .iter()
        .filter(|(w, _)| !listed.contains(w))
        .take(40)
        .map(|(w, g)| format!("  H200:     {w}\n  stand-in: {g}"))
        .collect();
    assert!(
        unlisted.is_empty(),
        "lines differ from the H200's and are not listed; the first:\n{}",
        unlisted.join("\n")
    );
    let still: BTreeSet<&str> = differing.iter().map(|(w, _)| *w).collect();
    let stale: Vec<&&str> = listed.iter().filter(|l| !still.contains(**l)).collect();
    assert!(stale.is_empty(), "listed lines now agree with the H200 (remove them from the list): {stale:?}");
    eprintln!(
        "texture probe: {} of {} lines as on the H200, {} listed differences",
        want_lines.len() - differing.len(),
        want_lines.len(),
        listed.len()
    );
}
