//! Memory, array and pool entry points of issue 29: a location's current pool and pool
//! access, mipmapped arrays and the array queries, 2D memsets, copies to and from arrays
//! by offset, peer 3D copies, retained virtual memory handles, SYNC_MEMOPS and dma-buf
//! handles. Each test has a world of its own; the copy and memset tests run with the
//! plain and the per-thread default stream variants bound.

mod common;

use std::ffi::c_void;

use common::ok;
use cudrv::sys::*;
use cudrv::{Driver, LoadOptions};
use cudrv_standin::StandIn;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const HANDLE: CUresult = CUresult::CUDA_ERROR_INVALID_HANDLE;

/// A fresh 13.5 world with `devices` devices, initialised, with or without the
/// per-thread variants bound, and a context on device 0 current.
fn world(devices: i32, per_thread: bool) -> Driver {
    let s = StandIn::isolated(13050).unwrap();
    assert!(s.set_device_count(devices));
    let d = s.load(LoadOptions::default().with_per_thread_default_stream(per_thread)).unwrap();
    // SAFETY: plain calls with valid out-pointers.
    unsafe {
        ok(d.p().cuInit(0));
        let mut ctx = std::ptr::null_mut();
        ok(d.p().cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0));
    }
    d
}

fn alloc(d: &Driver, size: usize) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut p, size) });
    p
}

fn read(d: &Driver, src: CUdeviceptr, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    // SAFETY: `v` holds `n` bytes.
    ok(unsafe { d.p().cuMemcpyDtoH(v.as_mut_ptr().cast(), src, n) });
    v
}

fn write(d: &Driver, dst: CUdeviceptr, data: &[u8]) {
    // SAFETY: `data` holds the bytes copied.
    ok(unsafe { d.p().cuMemcpyHtoD(dst, data.as_ptr().cast(), data.len()) });
}

fn device(id: i32) -> CUmemLocation {
    let mut l = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
    l.__bindgen_anon_1.id = id;
    l
}

fn stream(d: &Driver) -> CUstream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    s
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

#[test]
fn a_location_current_pool_is_the_device_pool_and_allocations_come_from_it() {
    let d = world(2, false);
    let p = d.p();
    // SAFETY: valid pointers; handles from the stand-in.
    unsafe {
        let (mut dflt, mut got) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDeviceGetDefaultMemPool(&mut dflt, 0));
        let mut loc = device(0);
        let pinned = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        ok(p.cuMemGetMemPool(&mut got, &mut loc, pinned));
        assert_eq!(got, dflt, "at first the default pool");
        let props = CUmemPoolProps { allocType: pinned, location: device(0), ..Default::default() };
        let mut pool = std::ptr::null_mut();
        ok(p.cuMemPoolCreate(&mut pool, &props));
        ok(p.cuMemSetMemPool(&mut loc, pinned, pool));
        ok(p.cuMemGetMemPool(&mut got, &mut loc, pinned));
        assert_eq!(got, pool);
        ok(p.cuDeviceGetMemPool(&mut got, 0));
        assert_eq!(got, pool, "one current pool, whichever call set it");
        // A stream-ordered allocation comes from it and holds data.
        let s = stream(&d);
        let mut a = 0;
        ok(p.cuMemAllocAsync(&mut a, 4096, s));
        let mut from: CUmemoryPool = std::ptr::null_mut();
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE;
        ok(p.cuPointerGetAttribute((&raw mut from).cast(), attr, a));
        assert_eq!(from, pool);
        let data = pattern(4096, 3);
        ok(p.cuMemcpyHtoDAsync(a, data.as_ptr().cast(), 4096, s));
        ok(p.cuStreamSynchronize(s));
        assert_eq!(read(&d, a, 4096), data);
        ok(p.cuMemFreeAsync(a, s));
        ok(p.cuStreamSynchronize(s));
        // A pool of device 0 is not device 1's; nothing changes.
        let mut loc1 = device(1);
        assert_eq!(p.cuMemSetMemPool(&mut loc1, pinned, pool), INVALID);
        ok(p.cuMemGetMemPool(&mut got, &mut loc1, pinned));
        assert_ne!(got, pool);
        // Pairs the documentation does not allow; null arguments; no such device.
        let invalid_type = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID;
        assert_eq!(p.cuMemGetMemPool(&mut got, &mut loc, invalid_type), INVALID);
        let mut none = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_NONE, ..Default::default() };
        assert_eq!(p.cuMemGetMemPool(&mut got, &mut none, pinned), INVALID);
        assert_eq!(p.cuMemGetMemPool(std::ptr::null_mut(), &mut loc, pinned), INVALID);
        assert_eq!(p.cuMemGetMemPool(&mut got, std::ptr::null_mut(), pinned), INVALID);
        let mut loc9 = device(9);
        assert_eq!(p.cuMemGetMemPool(&mut got, &mut loc9, pinned), INVALID);
        // A device pool for the host: INVALID_VALUE, as on the H200.
        let mut host = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, ..Default::default() };
        assert_eq!(p.cuMemSetMemPool(&mut host, pinned, pool), INVALID);
        // Destroyed, the set pool gives way to the default one.
        ok(p.cuMemPoolDestroy(pool));
        ok(p.cuMemGetMemPool(&mut got, &mut loc, pinned));
        assert_eq!(got, dflt);
    }
}

