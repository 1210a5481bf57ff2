//! A kernel registered from Rust (`register_kernel`) runs when cudrv's driver is the
//! stand-in library `CUDRV_LIBCUDA` names (as in each cell of `cudrv-matrix --stand-in`),
//! registered before the library is loaded or after; its failures fail the launch there
//! as they do in-process. Each scenario runs in a child process (this test binary), whose
//! process-wide driver is that library.

mod common;

use common::{cdylib, child_scenario, run_child};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, LaunchConfig, Module, Stream};
use cudrv_standin::{register_kernel, registered_kernels, unregister_kernel, KernelError, Param};

fn run_with_library(scenario: &str) {
    let lib = cdylib();
    run_child(scenario, &[("CUDRV_LIBCUDA", lib.to_str().unwrap()), ("CUDRV_STANDIN_VERSION", "12.4")]);
}

#[test]
fn a_kernel_registered_before_the_library_is_loaded_runs_there() {
    run_with_library("before-load");
}

#[test]
fn a_kernel_registered_after_the_library_is_loaded_runs_there() {
    run_with_library("after-load");
}

#[test]
fn failures_of_a_forwarded_kernel_fail_the_launch_there() {
    run_with_library("failures");
    // A fault fails the whole process's driver, as on the H200: one child each.
    for fault in ["fault:past_end", "fault:ignores", "fault:gives_up", "fault:panics"] {
        run_with_library(fault);
    }
}

#[test]
fn unregistering_removes_the_kernel_from_the_library() {
    run_with_library("unregister");
}

#[test]
fn a_library_that_is_no_stand_in_changes_nothing_in_process() {
    // A library without the stand-in's registration function, then a path to nothing:
    // the kernel is registered in-process only, and runs there (install() opens nothing).
    run_child("in-process", &[("CUDRV_LIBCUDA", "libm.so.6")]);
    run_child("in-process", &[("CUDRV_LIBCUDA", "/nonexistent/libcuda.so.1")]);
    run_child("in-process", &[("CUDRV_LIBCUDA", "/")]);
}

/// `__global__ void NAME(unsigned* x, int n)`, as PTX.
fn ptx(name: &str) -> std::ffi::CString {
    std::ffi::CString::new(format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry {name}(.param .u64 x, .param .u32 n)\n{{\n\tret;\n}}\n"
    ))
    .unwrap()
}

/// Registers `name` as `x[i] += add` for `i < n`.
fn register_add(name: &str, add: u32) {
    register_kernel(name, &[Param::Ptr, Param::I32], move |t| {
        let (x, n) = (t.ptr(0)?, t.param::<i32>(1)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store::<u32>(x, i, t.load::<u32>(x, i)? + add)?;
        }
        Ok(())
    });
}

/// The process-wide driver, which must be the library.
fn library_driver() -> &'static cudrv::Driver {
    let d = cudrv::init().unwrap();
    assert_eq!(d.path(), Some(cdylib().as_path()), "the driver is the library");
    assert_eq!(d.driver_version_code(), 12040);
    d
}

