//! Issue 25, item 1: every queued use keeps its memory. On the stand-in, which orders stream
//! work as a GPU does, each case blocks a stream with a host function (a gate another
//! thread opens) so that the work queued behind it is really pending, then does from safe
//! code what used to free, unmap or hand to the host memory that queued work still used:
//! a graph launch is a use of every allocation its nodes use; an unmap (a mapping's, a
//! growable buffer's) waits for the queued work on the range; a managed buffer's host
//! slice waits for a queued graph launch, and is refused while a graph could launch.

mod common;

use std::time::Duration;

use common::{gate, open_later, standin_driver};
use cudrv::sys::CUresult;
use cudrv::{
    Access, AddressRange, Context, CopyEnd, DeviceBuffer, DeviceSlice, DeviceSliceMut, Graph, GrowableBuffer,
    ImportedBuffer, ManagedAttach, ManagedBuffer, Mapping, MemoryPool, PhysicalMemory, ShareableHandleTypes, Stream,
    StreamFlags,
};
use cudrv_standin::{StandIn, Times};

const N: usize = 1 << 16;
const MIB2: usize = 2 << 20;

fn context() -> Context {
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

fn non_blocking(ctx: &Context) -> Stream {
    Stream::new(ctx, StreamFlags::NON_BLOCKING).unwrap()
}

/// A graph of one memset node setting every value of `dst` to `value`.
fn memset_graph(ctx: &Context, dst: &DeviceBuffer<u32>, value: u32) -> Graph {
    let graph = Graph::new(ctx).unwrap();
    graph.add_memset_node(&[], dst, value).unwrap();
    graph
}

/// The program: a stream-ordered buffer that a queued graph launch writes is
/// dropped with its executable graph; a new buffer allocated on the same stream may get its
/// address. The graph's write must land before the free, never in the new buffer.
#[test]
fn dropping_an_executable_graph_and_its_memory_waits_for_the_queued_launch() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    for round in 0..5 {
        let dst = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
        s1.synchronize().unwrap();
        let graph = memset_graph(&ctx, &dst, 7);
        let mut exec = graph.instantiate().unwrap();
        let tx = gate(&s2);
        exec.launch(&s2).unwrap();
        let dst_address = dst.as_raw();
        drop((exec, graph, dst));
        let b = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
        b.fill_async(2, &s1).unwrap();
        let reused = b.as_raw() == dst_address;
        tx.send(()).unwrap();
        s2.synchronize().unwrap();
        s1.synchronize().unwrap();
        let got = b.to_vec().unwrap();
        let wrong = got.iter().filter(|&&v| v != 2).count();
        assert_eq!(
            wrong, 0,
            "round {round}: {wrong} of {N} values overwritten by a freed graph's node (reused: {reused})"
        );
    }
}

/// A kernel-free memcpy graph launched on a stream other than the one its stream-ordered
/// source was allocated and filled on, while that work is still queued: the launch waits
/// for the allocation (and, as for a copy, for nothing else: the fill is ordered by the
/// event the program records, as in CUDA C).
#[test]
fn a_graph_launch_on_another_stream_waits_for_a_queued_stream_ordered_allocation() {
    let ctx = context();
    let (s1, s2) = (non_blocking(&ctx), non_blocking(&ctx));
    let tx = gate(&s1);
    let src = DeviceBuffer::<u32>::alloc_async(&s1, N).unwrap();
    src.fill_async(5, &s1).unwrap();
    let out = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    out.fill(0).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    graph.add_memcpy_node(&[], CopyEnd::buffer(&out), CopyEnd::buffer(&src)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s2).unwrap();
    let opener = open_later(tx);
    s2.synchronize().unwrap();
    opener.join().unwrap();
    let got = out.to_vec().unwrap();
    let wrong = got.iter().filter(|&&v| v != 5).count();
    assert_eq!(wrong, 0, "{wrong} of {N} values copied before the allocation's stream reached it");
}