#[test]
fn pool_access_is_read_write_for_its_device_and_what_was_set_for_others() {
    let d = world(2, false);
    let p = d.p();
    // SAFETY: valid pointers; handles from the stand-in.
    unsafe {
        let pinned = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        let props = CUmemPoolProps { allocType: pinned, location: device(0), ..Default::default() };
        let mut pool = std::ptr::null_mut();
        ok(p.cuMemPoolCreate(&mut pool, &props));
        let get = |id: i32| {
            let mut flags = CUmemAccess_flags(77);
            let mut loc = device(id);
            let st = p.cuMemPoolGetAccess(&mut flags, pool, &mut loc);
            (st, flags)
        };
        let rw = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        let none = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE;
        assert_eq!(get(0), (CUresult::CUDA_SUCCESS, rw));
        assert_eq!(get(1), (CUresult::CUDA_SUCCESS, none));
        let desc = CUmemAccessDesc { location: device(1), flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ };
        ok(p.cuMemPoolSetAccess(pool, &desc, 1));
        assert_eq!(get(1), (CUresult::CUDA_SUCCESS, CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ));
        let desc = CUmemAccessDesc { location: device(1), flags: rw };
        ok(p.cuMemPoolSetAccess(pool, &desc, 1));
        assert_eq!(get(1), (CUresult::CUDA_SUCCESS, rw));
        // A refused set changes nothing.
        let bad = CUmemAccessDesc { location: device(7), flags: none };
        assert_eq!(p.cuMemPoolSetAccess(pool, &bad, 1), INVALID);
        assert_eq!(get(1), (CUresult::CUDA_SUCCESS, rw));
        // Errors write nothing.
        assert_eq!(get(5), (INVALID, CUmemAccess_flags(77)));
        let mut loc = device(0);
        assert_eq!(p.cuMemPoolGetAccess(std::ptr::null_mut(), pool, &mut loc), INVALID);
        let mut flags = CUmemAccess_flags(77);
        assert_eq!(p.cuMemPoolGetAccess(&mut flags, pool, std::ptr::null_mut()), INVALID);
        ok(p.cuMemPoolDestroy(pool));
        assert_eq!(p.cuMemPoolGetAccess(&mut flags, pool, &mut loc), INVALID);
        assert_eq!(flags, CUmemAccess_flags(77));
    }
}

fn desc3d(width: usize, height: usize, depth: usize, flags: u32) -> CUDA_ARRAY3D_DESCRIPTOR {
    CUDA_ARRAY3D_DESCRIPTOR {
        Width: width,
        Height: height,
        Depth: depth,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
        Flags: flags,
    }
}

