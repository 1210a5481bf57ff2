//! Loading the stand-in's cdylib as `libcuda.so.1`: by path, through the system loader,
//! from many threads, with the environment's settings; and refusing bad libraries.
//!
//! Scenarios that need their own environment run in a child process (this test binary,
//! re-run with `CUDRV_TEST_CHILD` set), so that the process-wide driver and the
//! environment are fresh for each.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{counts, expected, run_child, run_child_within, standin_libcuda};
use cudrv::sys::CUresult;
use cudrv::{Driver, EntryKind, LoadError, LoadOptions};

fn dir_of(p: &Path) -> &str {
    p.parent().unwrap().to_str().unwrap()
}

#[test]
fn loads_every_emulated_version_by_path() {
    let (_dir, lib) = standin_libcuda("versions");
    for v in ["11.3", "11.8", "12.0", "12.4", "12.9", "13.0", "13.5"] {
        run_child("versions", &[("CUDRV_LIBCUDA", lib.to_str().unwrap()), ("CUDRV_STANDIN_VERSION", v)]);
    }
}

#[test]
fn loads_through_the_system_loader() {
    let (_dir, lib) = standin_libcuda("system");
    run_child("system", &[("LD_LIBRARY_PATH", dir_of(&lib))]);
}

#[test]
fn eight_threads_load_at_once() {
    let (_dir, lib) = standin_libcuda("threads");
    run_child("threads", &[("CUDRV_LIBCUDA", lib.to_str().unwrap())]);
}

#[test]
fn environment_settings_apply() {
    let (_dir, lib) = standin_libcuda("env");
    let lib = lib.to_str().unwrap();
    run_child("cap", &[("CUDRV_LIBCUDA", lib), ("CUDRV_MAX_DRIVER_VERSION", "12.4")]);
    run_child("ptds", &[("CUDRV_LIBCUDA", lib), ("CUDRV_PER_THREAD_DEFAULT_STREAM", "1")]);
    run_child("bad-env", &[("CUDRV_LIBCUDA", lib), ("CUDRV_MAX_DRIVER_VERSION", "twelve")]);
    run_child("too-old", &[("CUDRV_LIBCUDA", lib), ("CUDRV_STANDIN_VERSION", "11.2")]);
}

#[test]
fn no_driver_is_a_visible_state() {
    let empty = tempfile::Builder::new().prefix("cudrv-test-empty-").tempdir().unwrap();
    run_child("none", &[("LD_LIBRARY_PATH", empty.path().to_str().unwrap())]);
}

#[test]
fn a_missing_file_is_not_found() {
    let err = unsafe { Driver::load_from("/nonexistent/libcuda.so.1") }.err().unwrap();
    let LoadError::NotFound { looked, .. } = &err else { panic!("{err:?}") };
    assert_eq!(looked, "/nonexistent/libcuda.so.1");
    assert!(err.to_string().starts_with("no CUDA driver found: looked for /nonexistent/libcuda.so.1: "), "{err}");
}

#[test]
fn a_library_that_is_not_a_driver_is_refused() {
    let libm = ["/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("libm");
    let err = unsafe { Driver::load_from(libm) }.err().unwrap();
    assert_eq!(err, LoadError::NotADriver { path: libm.to_string() });
}

/// Long enough for a loaded machine; a blocked `dlopen` never returns at all.
const WATCHDOG: Duration = Duration::from_secs(30);

#[test]
fn a_fifo_or_a_pipe_is_refused_before_dlopen() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("libcuda.so.1");
    common::mkfifo(&fifo);
    // Before the fix both blocked inside dlopen for ever, waiting for a writer.
    run_child_within("fifo", &[("CUDRV_LIBCUDA", fifo.to_str().unwrap())], WATCHDOG, false);
    run_child_within("pipe", &[("CUDRV_LIBCUDA", "/dev/stdin")], WATCHDOG, true);
}