/// Memory reached through a child graph is a use of the launch: dropping every handle the
/// program has while the launch is queued frees nothing under it.
#[test]
fn memory_reached_through_a_child_graph_is_a_use_of_the_launch() {
    let (w, ctx) = world();
    let s = non_blocking(&ctx);
    let src = DeviceBuffer::<u32>::from_slice(&ctx, &vec![9; N]).unwrap();
    let dst = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    dst.fill(0).unwrap();
    let child = Graph::new(&ctx).unwrap();
    child.add_memcpy_node(&[], CopyEnd::buffer(&dst), CopyEnd::buffer(&src)).unwrap();
    let parent = Graph::new(&ctx).unwrap();
    parent.add_child_graph_node(&[], &child).unwrap();
    let mut exec = parent.instantiate().unwrap();
    let probe = DeviceBuffer::<u32>::alloc(&ctx, N).unwrap();
    let tx = gate(&s);
    exec.launch(&s).unwrap();
    // The destination is read back through a copy queued behind the launch.
    probe.copy_from_device_async(&dst, &s).unwrap();
    let opener = open_later(tx);
    drop((exec, parent, child, src));
    s.synchronize().unwrap();
    opener.join().unwrap();
    assert!(w.ledger().use_after_free.is_empty(), "{:?}", w.ledger().use_after_free);
    assert!(probe.to_vec().unwrap().iter().all(|&v| v == 9));
}

