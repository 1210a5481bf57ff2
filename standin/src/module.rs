//! Libraries, modules, kernels and functions over fake images and PTX with host
//! implementations (`image.rs`).
//!
//! A library has one module (made by the first `cuLibraryGetModule` or
//! `cuKernelGetFunction`, unloaded with the library). A kernel (`CUkernel`) and a function
//! (`CUfunction`) handle is the same for every request of the same name. Unloading a
//! library or module invalidates its kernels and functions.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_uint, c_void, CStr};
use std::sync::{Arc, Mutex};

use cudrv::sys::*;

use crate::context;
use crate::entry::{from_ptr, lock, non_null, status, to_ptr, write};
use crate::handles::{self, Registry};
use crate::image::Image;
use crate::kernels::HostKernel;

struct Module {
    image: Image,
    /// Function handle of each kernel asked for.
    functions: BTreeMap<String, u64>,
    /// The library it belongs to (it is unloaded with it).
    library: Option<u64>,
}

struct Library {
    image: Image,
    /// Why its image cannot be used (it was accepted anyway: loading is lazy), reported
    /// when a kernel or its module is asked for.
    refused: Option<CUresult>,
    /// Kernel handle of each kernel asked for.
    kernels: BTreeMap<String, u64>,
    module: Option<u64>,
}

struct State {
    modules: Registry<Module>,
    libraries: Registry<Library>,
    /// Every live function: its module and kernel name.
    functions: BTreeMap<u64, (u64, String)>,
    /// Every live kernel: its library and name.
    kernels: BTreeMap<u64, (u64, String)>,
}

static STATE: Mutex<State> = Mutex::new(State {
    modules: Registry::new("module", CUresult::CUDA_ERROR_INVALID_HANDLE),
    libraries: Registry::new("library", CUresult::CUDA_ERROR_INVALID_HANDLE),
    functions: BTreeMap::new(),
    kernels: BTreeMap::new(),
});

/// The kernel name of a function or kernel handle (`cuLaunchKernel` accepts a `CUkernel`
/// cast to `CUfunction`, as a real driver does), and its host implementation if its
/// image has one: CUDA_ERROR_INVALID_HANDLE for another handle.
pub(crate) fn kernel_of(f: u64) -> Result<(String, Option<Arc<HostKernel>>), CUresult> {
    let s = lock(&STATE);
    let invalid = CUresult::CUDA_ERROR_INVALID_HANDLE;
    let (image, name) = match (s.functions.get(&f), s.kernels.get(&f)) {
        (Some((m, name)), _) => (&s.modules.get(*m)?.image, name),
        (None, Some((l, name))) => (&s.libraries.get(*l)?.image, name),
        (None, None) => return Err(invalid),
    };
    Ok((name.clone(), image.code.get(name).map(|c| Arc::clone(&c.0))))
}

/// The name at `name`: CUDA_ERROR_INVALID_VALUE for null or non-UTF-8.
fn name_arg(name: *const c_char) -> Result<String, CUresult> {
    non_null(name)?;
    // SAFETY: a non-null, NUL-terminated string from the caller.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str().map(str::to_string).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)
}

impl State {
    /// The function handle of `name` in `module`: CUDA_ERROR_NOT_FOUND if it has none.
    fn function(&mut self, module: u64, name: &str) -> Result<u64, CUresult> {
        let m = self.modules.get_mut(module)?;
        if !m.image.kernels.iter().any(|k| k == name) {
            return Err(CUresult::CUDA_ERROR_NOT_FOUND);
        }
        let f = *m.functions.entry(name.to_string()).or_insert_with(handles::fresh);
        self.functions.insert(f, (module, name.to_string()));
        Ok(f)
    }

    /// The module of `library`, made on first use.
    fn library_module(&mut self, library: u64) -> Result<u64, CUresult> {
        let lib = self.libraries.get(library)?;
        if let Some(e) = lib.refused {
            return Err(e);
        }
        if let Some(m) = lib.module {
            return Ok(m);
        }
        let image = lib.image.clone();
        let m = self.modules.insert(Module { image, functions: BTreeMap::new(), library: Some(library) });
        self.libraries.get_mut(library)?.module = Some(m);
        Ok(m)
    }

    /// Unloads `module`, its functions and its globals.
    fn unload_module(&mut self, module: u64) -> Result<(), CUresult> {
        self.modules.remove(module)?;
        crate::global::forget_module(module);
        self.functions.retain(|_, (m, _)| *m != module);
        Ok(())
    }
}

