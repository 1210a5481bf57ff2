//! Queued graph launches and unmaps keep their memory (issue 25), from safe code: each
//! program drops, unmaps or hands to the host memory that queued work still uses, while a
//! host function holds the stream back (a gate another thread opens). Before cudrv counted
//! graph launches as uses and made unmaps wait, these freed memory under a queued graph
//! launch, unmapped it under a queued copy (the context was lost), or let the host write
//! values a queued graph node then overwrote. `cargo run --example graph_memory_uses`;
//! under `compute-sanitizer` on a GPU it must report no error. Exits non-zero on a wrong
//! result.

use std::time::Duration;

use cudrv::{
    Access, AddressRange, Context, CopyEnd, DeviceBuffer, DeviceSlice, DeviceSliceMut, Graph, GrowableBuffer,
    ManagedAttach, ManagedBuffer, Mapping, PhysicalMemory, ShareableHandleTypes, Stream, StreamFlags,
};

#[path = "common/gate.rs"]
mod gate;
use gate::{gate, open_later};

const N: usize = 1 << 20;
const ROUNDS: usize = 5;

/// How many of `values` are not `want`.
fn wrong(values: &[u32], want: u32) -> usize {
    values.iter().filter(|&&v| v != want).count()
}

/// A stream-ordered buffer that a queued graph launch (a memset node) writes is dropped
/// with its graph; a new buffer of the same size is allocated and filled on the buffer's
/// stream. The memset must land before the free, never in the new buffer.
fn graph_dropped_while_queued(s1: &Stream, s2: &Stream) -> cudrv::Result<usize> {
    let ctx = s1.context();
    let dst = DeviceBuffer::<u32>::alloc_async(s1, N)?;
    s1.synchronize()?;
    let graph = Graph::new(ctx)?;
    graph.add_memset_node(&[], &dst, 7)?;
    let mut exec = graph.instantiate()?;
    let tx = gate(s2)?;
    exec.launch(s2)?;
    drop((exec, graph, dst));
    let b = DeviceBuffer::<u32>::alloc_async(s1, N)?;
    b.fill_async(2, s1)?;
    let _ = tx.send(());
    s2.synchronize()?;
    s1.synchronize()?;
    Ok(wrong(&b.to_vec()?, 2))
}

/// A memcpy graph (through a child graph) launched on `s2` reads a stream-ordered buffer
/// whose allocation is still queued on `s1`: the launch waits for the allocation.
fn launch_waits_for_a_queued_allocation(s1: &Stream, s2: &Stream) -> cudrv::Result<usize> {
    let ctx = s1.context();
    let out = DeviceBuffer::<u32>::alloc(ctx, N)?;
    out.fill(0)?;
    let tx = gate(s1)?;
    let src = DeviceBuffer::<u32>::alloc_async(s1, N)?;
    src.fill_async(5, s1)?;
    let child = Graph::new(ctx)?;
    child.add_memcpy_node(&[], CopyEnd::buffer(&out), CopyEnd::buffer(&src))?;
    let graph = Graph::new(ctx)?;
    graph.add_child_graph_node(&[], &child)?;
    let mut exec = graph.instantiate()?;
    exec.launch(s2)?;
    drop((exec, graph, child, src));
    let opener = open_later(tx);
    s2.synchronize()?;
    let _ = opener.join();
    Ok(wrong(&out.to_vec()?, 5))
}

/// A managed buffer written by a queued graph memcpy node: the host slice is refused while
/// the graph lives, and once it is dropped the slice waits for the launch, so the values
/// under the live `&mut` never change.
fn managed_slice_after_graph(ctx: &Context, s: &Stream) -> cudrv::Result<usize> {
    let mut managed = ManagedBuffer::<u32>::zeroed(ctx, N, ManagedAttach::Global)?;
    let src = DeviceBuffer::<u32>::from_slice(ctx, &vec![7; N])?;
    let graph = Graph::new(ctx)?;
    graph.add_memcpy_node(&[], CopyEnd::view_mut(&managed.as_view_mut()), CopyEnd::buffer(&src))?;
    let mut exec = graph.instantiate()?;
    let tx = gate(s)?;
    exec.launch(s)?;
    let refused = usize::from(managed.as_mut_slice().is_ok());
    drop((exec, graph));
    let opener = open_later(tx);
    let slice = managed.as_mut_slice()?;
    let before = wrong(slice, 7);
    std::thread::sleep(Duration::from_millis(20));
    let after = wrong(slice, 7);
    let _ = opener.join();
    Ok(refused + before + after)
}