/// The data race: a managed buffer's mutable host slice handed out while a queued
/// graph memcpy node writes it. With the graph alive it is refused (the graph could be
/// launched while the slice lives); once the graph is dropped, the slice waits for the
/// queued launch, and the values under it no longer change.
#[test]
fn a_managed_buffer_s_host_slice_waits_for_a_queued_graph_launch_and_is_refused_while_a_graph_holds_it() {
    let ctx = context();
    let s = non_blocking(&ctx);
    let mut managed = ManagedBuffer::<u32>::zeroed(&ctx, N, ManagedAttach::Global).unwrap();
    let src = DeviceBuffer::<u32>::from_slice(&ctx, &vec![7; N]).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    graph.add_memcpy_node(&[], CopyEnd::view_mut(&managed.as_view_mut()), CopyEnd::buffer(&src)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    let tx = gate(&s);
    exec.launch(&s).unwrap();
    let e = managed.as_mut_slice().unwrap_err().to_string();
    assert!(e.contains("graph") && e.contains("ManagedBuffer::as_mut_slice"), "{e}");
    drop((exec, graph));
    let opener = open_later(tx);
    let slice = managed.as_mut_slice().unwrap();
    let first = slice[0];
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!((first, slice[0], slice[N - 1]), (7, 7, 7), "the values changed under a live &mut");
    opener.join().unwrap();
}

/// A world of its own (its ledger is this test's), and its device's primary context.
fn world() -> (StandIn, Context) {
    common::isolated_world(cudrv::table::HEADER_VERSION)
}

/// A mapping of one granule with read-write access for device 0.
fn accessible_mapping(ctx: &Context) -> Mapping {
    let range = AddressRange::reserve(ctx, MIB2, 0).unwrap();
    let memory = PhysicalMemory::new(&ctx.device(), MIB2, ShareableHandleTypes::NONE).unwrap();
    let map = Mapping::map(&range, 0, &memory).unwrap();
    map.set_access(&[(&ctx.device(), Access::ReadWrite)]).unwrap();
    map
}

/// The case: the last handle of a mapping dropped while a copy into it is queued.
/// The unmap waits for the copy (before: the copy hit unmapped memory and the context was
/// lost).
#[test]
fn dropping_the_last_mapping_waits_for_a_queued_copy_into_it() {
    let (w, ctx) = world();
    let s = non_blocking(&ctx);
    let mut map = accessible_mapping(&ctx);
    let src = DeviceBuffer::<u8>::from_slice(&ctx, &vec![3; MIB2]).unwrap();
    let tx = gate(&s);
    map.copy_from_device_async(&src, &s).unwrap();
    let opener = open_later(tx);
    drop(map);
    s.synchronize().unwrap();
    opener.join().unwrap();
    assert!(w.ledger().live_handles.iter().all(|&(k, _)| k != "memory mapping"));
    ctx.synchronize().unwrap();
}

/// A graph that writes a mapping keeps it mapped after the program drops its handles, and
/// its launch is a use the unmap waits for.
#[test]
fn a_graph_keeps_the_mapping_its_nodes_use() {
    let (w, ctx) = world();
    let s = non_blocking(&ctx);
    let mut map = accessible_mapping(&ctx);
    let graph = Graph::new(&ctx).unwrap();
    let src = DeviceBuffer::<u8>::from_slice(&ctx, &vec![4; MIB2]).unwrap();
    graph.add_memcpy_node(&[], CopyEnd::view_mut(&map.as_view_mut()), CopyEnd::buffer(&src)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    let mappings = |w: &StandIn| w.ledger().live_handles.iter().filter(|&&(k, _)| k == "memory mapping").count();
    drop(map);
    assert_eq!(mappings(&w), 1, "the graph keeps the mapping");
    let tx = gate(&s);
    exec.launch(&s).unwrap();
    let opener = open_later(tx);
    drop((exec, graph));
    s.synchronize().unwrap();
    opener.join().unwrap();
    assert_eq!(mappings(&w), 0);
    ctx.synchronize().unwrap();
}

/// A growable buffer dropped while a copy into it is queued (issued before a growth, so on
/// the memory's earlier handle): its chunks are unmapped only after the copy.
#[test]
fn dropping_a_growable_buffer_waits_for_queued_copies_made_before_and_after_a_growth() {
    let (w, ctx) = world();
    let s = non_blocking(&ctx);
    let mut buf = GrowableBuffer::<u32>::with_chunk_size(&ctx, MIB2, MIB2).unwrap();
    buf.grow(16).unwrap();
    let src = DeviceBuffer::<u32>::from_slice(&ctx, &[6; 16]).unwrap();
    let tx = gate(&s);
    buf.copy_from_device_async(&src, &s).unwrap();
    buf.grow(MIB2 / 4 + 1).unwrap();
    buf.slice_mut(..16).unwrap().copy_from_device_async(&src, &s).unwrap();
    let opener = open_later(tx);
    drop(buf);
    s.synchronize().unwrap();
    opener.join().unwrap();
    assert!(w.ledger().live_handles.iter().all(|&(k, _)| k != "memory mapping"));
    ctx.synchronize().unwrap();
}

/// A failed growth whose undo fails too (the unmap of the chunk it mapped): the chunk stays
/// mapped, is reported, and the next growth uses it (before: every later growth failed,
/// since its addresses were still mapped).
#[test]
fn a_growable_buffer_grows_again_after_a_failed_growth_whose_undo_failed() {
    let (w, ctx) = world();
    let reports = common::collect_all_reports();
    let mut buf = GrowableBuffer::<u8>::with_chunk_size(&ctx, 4 * MIB2, MIB2).unwrap();
    buf.grow(MIB2).unwrap();
    w.inject(cudrv::call::cuMemSetAccess, CUresult::CUDA_ERROR_OUT_OF_MEMORY, Times::Once);
    w.inject(cudrv::call::cuMemUnmap, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
    let e = buf.grow(2 * MIB2).unwrap_err();
    w.clear_faults();
    assert_eq!(e.as_driver().unwrap().code(), CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    assert_eq!((buf.len(), buf.mappings().len()), (MIB2, 2), "the chunk that could not be unmapped stays");
    let unmap_reports = reports.lock().unwrap().iter().filter(|r| r.contains("cuMemUnmap")).count();
    assert_eq!(unmap_reports, 1, "{:?}", reports.lock().unwrap());
    buf.grow(3 * MIB2).unwrap();
    assert_eq!((buf.len(), buf.mappings().len()), (3 * MIB2, 3));
    buf.slice_mut(MIB2..).unwrap().fill(1).unwrap();
    assert!(buf.to_vec().unwrap()[MIB2..].iter().all(|&v| v == 1));
    drop(buf);
    assert!(w.ledger().live_handles.iter().all(|&(k, _)| k != "memory mapping" && k != "physical memory"));
}

/// An imported pool allocation a graph node uses: the graph keeps the import, so dropping
/// the program's handle does not free the mapping under the graph's launches.
#[test]
fn a_graph_keeps_an_imported_buffer_its_nodes_use() {
    let ctx = context();
    let s = Stream::new(&ctx, 0).unwrap();
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::POSIX_FD).unwrap();
    let imported_pool = MemoryPool::import_fd(&ctx, pool.export_fd().unwrap()).unwrap();
    let exported = pool.alloc_async::<u8>(&s, 256).unwrap();
    s.synchronize().unwrap();
    let mut import = ImportedBuffer::import(&imported_pool, &exported.export_ipc().unwrap(), &s).unwrap();
    let address = import.as_raw();
    let src = DeviceBuffer::<u8>::from_slice(&ctx, &[8; 256]).unwrap();
    let graph = Graph::new(&ctx).unwrap();
    graph.add_memcpy_node(&[], CopyEnd::view_mut(&import.as_view_mut()), CopyEnd::buffer(&src)).unwrap();
    let mut exec = graph.instantiate().unwrap();
    drop(import);
    assert!(cudrv_standin::ledger().allocation(address).is_some(), "the import was freed under its graph");
    exec.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(exported.to_vec().unwrap(), [8; 256]);
    drop((exec, graph));
    assert!(cudrv_standin::ledger().allocation(address).is_none(), "the import is freed with its graph");
}