/// Launches `name` over `n` elements of `data` (as `(unsigned*, int)`) in a new context on
/// the process-wide driver's device 0; returns the data after it, or the launch's (or the
/// load's) error.
fn launch(name: &str, data: &[u32], n: i32) -> Result<Vec<u32>, cudrv::Error> {
    let ctx = Context::new(&library_driver().device(0).unwrap(), 0u32).unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::load_ptx(&ctx, &ptx(name))?;
    let x = DeviceBuffer::from_slice(&ctx, data).unwrap();
    let f = module.function(name).unwrap();
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&n);
    // SAFETY: the arguments match NAME(unsigned*, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(data.len().try_into().unwrap())) }
        .map_err(|e| e.as_driver().cloned().expect("not refused before the launch"))?;
    stream.synchronize()?;
    Ok(x.to_vec().unwrap())
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Some(scenario) = child_scenario() else { return };
    match scenario.as_str() {
        "before-load" => {
            register_add("library_test_add_one", 1);
            // The in-process stand-in knows it too.
            assert!(registered_kernels().contains(&"library_test_add_one".to_string()));
            assert_eq!(launch("library_test_add_one", &[1, 2, 3, 4, 5], 5).unwrap(), [2, 3, 4, 5, 6]);
            // Many blocks, and a bound below the grid.
            let data: Vec<u32> = (0..1000).collect();
            let out = launch("library_test_add_one", &data, 600).unwrap();
            assert!(out.iter().enumerate().all(|(i, &v)| v == if i < 600 { i as u32 + 1 } else { i as u32 }));
        }
        "after-load" => {
            library_driver();
            // Before it is registered, the library runs the PTX (an empty kernel).
            assert_eq!(launch("library_test_add_two", &[1], 1).unwrap(), [1]);
            register_add("library_test_add_two", 2);
            assert_eq!(launch("library_test_add_two", &[1, 2, 3], 3).unwrap(), [3, 4, 5]);
            // Registered again with another body: modules loaded from now on run it.
            register_add("library_test_add_two", 20);
            assert_eq!(launch("library_test_add_two", &[1, 2, 3], 3).unwrap(), [21, 22, 23]);
        }
        "fault:past_end" => {
            // A store past the allocation: ILLEGAL_ADDRESS.
            register_kernel("library_test_past_end", &[Param::Ptr, Param::I32], |t| {
                t.store::<u32>(t.ptr(0)?, 1 << 20, 7)?;
                Ok(())
            });
            let err = launch("library_test_past_end", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        }
        "fault:ignores" => {
            // A kernel that ignores the refusal fails all the same.
            register_kernel("library_test_ignores", &[Param::Ptr, Param::I32], |t| {
                let _ = t.store::<u32>(t.ptr(0)?, 1 << 20, 7);
                Ok(())
            });
            let err = launch("library_test_ignores", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
        }
        "fault:gives_up" => {
            // A body that gives up: LAUNCH_FAILED.
            register_kernel("library_test_gives_up", &[Param::Ptr, Param::I32], |_| Err(KernelError::Failed));
            let err = launch("library_test_gives_up", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_LAUNCH_FAILED));
        }
        "fault:panics" => {
            // A body that panics: LAUNCH_FAILED.
            register_kernel("library_test_panics", &[Param::Ptr, Param::I32], |_| panic!("a kernel that panics"));
            let err = launch("library_test_panics", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_LAUNCH_FAILED));
        }
        "failures" => {
            // A parameter read with the wrong size: INVALID_VALUE, not sticky.
            register_kernel("library_test_bad_param", &[Param::Ptr, Param::I32], |t| {
                t.param::<u64>(1)?;
                Ok(())
            });
            let err = launch("library_test_bad_param", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE));
            // ... even when the body ignores it.
            register_kernel("library_test_ignores_param", &[Param::Ptr, Param::I32], |t| {
                let _ = t.param_bytes(5);
                Ok(())
            });
            let err = launch("library_test_ignores_param", &[0; 4], 4).unwrap_err();
            assert_eq!(err.code(), Some(CUresult::CUDA_ERROR_INVALID_VALUE));
            // The launch shape and the parameters come from the library's record.
            register_kernel("library_test_shape", &[Param::Ptr, Param::I32], |t| {
                assert_eq!(t.param_count(), 2);
                let (grid, block) = (t.grid_dim(), t.block_dim());
                let i = t.global_x();
                if i < u64::try_from(t.param::<i32>(1)?).unwrap_or(0) {
                    t.store::<u32>(t.ptr(0)?, i, grid.x * 1000 + block.x)?;
                }
                Ok(())
            });
            let out = launch("library_test_shape", &[0; 300], 300).unwrap();
            let cfg = LaunchConfig::for_num_elems(300);
            assert!(out.iter().all(|&v| v == cfg.grid.0 * 1000 + cfg.block.0), "{:?}", &out[..4]);
        }
        "unregister" => {
            register_add("library_test_removed", 1);
            assert_eq!(launch("library_test_removed", &[1], 1).unwrap(), [2]);
            assert!(unregister_kernel("library_test_removed"));
            // Unregistered, modules loaded from now on run the PTX (an empty kernel).
            assert_eq!(launch("library_test_removed", &[1], 1).unwrap(), [1]);
            assert!(!registered_kernels().contains(&"library_test_removed".to_string()));
        }
        "in-process" => {
            register_add("library_test_in_process", 1);
            let d = cudrv_standin::install().unwrap();
            assert_eq!(d.path(), None);
            let ctx = Context::new(&cudrv::init().unwrap().device(0).unwrap(), 0u32).unwrap();
            let module = Module::load_ptx(&ctx, &ptx("library_test_in_process")).unwrap();
            let stream = Stream::new(&ctx, 0).unwrap();
            let x = DeviceBuffer::from_slice(&ctx, &[1u32, 2]).unwrap();
            let n = 2i32;
            let f = module.function("library_test_in_process").unwrap();
            let mut launch = f.builder(&stream);
            launch.arg(&x).arg(&n);
            // SAFETY: the arguments match NAME(unsigned*, int).
            unsafe { launch.launch(LaunchConfig::for_num_elems(2)) }.unwrap();
            stream.synchronize().unwrap();
            assert_eq!(x.to_vec().unwrap(), [2, 3]);
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("SCENARIO-PASSED");
}
