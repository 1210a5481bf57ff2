//! The launch builder's checks on the stand-in (issue 15, item 5): the arguments against
//! the kernel's parameter layout (count and sizes, the layout asked once per handle), and
//! the function, the stream and every buffer argument of one context.

mod common;

use common::{fake_ptx, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, DeviceSlice, Error, JitOptions, LaunchConfig, Library, Module, Stream};
use cudrv_standin::{faults, Times};

const VECTOR_ADD: &str = include_str!("../examples/kernels/vector_add.ptx");

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// The text of an InvalidArgument (panics on any other result).
fn refused(r: Result<(), Error>) -> String {
    match r {
        Err(Error::InvalidArgument(e)) => e.to_string(),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn argument_count_and_sizes_are_checked_against_the_layout() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let n = 4usize;
    let (a, b, c) = (
        DeviceBuffer::from_slice(&ctx, &[1.0f32; 4]).unwrap(),
        DeviceBuffer::from_slice(&ctx, &[2.0f32; 4]).unwrap(),
        DeviceBuffer::<f32>::zeroed(&ctx, n).unwrap(),
    );
    let (count, wide, extra) = (n as i32, n as u64, 7i32);
    let config = LaunchConfig::for_num_elems(n as u32);

    // Five arguments for four parameters.
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&count).arg(&extra);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("kernel `vector_add`: expected 4 parameters, got 5"), "{text}");
    // Three.
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("expected 4 parameters, got 3"), "{text}");
    // A u64 where the kernel takes an int.
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&wide);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("kernel `vector_add`: parameter 3 takes 4 bytes, argument 3 has 8"), "{text}");
    assert_eq!(c.to_vec().unwrap(), [0.0; 4], "nothing ran");

    // The layout was asked once and kept in the handle: with the driver's answers now
    // failing, the check still holds (a fresh handle of the same kernel would not know).
    faults::inject_on_this_thread(cudrv::call::cuFuncGetParamInfo, CUresult::CUDA_ERROR_UNKNOWN, Times::N(100));
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&count).arg(&extra);
    // SAFETY: refused before the launch.
    let cached = unsafe { launch.launch(config) };
    let fresh = module.function("vector_add").unwrap();
    let mut unchecked = fresh.builder(&stream);
    unchecked.arg(&a).arg(&b).arg(&c).arg(&count);
    // SAFETY: vector_add(const float*, const float*, float*, int) with n values each.
    let fresh_launch = unsafe { unchecked.launch(config) };
    faults::clear();
    assert!(refused(cached).contains("expected 4 parameters, got 5"));
    fresh_launch.unwrap();
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&count);
    // SAFETY: as above.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(c.to_vec().unwrap(), [3.0; 4]);
}

#[test]
fn a_library_kernel_is_checked_too() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let lib = Library::from_ptx_with(standin_driver(), VECTOR_ADD, &JitOptions::new()).unwrap().value;
    let k = lib.kernel("vector_add").unwrap();
    let a = DeviceBuffer::<f32>::alloc(&ctx, 4).unwrap();
    let mut launch = k.builder(&stream);
    launch.arg(&a);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(LaunchConfig::for_num_elems(4)) });
    assert!(text.contains("kernel `vector_add`: expected 4 parameters, got 1"), "{text}");
}

#[test]
fn a_kernel_whose_layout_the_driver_does_not_report_is_not_checked() {
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    // A fake image's kernel: the stand-in answers cuFuncGetParamInfo with NOT_SUPPORTED.
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let f = module.function("k").unwrap();
    let x = 5u64;
    let mut launch = f.builder(&stream);
    launch.arg(&x).arg(&x);
    // SAFETY: a fake kernel runs nothing.
    unsafe { launch.launch(LaunchConfig::new((1, 1, 1), (1, 1, 1))) }.unwrap();
}

