//! Graph memory nodes (issue 29): allocation and free nodes, the rules of graphs that have
//! them (`cuGraphAddMemAllocNode`/`cuGraphAddMemFreeNode`, `cuGraphInstantiate`,
//! `cuGraphLaunch` in the CUDA documentation), stream-ordered allocations during capture,
//! and the device's graph memory attributes. Pending: not recorded on the H200 yet.

use super::graph::{graph, instantiate, node_count};
use super::{alloc, case, made, number, sentinel, step, stream, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
const AUTO_FREE: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
const DEVICE_LAUNCH: u64 = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;
type A = CUgraphMem_attribute;

/// Allocation node parameters for `size` bytes of device 0.
fn params(size: usize) -> CUDA_MEM_ALLOC_NODE_PARAMS {
    let mut p = CUDA_MEM_ALLOC_NODE_PARAMS { bytesize: size, ..Default::default() };
    p.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    p
}

/// Adds an allocation node of `size` bytes to `g` after `deps`: the node and its address.
fn alloc_node(e: &Env, g: CUgraph, deps: &[CUgraphNode], size: usize) -> Result<(CUgraphNode, CUdeviceptr), Out> {
    let mut p = params(size);
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, valid parameters and out-pointer.
    let st = unsafe { e.p.cuGraphAddMemAllocNode(&mut n, g, deps.as_ptr(), deps.len(), &mut p) };
    made("cuGraphAddMemAllocNode", st, (n, p.dptr))
}

/// Adds a free node of `dptr` to `g` after `deps`: the status and the node.
fn free_node(e: &Env, g: CUgraph, deps: &[CUgraphNode], dptr: CUdeviceptr) -> (CUresult, CUgraphNode) {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, a valid out-pointer.
    let st = unsafe { e.p.cuGraphAddMemFreeNode(&mut n, g, deps.as_ptr(), deps.len(), dptr) };
    (st, n)
}

/// A graph allocating `size` bytes (freeing them after, if `free`): the graph, the
/// allocation node and the address.
fn alloc_graph(e: &Env, size: usize, free: bool) -> Result<(CUgraph, CUgraphNode, CUdeviceptr), Out> {
    let g = graph(e)?;
    let (a, d) = alloc_node(e, g, &[], size)?;
    if free {
        made("cuGraphAddMemFreeNode", free_node(e, g, &[a], d).0, ())?;
    }
    Ok((g, a, d))
}

/// Instantiates `g` with `flags`: the status.
fn instantiate_with(e: &Env, g: CUgraph, flags: u64) -> (CUresult, CUgraphExec) {
    let mut x = std::ptr::null_mut();
    // SAFETY: a live graph and a valid out-pointer.
    let st = unsafe { e.p.cuGraphInstantiateWithFlags(&mut x, g, flags) };
    (st, x)
}

/// Launches `x` on `s` and synchronises: the launch's status and the synchronisation's.
fn launch(e: &Env, x: CUgraphExec, s: CUstream) -> (CUresult, CUresult) {
    // SAFETY: live handles (or invalid on purpose).
    unsafe { (e.p.cuGraphLaunch(x, s), e.p.cuStreamSynchronize(s)) }
}

/// A launch's two statuses (launch and synchronise), as `launch/sync`.
fn pair((launch, sync): (CUresult, CUresult)) -> String {
    format!("{launch}/{sync}")
}

/// A graph memory attribute of device 0 (`untouched` if not written), or the status.
fn attribute(e: &Env, attr: A) -> String {
    let mut v = UNTOUCHED;
    // SAFETY: a valid out-pointer for a cuuint64_t.
    match unsafe { e.p.cuDeviceGetGraphMemAttribute(e.dev, attr, (&raw mut v).cast()) } {
        CUresult::CUDA_SUCCESS => number(v),
        st => st.to_string(),
    }
}

/// The four attributes, in a case's answer.
fn attributes(out: Out, e: &Env) -> Out {
    out.eq("used", attribute(e, A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT))
        .eq("used_high", attribute(e, A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH))
        .eq("reserved", attribute(e, A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT))
        .eq("reserved_high", attribute(e, A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
}

/// The type of node `n`, or the status.
fn node_type(e: &Env, n: CUgraphNode) -> String {
    let mut t = CUgraphNodeType(77);
    // SAFETY: a valid out-pointer.
    match unsafe { e.p.cuGraphNodeGetType(n, &mut t) } {
        CUresult::CUDA_SUCCESS => t.0.to_string(),
        st => st.to_string(),
    }
}

/// The types of `g`'s nodes, in the order they were added, joined with `-`.
fn node_types(e: &Env, g: CUgraph) -> String {
    let mut nodes = [std::ptr::null_mut(); 8];
    let mut n = nodes.len();
    // SAFETY: room for `n` handles.
    let st = unsafe { e.p.cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n) };
    if st != CUresult::CUDA_SUCCESS {
        return st.to_string();
    }
    nodes.iter().take(n).map(|&h| node_type(e, h)).collect::<Vec<_>>().join("-")
}

/// One byte of device memory at `d`, or the status.
fn byte_at(e: &Env, d: CUdeviceptr) -> String {
    let mut b = 0u8;
    // SAFETY: a one-byte buffer.
    match unsafe { e.p.cuMemcpyDtoH((&raw mut b).cast(), d, 1) } {
        CUresult::CUDA_SUCCESS => b.to_string(),
        st => st.to_string(),
    }
}

/// A fresh stream, capturing (global mode).
fn capturing(e: &Env) -> Result<CUstream, Out> {
    let s = stream(e)?;
    // SAFETY: a live stream.
    made("cuStreamBeginCapture", unsafe { e.p.cuStreamBeginCapture(s, GLOBAL) }, s)
}

/// Ends the capture of `s`: the status and the graph.
fn end(e: &Env, s: CUstream) -> (CUresult, CUgraph) {
    let mut g: CUgraph = sentinel();
    // SAFETY: a live stream and a valid out-pointer.
    let st = unsafe { e.p.cuStreamEndCapture(s, &mut g) };
    (st, g)
}

/// Allocation node parameters changed by `f`, added to a fresh graph: the status and
/// whether the address was written.
fn add_with(e: &Env, f: impl FnOnce(&mut CUDA_MEM_ALLOC_NODE_PARAMS)) -> Out {
    let g = with!(graph(e));
    let mut p = params(1 << 20);
    p.dptr = UNTOUCHED;
    f(&mut p);
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, a valid out-pointer; the parameters as `f` left them.
    let st = unsafe { e.p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, &mut p) };
    Out::of(st).eq("dptr_written", p.dptr != UNTOUCHED)
}

fn node_cases() -> Vec<Case> {
    vec![
        case!("graph_memory.alloc_node", Ctx, |e| {
            let g = with!(graph(e));
            let mut p = params(1 << 20);
            let mut n = std::ptr::null_mut();
            let st = e.p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, &mut p);
            Out::of(st).eq("dptr_set", p.dptr != 0).eq("type", node_type(e, n)).info("dptr", format!("{:#x}", p.dptr))
        }),
        case!("graph_memory.alloc_node_get_params", Ctx, |e| {
            let (_, a, d) = with!(alloc_graph(e, 1000, false));
            let mut p = CUDA_MEM_ALLOC_NODE_PARAMS::default();
            let st = e.p.cuGraphMemAllocNodeGetParams(a, &mut p);
            Out::of(st)
                .eq("same_dptr", p.dptr == d)
                .eq("bytesize", p.bytesize)
                .eq("alloc_type", p.poolProps.allocType.0)
                .eq("handle_types", p.poolProps.handleTypes.0)
                .eq(
                    "location",
                    format!("{}:{}", p.poolProps.location.type_.0, p.poolProps.location.__bindgen_anon_1.id),
                )
                .eq("access_count", p.accessDescCount)
        }),
        case!("graph_memory.alloc_node_zero_size", Ctx, |e| { add_with(e, |p| p.bytesize = 0) }),
        case!("graph_memory.alloc_node_huge", Ctx, |e| { add_with(e, |p| p.bytesize = usize::MAX) }),
        case!("graph_memory.alloc_node_bad_device", Ctx, |e| {
            add_with(e, |p| p.poolProps.location.__bindgen_anon_1.id = 99)
        }),
        case!("graph_memory.alloc_node_host_location", Ctx, |e| {
            add_with(e, |p| p.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST)
        }),
        case!("graph_memory.alloc_node_invalid_type", Ctx, |e| {
            add_with(e, |p| p.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID)
        }),
        case!("graph_memory.alloc_node_posix_fd", Ctx, |e| {
            add_with(e, |p| {
                p.poolProps.handleTypes = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            })
        }),
        case!("graph_memory.alloc_node_access_count_null", Ctx, |e| { add_with(e, |p| p.accessDescCount = 1) }),
        case!("graph_memory.alloc_node_null_params", Ctx, |e| {
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            Out::of(e.p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, std::ptr::null_mut()))
        }),
        case!("graph_memory.alloc_node_no_context", Ctx, |e| {
            let g = with!(graph(e));
            step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
            let mut p = params(1 << 20);
            let mut n = std::ptr::null_mut();
            Out::of(e.p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, &mut p))
        }),
        case!("graph_memory.free_node", Ctx, |e| {
            let (g, a, d) = with!(alloc_graph(e, 64, false));
            let (st, f) = free_node(e, g, &[a], d);
            let mut back = UNTOUCHED;
            let get = e.p.cuGraphMemFreeNodeGetParams(f, &mut back);
            Out::of(st).eq("type", node_type(e, f)).eq("get", get).eq("same_dptr", back == d)
        }),
        case!("graph_memory.free_node_params_of_alloc_node", Ctx, |e| {
            let (_, a, _) = with!(alloc_graph(e, 64, false));
            let mut back = UNTOUCHED;
            Out::of(e.p.cuGraphMemFreeNodeGetParams(a, &mut back)).eq("dptr", number(back))
        }),
        case!("graph_memory.free_node_plain_memory", Ctx, |e| {
            let (g, a, _) = with!(alloc_graph(e, 64, false));
            let plain = with!(alloc(e, 64));
            Out::of(free_node(e, g, &[a], plain).0)
        }),
        case!("graph_memory.free_node_inside_allocation", Ctx, |e| {
            let (g, a, d) = with!(alloc_graph(e, 64, false));
            Out::of(free_node(e, g, &[a], d + 8).0)
        }),
        case!("graph_memory.free_node_twice", Ctx, |e| {
            let (g, a, d) = with!(alloc_graph(e, 64, true));
            Out::of(free_node(e, g, &[a], d).0)
        }),
        case!("graph_memory.free_node_unordered", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 64, false));
            Out::of(free_node(e, g, &[], d).0)
        }),
        case!("graph_memory.free_node_other_graph", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, false));
            let other = with!(graph(e));
            Out::of(free_node(e, other, &[], d).0)
        }),
        case!("graph_memory.free_node_other_graph_twice", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, false));
            let (one, two) = (with!(graph(e)), with!(graph(e)));
            step!(free_node(e, one, &[], d).0);
            Out::of(free_node(e, two, &[], d).0)
        }),
        case!("graph_memory.free_node_other_graph_after_own", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, true));
            let other = with!(graph(e));
            Out::of(free_node(e, other, &[], d).0)
        }),
        case!("graph_memory.free_node_own_after_other", Ctx, |e| {
            let (g, a, d) = with!(alloc_graph(e, 64, false));
            let other = with!(graph(e));
            step!(free_node(e, other, &[], d).0);
            Out::of(free_node(e, g, &[a], d).0)
        }),
    ]
}

