//! The texture probe (`scripts/probes/texture/probe.c`, its kernels
//! `scripts/probes/texture/kernels.ptx`) on the stand-in, against the H200's recording
//! `docs/gpu-runs/h200/texture-13000.txt`: every fetch, gather, query and surface access
//! the probe prints must print the same bits. Without the recording, the probe still has to
//! run to its end on the stand-in (as on the H200, `suld.b64` at a byte x that is not a
//! multiple of 8 fails the launch with CUDA_ERROR_MISALIGNED_ADDRESS, 716, and the probe
//! stops there); the comparison is skipped with a
//! message. The probe is built with `cc`, which this test needs.

use std::path::Path;
use std::process::Command;

mod common;

const PROBE: &str = "../scripts/probes/texture/probe.c";
const KERNELS: &str = "../scripts/probes/texture/kernels.ptx";
const RECORDING: &str = "../docs/gpu-runs/h200/texture-13000.txt";

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
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join(PROBE);
    if !probe.exists() {
        // A packaged stand-in has no scripts/.
        eprintln!("SKIPPED: no probe at {} (outside the workspace)", probe.display());
        return;
    }
    let got = probe_output();
    assert!(!got.contains("\nerror "), "a driver call of the probe failed:\n{got}");
    assert!(got.lines().last().is_some_and(|l| l == "surf2d_b64  sync status 716"), "the probe did not reach its end");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORDING);
    let Ok(want) = std::fs::read_to_string(&path) else {
        eprintln!(
            "SKIPPED: no H200 recording at {} (the lead records it: see scripts/probes/texture/probe.c)",
            path.display()
        );
        return;
    };
    // The recording's '#' lines are comments (where and how it was recorded).
    let (got_lines, want_lines): (Vec<_>, Vec<_>) =
        (got.lines().collect(), want.lines().filter(|l| !l.starts_with('#')).collect());
    let differ: Vec<String> = want_lines
        .iter()
        .zip(&got_lines)
        .filter(|(w, g)| w != g)
        .take(40)
        .map(|(w, g)| format!("  H200:     {w}\n  stand-in: {g}"))
        .collect();
    let count = want_lines.iter().zip(&got_lines).filter(|(w, g)| w != g).count();
    assert!(
        differ.is_empty() && got_lines.len() == want_lines.len(),
        "{count} of {} lines differ ({} lines recorded, {} printed); the first:\n{}",
        want_lines.len(),
        want_lines.len(),
        got_lines.len(),
        differ.join("\n")
    );
}
