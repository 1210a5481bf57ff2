//! Virtual memory management (issue 18, item 7) on the stand-in: granularity, reservations,
//! physical allocations, mappings with access, export and import of file descriptors, the
//! growable buffer, and the order drops release things in.

use cudrv::sys::CUresult;
use cudrv::{
    Access, AddressRange, Context, DeviceSlice, DeviceSliceMut, GrowableBuffer, Mapping, PhysicalMemory,
    ShareableHandleTypes,
};
use cudrv_standin::{StandIn, Times};

mod common;

const MIB2: usize = 2 << 20;

/// A world of its own (its ledger is this test's), and its device's primary context.
fn world() -> (StandIn, Context) {
    common::isolated_world(cudrv::table::HEADER_VERSION)
}

/// The virtual memory objects the world's ledger holds.
fn vmm_objects(s: &StandIn) -> Vec<&'static str> {
    let kinds = ["physical memory", "memory mapping", "address reservation"];
    s.ledger().live_handles.iter().map(|&(k, _)| k).filter(|k| kinds.contains(k)).collect()
}

#[test]
fn granularity_is_two_mib_on_the_standin() {
    let (_s, ctx) = world();
    assert_eq!(PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, false).unwrap(), MIB2);
    assert_eq!(PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::POSIX_FD, true).unwrap(), MIB2);
}

#[test]
fn a_mapping_with_access_is_device_memory_and_drops_in_order() {
    let (s, ctx) = world();
    let range = AddressRange::reserve(&ctx, 2 * MIB2, 0).unwrap();
    assert_eq!(range.as_raw() % MIB2 as u64, 0, "reservations are aligned to the granularity");
    let memory = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::NONE).unwrap();
    let mut map = Mapping::map(&range, MIB2, &memory).unwrap();
    assert_eq!(map.as_raw(), range.as_raw() + MIB2 as u64);
    // Mapped, but no device has access yet: not usable memory.
    assert_eq!(map.access(&ctx.device()).unwrap(), Access::None);
    assert_eq!(map.as_view().to_vec().unwrap_err().as_driver().unwrap().code(), CUresult::CUDA_ERROR_INVALID_VALUE);
    map.set_access(&[(&ctx.device(), Access::ReadWrite)]).unwrap();
    assert_eq!(map.access(&ctx.device()).unwrap(), Access::ReadWrite);
    let values: Vec<u8> = (0..MIB2).map(|i| (i % 251) as u8).collect();
    map.copy_from_host(&values).unwrap();
    assert_eq!(map.to_vec().unwrap(), values);
    let mut tail = map.slice_mut(MIB2 - 4..).unwrap();
    tail.fill(7).unwrap();
    assert_eq!(map.slice(MIB2 - 5..).unwrap().to_vec().unwrap(), [values[MIB2 - 5], 7, 7, 7, 7]);
    // The first half of the range is reserved but unmapped: a copy there fails.
    // SAFETY: a view of memory that is not there, used only to show the driver refuses it.
    let unmapped = unsafe { cudrv::DeviceBuffer::<u8>::borrowed(&ctx, range.as_raw(), 16) };
    assert_eq!(unmapped.to_vec().unwrap_err().as_driver().unwrap().code(), CUresult::CUDA_ERROR_INVALID_VALUE);
    drop(unmapped);

    // The range and the memory are still held by the mapping after the caller's handles go.
    drop((range, memory));
    assert_eq!(vmm_objects(&s).len(), 3, "{:?}", s.ledger().live_handles);
    assert_eq!(map.to_vec().unwrap()[..3], values[..3]);
    drop(map);
    // Unmapped, then released, then freed: nothing left, and no report of a failure.
    assert!(vmm_objects(&s).is_empty(), "{:?}", s.ledger().live_handles);
    assert!(s.ledger().double_destroys.is_empty());
}

#[test]
fn mapping_twice_or_outside_the_range_creates_nothing() {
    let (s, ctx) = world();
    let range = AddressRange::reserve(&ctx, MIB2, 0).unwrap();
    let a = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::NONE).unwrap();
    let b = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::NONE).unwrap();
    let map = Mapping::map(&range, 0, &a).unwrap();
    let twice = Mapping::map(&range, 0, &b).unwrap_err();
    assert_eq!(twice.as_driver().unwrap().code(), CUresult::CUDA_ERROR_INVALID_VALUE, "{twice}");
    // Beyond the range: refused before any driver call.
    let outside = Mapping::map(&range, MIB2, &b).unwrap_err();
    assert!(outside.as_driver().is_none(), "{outside}");
    // A size that is not a multiple of the granularity: the driver refuses, nothing made.
    assert!(PhysicalMemory::new(&ctx.device(), 4096, ShareableHandleTypes::NONE).is_err());
    assert!(AddressRange::reserve(&ctx, 4096, 0).is_err());
    assert_eq!(vmm_objects(&s).len(), 4, "range, a, b and one mapping: {:?}", s.ledger().live_handles);
    drop((map, a, b, range));
    assert!(vmm_objects(&s).is_empty());
}

