//! Libraries, modules, kernels and functions over fake images and PTX (`image.rs`: PTX runs
//! on the executor, or a registered host implementation of the same name).
//!
//! A library has one module (made by the first `cuLibraryGetModule` or
//! `cuKernelGetFunction`, unloaded with the library). A kernel (`CUkernel`) and a function
//! (`CUfunction`) handle is the same for every request of the same name. Unloading a
//! library or module invalidates its kernels and functions.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_uint, c_void, CStr};
use std::sync::Arc;

use cudrv::sys::*;

use std::time::Instant;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::linker::{answer_cached_jit, answer_jit, jit_slots};
use crate::model::image::{Code, Global, Image, Ptx, Refused};
use crate::model::link::JitSlots;
use crate::model::module::{Library, Module};
use crate::run::kernels::HostKernel;
use crate::run::lock::lock;
use crate::world::World;

/// Where a kernel handle's globals live: its module, or its library (whose module is made
/// when a launch needs it).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Home {
    Module(u64),
    Library(u64),
}

/// What runs a kernel: its host implementation, or its PTX on the executor.
#[derive(Clone, Debug)]
pub(crate) enum Runs {
    Host(Arc<HostKernel>),
    Ptx(Ptx, Home),
}

/// The kernel name of a function or kernel handle (`cuLaunchKernel` accepts a `CUkernel`
/// cast to `CUfunction`, as a real driver does), and what runs it (nothing for a kernel of
/// a fake image): CUDA_ERROR_INVALID_HANDLE for another handle.
pub(crate) fn kernel_of(w: &World, f: u64) -> Result<(String, Option<Runs>), CUresult> {
    let s = lock(&w.modules);
    let invalid = CUresult::CUDA_ERROR_INVALID_HANDLE;
    let (image, name, home) = match (s.functions.get(&f), s.kernels.get(&f)) {
        (Some((m, name)), _) => (&s.modules.get(*m)?.image, name, Home::Module(*m)),
        (None, Some((l, name))) => (&s.libraries.get(*l)?.image, name, Home::Library(*l)),
        (None, None) => return Err(invalid),
    };
    let runs = match image.code.get(name) {
        Some(Code::Host(h)) => Some(Runs::Host(Arc::clone(h))),
        Some(Code::Ptx(i)) => image.ptx.get(*i).map(|p| Runs::Ptx(p.clone(), home)),
        None => None,
    };
    Ok((name.clone(), runs))
}

/// What the PTX of the kernel of handle `f` declares (registers, static shared and local
/// memory), if the executor runs it.
pub(crate) fn ptx_info(w: &World, f: u64) -> Option<cudrv_ptx::KernelInfo> {
    match kernel_of(w, f).ok()? {
        (name, Some(Runs::Ptx(p, _))) => p.module.kernel_info(&name),
        _ => None,
    }
}

/// The module of a kernel's home (a library's is made on first use).
pub(crate) fn home_module(w: &World, home: Home) -> Result<u64, CUresult> {
    match home {
        Home::Module(m) => Ok(m),
        Home::Library(l) => library_module(w, l),
    }
}

