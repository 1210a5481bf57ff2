//! The linker: `cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`, `cuLinkDestroy` over fake
//! images and PTX with host implementations (`image.rs`). The linked image (a fake image)
//! holds every kernel and global added; it is owned by the link state and stays valid until
//! `cuLinkDestroy`.
//!
//! JIT options (here and for `cuModuleLoadDataEx` and `cuLibraryLoadData`, `module.rs`):
//! the info and error log buffers are written (NUL-terminated, cut to their capacity) and
//! each size slot is overwritten with the bytes written (without the NUL); the
//! `CU_JIT_WALL_TIME` slot gets the call's wall time in milliseconds as a `float` in its
//! first four bytes, as a real driver writes it (driver-facts.md); `CU_JIT_LOG_VERBOSE`
//! gives an info log naming each kernel. For a link the logs and the wall time are
//! written at `cuLinkAddData` (an error) and `cuLinkComplete`. Other options are read and
//! ignored.

use std::ffi::{c_char, c_uint, c_void, CStr};
use std::time::Instant;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::image::Image;
use crate::model::link::{JitSlots, Link};
use crate::run::lock::lock;
use crate::world::World;

/// Reads a JIT option list: CUDA_ERROR_INVALID_VALUE for arrays missing while `n` is not
/// 0 (other options are accepted and ignored).
///
/// # Safety
/// `options` and `values` are NULL or hold `n` entries.
pub(crate) unsafe fn jit_slots(
    n: c_uint,
    options: *const CUjit_option,
    values: *mut *mut c_void,
) -> Result<JitSlots, CUresult> {
    type O = CUjit_option;
    let mut slots = JitSlots::default();
    if n == 0 {
        return Ok(slots);
    }
    non_null(options)?;
    non_null(values)?;
    for i in 0..n as usize {
        // SAFETY: both arrays hold `n` entries.
        let (o, slot) = unsafe { (*options.add(i), values.add(i)) };
        // SAFETY: as above.
        let value = unsafe { *slot } as usize;
        match o {
            O::CU_JIT_INFO_LOG_BUFFER => slots.info = Some((value, slots.info.map_or(0, |(_, c)| c))),
            O::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES => {
                slots.info = Some((slots.info.map_or(0, |(b, _)| b), value));
                slots.info_size_slot = Some(slot as usize);
            }
            O::CU_JIT_ERROR_LOG_BUFFER => slots.error = Some((value, slots.error.map_or(0, |(_, c)| c))),
            O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES => {
                slots.error = Some((slots.error.map_or(0, |(b, _)| b), value));
                slots.error_size_slot = Some(slot as usize);
            }
            O::CU_JIT_WALL_TIME => slots.wall_slot = Some(slot as usize),
            O::CU_JIT_LOG_VERBOSE => slots.verbose = value != 0,
            _ => {}
        }
    }
    Ok(slots)
}

/// Writes `text` into a log buffer of `(address, capacity)` (cut to fit, NUL-terminated)
/// and the bytes written into its size slot.
///
/// # Safety
/// The buffer has `capacity` writable bytes; the slot is a writable value slot.
unsafe fn write_log(buffer: Option<(usize, usize)>, size_slot: Option<usize>, text: &str) {
    let written = match buffer {
        Some((address, capacity)) if address != 0 && capacity > 0 => {
            let n = text.len().min(capacity - 1);
            let p = address as *mut u8;
            // SAFETY: `n + 1 <= capacity` bytes of the program's buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), p, n);
                *p.add(n) = 0;
            }
            n
        }
        _ => 0,
    };
    if let Some(slot) = size_slot {
        // SAFETY: the option's value slot.
        unsafe { *(slot as *mut usize) = written };
    }
}

/// Answers a module or library load's JIT options as the H200 answers a load whose PTX its
/// JIT cache already holds: an empty info log (verbose or not), the error log empty, and
/// 0.0 milliseconds of wall time (docs/driver-facts.md).
///
/// # Safety
/// The addresses in `slots` are still the program's live buffers and slots.
pub(crate) unsafe fn answer_cached_jit(slots: &JitSlots) {
    // SAFETY: the caller's.
    unsafe {
        write_log(slots.info, slots.info_size_slot, "");
        write_log(slots.error, slots.error_size_slot, "");
    }
    if let Some(slot) = slots.wall_slot {
        // SAFETY: the option's value slot (pointer-sized): 0.0f32 in its first four bytes
        // and zero above, as the H200 leaves it.
        unsafe { *(slot as *mut usize) = 0 };
    }
}

/// Writes the logs and the wall time (milliseconds since `started`) where `slots` say.
///
/// # Safety
/// The addresses in `slots` are still the program's live buffers and slots.
pub(crate) unsafe fn answer_jit(slots: &JitSlots, info: &str, error: &str, started: Instant) {
    // SAFETY: the caller's.
    unsafe {
        write_log(slots.info, slots.info_size_slot, info);
        write_log(slots.error, slots.error_size_slot, error);
    }
    if let Some(slot) = slots.wall_slot {
        // At least a microsecond: a JIT never takes no time.
        let ms = (started.elapsed().as_secs_f64() * 1000.0).max(0.001) as f32;
        let p = slot as *mut usize;
        // SAFETY: the option's value slot (pointer-sized); the float goes in its first
        // four bytes.
        unsafe {
            *p = 0;
            *p.cast::<f32>() = ms;
        }
    }
}

