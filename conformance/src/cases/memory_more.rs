//! Memory, array and pool entry points of issue 29, pending recording on the H200: a
//! location's current pool and pool access (`pool_access.*`), mipmapped arrays
//! (`mipmap.*`), plane, memory-requirement and sparse queries (`array_query.*`), 2D
//! memsets (`memset_2d.*`), copies to and from arrays by offset and peer 3D copies
//! (`copy_array.*`), retained virtual memory handles, allocation properties and dma-buf
//! handles (`vmm_handle.*`), and `cuPointerSetAttribute` (`pointer_set.*`). The stand-in
//! answers in `standin/src/pool_access.rs`, `mipmap.rs`, `array_query.rs`, `memset_2d.rs`,
//! `copy_array.rs`, `vmm_handle.rs` and `pointer.rs`.

use super::{alloc, case, handle, made, number, number32, sentinel, step, stream, with, Case, Env, Out, UNTOUCHED};
use cudrv::call;
use cudrv::sys::*;

const PINNED: CUmemAllocationType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
const MANAGED: CUmemAllocationType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_MANAGED;
const MIB2: usize = 2 << 20;
const GET_MEM_POOL: &[cudrv::Call] = &[call::cuMemGetMemPool, call::cuMemSetMemPool];

/// A location of `kind` with id `id`.
fn location(kind: CUmemLocationType, id: i32) -> CUmemLocation {
    let mut l = CUmemLocation { type_: kind, ..Default::default() };
    l.__bindgen_anon_1.id = id;
    l
}

fn device(id: i32) -> CUmemLocation {
    location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id)
}

/// A created pool of pinned memory on device 0.
fn pool(e: &Env) -> Result<CUmemoryPool, Out> {
    let props = CUmemPoolProps { allocType: PINNED, location: device(0), ..Default::default() };
    let mut p = std::ptr::null_mut();
    // SAFETY: valid properties and out-pointer.
    made("cuMemPoolCreate", unsafe { e.p.cuMemPoolCreate(&mut p, &props) }, p)
}

/// `cuMemGetMemPool` for a location and type: status, and whether a pool was written.
fn get_mem_pool(e: &Env, mut loc: CUmemLocation, kind: CUmemAllocationType) -> Out {
    let mut p: CUmemoryPool = sentinel();
    // SAFETY: valid out-pointer and location.
    let st = unsafe { e.p.cuMemGetMemPool(&mut p, &mut loc, kind) };
    Out::of(st).eq("pool", handle(p))
}

/// `cuMemPoolGetAccess` of a created pool from `loc`.
fn pool_access(e: &Env, mut loc: CUmemLocation) -> Out {
    let p = with!(pool(e));
    let mut flags = CUmemAccess_flags(UNTOUCHED as u32);
    // SAFETY: valid out-pointer and location; a live pool.
    let st = unsafe { e.p.cuMemPoolGetAccess(&mut flags, p, &mut loc) };
    Out::of(st).eq("flags", number32(flags.0))
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

/// A mipmapped array of floats shaped as `d`, with `levels` asked for.
fn mipmap(e: &Env, d: CUDA_ARRAY3D_DESCRIPTOR, levels: u32) -> Result<CUmipmappedArray, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: valid out-pointer and descriptor.
    made("cuMipmappedArrayCreate", unsafe { e.p.cuMipmappedArrayCreate(&mut m, &d, levels) }, m)
}

/// Level `i` of `m`.
fn level(e: &Env, m: CUmipmappedArray, i: u32) -> Result<CUarray, Out> {
    let mut a = std::ptr::null_mut();
    // SAFETY: valid out-pointer; a live mipmapped array.
    made("cuMipmappedArrayGetLevel", unsafe { e.p.cuMipmappedArrayGetLevel(&mut a, m, i) }, a)
}

/// An array of `width` x `height` (0: 1D) elements of `channels` floats.
fn array(e: &Env, width: usize, height: usize, channels: u32) -> Result<CUarray, Out> {
    let mut a = std::ptr::null_mut();
    let d = CUDA_ARRAY_DESCRIPTOR {
        Width: width,
        Height: height,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: channels,
    };
    // SAFETY: valid out-pointer and descriptor.
    made("cuArrayCreate", unsafe { e.p.cuArrayCreate(&mut a, &d) }, a)
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(7).wrapping_add(3)).collect()
}