/// The name at `name`: CUDA_ERROR_INVALID_VALUE for null or non-UTF-8.
fn name_arg(name: *const c_char) -> Result<String, CUresult> {
    non_null(name)?;
    // SAFETY: a non-null, NUL-terminated string from the caller.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str().map(str::to_string).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// Loads a module, answering the JIT options `jit` asks for.
fn load_module(w: &World, module: *mut CUmodule, image: *const c_void, jit: &JitSlots) -> Result<(), CUresult> {
    // SAFETY: the program's image, NUL-terminated if it is text.
    load_module_with(w, module, jit, |max_isa| unsafe { Image::read(image, max_isa) })
}

/// Loads a module from the image `read` gives (called with the emulated driver's newest
/// PTX ISA once the arguments are checked), answering the JIT options `jit` asks for.
/// Nothing is created on error.
pub(crate) fn load_module_with(
    w: &World,
    module: *mut CUmodule,
    jit: &JitSlots,
    read: impl FnOnce((u32, u32)) -> Result<Image, Refused>,
) -> Result<(), CUresult> {
    let started = Instant::now();
    non_null(module)?;
    w.contexts.current()?;
    let image = match read(w.max_isa()) {
        Ok(image) => image,
        Err(refused) => {
            // SAFETY: the option values stay the program's for the call.
            unsafe { answer_jit(jit, "", &refused.log, started) };
            return Err(refused.code);
        }
    };
    let h = lock(&w.modules).modules.insert(Module { image, functions: BTreeMap::new(), library: None });
    // SAFETY: as above.
    unsafe { answer_cached_jit(jit) };
    write(module, to_ptr(h))
}

/// `cuModuleLoadData`: a fake image, or PTX (see `image.rs`): CUDA_ERROR_INVALID_PTX for PTX
/// the executor cannot load (an unknown or unsupported instruction, a parse error, a
/// `.target` above sm_90), CUDA_ERROR_UNSUPPORTED_PTX_VERSION for a `.version` newer than
/// the emulated driver's PTX ISA, CUDA_ERROR_INVALID_IMAGE for anything else.
pub(crate) unsafe fn cu_module_load_data(w: &World, module: *mut CUmodule, image: *const c_void) -> CUresult {
    status(load_module(w, module, image, &JitSlots::default()))
}

/// `cuModuleLoadDataEx`: as `cuModuleLoadData`, writing the logs and the wall time the
/// JIT options ask for (`linker.rs`).
pub(crate) unsafe fn cu_module_load_data_ex(
    w: &World,
    module: *mut CUmodule,
    image: *const c_void,
    num_options: c_uint,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the program passes `num_options` options and values.
    let r = unsafe { jit_slots(num_options, options, values) };
    status(r.and_then(|jit| load_module(w, module, image, &jit)))
}

/// `cuModuleUnload`: a library's module is unloaded with its library
/// (CUDA_ERROR_INVALID_HANDLE here); unloading twice: CUDA_ERROR_INVALID_HANDLE and a
/// double destroy in the ledger.
pub(crate) unsafe fn cu_module_unload(w: &World, module: CUmodule) -> CUresult {
    let h = from_ptr(module);
    let s = lock(&w.modules);
    if s.modules.get(h).is_ok_and(|m| m.library.is_some()) {
        return CUresult::CUDA_ERROR_INVALID_HANDLE;
    }
    drop(s);
    status(crate::lifecycle::unload_module(w, h))
}

/// `cuModuleGetFunction`: CUDA_ERROR_NOT_FOUND for a name the image does not have.
pub(crate) unsafe fn cu_module_get_function(
    w: &World,
    f: *mut CUfunction,
    module: CUmodule,
    name: *const c_char,
) -> CUresult {
    let r = non_null(f).and_then(|()| {
        // facts (conformance): a name the module lacks leaves the function NULL.
        write(f, std::ptr::null_mut())?;
        let name = name_arg(name)?;
        let h = lock(&w.modules).function(from_ptr(module), &name)?;
        write(f, to_ptr(h))
    });
    status(r)
}

/// `cuLibraryLoadData`: the JIT options are answered as `cuModuleLoadDataEx` answers
/// them; the library options are ignored. Needs no current context. PTX with an unknown
/// instruction is CUDA_ERROR_INVALID_PTX (with the error log); any other non-null image is
/// accepted, as a real driver loading lazily does (driver-facts.md, "Edge cases": garbage
/// bytes succeeded); one the stand-in cannot run answers CUDA_ERROR_INVALID_IMAGE when a
/// kernel or the module is asked for (its error log is written now).
#[allow(clippy::too_many_arguments)] // the C signature
pub(crate) unsafe fn cu_library_load_data(
    w: &World,
    library: *mut CUlibrary,
    code: *const c_void,
    jit_options: *mut CUjit_option,
    jit_values: *mut *mut c_void,
    num_jit: c_uint,
    _lib_options: *mut CUlibraryOption,
    _lib_values: *mut *mut c_void,
    _num_lib: c_uint,
) -> CUresult {
    let r = non_null(code).and_then(|()| {
        // SAFETY: the program passes `num_jit` options and values.
        let jit = unsafe { jit_slots(num_jit, jit_options, jit_values) }?;
        // SAFETY: the program's image, NUL-terminated if it is text.
        load_library_with(w, library, &jit, |max_isa| unsafe { Image::read(code, max_isa) })
    });
    status(r)
}

/// Loads a library from the image `read` gives (called with the emulated driver's newest
/// PTX ISA), answering the JIT options `jit` asks for: an image the stand-in cannot run is
/// accepted and refused when a kernel or the module is asked for, PTX the executor cannot
/// load is refused now (see `cuLibraryLoadData`). Nothing is created on error.
pub(crate) fn load_library_with(
    w: &World,
    library: *mut CUlibrary,
    jit: &JitSlots,
    read: impl FnOnce((u32, u32)) -> Result<Image, Refused>,
) -> Result<(), CUresult> {
    let started = Instant::now();
    non_null(library).and_then(|()| {
        let (image, refused) = match read(w.max_isa()) {
            Ok(image) => {
                // SAFETY: the option values stay the program's for the call.
                unsafe { answer_cached_jit(jit) };
                (image, None)
            }
            Err(e) => {
                // SAFETY: as above.
                unsafe { answer_jit(jit, "", &e.log, started) };
                if e.code == CUresult::CUDA_ERROR_INVALID_PTX {
                    return Err(e.code);
                }
                (Image::default(), Some(e.code))
            }
        };
        let lib = Library { image, refused, kernels: BTreeMap::new(), module: None };
        let h = lock(&w.modules).libraries.insert(lib);
        write(library, to_ptr(h))
    })
}

/// `cuLibraryUnload`: with its module, kernels and functions. Twice:
/// CUDA_ERROR_INVALID_HANDLE and a double destroy in the ledger.
pub(crate) unsafe fn cu_library_unload(w: &World, library: CUlibrary) -> CUresult {
    let h = from_ptr(library);
    let mut s = lock(&w.modules);
    let r = s.libraries.remove(h).map(|lib| {
        let gone: Vec<u64> = s.kernels.iter().filter(|(_, (l, _))| *l == h).map(|(k, _)| *k).collect();
        for k in gone {
            s.kernels.remove(&k);
            s.orphans.insert(k, h);
        }
        lib.module
    });
    drop(s);
    status(r.and_then(|m| m.map_or(Ok(()), |m| crate::lifecycle::unload_module(w, m))))
}

/// `cuLibraryGetKernel`: CUDA_ERROR_NOT_FOUND for a name the image does not have.
pub(crate) unsafe fn cu_library_get_kernel(
    w: &World,
    kernel: *mut CUkernel,
    library: CUlibrary,
    name: *const c_char,
) -> CUresult {
    let r = non_null(kernel).and_then(|()| {
        let name = name_arg(name)?;
        let h = from_ptr(library);
        let mut s = lock(&w.modules);
        let lib = s.libraries.get_mut(h)?;
        if let Some(e) = lib.refused {
            return Err(e);
        }
        if !lib.image.kernels.contains(&name) {
            return Err(CUresult::CUDA_ERROR_NOT_FOUND);
        }
        let k = *lib.kernels.entry(name.clone()).or_insert_with(crate::model::handles::fresh);
        s.kernels.insert(k, (h, name));
        write(kernel, to_ptr(k))
    });
    status(r)
}

pub(crate) unsafe fn cu_library_get_module(w: &World, module: *mut CUmodule, library: CUlibrary) -> CUresult {
    let r = non_null(module).and_then(|()| {
        w.contexts.current()?;
        let m = lock(&w.modules).library_module(from_ptr(library))?;
        write(module, to_ptr(m))
    });
    status(r)
}

/// `cuKernelGetFunction`: the function of the kernel in its library's module.
pub(crate) unsafe fn cu_kernel_get_function(w: &World, f: *mut CUfunction, kernel: CUkernel) -> CUresult {
    let r = non_null(f).and_then(|()| {
        w.contexts.current()?;
        let mut s = lock(&w.modules);
        let (library, name) = s.kernels.get(&from_ptr(kernel)).cloned().ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let m = s.library_module(library)?;
        let h = s.function(m, &name)?;
        write(f, to_ptr(h))
    });
    status(r)
}

/// A kernel name as a C string that lives as long as the process (names are interned: a
/// program has few).
fn interned(w: &World, name: &str) -> Result<*const c_char, CUresult> {
    let mut names = lock(&w.names);
    if let Some(c) = names.get(name) {
        return Ok(c.as_ptr());
    }
    let c: &'static CStr =
        Box::leak(std::ffi::CString::new(name).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?.into_boxed_c_str());
    names.insert(name.to_string(), c);
    Ok(c.as_ptr())
}

/// `cuFuncGetName`: the kernel name of a function; CUDA_ERROR_INVALID_VALUE for a NULL
/// out-pointer or function (as the H200 answers), CUDA_ERROR_INVALID_HANDLE for another.
pub(crate) unsafe fn cu_func_get_name(w: &World, name: *mut *const c_char, f: CUfunction) -> CUresult {
    let r = non_null(name).and_then(|()| {
        non_null(f)?;
        let n = lock(&w.modules).functions.get(&from_ptr(f)).map(|(_, n)| n.clone());
        write(name, interned(w, &n.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?)?)
    });
    status(r)
}

/// `cuKernelGetName`: the name of a library's kernel; CUDA_ERROR_INVALID_VALUE for a NULL
/// out-pointer or kernel (as the H200 answers), CUDA_ERROR_INVALID_HANDLE for another.
pub(crate) unsafe fn cu_kernel_get_name(w: &World, name: *mut *const c_char, k: CUkernel) -> CUresult {
    let r = non_null(name).and_then(|()| {
        non_null(k)?;
        let n = lock(&w.modules).kernels.get(&from_ptr(k)).map(|(_, n)| n.clone());
        write(name, interned(w, &n.ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?)?)
    });
    status(r)
}

/// `cuLibraryGetKernelCount`: the number of kernels in the library's image.
pub(crate) unsafe fn cu_library_get_kernel_count(
    w: &World,
    count: *mut std::ffi::c_uint,
    library: CUlibrary,
) -> CUresult {
    let r = non_null(count).and_then(|()| {
        let n = lock(&w.modules).libraries.get(from_ptr(library))?.image.kernels.len();
        write(count, std::ffi::c_uint::try_from(n).unwrap_or(std::ffi::c_uint::MAX))
    });
    status(r)
}

/// The global `name` of `module`: CUDA_ERROR_INVALID_HANDLE for another handle,
/// CUDA_ERROR_INVALID_VALUE for a texture or surface reference, CUDA_ERROR_NOT_FOUND for a
/// name the image does not have.
pub(crate) fn global_of(w: &World, module: u64, name: &str) -> Result<Global, CUresult> {
    let s = lock(&w.modules);
    let m = s.modules.get(module)?;
    if m.image.texrefs.iter().chain(&m.image.surfrefs).any(|r| r == name) {
        // A `.texref`/`.surfref` is no global: the H200 answers INVALID_VALUE
        // (texref.module_texref_is_no_global).
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    m.image.globals.iter().find(|g| g.name == name).cloned().ok_or(CUresult::CUDA_ERROR_NOT_FOUND)
}

/// The module of `library` (made on first use; unloaded with the library).
pub(crate) fn library_module(w: &World, library: u64) -> Result<u64, CUresult> {
    lock(&w.modules).library_module(library)
}

/// The parameter layout of a function or kernel handle, if its image has one:
/// CUDA_ERROR_INVALID_HANDLE for another handle.
pub(crate) fn params_of(w: &World, f: u64) -> Result<Option<Vec<(usize, usize)>>, CUresult> {
    let s = lock(&w.modules);
    let (image, name) = match (s.functions.get(&f), s.kernels.get(&f)) {
        (Some((m, name)), _) => (&s.modules.get(*m)?.image, name),
        (None, Some((l, name))) => (&s.libraries.get(*l)?.image, name),
        (None, None) => return Err(CUresult::CUDA_ERROR_INVALID_HANDLE),
    };
    Ok(image.params.get(name).cloned())
}

/// Whether `k` is a kernel (`CUkernel`) handle.
pub(crate) fn is_kernel(w: &World, k: u64) -> bool {
    lock(&w.modules).kernels.contains_key(&k)
}

/// The name at `name` (see `name_arg`), for other modules.
pub(crate) fn name_of(name: *const c_char) -> Result<String, CUresult> {
    name_arg(name)
}
