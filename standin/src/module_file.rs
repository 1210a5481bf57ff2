//! Kernel images from files, and `cuModuleLoadFatBinary`: `cuModuleLoad`,
//! `cuLibraryLoadFromFile` (and `cuLinkAddFile`, in `linker.rs`) read the file whole and
//! load it as the data forms load an image (PTX, a fatbin's PTX, a fake image; a cubin is
//! refused: `model/fatbin.rs`).

use std::ffi::{c_char, c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{non_null, status};
use crate::linker::{jit_slots, read_file};
use crate::model::image::Image;
use crate::model::link::JitSlots;
use crate::module::{load_library_with, load_module_with};
use crate::world::World;

/// `cuModuleLoad`: the module of the image in file `fname` (see `cuModuleLoadData`).
pub(crate) unsafe fn cu_module_load(w: &World, module: *mut CUmodule, fname: *const c_char) -> CUresult {
    let r = non_null(module).and_then(|()| {
        // SAFETY: the program's path, NUL-terminated.
        let bytes = unsafe { read_file(fname) }?;
        load_module_with(w, module, &JitSlots::default(), |max_isa| Image::from_bytes(&bytes, max_isa))
    });
    status(r)
}

/// `cuModuleLoadFatBinary`: as `cuModuleLoadData` (a real driver takes any image here too:
/// PTX, a cubin or a fatbin).
pub(crate) unsafe fn cu_module_load_fat_binary(w: &World, module: *mut CUmodule, image: *const c_void) -> CUresult {
    // SAFETY: the program's image, as for cuModuleLoadData.
    unsafe { crate::module::cu_module_load_data(w, module, image) }
}

/// `cuLibraryLoadFromFile`: the library of the image in file `path` (see
/// `cuLibraryLoadData`).
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_library_load_from_file(
    w: &World,
    library: *mut CUlibrary,
    path: *const c_char,
    jit_options: *mut CUjit_option,
    jit_values: *mut *mut c_void,
    num_jit: c_uint,
    _lib_options: *mut CUlibraryOption,
    _lib_values: *mut *mut c_void,
    _num_lib: c_uint,
) -> CUresult {
    let r = non_null(library).and_then(|()| {
        // SAFETY: the program passes `num_jit` options and values.
        let jit = unsafe { jit_slots(num_jit, jit_options, jit_values) }?;
        // SAFETY: the program's path, NUL-terminated.
        let bytes = unsafe { read_file(path) }?;
        load_library_with(w, library, &jit, |max_isa| Image::from_bytes(&bytes, max_isa))
    });
    status(r)
}