#[test]
fn mipmap_levels_are_arrays_that_hold_data() {
    let d = world(1, false);
    let p = d.p();
    // SAFETY: valid pointers and descriptors; handles from the stand-in.
    unsafe {
        let (mut free0, mut total) = (0, 0);
        ok(p.cuMemGetInfo(&mut free0, &mut total));
        let mut m = std::ptr::null_mut();
        ok(p.cuMipmappedArrayCreate(&mut m, &desc3d(64, 32, 0, 0), 99));
        let mut levels = Vec::new();
        for i in 0..7 {
            let mut a = std::ptr::null_mut();
            ok(p.cuMipmappedArrayGetLevel(&mut a, m, i));
            levels.push(a);
        }
        let mut past = 0x5eed as CUarray;
        assert_eq!(p.cuMipmappedArrayGetLevel(&mut past, m, 7), INVALID, "64 wide: 7 levels");
        assert_eq!(past, 0x5eed as CUarray, "nothing written");
        let mut got = CUDA_ARRAY3D_DESCRIPTOR::default();
        ok(p.cuArray3DGetDescriptor(&mut got, levels[2]));
        assert_eq!((got.Width, got.Height, got.Depth), (16, 8, 0));
        ok(p.cuArray3DGetDescriptor(&mut got, levels[6]));
        assert_eq!((got.Width, got.Height), (1, 1));
        // Level 2 (16 x 8 floats) holds what a 2D copy writes.
        let data = pattern(16 * 4 * 8, 9);
        let up = CUDA_MEMCPY2D {
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: data.as_ptr().cast(),
            srcPitch: 64,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstArray: levels[2],
            WidthInBytes: 64,
            Height: 8,
            ..Default::default()
        };
        ok(p.cuMemcpy2D(&up));
        let mut back = vec![0u8; data.len()];
        let down = CUDA_MEMCPY2D {
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
            srcArray: levels[2],
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
            dstHost: back.as_mut_ptr().cast(),
            dstPitch: 64,
            WidthInBytes: 64,
            Height: 8,
            ..Default::default()
        };
        ok(p.cuMemcpy2D(&down));
        assert_eq!(back, data);
        // Other levels are untouched.
        let mut row = vec![1u8; 32];
        ok(p.cuMemcpyAtoH(row.as_mut_ptr().cast(), levels[3], 0, 32));
        assert!(row.iter().all(|&b| b == 0));
        // Destroying a level answers success, as on the H200.
        ok(p.cuArrayDestroy(levels[2]));
        // The queries answer as for arrays of none of their kinds.
        let mut req = CUDA_ARRAY_MEMORY_REQUIREMENTS::default();
        assert_eq!(p.cuMipmappedArrayGetMemoryRequirements(&mut req, m, 0), INVALID);
        assert_eq!(p.cuArrayGetMemoryRequirements(&mut req, levels[0], 0), INVALID);
        let mut sparse = CUDA_ARRAY_SPARSE_PROPERTIES::default();
        assert_eq!(p.cuMipmappedArrayGetSparseProperties(&mut sparse, m), INVALID);
        let mut used = 0;
        ok(p.cuMemGetInfo(&mut used, &mut total));
        assert!(used < free0, "the levels have memory");
        ok(p.cuMipmappedArrayDestroy(m));
        let mut after = 0;
        ok(p.cuMemGetInfo(&mut after, &mut total));
        assert_eq!(after, free0, "destroying it freed every level");
        assert_eq!(p.cuMipmappedArrayGetLevel(&mut past, m, 0), HANDLE);
        assert_eq!(p.cuMemcpyAtoH(row.as_mut_ptr().cast(), levels[3], 0, 32), HANDLE);
        assert_eq!(p.cuMipmappedArrayDestroy(m), HANDLE);
        // Layered: the layers stay, the extents halve; 0 levels asked for is 1.
        ok(p.cuMipmappedArrayCreate(&mut m, &desc3d(8, 8, 3, CUDA_ARRAY3D_LAYERED), 0));
        let mut a = std::ptr::null_mut();
        ok(p.cuMipmappedArrayGetLevel(&mut a, m, 0));
        assert_eq!(p.cuMipmappedArrayGetLevel(&mut a, m, 1), INVALID);
        ok(p.cuMipmappedArrayDestroy(m));
        ok(p.cuMipmappedArrayCreate(&mut m, &desc3d(8, 8, 3, CUDA_ARRAY3D_LAYERED), 2));
        ok(p.cuMipmappedArrayGetLevel(&mut a, m, 1));
        ok(p.cuArray3DGetDescriptor(&mut got, a));
        assert_eq!((got.Width, got.Height, got.Depth, got.Flags), (4, 4, 3, CUDA_ARRAY3D_LAYERED));
        ok(p.cuMipmappedArrayDestroy(m));
        // Refused descriptors make nothing.
        m = 0x5eed as CUmipmappedArray;
        assert_eq!(p.cuMipmappedArrayCreate(&mut m, &desc3d(0, 8, 0, 0), 2), INVALID);
        assert_eq!(m, 0x5eed as CUmipmappedArray);
        assert_eq!(p.cuMipmappedArrayCreate(&mut m, std::ptr::null(), 2), INVALID);
        assert_eq!(p.cuMipmappedArrayCreate(std::ptr::null_mut(), &desc3d(8, 8, 0, 0), 2), INVALID);
    }
}

