//! Graph memory nodes: allocation and free nodes added by hand and by stream capture, the
//! rules of graphs that have them, and the device's graph memory attributes.

mod common;

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::{Driver, P};

fn new_graph(p: P) -> CUgraph {
    let mut g = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuGraphCreate(&mut g, 0) });
    g
}

fn stream(p: P) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuStreamCreate(&mut s, 0) });
    s
}

/// Allocation node parameters for `size` bytes of device 0.
fn alloc_params(size: usize) -> CUDA_MEM_ALLOC_NODE_PARAMS {
    let mut p = CUDA_MEM_ALLOC_NODE_PARAMS { bytesize: size, ..Default::default() };
    p.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    p
}

/// Adds an allocation node of `size` bytes: the node and its address.
fn alloc_node(p: P, g: CUgraph, deps: &[CUgraphNode], size: usize) -> (CUgraphNode, CUdeviceptr) {
    let mut params = alloc_params(size);
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, valid parameters and out-pointer.
    ok(unsafe { p.cuGraphAddMemAllocNode(&mut n, g, deps.as_ptr(), deps.len(), &mut params) });
    assert_ne!(params.dptr, 0);
    (n, params.dptr)
}

fn free_node(p: P, g: CUgraph, deps: &[CUgraphNode], dptr: CUdeviceptr) -> Result<CUgraphNode, CUresult> {
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, a valid out-pointer.
    match unsafe { p.cuGraphAddMemFreeNode(&mut n, g, deps.as_ptr(), deps.len(), dptr) } {
        CUresult::CUDA_SUCCESS => Ok(n),
        e => Err(e),
    }
}

/// Adds a memset of `n` bytes of `value` at `dst`.
fn memset_node(p: P, g: CUgraph, deps: &[CUgraphNode], dst: CUdeviceptr, value: u8, n: usize) -> CUgraphNode {
    let params = CUDA_MEMSET_NODE_PARAMS { dst, value: value.into(), elementSize: 1, width: n, height: 1, pitch: 0 };
    let mut node = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, valid parameters.
    ok(unsafe { p.cuGraphAddMemsetNode(&mut node, g, deps.as_ptr(), deps.len(), &params, std::ptr::null_mut()) });
    node
}