/// Reads `n` bytes of device memory.
fn read(e: &Env, d: CUdeviceptr, n: usize) -> Result<Vec<u8>, Out> {
    let mut v = vec![0u8; n];
    // SAFETY: `v` holds `n` bytes.
    made("cuMemcpyDtoH", unsafe { e.p.cuMemcpyDtoH(v.as_mut_ptr().cast(), d, n) }, v)
}

/// 256 bytes of device memory set to 0xee, then `set` run on it (a 2D memset with pitch
/// 64): its status, and whether the first 3 rows hold `want` in their first `row` bytes
/// and 0xee after them and in the fourth row.
fn memset_2d(e: &Env, row: usize, want: &[u8], set: impl Fn(CUdeviceptr) -> CUresult) -> Out {
    let d = with!(alloc(e, 256));
    // SAFETY: 256 bytes of device memory.
    step!(unsafe { e.p.cuMemsetD8(d, 0xee, 256) });
    let st = set(d);
    // SAFETY: plain call.
    step!(unsafe { e.p.cuCtxSynchronize() });
    let b = with!(read(e, d, 256));
    let rows = (0..3).all(|r| b.get(r * 64..r * 64 + row).is_some_and(|s| s.chunks(want.len()).all(|c| c == want)));
    let untouched = |range: std::ops::Range<usize>| b.get(range).is_some_and(|s| s.iter().all(|&x| x == 0xee));
    let gap = (0..3).all(|r| untouched(r * 64 + row..(r + 1) * 64)) && untouched(192..256);
    Out::of(st).eq("rows", rows).eq("rest_untouched", gap)
}

