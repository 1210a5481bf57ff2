//! The names the real `libcuda.so.1` exports outside `cuda.h`: the profiler
//! (`cudaProfiler.h`), OpenGL, EGL and VDPAU interop, and three private names. Programs
//! and bindings that resolve every name they bind at load (cudarc 0.19.4 and older resolve
//! the profiler's) load the stand-in as they load the driver.
//!
//! The stand-in has no profiler and no display. Each of these entry points answers what the
//! H200's driver answered on a machine with no display (`scripts/probes/interop_exports.c`,
//! docs/gpu-runs/h200/interop-exports-2026-12-03.txt), by whether a context is current and
//! whether the first argument is NULL: `cuProfilerStart`/`Stop` succeed and do nothing with
//! a context current (CUDA_ERROR_INVALID_CONTEXT without), `cuProfilerInitialize` answers
//! CUDA_ERROR_NOT_SUPPORTED, the GL, EGL and VDPAU calls their recorded errors. Where the
//! real driver crashed (a VDPAU context created with a NULL `VdpGetProcAddress`, the
//! private `cuEGLApiInit`), the stand-in answers CUDA_ERROR_INVALID_VALUE, or
//! CUDA_ERROR_NOT_SUPPORTED for a private name. The answers are the same at every emulated
//! version, and are those of the default stand-in (the one the exported symbols serve).
//!
//! Everything here is generated (`generated/interop.rs`, by `cudrv-gen` from the interop
//! headers and the recorded answers); `cuGetProcAddress` resolves the interop names through
//! [`resolve`], as the real driver's does (it does not know the private ones).

use std::ffi::{c_void, CStr};

use cudrv::sys::{CUresult, CUuuid};

use crate::entry::initialized;
use crate::world::World;

// The entry points take the driver's arguments and answer without reading most of them.
#[allow(non_snake_case, unused_variables, unused_imports, clippy::all)]
mod generated {
    include!("generated/interop.rs");
}

pub(crate) use generated::{ANSWERS, KNOWN, PRIVATE};

/// What the H200 answered one interop entry point: `[first argument NULL, not NULL]`,
/// without and with a context current; `None` where it crashed.
pub(crate) struct Answer {
    /// The exported name.
    pub(crate) name: &'static CStr,
    pub(crate) without_context: [Option<CUresult>; 2],
    pub(crate) with_context: [Option<CUresult>; 2],
}

/// One interop name and version `cuGetProcAddress` resolves, and the export it gives.
pub(crate) struct Known {
    pub(crate) name: &'static str,
    pub(crate) version: u32,
    pub(crate) per_thread: bool,
    pub(crate) export: fn() -> *mut c_void,
}

/// The answer of an interop entry point, as recorded on the H200 (see the module docs);
/// CUDA_ERROR_NOT_INITIALIZED before `cuInit`. Changes nothing.
pub(crate) fn answer(a: &Answer, first_null: bool) -> CUresult {
    let w = World::at::<0>();
    if !initialized(w) {
        return CUresult::CUDA_ERROR_NOT_INITIALIZED;
    }
    let [null, given] = if w.contexts.top().is_some() { a.with_context } else { a.without_context };
    let seen = if first_null { null } else { given };
    seen.unwrap_or(CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// The answer of a private name of the driver: CUDA_ERROR_NOT_SUPPORTED.
pub(crate) fn private() -> CUresult {
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// What `cuGetProcAddress` answers for interop name `name` at `requested` (per-thread
/// variants preferred with `per_thread`): the export of the newest version not above
/// `requested`; `Err(true)` if the name is known but every version of it is newer,
/// `Err(false)` if it is not an interop name.
pub(crate) fn resolve(name: &str, requested: u32, per_thread: bool) -> Result<*mut c_void, bool> {
    let of_name = || KNOWN.iter().filter(|k| k.name == name);
    if of_name().next().is_none() {
        return Err(false);
    }
    let newest =
        |pt: bool| of_name().filter(|k| k.per_thread == pt && k.version <= requested).max_by_key(|k| k.version);
    let chosen = if per_thread { newest(true).or_else(|| newest(false)) } else { newest(false) };
    chosen.map(|k| (k.export)()).ok_or(true)
}

/// Every exported name outside cuda.h: the interop ones and the private ones.
pub(crate) fn exported_names() -> impl Iterator<Item = &'static CStr> {
    ANSWERS.iter().map(|a| a.name).chain(PRIVATE.iter().copied())
}

/// `cuGetExportTable`: the driver's private tables (the interface the CUDA runtime and the
/// libraries built on it use) are not emulated, so every id is unknown: as the H200 answers
/// an unknown id, CUDA_ERROR_INVALID_VALUE with `*table` set to NULL (recorded:
/// docs/gpu-runs/h200/interop-exports-2026-12-03.txt). A NULL `table` is not written.
pub(crate) unsafe fn cu_get_export_table(_w: &World, table: *mut *const c_void, _id: *const CUuuid) -> CUresult {
    if !table.is_null() {
        // SAFETY: the caller passes a writable out-pointer (checked non-null).
        unsafe { *table = std::ptr::null() };
    }
    CUresult::CUDA_ERROR_INVALID_VALUE
}
