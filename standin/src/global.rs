//! Module and library globals: `cuModuleGetGlobal`, `cuLibraryGetGlobal`,
//! `cuLibraryGetManaged`. A global of an image (a fake image's `global NAME SIZE` or
//! `managed NAME SIZE`, a PTX image's module-scope `.global` and `.const` variables) is
//! device memory (managed memory for a `.managed` one) made the first time it is asked for, or when a kernel of its module is
//! launched (zeroed, then its PTX initialiser written, addresses of other globals
//! included), in the current context; the PTX executor reads and writes the same memory.
//! It is listed in the ledger as a device allocation until its module is unloaded. A library's globals are those of its module (one for
//! every context: a real driver has one per context). A name the image does not have is
//! CUDA_ERROR_NOT_FOUND (driver-facts.md, "Edge cases").

use std::ffi::c_char;

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, write};
use crate::model::image::{Global, Ptx};
use crate::model::memory::AllocationKind;
use crate::model::memory::Owner;
use crate::module;
use crate::run::lock::lock;
use crate::world::World;

/// The address and size of global `name` of `module` (made in `owner` the first time);
/// with `managed`, CUDA_ERROR_NOT_FOUND for a global that is not managed.
fn find(w: &World, module: u64, name: &str, owner: Owner, managed: bool) -> Result<(u64, usize), CUresult> {
    let global = module::global_of(w, module, name)?;
    if managed && !global.managed {
        return Err(CUresult::CUDA_ERROR_NOT_FOUND);
    }
    let a = make(w, module, name, owner)?;
    Ok((a, global.size))
}

/// The address of global `name` of `module`, made the first time (zeroed, its initialiser
/// written; the globals its initialiser takes the address of are made too).
fn make(w: &World, module: u64, name: &str, owner: Owner) -> Result<u64, CUresult> {
    let mut g = lock(&w.globals);
    if let Some(&a) = g.get(&(module, name.to_string())) {
        return Ok(a);
    }
    let mut made: Vec<(u64, Global)> = Vec::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        if g.contains_key(&(module, n.clone())) {
            continue;
        }
        let global = module::global_of(w, module, &n)?;
        let size = global.size.max(1);
        // A `.managed` global (`__managed__`) is managed memory: the host reads and writes
        // it through its address, as through cuMemAllocManaged's.
        let a = if global.managed {
            let a = lock(&w.memory).alloc_managed(size, owner)?;
            lock(&w.managed).add(a, size, CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0);
            a
        } else {
            lock(&w.memory).alloc(size, AllocationKind::Device, None, owner)?
        };
        g.insert((module, n), a);
        todo.extend(global.relocations.iter().map(|(_, target, _)| target.clone()));
        made.push((a, global));
    }
    let mut memory = lock(&w.memory);
    for (a, global) in &made {
        let mut init = global.init.clone();
        for (offset, target, add) in &global.relocations {
            let at = g.get(&(module, target.clone())).copied().unwrap_or(0).wrapping_add(*add as u64);
            if let Some(slot) = init.get_mut(*offset..offset.saturating_add(8)) {
                slot.copy_from_slice(&at.to_le_bytes());
            }
        }
        if !init.is_empty() {
            // A fresh allocation at least as large as its initialiser.
            let _ = memory.copy_to_device(*a, init.as_ptr(), init.len().min(global.size));
        }
    }
    g.get(&(module, name.to_string())).copied().ok_or(CUresult::CUDA_ERROR_NOT_FOUND)
}

/// The address of every global of the PTX `ptx` of `module`, in the order the executor
/// takes them (made the first time, in `owner`), for a launch of one of its kernels.
pub(crate) fn bind(w: &World, module: u64, ptx: &Ptx, owner: Owner) -> Result<Vec<u64>, CUresult> {
    ptx.module.globals().iter().map(|g| make(w, module, &g.name, owner)).collect()
}

/// Writes the answer; either out-pointer may be null.
fn answer(dptr: *mut CUdeviceptr, bytes: *mut usize, (address, size): (u64, usize)) -> Result<(), CUresult> {
    if !dptr.is_null() {
        write(dptr, address)?;
    }
    if !bytes.is_null() {
        write(bytes, size)?;
    }
    Ok(())
}

fn get_global(
    w: &World,
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    hmod: CUmodule,
    name: *const c_char,
) -> Result<(), CUresult> {
    // facts (conformance): a missing global writes 0 and 0.
    answer(dptr, bytes, (0, 0))?;
    let c = w.contexts.current()?;
    let name = module::name_of(name)?;
    let found = find(w, from_ptr(hmod), &name, Owner::of(&c), false)?;
    answer(dptr, bytes, found)
}

/// `cuModuleGetGlobal`: either out-pointer may be null.
pub(crate) unsafe fn cu_module_get_global(
    w: &World,
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    hmod: CUmodule,
    name: *const c_char,
) -> CUresult {
    status(get_global(w, dptr, bytes, hmod, name))
}

/// `cuLibraryGetGlobal`: needs a current context (CUDA_ERROR_INVALID_CONTEXT, as the H200
/// answers); a name the library does not have is CUDA_ERROR_NOT_FOUND with the
/// out-values left as they were (driver-facts.md).
pub(crate) unsafe fn cu_library_get_global(
    w: &World,
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        let c = w.contexts.current()?;
        let name = module::name_of(name)?;
        let m = module::library_module(w, from_ptr(library))?;
        let found = find(w, m, &name, Owner::of(&c), false)?;
        answer(dptr, bytes, found)
    });
    status(r)
}

/// `cuLibraryGetManaged`: a managed global (`__managed__`); CUDA_ERROR_NOT_FOUND for one
/// that is not managed or a name the library lacks, with the out-values left as they were.
/// Needs no current context (as on the H200); made without one, it is owned by device 0.
pub(crate) unsafe fn cu_library_get_managed(
    w: &World,
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        let owner = w.contexts.current().map_or(Owner { ctx: 0, device: 0 }, |c| Owner::of(&c));
        let name = module::name_of(name)?;
        let m = module::library_module(w, from_ptr(library))?;
        let found = find(w, m, &name, owner, true)?;
        answer(dptr, bytes, found)
    });
    status(r)
}