#[test]
fn array_queries_answer_as_for_plain_arrays() {
    let d = world(1, false);
    let p = d.p();
    // SAFETY: valid pointers and descriptors; handles from the stand-in.
    unsafe {
        let mut a = std::ptr::null_mut();
        ok(p.cuArray3DCreate(&mut a, &desc3d(16, 16, 0, 0)));
        let mut plane = 0x5eed as CUarray;
        assert_eq!(p.cuArrayGetPlane(&mut plane, a, 0), INVALID, "not a planar format");
        assert_eq!(plane, 0x5eed as CUarray);
        let mut req = CUDA_ARRAY_MEMORY_REQUIREMENTS::default();
        assert_eq!(p.cuArrayGetMemoryRequirements(&mut req, a, 0), INVALID, "no deferred mapping");
        assert_eq!(p.cuArrayGetMemoryRequirements(&mut req, a, 9), INVALID, "no device 9 (H200: INVALID_VALUE)");
        let mut sparse = CUDA_ARRAY_SPARSE_PROPERTIES::default();
        assert_eq!(p.cuArrayGetSparseProperties(&mut sparse, a), INVALID, "not sparse");
        assert_eq!(p.cuArrayGetSparseProperties(std::ptr::null_mut(), a), INVALID);
        ok(p.cuArrayDestroy(a));
        assert_eq!(p.cuArrayGetPlane(&mut plane, a, 0), HANDLE);
        assert_eq!(p.cuArrayGetSparseProperties(&mut sparse, a), HANDLE);
        assert_eq!(p.cuArrayGetMemoryRequirements(&mut req, a, 0), HANDLE);
    }
}

/// Rows of `row` bytes `pitch` apart, `rows` of them, in a buffer of `pitch * rows`.
fn rows_of(buf: &[u8], pitch: usize, row: usize, rows: usize) -> Vec<&[u8]> {
    (0..rows).map(|r| &buf[r * pitch..r * pitch + row]).collect()
}

#[test]
fn memsets_2d_fill_the_rows_and_leave_the_gap() {
    for per_thread in [false, true] {
        let d = world(1, per_thread);
        let p = d.p();
        let (pitch, rows) = (64, 4);
        let a = alloc(&d, pitch * rows);
        // SAFETY: device memory of `pitch * rows` bytes; a stream of the test.
        unsafe {
            ok(p.cuMemsetD8(a, 0xee, pitch * rows));
            ok(p.cuMemsetD2D8(a, pitch, 0x11, 10, 3));
            let b = read(&d, a, pitch * rows);
            for r in rows_of(&b, pitch, 10, 3) {
                assert!(r.iter().all(|&x| x == 0x11));
            }
            assert!(b[10..pitch].iter().all(|&x| x == 0xee), "the gap is left");
            assert!(b[3 * pitch..].iter().all(|&x| x == 0xee), "the fourth row is left");
            ok(p.cuMemsetD2D16(a, pitch, 0xbeef, 8, 4));
            let b = read(&d, a, pitch * rows);
            for r in rows_of(&b, pitch, 16, 4) {
                assert_eq!(r, 0xbeef_u16.to_ne_bytes().repeat(8));
            }
            assert_eq!(b[16], 0xee, "past the 2D memset's row");
            let s = stream(&d);
            ok(p.cuMemsetD2D32Async(a + 4, pitch, 0x0102_0304, 2, 4, s));
            ok(p.cuMemsetD2D8Async(a + 40, pitch, 0x77, 3, 2, s));
            ok(p.cuMemsetD2D16Async(a + 48, pitch, 0x0a0b, 1, 1, std::ptr::null_mut()));
            ok(p.cuStreamSynchronize(s));
            ok(p.cuCtxSynchronize());
            let b = read(&d, a, pitch * rows);
            for (i, r) in rows_of(&b, pitch, pitch, 4).into_iter().enumerate() {
                assert_eq!(r[4..12], 0x0102_0304_u32.to_ne_bytes().repeat(2));
                assert_eq!(r[2..4], 0xbeef_u16.to_ne_bytes());
                assert_eq!(r[12..16], 0xbeef_u16.to_ne_bytes().repeat(2));
                assert_eq!(r[40..43], if i < 2 { [0x77; 3] } else { [0xee; 3] });
                assert_eq!(r[48..50], if i == 0 { 0x0a0b_u16.to_ne_bytes() } else { [0xee; 2] });
            }
            // Refused before anything is written: a misaligned address, a pitch below the
            // row, a pitch that misaligns the rows, rows past the allocation.
            assert_eq!(p.cuMemsetD2D32(a + 2, pitch, 0, 2, 2), INVALID);
            assert_eq!(p.cuMemsetD2D8(a, 8, 0, 10, 2), INVALID);
            assert_eq!(p.cuMemsetD2D16(a, 63, 0, 2, 2), INVALID);
            assert_eq!(p.cuMemsetD2D8(a, pitch, 0, 10, 5), INVALID);
            assert_eq!(p.cuMemsetD2D8Async(a, pitch, 0, 10, 5, s), INVALID);
            // A width or height of 0 does nothing.
            ok(p.cuMemsetD2D8(a, pitch, 0, 0, 4));
            ok(p.cuMemsetD2D32Async(a, pitch, 0, 4, 0, s));
            ok(p.cuStreamSynchronize(s));
            assert_eq!(read(&d, a, pitch * rows), b);
        }
    }
}

