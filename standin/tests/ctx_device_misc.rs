//! Small context and device entries (`ctx_device_misc.rs`, `coredump_logs.rs`): context
//! and green context IDs, context flags, execution affinity, the deprecated device queries,
//! atomic capabilities, RDMA flushes, coredump attributes, the error log and asynchronous
//! notifications. Every test of this binary sets two devices.

mod common;

use std::ffi::{c_char, c_void, CStr};

use common::{driver, new_context, ok};
use cudrv::sys::*;
use cudrv::Driver;
use cudrv_standin::set_device_count;

const INVALID_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const INVALID_DEVICE: CUresult = CUresult::CUDA_ERROR_INVALID_DEVICE;

/// A 13.5 stand-in with two devices.
fn two_devices() -> Driver {
    assert!(set_device_count(2));
    driver()
}

/// A green context of at least `min` SMs on device 0.
fn green(d: &Driver, min: u32) -> CUgreenCtx {
    let p = d.p();
    // SAFETY: valid pointers throughout; one result slot.
    unsafe {
        let mut all = CUdevResource::default();
        ok(p.cuDeviceGetDevResource(0, &mut all, CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM));
        let (mut group, mut n) = (CUdevResource::default(), 1);
        ok(p.cuDevSmResourceSplitByCount(&mut group, &mut n, &all, std::ptr::null_mut(), 0, min));
        let mut desc: CUdevResourceDesc = std::ptr::null_mut();
        ok(p.cuDevResourceGenerateDesc(&mut desc, &mut group, 1));
        let mut g: CUgreenCtx = std::ptr::null_mut();
        ok(p.cuGreenCtxCreate(&mut g, desc, 0, CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0));
        g
    }
}

