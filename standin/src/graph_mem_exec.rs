//! Graph memory on the executable graph's side (`model/graph_mem.rs`): instantiation (a
//! graph with memory nodes has at most one executable graph at a time: a second
//! instantiation answers `graph_mem::FORBIDDEN`), launch, upload and destruction, and the
//! device's graph memory: `cuDeviceGetGraphMemAttribute`, `cuDeviceSetGraphMemAttribute`,
//! `cuDeviceGraphMemTrim`.
//!
//! A launch makes its allocation nodes' allocations when it is queued, after the
//! executable graph's earlier launches and the stream's earlier work are done (the
//! stand-in waits for them: its allocations are then known to be freed or not); its free
//! nodes free when they run. An allocation still allocated from an earlier launch makes
//! the launch fail with CUDA_ERROR_INVALID_VALUE (`cuGraphLaunch`'s documentation), unless
//! the executable graph was instantiated with `CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`:
//! then the allocation is freed and made again, at its address, with its contents (a real
//! driver's contents are undefined). A free queued on another stream that has not run when
//! the launch is queued counts as not done. Destroying the executable graph leaves its
//! unfreed allocations allocated (freed by `cuMemFree`/`cuMemFreeAsync` or a free node).

use std::ffi::c_void;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{non_null, status, write};
use crate::graph_mem::FORBIDDEN;
use crate::model::graph::{Node, Step};
use crate::model::graph_mem::{ExecMem, GraphMem};
use crate::model::memory::AllocationKind;
use crate::model::stream::Target;
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const AUTO_FREE: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
const DEVICE_LAUNCH: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;

/// The addresses of the allocation steps and whether there are free steps.
fn memory_steps(steps: &[Step]) -> (Vec<u64>, bool) {
    let (mut allocs, mut frees) = (Vec::new(), false);
    Step::each(steps, &mut |s| match s.node {
        Node::MemAlloc(a) => allocs.push(a),
        Node::MemFree(_) => frees = true,
        _ => {}
    });
    (allocs, frees)
}

/// Before graph `g` (of `steps`) is instantiated with `flags`, if it has memory nodes:
/// [`FORBIDDEN`] if an executable graph of it exists; CUDA_ERROR_INVALID_VALUE for a
/// device launch (the programming guide lists the node kinds a device graph may have:
/// not these; the status is a guess).
pub(crate) fn before_instantiate(w: &World, g: u64, steps: &[Step], flags: u64) -> Result<(), CUresult> {
    let (allocs, frees) = memory_steps(steps);
    if allocs.is_empty() && !frees {
        return Ok(());
    }
    if flags & DEVICE_LAUNCH != 0 {
        return Err(INVALID);
    }
    match lock(&w.graph_mem).execs.values().any(|x| x.graph == g) {
        true => Err(FORBIDDEN),
        false => Ok(()),
    }
}

/// Exec `h` was made from graph `g` (of `steps`) with `flags`.
pub(crate) fn instantiated(w: &World, g: u64, h: u64, steps: &[Step], flags: u64) {
    let (allocs, frees) = memory_steps(steps);
    if allocs.is_empty() && !frees {
        return;
    }
    let mut gm = lock(&w.graph_mem);
    let sizes: Vec<usize> = allocs.iter().filter_map(|a| gm.allocs.get(a)).map(|a| a.size).collect();
    let device = allocs.iter().find_map(|a| gm.allocs.get(a)).map_or(0, |a| a.props.device);
    let footprint = GraphMem::footprint(sizes);
    let auto_free = flags & AUTO_FREE != 0;
    gm.execs.insert(h, ExecMem { graph: g, device, allocs, footprint, mapped: false, auto_free });
}

/// Exec `h` was destroyed.
pub(crate) fn exec_destroyed(w: &World, h: u64) {
    lock(&w.graph_mem).forget_exec(h);
}

/// Exec `h` was uploaded: it maps its memory.
pub(crate) fn uploaded(w: &World, h: u64) {
    lock(&w.graph_mem).map(h);
}

