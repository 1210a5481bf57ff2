//! The entry points the stand-in emulates: initialisation, devices, primary contexts and
//! the current context. Every other variant gets its generated stub.
//!
//! Behaviour follows `shared/driver-facts.md` (cited as "facts" below).

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex};

use cudrv::sys::*;

use crate::{errors, faults, gpa};

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// Name, memory and compute capability of every virtual device.
pub const DEVICE_NAME: &str = "cudrv stand-in device";
pub const DEVICE_TOTAL_MEM: usize = 80 << 30;
pub const DEVICE_CC: (c_int, c_int) = (9, 0);
pub const DEVICE_SM_COUNT: c_int = 132;

/// Number of virtual devices: `CUDRV_STANDIN_DEVICES` (0 to 8), default 1.
pub fn device_count() -> c_int {
    static COUNT: LazyLock<c_int> = LazyLock::new(|| {
        std::env::var("CUDRV_STANDIN_DEVICES")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| (0..=8).contains(n))
            .unwrap_or(1)
    });
    *COUNT
}

/// One context: primary ones live forever (their handle must stay valid across
/// release/retain, as a real driver's does).
struct Context {
    device: c_int,
    retained: AtomicU32,
}

static PRIMARY: LazyLock<Vec<usize>> = LazyLock::new(|| {
    (0..device_count())
        .map(|d| {
            Box::into_raw(Box::new(Context {
                device: d,
                retained: AtomicU32::new(0),
            })) as usize
        })
        .collect()
});
static KNOWN_CONTEXTS: Mutex<Vec<usize>> = Mutex::new(Vec::new());

thread_local! {
    static CURRENT: Cell<CUcontext> = const { Cell::new(std::ptr::null_mut()) };
}

fn context(c: CUcontext) -> Option<&'static Context> {
    let addr = c as usize;
    let known = PRIMARY.contains(&addr)
        || KNOWN_CONTEXTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&addr);
    // SAFETY: every known address is a leaked, never-freed Context.
    known.then(|| unsafe { &*(addr as *const Context) })
}

macro_rules! fault {
    ($symbol:literal) => {
        if let Some(s) = faults::take($symbol) {
            return s;
        }
    };
}

macro_rules! initialized {
    () => {
        if !INITIALIZED.load(Ordering::Acquire) {
            return CUresult::CUDA_ERROR_NOT_INITIALIZED;
        }
    };
}

/// Writes `value` through `out`, or returns CUDA_ERROR_INVALID_VALUE for a null `out`.
fn put<T>(out: *mut T, value: T) -> CUresult {
    if out.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: non-null out-pointer from the caller.
    unsafe { out.write(value) };
    CUresult::CUDA_SUCCESS
}

fn valid_device(dev: CUdevice) -> bool {
    (0..device_count()).contains(&dev)
}

pub(crate) unsafe extern "C" fn cu_init(flags: c_uint) -> CUresult {
    fault!("cuInit");
    // facts: cuInit(7) -> CUDA_ERROR_INVALID_VALUE; cuInit(0) -> SUCCESS.
    if flags != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    INITIALIZED.store(true, Ordering::Release);
    CUresult::CUDA_SUCCESS
}

unsafe extern "C" fn cu_device_get_count(count: *mut c_int) -> CUresult {
    fault!("cuDeviceGetCount");
    initialized!();
    put(count, device_count())
}

unsafe extern "C" fn cu_device_get(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    fault!("cuDeviceGet");
    initialized!();
    // facts: cuDeviceGet(&d, 5) on a one-GPU machine -> CUDA_ERROR_INVALID_DEVICE.
    if !valid_device(ordinal) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(device, ordinal)
}

unsafe extern "C" fn cu_device_get_name(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    fault!("cuDeviceGetName");
    initialized!();
    if name.is_null() || len <= 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    if !valid_device(dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let bytes = DEVICE_NAME.as_bytes();
    let n = bytes.len().min(usize::try_from(len - 1).unwrap_or(0));
    // SAFETY: `name` has room for `len` bytes; we write n + 1 <= len of them.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), name.cast::<u8>(), n);
        *name.add(n) = 0;
    }
    CUresult::CUDA_SUCCESS
}