#[test]
fn a_captured_2d_memset_is_one_node_that_fills_when_launched() {
    let d = world(1, false);
    let p = d.p();
    let pitch = 32;
    let a = alloc(&d, pitch * 3);
    // SAFETY: device memory of `pitch * 3` bytes; handles from the stand-in.
    unsafe {
        let s = stream(&d);
        ok(p.cuMemsetD8(a, 0, pitch * 3));
        ok(p.cuStreamBeginCapture(s, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL));
        ok(p.cuMemsetD2D32Async(a, pitch, 0xabcd_ef01, 3, 3, s));
        let mut g = std::ptr::null_mut();
        ok(p.cuStreamEndCapture(s, &mut g));
        let mut n = 0;
        ok(p.cuGraphGetNodes(g, std::ptr::null_mut(), &mut n));
        assert_eq!(n, 1);
        assert_eq!(read(&d, a, pitch * 3), vec![0; pitch * 3], "captured, not done");
        let mut exec = std::ptr::null_mut();
        ok(p.cuGraphInstantiate(&mut exec, g, 0));
        ok(p.cuGraphLaunch(exec, s));
        ok(p.cuStreamSynchronize(s));
        let b = read(&d, a, pitch * 3);
        for r in rows_of(&b, pitch, pitch, 3) {
            assert_eq!(r[..12], 0xabcd_ef01_u32.to_ne_bytes().repeat(3));
            assert!(r[12..].iter().all(|&x| x == 0));
        }
    }
}

fn array_1d(d: &Driver, width: usize, format: CUarray_format, channels: u32) -> CUarray {
    let mut a = std::ptr::null_mut();
    let desc = CUDA_ARRAY_DESCRIPTOR { Width: width, Height: 0, Format: format, NumChannels: channels };
    // SAFETY: valid out-pointer and descriptor.
    ok(unsafe { d.p().cuArrayCreate(&mut a, &desc) });
    a
}

