//! `cuGetErrorName` / `cuGetErrorString`: names from cudrv's generated table; a code the
//! header does not know gives CUDA_ERROR_INVALID_VALUE and leaves the string unwritten,
//! as a real driver does (driver-facts.md).

use std::ffi::{c_char, CStr};
use std::sync::LazyLock;

use cudrv::sys::CUresult;

use crate::world::World;

/// Descriptions a real driver gives (driver-facts.md and cuda.h); other known codes get
/// their name in words.
fn known_description(code: u32) -> Option<&'static CStr> {
    Some(match code {
        0 => c"no error",
        1 => c"invalid argument",
        2 => c"out of memory",
        3 => c"initialization error",
        4 => c"driver shutting down",
        34 => c"CUDA driver is a stub library",
        100 => c"no CUDA-capable device is detected",
        101 => c"invalid device ordinal",
        201 => c"invalid device context",
        400 => c"invalid resource handle",
        500 => c"named symbol not found",
        700 => c"an illegal memory access was encountered",
        719 => c"unspecified launch failure",
        801 => c"operation not supported",
        999 => c"unknown error",
        _ => return None,
    })
}

struct Strings {
    names: Vec<(u32, std::ffi::CString)>,
    descriptions: Vec<(u32, std::ffi::CString)>,
}

static STRINGS: LazyLock<Strings> = LazyLock::new(|| {
    let mut names = Vec::new();
    let mut descriptions = Vec::new();
    for code in 0..1100u32 {
        let Some(name) = cudrv::table::header_error_name(code) else {
            continue;
        };
        if let Ok(n) = std::ffi::CString::new(name) {
            names.push((code, n));
        }
        let words = name.trim_start_matches("CUDA_ERROR_").trim_start_matches("CUDA_").replace('_', " ").to_lowercase();
        if let Ok(d) = std::ffi::CString::new(words) {
            descriptions.push((code, d));
        }
    }
    Strings { names, descriptions }
});

fn lookup(list: &'static [(u32, std::ffi::CString)], code: u32) -> Option<*const c_char> {
    list.iter().find(|(c, _)| *c == code).map(|(_, s)| s.as_ptr())
}

fn write(out: *mut *const c_char, s: Option<*const c_char>) -> CUresult {
    match s {
        _ if out.is_null() => CUresult::CUDA_ERROR_INVALID_VALUE,
        Some(s) => {
            // SAFETY: `out` is a non-null out-pointer from the caller.
            unsafe { *out = s };
            CUresult::CUDA_SUCCESS
        }
        None => {
            // facts: an unknown code leaves the string NULL (the conformance suite saw a
            // real driver write NULL over a sentinel).
            // SAFETY: as above.
            unsafe { *out = std::ptr::null() };
            CUresult::CUDA_ERROR_INVALID_VALUE
        }
    }
}

pub(crate) unsafe fn cu_get_error_name(_w: &World, error: CUresult, out: *mut *const c_char) -> CUresult {
    write(out, lookup(&STRINGS.names, error.0))
}

pub(crate) unsafe fn cu_get_error_string(_w: &World, error: CUresult, out: *mut *const c_char) -> CUresult {
    let s = known_description(error.0).map(CStr::as_ptr).or_else(|| lookup(&STRINGS.descriptions, error.0));
    write(out, s)
}