/// The bytes of the file at `path`: CUDA_ERROR_INVALID_VALUE for a NULL or non-UTF-8
/// path, CUDA_ERROR_FILE_NOT_FOUND for one that cannot be read (the H200's answer for a
/// missing file).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
pub(crate) unsafe fn read_file(path: *const c_char) -> Result<Vec<u8>, CUresult> {
    non_null(path)?;
    // SAFETY: a non-null, NUL-terminated string from the caller.
    let path = unsafe { CStr::from_ptr(path) };
    let path = path.to_str().map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
    std::fs::read(path).map_err(|_| CUresult::CUDA_ERROR_FILE_NOT_FOUND)
}

/// `cuLinkCreate`: remembers where the options want the logs and wall time.
pub(crate) unsafe fn cu_link_create(
    w: &World,
    num_options: c_uint,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
    state: *mut CUlinkState,
) -> CUresult {
    let started = Instant::now();
    let r = non_null(state).and_then(|()| {
        w.contexts.current()?;
        // SAFETY: the program passes `num_options` options and values.
        let jit = unsafe { jit_slots(num_options, options, values) }?;
        let link = Link { image: Image::default(), outputs: Vec::new(), jit, info: String::new(), started };
        let h = lock(&w.links).insert(link);
        write(state, to_ptr(h))
    });
    status(r)
}

/// `cuLinkAddData`: any `CU_JIT_INPUT_*` type; the data must be a fake image or PTX with
/// host implementations: otherwise the link's error log says why, and the answer is
/// CUDA_ERROR_INVALID_PTX (an unknown instruction) or CUDA_ERROR_INVALID_IMAGE.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_link_add_data(
    w: &World,
    state: CUlinkState,
    input_type: CUjitInputType,
    data: *mut c_void,
    size: usize,
    _name: *const c_char,
    num_options: c_uint,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
) -> CUresult {
    let r = non_null(data).and_then(|()| {
        if input_type.0 >= CUjitInputType::CU_JIT_NUM_INPUT_TYPES.0 || size == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the program passes `num_options` options and values.
        unsafe { jit_slots(num_options, options, values) }?;
        // SAFETY: the program passes `size` readable bytes at `data`.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        link_add_bytes(w, state, bytes)
    });
    status(r)
}

/// `cuLinkAddFile`: as `cuLinkAddData` with the file's bytes; CUDA_ERROR_FILE_NOT_FOUND
/// for a file that cannot be read.
pub(crate) unsafe fn cu_link_add_file(
    w: &World,
    state: CUlinkState,
    input_type: CUjitInputType,
    path: *const c_char,
    num_options: c_uint,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
) -> CUresult {
    let r = non_null(path).and_then(|()| {
        if input_type.0 >= CUjitInputType::CU_JIT_NUM_INPUT_TYPES.0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the program passes `num_options` options and values.
        unsafe { jit_slots(num_options, options, values) }?;
        // SAFETY: a non-null, NUL-terminated path from the caller.
        let bytes = unsafe { read_file(path) }?;
        link_add_bytes(w, state, &bytes)
    });
    status(r)
}

/// Adds an image's bytes (a fatbin, PTX or a fake image) to the link `state`; on error the
/// link's error log says why and the link is unchanged.
fn link_add_bytes(w: &World, state: CUlinkState, bytes: &[u8]) -> Result<(), CUresult> {
    {
        let mut links = lock(&w.links);
        let link = links.get_mut(from_ptr(state))?;
        match Image::from_bytes(bytes, w.max_isa()) {
            Ok(image) => {
                link.info.push_str(&image.info_log(link.jit.verbose));
                link.image.merge(image);
                Ok(())
            }
            Err(refused) => {
                // SAFETY: the link's log buffers live until cuLinkDestroy.
                unsafe { answer_jit(&link.jit, &link.info, &refused.log, link.started) };
                Err(refused.code)
            }
        }
    }
}

/// `cuLinkComplete`: a fake image of everything added, and its size (with its NUL); the
/// logs and the wall time are written.
pub(crate) unsafe fn cu_link_complete(
    w: &World,
    state: CUlinkState,
    out: *mut *mut c_void,
    size: *mut usize,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        non_null(size)?;
        let mut links = lock(&w.links);
        let link = links.get_mut(from_ptr(state))?;
        let bytes = link.image.to_bytes().into_boxed_slice();
        let (p, n) = (bytes.as_ptr(), bytes.len());
        link.outputs.push(bytes);
        let info = format!("{}info    : cudrv stand-in: linked {} kernels\n", link.info, link.image.kernels.len());
        // SAFETY: the link's log buffers live until cuLinkDestroy.
        unsafe { answer_jit(&link.jit, &info, "", link.started) };
        write(out, p.cast_mut().cast())?;
        write(size, n)
    });
    status(r)
}

/// `cuLinkDestroy`: twice: CUDA_ERROR_INVALID_HANDLE and a double destroy in the ledger.
pub(crate) unsafe fn cu_link_destroy(w: &World, state: CUlinkState) -> CUresult {
    status(lock(&w.links).remove(from_ptr(state)).map(drop))
}