fn load_module(module: *mut CUmodule, image: *const c_void) -> Result<(), CUresult> {
    non_null(module)?;
    context::current()?;
    // SAFETY: the program's image, NUL-terminated if it is text.
    let image = unsafe { Image::read(image) }?;
    let h = lock(&STATE).modules.insert(Module { image, functions: BTreeMap::new(), library: None });
    write(module, to_ptr(h))
}

/// `cuModuleLoadData`: a fake image, or PTX whose kernels all have host implementations
/// (see `image.rs`); CUDA_ERROR_INVALID_IMAGE otherwise.
pub(crate) unsafe fn cu_module_load_data(module: *mut CUmodule, image: *const c_void) -> CUresult {
    status(load_module(module, image))
}

/// `cuModuleLoadDataEx`: as `cuModuleLoadData`; the JIT options are ignored (nothing is
/// written to their log buffers).
pub(crate) unsafe fn cu_module_load_data_ex(
    module: *mut CUmodule,
    image: *const c_void,
    _num_options: c_uint,
    _options: *mut CUjit_option,
    _values: *mut *mut c_void,
) -> CUresult {
    status(load_module(module, image))
}

/// `cuModuleUnload`: a library's module is unloaded with its library
/// (CUDA_ERROR_INVALID_HANDLE here); unloading twice: CUDA_ERROR_INVALID_HANDLE and a
/// double destroy in the ledger.
pub(crate) unsafe fn cu_module_unload(module: CUmodule) -> CUresult {
    let h = from_ptr(module);
    let mut s = lock(&STATE);
    if s.modules.get(h).is_ok_and(|m| m.library.is_some()) {
        return CUresult::CUDA_ERROR_INVALID_HANDLE;
    }
    status(s.unload_module(h))
}

/// `cuModuleGetFunction`: CUDA_ERROR_NOT_FOUND for a name the image does not have.
pub(crate) unsafe fn cu_module_get_function(f: *mut CUfunction, module: CUmodule, name: *const c_char) -> CUresult {
    let r = non_null(f).and_then(|()| {
        // facts (conformance): a name the module lacks leaves the function NULL.
        write(f, std::ptr::null_mut())?;
        let name = name_arg(name)?;
        let h = lock(&STATE).function(from_ptr(module), &name)?;
        write(f, to_ptr(h))
    });
    status(r)
}

/// `cuLibraryLoadData`: the option arrays are ignored. Needs no current context. Any
/// non-null image is accepted, as a real driver loading lazily does (driver-facts.md,
/// "Edge cases": garbage bytes succeeded); one the stand-in cannot run answers
/// CUDA_ERROR_INVALID_IMAGE when a kernel or the module is asked for.
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_library_load_data(
    library: *mut CUlibrary,
    code: *const c_void,
    _jit_options: *mut CUjit_option,
    _jit_values: *mut *mut c_void,
    _num_jit: c_uint,
    _lib_options: *mut CUlibraryOption,
    _lib_values: *mut *mut c_void,
    _num_lib: c_uint,
) -> CUresult {
    let r = non_null(library).and_then(|()| {
        non_null(code)?;
        // SAFETY: the program's image, NUL-terminated if it is text.
        let (image, refused) = match unsafe { Image::read(code) } {
            Ok(image) => (image, None),
            Err(e) => (Image::default(), Some(e)),
        };
        let lib = Library { image, refused, kernels: BTreeMap::new(), module: None };
        let h = lock(&STATE).libraries.insert(lib);
        write(library, to_ptr(h))
    });
    status(r)
}

/// `cuLibraryUnload`: with its module, kernels and functions. Twice:
/// CUDA_ERROR_INVALID_HANDLE and a double destroy in the ledger.
pub(crate) unsafe fn cu_library_unload(library: CUlibrary) -> CUresult {
    let h = from_ptr(library);
    let mut s = lock(&STATE);
    let r = s.libraries.remove(h).and_then(|lib| {
        s.kernels.retain(|_, (l, _)| *l != h);
        match lib.module {
            Some(m) => s.unload_module(m),
            None => Ok(()),
        }
    });
    status(r)
}

