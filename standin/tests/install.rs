//! `cudrv_standin::install()`: the stand-in as cudrv's process-wide driver in one line,
//! from any test, in any order, on any thread; a clear error when another driver came
//! first (in child processes: cudrv's process-wide driver is chosen once per process).

use std::process::Command;
use std::sync::Barrier;

use cudrv::{DeviceBuffer, LaunchConfig, LoadOptions, Module, Stream};
use cudrv_standin::{install, register_kernel, InstallError, Param, StandIn};

const CHILD_ENV: &str = "CUDRV_STANDIN_INSTALL_CHILD";

#[test]
fn install_from_many_threads_gives_one_driver_that_cudrv_init_uses() {
    const THREADS: usize = 16;
    let barrier = Barrier::new(THREADS);
    let drivers: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let d = install().expect("install");
                    // Again on the same thread: the same driver.
                    assert!(std::ptr::eq(d, install().expect("install again")));
                    d as *const cudrv::Driver as usize
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    assert!(drivers.windows(2).all(|w| w[0] == w[1]), "{drivers:x?}");

    let installed = install().unwrap();
    assert_eq!(installed as *const cudrv::Driver as usize, drivers[0]);
    // cudrv's process-wide driver is the stand-in, in-process, at the environment's version.
    let init = cudrv::init().unwrap();
    assert!(std::ptr::eq(init, installed));
    assert!(std::ptr::eq(cudrv::driver().unwrap(), installed));
    assert_eq!(init.source(), "in-process driver");
    assert_eq!(init.path(), None);
    assert_eq!(init.driver_version_code(), StandIn::from_env().version());
    assert_eq!(init.device_count().unwrap(), usize::try_from(cudrv_standin::device_count()).unwrap());
    assert_eq!(init.device(0).unwrap().name().unwrap(), cudrv_standin::DEVICE_NAME);
    // The free functions call it too.
    let mut count = 0;
    // SAFETY: a valid out-pointer.
    unsafe { cudrv::pc::cuDeviceGetCount(&mut count) }.unwrap();
    assert_eq!(count, cudrv_standin::device_count());
    // Installing once more changes nothing.
    assert!(std::ptr::eq(install().unwrap(), init));
}

#[test]
fn a_kernel_registered_from_rust_runs_through_the_safe_layer_after_install() {
    register_kernel("install_test_add_one", &[Param::Ptr, Param::I32], |t| {
        let (x, n) = (t.ptr(0)?, t.param::<i32>(1)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store::<u32>(x, i, t.load::<u32>(x, i)? + 1)?;
        }
        Ok(())
    });
    install().unwrap();
    let ctx = cudrv::init().unwrap().device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let ptx = c".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry install_test_add_one(.param .u64 x, .param .u32 n)\n{\n\tret;\n}\n";
    let module = Module::load_ptx(&ctx, ptx).unwrap();
    let x = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4, 5]).unwrap();
    let n = 5i32;
    let f = module.function("install_test_add_one").unwrap();
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&n);
    // SAFETY: the arguments match install_test_add_one(unsigned*, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(5)) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), [2, 3, 4, 5, 6]);
}

/// Runs `scenario` in a child process (this test binary, its ignored `child` test) and
/// returns its output; fails if the child failed.
fn run_child(scenario: &str, envs: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"]);
    for var in [
        cudrv::ENV_LIBCUDA,
        cudrv::ENV_MAX_VERSION,
        cudrv::ENV_PER_THREAD,
        cudrv_standin::ENV_VERSION,
        cudrv_standin::ENV_DEVICES,
    ] {
        cmd.env_remove(var);
    }
    cmd.env(CHILD_ENV, scenario).envs(envs.iter().copied());
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scenario {scenario}:\n{text}");
    assert!(text.contains(&format!("scenario {scenario}: passed")), "scenario {scenario} did not run:\n{text}");
    text
}

#[test]
fn a_driver_set_before_install_is_refused_with_other_driver() {
    run_child("other-driver", &[]);
}

#[test]
fn a_failed_load_before_install_is_refused_with_loaded_before() {
    run_child("loaded-before", &[(cudrv::ENV_LIBCUDA, "/nonexistent/libcuda.so.1")]);
}

#[test]
fn install_emulates_the_version_of_cudrv_standin_version() {
    run_child("version", &[(cudrv_standin::ENV_VERSION, "12.4")]);
}

#[test]
fn install_emulates_the_devices_of_cudrv_standin_devices() {
    run_child("devices", &[(cudrv_standin::ENV_DEVICES, "3")]);
}

#[test]
#[ignore = "run by the tests above in a child process"]
fn child() {
    let Ok(scenario) = std::env::var(CHILD_ENV) else { return };
    match scenario.as_str() {
        "other-driver" => {
            // The program sets a driver of its own first (a 12.4 stand-in, as another
            // driver would be): install refuses, names it, and leaves it in place.
            let other = StandIn::new(12040).unwrap().load(LoadOptions::default()).unwrap();
            let other = cudrv::set_driver(other).ok().unwrap();
            let err = install().unwrap_err();
            assert_eq!(err, InstallError::OtherDriver { driver: "in-process driver".into(), version: "12.4.0".into() });
            let text = err.to_string();
            assert!(text.contains("already in-process driver (CUDA 12.4.0)"), "{text}");
            assert!(text.contains("call install() before anything that loads the driver"), "{text}");
            // The same answer every time, from any thread; the driver stays the program's.
            let again = std::thread::spawn(install).join().unwrap();
            assert_eq!(again.unwrap_err(), err);
            assert!(std::ptr::eq(cudrv::init().unwrap(), other));
        }
        "loaded-before" => {
            // cudrv looked for its driver first (CUDRV_LIBCUDA names nothing) and failed.
            let load = cudrv::driver().unwrap_err();
            let err = install().unwrap_err();
            assert_eq!(err, InstallError::LoadedBefore(load));
            let text = err.to_string();
            assert!(text.contains("/nonexistent/libcuda.so.1"), "{text}");
            assert!(text.contains("call install() before"), "{text}");
            assert_eq!(install().unwrap_err(), err);
        }
        "version" => {
            let d = install().unwrap();
            assert_eq!(d.driver_version_code(), 12040);
            assert_eq!(d.version().to_string(), "12.4.0");
            // An entry newer than 12.4 is gated, as on a 12.4 driver.
            assert!(!d.entry("cuLaunchHostFunc_v13010").unwrap().availability.is_resolved());
            cudrv::init().unwrap();
        }
        "devices" => {
            let d = install().unwrap();
            assert_eq!(cudrv::init().unwrap().device_count().unwrap(), 3);
            // Each one usable through the safe layer: a buffer on the last one.
            let ctx = d.device(2).unwrap().primary_context().unwrap();
            let x = DeviceBuffer::from_slice(&ctx, &[7u32, 8]).unwrap();
            assert_eq!(x.to_vec().unwrap(), [7, 8]);
            assert!(d.device(3).is_err());
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("scenario {scenario}: passed");
}