fn rule_cases() -> Vec<Case> {
    vec![
        case!("graph_memory.instantiate_twice", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, true));
            with!(instantiate(e, g));
            Out::of(instantiate_with(e, g, 0).0)
        }),
        case!("graph_memory.instantiate_after_exec_destroy", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, true));
            let x = with!(instantiate(e, g));
            step!(e.p.cuGraphExecDestroy(x));
            Out::of(instantiate_with(e, g, 0).0)
        }),
        case!("graph_memory.instantiate_free_only_twice", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, false));
            let other = with!(graph(e));
            step!(free_node(e, other, &[], d).0);
            with!(instantiate(e, other));
            Out::of(instantiate_with(e, other, 0).0)
        }),
        case!("graph_memory.instantiate_device_launch", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, true));
            Out::of(instantiate_with(e, g, DEVICE_LAUNCH).0)
        }),
        case!("graph_memory.clone", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, true));
            let mut c: CUgraph = sentinel();
            Out::of(e.p.cuGraphClone(&mut c, g)).eq("clone", super::handle(c))
        }),
        case!("graph_memory.child_graph_node", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, true));
            let parent = with!(graph(e));
            let mut n = std::ptr::null_mut();
            Out::of(e.p.cuGraphAddChildGraphNode(&mut n, parent, std::ptr::null(), 0, g))
        }),
        case!("graph_memory.remove_dependencies", Ctx, |e| {
            let g = with!(graph(e));
            let (a, d) = with!(alloc_node(e, g, &[], 64));
            let (st, f) = free_node(e, g, &[a], d);
            step!(st);
            Out::of(e.p.cuGraphRemoveDependencies(g, &a, &f, std::ptr::null(), 1))
        }),
        case!("graph_memory.destroy_node", Ctx, |e| {
            let (g, a, _) = with!(alloc_graph(e, 64, false));
            let st = e.p.cuGraphDestroyNode(a);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("nodes", nodes)
        }),
    ]
}