/// A mapped, accessible 2 MiB of virtual memory on device 0: its address and handle.
fn mapped(e: &Env) -> Result<(CUdeviceptr, CUmemGenericAllocationHandle), Out> {
    let prop = CUmemAllocationProp { type_: PINNED, location: device(0), ..Default::default() };
    let mut h = 0;
    // SAFETY: valid out-pointer and properties.
    made("cuMemCreate", unsafe { e.p.cuMemCreate(&mut h, MIB2, &prop, 0) }, ())?;
    let mut va = 0;
    // SAFETY: valid out-pointer.
    made("cuMemAddressReserve", unsafe { e.p.cuMemAddressReserve(&mut va, MIB2, 0, 0, 0) }, ())?;
    // SAFETY: a reserved range and a live handle of its size.
    made("cuMemMap", unsafe { e.p.cuMemMap(va, MIB2, 0, h, 0) }, ())?;
    let rw = CUmemAccessDesc { location: device(0), flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    // SAFETY: one descriptor of a mapped range.
    made("cuMemSetAccess", unsafe { e.p.cuMemSetAccess(va, MIB2, &rw, 1) }, (va, h))
}

/// `cuMemRetainAllocationHandle` of `address`: status and whether it gave `expected`.
fn retain(e: &Env, address: u64, expected: u64) -> Out {
    let mut h = UNTOUCHED;
    // SAFETY: a valid out-pointer; the address is only a number to the driver.
    let st = unsafe { e.p.cuMemRetainAllocationHandle(&mut h, address as usize as *mut _) };
    let got = if h == UNTOUCHED {
        "untouched"
    } else if h == expected {
        "the_mapped_handle"
    } else {
        "other"
    };
    Out::of(st).eq("handle", got)
}

/// `cuMemGetHandleForAddressRange` of a fresh 64 KiB allocation, from `offset`.
fn dma_buf(e: &Env, offset: u64, size: usize, kind: CUmemRangeHandleType, flags: u64) -> Out {
    let d = with!(alloc(e, 1 << 16));
    let mut fd: i32 = -7;
    // SAFETY: a 4-byte out slot (a file descriptor).
    let st = unsafe { e.p.cuMemGetHandleForAddressRange((&raw mut fd).cast(), d + offset, size, kind, flags) };
    Out::of(st).eq(
        "fd",
        if fd == -7 {
            "untouched"
        } else if fd >= 0 {
            "set"
        } else {
            "negative"
        },
    )
}

const DMA_BUF: CUmemRangeHandleType = CUmemRangeHandleType::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD;
const SYNC_MEMOPS: CUpointer_attribute = CUpointer_attribute::CU_POINTER_ATTRIBUTE_SYNC_MEMOPS;

/// A peer 3D copy of 16 x 2 x 2 bytes between two device buffers with the given contexts:
/// its status and whether the data arrived.
fn peer_3d(e: &Env, src_ctx: CUcontext, dst_ctx: CUcontext, s: Option<CUstream>) -> Out {
    let (src, dst) = (with!(alloc(e, 64)), with!(alloc(e, 64)));
    let data = pattern(64);
    // SAFETY: 64 bytes each way.
    step!(unsafe { e.p.cuMemcpyHtoD(src, data.as_ptr().cast(), 64) });
    let c = CUDA_MEMCPY3D_PEER {
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcDevice: src,
        srcContext: src_ctx,
        srcPitch: 16,
        srcHeight: 2,
        dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstDevice: dst,
        dstContext: dst_ctx,
        dstPitch: 16,
        dstHeight: 2,
        WidthInBytes: 16,
        Height: 2,
        Depth: 2,
        ..Default::default()
    };
    // SAFETY: a descriptor of live memory (but for what the case is about).
    let st = unsafe {
        match s {
            None => e.p.cuMemcpy3DPeer(&c),
            Some(s) => e.p.cuMemcpy3DPeerAsync(&c, s),
        }
    };
    // SAFETY: plain call.
    step!(unsafe { e.p.cuCtxSynchronize() });
    Out::of(st).eq("copied", with!(read(e, dst, 64)) == data)
}

pub fn cases() -> Vec<Case> {
    [pool_cases(), mipmap_cases(), memset_cases(), copy_cases(), vmm_cases()].concat()
}

const HOST: CUmemLocationType = CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST;

fn pool_cases() -> Vec<Case> {
    vec![
        case!("pool_access.get_mem_pool_device_pinned", Ctx, since 13000 GET_MEM_POOL, |e| {
            let mut loc = device(0);
            let (mut p, mut current): (CUmemoryPool, CUmemoryPool) = (sentinel(), std::ptr::null_mut());
            let st = e.p.cuMemGetMemPool(&mut p, &mut loc, PINNED);
            step!(e.p.cuDeviceGetMemPool(&mut current, 0));
            Out::of(st).eq("device_current", p == current)
        }),
        case!("pool_access.get_mem_pool_host_pinned", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, location(HOST, 0), PINNED)
        }),
        case!("pool_access.get_mem_pool_device_managed", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, device(0), MANAGED)
        }),
        case!("pool_access.get_mem_pool_none_managed", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, location(CUmemLocationType::CU_MEM_LOCATION_TYPE_NONE, 0), MANAGED)
        }),
        case!("pool_access.get_mem_pool_none_pinned", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, location(CUmemLocationType::CU_MEM_LOCATION_TYPE_NONE, 0), PINNED)
        }),
        case!("pool_access.get_mem_pool_invalid_type", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, device(0), CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID)
        }),
        case!("pool_access.get_mem_pool_bad_device", Ctx, since 13000 GET_MEM_POOL, |e| {
            get_mem_pool(e, device(99), PINNED)
        }),
        case!("pool_access.get_mem_pool_null_location", Ctx, since 13000 GET_MEM_POOL, |e| {
            let mut p: CUmemoryPool = sentinel();
            Out::of(e.p.cuMemGetMemPool(&mut p, std::ptr::null_mut(), PINNED)).eq("pool", handle(p))
        }),
        case!("pool_access.set_mem_pool_device_pinned", Ctx, since 13000 GET_MEM_POOL, |e| {
            let p = with!(pool(e));
            let mut loc = device(0);
            let st = e.p.cuMemSetMemPool(&mut loc, PINNED, p);
            let mut current = std::ptr::null_mut();
            step!(e.p.cuDeviceGetMemPool(&mut current, 0));
            Out::of(st).eq("device_current_is_it", current == p)
        }),
        case!("pool_access.set_mem_pool_host_location", Ctx, since 13000 GET_MEM_POOL, |e| {
            let p = with!(pool(e));
            let mut loc = location(HOST, 0);
            Out::of(e.p.cuMemSetMemPool(&mut loc, PINNED, p))
        }),
        case!("pool_access.set_mem_pool_managed_type", Ctx, since 13000 GET_MEM_POOL, |e| {
            let p = with!(pool(e));
            let mut loc = device(0);
            Out::of(e.p.cuMemSetMemPool(&mut loc, MANAGED, p))
        }),
        case!("pool_access.set_mem_pool_destroyed", Ctx, since 13000 GET_MEM_POOL, |e| {
            let p = with!(pool(e));
            step!(e.p.cuMemPoolDestroy(p));
            let mut loc = device(0);
            Out::of(e.p.cuMemSetMemPool(&mut loc, PINNED, p))
        }),
        case!("pool_access.get_access_own_device", Ctx, |e| { pool_access(e, device(0)) }),
        case!("pool_access.get_access_bad_device", Ctx, |e| { pool_access(e, device(99)) }),
        case!("pool_access.get_access_host_location", Ctx, |e| { pool_access(e, location(HOST, 0)) }),
        case!("pool_access.get_access_default_pool", Ctx, |e| {
            let mut p = std::ptr::null_mut();
            step!(e.p.cuDeviceGetDefaultMemPool(&mut p, 0));
            let mut flags = CUmemAccess_flags(UNTOUCHED as u32);
            let mut loc = device(0);
            let st = e.p.cuMemPoolGetAccess(&mut flags, p, &mut loc);
            Out::of(st).eq("flags", number32(flags.0))
        }),
        case!("pool_access.get_access_null_flags", Ctx, |e| {
            let p = with!(pool(e));
            let mut loc = device(0);
            Out::of(e.p.cuMemPoolGetAccess(std::ptr::null_mut(), p, &mut loc))
        }),
        case!("pool_access.get_access_destroyed_pool", Ctx, |e| {
            let p = with!(pool(e));
            step!(e.p.cuMemPoolDestroy(p));
            let mut flags = CUmemAccess_flags(UNTOUCHED as u32);
            let mut loc = device(0);
            let st = e.p.cuMemPoolGetAccess(&mut flags, p, &mut loc);
            Out::of(st).eq("flags", number32(flags.0))
        }),
        case!("pool_access.set_access_own_device_none", Ctx, |e| {
            let p = with!(pool(e));
            let d = CUmemAccessDesc { location: device(0), flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE };
            let st = e.p.cuMemPoolSetAccess(p, &d, 1);
            let mut flags = CUmemAccess_flags(UNTOUCHED as u32);
            let mut loc = device(0);
            step!(e.p.cuMemPoolGetAccess(&mut flags, p, &mut loc));
            Out::of(st).eq("flags_after", number32(flags.0))
        }),
    ]
}

