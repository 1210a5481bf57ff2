//! Module globals: `cuModuleGetGlobal`. A global of a fake image (`global NAME SIZE`) is
//! device memory made, zeroed, the first time it is asked for, in the current context; it
//! is listed in the ledger as a device allocation until its module is unloaded. A name
//! the image does not have is CUDA_ERROR_NOT_FOUND (driver-facts.md, "Edge cases").

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::sync::Mutex;

use cudrv::sys::*;

use crate::entry::{from_ptr, lock, status, write};
use crate::ledger::AllocationKind;
use crate::memory::{self, Owner};
use crate::{context, module};

/// The address of each global asked for, by module and name.
static GLOBALS: Mutex<BTreeMap<(u64, String), u64>> = Mutex::new(BTreeMap::new());

/// Frees the globals of an unloaded module.
pub(crate) fn forget_module(module: u64) {
    let mut g = lock(&GLOBALS);
    let gone: Vec<(u64, String)> = g.keys().filter(|(m, _)| *m == module).cloned().collect();
    for key in gone {
        if let Some(address) = g.remove(&key) {
            // Freed once, here: it cannot fail.
            let _ = memory::free(address);
        }
    }
}

fn get_global(dptr: *mut CUdeviceptr, bytes: *mut usize, hmod: CUmodule, name: *const c_char) -> Result<(), CUresult> {
    // facts (conformance): a missing global writes 0 and 0.
    if !dptr.is_null() {
        write(dptr, 0)?;
    }
    if !bytes.is_null() {
        write(bytes, 0)?;
    }
    let c = context::current()?;
    let name = module::name_of(name)?;
    let m = from_ptr(hmod);
    let size = module::global_size(m, &name)?;
    let address = {
        let mut g = lock(&GLOBALS);
        match g.get(&(m, name.clone())) {
            Some(&a) => a,
            None => {
                let a = memory::alloc(size.max(1), AllocationKind::Device, None, Owner::of(&c))?;
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
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    hmod: CUmodule,
    name: *const c_char,
) -> CUresult {
    status(get_global(dptr, bytes, hmod, name))
}