fn launch_cases() -> Vec<Case> {
    vec![
        case!("graph_memory.launch_alloc_free_twice", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let second = launch(e, x, s);
            Out::of(second.0).eq("first", pair(first)).eq("sync", second.1)
        }),
        case!("graph_memory.address_after_free_node", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            let (mut base, mut size) = (UNTOUCHED, UNTOUCHED as usize);
            let range = e.p.cuMemGetAddressRange(&mut base, &mut size, d);
            Out::of(st).eq("range", range)
        }),
        case!("graph_memory.unfreed_after_launch", Ctx, |e| {
            let g = with!(graph(e));
            let (a, d) = with!(alloc_node(e, g, &[], 4096));
            let set = CUDA_MEMSET_NODE_PARAMS { dst: d, value: 7, elementSize: 1, width: 4096, height: 1, pitch: 0 };
            let mut m = std::ptr::null_mut();
            step!(e.p.cuGraphAddMemsetNode(&mut m, g, &a, 1, &set, e.ctx));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, sync) = launch(e, x, s);
            let (mut base, mut size) = (UNTOUCHED, UNTOUCHED as usize);
            let range = e.p.cuMemGetAddressRange(&mut base, &mut size, d + 100);
            Out::of(st)
                .eq("sync", sync)
                .eq("byte", byte_at(e, d + 100))
                .eq("range", range)
                .eq("base_is_dptr", base == d)
                .eq("size", size)
        }),
        case!("graph_memory.relaunch_unfreed", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, false));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("sync", sync)
        }),
        case!("graph_memory.relaunch_after_free_async", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 64, false));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let free = e.p.cuMemFreeAsync(d, s);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("free", free).eq("sync", sync)
        }),
        case!("graph_memory.relaunch_after_free", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 64, false));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let free = e.p.cuMemFree(d);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("free", free).eq("sync", sync)
        }),
        case!("graph_memory.relaunch_auto_free", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 64, false));
            let (ist, x) = instantiate_with(e, g, AUTO_FREE);
            step!(ist);
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("sync", sync)
        }),
        case!("graph_memory.free_before_launch", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, false));
            Out::of(e.p.cuMemFree(d))
        }),
        case!("graph_memory.free_of_graph_freed_allocation", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 64, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            step!(st);
            Out::of(e.p.cuMemFree(d))
        }),
        case!("graph_memory.exec_destroy_unfreed", Ctx, |e| {
            let g = with!(graph(e));
            let (a, d) = with!(alloc_node(e, g, &[], 64));
            let set = CUDA_MEMSET_NODE_PARAMS { dst: d, value: 5, elementSize: 1, width: 64, height: 1, pitch: 0 };
            let mut m = std::ptr::null_mut();
            step!(e.p.cuGraphAddMemsetNode(&mut m, g, &a, 1, &set, e.ctx));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            step!(st);
            let destroy = e.p.cuGraphExecDestroy(x);
            let byte = byte_at(e, d);
            Out::of(destroy).eq("byte", byte).eq("free", e.p.cuMemFree(d))
        }),
        case!("graph_memory.free_graph_launched_after", Ctx, |e| {
            let (g, _, d) = with!(alloc_graph(e, 64, false));
            let other = with!(graph(e));
            step!(free_node(e, other, &[], d).0);
            let (x, y) = (with!(instantiate(e, g)), with!(instantiate(e, other)));
            let s = with!(stream(e));
            let first = launch(e, x, s);
            let free = launch(e, y, s);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("free", pair(free)).eq("sync", sync)
        }),
    ]
}