unsafe extern "C" fn cu_device_total_mem(bytes: *mut usize, dev: CUdevice) -> CUresult {
    fault!("cuDeviceTotalMem");
    initialized!();
    if !valid_device(dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    put(bytes, DEVICE_TOTAL_MEM)
}

unsafe extern "C" fn cu_device_get_attribute(
    value: *mut c_int,
    attrib: CUdevice_attribute,
    dev: CUdevice,
) -> CUresult {
    fault!("cuDeviceGetAttribute");
    initialized!();
    if !valid_device(dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    type A = CUdevice_attribute;
    let v = match attrib {
        a if a.0 == 0 || a.0 >= A::CU_DEVICE_ATTRIBUTE_MAX.0 => {
            return CUresult::CUDA_ERROR_INVALID_VALUE
        }
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR => DEVICE_CC.0,
        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR => DEVICE_CC.1,
        A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT => DEVICE_SM_COUNT,
        A::CU_DEVICE_ATTRIBUTE_WARP_SIZE => 32,
        A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK => 1024,
        A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID => dev,
        _ => 0,
    };
    put(value, v)
}

unsafe extern "C" fn cu_device_get_uuid(uuid: *mut CUuuid, dev: CUdevice) -> CUresult {
    fault!("cuDeviceGetUuid");
    initialized!();
    if !valid_device(dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let mut bytes = [0 as c_char; 16];
    for (b, s) in bytes
        .iter_mut()
        .zip(b"cudrv-standin-0".iter().chain(std::iter::once(&0u8)))
    {
        *b = *s as c_char;
    }
    if let Some(last) = bytes.get_mut(15) {
        *last = c_char::try_from(dev).unwrap_or(0);
    }
    put(uuid, CUuuid { bytes })
}

unsafe extern "C" fn cu_device_primary_ctx_retain(ctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    fault!("cuDevicePrimaryCtxRetain");
    initialized!();
    if ctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let Some(&addr) = PRIMARY.get(usize::try_from(dev).unwrap_or(usize::MAX)) else {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    };
    // SAFETY: PRIMARY holds leaked, never-freed Contexts.
    unsafe { &*(addr as *const Context) }
        .retained
        .fetch_add(1, Ordering::AcqRel);
    put(ctx, addr as CUcontext)
}

unsafe extern "C" fn cu_device_primary_ctx_release(dev: CUdevice) -> CUresult {
    fault!("cuDevicePrimaryCtxRelease");
    initialized!();
    let Some(&addr) = PRIMARY.get(usize::try_from(dev).unwrap_or(usize::MAX)) else {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    };
    // SAFETY: as above.
    let c = unsafe { &*(addr as *const Context) };
    match c
        .retained
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
    {
        Ok(_) => CUresult::CUDA_SUCCESS,
        Err(_) => CUresult::CUDA_ERROR_INVALID_CONTEXT,
    }
}

unsafe extern "C" fn cu_ctx_get_current(pctx: *mut CUcontext) -> CUresult {
    fault!("cuCtxGetCurrent");
    initialized!();
    if pctx.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // facts: with no current context, SUCCESS and `*pctx` is NOT written.
    let current = CURRENT.with(Cell::get);
    if current.is_null() {
        return CUresult::CUDA_SUCCESS;
    }
    put(pctx, current)
}

unsafe extern "C" fn cu_ctx_set_current(ctx: CUcontext) -> CUresult {
    fault!("cuCtxSetCurrent");
    initialized!();
    // facts: cuCtxSetCurrent(NULL) -> SUCCESS.
    if !ctx.is_null() && context(ctx).is_none() {
        return CUresult::CUDA_ERROR_INVALID_CONTEXT;
    }
    CURRENT.with(|c| c.set(ctx));
    CUresult::CUDA_SUCCESS
}

unsafe extern "C" fn cu_ctx_get_device(device: *mut CUdevice) -> CUresult {
    fault!("cuCtxGetDevice");
    initialized!();
    match context(CURRENT.with(Cell::get)) {
        Some(c) => put(device, c.device),
        None => CUresult::CUDA_ERROR_INVALID_CONTEXT,
    }
}

/// Entry points whose pointer depends on the emulated version's slot.
pub(crate) fn special(slot: usize, symbol: &str, version: u32) -> Option<*mut c_void> {
    match (symbol, version) {
        ("cuDriverGetVersion", _) => Some(gpa::driver_get_version_of(slot)),
        ("cuGetProcAddress", 11030) => gpa::gpa_v1_of(slot).map(|f| f as *mut c_void),
        ("cuGetProcAddress", _) => gpa::gpa_v2_of(slot).map(|f| f as *mut c_void),
        _ => None,
    }
}

/// Type-checks each implementation against its variant's PFN typedef.
macro_rules! implemented {
    ($($ident:ident: $pfn:ident => $f:path,)*) => {
        /// The implementation of the variant `ident`, if the stand-in emulates it.
        pub(crate) fn implemented(ident: &str) -> Option<*mut c_void> {
            match ident {
                $(stringify!($ident) => {
                    let f: $pfn = Some($f);
                    f.map(|f| f as *mut c_void)
                })*
                _ => None,
            }
        }
    };
}

implemented! {
    cuInit_v2000: PFN_cuInit_v2000 => cu_init,
    cuGetErrorName_v6000: PFN_cuGetErrorName_v6000 => errors::cu_get_error_name,
    cuGetErrorString_v6000: PFN_cuGetErrorString_v6000 => errors::cu_get_error_string,
    cuDeviceGetCount_v2000: PFN_cuDeviceGetCount_v2000 => cu_device_get_count,
    cuDeviceGet_v2000: PFN_cuDeviceGet_v2000 => cu_device_get,
    cuDeviceGetName_v2000: PFN_cuDeviceGetName_v2000 => cu_device_get_name,
    cuDeviceTotalMem_v3020: PFN_cuDeviceTotalMem_v3020 => cu_device_total_mem,
    cuDeviceGetAttribute_v2000: PFN_cuDeviceGetAttribute_v2000 => cu_device_get_attribute,
    cuDeviceGetUuid_v9020: PFN_cuDeviceGetUuid_v9020 => cu_device_get_uuid,
    cuDeviceGetUuid_v11040: PFN_cuDeviceGetUuid_v11040 => cu_device_get_uuid,
    cuDevicePrimaryCtxRetain_v7000: PFN_cuDevicePrimaryCtxRetain_v7000 => cu_device_primary_ctx_retain,
    cuDevicePrimaryCtxRelease_v7000: PFN_cuDevicePrimaryCtxRelease_v7000 => cu_device_primary_ctx_release,
    cuDevicePrimaryCtxRelease_v11000: PFN_cuDevicePrimaryCtxRelease_v11000 => cu_device_primary_ctx_release,
    cuCtxGetCurrent_v4000: PFN_cuCtxGetCurrent_v4000 => cu_ctx_get_current,
    cuCtxSetCurrent_v4000: PFN_cuCtxSetCurrent_v4000 => cu_ctx_set_current,
    cuCtxGetDevice_v2000: PFN_cuCtxGetDevice_v2000 => cu_ctx_get_device,
}