#[test]
fn a_directory_or_a_device_is_refused_before_dlopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    // SAFETY: refused before anything is opened.
    let err = unsafe { Driver::load_from(path) }.err().unwrap();
    assert_eq!(err, LoadError::NotARegularFile { path: path.to_string(), what: "a directory" });
    assert_eq!(err.to_string(), format!("{path} is a directory: a CUDA driver library must be a regular file"));
    // SAFETY: as above.
    let err = unsafe { Driver::load_from("/dev/null") }.err().unwrap();
    assert_eq!(err, LoadError::NotARegularFile { path: "/dev/null".into(), what: "a character device" });
}

#[test]
fn a_gated_log_that_is_a_fifo_never_blocks_and_is_reported_once() {
    let (_dir, lib) = standin_libcuda("gated-fifo");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("gated.log");
    common::mkfifo(&fifo);
    let lib = lib.to_str().unwrap();
    let envs = [("CUDRV_LIBCUDA", lib), ("CUDRV_STANDIN_VERSION", "12.0"), ("CUDRV_GATED_LOG", fifo.to_str().unwrap())];
    // Before the fix the first gated call blocked for ever opening the FIFO.
    let out = run_child_within("gated-log", &envs, WATCHDOG, false);
    assert!(
        out.contains(&format!("CUDRV_GATED_LOG not used: {}: nothing will be recorded: it is a FIFO", fifo.display())),
        "{out}"
    );
    let missing = dir.path().join("no-such-folder/gated.log");
    let envs =
        [("CUDRV_LIBCUDA", lib), ("CUDRV_STANDIN_VERSION", "12.0"), ("CUDRV_GATED_LOG", missing.to_str().unwrap())];
    let out = run_child_within("gated-log", &envs, WATCHDOG, false);
    assert!(out.contains("does not exist"), "{out}");
}

#[test]
fn a_gated_log_that_is_a_regular_file_records_each_entry_once() {
    let (_dir, lib) = standin_libcuda("gated-file");
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gated.log");
    let envs = [
        ("CUDRV_LIBCUDA", lib.to_str().unwrap()),
        ("CUDRV_STANDIN_VERSION", "12.0"),
        ("CUDRV_GATED_LOG", log.to_str().unwrap()),
    ];
    run_child_within("gated-log-file", &envs, WATCHDOG, false);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "cuLaunchHostFunc_v13010\tneeds driver 13.1\n");
}