fn capture_cases() -> Vec<Case> {
    vec![
        case!("graph_memory.capture_alloc_memset_free", Ctx, |e| {
            let s = with!(capturing(e));
            let mut d = 0;
            step!(e.p.cuMemAllocAsync(&mut d, 4096, s));
            step!(e.p.cuMemsetD8Async(d, 1, 4096, s));
            step!(e.p.cuMemFreeAsync(d, s));
            let (st, g) = end(e, s);
            step!(st);
            let x = with!(instantiate(e, g));
            let first = launch(e, x, s);
            let second = launch(e, x, s);
            Out::of(second.0).eq("types", node_types(e, g)).eq("first", pair(first)).eq("sync", second.1)
        }),
        case!("graph_memory.capture_alloc_params", Ctx, |e| {
            let s = with!(capturing(e));
            let mut d = 0;
            let st = e.p.cuMemAllocAsync(&mut d, 1000, s);
            let (_, g) = end(e, s);
            let mut nodes = [std::ptr::null_mut(); 1];
            let mut n = 1;
            step!(e.p.cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n));
            let mut p = CUDA_MEM_ALLOC_NODE_PARAMS::default();
            let get = e.p.cuGraphMemAllocNodeGetParams(nodes[0], &mut p);
            Out::of(st)
                .eq("get", get)
                .eq("same_dptr", p.dptr == d)
                .eq("bytesize", p.bytesize)
                .eq(
                    "location",
                    format!("{}:{}", p.poolProps.location.type_.0, p.poolProps.location.__bindgen_anon_1.id),
                )
                .eq("access_count", p.accessDescCount)
        }),
        case!("graph_memory.capture_alloc_from_pool", Ctx, |e| {
            let mut pool = std::ptr::null_mut();
            step!(e.p.cuDeviceGetDefaultMemPool(&mut pool, e.dev));
            let s = with!(capturing(e));
            let mut d = 0;
            let st = e.p.cuMemAllocFromPoolAsync(&mut d, 256, pool, s);
            let free = e.p.cuMemFreeAsync(d, s);
            let (end_st, g) = end(e, s);
            Out::of(st).eq("free", free).eq("end", end_st).eq("types", node_types(e, g))
        }),
        case!("graph_memory.capture_alloc_zero", Ctx, |e| {
            let s = with!(capturing(e));
            let mut d = UNTOUCHED;
            let st = e.p.cuMemAllocAsync(&mut d, 0, s);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("dptr", number(d)).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("graph_memory.capture_free_plain_memory", Ctx, |e| {
            let plain = with!(alloc(e, 64));
            let s = with!(capturing(e));
            let st = e.p.cuMemFreeAsync(plain, s);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("graph_memory.capture_free_plain_async_memory", Ctx, |e| {
            let s0 = with!(stream(e));
            let mut plain = 0;
            step!(e.p.cuMemAllocAsync(&mut plain, 64, s0));
            step!(e.p.cuStreamSynchronize(s0));
            let s = with!(capturing(e));
            let st = e.p.cuMemFreeAsync(plain, s);
            let (end_st, g) = end(e, s);
            let (_, nodes) = node_count(e, g);
            Out::of(st).eq("end", end_st).eq("nodes", nodes)
        }),
        case!("graph_memory.capture_free_node_allocation", Ctx, |e| {
            let (_, _, d) = with!(alloc_graph(e, 64, false));
            let s = with!(capturing(e));
            let st = e.p.cuMemFreeAsync(d, s);
            let (end_st, g) = end(e, s);
            Out::of(st).eq("end", end_st).eq("types", node_types(e, g))
        }),
        case!("graph_memory.capture_unfreed_relaunch", Ctx, |e| {
            let s = with!(capturing(e));
            let mut d = 0;
            step!(e.p.cuMemAllocAsync(&mut d, 64, s));
            let (st, g) = end(e, s);
            step!(st);
            let x = with!(instantiate(e, g));
            let first = launch(e, x, s);
            let (st, sync) = launch(e, x, s);
            Out::of(st).eq("first", pair(first)).eq("sync", sync)
        }),
    ]
}

fn attribute_cases() -> Vec<Case> {
    vec![
        case!("graph_memory.attributes_initial", Ctx, |e| { attributes(Out::of(CUresult::CUDA_SUCCESS), e) }),
        case!("graph_memory.attributes_instantiated", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            with!(instantiate(e, g));
            attributes(Out::of(CUresult::CUDA_SUCCESS), e)
        }),
        case!("graph_memory.attributes_uploaded", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let st = e.p.cuGraphUpload(x, s);
            step!(e.p.cuStreamSynchronize(s));
            attributes(Out::of(st), e)
        }),
        case!("graph_memory.attributes_launched", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            attributes(Out::of(st), e)
        }),
        case!("graph_memory.attributes_launched_two_allocations", Ctx, |e| {
            let g = with!(graph(e));
            let (a, d) = with!(alloc_node(e, g, &[], 1000));
            let (b, d2) = with!(alloc_node(e, g, &[a], 3 << 20));
            step!(free_node(e, g, &[b], d).0);
            step!(free_node(e, g, &[b], d2).0);
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            attributes(Out::of(st), e)
        }),
        case!("graph_memory.attributes_unfreed", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, false));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            let (st, _) = launch(e, x, s);
            attributes(Out::of(st), e)
        }),
        case!("graph_memory.attributes_exec_destroyed", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            step!(launch(e, x, s).0);
            attributes(Out::of(e.p.cuGraphExecDestroy(x)), e)
        }),
        case!("graph_memory.attributes_trimmed", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            step!(launch(e, x, s).0);
            step!(e.p.cuGraphExecDestroy(x));
            attributes(Out::of(e.p.cuDeviceGraphMemTrim(e.dev)), e)
        }),
        case!("graph_memory.attributes_trimmed_idle_exec", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            step!(launch(e, x, s).0);
            attributes(Out::of(e.p.cuDeviceGraphMemTrim(e.dev)), e)
        }),
        case!("graph_memory.attributes_high_reset", Ctx, |e| {
            let (g, _, _) = with!(alloc_graph(e, 1 << 20, true));
            let x = with!(instantiate(e, g));
            let s = with!(stream(e));
            step!(launch(e, x, s).0);
            step!(e.p.cuGraphExecDestroy(x));
            let mut zero = 0u64;
            let used =
                e.p.cuDeviceSetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, (&raw mut zero).cast());
            let reserved =
                e.p.cuDeviceSetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, (&raw mut zero).cast());
            attributes(Out::of(used).eq("reserved_reset", reserved), e)
        }),
        case!("graph_memory.set_high_nonzero", Ctx, |e| {
            let mut v = 1u64;
            Out::of(e.p.cuDeviceSetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, (&raw mut v).cast()))
        }),
        case!("graph_memory.set_used_current", Ctx, |e| {
            let mut v = 0u64;
            Out::of(e.p.cuDeviceSetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, (&raw mut v).cast()))
        }),
        case!("graph_memory.set_reserved_current", Ctx, |e| {
            let mut v = 0u64;
            let st =
                e.p.cuDeviceSetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, (&raw mut v).cast());
            Out::of(st)
        }),
        case!("graph_memory.get_unknown_attribute", Ctx, |e| {
            let mut v = UNTOUCHED;
            let st = e.p.cuDeviceGetGraphMemAttribute(e.dev, CUgraphMem_attribute_enum(4), (&raw mut v).cast());
            Out::of(st).eq("value", number(v))
        }),
        case!("graph_memory.get_bad_device", Ctx, |e| {
            let mut v = UNTOUCHED;
            let st = e.p.cuDeviceGetGraphMemAttribute(99, A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, (&raw mut v).cast());
            Out::of(st).eq("value", number(v))
        }),
        case!("graph_memory.get_null_value", Ctx, |e| {
            let st =
                e.p.cuDeviceGetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, std::ptr::null_mut());
            Out::of(st)
        }),
        case!("graph_memory.get_no_context", Init, |e| {
            let mut v = UNTOUCHED;
            let st =
                e.p.cuDeviceGetGraphMemAttribute(e.dev, A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, (&raw mut v).cast());
            Out::of(st).eq("value", number(v))
        }),
        case!("graph_memory.trim_bad_device", Ctx, |e| { Out::of(e.p.cuDeviceGraphMemTrim(99)) }),
        case!("graph_memory.trim_no_context", Init, |e| { Out::of(e.p.cuDeviceGraphMemTrim(e.dev)) }),
    ]
}

/// Every graph memory case.
pub fn cases() -> Vec<Case> {
    [node_cases(), rule_cases(), launch_cases(), capture_cases(), attribute_cases()].concat()
}