fn mipmap_cases() -> Vec<Case> {
    vec![
        case!("mipmap.create_2d", Ctx, |e| {
            let mut m: CUmipmappedArray = sentinel();
            Out::of(e.p.cuMipmappedArrayCreate(&mut m, &desc3d(64, 32, 0, 0), 3)).eq("mipmap", handle(m))
        }),
        case!("mipmap.create_no_context", Init, |e| {
            let mut m: CUmipmappedArray = sentinel();
            Out::of(e.p.cuMipmappedArrayCreate(&mut m, &desc3d(64, 32, 0, 0), 3)).eq("mipmap", handle(m))
        }),
        case!("mipmap.create_null_desc", Ctx, |e| {
            let mut m: CUmipmappedArray = sentinel();
            Out::of(e.p.cuMipmappedArrayCreate(&mut m, std::ptr::null(), 3)).eq("mipmap", handle(m))
        }),
        case!("mipmap.create_width_zero", Ctx, |e| {
            let mut m: CUmipmappedArray = sentinel();
            Out::of(e.p.cuMipmappedArrayCreate(&mut m, &desc3d(0, 32, 0, 0), 3)).eq("mipmap", handle(m))
        }),
        case!("mipmap.create_zero_levels", Ctx, |e| {
            let mut m: CUmipmappedArray = sentinel();
            let st = e.p.cuMipmappedArrayCreate(&mut m, &desc3d(64, 32, 0, 0), 0);
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("mipmap", handle(m));
            }
            let mut a: CUarray = sentinel();
            let (l0, l1) = (e.p.cuMipmappedArrayGetLevel(&mut a, m, 0), e.p.cuMipmappedArrayGetLevel(&mut a, m, 1));
            Out::of(st).eq("level0", l0).eq("level1", l1)
        }),
        case!("mipmap.level_past_clamp", Ctx, |e| {
            // 64 wide: levels 0..=6 at most; 99 asked for.
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 99));
            let mut a: CUarray = sentinel();
            let last = e.p.cuMipmappedArrayGetLevel(&mut a, m, 6);
            let mut past: CUarray = sentinel();
            let st = e.p.cuMipmappedArrayGetLevel(&mut past, m, 7);
            Out::of(st).eq("level6", last).eq("level7", handle(past))
        }),
        case!("mipmap.level_descriptor", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 4));
            let a = with!(level(e, m, 2));
            let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
            let st = e.p.cuArray3DGetDescriptor(&mut d, a);
            Out::of(st).eq("width", d.Width).eq("height", d.Height).eq("depth", d.Depth).eq("flags", d.Flags)
        }),
        case!("mipmap.layered_level_descriptor", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(8, 8, 3, CUDA_ARRAY3D_LAYERED), 2));
            let a = with!(level(e, m, 1));
            let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
            let st = e.p.cuArray3DGetDescriptor(&mut d, a);
            Out::of(st).eq("width", d.Width).eq("height", d.Height).eq("depth", d.Depth).eq("flags", d.Flags)
        }),
        case!("mipmap.level_round_trip", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 4));
            let a = with!(level(e, m, 1));
            let data = pattern(128 * 16);
            let up = CUDA_MEMCPY2D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                srcHost: data.as_ptr().cast(),
                srcPitch: 128,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                dstArray: a,
                WidthInBytes: 128,
                Height: 16,
                ..Default::default()
            };
            step!(e.p.cuMemcpy2D(&up));
            let mut back = vec![0u8; data.len()];
            let down = CUDA_MEMCPY2D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                srcArray: a,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                dstHost: back.as_mut_ptr().cast(),
                dstPitch: 128,
                WidthInBytes: 128,
                Height: 16,
                ..Default::default()
            };
            Out::of(e.p.cuMemcpy2D(&down)).eq("same", back == data)
        }),
        case!("mipmap.destroy_level_array", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 2));
            let a = with!(level(e, m, 1));
            Out::of(e.p.cuArrayDestroy(a))
        }),
        case!("mipmap.destroy", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 2));
            Out::of(e.p.cuMipmappedArrayDestroy(m))
        }),
        case!("mipmap.get_level_after_destroy", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 2));
            step!(e.p.cuMipmappedArrayDestroy(m));
            let mut a: CUarray = sentinel();
            Out::of(e.p.cuMipmappedArrayGetLevel(&mut a, m, 0)).eq("array", handle(a))
        }),
        case!("mipmap.get_level_null_out", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(64, 32, 0, 0), 2));
            Out::of(e.p.cuMipmappedArrayGetLevel(std::ptr::null_mut(), m, 0))
        }),
        case!("array_query.plane_non_planar", Ctx, |e| {
            let a = with!(array(e, 16, 16, 1));
            let mut p: CUarray = sentinel();
            Out::of(e.p.cuArrayGetPlane(&mut p, a, 0)).eq("plane", handle(p))
        }),
        case!("array_query.memory_requirements_not_deferred", Ctx, |e| {
            let a = with!(array(e, 16, 16, 1));
            let mut r = CUDA_ARRAY_MEMORY_REQUIREMENTS { size: UNTOUCHED as usize, ..Default::default() };
            Out::of(e.p.cuArrayGetMemoryRequirements(&mut r, a, e.dev)).eq("size", number(r.size as u64))
        }),
        case!("array_query.memory_requirements_bad_device", Ctx, |e| {
            let a = with!(array(e, 16, 16, 1));
            let mut r = CUDA_ARRAY_MEMORY_REQUIREMENTS::default();
            Out::of(e.p.cuArrayGetMemoryRequirements(&mut r, a, 99))
        }),
        case!("array_query.mipmap_memory_requirements_not_deferred", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(16, 16, 0, 0), 2));
            let mut r = CUDA_ARRAY_MEMORY_REQUIREMENTS { size: UNTOUCHED as usize, ..Default::default() };
            Out::of(e.p.cuMipmappedArrayGetMemoryRequirements(&mut r, m, e.dev)).eq("size", number(r.size as u64))
        }),
        case!("array_query.sparse_properties_not_sparse", Ctx, |e| {
            let a = with!(array(e, 16, 16, 1));
            let mut s = CUDA_ARRAY_SPARSE_PROPERTIES { flags: UNTOUCHED as u32, ..Default::default() };
            Out::of(e.p.cuArrayGetSparseProperties(&mut s, a)).eq("flags", number32(s.flags))
        }),
        case!("array_query.mipmap_sparse_properties_not_sparse", Ctx, |e| {
            let m = with!(mipmap(e, desc3d(16, 16, 0, 0), 2));
            let mut s = CUDA_ARRAY_SPARSE_PROPERTIES { flags: UNTOUCHED as u32, ..Default::default() };
            Out::of(e.p.cuMipmappedArrayGetSparseProperties(&mut s, m)).eq("flags", number32(s.flags))
        }),
        case!("array_query.sparse_properties_destroyed_array", Ctx, |e| {
            let a = with!(array(e, 16, 16, 1));
            step!(e.p.cuArrayDestroy(a));
            let mut s = CUDA_ARRAY_SPARSE_PROPERTIES::default();
            Out::of(e.p.cuArrayGetSparseProperties(&mut s, a))
        }),
    ]
}

