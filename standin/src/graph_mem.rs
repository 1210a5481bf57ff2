//! Graph memory nodes (`model/graph_mem.rs`): `cuGraphAddMemAllocNode`,
//! `cuGraphAddMemFreeNode`, their parameters read back, and a stream-ordered allocation or
//! free during stream capture, which records such a node. The executable graph's side
//! (instantiation, launch, the device's graph memory) is in `graph_mem_exec.rs`.
//!
//! The rules are the CUDA documentation's (`cuGraphAddMemAllocNode`,
//! `cuGraphAddMemFreeNode`): an allocation's address is fixed when its node is added
//! (`nodeParams.dptr`); a free node frees an address an allocation node returned (another:
//! CUDA_ERROR_INVALID_VALUE), once in the allocating graph (the H200 does not ask that it
//! be ordered after the allocation node), or in other graphs when the allocating graph does not free it. A graph with
//! memory nodes cannot be cloned, used in a child graph node (but moved into one through
//! `cuGraphAddNode`), nor lose nodes or edges: those calls answer [`FORBIDDEN`].
//! Allocation parameters: pinned device memory of an existing device, access descriptors
//! for existing devices (else CUDA_ERROR_INVALID_VALUE); host locations and shareable
//! handle types are CUDA_ERROR_NOT_SUPPORTED; no current context is needed (as on the
//! H200).

use cudrv::sys::*;

use crate::capture;
use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{find_node, known, node_list};
use crate::model::graph::{Graph, Node};
use crate::model::graph_mem::{AllocProps, GraphAlloc};
use crate::model::handles;
use crate::model::memory::{AllocationKind, Owner};
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// The answer to what a graph with memory nodes may not do (clone, copy into a child graph
/// node, remove nodes or edges, instantiate twice): the documentation says only that it
/// is an error; CUDA_ERROR_NOT_SUPPORTED is a guess until the H200's answers are recorded.
pub(crate) const FORBIDDEN: CUresult = CUresult::CUDA_ERROR_NOT_SUPPORTED;

/// What an allocation node allocates.
pub(crate) struct Spec {
    pub(crate) props: AllocProps,
    pub(crate) access: Vec<CUmemAccessDesc>,
    pub(crate) size: usize,
}

/// The device a location names: CUDA_ERROR_INVALID_VALUE unless it is a device of `w`.
fn device_of(w: &World, location: &CUmemLocation) -> Result<i32, CUresult> {
    // SAFETY: every member of the location union is a plain integer.
    let id = unsafe { location.__bindgen_anon_1.id };
    match location.type_ == CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE && valid_device(w, id) {
        true => Ok(id),
        false => Err(INVALID),
    }
}

