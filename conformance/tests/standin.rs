//! The stand-in answers the conformance suite as the real driver did (the committed H200
//! answers), apart from the listed deliberate differences: at the H200's version (13.0)
//! and at 12.4, where the cases that need newer entries must be gated.

use std::path::PathBuf;
use std::process::Command;

use cudrv_conformance::record::{compare, parse_all, parse_differences, summary};
use cudrv_conformance::{reference, AT_12_4, DIFFERENCES, EXPECTED};

/// The stand-in cdylib that cargo built with this test, copied as `libcuda.so.1`.
fn standin_libcuda() -> (tempfile::TempDir, PathBuf) {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let built = [deps.join("libcudrv_standin.so"), deps.parent().unwrap().join("libcudrv_standin.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("the stand-in cdylib is built with the tests");
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("libcuda.so.1");
    std::fs::copy(built, &lib).unwrap();
    (dir, lib)
}

/// Runs the suite on the stand-in emulating `version`; returns its output.
fn run_suite(version: &str) -> String {
    let (_dir, lib) = standin_libcuda();
    let out = Command::new(env!("CARGO_BIN_EXE_cudrv-conformance"))
        .args(["run", "--jobs", "2", "--timeout", "30"])
        .env("CUDRV_LIBCUDA", &lib)
        .env("CUDRV_STANDIN_VERSION", version)
        .env_remove("CUDRV_MAX_DRIVER_VERSION")
        .env_remove("CUDRV_PER_THREAD_DEFAULT_STREAM")
        .output()
        .unwrap();
    assert!(out.status.success(), "the suite failed to run: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn check(version: &str, emulated: Option<u32>) {
    let run = run_suite(version);
    let c = compare(&reference(emulated), &parse_all(&run), &parse_differences(DIFFERENCES), emulated);
    let text = summary(&c);
    println!("{text}");
    assert!(c.passed(), "the stand-in at {version} answers differently from the real driver:\n{text}");
    // The real driver crashes or hangs on the listed cases: no status to agree with.
    assert!(c.status_agreement() >= 95.0, "agreement {:.1}% is below 95%:\n{text}", c.status_agreement());
}

#[test]
fn standin_at_13_0_answers_as_the_h200() {
    check("13.0", None);
}

#[test]
fn standin_at_12_4_answers_as_the_h200_or_is_gated_by_version() {
    check("12.4", Some(12040));
}

#[test]
fn every_case_has_a_recorded_answer_and_every_listed_difference_a_case() {
    let expected = parse_all(EXPECTED);
    let names: Vec<&str> = expected.iter().map(|l| l.case.as_str()).collect();
    for case in cudrv_conformance::cases::all() {
        assert!(names.contains(&case.name), "{} has no answer recorded on the GPU", case.name);
    }
    for listed in parse_differences(DIFFERENCES).keys() {
        assert!(names.contains(&listed.as_str()), "deliberate-differences.txt lists {listed}, which is no case");
    }
}

#[test]
fn the_answers_at_12_4_replace_recorded_cases() {
    let at = reference(Some(12040));
    for line in AT_12_4 {
        let case = line.split_whitespace().next().unwrap();
        let got = at.iter().find(|l| l.case == case).expect("a recorded case");
        assert_eq!(format!("{got}"), *line);
    }
    assert_eq!(at.len(), parse_all(EXPECTED).len());
}