fn memset_cases() -> Vec<Case> {
    vec![
        case!("memset_2d.d8", Ctx, |e| {
            // SAFETY: 3 rows of 10 bytes, 64 apart, in 256 bytes.
            memset_2d(e, 10, &[0x11], |d| unsafe { e.p.cuMemsetD2D8(d, 64, 0x11, 10, 3) })
        }),
        case!("memset_2d.d16", Ctx, |e| {
            let v = 0xbeef_u16.to_ne_bytes();
            // SAFETY: 3 rows of 8 values, 64 bytes apart, in 256 bytes.
            memset_2d(e, 16, &v, |d| unsafe { e.p.cuMemsetD2D16(d, 64, 0xbeef, 8, 3) })
        }),
        case!("memset_2d.d32_async", Ctx, |e| {
            let s = with!(stream(e));
            let v = 0x0102_0304_u32.to_ne_bytes();
            // SAFETY: 3 rows of 4 values, 64 bytes apart, in 256 bytes; a live stream.
            memset_2d(e, 16, &v, |d| unsafe { e.p.cuMemsetD2D32Async(d, 64, 0x0102_0304, 4, 3, s) })
        }),
        case!("memset_2d.d8_async_null_stream", Ctx, |e| {
            // SAFETY: as memset_2d.d8, on the NULL stream.
            memset_2d(e, 10, &[0x22], |d| unsafe { e.p.cuMemsetD2D8Async(d, 64, 0x22, 10, 3, std::ptr::null_mut()) })
        }),
        case!("memset_2d.pitch_below_row", Ctx, |e| {
            // SAFETY: rows of 10 bytes 8 apart, inside 256 bytes.
            memset_2d(e, 10, &[0x33], |d| unsafe { e.p.cuMemsetD2D8(d, 8, 0x33, 10, 3) })
        }),
        case!("memset_2d.pitch_below_row_one_row", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D8(d, 8, 0x33, 10, 1))
        }),
        case!("memset_2d.pitch_misaligned", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D16(d, 63, 0x33, 2, 2))
        }),
        case!("memset_2d.address_misaligned", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D32(d + 2, 64, 0x33, 2, 2))
        }),
        case!("memset_2d.past_allocation", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D8(d, 64, 0x33, 10, 5))
        }),
        case!("memset_2d.zero_width", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D8(d, 64, 0x33, 0, 3))
        }),
        case!("memset_2d.zero_height", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D32(d, 64, 0x33, 4, 0))
        }),
        case!("memset_2d.pitch_zero_one_row", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuMemsetD2D8(d, 0, 0x33, 10, 1))
        }),
        case!("memset_2d.no_context", Init, |e| { Out::of(e.p.cuMemsetD2D8(0x1000, 64, 0x33, 10, 3)) }),
    ]
}