#[test]
fn context_ids_are_distinct_and_stable_and_a_green_context_has_its_contexts() {
    let d = two_devices();
    let p = d.p();
    let a = new_context(&d);
    let b = new_context(&d);
    // SAFETY: valid out-pointers; contexts of the test.
    unsafe {
        let (mut ia, mut ib, mut cur) = (0u64, 0u64, 0u64);
        ok(p.cuCtxGetId(a, &mut ia));
        ok(p.cuCtxGetId(b, &mut ib));
        ok(p.cuCtxGetId(std::ptr::null_mut(), &mut cur));
        assert_ne!(ia, ib);
        assert_eq!(cur, ib, "NULL is the current context (b, pushed last)");
        assert_eq!(p.cuCtxGetId(a, std::ptr::null_mut()), INVALID_VALUE);
        ok(p.cuCtxDestroy(a));
        let mut after = 7u64;
        assert_eq!(p.cuCtxGetId(a, &mut after), CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        assert_eq!(after, 7, "nothing written on error");

        let g = green(&d, 8);
        let (mut gid, mut cid) = (0u64, 0u64);
        ok(p.cuGreenCtxGetId(g, &mut gid));
        let mut ctx = std::ptr::null_mut();
        ok(p.cuCtxFromGreenCtx(&mut ctx, g));
        ok(p.cuCtxGetId(ctx, &mut cid));
        assert_eq!(gid, cid);
        assert_ne!(gid, ib);
        assert_eq!(p.cuGreenCtxGetId(g, std::ptr::null_mut()), INVALID_VALUE);
        // As the driver answered (ctx_misc.green_id_null_green).
        assert_eq!(p.cuGreenCtxGetId(std::ptr::null_mut(), &mut gid), CUresult::CUDA_ERROR_INVALID_CONTEXT);

        // Execution affinity: a green context's context has none (INVALID_CONTEXT, as the
        // driver answered: ctx_misc.exec_affinity_green), then the whole device's.
        ok(p.cuCtxPushCurrent(ctx));
        let mut param: CUexecAffinityParam = std::mem::zeroed();
        assert_eq!(
            p.cuCtxGetExecAffinity(&mut param, CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT),
            CUresult::CUDA_ERROR_INVALID_CONTEXT
        );
        assert_eq!(param.param.smCount.val, 0, "nothing written");
        ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        ok(p.cuCtxGetExecAffinity(&mut param, CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT));
        assert_eq!(param.type_, CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT);
        assert_eq!(param.param.smCount.val, 132);
        assert_eq!(
            p.cuCtxGetExecAffinity(&mut param, CUexecAffinityType(1)),
            CUresult::CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY
        );
        assert_eq!(
            p.cuCtxGetExecAffinity(std::ptr::null_mut(), CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT),
            INVALID_VALUE
        );
        ok(p.cuGreenCtxDestroy(g));
        ok(p.cuCtxDestroy(b));
    }
}

#[test]
fn set_flags_replaces_what_get_flags_reports() {
    let d = two_devices();
    let p = d.p();
    let ctx = new_context(&d);
    let spin = CUctx_flags::CU_CTX_SCHED_SPIN.0;
    let sync = CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC.0 | CUctx_flags::CU_CTX_SYNC_MEMOPS.0;
    // SAFETY: valid out-pointers; contexts of the test.
    unsafe {
        let mut f = 77;
        ok(p.cuCtxSetFlags(spin));
        ok(p.cuCtxGetFlags(&mut f));
        assert_eq!(f, spin);
        ok(p.cuCtxSetFlags(sync));
        ok(p.cuCtxGetFlags(&mut f));
        assert_eq!(f, sync);
        assert_eq!(p.cuCtxSetFlags(0x1000), INVALID_VALUE);
        ok(p.cuCtxGetFlags(&mut f));
        assert_eq!(f, sync, "a refused setting changes nothing");
        ok(p.cuCtxResetPersistingL2Cache());
        ok(p.cuFlushGPUDirectRDMAWrites(
            CUflushGPUDirectRDMAWritesTarget::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
            CUflushGPUDirectRDMAWritesScope::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER,
        ));
        assert_eq!(
            p.cuFlushGPUDirectRDMAWrites(
                CUflushGPUDirectRDMAWritesTarget::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                CUflushGPUDirectRDMAWritesScope(7),
            ),
            INVALID_VALUE
        );
        ok(p.cuCtxDestroy(ctx));
        // No current context now.
        assert_eq!(p.cuCtxSetFlags(spin), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(p.cuCtxResetPersistingL2Cache(), CUresult::CUDA_ERROR_INVALID_CONTEXT);

        // A primary context reports its new flags (and MAP_HOST, always); its device's
        // primary state keeps its own (as the driver answered: ctx_misc.set_flags_spin_primary).
        let mut primary = std::ptr::null_mut();
        ok(p.cuDevicePrimaryCtxRetain(&mut primary, 1));
        ok(p.cuCtxPushCurrent(primary));
        ok(p.cuCtxSetFlags(spin));
        ok(p.cuCtxGetFlags(&mut f));
        assert_eq!(f, spin | CUctx_flags::CU_CTX_MAP_HOST.0);
        let mut active = 0;
        ok(p.cuDevicePrimaryCtxGetState(1, &mut f, &mut active));
        assert_eq!(f, 0);
        // Two scheduling flags: refused (ctx_misc.set_flags_two_sched).
        assert_eq!(p.cuCtxSetFlags(spin | CUctx_flags::CU_CTX_SCHED_YIELD.0), INVALID_VALUE);
        ok(p.cuCtxSetFlags(0));
        ok(p.cuCtxPopCurrent(std::ptr::null_mut()));
        ok(p.cuDevicePrimaryCtxRelease(1));
    }
}

#[test]
fn deprecated_device_queries_read_the_attribute_table() {
    let d = two_devices();
    let p = d.p();
    // SAFETY: valid out-pointers.
    unsafe {
        let (mut major, mut minor) = (0, 0);
        ok(p.cuDeviceComputeCapability(&mut major, &mut minor, 0));
        let (mut amajor, mut aminor) = (0, 0);
        ok(p.cuDeviceGetAttribute(&mut amajor, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
        ok(p.cuDeviceGetAttribute(&mut aminor, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0));
        assert_eq!((major, minor), (amajor, aminor));
        assert_eq!((major, minor), (9, 0));
        assert_eq!(p.cuDeviceComputeCapability(&mut major, &mut minor, 2), INVALID_DEVICE);
        assert_eq!(p.cuDeviceComputeCapability(std::ptr::null_mut(), &mut minor, 0), INVALID_VALUE);

        let mut prop: CUdevprop = std::mem::zeroed();
        ok(p.cuDeviceGetProperties(&mut prop, 1));
        assert_eq!(prop.maxThreadsPerBlock, 1024);
        assert_eq!(prop.maxThreadsDim, [1024, 1024, 64]);
        assert_eq!(prop.maxGridSize, [i32::MAX, 65535, 65535]);
        assert_eq!((prop.sharedMemPerBlock, prop.totalConstantMemory), (48 << 10, 64 << 10));
        assert_eq!((prop.SIMDWidth, prop.regsPerBlock, prop.textureAlign), (32, 65536, 512));
        assert_eq!(prop.clockRate, 1_980_000);
        assert_eq!(prop.memPitch, i32::MAX);
        assert_eq!(p.cuDeviceGetProperties(std::ptr::null_mut(), 0), INVALID_VALUE);
        assert_eq!(p.cuDeviceGetProperties(&mut prop, -1), INVALID_DEVICE);

        let mut support = 7;
        ok(p.cuDeviceGetExecAffinitySupport(&mut support, CUexecAffinityType::CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
        assert_eq!(support, 0, "an H200 without MPS");
        // An unknown type reads 0 too (device_misc.exec_affinity_support_bad_type).
        support = 7;
        ok(p.cuDeviceGetExecAffinitySupport(&mut support, CUexecAffinityType(1), 0));
        assert_eq!(support, 0);

        let mut width = 0usize;
        // 2^30 elements, at most 4 GiB (device_misc.texture1d_linear_max_width_*).
        for (format, channels, want) in [
            (CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, 4, 1 << 30),
            (CUarray_format::CU_AD_FORMAT_FLOAT, 2, 1 << 29),
            (CUarray_format::CU_AD_FORMAT_FLOAT, 4, 1 << 28),
        ] {
            ok(p.cuDeviceGetTexture1DLinearMaxWidth(&mut width, format, channels, 0));
            assert_eq!(width, want);
        }
        let f = CUarray_format::CU_AD_FORMAT_FLOAT;
        assert_eq!(p.cuDeviceGetTexture1DLinearMaxWidth(&mut width, f, 3, 0), INVALID_VALUE);
        assert_eq!(p.cuDeviceGetTexture1DLinearMaxWidth(&mut width, CUarray_format(0x77), 1, 0), INVALID_VALUE);

        let mut luid = [0 as c_char; 8];
        let mut mask = 0u32;
        assert_eq!(p.cuDeviceGetLuid(luid.as_mut_ptr(), &mut mask, 0), CUresult::CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(p.cuDeviceGetLuid(luid.as_mut_ptr(), &mut mask, 5), INVALID_DEVICE);
    }
}

#[test]
fn atomic_capabilities_none_with_the_host_all_between_devices() {
    let d = two_devices();
    let p = d.p();
    let ops = [CUatomicOperation::CU_ATOMIC_OPERATION_INTEGER_ADD, CUatomicOperation::CU_ATOMIC_OPERATION_FLOAT_ADD];
    let scalar32 = CUatomicOperationCapability::CU_ATOMIC_CAPABILITY_SCALAR_32.0;
    // SAFETY: arrays of two elements, passed with count 2 (or less).
    unsafe {
        let mut caps = [7u32; 2];
        ok(p.cuDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 2, 0));
        assert_eq!(caps, [0, 0]);
        ok(p.cuDeviceGetP2PAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 2, 0, 1));
        assert!(caps.iter().all(|&c| c & scalar32 != 0), "{caps:?}");
        let signed = CUatomicOperationCapability::CU_ATOMIC_CAPABILITY_SIGNED.0;
        assert_eq!((caps[0] & signed, caps[1] & signed), (signed, 0));
        assert_eq!(p.cuDeviceGetP2PAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 2, 1, 1), INVALID_DEVICE);
        assert_eq!(p.cuDeviceGetHostAtomicCapabilities(caps.as_mut_ptr(), ops.as_ptr(), 0, 0), INVALID_VALUE);
        let bad = [CUatomicOperation(99)];
        let mut before = [5u32; 2];
        assert_eq!(p.cuDeviceGetHostAtomicCapabilities(before.as_mut_ptr(), bad.as_ptr(), 1, 0), INVALID_VALUE);
        // The driver writes 0 for the unknown operation (device_misc.host_atomic_capabilities_bad_op).
        assert_eq!(before, [0, 5]);
    }
}

/// Reads a coredump name attribute (`global`: application-wide).
fn name(d: &Driver, attrib: CUcoredumpSettings, global: bool) -> String {
    let mut buf = [0u8; 1024];
    let mut size = buf.len();
    let p = d.p();
    // SAFETY: a buffer of `size` bytes.
    let st = unsafe {
        match global {
            true => p.cuCoredumpGetAttributeGlobal(attrib, buf.as_mut_ptr().cast(), &mut size),
            false => p.cuCoredumpGetAttribute(attrib, buf.as_mut_ptr().cast(), &mut size),
        }
    };
    ok(st);
    CStr::from_bytes_until_nul(&buf).unwrap().to_string_lossy().into_owned()
}

/// Reads a boolean coredump attribute.
fn flag(d: &Driver, attrib: CUcoredumpSettings, global: bool) -> bool {
    let (mut b, mut size) = (7u8, 1usize);
    let p = d.p();
    let v: *mut c_void = (&raw mut b).cast();
    // SAFETY: one byte.
    ok(unsafe {
        match global {
            true => p.cuCoredumpGetAttributeGlobal(attrib, v, &mut size),
            false => p.cuCoredumpGetAttribute(attrib, v, &mut size),
        }
    });
    assert!(b <= 1);
    b == 1
}

#[test]
fn coredump_attributes_have_the_documented_defaults_and_keep_what_is_set() {
    type S = CUcoredumpSettings;
    let d = two_devices();
    let p = d.p();
    assert!(!flag(&d, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, true));
    assert!(flag(&d, S::CU_COREDUMP_TRIGGER_HOST, true));
    assert!(!flag(&d, S::CU_COREDUMP_LIGHTWEIGHT, true));
    assert!(!flag(&d, S::CU_COREDUMP_ENABLE_USER_TRIGGER, true));
    // The names read back empty, as the driver's do (coredump.global_defaults).
    let file = name(&d, S::CU_COREDUMP_FILE, true);
    assert_eq!(file, "");
    assert_eq!(name(&d, S::CU_COREDUMP_PIPE, true), "");
    // SAFETY: valid pointers of the sizes given.
    unsafe {
        let mut size = 0usize;
        ok(p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_GENERATION_FLAGS, std::ptr::null_mut(), &mut size));
        assert_eq!(size, 4);
        ok(p.cuCoredumpGetAttributeGlobal(S::CU_COREDUMP_LIGHTWEIGHT, std::ptr::null_mut(), &mut size));
        assert_eq!(size, 1);
        assert_eq!(
            p.cuCoredumpGetAttributeGlobal(CUcoredumpSettings_enum(99), std::ptr::null_mut(), &mut size),
            INVALID_VALUE
        );
        // Per context: needs one.
        assert_eq!(
            p.cuCoredumpGetAttribute(S::CU_COREDUMP_LIGHTWEIGHT, std::ptr::null_mut(), &mut size),
            CUresult::CUDA_ERROR_INVALID_CONTEXT
        );

        // A global setting reaches contexts made later, not those that exist
        // (coredump.set_global_lightweight_seen_by_context).
        let mut yes = 1u8;
        let mut one = 1usize;
        let before = new_context(&d);
        ok(p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_LIGHTWEIGHT, (&raw mut yes).cast(), &mut one));
        assert!(!flag(&d, S::CU_COREDUMP_LIGHTWEIGHT, false));
        ok(p.cuCtxDestroy(before));
        let a = new_context(&d);
        assert!(flag(&d, S::CU_COREDUMP_LIGHTWEIGHT, false));
        // A NULL value changes nothing and succeeds (coredump.set_global_null_value).
        ok(p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_LIGHTWEIGHT, std::ptr::null_mut(), &mut one));
        assert!(flag(&d, S::CU_COREDUMP_LIGHTWEIGHT, true));
        // The user trigger is the application's alone (coredump.context_defaults).
        assert_eq!(
            p.cuCoredumpGetAttribute(S::CU_COREDUMP_ENABLE_USER_TRIGGER, (&raw mut yes).cast(), &mut one),
            INVALID_VALUE
        );
        let mut path = *b"/tmp/mine\0";
        let mut len = path.len();
        ok(p.cuCoredumpSetAttribute(S::CU_COREDUMP_FILE, path.as_mut_ptr().cast(), &mut len));
        assert_eq!(name(&d, S::CU_COREDUMP_FILE, false), "/tmp/mine");
        assert_eq!(name(&d, S::CU_COREDUMP_FILE, true), file, "the application's is unchanged");
        // The pipe is the application's alone (coredump.set_context_pipe).
        assert_eq!(p.cuCoredumpSetAttribute(S::CU_COREDUMP_PIPE, path.as_mut_ptr().cast(), &mut len), INVALID_VALUE);
        let mut unterminated = *b"abc";
        let mut three = 3usize;
        assert_eq!(
            p.cuCoredumpSetAttribute(S::CU_COREDUMP_FILE, unterminated.as_mut_ptr().cast(), &mut three),
            INVALID_VALUE
        );
        // "/tmp/mine" and its NUL do not fit in 4 bytes.
        let mut small = 4usize;
        let mut buf = [0u8; 4];
        assert_eq!(p.cuCoredumpGetAttribute(S::CU_COREDUMP_FILE, buf.as_mut_ptr().cast(), &mut small), INVALID_VALUE);
        // A context created with CU_CTX_COREDUMP_ENABLE dumps on exceptions.
        let mut b = std::ptr::null_mut();
        ok(p.cuCtxCreate(&mut b, std::ptr::null_mut(), CUctx_flags::CU_CTX_COREDUMP_ENABLE.0, 0));
        assert!(flag(&d, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, false));
        assert!(!flag(&d, S::CU_COREDUMP_ENABLE_ON_EXCEPTION, true));
        ok(p.cuCtxDestroy(b));
        ok(p.cuCtxDestroy(a));
        // The pipe is fixed once user triggers are on.
        ok(p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_ENABLE_USER_TRIGGER, (&raw mut yes).cast(), &mut one));
        assert_eq!(
            p.cuCoredumpSetAttributeGlobal(S::CU_COREDUMP_PIPE, path.as_mut_ptr().cast(), &mut len),
            CUresult::CUDA_ERROR_NOT_PERMITTED
        );
    }
}

