//! Registration of the program's host memory (issue 18, item 5) on the stand-in: a guard
//! over the borrowed slice, its device pointer, copies through it, the refusal of a
//! second registration, and unregistration when the guard is dropped.

use cudrv::sys::CUresult;
use cudrv::{Context, DeviceBuffer, DeviceSlice, HostRegisterFlags, HostRegistration, PointerAttributes};
use cudrv_standin::{AllocationKind, StandIn};

fn world() -> (StandIn, &'static cudrv::Driver, Context) {
    let s = StandIn::isolated(cudrv::table::HEADER_VERSION).unwrap();
    let d: &'static cudrv::Driver = Box::leak(Box::new(s.load(Default::default()).unwrap()));
    // SAFETY: plain call.
    assert_eq!(unsafe { d.p().cuInit(0) }, CUresult::CUDA_SUCCESS);
    let ctx = d.device(0).unwrap().primary_context().unwrap();
    (s, d, ctx)
}

fn registered(s: &StandIn) -> usize {
    s.ledger().live.iter().filter(|a| a.kind == AllocationKind::Registered).count()
}

#[test]
fn registered_memory_is_mapped_and_unregistered_on_drop() {
    let (s, d, ctx) = world();
    let mut values = vec![0u32; 1024];
    let host = values.as_ptr() as u64;
    {
        let mut reg =
            HostRegistration::new(&ctx, &mut values, HostRegisterFlags::DEVICEMAP | HostRegisterFlags::PORTABLE)
                .unwrap();
        assert_eq!((reg.len(), registered(&s)), (1024, 1));
        reg.as_mut_slice()[..3].copy_from_slice(&[7, 8, 9]);
        // Mapped: the device reads it at its device pointer (the stand-in's is the host
        // address, as a real driver's is with unified addressing).
        let device = reg.device_pointer().unwrap();
        assert_eq!(device, host);
        // SAFETY: 1024 values at `device` stay registered while `view` is used (below).
        let view = unsafe { DeviceBuffer::<u32>::borrowed(&ctx, device, 1024) };
        assert_eq!(view.slice(..4).unwrap().to_vec().unwrap(), [7, 8, 9, 0]);
        drop(view);
        let a = PointerAttributes::of(d, host).unwrap();
        assert_eq!((a.memory_type, a.range_start, a.range_size), (Some(cudrv::MemoryType::Host), host, 4096));
        // A second registration of the same memory is refused.
        ctx.set_current().unwrap();
        // SAFETY: the guard's memory, registered again only to see the driver refuse it.
        let st = unsafe { d.p().cuMemHostRegister(host as *mut std::ffi::c_void, 16, 0) };
        assert_eq!(st, CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        assert_eq!(reg.as_slice()[..3], [7, 8, 9]);
    }
    assert_eq!(registered(&s), 0, "the guard's drop unregistered it");
    assert_eq!(values[..3], [7, 8, 9], "the slice is the program's again");
    // SAFETY: an address that is not registered (any more).
    let st = unsafe { d.p().cuMemHostUnregister(host as *mut std::ffi::c_void) };
    assert_eq!(st, CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
}

#[test]
fn without_device_map_or_bytes() {
    let (s, _d, ctx) = world();
    let mut values = vec![1.5f64; 16];
    let reg = HostRegistration::new(&ctx, &mut values, 0u32).unwrap();
    assert_eq!(reg.as_slice(), [1.5; 16]);
    drop(reg);
    // No bytes: nothing registered, no driver call, a null device pointer.
    let mut none: [u64; 0] = [];
    let empty = HostRegistration::new(&ctx, &mut none, HostRegisterFlags::DEVICEMAP).unwrap();
    assert_eq!((empty.len(), empty.device_pointer().unwrap(), registered(&s)), (0, 0, 0));
    // An unknown flag: refused, nothing registered.
    let mut more = vec![0u8; 8];
    let e = HostRegistration::new(&ctx, &mut more, 1u32 << 20).unwrap_err();
    assert_eq!((e.code(), registered(&s)), (Some(CUresult::CUDA_ERROR_INVALID_VALUE), 0));
}
