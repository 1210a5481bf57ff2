//! Pointer attributes as one typed query (issue 18, item 6) on the stand-in: device,
//! pinned and mapped virtual memory, and an address the driver did not make.

mod common;

use common::standin_driver;
use cudrv::{
    Access, AddressRange, Context, DeviceBuffer, DeviceSlice, Mapping, MemoryType, PhysicalMemory, PinnedBuffer,
    PointerAttributes, ShareableHandleTypes,
};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

#[test]
fn device_memory_answers_its_range_context_and_device() {
    let ctx = context();
    let buf = DeviceBuffer::<u32>::alloc(&ctx, 100).unwrap();
    let inside = buf.slice(10..).unwrap().as_raw();
    let a = PointerAttributes::of(standin_driver(), inside).unwrap();
    assert_eq!(a.memory_type, Some(MemoryType::Device));
    assert_eq!((a.range_start, a.range_size), (buf.as_raw(), 400));
    assert_eq!((a.device, a.context, a.managed), (0, ctx.as_raw(), false));
    let other = DeviceBuffer::<u32>::alloc(&ctx, 1).unwrap();
    let b = PointerAttributes::of(standin_driver(), other.as_raw()).unwrap();
    assert_ne!(a.buffer_id, b.buffer_id, "each allocation has its own id");
}

#[test]
fn pinned_memory_is_host_memory() {
    let ctx = context();
    let pinned = PinnedBuffer::<u8>::zeroed(&ctx, 64).unwrap();
    let a = PointerAttributes::of(standin_driver(), pinned.as_raw() as u64 + 8).unwrap();
    assert_eq!((a.memory_type, a.range_start, a.range_size), (Some(MemoryType::Host), pinned.as_raw() as u64, 64));
    // Mapped at its own address: the host and the device use one pointer.
    assert_eq!((a.host_pointer as u64, a.device_pointer), (pinned.as_raw() as u64 + 8, pinned.as_raw() as u64 + 8));
    assert!(a.mapped && !a.managed && !a.legacy_ipc_capable);
}

#[test]
fn device_memory_has_no_host_pointer_and_is_legacy_ipc_capable() {
    let ctx = context();
    let buf = DeviceBuffer::<u8>::alloc(&ctx, 16).unwrap();
    let a = PointerAttributes::of(standin_driver(), buf.as_raw()).unwrap();
    assert_eq!((a.host_pointer, a.device_pointer, a.mapped), (std::ptr::null_mut(), buf.as_raw(), true));
    assert!(a.legacy_ipc_capable && a.mempool.is_null());
    assert_eq!(a.allowed_handle_types, ShareableHandleTypes::NONE);
    assert_eq!((a.mapping_base, a.mapping_size), (Some(buf.as_raw()), Some(16)));
}

#[test]
fn an_address_the_driver_did_not_make_has_no_memory_type() {
    let _ctx = context();
    let on_stack = 5u64;
    let a = PointerAttributes::of(standin_driver(), &raw const on_stack as u64).unwrap();
    assert_eq!((a.memory_type, a.range_size), (None, 0));
}

#[test]
fn a_mapping_is_device_memory() {
    let ctx = context();
    let g = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, false).unwrap();
    let range = AddressRange::reserve(&ctx, g, 0).unwrap();
    let memory = PhysicalMemory::new(&ctx.device(), g, ShareableHandleTypes::POSIX_FD).unwrap();
    let map = Mapping::map(&range, 0, &memory).unwrap();
    map.set_access(&[(&ctx.device(), Access::ReadWrite)]).unwrap();
    let a = PointerAttributes::of(standin_driver(), map.as_raw() + 16).unwrap();
    assert_eq!((a.memory_type, a.range_start, a.range_size), (Some(MemoryType::Device), map.as_raw(), g));
    // Memory of no context, exportable as its physical allocation says.
    assert_eq!((a.context, a.allowed_handle_types), (std::ptr::null_mut(), ShareableHandleTypes::POSIX_FD));
    assert!(a.mapped && !a.legacy_ipc_capable);
    assert_eq!(a.access, Access::ReadWrite);
}