#[test]
fn function_stream_and_buffers_of_one_context() {
    let d = standin_driver();
    let ctx = context();
    let other = Context::new(&d.device(0).unwrap(), 0).unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let other_stream = Stream::new(&other, 0).unwrap();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let mine = DeviceBuffer::<f32>::alloc(&ctx, 4).unwrap();
    let theirs = DeviceBuffer::<f32>::alloc(&other, 4).unwrap();
    let n = 4i32;
    let config = LaunchConfig::for_num_elems(4);

    // The function of one context on a stream of another.
    let mut launch = f.builder(&other_stream);
    launch.arg(&mine).arg(&mine).arg(&mine).arg(&n);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(
        text.contains("kernel `vector_add` belongs to context") && text.contains("the stream to context"),
        "{text}"
    );

    // A buffer of another context (the same device, no peer access).
    let mut launch = f.builder(&stream);
    launch.arg(&mine).arg(&theirs).arg(&mine).arg(&n);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("argument 1 of kernel `vector_add` is memory of context"), "{text}");
    let view = theirs.slice(1..).unwrap();
    let mut launch = f.builder(&stream);
    launch.arg(&mine).arg(&mine).arg(&view).arg(&n);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("argument 2 of"), "{text}");

    // All of one context: launched.
    let mut launch = f.builder(&stream);
    launch.arg(&mine).arg(&mine).arg(&mine).arg(&n);
    // SAFETY: vector_add with 4 values each.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn launch_attributes_as_a_typed_list() {
    use cudrv::{AccessPolicyWindow, AccessProperty, Event, LaunchAttribute, MemSyncDomain};
    let ctx = context();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    let n = 256usize;
    let (a, b, c) = (
        DeviceBuffer::from_slice(&ctx, &vec![1.0f32; n]).unwrap(),
        DeviceBuffer::from_slice(&ctx, &vec![2.0f32; n]).unwrap(),
        DeviceBuffer::<f32>::alloc(&ctx, n).unwrap(),
    );
    let count = n as i32;
    let config = LaunchConfig::new((8, 1, 1), (32, 1, 1));
    let event = Event::new(&ctx, 0).unwrap();
    let mut launch = f.builder(&stream);
    launch
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(&count)
        .attribute(LaunchAttribute::ClusterDimension(2, 1, 1))
        .attribute(LaunchAttribute::PreferredClusterDimension(4, 1, 1))
        .attribute(LaunchAttribute::Priority(-1))
        .attribute(LaunchAttribute::ProgrammaticStreamSerialization(true))
        .attribute(LaunchAttribute::MemSyncDomain(MemSyncDomain::Remote))
        .attribute(LaunchAttribute::AccessPolicyWindow(AccessPolicyWindow {
            base: a.as_raw(),
            bytes: n * 4,
            hit_ratio: 0.5,
            hit: AccessProperty::Persisting,
            miss: AccessProperty::Streaming,
        }))
        .programmatic_event(&event, false);
    // SAFETY: vector_add with n values each.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![3.0; n]);

    // The stand-in checks them as cuLaunchKernelEx does: a cluster that does not divide
    // the grid, a preferred cluster that is not a multiple of the cluster, a window with
    // a hit ratio above 1.
    for (attr, code) in [
        (LaunchAttribute::ClusterDimension(3, 1, 1), CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE),
        (LaunchAttribute::ClusterDimension(16, 1, 1), CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE),
        (
            LaunchAttribute::AccessPolicyWindow(AccessPolicyWindow {
                base: a.as_raw(),
                bytes: 4,
                hit_ratio: 2.0,
                hit: AccessProperty::Normal,
                miss: AccessProperty::Normal,
            }),
            CUresult::CUDA_ERROR_INVALID_VALUE,
        ),
    ] {
        let mut launch = f.builder(&stream);
        launch.arg(&a).arg(&b).arg(&c).arg(&count).attribute(attr);
        // SAFETY: as above (refused by the driver).
        let e = unsafe { launch.launch(LaunchConfig::new((16, 1, 1), (16, 1, 1))) }.unwrap_err();
        assert_eq!(e.code(), Some(code), "{attr:?}: {e}");
    }
    let mut launch = f.builder(&stream);
    launch
        .arg(&a)
        .arg(&b)
        .arg(&c)
        .arg(&count)
        .attribute(LaunchAttribute::ClusterDimension(2, 1, 1))
        .attribute(LaunchAttribute::PreferredClusterDimension(3, 1, 1));
    // SAFETY: as above (refused by the driver).
    let e = unsafe { launch.launch(config) }.unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_CLUSTER_SIZE), "{e}");
}

#[test]
fn an_attribute_newer_than_the_driver_names_the_version_it_needs() {
    use cudrv::LaunchAttribute;
    common::capture_reports();
    let old = cudrv_standin::StandIn::new(12040).unwrap().load(Default::default()).unwrap();
    let old: &'static cudrv::Driver = Box::leak(Box::new(old));
    old.init().unwrap();
    let ctx = old.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::load_ptx(&ctx, &fake_ptx(&["k"])).unwrap();
    let k = module.function("k").unwrap();
    let mut launch = k.builder(&stream);
    launch.attribute(LaunchAttribute::PreferredClusterDimension(2, 1, 1));
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (1, 1, 1))) });
    assert!(
        text.contains("launch attribute PreferredClusterDimension needs driver 12.8; this driver is 12.4"),
        "{text}"
    );
    let mut launch = k.builder(&stream);
    launch.attribute(LaunchAttribute::MemSyncDomain(cudrv::MemSyncDomain::Default));
    // SAFETY: a fake kernel runs nothing.
    unsafe { launch.launch(LaunchConfig::new((2, 1, 1), (1, 1, 1))) }.unwrap();
}

/// On a driver that reports parameters per index only (12.4 to 13.1: no
/// `cuFuncGetParamCount`), the first launch asks for the indices it passes and none past
/// them; too many arguments are still caught, and fewer than a launch passed before.
#[test]
fn before_13_2_the_layout_is_asked_per_index_and_never_past_the_arguments() {
    let s = cudrv_standin::StandIn::isolated(13000).unwrap();
    let d: &'static cudrv::Driver = Box::leak(Box::new(s.load(Default::default()).unwrap()));
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    let stream = Stream::new(&ctx, 0).unwrap();
    let module = Module::from_ptx(&ctx, VECTOR_ADD).unwrap();
    let f = module.function("vector_add").unwrap();
    assert!(f.param_count().unwrap_err().unresolved().is_some(), "13.0 has no cuFuncGetParamCount");
    let (a, b) =
        (DeviceBuffer::from_slice(&ctx, &[1.0f32; 4]).unwrap(), DeviceBuffer::from_slice(&ctx, &[2.0f32; 4]).unwrap());
    let c = DeviceBuffer::<f32>::alloc(&ctx, 4).unwrap();
    let (count, extra) = (4i32, 7i32);
    let config = LaunchConfig::for_num_elems(4);
    // The first launch: right; every index asked for exists (no refused call).
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&count);
    // SAFETY: vector_add(const float*, const float*, float*, int) with 4 values each.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(c.to_vec().unwrap(), [3.0; 4]);
    // Five: index 4 is refused by the driver.
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c).arg(&count).arg(&extra);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("kernel `vector_add`: expected 4 parameters, got 5"), "{text}");
    // Three: fewer than the first launch passed.
    let mut launch = f.builder(&stream);
    launch.arg(&a).arg(&b).arg(&c);
    // SAFETY: refused before the launch.
    let text = refused(unsafe { launch.launch(config) });
    assert!(text.contains("expected at least 4 parameters, got 3"), "{text}");
}
