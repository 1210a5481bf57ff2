//! Peer access and peer copies on the in-process stand-in with two devices.
//!
//! Peer access is a state of a pair of contexts, so each test makes its own contexts: the
//! tests of this binary run in parallel and must not share a pair.

use std::sync::OnceLock;

use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, Driver, Stream};

fn driver() -> &'static Driver {
    static DRIVER: OnceLock<&'static Driver> = OnceLock::new();
    DRIVER.get_or_init(|| {
        assert!(cudrv_standin::set_device_count(2));
        let d = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().load(Default::default()).unwrap();
        let d: &'static Driver = Box::leak(Box::new(d));
        d.init().unwrap();
        d
    })
}

/// New contexts on devices 0 and 1.
fn pair() -> (Context, Context) {
    let d = driver();
    (Context::new(&d.device(0).unwrap(), 0).unwrap(), Context::new(&d.device(1).unwrap(), 0).unwrap())
}

fn current() -> cudrv::sys::CUcontext {
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { driver().p().cuCtxGetCurrent(&mut c) }, CUresult::CUDA_SUCCESS);
    c
}

#[test]
fn enabling_twice_and_disabling_twice_set_the_state_and_say_whether_it_changed() {
    let (c0, c1) = pair();
    assert!(c0.enable_peer_access(&c1).unwrap());
    // The driver's 704 (already enabled) is the state asked for: Ok(false).
    assert!(!c0.enable_peer_access(&c1).unwrap());
    // One-way: the other direction is still off, and enabling it is a change.
    assert!(!c1.disable_peer_access(&c0).unwrap());
    assert!(c1.enable_peer_access(&c0).unwrap());
    assert!(c0.disable_peer_access(&c1).unwrap());
    // The driver's 705 (not enabled): Ok(false).
    assert!(!c0.disable_peer_access(&c1).unwrap());
    // Disabling c0 -> c1 left c1 -> c0 alone.
    assert!(c1.disable_peer_access(&c0).unwrap());
}

#[test]
fn a_context_of_the_same_device_is_an_error_and_the_callers_context_stays() {
    let d = driver();
    let (a, b) = (Context::new(&d.device(0).unwrap(), 0).unwrap(), Context::new(&d.device(0).unwrap(), 0).unwrap());
    let before = current();
    let e = a.enable_peer_access(&b).unwrap_err();
    assert_eq!(e.code(), Some(CUresult::CUDA_ERROR_INVALID_DEVICE));
    assert!(e.to_string().contains("cuCtxEnablePeerAccess"), "{e}");
    assert_eq!(current(), before);
    // Nothing was enabled, so disabling finds nothing to do.
    assert!(!a.disable_peer_access(&b).unwrap());
}

#[test]
fn a_peer_copy_moves_the_values_between_devices_with_or_without_access() {
    let (c0, c1) = pair();
    let values: Vec<u32> = (0..4096).map(|i| i * 7 + 1).collect();
    let src = DeviceBuffer::from_slice(&c0, &values).unwrap();
    let s1 = Stream::new(&c1, 0).unwrap();
    for enable in [false, true] {
        if enable {
            assert!(c1.enable_peer_access(&c0).unwrap());
        }
        let dst = DeviceBuffer::<u32>::zeroed(&c1, 5000).unwrap();
        dst.copy_from_peer_async(&src, &s1).unwrap();
        s1.synchronize().unwrap();
        let back = dst.to_vec().unwrap();
        assert_eq!(&back[..4096], &values[..], "peer access {enable}");
        assert_eq!(dst.context().device().as_raw(), 1);
    }
}

#[test]
fn a_peer_copy_longer_than_its_destination_is_refused_before_the_driver() {
    let (c0, c1) = pair();
    let src = DeviceBuffer::<u32>::alloc(&c0, 100).unwrap();
    let dst = DeviceBuffer::<u32>::alloc(&c1, 99).unwrap();
    let s1 = Stream::new(&c1, 0).unwrap();
    let e = dst.copy_from_peer_async(&src, &s1).unwrap_err();
    assert!(e.as_driver().is_none(), "{e}");
    assert!(e.to_string().contains("copy_from_peer_async"), "{e}");
}

#[test]
fn an_event_of_device_0_orders_a_stream_of_device_1() {
    let (c0, c1) = pair();
    let (s0, s1) = (Stream::new(&c0, 0).unwrap(), Stream::new(&c1, 0).unwrap());
    let src = DeviceBuffer::from_slice(&c0, &[5u8; 256]).unwrap();
    src.fill_async(9, &s0).unwrap();
    let done = s0.record_event(0).unwrap();
    s1.wait_event(&done).unwrap();
    let dst = DeviceBuffer::<u8>::alloc(&c1, 256).unwrap();
    dst.copy_from_peer_async(&src, &s1).unwrap();
    s1.synchronize().unwrap();
    assert_eq!(dst.to_vec().unwrap(), vec![9u8; 256]);
}

#[test]
fn kernel_node_parameters_with_a_peer_buffer_are_checked_again_after_access_is_disabled() {
    let (c0, c1) = pair();
    let f = cudrv::Module::from_ptx(&c0, include_str!("../examples/kernels/scale_f32.ptx"))
        .unwrap()
        .function("scale_f32")
        .unwrap();
    let own = DeviceBuffer::from_slice(&c0, &[1.0f32; 4]).unwrap();
    let peer = DeviceBuffer::from_slice(&c1, &[1.0f32; 4]).unwrap();
    let (s, n) = (2.0f32, 4i32);
    let config = cudrv::LaunchConfig::for_num_elems(4);
    let graph = cudrv::Graph::new(&c0).unwrap();
    let mut on_own = graph.kernel_params(&f);
    on_own.arg(&own).arg(&s).arg(&n);
    // SAFETY: scale_f32(float*, float, int).
    let node = unsafe { graph.add_kernel_node(&[], &on_own, config) }.unwrap();
    let mut exec = graph.instantiate().unwrap();
    assert!(c0.enable_peer_access(&c1).unwrap());
    let mut on_peer = graph.kernel_params(&f);
    on_peer.arg(&peer).arg(&s).arg(&n);
    // SAFETY: as above; device 0 reaches the peer buffer.
    unsafe { exec.set_kernel_node_params(&node, &on_peer, config) }.unwrap();
    assert!(c0.disable_peer_access(&c1).unwrap());
    // SAFETY: refused before the driver is called.
    let e = unsafe { exec.set_kernel_node_params(&node, &on_peer, config) }.unwrap_err();
    assert!(e.to_string().contains("cannot reach"), "{e}");
    // Parameters of the graph's own context passed once stay passed, but a pushed
    // argument is checked again.
    // SAFETY: as above.
    unsafe { exec.set_kernel_node_params(&node, &on_own, config) }.unwrap();
    on_own.arg(&n);
    // SAFETY: refused before the driver is called.
    let e = unsafe { exec.set_kernel_node_params(&node, &on_own, config) }.unwrap_err();
    assert!(e.to_string().contains("expected 3 parameters, got 4"), "{e}");
}