/// The allocation of allocation node parameters (`CUDA_MEM_ALLOC_NODE_PARAMS`, v1 and v2
/// alike): see the module's text for what is refused.
///
/// # Safety
/// `access` is null or points to `count` descriptors.
pub(crate) unsafe fn spec_of(
    w: &World,
    props: &CUmemPoolProps,
    access: *const CUmemAccessDesc,
    count: usize,
    size: usize,
) -> Result<Spec, CUresult> {
    // Host memory and shareable handles are valid pool properties the H200 does not give
    // graphs (`graph_memory.alloc_node_host_location`, `alloc_node_posix_fd`).
    type L = CUmemLocationType;
    let host =
        [L::CU_MEM_LOCATION_TYPE_HOST, L::CU_MEM_LOCATION_TYPE_HOST_NUMA, L::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT];
    if host.contains(&props.location.type_) || props.handleTypes != CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE {
        return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
    let device = device_of(w, &props.location)?;
    if props.allocType != CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED || size == 0 {
        return Err(INVALID);
    }
    let access = match count {
        0 => Vec::new(),
        _ => {
            non_null(access)?;
            // SAFETY: the program passes `count` descriptors at `access`.
            unsafe { std::slice::from_raw_parts(access, count) }.to_vec()
        }
    };
    type F = CUmemAccess_flags;
    let flags =
        [F::CU_MEM_ACCESS_FLAGS_PROT_NONE, F::CU_MEM_ACCESS_FLAGS_PROT_READ, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE];
    for d in &access {
        device_of(w, &d.location)?;
        if !flags.contains(&d.flags) {
            return Err(INVALID);
        }
    }
    let props = AllocProps {
        alloc_type: props.allocType,
        handle_types: props.handleTypes,
        location_type: props.location.type_,
        device,
    };
    Ok(Spec { props, access, size })
}

/// Takes an address range of `size` bytes for a graph allocation: allocated and freed at
/// once, so that it waits, under a key of its own, for the allocation node's allocations.
/// The address and the key.
fn reserve(w: &World, size: usize, owner: Owner) -> Result<(u64, u64), CUresult> {
    let key = handles::fresh();
    let mut memory = lock(&w.memory);
    let address = memory.alloc(size, AllocationKind::Async, Some(key), owner)?;
    memory.free(address)?;
    Ok((address, key))
}

/// Adds `node` to `graph` after `deps`; its handle.
fn push(graph: &mut Graph, deps: &[u64], node: Node) -> u64 {
    let h = handles::fresh();
    graph.nodes.push((h, node));
    graph.edges.extend(deps.iter().map(|&d| (d, h)));
    h
}

/// Whether graph `g` (or a graph its child graph nodes own) has memory nodes.
pub(crate) fn has_mem_nodes(graphs: &crate::model::handles::Registry<Graph>, g: u64) -> bool {
    let Ok(graph) = graphs.get(g) else {
        return false;
    };
    graph.nodes.iter().any(|(_, n)| match n {
        Node::MemAlloc(_) | Node::MemFree(_) => true,
        Node::Child(c) => has_mem_nodes(graphs, *c),
        _ => false,
    })
}

/// Adds an allocation node of `spec` to graph `g` after `deps`: the node and the
/// allocation's address.
pub(crate) fn add_alloc(w: &World, g: u64, deps: &[u64], spec: Spec) -> Result<(u64, u64), CUresult> {
    // The H200 needs no current context (`graph_memory.alloc_node_no_context`): without
    // one the allocation has no owning context.
    let ctx = w.contexts.current().map_or(0, |c| c.handle);
    known(lock(&w.graphs).get(g)?, deps)?;
    let owner = Owner { ctx, device: spec.props.device };
    let (address, key) = reserve(w, spec.size, owner)?;
    let h = {
        let mut graphs = lock(&w.graphs);
        let graph = graphs.get_mut(g)?;
        known(graph, deps)?;
        push(graph, deps, Node::MemAlloc(address))
    };
    let Spec { props, access, size } = spec;
    let alloc = GraphAlloc { size, key, owner, props, access, graph: g, freed_in: None };
    lock(&w.graph_mem).allocs.insert(address, alloc);
    Ok((h, address))
}

/// Checks that graph `g` may free the graph allocation `alloc`: once in its own graph
/// (where the H200 does not ask that the free node be ordered after the allocation node:
/// `graph_memory.free_node_unordered`), or in other graphs when its own does not free it.
fn may_free(g: u64, alloc: &GraphAlloc) -> Result<(), CUresult> {
    if alloc.graph != g {
        return match alloc.freed_in == Some(alloc.graph) {
            true => Err(INVALID),
            false => Ok(()),
        };
    }
    match alloc.freed_in {
        Some(_) => Err(INVALID),
        None => Ok(()),
    }
}

/// Adds a free node of `address` to graph `g` after `deps` (see [`may_free`]); its handle.
pub(crate) fn add_free(w: &World, g: u64, deps: &[u64], address: u64) -> Result<u64, CUresult> {
    let mut graphs = lock(&w.graphs);
    let graph = graphs.get_mut(g)?;
    known(graph, deps)?;
    let mut gm = lock(&w.graph_mem);
    let alloc = gm.allocs.get_mut(&address).ok_or(INVALID)?;
    may_free(g, alloc)?;
    alloc.freed_in = Some(g);
    Ok(push(graph, deps, Node::MemFree(address)))
}

unsafe fn add_alloc_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> Result<(), CUresult> {
    non_null(ph)?;
    non_null(p)?;
    // SAFETY: a non-null pointer to the program's parameters.
    let p = unsafe { &mut *p };
    // SAFETY: the parameters' descriptors, as the program passes them.
    let spec = unsafe { spec_of(w, &p.poolProps, p.accessDescs, p.accessDescCount, p.bytesize) }?;
    let (h, address) = add_alloc(w, from_ptr(g), &node_list(deps, n)?, spec)?;
    p.dptr = address;
    write(ph, to_ptr(h))
}

/// `cuGraphAddMemAllocNode`: the allocation's address is written to `nodeParams.dptr`.
pub(crate) unsafe fn cu_graph_add_mem_alloc_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { add_alloc_node(w, ph, g, deps, n, p) })
}

/// `cuGraphAddMemFreeNode`.
pub(crate) unsafe fn cu_graph_add_mem_free_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    dptr: CUdeviceptr,
) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        let h = add_free(w, from_ptr(g), &node_list(deps, n)?, dptr)?;
        write(ph, to_ptr(h))
    });
    status(r)
}