#[test]
fn copies_by_offset_move_bytes_through_arrays() {
    for per_thread in [false, true] {
        let d = world(1, per_thread);
        let p = d.p();
        let f32x1 = CUarray_format::CU_AD_FORMAT_FLOAT;
        // Two arrays of 64 floats (256 bytes), one of 64 float2s (8-byte elements).
        let (a, b) = (array_1d(&d, 64, f32x1, 1), array_1d(&d, 64, f32x1, 1));
        let data = pattern(256, 1);
        let dev = alloc(&d, 256);
        // SAFETY: host buffers of the sizes passed; handles and memory from the stand-in.
        unsafe {
            ok(p.cuMemcpyHtoA(a, 0, data.as_ptr().cast(), 256));
            let mut back = vec![0u8; 256];
            ok(p.cuMemcpyAtoH(back.as_mut_ptr().cast(), a, 0, 256));
            assert_eq!(back, data);
            // An offset into the array, both ways.
            let mut part = vec![0u8; 64];
            ok(p.cuMemcpyAtoH(part.as_mut_ptr().cast(), a, 100, 64));
            assert_eq!(part, data[100..164]);
            // Array to array (same element size), array to device, device to array.
            ok(p.cuMemcpyAtoA(b, 128, a, 0, 128));
            ok(p.cuMemcpyAtoD(dev, b, 0, 256));
            let got = read(&d, dev, 256);
            assert_eq!(got[..128], [0; 128]);
            assert_eq!(got[128..], data[..128]);
            write(&d, dev, &pattern(256, 50));
            ok(p.cuMemcpyDtoA(b, 0, dev + 8, 16));
            ok(p.cuMemcpyAtoH(part.as_mut_ptr().cast(), b, 0, 64));
            assert_eq!(part[..16], pattern(256, 50)[8..24]);
            assert_eq!(part[16..], [0; 48]);
            // Stream forms, in stream order.
            let s = stream(&d);
            let fresh = pattern(256, 77);
            ok(p.cuMemcpyHtoAAsync(a, 0, fresh.as_ptr().cast(), 256, s));
            ok(p.cuMemcpyAtoHAsync(back.as_mut_ptr().cast(), a, 0, 256, s));
            ok(p.cuStreamSynchronize(s));
            assert_eq!(back, fresh);
            // Refused, nothing copied: past the end, unknown arrays, a NULL host pointer.
            // (`cuMemcpyAtoA` checks neither that the element sizes agree nor that the
            // count is a multiple of them, as on the H200.)
            assert_eq!(p.cuMemcpyHtoA(a, 200, data.as_ptr().cast(), 64), INVALID);
            assert_eq!(p.cuMemcpyAtoHAsync(back.as_mut_ptr().cast(), a, 0, 257, s), INVALID);
            assert_eq!(p.cuMemcpyAtoA(b, 0, 0x5eed as CUarray, 0, 64), HANDLE);
            assert_eq!(p.cuMemcpyDtoA(0x5eed as CUarray, 0, dev, 4), HANDLE);
            assert_eq!(p.cuMemcpyHtoA(a, 0, std::ptr::null(), 4), INVALID);
            ok(p.cuMemcpyAtoH(back.as_mut_ptr().cast(), a, 0, 256));
            assert_eq!(back, fresh);
            // A count of 0 does nothing.
            ok(p.cuMemcpyAtoA(b, 0, a, 0, 0));
        }
    }
}

#[test]
fn peer_3d_copies_move_a_box_between_contexts() {
    let d = world(2, false);
    let p = d.p();
    // SAFETY: valid pointers; contexts and memory from the stand-in.
    unsafe {
        let mut ctx0 = std::ptr::null_mut();
        ok(p.cuCtxGetCurrent(&mut ctx0));
        let src = alloc(&d, 4 * 4 * 32);
        let data = pattern(4 * 4 * 32, 5);
        write(&d, src, &data);
        let mut ctx1 = std::ptr::null_mut();
        ok(p.cuCtxCreate(&mut ctx1, std::ptr::null_mut(), 0, 1));
        let dst = alloc(&d, 2 * 3 * 16);
        // A box of 16 bytes x 3 rows x 2 slices from (8, 1, 1) of a 32-byte, 4-row source.
        let c = CUDA_MEMCPY3D_PEER {
            srcXInBytes: 8,
            srcY: 1,
            srcZ: 1,
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcDevice: src,
            srcContext: ctx0,
            srcPitch: 32,
            srcHeight: 4,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstDevice: dst,
            dstContext: ctx1,
            dstPitch: 16,
            dstHeight: 3,
            WidthInBytes: 16,
            Height: 3,
            Depth: 2,
            ..Default::default()
        };
        ok(p.cuMemcpy3DPeer(&c));
        let got = read(&d, dst, 2 * 3 * 16);
        for z in 0..2 {
            for y in 0..3 {
                let from = ((z + 1) * 4 + y + 1) * 32 + 8;
                assert_eq!(got[(z * 3 + y) * 16..][..16], data[from..from + 16], "slice {z} row {y}");
            }
        }
        // The stream form, into an array on device 1 (its context is ignored).
        let mut arr = std::ptr::null_mut();
        let desc = CUDA_ARRAY3D_DESCRIPTOR {
            Width: 16,
            Height: 3,
            Depth: 2,
            Format: CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
            NumChannels: 1,
            Flags: 0,
        };
        ok(p.cuArray3DCreate(&mut arr, &desc));
        let s = stream(&d);
        let to_array = CUDA_MEMCPY3D_PEER {
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstArray: arr,
            dstContext: std::ptr::null_mut(),
            dstDevice: 0,
            dstPitch: 0,
            dstHeight: 0,
            ..c
        };
        ok(p.cuMemcpy3DPeerAsync(&to_array, s));
        ok(p.cuStreamSynchronize(s));
        let mut back = vec![0u8; 2 * 3 * 16];
        let out = CUDA_MEMCPY3D {
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
            srcArray: arr,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
            dstHost: back.as_mut_ptr().cast(),
            dstPitch: 16,
            dstHeight: 3,
            WidthInBytes: 16,
            Height: 3,
            Depth: 2,
            ..Default::default()
        };
        ok(p.cuMemcpy3D(&out));
        assert_eq!(back, got);
        // A destroyed context of a device end refuses the copy; nothing moves.
        ok(p.cuMemsetD8(dst, 0, 2 * 3 * 16));
        ok(p.cuCtxDestroy(ctx1));
        ok(p.cuCtxSetCurrent(ctx0));
        assert_ne!(p.cuMemcpy3DPeer(&c), CUresult::CUDA_SUCCESS);
        assert_eq!(p.cuMemcpy3DPeer(std::ptr::null()), INVALID);
    }
}