unsafe extern "C" fn log_callback(_data: *mut c_void, _level: CUlogLevel, _message: *mut c_char, _len: usize) {}
unsafe extern "C" fn async_callback(
    _info: *mut CUasyncNotificationInfo,
    _data: *mut c_void,
    _h: CUasyncCallbackHandle,
) {
}

#[test]
fn the_log_is_empty_and_callbacks_register_once() {
    let d = two_devices();
    let p = d.p();
    // SAFETY: valid pointers throughout; handles of the test.
    unsafe {
        let mut h: CUlogsCallbackHandle = std::ptr::null_mut();
        ok(p.cuLogsRegisterCallback(Some(log_callback), std::ptr::null_mut(), &mut h));
        assert!(!h.is_null());
        ok(p.cuLogsUnregisterCallback(h));
        assert_eq!(p.cuLogsUnregisterCallback(h), INVALID_VALUE);
        assert_eq!(p.cuLogsRegisterCallback(None, std::ptr::null_mut(), &mut h), INVALID_VALUE);

        let mut it: CUlogIterator = 77;
        ok(p.cuLogsCurrent(&mut it, 0));
        assert_eq!(it, 0);
        // Flags are not checked (logs.current_flags_1).
        ok(p.cuLogsCurrent(&mut it, 1));
        // Nothing new: size 0, the buffer untouched (logs.dump_to_memory_nothing_new).
        let mut buf = [b'#' as c_char; 16];
        let mut size = buf.len();
        ok(p.cuLogsDumpToMemory(&mut it, buf.as_mut_ptr(), &mut size, 0));
        assert_eq!((size, buf[0], buf[1]), (0, b'#' as c_char, b'#' as c_char));
        let dir = std::env::temp_dir().join(format!("cudrv-logs-{}", std::process::id()));
        std::fs::write(&dir, b"old").unwrap();
        let path = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
        ok(p.cuLogsDumpToFile(std::ptr::null_mut(), path.as_ptr(), 0));
        assert_eq!(std::fs::read(&dir).unwrap(), b"");
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(p.cuLogsDumpToFile(&mut it, std::ptr::null(), 0), INVALID_VALUE);

        let mut a: CUasyncCallbackHandle = std::ptr::null_mut();
        ok(p.cuDeviceRegisterAsyncNotification(1, Some(async_callback), std::ptr::null_mut(), &mut a));
        assert!(!a.is_null());
        assert_eq!(p.cuDeviceUnregisterAsyncNotification(0, a), INVALID_VALUE, "registered for device 1");
        ok(p.cuDeviceUnregisterAsyncNotification(1, a));
        assert_eq!(p.cuDeviceUnregisterAsyncNotification(1, a), INVALID_VALUE);
        assert_eq!(
            p.cuDeviceRegisterAsyncNotification(2, Some(async_callback), std::ptr::null_mut(), &mut a),
            INVALID_DEVICE
        );
    }
}

#[test]
fn the_flush_options_attribute_reports_the_emulated_flush() {
    let d = two_devices();
    let mut v = 0;
    // SAFETY: a valid out-pointer.
    ok(unsafe {
        d.p().cuDeviceGetAttribute(
            &mut v,
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
            0,
        )
    });
    let host = CUflushGPUDirectRDMAWritesOptions::CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST.0 as i32;
    assert_eq!(v, host, "as on the H200");
}
