//! Coredump attributes (`cuCoredumpGetAttribute`/`SetAttribute`, and their `Global`
//! forms), the error log (`cuLogsRegisterCallback`, `UnregisterCallback`, `Current`,
//! `DumpToFile`, `DumpToMemory`) and asynchronous device notifications
//! (`cuDeviceRegisterAsyncNotification`, `UnregisterAsyncNotification`).
//!
//! The stand-in writes no coredump (a kernel fault is reported as on the GPU, never
//! dumped), logs nothing and sends no notification (it has no resource to run short of):
//! the settings are kept and read back (`model/misc.rs`), the callbacks are registered and
//! unregistered but never called, and a dump of the log is empty.

use std::ffi::{c_char, c_uint, c_void, CStr};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::handles;
use crate::model::misc::{Coredump, COREDUMP_NAME_MAX};
use crate::run::lock::lock;
use crate::world::World;

type S = CUcoredumpSettings;

/// The bytes an attribute's value takes (`bool`, `unsigned int`, a name buffer); `None`
/// for a number that is no attribute.
fn value_size(attrib: S) -> Option<usize> {
    match attrib {
        S::CU_COREDUMP_ENABLE_ON_EXCEPTION
        | S::CU_COREDUMP_TRIGGER_HOST
        | S::CU_COREDUMP_LIGHTWEIGHT
        | S::CU_COREDUMP_ENABLE_USER_TRIGGER => Some(1),
        S::CU_COREDUMP_FILE | S::CU_COREDUMP_PIPE => Some(COREDUMP_NAME_MAX),
        S::CU_COREDUMP_GENERATION_FLAGS => Some(4),
        _ => None,
    }
}