/// Adds a copy of `n` bytes from `src` (device) to `dst` (device).
fn copy_node(p: P, g: CUgraph, deps: &[CUgraphNode], dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUgraphNode {
    let params = CUDA_MEMCPY3D {
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcDevice: src,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstDevice: dst,
        WidthInBytes: n,
        Height: 1,
        Depth: 1,
        ..Default::default()
    };
    let mut node = std::ptr::null_mut();
    // SAFETY: a live graph, nodes of it, valid parameters.
    ok(unsafe { p.cuGraphAddMemcpyNode(&mut node, g, deps.as_ptr(), deps.len(), &params, std::ptr::null_mut()) });
    node
}

fn instantiate(p: P, g: CUgraph, flags: u64) -> Result<CUgraphExec, CUresult> {
    let mut x = std::ptr::null_mut();
    // SAFETY: a live graph, a valid out-pointer.
    match unsafe { p.cuGraphInstantiateWithFlags(&mut x, g, flags) } {
        CUresult::CUDA_SUCCESS => Ok(x),
        e => Err(e),
    }
}

fn read(p: P, src: CUdeviceptr, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    // SAFETY: `v` has room for `n` bytes.
    ok(unsafe { p.cuMemcpyDtoH(v.as_mut_ptr().cast(), src, n) });
    v
}

fn setup() -> Driver {
    let d = driver();
    new_context(&d);
    d
}

#[test]
fn an_allocation_lives_between_its_nodes_at_one_address_each_launch() {
    let d = setup();
    let p = d.p();
    let mut out = 0;
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuMemAlloc(&mut out, 64) });
    let g = new_graph(p);
    let (a, dptr) = alloc_node(p, g, &[], 64);
    let set = memset_node(p, g, &[a], dptr, 7, 64);
    let copy = copy_node(p, g, &[set], out, dptr, 64);
    let f = free_node(p, g, &[copy], dptr).unwrap();
    // SAFETY: live nodes, valid out-pointers.
    unsafe {
        let mut ty = CUgraphNodeType(99);
        ok(p.cuGraphNodeGetType(a, &mut ty));
        assert_eq!(ty, CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        ok(p.cuGraphNodeGetType(f, &mut ty));
        assert_eq!(ty, CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE);
        let mut back = CUDA_MEM_ALLOC_NODE_PARAMS::default();
        ok(p.cuGraphMemAllocNodeGetParams(a, &mut back));
        assert_eq!((back.dptr, back.bytesize), (dptr, 64));
        assert_eq!(back.poolProps.location.type_, CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE);
        let mut freed = 0;
        ok(p.cuGraphMemFreeNodeGetParams(f, &mut freed));
        assert_eq!(freed, dptr);
        // The other kind of node: not its parameters.
        assert_eq!(p.cuGraphMemFreeNodeGetParams(a, &mut freed), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(p.cuGraphMemAllocNodeGetParams(f, &mut back), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let x = instantiate(p, g, 0).unwrap();
    let s = stream(p);
    for round in 0..2u8 {
        // SAFETY: live handles.
        unsafe {
            ok(p.cuMemsetD8(out, round, 64));
            ok(p.cuGraphLaunch(x, s));
            ok(p.cuStreamSynchronize(s));
        }
        assert_eq!(read(p, out, 64), vec![7u8; 64]);
        // Freed by its node: no longer memory.
        let mut byte = [0u8];
        // SAFETY: a one-byte buffer.
        assert_eq!(unsafe { p.cuMemcpyDtoH(byte.as_mut_ptr().cast(), dptr, 1) }, CUresult::CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn an_unfreed_allocation_outlives_the_launch_and_blocks_a_relaunch() {
    let d = setup();
    let p = d.p();
    let g = new_graph(p);
    let (a, dptr) = alloc_node(p, g, &[], 256);
    memset_node(p, g, &[a], dptr, 3, 256);
    let x = instantiate(p, g, 0).unwrap();
    let s = stream(p);
    // SAFETY: live handles.
    unsafe {
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
        // Stream work after the launch may use it.
        assert_eq!(read(p, dptr, 256), vec![3u8; 256]);
        // Still allocated: the relaunch fails (cuGraphLaunch's documentation).
        assert_eq!(p.cuGraphLaunch(x, s), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuMemFreeAsync(dptr, s));
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
        assert_eq!(read(p, dptr, 4), vec![3u8; 4]);
        // Destroying the exec leaves it allocated; cuMemFree frees it.
        ok(p.cuGraphExecDestroy(x));
        assert_eq!(read(p, dptr, 4), vec![3u8; 4]);
        ok(p.cuMemFree(dptr));
        assert_eq!(p.cuMemFree(dptr), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // Instantiated to free on launch: relaunches need no free.
    let auto = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
    let x = instantiate(p, g, auto).unwrap();
    // SAFETY: live handles.
    unsafe {
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
        ok(p.cuMemFreeAsync(dptr, s));
        ok(p.cuStreamSynchronize(s));
    }
}

#[test]
fn another_graph_may_free_an_allocation_its_graph_does_not() {
    let d = setup();
    let p = d.p();
    let (g, other) = (new_graph(p), new_graph(p));
    let (_, dptr) = alloc_node(p, g, &[], 16);
    free_node(p, other, &[], dptr).unwrap();
    // Freed in another graph: its own graph can no longer free it.
    assert_eq!(free_node(p, g, &[], dptr), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
    let (x, y) = (instantiate(p, g, 0).unwrap(), instantiate(p, other, 0).unwrap());
    let s = stream(p);
    // SAFETY: live handles.
    unsafe {
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuGraphLaunch(y, s));
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
        ok(p.cuMemFree(dptr));
    }
}

#[test]
fn free_nodes_follow_the_documented_rules() {
    let d = setup();
    let p = d.p();
    let g = new_graph(p);
    let (a, dptr) = alloc_node(p, g, &[], 16);
    let mut plain = 0;
    // SAFETY: a valid out-pointer.
    ok(unsafe { p.cuMemAlloc(&mut plain, 16) });
    let invalid = Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    // Not an address an allocation node returned.
    assert_eq!(free_node(p, g, &[a], plain), invalid);
    assert_eq!(free_node(p, g, &[a], dptr + 8), invalid);
    // In the allocating graph, a free node need not be ordered after the allocation node
    // (as on the H200).
    free_node(p, g, &[], dptr).unwrap();
    // Twice in its graph, or in another graph once its own frees it.
    assert_eq!(free_node(p, g, &[a], dptr), invalid);
    assert_eq!(free_node(p, new_graph(p), &[], dptr), invalid);
}

#[test]
fn a_graph_with_memory_nodes_is_instantiated_once_and_never_copied() {
    let d = setup();
    let p = d.p();
    let g = new_graph(p);
    let (a, dptr) = alloc_node(p, g, &[], 16);
    let f = free_node(p, g, &[a], dptr).unwrap();
    let x = instantiate(p, g, 0).unwrap();
    assert_eq!(instantiate(p, g, 0), Err(CUresult::CUDA_ERROR_NOT_SUPPORTED));
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        ok(p.cuGraphExecDestroy(x));
        let x = instantiate(p, g, 0).unwrap();
        let mut copy = std::ptr::null_mut();
        assert_eq!(p.cuGraphClone(&mut copy, g), CUresult::CUDA_ERROR_NOT_SUPPORTED);
        let (parent, mut n) = (new_graph(p), std::ptr::null_mut());
        assert_eq!(
            p.cuGraphAddChildGraphNode(&mut n, parent, std::ptr::null(), 0, g),
            CUresult::CUDA_ERROR_NOT_SUPPORTED
        );
        assert_eq!(p.cuGraphRemoveDependencies(g, &a, &f, std::ptr::null(), 1), CUresult::CUDA_ERROR_NOT_SUPPORTED);
        ok(p.cuGraphExecDestroy(x));
    }
}

#[test]
fn allocation_parameters_are_checked() {
    let d = setup();
    let p = d.p();
    let g = new_graph(p);
    let mut n = std::ptr::null_mut();
    let mut bad = [alloc_params(0), alloc_params(16), alloc_params(16), alloc_params(16)];
    bad[1].poolProps.location.__bindgen_anon_1.id = 99;
    bad[2].poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID;
    bad[3].accessDescCount = 1;
    for params in &mut bad {
        // SAFETY: a live graph, valid out-pointers; the descriptors pointer is NULL.
        let st = unsafe { p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, params) };
        assert_eq!(st, CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: NULL parameters.
    let st = unsafe { p.cuGraphAddMemAllocNode(&mut n, g, std::ptr::null(), 0, std::ptr::null_mut()) };
    assert_eq!(st, CUresult::CUDA_ERROR_INVALID_VALUE);
    let mut count = 9;
    // SAFETY: NULL nodes asks for the count.
    ok(unsafe { p.cuGraphGetNodes(g, std::ptr::null_mut(), &mut count) });
    assert_eq!(count, 0);
}

#[test]
fn stream_ordered_allocation_during_capture_records_memory_nodes() {
    let d = setup();
    let p = d.p();
    let s = stream(p);
    let mut out = 0;
    let mut dptr = 0;
    let mut g = std::ptr::null_mut();
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        ok(p.cuMemAlloc(&mut out, 32));
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL));
        ok(p.cuMemAllocAsync(&mut dptr, 32, s));
        assert_ne!(dptr, 0);
        ok(p.cuMemsetD8Async(dptr, 9, 32, s));
        ok(p.cuMemcpyDtoDAsync(out, dptr, 32, s));
        ok(p.cuMemFreeAsync(dptr, s));
        ok(p.cuStreamEndCapture(s, &mut g));
        let mut nodes = [std::ptr::null_mut(); 4];
        let mut count = 4;
        ok(p.cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut count));
        let mut types = Vec::new();
        for &n in &nodes[..count] {
            let mut ty = CUgraphNodeType(99);
            ok(p.cuGraphNodeGetType(n, &mut ty));
            types.push(ty);
        }
        type T = CUgraphNodeType;
        let want = [T::CU_GRAPH_NODE_TYPE_MEM_ALLOC, T::CU_GRAPH_NODE_TYPE_MEMSET, T::CU_GRAPH_NODE_TYPE_MEMCPY];
        assert_eq!(types[..3], want);
        assert_eq!(types[3], T::CU_GRAPH_NODE_TYPE_MEM_FREE);
        let mut back = CUDA_MEM_ALLOC_NODE_PARAMS::default();
        ok(p.cuGraphMemAllocNodeGetParams(nodes[0], &mut back));
        assert_eq!((back.dptr, back.bytesize), (dptr, 32));
    }
    let x = instantiate(p, g, 0).unwrap();
    // SAFETY: live handles.
    unsafe {
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
    }
    assert_eq!(read(p, out, 32), vec![9u8; 32]);
}

#[test]
fn freeing_other_memory_during_capture_is_refused_and_the_capture_goes_on() {
    let d = setup();
    let p = d.p();
    let s = stream(p);
    let mut plain = 0;
    let mut g = std::ptr::null_mut();
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        ok(p.cuMemAlloc(&mut plain, 32));
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL));
        // As on the H200: INVALID_VALUE, and the capture goes on.
        assert_eq!(p.cuMemFreeAsync(plain, s), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuStreamEndCapture(s, &mut g));
        ok(p.cuGraphDestroy(g));
        ok(p.cuMemFree(plain));
    }
}
