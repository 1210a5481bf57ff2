//! The cdylib's C symbols: every exported name `cuda.h` (13.5) declares (`cuInit`,
//! `cuMemAlloc`, `cuMemAlloc_v2`, `cuMemcpyHtoD_v2_ptds`, ...), generated in
//! `generated/exports.rs` with the exact signature of the variant the real driver binds
//! the name to, so that C programs, programs linked with `-lcuda` and other bindings can
//! load the stand-in as `libcuda.so.1`.
//!
//! Each export calls what slot 0 (the version the exported symbols emulate,
//! `CUDRV_STANDIN_VERSION`) answers for its variant through `cuGetProcAddress` (the
//! emulated entry or the generated stub), resolved at the first call and kept in the
//! export's own slot: a later call costs a load and an indirect call. An export whose
//! variant is newer than the emulated version (the real driver of that version has no
//! such symbol) answers CUDA_ERROR_NOT_FOUND and writes nothing, except the bootstrap
//! entries (`cuGetProcAddress`, `cuDriverGetVersion`), which answer at every version
//! (`gpa::entry_of`).

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use cudrv::sys::CUresult;

#[allow(non_snake_case, clippy::all)]
mod generated {
    include!("generated/exports.rs");
}

/// The function slot 0 answers for variant `index` (see the module documentation), kept
/// in `slot` once resolved; null while the variant is newer than the emulated version.
#[inline(always)]
pub(crate) fn entry(slot: &AtomicPtr<c_void>, index: usize) -> *mut c_void {
    let p = slot.load(Ordering::Acquire);
    if p.is_null() {
        resolve(slot, index)
    } else {
        p
    }
}

#[cold]
#[inline(never)]
fn resolve(slot: &AtomicPtr<c_void>, index: usize) -> *mut c_void {
    let standin = crate::StandIn::from_env();
    if generated::EXPORT_HEADER_VERSION != cudrv::table::HEADER_VERSION {
        return std::ptr::null_mut();
    }
    let p = crate::gpa::entry_of(standin.slot, index);
    if !p.is_null() {
        slot.store(p, Ordering::Release);
    }
    p
}

/// What an export answers when its variant is newer than the emulated version.
#[cold]
pub(crate) fn absent() -> CUresult {
    CUresult::CUDA_ERROR_NOT_FOUND
}

/// The C symbols the `cdylib` exports as the driver API, each with the index (in
/// `cudrv::table::VARIANTS`) of the variant it binds: every function name `cuda.h`
/// declares, the older ABI versions and the per-thread default stream forms included.
pub fn exported_symbols() -> impl Iterator<Item = (&'static CStr, usize)> {
    generated::EXPORTS.iter().copied()
}

/// The other C symbols the `cdylib` exports, as the real `libcuda.so.1` does: the
/// profiler's, the OpenGL, EGL and VDPAU interop entry points, and the driver's private
/// names (their answers: the stand-in's crate docs, "Beyond cuda.h").
pub fn exported_symbols_beyond_cuda_h() -> impl Iterator<Item = &'static CStr> {
    crate::interop::exported_names()
}