/// Before exec `h` is launched on `t`: waits for its earlier launches and the stream's
/// work, then makes its allocations (see the module's text); CUDA_ERROR_INVALID_VALUE,
/// with nothing allocated, if one is still allocated and it does not free on launch.
pub(crate) fn before_launch(w: &World, h: u64, t: &Target) -> Result<(), CUresult> {
    let Some(x) = lock(&w.graph_mem).execs.get(&h).cloned() else {
        return Ok(());
    };
    if !x.allocs.is_empty() {
        let earlier = lock(&w.execs).get(h).map(|e| e.launches.clone()).unwrap_or_default();
        for (q, p) in earlier {
            q.wait(p)?;
        }
        t.drain()?;
        let allocs: Vec<_> = {
            let gm = lock(&w.graph_mem);
            x.allocs.iter().filter_map(|a| gm.allocs.get(a).map(|g| (*a, g.size, g.key, g.owner))).collect()
        };
        let mut memory = lock(&w.memory);
        let live: Vec<bool> = allocs.iter().map(|(a, ..)| memory.describe(*a).is_some_and(|i| i.start == *a)).collect();
        if live.contains(&true) && !x.auto_free {
            return Err(INVALID);
        }
        for (&(address, size, key, owner), live) in allocs.iter().zip(live) {
            if live {
                continue;
            }
            let got = memory.alloc(size, AllocationKind::Async, Some(key), owner)?;
            if got != address {
                // Its range was not waiting under its key: not this node's allocation.
                let _ = memory.free(got);
                return Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
            }
        }
    }
    lock(&w.graph_mem).map(h);
    Ok(())
}

/// A graph memory attribute's number, checked: CUDA_ERROR_INVALID_DEVICE for a device
/// that is not, CUDA_ERROR_INVALID_VALUE for a null value or an unknown attribute.
fn check(w: &World, dev: CUdevice, attr: CUgraphMem_attribute, value: *mut c_void) -> Result<u32, CUresult> {
    if !valid_device(w, dev) {
        return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
    non_null(value)?;
    match attr.0 {
        n @ 0..=3 => Ok(n),
        _ => Err(INVALID),
    }
}

/// `cuDeviceGetGraphMemAttribute`: a `cuuint64_t` of bytes (see `model/graph_mem.rs`).
pub(crate) unsafe fn cu_device_get_graph_mem_attribute(
    w: &World,
    dev: CUdevice,
    attr: CUgraphMem_attribute,
    value: *mut c_void,
) -> CUresult {
    let r = check(w, dev, attr, value).and_then(|n| {
        let gm = lock(&w.graph_mem);
        let ((used, reserved), (used_high, reserved_high)) = (gm.current(dev), gm.high(dev));
        let v = [used, used_high, reserved, reserved_high].get(n as usize).copied().unwrap_or(0);
        write(value.cast::<cuuint64_t>(), v as cuuint64_t)
    });
    status(r)
}

/// `cuDeviceSetGraphMemAttribute`: only the high marks, only to 0 (which resets them to
/// the current use); anything else: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_device_set_graph_mem_attribute(
    w: &World,
    dev: CUdevice,
    attr: CUgraphMem_attribute,
    value: *mut c_void,
) -> CUresult {
    let r = check(w, dev, attr, value).and_then(|n| {
        // SAFETY: a non-null pointer to the program's cuuint64_t.
        let v = unsafe { value.cast::<cuuint64_t>().read_unaligned() };
        match (n, v) {
            (1, 0) => lock(&w.graph_mem).reset_high(dev, false),
            (3, 0) => lock(&w.graph_mem).reset_high(dev, true),
            _ => return Err(INVALID),
        }
        Ok(())
    });
    status(r)
}

/// `cuDeviceGraphMemTrim`: releases the device's cached graph memory and the memory of
/// executable graphs with no launch pending and no allocation still allocated.
pub(crate) unsafe fn cu_device_graph_mem_trim(w: &World, dev: CUdevice) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let held: Vec<(u64, Vec<u64>)> = lock(&w.graph_mem).execs.iter().map(|(h, x)| (*h, x.allocs.clone())).collect();
    let busy: Vec<u64> = {
        let execs = lock(&w.execs);
        let pending = |h: &u64| execs.get(*h).is_ok_and(|e| e.launches.iter().any(|(q, p)| !q.reached(*p)));
        held.iter().map(|(h, _)| *h).filter(pending).collect()
    };
    let holding: Vec<u64> = {
        let mut memory = lock(&w.memory);
        held.iter().filter(|(_, a)| a.iter().any(|a| memory.describe(*a).is_some())).map(|(h, _)| *h).collect()
    };
    lock(&w.graph_mem).trim(dev, |h, _| !busy.contains(&h) && !holding.contains(&h));
    CUresult::CUDA_SUCCESS
}
