//! The cdylib exports what the H200's `libcuda.so.1` exports (the profiler, GL, EGL and
//! VDPAU interop, the private names; the `cudbg*` debugger interface aside), and answers
//! them as the H200 did: the recording's own probe (`scripts/probes/interop_exports.c`)
//! runs on the stand-in and its output is compared with the H200's, line by line: the
//! calls, what `cuGetProcAddress` knows of every exported name at 11.3, 12.0 and 13.0, and
//! `cuGetExportTable` of an unknown id. Needs `cc`.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::process::Command;

mod common;

use common::cdylib;

const PROBE: &str = include_str!("../../scripts/probes/interop_exports.c");
const H200_EXPORTS: &str = include_str!("../../docs/gpu-runs/h200/libcuda-exports-580.159.04.txt");
const H200_ANSWERS: &str = include_str!("../../docs/gpu-runs/h200/interop-exports-2026-12-03.txt");

fn driver_names() -> impl Iterator<Item = &'static str> {
    H200_EXPORTS.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("cudbg"))
}

#[test]
fn every_name_the_h200_driver_exports_is_a_symbol_of_the_cdylib() {
    // SAFETY: the stand-in's library; its initialisers do nothing unsafe.
    let lib = unsafe { libloading::Library::new(cdylib()) }.unwrap();
    let mut count = 0;
    for name in driver_names() {
        // SAFETY: only the symbol's address is read.
        let symbol = unsafe { lib.get::<*mut c_void>(format!("{name}\0").as_bytes()) };
        assert!(symbol.is_ok_and(|s| !s.is_null()), "the cdylib does not export {name}");
        count += 1;
    }
    assert_eq!(count, 707 - 33, "the recorded list changed: 707 names, 33 of them cudbg*");
    let beyond: Vec<_> = cudrv_standin::exported_symbols_beyond_cuda_h().collect();
    assert!(beyond.iter().any(|n| n.to_bytes() == b"cuProfilerInitialize"));
    assert!(beyond.iter().any(|n| n.to_bytes() == b"cuMemGetAttribute_v2"));
    std::mem::forget(lib);
}

/// `call`/`gpa`/`export_table` lines keyed by all but their answer.
fn answers(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["call", name, form, kind, n] => out.insert(format!("call {name} {form}"), format!("{kind} {n}")),
            ["gpa", name, version, "status", s, "found", f, "ptr", p] => {
                out.insert(format!("gpa {name} {version}"), format!("status {s} found {f} ptr {p}"))
            }
            ["export_table", ..] => out.insert("export_table".into(), w[1..].join(" ")),
            _ => None,
        };
    }
    out
}

/// What the stand-in answers where the H200's driver crashed (a signal): INVALID_VALUE,
/// or NOT_SUPPORTED for a private name (documented in the stand-in's crate docs).
fn standin_for_crash(key: &str) -> String {
    if key.starts_with("call cuEGLApiInit ") {
        "status 801".into()
    } else {
        "status 1".into()
    }
}

#[test]
fn the_recording_probe_gets_the_h200s_answers_from_the_cdylib() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("interop_exports.c");
    std::fs::write(&source, PROBE).unwrap();
    let exe = dir.path().join("interop_exports");
    let out = Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&source)
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("this test builds a C program with `cc` (install gcc or clang): {e}"));
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let libdir = dir.path().join("lib");
    std::fs::create_dir_all(&libdir).unwrap();
    std::fs::copy(cdylib(), libdir.join("libcuda.so.1")).unwrap();
    let list = dir.path().join("exports.txt");
    std::fs::write(&list, H200_EXPORTS).unwrap();
    let run = Command::new(&exe)
        .arg(&list)
        .env("LD_LIBRARY_PATH", &libdir)
        .env("CUDRV_STANDIN_VERSION", "13.0")
        .env_remove("CUDRV_LIBCUDA")
        .output()
        .unwrap();
    assert!(run.status.success(), "the probe failed: {}", String::from_utf8_lossy(&run.stderr));
    let seen = answers(&String::from_utf8_lossy(&run.stdout));
    let h200 = answers(H200_ANSWERS);
    assert!(h200.len() > 2000, "the recording has {} answers", h200.len());
    let mut differ = Vec::new();
    for (key, expected) in &h200 {
        let expected = if expected.starts_with("signal") { standin_for_crash(key) } else { expected.clone() };
        let got = seen.get(key).map(String::as_str).unwrap_or("(none)");
        if got != expected {
            differ.push(format!("{key}: H200 {expected}, stand-in {got}"));
        }
    }
    assert!(differ.is_empty(), "{} of {} answers differ:\n{}", differ.len(), h200.len(), differ.join("\n"));
}

#[test]
fn the_profiler_succeeds_with_a_context_and_does_nothing() {
    // In-process, through cudrv's own table: the profiler is not a cuda.h name, so it is
    // reached through the stand-in's cuGetProcAddress as any program would.
    let lib_path = cdylib();
    // SAFETY: the stand-in's library; its initialisers do nothing unsafe.
    let lib = unsafe { libloading::Library::new(&lib_path) }.unwrap();
    type Gpa = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut c_void, i32, u64, *mut i32) -> i32;
    type Start = unsafe extern "C" fn() -> i32;
    // SAFETY: the stand-in exports cuGetProcAddress_v2 with this signature.
    let gpa = unsafe { lib.get::<Gpa>(b"cuGetProcAddress_v2\0") }.unwrap();
    // SAFETY: the stand-in exports cuInit(unsigned).
    let init = unsafe { lib.get::<unsafe extern "C" fn(u32) -> i32>(b"cuInit\0") }.unwrap();
    let mut start: *mut c_void = std::ptr::null_mut();
    let mut found = -1;
    // SAFETY: a NUL-terminated name and valid out-pointers.
    assert_eq!(unsafe { gpa(c"cuProfilerStart".as_ptr(), &mut start, 13000, 0, &mut found) }, 0);
    assert_eq!(found, 0);
    // SAFETY: as declared by cudaProfiler.h: no arguments, a CUresult.
    let start: Start = unsafe { std::mem::transmute::<*mut c_void, Start>(start) };
    // SAFETY: as above, the symbol's own signature.
    let direct = unsafe { lib.get::<Start>(b"cuProfilerStart\0") }.unwrap();
    assert_eq!(start as usize, *direct as usize, "cuGetProcAddress gives the exported function");
    // SAFETY: cuInit(0) and a call with no arguments.
    unsafe {
        assert_eq!(init(0), 0);
        assert_eq!(start(), 201, "no context current: CUDA_ERROR_INVALID_CONTEXT, as the H200");
    }
    // The private names are not known to cuGetProcAddress, as on the H200.
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a NUL-terminated name and valid out-pointers.
    assert_eq!(unsafe { gpa(c"cuMemGetAttribute".as_ptr(), &mut p, 13000, 0, &mut found) }, 0);
    assert_eq!((found, p), (1, std::ptr::null_mut()));
    std::mem::forget(lib);
}