/// The scenarios, run in a child process by the tests above.
#[test]
#[ignore = "run by the other tests in a child process"]
fn child() {
    let Some(scenario) = common::child_scenario() else { return };
    match scenario.as_str() {
        "versions" => {
            let want = cudrv::version::parse(&std::env::var("CUDRV_STANDIN_VERSION").unwrap()).unwrap();
            let d = unsafe { Driver::load(LoadOptions::from_env().unwrap()) }.unwrap();
            assert_eq!(d.version_code(), want);
            assert_eq!(d.path().unwrap(), Path::new(&std::env::var("CUDRV_LIBCUDA").unwrap()));
            assert_eq!(counts(&d), expected(want, false));
            assert_eq!(d.uses_get_proc_address_v2(), want >= 12000);
        }
        "system" => {
            let d = cudrv::driver().unwrap();
            assert_eq!(d.path().unwrap(), Path::new("libcuda.so.1"));
            // The loader says which file it found by that name.
            let dir = std::env::var("LD_LIBRARY_PATH").unwrap();
            let found = std::fs::canonicalize(Path::new(&dir).join("libcuda.so.1")).unwrap();
            assert_eq!(d.file().unwrap(), found);
            assert_eq!(counts(d), expected(cudrv::table::HEADER_VERSION, false));
        }
        "threads" => {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    std::thread::spawn(|| {
                        let d = cudrv::driver().unwrap();
                        let mut v = 0;
                        // SAFETY: valid out-pointer.
                        assert_eq!(unsafe { cudrv::p::cuDriverGetVersion(&mut v) }, CUresult::CUDA_SUCCESS);
                        (d as *const Driver as usize, v)
                    })
                })
                .collect();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            assert!(results.iter().all(|r| *r == results[0]), "{results:?}");
            assert_eq!(results[0].1, cudrv::table::HEADER_VERSION as i32);
        }
        "cap" => {
            let d = cudrv::driver().unwrap();
            assert_eq!(d.version(), semver::Version::new(12, 4, 0));
            assert_eq!(counts(d), expected(12040, false));
            assert!(d.require(">=12.5").is_err());
        }
        "ptds" => {
            let d = cudrv::driver().unwrap();
            assert!(d.options().per_thread_default_stream);
            assert_eq!(
                d.entry("cuMemcpyAsync").unwrap().kind,
                EntryKind::Name { bound: Some("cuMemcpyAsync_v7000_ptsz") }
            );
        }
        "bad-env" => {
            let err = cudrv::driver().err().unwrap();
            assert_eq!(
                err.to_string(),
                "CUDRV_MAX_DRIVER_VERSION=\"twelve\" is not valid: expected a version such as 12.4"
            );
        }
        "too-old" => {
            let err = cudrv::driver().err().unwrap();
            assert!(matches!(&err, LoadError::TooOld { found, .. } if found == "11.2"), "{err:?}");
        }
        "none" => {
            let Err(err) = cudrv::driver() else {
                // A machine with a real driver installed: nothing to check here.
                println!("SCENARIO-PASSED (a system driver is installed)");
                return;
            };
            assert!(matches!(err, LoadError::NotFound { .. }), "{err:?}");
            assert!(err.to_string().contains("libcuda.so.1 through the system loader"), "{err}");
            // The error says what to do about it.
            assert!(err.to_string().contains("Set CUDRV_LIBCUDA="), "{err}");
            assert!(err.to_string().contains("stand-in"), "{err}");
            // Every entry answers NOT_FOUND without calling anything, and says why.
            common::capture_reports();
            // SAFETY: nothing is called.
            assert_eq!(unsafe { cudrv::p::cuInit(0) }, CUresult::CUDA_ERROR_NOT_FOUND);
            // SAFETY: as above.
            assert_eq!(unsafe { cudrv::pw::cuInit(0) }, CUresult::CUDA_ERROR_NOT_FOUND);
            assert_eq!(common::my_reports(), ["cuInit() not called: no driver loaded (CUDA_ERROR_NOT_FOUND)"]);
        }
        "fifo" => {
            let err = cudrv::init().err().unwrap();
            let cudrv::Error::Load(err) = err else { panic!("{err:?}") };
            let path = std::env::var("CUDRV_LIBCUDA").unwrap();
            assert_eq!(*err, LoadError::NotARegularFile { path, what: "a FIFO or a pipe" });
        }
        "pipe" => {
            // Standard input is a pipe nobody writes to.
            let err = cudrv::driver().err().unwrap();
            assert_eq!(err, LoadError::NotARegularFile { path: "/dev/stdin".into(), what: "a FIFO or a pipe" });
            // SAFETY: refused before anything is opened.
            let err = unsafe { Driver::load_from("/dev/stdin") }.err().unwrap();
            assert!(err.to_string().starts_with("/dev/stdin is a FIFO or a pipe"), "{err}");
        }
        "gated-log" | "gated-log-file" => {
            let reports = common::collect_all_reports();
            let d = cudrv::driver().unwrap();
            for _ in 0..3 {
                // SAFETY: gated on 12.0: nothing is called.
                let st = unsafe { d.p().cuLaunchHostFunc_v13010(std::ptr::null_mut(), None, std::ptr::null_mut(), 0) };
                assert_eq!(st, CUresult::CUDA_ERROR_NOT_FOUND);
            }
            let reports = reports.lock().unwrap().clone();
            let about_log: Vec<_> = reports.iter().filter(|r| r.starts_with("CUDRV_GATED_LOG")).collect();
            if scenario == "gated-log" {
                assert_eq!(about_log.len(), 1, "{reports:?}");
                println!("{}", about_log[0]);
            } else {
                assert!(about_log.is_empty(), "{reports:?}");
            }
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