/// The parameters of the allocation at `address` as `CUDA_MEM_ALLOC_NODE_PARAMS` (v1 and
/// v2 have one layout); the access descriptors are the node's own array.
pub(crate) fn params_of(w: &World, address: u64) -> Result<CUDA_MEM_ALLOC_NODE_PARAMS_v1, CUresult> {
    let gm = lock(&w.graph_mem);
    let a = gm.allocs.get(&address).ok_or(INVALID)?;
    let mut props =
        CUmemPoolProps { allocType: a.props.alloc_type, handleTypes: a.props.handle_types, ..Default::default() };
    props.location.type_ = a.props.location_type;
    props.location.__bindgen_anon_1.id = a.props.device;
    let descs = if a.access.is_empty() { std::ptr::null() } else { a.access.as_ptr() };
    Ok(CUDA_MEM_ALLOC_NODE_PARAMS_v1 {
        poolProps: props,
        accessDescs: descs,
        accessDescCount: a.access.len(),
        bytesize: a.size,
        dptr: address,
    })
}

/// The address of allocation node `h` (`alloc`) or free node.
pub(crate) fn node_address(w: &World, h: CUgraphNode, alloc: bool) -> Result<u64, CUresult> {
    match find_node(&lock(&w.graphs), from_ptr(h))?.1 {
        Node::MemAlloc(a) if alloc => Ok(*a),
        Node::MemFree(a) if !alloc => Ok(*a),
        _ => Err(INVALID),
    }
}

/// `cuGraphMemAllocNodeGetParams`: another kind of node: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_graph_mem_alloc_node_get_params(
    w: &World,
    h: CUgraphNode,
    p: *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult {
    status(non_null(p).and_then(|()| write(p, params_of(w, node_address(w, h, true)?)?)))
}

/// `cuGraphMemFreeNodeGetParams`: the address it frees.
pub(crate) unsafe fn cu_graph_mem_free_node_get_params(w: &World, h: CUgraphNode, dptr: *mut CUdeviceptr) -> CUresult {
    status(non_null(dptr).and_then(|()| write(dptr, node_address(w, h, false)?)))
}

/// A stream-ordered allocation of `size` bytes from `pool` (on `device`) on stream `s` in
/// context `owner`: if `s` is capturing, an allocation node is recorded and its address
/// returned (`Ok(Some)`; size 0: address 0, no node); else `Ok(None)`. An invalidated
/// capture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
pub(crate) fn capture_alloc(
    w: &World,
    s: CUstream,
    size: usize,
    device: i32,
    owner: Owner,
) -> Result<Option<u64>, CUresult> {
    let info = capture::info(w, s);
    match info.status {
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => return Ok(None),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => {}
        _ => return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    }
    if size == 0 {
        return Ok(Some(0));
    }
    let props = AllocProps {
        alloc_type: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        handle_types: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        location_type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        device,
    };
    let owner = Owner { device, ..owner };
    let (address, key) = reserve(w, size, owner)?;
    if capture::record(w, s, Node::MemAlloc(address))?.is_some() {
        // The capture ended meanwhile.
        return Ok(None);
    }
    let alloc = GraphAlloc { size, key, owner, props, access: Vec::new(), graph: info.graph, freed_in: None };
    lock(&w.graph_mem).allocs.insert(address, alloc);
    Ok(Some(address))
}

/// A stream-ordered free of `address` on stream `s`: if `s` is capturing, a free node is
/// recorded (`Ok(true)`) when `address` is a graph allocation the capture's graph may
/// free; any other address is CUDA_ERROR_INVALID_VALUE, the capture going on, as on the
/// H200. Not capturing: `Ok(false)`.
pub(crate) fn capture_free(w: &World, s: CUstream, address: u64) -> Result<bool, CUresult> {
    let info = capture::info(w, s);
    match info.status {
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => return Ok(false),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => {}
        _ => return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
    }
    if address == 0 {
        return Ok(true);
    }
    // Memory no allocation node made (`cuMemAlloc`'s, a pool's): refused, and the capture
    // goes on (`graph_memory.capture_free_plain_memory`, `..._async_memory`).
    {
        let gm = lock(&w.graph_mem);
        let alloc = gm.allocs.get(&address).ok_or(INVALID)?;
        may_free(info.graph, alloc)?;
    }
    if capture::record(w, s, Node::MemFree(address))?.is_some() {
        return Ok(false);
    }
    if let Some(a) = lock(&w.graph_mem).allocs.get_mut(&address) {
        a.freed_in = Some(info.graph);
    }
    Ok(true)
}
