//! Calls whose handles name their context (a launch on a created stream, a graph launch,
//! an executable-graph update, occupancy of a module's function) give the same results
//! whatever context is current on the calling thread, none or another one, and leave it
//! as it was. The first three make no context query on driver 13.0+ (the H200's answers,
//! docs/driver-facts.md) and one on older drivers; occupancy always makes one (the driver
//! refuses it with no context current). Run on the stand-in at 13.5 and 12.4.

mod common;

use common::{capture_reports, clear_current, current_context};
use cudrv::sys::{CUcontext, CUresult};
use cudrv::{Context, DeviceBuffer, Driver, Graph, LaunchConfig, Module, Stream};
use cudrv_standin::{StandIn, Times};

const SCALE: &str = include_str!("../examples/kernels/scale_f32.ptx");

/// A stand-in emulating `version` and a driver loaded from it, with cuInit done.
fn standin(version: u32) -> (StandIn, &'static Driver) {
    let standin = StandIn::new(version).unwrap();
    let d = standin.load(Default::default()).unwrap();
    let d: &'static Driver = Box::leak(Box::new(d));
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
    (standin, d)
}

fn driver(version: u32) -> &'static Driver {
    standin(version).1
}

/// Makes `ctx` (null: none) current through the driver itself.
fn make_current(d: &Driver, ctx: CUcontext) {
    if ctx.is_null() {
        clear_current(d);
    } else {
        // SAFETY: a live context.
        assert_eq!(unsafe { d.p().cuCtxSetCurrent(ctx) }, CUresult::CUDA_SUCCESS);
    }
}

/// Runs the calls with `current` (null: none) current, checking each result and that the
/// thread's context is still `current` after each.
fn calls_with(d: &'static Driver, ctx: &Context, current: CUcontext) {
    let what = format!("driver {} with {current:?} current", d.version());
    let stream = Stream::new(ctx, 1).unwrap();
    let f = Module::from_ptx(ctx, SCALE).unwrap().function("scale_f32").unwrap();
    let x = DeviceBuffer::from_slice(ctx, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let (s, n) = (2.0f32, 4i32);
    let config = LaunchConfig::for_num_elems(4);
    let blocks = f.max_active_blocks_per_multiprocessor(256, 0, 0).unwrap();
    let graph = Graph::new(ctx).unwrap();
    let mut params = graph.kernel_params(&f);
    params.arg(&x).arg(&s).arg(&n);
    // SAFETY: scale_f32(float*, float, int).
    unsafe { graph.add_kernel_node(&[], &params, config) }.unwrap();
    let mut exec = graph.instantiate().unwrap();

    make_current(d, current);
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&s).arg(&n);
    // SAFETY: scale_f32(float*, float, int).
    unsafe { launch.launch(config) }.unwrap();
    assert_eq!(current_context(d), current, "{what}: after a launch");
    exec.launch(&stream).unwrap();
    assert_eq!(current_context(d), current, "{what}: after a graph launch");
    exec.update(&graph).unwrap();
    assert_eq!(current_context(d), current, "{what}: after an update");
    assert_eq!(f.max_active_blocks_per_multiprocessor(256, 0, 0).unwrap(), blocks, "{what}: occupancy");
    assert_eq!(current_context(d), current, "{what}: after an occupancy query");
    stream.synchronize().unwrap();
    assert_eq!(current_context(d), current, "{what}: after a synchronize");
    assert_eq!(x.to_vec().unwrap(), [4.0, 8.0, 12.0, 16.0], "{what}: the launch and the graph ran, in order");
}

#[test]
fn calls_naming_their_context_work_with_none_or_another_current() {
    capture_reports();
    for version in [cudrv::table::HEADER_VERSION, 12040] {
        let d = driver(version);
        let ctx = d.device(0).unwrap().primary_context().unwrap();
        let other = Context::new(&d.device(0).unwrap(), 0).unwrap();
        calls_with(d, &ctx, std::ptr::null_mut());
        calls_with(d, &ctx, other.as_raw());
        calls_with(d, &ctx, ctx.as_raw());
        clear_current(d);
    }
}

#[test]
fn a_default_stream_launch_still_runs_in_its_context() {
    capture_reports();
    let d = driver(cudrv::table::HEADER_VERSION);
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let other = Context::new(&d.device(0).unwrap(), 0).unwrap();
    let f = Module::from_ptx(&ctx, SCALE).unwrap().function("scale_f32").unwrap();
    let x = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0]).unwrap();
    let (s, n) = (3.0f32, 2i32);
    for current in [std::ptr::null_mut(), other.as_raw()] {
        make_current(d, current);
        let legacy = Stream::legacy_default(&ctx);
        let mut launch = f.builder(&legacy);
        launch.arg(&x).arg(&s).arg(&n);
        // SAFETY: scale_f32(float*, float, int).
        unsafe { launch.launch(LaunchConfig::for_num_elems(2)) }.unwrap();
        assert_eq!(current_context(d), current);
    }
    ctx.synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), [9.0, 18.0]);
    clear_current(d);
}

#[test]
fn from_driver_13_they_make_no_context_query() {
    capture_reports();
    // With every cuCtxGetCurrent of this thread failing, the calls that switch fail and
    // the ones that do not succeed.
    for (version, switches) in [(cudrv::table::HEADER_VERSION, false), (12040, true)] {
        let (standin, d) = standin(version);
        let ctx = d.device(0).unwrap().primary_context().unwrap();
        ctx.set_current().unwrap();
        let stream = Stream::new(&ctx, 1).unwrap();
        let f = Module::from_ptx(&ctx, SCALE).unwrap().function("scale_f32").unwrap();
        let x = DeviceBuffer::from_slice(&ctx, &[1.0f32]).unwrap();
        let (s, n) = (2.0f32, 1i32);
        let graph = Graph::new(&ctx).unwrap();
        let mut exec = graph.instantiate().unwrap();
        // The first launch learns the kernel's layout and the buffer's first use on the
        // stream (whether it captures): once per handle, not per launch.
        let mut first = f.builder(&stream);
        first.arg(&x).arg(&s).arg(&n);
        // SAFETY: scale_f32(float*, float, int).
        unsafe { first.launch(LaunchConfig::for_num_elems(1)) }.unwrap();
        standin.inject_on_this_thread(cudrv::call::cuCtxGetCurrent, CUresult::CUDA_ERROR_UNKNOWN, Times::Always);
        let mut launch = f.builder(&stream);
        launch.arg(&x).arg(&s).arg(&n);
        // SAFETY: scale_f32(float*, float, int).
        let launched = unsafe { launch.launch(LaunchConfig::for_num_elems(1)) }.is_ok();
        let graph_launched = exec.launch(&stream).is_ok();
        let updated = exec.update(&graph).is_ok();
        // Occupancy asks which context is current on every driver: with none, the driver
        // refuses it (an API error compute-sanitizer would report), so cudrv does not try.
        let occupancy = f.max_active_blocks_per_multiprocessor(256, 0, 0).is_ok();
        standin.clear_faults();
        let done = [launched, graph_launched, updated];
        assert_eq!(done, [!switches; 3], "driver {version}: launch, graph launch, update");
        assert!(!occupancy, "driver {version}: occupancy asks for the current context");
        stream.synchronize().unwrap();
        let want = if switches { 2.0 } else { 4.0 };
        assert_eq!(x.to_vec().unwrap(), [want], "driver {version}");
        clear_current(d);
    }
}