#[test]
fn a_retained_handle_is_the_mapped_one_and_each_reference_is_released() {
    let d = world(1, false);
    let p = d.p();
    // SAFETY: valid pointers; handles and addresses from the stand-in.
    unsafe {
        let prop = CUmemAllocationProp {
            type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: device(0),
            ..Default::default()
        };
        let mut gran = 0;
        let min = CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM;
        ok(p.cuMemGetAllocationGranularity(&mut gran, &prop, min));
        let mut h = 0;
        ok(p.cuMemCreate(&mut h, gran, &prop, 0));
        let mut va = 0;
        ok(p.cuMemAddressReserve(&mut va, gran, 0, 0, 0));
        ok(p.cuMemMap(va, gran, 0, h, 0));
        let access =
            CUmemAccessDesc { location: device(0), flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
        ok(p.cuMemSetAccess(va, gran, &access, 1));
        let mut got = 0;
        ok(p.cuMemRetainAllocationHandle(&mut got, (va + 4096) as usize as *mut c_void));
        assert_eq!(got, h, "any address in the mapping gives its handle");
        let mut props = CUmemAllocationProp::default();
        ok(p.cuMemGetAllocationPropertiesFromHandle(&mut props, h));
        assert_eq!(props.type_, CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED);
        assert_eq!(props.location.type_, CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE);
        assert_eq!(props.location.__bindgen_anon_1.id, 0);
        assert_eq!(props.requestedHandleTypes, CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE);
        // Two references: two releases; the memory stays mapped and holds data.
        ok(p.cuMemRelease(h));
        ok(p.cuMemRelease(h));
        assert_eq!(p.cuMemRelease(h), INVALID);
        assert_eq!(p.cuMemGetAllocationPropertiesFromHandle(&mut props, h), INVALID);
        let data = pattern(4096, 8);
        write(&d, va + 8192, &data);
        // Released while mapped, it comes back (the same handle, the same memory).
        ok(p.cuMemRetainAllocationHandle(&mut got, va as usize as *mut c_void));
        assert_eq!(got, h);
        let mut va2 = 0;
        ok(p.cuMemAddressReserve(&mut va2, gran, 0, 0, 0));
        ok(p.cuMemMap(va2, gran, 0, h, 0));
        ok(p.cuMemSetAccess(va2, gran, &access, 1));
        assert_eq!(read(&d, va2 + 8192, 4096), data, "a second mapping of the retained handle");
        ok(p.cuMemUnmap(va2, gran));
        ok(p.cuMemUnmap(va, gran));
        ok(p.cuMemRelease(h));
        // An address in no mapping; a null out-pointer.
        got = 0x5eed;
        assert_eq!(p.cuMemRetainAllocationHandle(&mut got, va as usize as *mut c_void), INVALID);
        assert_eq!(got, 0x5eed);
        let plain = alloc(&d, 64);
        assert_eq!(p.cuMemRetainAllocationHandle(&mut got, plain as usize as *mut c_void), INVALID);
        assert_eq!(p.cuMemRetainAllocationHandle(std::ptr::null_mut(), va as usize as *mut c_void), INVALID);
    }
}

#[test]
fn sync_memops_is_kept_per_allocation() {
    let d = world(1, false);
    let p = d.p();
    let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS;
    let a = alloc(&d, 256);
    let get = |ptr: CUdeviceptr| {
        let mut v: u32 = 9;
        // SAFETY: a 4-byte value slot.
        ok(unsafe { p.cuPointerGetAttribute((&raw mut v).cast(), attr, ptr) });
        v
    };
    // SAFETY: valid value pointers; addresses from the stand-in.
    unsafe {
        assert_eq!(get(a), 0);
        let one: u32 = 1;
        ok(p.cuPointerSetAttribute((&raw const one).cast(), attr, a + 16));
        assert_eq!(get(a), 1, "set through an interior address, read at the start");
        assert_eq!(get(a + 200), 1);
        let zero: u32 = 0;
        ok(p.cuPointerSetAttribute((&raw const zero).cast(), attr, a));
        assert_eq!(get(a), 0);
        // Copies still move data with it set.
        ok(p.cuPointerSetAttribute((&raw const one).cast(), attr, a));
        write(&d, a, &pattern(256, 4));
        assert_eq!(read(&d, a, 256), pattern(256, 4));
        // Only SYNC_MEMOPS, only device memory the driver made, a value to read.
        let other = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        assert_eq!(p.cuPointerSetAttribute((&raw const one).cast(), other, a), INVALID);
        assert_eq!(p.cuPointerSetAttribute((&raw const one).cast(), attr, 0x1234), INVALID);
        assert_eq!(p.cuPointerSetAttribute(std::ptr::null(), attr, a), INVALID);
        let mut host = std::ptr::null_mut();
        ok(p.cuMemAllocHost(&mut host, 64));
        // Pinned host memory is accepted, as on the H200.
        ok(p.cuPointerSetAttribute((&raw const one).cast(), attr, host as usize as u64));
        // Freed, the setting goes with the allocation.
        ok(p.cuMemFree(a));
        let mut v: u32 = 9;
        assert_eq!(p.cuPointerGetAttribute((&raw mut v).cast(), attr, a), INVALID);
    }
}

#[test]
fn no_dma_buf_handle_is_given_for_an_address_range() {
    let d = world(1, false);
    let p = d.p();
    let a = alloc(&d, 1 << 16);
    let dma = CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD;
    let mut fd: i32 = -7;
    let out: *mut c_void = (&raw mut fd).cast();
    // SAFETY: a 4-byte out slot; addresses from the stand-in.
    unsafe {
        // Refused before anything is written.
        assert_eq!(p.cuMemGetHandleForAddressRange(out, a + 1, 4096, dma, 0), INVALID, "not page-aligned");
        assert_eq!(p.cuMemGetHandleForAddressRange(out, a, 100, dma, 0), INVALID);
        assert_eq!(p.cuMemGetHandleForAddressRange(out, a, 0, dma, 0), INVALID);
        assert_eq!(p.cuMemGetHandleForAddressRange(out, a, 4096, CUmemRangeHandleType(7), 0), INVALID);
        assert_eq!(p.cuMemGetHandleForAddressRange(out, a, 4096, dma, 2), INVALID);
        assert_eq!(p.cuMemGetHandleForAddressRange(std::ptr::null_mut(), a, 4096, dma, 0), INVALID);
        assert_eq!(fd, -7, "nothing written");
        // A range that passes the checks (it may run past its allocation, as on the H200)
        // gets no dma-buf: NOT_SUPPORTED, and -1 written, as the H200 answers for a
        // mapping type the device cannot give.
        for (size, flags) in [(1 << 16, 0), (4096, 1), (1 << 17, 0)] {
            fd = -7;
            assert_eq!(p.cuMemGetHandleForAddressRange(out, a, size, dma, flags), CUresult::CUDA_ERROR_NOT_SUPPORTED);
            assert_eq!(fd, -1);
        }
    }
}