fn copy_cases() -> Vec<Case> {
    vec![
        case!("copy_array.htoa_atoh", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            let data = pattern(256);
            step!(e.p.cuMemcpyHtoA(a, 0, data.as_ptr().cast(), 256));
            let mut back = vec![0u8; 64];
            let st = e.p.cuMemcpyAtoH(back.as_mut_ptr().cast(), a, 100, 64);
            Out::of(st).eq("same", data.get(100..164) == Some(&back[..]))
        }),
        case!("copy_array.async_forms", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            let s = with!(stream(e));
            let data = pattern(256);
            step!(e.p.cuMemcpyHtoAAsync(a, 0, data.as_ptr().cast(), 256, s));
            let mut back = vec![0u8; 256];
            let st = e.p.cuMemcpyAtoHAsync(back.as_mut_ptr().cast(), a, 0, 256, s);
            step!(e.p.cuStreamSynchronize(s));
            Out::of(st).eq("same", back == data)
        }),
        case!("copy_array.dtoa_atod", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            let (src, dst) = (with!(alloc(e, 256)), with!(alloc(e, 256)));
            let data = pattern(256);
            step!(e.p.cuMemcpyHtoD(src, data.as_ptr().cast(), 256));
            step!(e.p.cuMemcpyDtoA(a, 16, src, 128));
            let st = e.p.cuMemcpyAtoD(dst, a, 16, 128);
            Out::of(st).eq("same", data.get(..128) == Some(&with!(read(e, dst, 128))[..]))
        }),
        case!("copy_array.atoa", Ctx, |e| {
            let (a, b) = (with!(array(e, 64, 0, 1)), with!(array(e, 64, 0, 1)));
            let data = pattern(256);
            step!(e.p.cuMemcpyHtoA(a, 0, data.as_ptr().cast(), 256));
            let st = e.p.cuMemcpyAtoA(b, 128, a, 0, 128);
            let mut back = vec![0u8; 128];
            step!(e.p.cuMemcpyAtoH(back.as_mut_ptr().cast(), b, 128, 128));
            Out::of(st).eq("same", data.get(..128) == Some(&back[..]))
        }),
        case!("copy_array.atoa_element_sizes_differ", Ctx, |e| {
            let (a, b) = (with!(array(e, 64, 0, 1)), with!(array(e, 64, 0, 2)));
            Out::of(e.p.cuMemcpyAtoA(b, 0, a, 0, 64))
        }),
        case!("copy_array.atoa_count_not_multiple", Ctx, |e| {
            let (a, b) = (with!(array(e, 64, 0, 1)), with!(array(e, 64, 0, 1)));
            Out::of(e.p.cuMemcpyAtoA(b, 0, a, 0, 6))
        }),
        case!("copy_array.htoa_past_end", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            let data = pattern(256);
            Out::of(e.p.cuMemcpyHtoA(a, 200, data.as_ptr().cast(), 64))
        }),
        case!("copy_array.htoa_past_first_row_2d", Ctx, |e| {
            // A 16 x 4 float array: 64-byte rows; 128 bytes from offset 0.
            let a = with!(array(e, 16, 4, 1));
            let data = pattern(256);
            let st = e.p.cuMemcpyHtoA(a, 0, data.as_ptr().cast(), 128);
            let mut back = vec![0u8; 128];
            let read_back = e.p.cuMemcpyAtoH(back.as_mut_ptr().cast(), a, 0, 128);
            Out::of(st).eq("read_back", read_back).eq("same", data.get(..128) == Some(&back[..]))
        }),
        case!("copy_array.htoa_null_host", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            Out::of(e.p.cuMemcpyHtoA(a, 0, std::ptr::null(), 16))
        }),
        case!("copy_array.htoa_destroyed_array", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            step!(e.p.cuArrayDestroy(a));
            let data = pattern(16);
            Out::of(e.p.cuMemcpyHtoA(a, 0, data.as_ptr().cast(), 16))
        }),
        case!("copy_array.atoh_zero_bytes", Ctx, |e| {
            let a = with!(array(e, 64, 0, 1));
            let mut back = [0u8; 4];
            Out::of(e.p.cuMemcpyAtoH(back.as_mut_ptr().cast(), a, 0, 0))
        }),
        case!("copy_array.peer_3d_same_context", Ctx, |e| { peer_3d(e, e.ctx, e.ctx, None) }),
        case!("copy_array.peer_3d_async", Ctx, |e| {
            let s = with!(stream(e));
            peer_3d(e, e.ctx, e.ctx, Some(s))
        }),
        case!("copy_array.peer_3d_null_contexts", Ctx, |e| {
            peer_3d(e, std::ptr::null_mut(), std::ptr::null_mut(), None)
        }),
        case!("copy_array.peer_3d_null", Ctx, |e| { Out::of(e.p.cuMemcpy3DPeer(std::ptr::null())) }),
    ]
}