#[test]
fn exported_memory_imported_from_its_descriptor_is_the_same_memory() {
    let (s, ctx) = world();
    let memory = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::POSIX_FD).unwrap();
    let fd = memory.export_fd().unwrap();
    let imported = PhysicalMemory::import_fd(&ctx.device(), &fd, MIB2).unwrap();
    assert_ne!(imported.as_raw(), memory.as_raw());
    let (r1, r2) = (AddressRange::reserve(&ctx, MIB2, 0).unwrap(), AddressRange::reserve(&ctx, MIB2, 0).unwrap());
    let mut m1 = Mapping::map(&r1, 0, &memory).unwrap();
    let m2 = Mapping::map(&r2, 0, &imported).unwrap();
    m1.set_access(&[(&ctx.device(), Access::ReadWrite)]).unwrap();
    m2.set_access(&[(&ctx.device(), Access::Read)]).unwrap();
    m1.slice_mut(..4).unwrap().copy_from_host(&[1, 2, 3, 4]).unwrap();
    assert_eq!(m2.slice(..4).unwrap().to_vec().unwrap(), [1, 2, 3, 4]);
    // Memory made without a shareable type cannot be exported.
    let private = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::NONE).unwrap();
    assert!(private.export_fd().is_err());
    drop((m1, m2, memory, imported, private, r1, r2, fd));
    assert!(vmm_objects(&s).is_empty(), "{:?}", s.ledger().live_handles);
}

#[test]
fn a_growable_buffer_maps_chunks_as_it_grows_and_never_moves() {
    let (s, ctx) = world();
    let per_chunk = MIB2 / 4;
    let mut buf = GrowableBuffer::<f32>::new(&ctx, 4 * per_chunk).unwrap();
    assert_eq!((buf.len(), buf.capacity(), buf.max_len(), buf.mappings().len()), (0, 0, 4 * per_chunk, 0));
    let start = buf.range().as_raw();
    buf.grow(10).unwrap();
    assert_eq!((buf.len(), buf.capacity(), buf.mappings().len()), (10, per_chunk, 1));
    buf.copy_from_host(&[1.5; 10]).unwrap();
    buf.grow(per_chunk + 1).unwrap();
    assert_eq!((buf.as_raw(), buf.mappings().len()), (start, 2), "the address never changes");
    // What was written stays; the second chunk is usable through a view of it.
    assert_eq!(buf.slice(..10).unwrap().to_vec().unwrap(), [1.5; 10]);
    buf.slice_mut(per_chunk..).unwrap().copy_from_host(&[2.5]).unwrap();
    assert_eq!(buf.slice(per_chunk..).unwrap().to_vec().unwrap(), [2.5]);
    // Beyond what it reserved: refused, nothing changes.
    let e = buf.grow(4 * per_chunk + 1).unwrap_err();
    assert!(e.as_driver().is_none(), "{e}");
    assert_eq!((buf.len(), buf.mappings().len()), (per_chunk + 1, 2));
    // A growth whose mapping fails (here: giving access) leaves it as it was: the chunk
    // it mapped is unmapped and released again.
    let before = vmm_objects(&s).len();
    s.inject(cudrv::call::cuMemSetAccess, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Once);
    let e = buf.grow(4 * per_chunk).unwrap_err();
    s.clear_faults();
    assert_eq!(e.as_driver().unwrap().code(), CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    assert_eq!((buf.len(), buf.mappings().len(), vmm_objects(&s).len()), (per_chunk + 1, 2, before));
    buf.grow(4 * per_chunk).unwrap();
    assert_eq!((buf.len(), buf.mappings().len(), buf.as_raw()), (4 * per_chunk, 4, start));
    drop(buf);
    assert!(vmm_objects(&s).is_empty(), "{:?}", s.ledger().live_handles);
}

#[test]
fn access_is_set_over_a_range_of_several_mappings_and_typed_through_a_view() {
    let (_s, ctx) = world();
    let device = ctx.device();
    let range = AddressRange::reserve(&ctx, 2 * MIB2, 0).unwrap();
    let (a, b) = (
        PhysicalMemory::new(&device, MIB2, ShareableHandleTypes::NONE).unwrap(),
        PhysicalMemory::new(&device, MIB2, ShareableHandleTypes::NONE).unwrap(),
    );
    assert_eq!(a.device(), device, "physical memory belongs to a device, not a context");
    let (first, second) = (Mapping::map(&range, 0, &a).unwrap(), Mapping::map(&range, MIB2, &b).unwrap());
    // Past the range: refused before any driver call, nothing changed.
    let e = range.set_access(MIB2, 2 * MIB2, &[(&device, Access::ReadWrite)]).unwrap_err();
    assert!(matches!(e, cudrv::Error::InvalidArgument(_)), "{e}");
    assert_eq!(second.access(&device).unwrap(), Access::None);
    // One call over both mappings.
    range.set_access(0, 2 * MIB2, &[(&device, Access::ReadWrite)]).unwrap();
    assert_eq!(
        (first.access(&device).unwrap(), second.access(&device).unwrap()),
        (Access::ReadWrite, Access::ReadWrite)
    );
    // The bytes as f32 values, through a view: no conversion by hand.
    let mut second = second;
    second.slice_mut(4..8).unwrap().copy_from_host(&1.5f32.to_ne_bytes()).unwrap();
    let floats = second.as_view().cast::<f32>().unwrap();
    assert_eq!(floats.len(), MIB2 / 4);
    assert_eq!(floats.slice(1..2).unwrap().to_vec().unwrap(), [1.5]);
    assert!(second.slice(1..).unwrap().cast::<f32>().is_err(), "not a whole number of f32s, and misaligned");
}