/// Writes `attrib` of `c` into `value` (of `*size` bytes); with a null `value`, the size
/// the attribute takes into `size`. CUDA_ERROR_INVALID_VALUE, writing nothing, for a null
/// `size`, an unknown attribute or a region too small.
///
/// # Safety
/// `size` is null or valid; `value` is null or has room for `*size` bytes.
unsafe fn get(c: &Coredump, attrib: S, value: *mut c_void, size: *mut usize) -> Result<(), CUresult> {
    non_null(size)?;
    let need = value_size(attrib).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    if value.is_null() {
        return write(size, need);
    }
    // SAFETY: a valid `size` (the caller's contract).
    let room = unsafe { *size };
    let bytes: Vec<u8> = match attrib {
        S::CU_COREDUMP_ENABLE_ON_EXCEPTION => vec![u8::from(c.on_exception)],
        S::CU_COREDUMP_TRIGGER_HOST => vec![u8::from(c.trigger_host)],
        S::CU_COREDUMP_LIGHTWEIGHT => vec![u8::from(c.lightweight)],
        S::CU_COREDUMP_ENABLE_USER_TRIGGER => vec![u8::from(c.user_trigger)],
        S::CU_COREDUMP_FILE => c.file.iter().copied().chain([0]).collect(),
        S::CU_COREDUMP_PIPE => c.pipe.iter().copied().chain([0]).collect(),
        _ => c.flags.to_ne_bytes().to_vec(),
    };
    if room < bytes.len() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: `value` has room for `room` >= `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
    Ok(())
}

/// Sets `attrib` of `c` from `value` (of `*size` bytes). CUDA_ERROR_INVALID_VALUE, changing
/// nothing, for a null pointer, an unknown attribute, a value smaller than the attribute's
/// type or a name without its NUL within 1024 bytes.
///
/// # Safety
/// `size` is null or valid; `value` is null or holds `*size` bytes.
unsafe fn set(c: &mut Coredump, attrib: S, value: *const c_void, size: *const usize) -> Result<(), CUresult> {
    non_null(value)?;
    non_null(size)?;
    let need = value_size(attrib).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    // SAFETY: a valid `size` (the caller's contract).
    let given = unsafe { *size };
    // SAFETY: `value` holds `given` bytes (the caller's contract).
    let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), given.min(need)) };
    let flag = || bytes.first().map(|&b| b != 0).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE);
    match attrib {
        S::CU_COREDUMP_ENABLE_ON_EXCEPTION => c.on_exception = flag()?,
        S::CU_COREDUMP_TRIGGER_HOST => c.trigger_host = flag()?,
        S::CU_COREDUMP_LIGHTWEIGHT => c.lightweight = flag()?,
        S::CU_COREDUMP_ENABLE_USER_TRIGGER => c.user_trigger = flag()?,
        S::CU_COREDUMP_FILE | S::CU_COREDUMP_PIPE => {
            let name = CStr::from_bytes_until_nul(bytes).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
            let name = name.to_bytes().to_vec();
            if attrib == S::CU_COREDUMP_FILE {
                c.file = name;
            } else {
                c.pipe = name;
            }
        }
        _ => {
            let b: [u8; 4] = bytes.try_into().map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
            c.flags = c_uint::from_ne_bytes(b);
        }
    }
    Ok(())
}

/// The current context's handle and flags (a primary context's: its device's).
fn current(w: &World) -> Result<(u64, c_uint), CUresult> {
    let c = w.contexts.current()?;
    let flags = match c.is_primary() {
        true => w.primaries.state(c.device, true)?.0,
        false => c.flags(),
    };
    Ok((c.handle, flags))
}

/// `cuCoredumpGetAttribute`: the current context's value (its own once set, else the
/// application's as it was when the context was made, with the context's
/// `CU_CTX_COREDUMP_ENABLE`/`USER_COREDUMP_ENABLE` creation flags); see [`get`] for the size
/// rules and errors. CUDA_ERROR_INVALID_CONTEXT without a current context;
/// CUDA_ERROR_INVALID_VALUE for the user trigger, an application-wide setting (as the
/// driver answers: `coredump.context_defaults`).
pub(crate) unsafe fn cu_coredump_get_attribute(w: &World, attrib: S, value: *mut c_void, size: *mut usize) -> CUresult {
    let r = current(w).and_then(|(ctx, flags)| {
        if attrib == S::CU_COREDUMP_ENABLE_USER_TRIGGER {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let c = lock(&w.misc).of_context(ctx, flags);
        // SAFETY: the caller's `value` and `size` (see `get`).
        unsafe { get(&c, attrib, value, size) }
    });
    status(r)
}

/// `cuCoredumpGetAttributeGlobal`: the application's value (defaults: no dump on
/// exception, host trigger on, not lightweight, no user trigger, empty file and pipe names,
/// generation flags 0, as the driver reads them back); see [`get`].
pub(crate) unsafe fn cu_coredump_get_attribute_global(
    w: &World,
    attrib: S,
    value: *mut c_void,
    size: *mut usize,
) -> CUresult {
    let c = lock(&w.misc).global().clone();
    // SAFETY: the caller's `value` and `size` (see `get`).
    status(unsafe { get(&c, attrib, value, size) })
}

/// `cuCoredumpSetAttribute`: sets the current context's own value (see [`set`]). The user
/// trigger and the pipe are application-wide: setting them here is
/// CUDA_ERROR_INVALID_VALUE, as the driver answers (the documentation says
/// CUDA_ERROR_NOT_PERMITTED).
pub(crate) unsafe fn cu_coredump_set_attribute(w: &World, attrib: S, value: *mut c_void, size: *mut usize) -> CUresult {
    let r = current(w).and_then(|(ctx, flags)| {
        if matches!(attrib, S::CU_COREDUMP_ENABLE_USER_TRIGGER | S::CU_COREDUMP_PIPE) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let mut misc = lock(&w.misc);
        let mut c = misc.of_context(ctx, flags);
        // SAFETY: the caller's `value` and `size` (see `set`).
        unsafe { set(&mut c, attrib, value, size) }?;
        misc.set_context(ctx, c);
        Ok(())
    });
    status(r)
}

/// `cuCoredumpSetAttributeGlobal`: sets the application's value (see [`set`]) for contexts
/// made from now on: those that exist keep what they saw, as the driver answered. A NULL
/// value changes nothing and succeeds (as the driver answered:
/// `coredump.set_global_null_value`). The pipe cannot change once the user trigger is on
/// (CUDA_ERROR_NOT_PERMITTED).
pub(crate) unsafe fn cu_coredump_set_attribute_global(
    w: &World,
    attrib: S,
    value: *mut c_void,
    size: *mut usize,
) -> CUresult {
    if value.is_null() && !size.is_null() && value_size(attrib).is_some() {
        return CUresult::CUDA_SUCCESS;
    }
    let live: Vec<(u64, c_uint)> = w
        .contexts
        .live()
        .into_iter()
        .map(|c| {
            let flags = match c.is_primary() {
                true => w.primaries.state(c.device, true).map_or(0, |s| s.0),
                false => c.flags(),
            };
            (c.handle, flags)
        })
        .collect();
    let mut misc = lock(&w.misc);
    for (h, flags) in live {
        misc.keep_for_context(h, flags);
    }
    let g = misc.global();
    if attrib == S::CU_COREDUMP_PIPE && g.user_trigger {
        return CUresult::CUDA_ERROR_NOT_PERMITTED;
    }
    // SAFETY: the caller's `value` and `size` (see `set`).
    status(unsafe { set(g, attrib, value, size) })
}

/// `cuLogsRegisterCallback`: registers `callback` (never called: the stand-in logs
/// nothing). CUDA_ERROR_INVALID_VALUE for a null callback or out-pointer.
pub(crate) unsafe fn cu_logs_register_callback(
    w: &World,
    callback: CUlogsCallback,
    _data: *mut c_void,
    out: *mut CUlogsCallbackHandle,
) -> CUresult {
    if callback.is_none() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let r = non_null(out).and_then(|()| {
        let h = handles::fresh();
        lock(&w.misc).log_callbacks.insert(h);
        write(out, to_ptr(h))
    });
    status(r)
}

/// `cuLogsUnregisterCallback`: CUDA_ERROR_INVALID_VALUE for a handle not registered.
pub(crate) unsafe fn cu_logs_unregister_callback(w: &World, callback: CUlogsCallbackHandle) -> CUresult {
    match lock(&w.misc).log_callbacks.remove(&from_ptr(callback)) {
        true => CUresult::CUDA_SUCCESS,
        false => CUresult::CUDA_ERROR_INVALID_VALUE,
    }
}

/// `cuLogsCurrent`: the log's end, position 0 (nothing is ever logged). As the driver
/// answers (`logs.current_*`): before `cuInit` too, and whatever the flags (reserved).
pub(crate) unsafe fn cu_logs_current(_w: &World, iterator: *mut CUlogIterator, _flags: c_uint) -> CUresult {
    status(write(iterator, 0))
}

/// `cuLogsDumpToFile`: writes the (empty) log to `path`, replacing the file; the iterator
/// (optional) stays where it is. CUDA_ERROR_INVALID_VALUE for a null path, flags other than
/// 0, or a file that cannot be written (then no file is made).
pub(crate) unsafe fn cu_logs_dump_to_file(
    _w: &World,
    _iterator: *mut CUlogIterator,
    path: *const c_char,
    flags: c_uint,
) -> CUresult {
    if path.is_null() || flags != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a non-null, NUL-terminated path from the caller.
    let path = unsafe { CStr::from_ptr(path) };
    let Ok(path) = path.to_str() else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    match std::fs::write(path, b"") {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err(_) => CUresult::CUDA_ERROR_INVALID_VALUE,
    }
}

/// `cuLogsDumpToMemory`: the (empty) log: `*size` becomes 0 and the buffer is left as it
/// was (as the driver leaves it with nothing new to dump: `logs.dump_to_memory_nothing_new`);
/// the iterator (optional) stays where it is.
/// CUDA_ERROR_INVALID_VALUE, writing nothing, for a null buffer or size, or flags other
/// than 0.
pub(crate) unsafe fn cu_logs_dump_to_memory(
    _w: &World,
    _iterator: *mut CUlogIterator,
    buffer: *mut c_char,
    size: *mut usize,
    flags: c_uint,
) -> CUresult {
    if buffer.is_null() || size.is_null() || flags != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    status(write(size, 0))
}

/// `cuDeviceRegisterAsyncNotification`: registers `callback` for `dev` (never called: the
/// stand-in sends no notification). CUDA_ERROR_INVALID_DEVICE for a device the world
/// lacks, CUDA_ERROR_INVALID_VALUE for a null callback or out-pointer.
pub(crate) unsafe fn cu_device_register_async_notification(
    w: &World,
    dev: CUdevice,
    callback: CUasyncCallback,
    _data: *mut c_void,
    out: *mut CUasyncCallbackHandle,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    if callback.is_none() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let r = non_null(out).and_then(|()| {
        let h = handles::fresh();
        lock(&w.misc).async_callbacks.insert(h, dev);
        write(out, to_ptr(h))
    });
    status(r)
}

/// `cuDeviceUnregisterAsyncNotification`: CUDA_ERROR_INVALID_DEVICE for a device the world
/// lacks, CUDA_ERROR_INVALID_VALUE for a handle not registered for `dev`.
pub(crate) unsafe fn cu_device_unregister_async_notification(
    w: &World,
    dev: CUdevice,
    callback: CUasyncCallbackHandle,
) -> CUresult {
    if !valid_device(w, dev) {
        return CUresult::CUDA_ERROR_INVALID_DEVICE;
    }
    let mut misc = lock(&w.misc);
    let h = from_ptr(callback);
    if misc.async_callbacks.get(&h) != Some(&dev) {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    misc.async_callbacks.remove(&h);
    CUresult::CUDA_SUCCESS
}

/// Whether `dev` is a device ordinal of `w` (as `device::valid_device`, which this file
/// does not import: `device.rs` reaches `table.rs`, which names this file).
fn valid_device(w: &World, dev: CUdevice) -> bool {
    (0..w.device_count()).contains(&dev)
}