fn vmm_cases() -> Vec<Case> {
    vec![
        case!("vmm_handle.retain_mapped", Ctx, |e| {
            let (va, h) = with!(mapped(e));
            retain(e, va, h)
        }),
        case!("vmm_handle.retain_interior", Ctx, |e| {
            let (va, h) = with!(mapped(e));
            retain(e, va + 4096, h)
        }),
        case!("vmm_handle.retain_unmapped", Ctx, |e| {
            let mut va = 0;
            step!(e.p.cuMemAddressReserve(&mut va, MIB2, 0, 0, 0));
            retain(e, va, 0)
        }),
        case!("vmm_handle.retain_mem_alloc", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            retain(e, d, 0)
        }),
        case!("vmm_handle.release_retained_twice", Ctx, |e| {
            let (va, h) = with!(mapped(e));
            let mut got = 0;
            step!(e.p.cuMemRetainAllocationHandle(&mut got, va as usize as *mut _));
            let (first, second) = (e.p.cuMemRelease(h), e.p.cuMemRelease(h));
            Out::of(e.p.cuMemRelease(h)).eq("first", first).eq("second", second)
        }),
        case!("vmm_handle.retain_after_release", Ctx, |e| {
            let (va, h) = with!(mapped(e));
            step!(e.p.cuMemRelease(h));
            retain(e, va, h)
        }),
        case!("vmm_handle.properties", Ctx, |e| {
            let (_, h) = with!(mapped(e));
            let mut p = CUmemAllocationProp::default();
            let st = e.p.cuMemGetAllocationPropertiesFromHandle(&mut p, h);
            Out::of(st)
                .eq("type", p.type_.0)
                .eq("handle_types", p.requestedHandleTypes.0)
                .eq("location_type", p.location.type_.0)
                .eq("location_id", p.location.__bindgen_anon_1.id)
        }),
        case!("vmm_handle.properties_released", Ctx, |e| {
            let (_, h) = with!(mapped(e));
            step!(e.p.cuMemRelease(h));
            let mut p = CUmemAllocationProp::default();
            Out::of(e.p.cuMemGetAllocationPropertiesFromHandle(&mut p, h))
        }),
        case!("vmm_handle.properties_null", Ctx, |e| {
            let (_, h) = with!(mapped(e));
            Out::of(e.p.cuMemGetAllocationPropertiesFromHandle(std::ptr::null_mut(), h))
        }),
        case!("vmm_handle.dma_buf", Ctx, |e| { dma_buf(e, 0, 1 << 16, DMA_BUF, 0) }),
        case!("vmm_handle.dma_buf_pcie", Ctx, |e| { dma_buf(e, 0, 4096, DMA_BUF, 1) }),
        case!("vmm_handle.dma_buf_unaligned", Ctx, |e| { dma_buf(e, 1, 4096, DMA_BUF, 0) }),
        case!("vmm_handle.dma_buf_size_unaligned", Ctx, |e| { dma_buf(e, 0, 100, DMA_BUF, 0) }),
        case!("vmm_handle.dma_buf_past_allocation", Ctx, |e| { dma_buf(e, 0, 1 << 17, DMA_BUF, 0) }),
        case!("vmm_handle.dma_buf_bad_type", Ctx, |e| { dma_buf(e, 0, 4096, CUmemRangeHandleType(7), 0) }),
        case!("vmm_handle.dma_buf_bad_flags", Ctx, |e| { dma_buf(e, 0, 4096, DMA_BUF, 2) }),
        case!("vmm_handle.dma_buf_null", Ctx, |e| {
            let d = with!(alloc(e, 1 << 16));
            Out::of(e.p.cuMemGetHandleForAddressRange(std::ptr::null_mut(), d, 4096, DMA_BUF, 0))
        }),
        case!("pointer_set.sync_memops", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let one: u32 = 1;
            let st = e.p.cuPointerSetAttribute((&raw const one).cast(), SYNC_MEMOPS, d + 16);
            let mut v: u32 = UNTOUCHED as u32;
            step!(e.p.cuPointerGetAttribute((&raw mut v).cast(), SYNC_MEMOPS, d));
            Out::of(st).eq("value", number32(v))
        }),
        case!("pointer_set.sync_memops_default", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let mut v: u32 = UNTOUCHED as u32;
            Out::of(e.p.cuPointerGetAttribute((&raw mut v).cast(), SYNC_MEMOPS, d)).eq("value", number32(v))
        }),
        case!("pointer_set.sync_memops_pinned_host", Ctx, |e| {
            let mut host = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut host, 64));
            let one: u32 = 1;
            Out::of(e.p.cuPointerSetAttribute((&raw const one).cast(), SYNC_MEMOPS, host as usize as u64))
        }),
        case!("pointer_set.sync_memops_unknown_pointer", Ctx, |e| {
            let one: u32 = 1;
            Out::of(e.p.cuPointerSetAttribute((&raw const one).cast(), SYNC_MEMOPS, 0x1234))
        }),
        case!("pointer_set.other_attribute", Ctx, |e| {
            let d = with!(alloc(e, 256));
            let one: u32 = 1;
            let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
            Out::of(e.p.cuPointerSetAttribute((&raw const one).cast(), attr, d))
        }),
        case!("pointer_set.null_value", Ctx, |e| {
            let d = with!(alloc(e, 256));
            Out::of(e.p.cuPointerSetAttribute(std::ptr::null(), SYNC_MEMOPS, d))
        }),
    ]
}
