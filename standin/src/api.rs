//! The registration hub: `cuInit`, the per-slot entry points, and the lookup of every
//! emulated variant in the modules that implement them. Every other variant gets its
//! generated stub (CUDA_ERROR_NOT_SUPPORTED).
//!
//! Behaviour follows `docs/driver-facts.md` (cited as "facts").

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{self, register};
use crate::{
    context_api, device, errors, event, faults, gpa, graph, linker, memory_api, module, pool, primary, stream,
    user_object,
};

pub(crate) unsafe extern "C" fn cu_init(flags: c_uint) -> CUresult {
    if let Some(s) = faults::take("cuInit") {
        return s;
    }
    if entry::shut_down() {
        return CUresult::CUDA_ERROR_DEINITIALIZED;
    }
    if let Err(s) = crate::callback::permitted() {
        return s;
    }
    // facts: cuInit(7) -> CUDA_ERROR_INVALID_VALUE; cuInit(0) -> SUCCESS.
    if flags != 0 {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    entry::set_initialized();
    CUresult::CUDA_SUCCESS
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

register! {
    cuInit_v2000: PFN_cuInit_v2000 => cu_init,
    cuGetErrorName_v6000: PFN_cuGetErrorName_v6000 => errors::cu_get_error_name,
    cuGetErrorString_v6000: PFN_cuGetErrorString_v6000 => errors::cu_get_error_string,
}

/// The implementation of the variant `ident`, if the stand-in emulates it.
pub(crate) fn implemented(ident: &str) -> Option<*mut c_void> {
    let modules: &[fn(&str) -> Option<*mut c_void>] = &[
        lookup,
        device::lookup,
        primary::lookup,
        context_api::lookup,
        stream::lookup,
        event::lookup,
        memory_api::lookup,
        pool::lookup,
        module::lookup,
        crate::launch::lookup,
        linker::lookup,
        graph::lookup,
        crate::graph_exec::lookup,
        user_object::lookup,
        crate::host_memory::lookup,
        crate::copy::lookup,
        crate::copy_any::lookup,
        crate::ipc::lookup,
        crate::peer::lookup,
        crate::capture_api::lookup,
        crate::graph_add::lookup,
        crate::ctx_query::lookup,
        crate::stream_query::lookup,
        crate::pci::lookup,
        crate::pointer::lookup,
        crate::func_attr::lookup,
        crate::pool_attr::lookup,
        crate::global::lookup,
        crate::coop::lookup,
    ];
    modules.iter().find_map(|m| m(ident))
}

#[cfg(test)]
mod tests {
    use cudrv::table::{NAMES, VARIANTS};

    use super::implemented;

    /// cudrv's unversioned names bind the newest variant with cuda.h's prototype (and, with
    /// the per-thread option, the newest such `_ptds`/`_ptsz` one): when the stand-in
    /// emulates a name, it must emulate every variant the name may bind.
    #[test]
    fn every_candidate_of_an_emulated_name_is_emulated() {
        let ident = |i: &usize| VARIANTS.get(*i).map_or("", |v| v.ident);
        let mut emulated = 0;
        for name in NAMES.iter() {
            let all: Vec<&str> = name.candidates.iter().chain(name.per_thread_candidates).map(ident).collect();
            if all.iter().any(|v| implemented(v).is_some()) {
                emulated += 1;
                let missing: Vec<_> = all.iter().filter(|v| implemented(v).is_none()).collect();
                assert!(missing.is_empty(), "{}: {missing:?}", name.name);
            }
        }
        assert!(emulated >= 86, "{emulated}");
    }
}
