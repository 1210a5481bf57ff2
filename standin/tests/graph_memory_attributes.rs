//! The device's graph memory attributes and `cuDeviceGraphMemTrim` (a test binary of its
//! own: the attributes are the whole world's).

mod common;

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::P;

/// What the H200 maps for a graph's allocations: units of 32 MiB.
const MIB32: u64 = 32 << 20;

fn attribute(p: P, attr: CUgraphMem_attribute) -> u64 {
    let mut v = u64::MAX;
    // SAFETY: a valid out-pointer for a cuuint64_t.
    ok(unsafe { p.cuDeviceGetGraphMemAttribute(0, attr, (&raw mut v).cast()) });
    v
}

/// Adds an allocation node of `size` bytes and its free node to `g`; the address.
fn alloc_and_free(p: P, g: CUgraph, size: usize) -> CUdeviceptr {
    let mut params = CUDA_MEM_ALLOC_NODE_PARAMS { bytesize: size, ..Default::default() };
    params.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    params.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let (mut a, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: a live graph, valid parameters and out-pointers.
    unsafe {
        ok(p.cuGraphAddMemAllocNode(&mut a, g, std::ptr::null(), 0, &mut params));
        ok(p.cuGraphAddMemFreeNode(&mut f, g, &a, 1, params.dptr));
    }
    params.dptr
}

#[test]
fn graph_memory_attributes_follow_launches_destruction_and_trim() {
    let d = driver();
    new_context(&d);
    let p = d.p();
    type A = CUgraphMem_attribute;
    let (used, used_high) = (A::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, A::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH);
    let (reserved, reserved_high) = (A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, A::CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH);
    assert_eq!([used, used_high, reserved, reserved_high].map(|a| attribute(p, a)), [0; 4]);
    let (mut g, mut x, mut s) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers, live handles.
    unsafe {
        ok(p.cuGraphCreate(&mut g, 0));
        alloc_and_free(p, g, 1000);
        ok(p.cuGraphInstantiateWithFlags(&mut x, g, 0));
        // Instantiated: nothing mapped yet.
        assert_eq!(attribute(p, CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0);
        ok(p.cuStreamCreate(&mut s, 0));
        ok(p.cuGraphLaunch(x, s));
        ok(p.cuStreamSynchronize(s));
    }
    assert_eq!([used, reserved].map(|a| attribute(p, a)), [MIB32, MIB32]);
    // SAFETY: a live exec.
    ok(unsafe { p.cuGraphExecDestroy(x) });
    // The H200 keeps the memory of a destroyed exec used and reserved until trimmed.
    assert_eq!([used, used_high, reserved, reserved_high].map(|a| attribute(p, a)), [MIB32; 4]);
    let mut zero = 0u64;
    let mut one = 1u64;
    // SAFETY: valid pointers to a cuuint64_t.
    unsafe {
        // A high mark reset reads the current use.
        ok(p.cuDeviceSetGraphMemAttribute(0, used_high, (&raw mut zero).cast()));
        assert_eq!(attribute(p, used_high), MIB32);
        ok(p.cuDeviceGraphMemTrim(0));
        assert_eq!([used, reserved, reserved_high].map(|a| attribute(p, a)), [0, 0, MIB32]);
        ok(p.cuDeviceSetGraphMemAttribute(0, used_high, (&raw mut zero).cast()));
        assert_eq!(attribute(p, used_high), 0);
        ok(p.cuDeviceSetGraphMemAttribute(0, reserved_high, (&raw mut zero).cast()));
        assert_eq!(attribute(p, reserved_high), 0);
        // Only the high marks, only to 0.
        let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
        assert_eq!(p.cuDeviceSetGraphMemAttribute(0, used_high, (&raw mut one).cast()), invalid);
        assert_eq!(p.cuDeviceSetGraphMemAttribute(0, used, (&raw mut zero).cast()), invalid);
        assert_eq!(p.cuDeviceGetGraphMemAttribute(0, CUgraphMem_attribute_enum(4), (&raw mut one).cast()), invalid);
        assert_eq!(p.cuDeviceGetGraphMemAttribute(0, used, std::ptr::null_mut()), invalid);
        let bad_device = CUresult::CUDA_ERROR_INVALID_DEVICE;
        assert_eq!(p.cuDeviceGetGraphMemAttribute(99, used, (&raw mut one).cast()), bad_device);
        assert_eq!(p.cuDeviceGraphMemTrim(99), bad_device);
    }
}