/// The last handle of a mapping is dropped while a copy into it is queued: the unmap waits
/// for the copy; a graph that writes another mapping keeps it mapped for its launch.
fn mapping_dropped_while_queued(ctx: &Context, s: &Stream) -> cudrv::Result<usize> {
    let size = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, false)?;
    let map_one = || -> cudrv::Result<Mapping> {
        let range = AddressRange::reserve(ctx, size, 0)?;
        let memory = PhysicalMemory::new(&ctx.device(), size, ShareableHandleTypes::NONE)?;
        let map = Mapping::map(&range, 0, &memory)?;
        map.set_access(&[(&ctx.device(), Access::ReadWrite)])?;
        Ok(map)
    };
    let src = DeviceBuffer::<u8>::from_slice(ctx, &vec![3; size])?;
    let mut map = map_one()?;
    let tx = gate(s)?;
    map.copy_from_device_async(&src, s)?;
    let opener = open_later(tx);
    drop(map);
    s.synchronize()?;
    let _ = opener.join();

    // The graph copies `src` into the mapping, then the mapping into `probe`.
    let mut kept = map_one()?;
    let probe = DeviceBuffer::<u8>::alloc(ctx, size)?;
    probe.fill(0)?;
    let graph = Graph::new(ctx)?;
    let first = graph.add_memcpy_node(&[], CopyEnd::view_mut(&kept.as_view_mut()), CopyEnd::buffer(&src))?;
    graph.add_memcpy_node(&[&first], CopyEnd::buffer(&probe), CopyEnd::view(&kept.as_view()))?;
    let mut exec = graph.instantiate()?;
    drop(kept);
    let tx = gate(s)?;
    exec.launch(s)?;
    let opener = open_later(tx);
    drop((exec, graph));
    s.synchronize()?;
    let _ = opener.join();
    Ok(probe.to_vec()?.iter().filter(|&&v| v != 3).count())
}

/// A growable buffer dropped while copies into it, issued before and after a growth, are
/// queued: its chunks are unmapped only after both (an unmap under them would fail the
/// synchronisation with an illegal address, which `?` returns).
fn growable_dropped_while_queued(ctx: &Context, s: &Stream) -> cudrv::Result<usize> {
    let mut buf = GrowableBuffer::<u32>::new(ctx, 4 * N)?;
    buf.grow(16)?;
    let src = DeviceBuffer::<u32>::from_slice(ctx, &[6; 16])?;
    let tx = gate(s)?;
    buf.copy_from_device_async(&src, s)?;
    buf.grow(buf.capacity() + 1)?;
    buf.slice_mut(..16)?.copy_from_device_async(&src, s)?;
    let opener = open_later(tx);
    drop(buf);
    s.synchronize()?;
    let _ = opener.join();
    Ok(0)
}

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let s1 = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let s2 = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let mut total = 0;
    for round in 0..ROUNDS {
        let cases: [(&str, usize); 5] = [
            (
                "graph and its stream-ordered memory dropped while its launch is queued",
                graph_dropped_while_queued(&s1, &s2)?,
            ),
            (
                "graph launched on another stream than its memory's queued allocation",
                launch_waits_for_a_queued_allocation(&s1, &s2)?,
            ),
            ("managed host slice after a queued graph launch", managed_slice_after_graph(&ctx, &s1)?),
            (
                "mapping dropped while a copy and a graph launch into it are queued",
                mapping_dropped_while_queued(&ctx, &s1)?,
            ),
            ("growable buffer dropped while copies into it are queued", growable_dropped_while_queued(&ctx, &s1)?),
        ];
        for (what, w) in cases {
            println!("round {round}: {what}: {w} wrong");
            total += w;
        }
    }
    ctx.synchronize()?;
    println!("graph_memory_uses: 5 programs, {ROUNDS} rounds, {total} wrong");
    if total != 0 {
        std::process::exit(1);
    }
    Ok(())
}
