//! Queries a fake driver tends to leave out, answered as the real driver does
//! (docs/driver-facts.md, "Edge cases on the real driver": "Queries that a fake driver
//! tends to leave out all work").

mod common;

use std::ffi::{c_char, c_int, c_void, CStr};

use common::{driver, driver_ptds, new_context, ok};
use cudrv::sys::*;

const INVALID_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

#[test]
fn primary_context_state_and_flags() {
    let d = driver();
    let p = d.p();
    // SAFETY: valid out-pointers throughout.
    unsafe {
        let (mut flags, mut active) = (7u32, 7);
        // Device 0's primary context may be retained by another test of this binary:
        // use the one this test retains and releases alone.
        let mut n = 0;
        ok(p.cuDeviceGetCount(&mut n));
        let mut ctx = std::ptr::null_mut();
        ok(p.cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(p.cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
        assert_eq!((flags, active), (0, 1), "flags 0, active while retained");
        ok(p.cuDevicePrimaryCtxSetFlags(0, CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0));
        ok(p.cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
        assert_eq!(flags, CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0);
        ok(p.cuCtxPushCurrent(ctx));
        let mut f = 0;
        ok(p.cuCtxGetFlags(&mut f));
        assert_eq!(f, CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0 | CUctx_flags::CU_CTX_MAP_HOST.0);
        ok(p.cuDevicePrimaryCtxSetFlags(0, 0));
        ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        ok(p.cuDevicePrimaryCtxRelease(0));
        ok(p.cuDevicePrimaryCtxGetState(0, &mut flags, &mut active));
        assert_eq!(active, 0, "after the last release");
        assert_eq!(p.cuDevicePrimaryCtxGetState(n, &mut flags, &mut active), CUresult::CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(p.cuDevicePrimaryCtxGetState(0, std::ptr::null_mut(), &mut active), INVALID_VALUE);
    }
}

#[test]
fn context_version_flags_limits_and_priorities() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    // SAFETY: valid out-pointers throughout.
    unsafe {
        let mut v = 0;
        ok(p.cuCtxGetApiVersion(ctx, &mut v));
        assert_eq!(v, 3020);
        ok(p.cuCtxGetApiVersion(std::ptr::null_mut(), &mut v));
        let mut flags = 7;
        ok(p.cuCtxGetFlags(&mut flags));
        // driver-facts.md, "Contexts": a created context's flags are its creation flags
        // exactly (0 here); only a primary context has CU_CTX_MAP_HOST added (8).
        assert_eq!(flags, 0);

        let mut value = 0;
        ok(p.cuCtxGetLimit(&mut value, CUlimit::CU_LIMIT_STACK_SIZE));
        assert_eq!(value, 1024);
        ok(p.cuCtxGetLimit(&mut value, CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE));
        assert_eq!(value, 1 << 20);
        ok(p.cuCtxGetLimit(&mut value, CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE));
        assert_eq!(value, 8 << 20);
        ok(p.cuCtxSetLimit(CUlimit::CU_LIMIT_STACK_SIZE, 4096));
        ok(p.cuCtxGetLimit(&mut value, CUlimit::CU_LIMIT_STACK_SIZE));
        assert_eq!(value, 4096);
        // Unknown limit numbers: INVALID_VALUE.
        assert_eq!(p.cuCtxGetLimit(&mut value, CUlimit(999)), INVALID_VALUE);
        assert_eq!(p.cuCtxSetLimit(CUlimit(999), 1), INVALID_VALUE);

        let (mut least, mut greatest) = (7, 7);
        ok(p.cuCtxGetStreamPriorityRange(&mut least, &mut greatest));
        assert_eq!((least, greatest), (0, -5));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn stream_flags_and_priorities() {
    for d in [driver(), driver_ptds()] {
        let p = d.p();
        let ctx = new_context(&d);
        // SAFETY: valid out-pointers; streams from the stand-in.
        unsafe {
            let (mut s, mut flags, mut priority) = (std::ptr::null_mut(), 7u32, 7);
            ok(p.cuStreamCreateWithPriority(&mut s, CUstream_flags::CU_STREAM_NON_BLOCKING.0, -3));
            ok(p.cuStreamGetFlags(s, &mut flags));
            ok(p.cuStreamGetPriority(s, &mut priority));
            assert_eq!((flags, priority), (CUstream_flags::CU_STREAM_NON_BLOCKING.0, -3));
            ok(p.cuStreamDestroy(s));
            // Out of range: clamped.
            ok(p.cuStreamCreateWithPriority(&mut s, 0, -100));
            ok(p.cuStreamGetPriority(s, &mut priority));
            assert_eq!(priority, -5);
            ok(p.cuStreamDestroy(s));
            ok(p.cuStreamCreateWithPriority(&mut s, 0, 9));
            ok(p.cuStreamGetPriority(s, &mut priority));
            assert_eq!(priority, 0);
            ok(p.cuStreamDestroy(s));
            // The NULL stream and CU_STREAM_LEGACY.
            for s in [std::ptr::null_mut(), cudrv_standin::STREAM_LEGACY as usize as CUstream] {
                ok(p.cuStreamGetFlags(s, &mut flags));
                ok(p.cuStreamGetPriority(s, &mut priority));
                assert_eq!((flags, priority), (0, 0));
            }
            ok(p.cuCtxDestroy(ctx));
        }
    }
}

#[test]
fn pci_bus_ids() {
    let d = driver();
    let p = d.p();
    // SAFETY: buffers of the lengths passed.
    unsafe {
        let mut id = [0 as c_char; 32];
        ok(p.cuDeviceGetPCIBusId(id.as_mut_ptr(), 32, 0));
        assert_eq!(CStr::from_ptr(id.as_ptr()).to_str().unwrap(), "0000:00:06.0");
        // The length is respected: 5 bytes, NUL included.
        let mut short = [b'x' as c_char; 8];
        ok(p.cuDeviceGetPCIBusId(short.as_mut_ptr(), 5, 0));
        assert_eq!(CStr::from_ptr(short.as_ptr()).to_str().unwrap(), "0000");
        assert_eq!(short[5], b'x' as c_char);
        let mut dev = 7;
        ok(p.cuDeviceGetByPCIBusId(&mut dev, id.as_ptr()));
        assert_eq!(dev, 0);
        ok(p.cuDeviceGetByPCIBusId(&mut dev, c"00:06.0".as_ptr()));
        assert_eq!(dev, 0);
        assert_eq!(p.cuDeviceGetByPCIBusId(&mut dev, c"0000:42:00.0".as_ptr()), CUresult::CUDA_ERROR_INVALID_DEVICE);
        assert_eq!(p.cuDeviceGetByPCIBusId(&mut dev, c"nonsense".as_ptr()), INVALID_VALUE);
        let mut can = 7;
        ok(p.cuDeviceCanAccessPeer(&mut can, 0, 0));
        assert_eq!(can, 0);
    }
}

#[test]
fn pointer_attributes_and_mapped_host_memory() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    // SAFETY: out-pointers of each attribute's type; addresses from the stand-in.
    unsafe {
        let mut a = 0;
        ok(p.cuMemAlloc(&mut a, 256));
        let mut memory_type = 0u32;
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        ok(p.cuPointerGetAttribute((&mut memory_type as *mut u32).cast(), attr, a + 8));
        assert_eq!(memory_type, 2);
        let mut start = 0u64;
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR;
        ok(p.cuPointerGetAttribute((&mut start as *mut u64).cast(), attr, a + 8));
        assert_eq!(start, a);
        let mut size = 0usize;
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE;
        ok(p.cuPointerGetAttribute((&mut size as *mut usize).cast(), attr, a));
        assert_eq!(size, 256);
        let mut owner: CUcontext = std::ptr::null_mut();
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT;
        ok(p.cuPointerGetAttribute((&mut owner as *mut CUcontext).cast(), attr, a));
        assert_eq!(owner, ctx);
        let mut ordinal = 7 as c_int;
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL;
        ok(p.cuPointerGetAttribute((&mut ordinal as *mut c_int).cast(), attr, a));
        assert_eq!(ordinal, 0);
        // Not the driver's pointer, an unknown attribute: INVALID_VALUE.
        let attr = CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        let out = (&mut memory_type as *mut u32).cast::<c_void>();
        assert_eq!(p.cuPointerGetAttribute(out, attr, 0x1234), INVALID_VALUE);
        assert_eq!(p.cuPointerGetAttribute(out, CUpointer_attribute(999), a), INVALID_VALUE);
        // Several at once; an unknown pointer gives zeros.
        let mut attrs = [CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE];
        let mut data = [out];
        ok(p.cuPointerGetAttributes(1, attrs.as_mut_ptr(), data.as_mut_ptr(), a));
        assert_eq!(memory_type, 2);
        ok(p.cuPointerGetAttributes(1, attrs.as_mut_ptr(), data.as_mut_ptr(), 0x1234));
        assert_eq!(memory_type, 0);

        // Pinned host memory: type 1, mapped at its own address.
        let mut host = std::ptr::null_mut();
        ok(p.cuMemHostAlloc(&mut host, 64, CU_MEMHOSTALLOC_DEVICEMAP));
        ok(p.cuPointerGetAttribute(out, attr, host as usize as u64));
        assert_eq!(memory_type, 1);
        let mut dptr = 0;
        ok(p.cuMemHostGetDevicePointer(&mut dptr, host, 0));
        assert_eq!(dptr, host as usize as u64);
        ok(p.cuMemsetD8(dptr, 5, 64));
        assert_eq!(*host.cast::<u8>().add(63), 5);
        let mut local = [0u8; 4];
        assert_eq!(p.cuMemHostGetDevicePointer(&mut dptr, local.as_mut_ptr().cast(), 0), INVALID_VALUE);
        ok(p.cuMemFreeHost(host));
        ok(p.cuMemFree(a));
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn function_attributes_and_module_globals() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    let image = format!("{}\nkernel empty\nglobal counter 4\n\0", cudrv_standin::FAKE_IMAGE_MAGIC);
    // SAFETY: valid out-pointers and names; handles from the stand-in.
    unsafe {
        let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuModuleLoadData(&mut m, image.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"empty".as_ptr()));
        let mut v = 0;
        ok(p.cuFuncGetAttribute(&mut v, CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
        assert_eq!(v, 1024);
        ok(p.cuFuncGetAttribute(&mut v, CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS, f));
        assert_eq!(v, 4);
        ok(p.cuFuncGetAttribute(&mut v, CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
        assert_eq!(v, 0);
        assert_eq!(p.cuFuncGetAttribute(&mut v, CUfunction_attribute(999), f), INVALID_VALUE);

        let (mut g, mut size) = (0, 0);
        ok(p.cuModuleGetGlobal(&mut g, &mut size, m, c"counter".as_ptr()));
        assert_eq!(size, 4);
        ok(p.cuMemsetD32(g, 9, 1));
        assert_eq!(p.cuModuleGetGlobal(&mut g, &mut size, m, c"missing".as_ptr()), CUresult::CUDA_ERROR_NOT_FOUND);
        ok(p.cuModuleUnload(m));
        assert!(cudrv_standin::ledger().allocation(g).is_none(), "freed with its module");
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn pool_attributes_and_the_current_pool() {
    let d = driver();
    let p = d.p();
    let ctx = new_context(&d);
    // SAFETY: out-pointers of each attribute's type; handles from the stand-in.
    unsafe {
        let mut props: CUmemPoolProps = std::mem::zeroed();
        props.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        let mut pool = std::ptr::null_mut();
        ok(p.cuMemPoolCreate(&mut pool, &props));
        let mut s = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut s, 0));
        let mut a = 0;
        ok(p.cuMemAllocFromPoolAsync(&mut a, 1000, pool, s));
        let get64 = |attr| {
            let mut v = 7u64;
            ok(p.cuMemPoolGetAttribute(pool, attr, (&mut v as *mut u64).cast()));
            v
        };
        assert_eq!(get64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 1000);
        assert_eq!(get64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD), 0);
        ok(p.cuMemFreeAsync(a, s));
        assert_eq!(get64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0);
        assert_eq!(get64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH), 1000);
        let mut zero = 0u64;
        ok(p.cuMemPoolSetAttribute(
            pool,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            (&mut zero as *mut u64).cast(),
        ));
        assert_eq!(get64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH), 0);
        let mut threshold = u64::MAX;
        let attr = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
        ok(p.cuMemPoolSetAttribute(pool, attr, (&mut threshold as *mut u64).cast()));
        assert_eq!(get64(attr), u64::MAX);
        let mut reuse = 7 as c_int;
        let attr = CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC;
        ok(p.cuMemPoolGetAttribute(pool, attr, (&mut reuse as *mut c_int).cast()));
        assert_eq!(reuse, 1);
        assert_eq!(
            p.cuMemPoolGetAttribute(pool, CUmemPool_attribute(999), (&mut zero as *mut u64).cast()),
            INVALID_VALUE
        );

        // The device's current pool: the default one until another is set.
        let (mut current, mut default) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuDeviceGetMemPool(&mut current, 0));
        ok(p.cuDeviceGetDefaultMemPool(&mut default, 0));
        assert_eq!(current, default);
        ok(p.cuDeviceSetMemPool(0, pool));
        ok(p.cuDeviceGetMemPool(&mut current, 0));
        assert_eq!(current, pool);
        ok(p.cuDeviceSetMemPool(0, default));
        ok(p.cuStreamDestroy(s));
        ok(p.cuMemPoolDestroy(pool));

        // An unknown location type: INVALID_VALUE.
        props.location.type_ = CUmemLocationType(999);
        assert_eq!(p.cuMemPoolCreate(&mut pool, &props), INVALID_VALUE);
        ok(p.cuCtxDestroy(ctx));
    }
}

#[test]
fn wide_memsets_in_every_variant() {
    for d in [driver(), driver_ptds()] {
        let p = d.p();
        let ctx = new_context(&d);
        // SAFETY: buffers of the sizes passed; addresses from the stand-in.
        unsafe {
            let mut a = 0;
            ok(p.cuMemAlloc(&mut a, 16));
            ok(p.cuMemsetD16(a, 0x0102, 8));
            let mut out = [0u16; 8];
            ok(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), a, 16));
            assert!(out.iter().all(|&v| v == 0x0102));
            ok(p.cuMemsetD32Async(a, 0x0A0B_0C0D, 4, std::ptr::null_mut()));
            let mut out = [0u32; 4];
            ok(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), a, 16));
            assert!(out.iter().all(|&v| v == 0x0A0B_0C0D));
            ok(p.cuMemFree(a));
            ok(p.cuCtxDestroy(ctx));
        }
    }
}
