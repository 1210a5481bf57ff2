//! Module globals: `cuModuleGetGlobal`. A global of a fake image (`global NAME SIZE`) is
//! device memory made, zeroed, the first time it is asked for, in the current context; it
//! is listed in the ledger as a device allocation until its module is unloaded. A name
//! the image does not have is CUDA_ERROR_NOT_FOUND (driver-facts.md, "Edge cases").

use std::ffi::c_char;

use cudrv::sys::*;

use crate::entry::{from_ptr, status, write};
use crate::model::memory::AllocationKind;
use crate::model::memory::Owner;
use crate::module;
use crate::run::lock::lock;
use crate::world::World;

fn get_global(
    w: &World,
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    hmod: CUmodule,
    name: *const c_char,
) -> Result<(), CUresult> {
    // facts (conformance): a missing global writes 0 and 0.
    if !dptr.is_null() {
        write(dptr, 0)?;
    }
    if !bytes.is_null() {
        write(bytes, 0)?;
    }
    let c = w.contexts.current()?;
    let name = module::name_of(name)?;
    let m = from_ptr(hmod);
    let size = module::global_size(w, m, &name)?;
    let address = {
        let mut g = lock(&w.globals);
        match g.get(&(m, name.clone())) {
            Some(&a) => a,
            None => {
                let a = lock(&w.memory).alloc(size.max(1), AllocationKind::Device, None, Owner::of(&c))?;
                g.insert((m, name), a);
                a
            }
        }
    };
    if !dptr.is_null() {
        write(dptr, address)?;
    }
    if !bytes.is_null() {
        write(bytes, size)?;
    }
    Ok(())
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