/// `cuLibraryGetKernel`: CUDA_ERROR_NOT_FOUND for a name the image does not have.
pub(crate) unsafe fn cu_library_get_kernel(kernel: *mut CUkernel, library: CUlibrary, name: *const c_char) -> CUresult {
    let r = non_null(kernel).and_then(|()| {
        let name = name_arg(name)?;
        let h = from_ptr(library);
        let mut s = lock(&STATE);
        let lib = s.libraries.get_mut(h)?;
        if let Some(e) = lib.refused {
            return Err(e);
        }
        if !lib.image.kernels.contains(&name) {
            return Err(CUresult::CUDA_ERROR_NOT_FOUND);
        }
        let k = *lib.kernels.entry(name.clone()).or_insert_with(handles::fresh);
        s.kernels.insert(k, (h, name));
        write(kernel, to_ptr(k))
    });
    status(r)
}

pub(crate) unsafe fn cu_library_get_module(module: *mut CUmodule, library: CUlibrary) -> CUresult {
    let r = non_null(module).and_then(|()| {
        context::current()?;
        let m = lock(&STATE).library_module(from_ptr(library))?;
        write(module, to_ptr(m))
    });
    status(r)
}

/// `cuKernelGetFunction`: the function of the kernel in its library's module.
pub(crate) unsafe fn cu_kernel_get_function(f: *mut CUfunction, kernel: CUkernel) -> CUresult {
    let r = non_null(f).and_then(|()| {
        context::current()?;
        let mut s = lock(&STATE);
        let (library, name) = s.kernels.get(&from_ptr(kernel)).cloned().ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let m = s.library_module(library)?;
        let h = s.function(m, &name)?;
        write(f, to_ptr(h))
    });
    status(r)
}

/// A kernel name as a C string that lives as long as the process (names are interned: a
/// program has few).
fn interned(name: &str) -> Result<*const c_char, CUresult> {
    static NAMES: Mutex<BTreeMap<String, &'static CStr>> = Mutex::new(BTreeMap::new());
    let mut names = lock(&NAMES);
    if let Some(c) = names.get(name) {
        return Ok(c.as_ptr());
    }
    let c: &'static CStr =
        Box::leak(std::ffi::CString::new(name).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?.into_boxed_c_str());
    names.insert(name.to_string(), c);
    Ok(c.as_ptr())
}

/// `cuFuncGetName`: the kernel name of a function.
pub(crate) unsafe fn cu_func_get_name(name: *mut *const c_char, f: CUfunction) -> CUresult {
    let r = non_null(name).and_then(|()| {
        let n = lock(&STATE).functions.get(&from_ptr(f)).map(|(_, n)| n.clone());
        write(name, interned(&n.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?)?)
    });
    status(r)
}

/// `cuKernelGetName`: the name of a library's kernel.
pub(crate) unsafe fn cu_kernel_get_name(name: *mut *const c_char, k: CUkernel) -> CUresult {
    let r = non_null(name).and_then(|()| {
        let n = lock(&STATE).kernels.get(&from_ptr(k)).map(|(_, n)| n.clone());
        write(name, interned(&n.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?)?)
    });
    status(r)
}

/// `cuLibraryGetKernelCount`: the number of kernels in the library's image.
pub(crate) unsafe fn cu_library_get_kernel_count(count: *mut std::ffi::c_uint, library: CUlibrary) -> CUresult {
    let r = non_null(count).and_then(|()| {
        let n = lock(&STATE).libraries.get(from_ptr(library))?.image.kernels.len();
        write(count, std::ffi::c_uint::try_from(n).unwrap_or(std::ffi::c_uint::MAX))
    });
    status(r)
}

/// The size of the global `name` of `module`: CUDA_ERROR_INVALID_HANDLE for another
/// handle, CUDA_ERROR_NOT_FOUND for a name the image does not have.
pub(crate) fn global_size(module: u64, name: &str) -> Result<usize, CUresult> {
    let s = lock(&STATE);
    let m = s.modules.get(module)?;
    m.image.globals.iter().find(|(n, _)| n == name).map(|&(_, size)| size).ok_or(CUresult::CUDA_ERROR_NOT_FOUND)
}

/// The name at `name` (see `name_arg`), for other modules.
pub(crate) fn name_of(name: *const c_char) -> Result<String, CUresult> {
    name_arg(name)
}

/// Appends the live modules and libraries.
pub(crate) fn live_handles(out: &mut Vec<(&'static str, u64)>) {
    let s = lock(&STATE);
    s.modules.live_handles(out);
    s.libraries.live_handles(out);
}

/// See [`Registry::forget_destroyed`].
pub(crate) fn forget_destroyed() {
    let mut s = lock(&STATE);
    s.modules.forget_destroyed();
    s.libraries.forget_destroyed();
}
