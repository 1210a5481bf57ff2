//! The cdylib as a drop-in `libcuda.so.1`: it exports every name `cuda.h` declares, a C
//! program loads it with `dlopen`/`dlsym`, and a C program linked with `-lcuda` runs on it.
//! The C programs (`tests/c/driver_api.c`) are built with `cc`, which these tests need.

use std::collections::HashSet;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::cdylib;
use cudrv::table::VARIANTS;

const C_PROGRAM: &str = include_str!("c/driver_api.c");

/// Compiles the C program into `dir` with `args` added (`cc`, as CI has it).
fn compile(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let source = dir.join("driver_api.c");
    std::fs::write(&source, C_PROGRAM).unwrap();
    let exe = dir.join(name);
    let out = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&source)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("these tests build a C program with `cc` (install gcc or clang): {e}"));
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Runs `exe` with `env` (the emulated version unset unless given) and returns its stdout.
fn run(exe: &Path, arg: Option<&str>, env: &[(&str, &std::ffi::OsStr)]) -> String {
    let mut cmd = Command::new(exe);
    cmd.args(arg).env_remove("CUDRV_STANDIN_VERSION").env_remove("CUDRV_LIBCUDA");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{} failed: {stdout}{}", exe.display(), String::from_utf8_lossy(&out.stderr));
    stdout
}

const ROUND_TRIP: &str = "standin-c: driver 13050: 16384 bytes round-tripped through device memory\n";
const NEWER: &str = "standin-c: driver 12000: cuCtxCreate_v4 answered 500, context untouched\n";

#[test]
fn every_exported_name_is_a_symbol_of_the_cdylib() {
    let exports: Vec<_> = cudrv_standin::exported_symbols().collect();
    // One exported name per variant of the table: each binds a different one, of its own
    // symbol, per-thread exactly when the name is.
    assert_eq!(exports.len(), VARIANTS.len());
    let mut bound = HashSet::new();
    for &(name, index) in &exports {
        let name = name.to_str().unwrap();
        let v = &VARIANTS[index];
        assert!(bound.insert(index), "{name}: variant {} bound twice", v.ident);
        assert!(name.starts_with(v.symbol_str()), "{name} binds {}", v.ident);
        assert_eq!(name.ends_with("_ptds") || name.ends_with("_ptsz"), v.per_thread, "{name} binds {}", v.ident);
    }
    let by_name = |n: &str| exports.iter().find(|(e, _)| e.to_str() == Ok(n)).map(|&(_, i)| VARIANTS[i].ident);
    assert_eq!(by_name("cuInit"), Some("cuInit_v2000"));
    assert_eq!(by_name("cuGetProcAddress"), Some("cuGetProcAddress_v11030"));
    assert_eq!(by_name("cuGetProcAddress_v2"), Some("cuGetProcAddress_v12000"));
    assert_eq!(by_name("cuMemAlloc"), Some("cuMemAlloc_v2000"));
    assert_eq!(by_name("cuMemAlloc_v2"), Some("cuMemAlloc_v3020"));
    assert_eq!(by_name("cuCtxCreate_v4"), Some("cuCtxCreate_v12050"));
    assert_eq!(by_name("cuMemcpyHtoD_v2_ptds"), Some("cuMemcpyHtoD_v7000_ptds"));
    assert_eq!(by_name("cuStreamGetCaptureInfo_v2_ptsz"), Some("cuStreamGetCaptureInfo_v11030_ptsz"));

    // SAFETY: the stand-in's library; its initialisers do nothing unsafe.
    let lib = unsafe { libloading::Library::new(cdylib()) }.unwrap();
    for (name, _) in &exports {
        // SAFETY: only the symbol's address is read.
        let symbol = unsafe { lib.get::<*mut c_void>(name.to_bytes_with_nul()) };
        assert!(symbol.is_ok_and(|s| !s.is_null()), "the cdylib does not export {name:?}");
    }
    std::mem::forget(lib);
}

#[test]
fn a_c_program_runs_on_the_cdylib_through_dlopen() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "driver_api_dlopen", &["-DUSE_DLOPEN", "-ldl"]);
    let lib = cdylib();
    assert_eq!(run(&exe, None, &[("CUDRV_LIBCUDA", lib.as_os_str())]), ROUND_TRIP);
    let env = [("CUDRV_LIBCUDA", lib.as_os_str()), ("CUDRV_STANDIN_VERSION", "12.0".as_ref())];
    assert_eq!(run(&exe, Some("newer"), &env), NEWER);
}

#[test]
fn a_c_program_linked_with_lcuda_runs_on_the_cdylib() {
    let dir = tempfile::tempdir().unwrap();
    // Linked against libcuda.so; run with only libcuda.so.1 on the library path: the soname
    // makes the program ask for libcuda.so.1, as one linked against the real driver does.
    let (link, runtime) = (dir.path().join("link"), dir.path().join("run"));
    std::fs::create_dir_all(&link).unwrap();
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::copy(cdylib(), link.join("libcuda.so")).unwrap();
    std::fs::copy(cdylib(), runtime.join("libcuda.so.1")).unwrap();
    let link_dir = format!("-L{}", link.display());
    let exe = compile(dir.path(), "driver_api_linked", &[&link_dir, "-lcuda"]);
    let path = runtime.as_os_str();
    assert_eq!(run(&exe, None, &[("LD_LIBRARY_PATH", path)]), ROUND_TRIP);
    let env = [("LD_LIBRARY_PATH", path), ("CUDRV_STANDIN_VERSION", "12.0".as_ref())];
    assert_eq!(run(&exe, Some("newer"), &env), NEWER);
}
