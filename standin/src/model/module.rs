//! Libraries, modules, kernels and functions of a world (`module.rs` has the rules).

use std::collections::{BTreeMap, BTreeSet};

use cudrv::sys::CUresult;

use crate::model::handles::{self, Registry};
use crate::model::image::Image;

/// A module.
pub(crate) struct Module {
    pub(crate) image: Image,
    /// Function handle of each kernel asked for.
    pub(crate) functions: BTreeMap<String, u64>,
    /// The library it belongs to (it is unloaded with it).
    pub(crate) library: Option<u64>,
}

/// A library.
pub(crate) struct Library {
    pub(crate) image: Image,
    /// Why its image cannot be used (it was accepted anyway: loading is lazy), reported
    /// when a kernel or its module is asked for.
    pub(crate) refused: Option<CUresult>,
    /// Kernel handle of each kernel asked for.
    pub(crate) kernels: BTreeMap<String, u64>,
    pub(crate) module: Option<u64>,
}

/// A world's modules, libraries, functions and kernels.
pub(crate) struct Modules {
    pub(crate) modules: Registry<Module>,
    pub(crate) libraries: Registry<Library>,
    /// Every live function: its module and kernel name.
    pub(crate) functions: BTreeMap<u64, (u64, String)>,
    /// Every live kernel: its library and name.
    pub(crate) kernels: BTreeMap<u64, (u64, String)>,
    /// Functions handed out by `cuModuleEnumerateFunctions` under lazy loading and not
    /// loaded since (`cuFuncLoad` or `cuModuleGetFunction` loads one). Handles are never
    /// reused, so an entry of an unloaded module is harmless.
    pub(crate) unloaded: BTreeSet<u64>,
    /// The kernels of unloaded libraries, with their library: `cuKernelGetLibrary` still
    /// answers it, as the driver does (`module_query.kernel_get_library_unloaded`).
    pub(crate) orphans: BTreeMap<u64, u64>,
}

impl Modules {
    /// None.
    pub(crate) const fn new() -> Modules {
        Modules {
            modules: Registry::new("module", CUresult::CUDA_ERROR_INVALID_HANDLE),
            libraries: Registry::new("library", CUresult::CUDA_ERROR_INVALID_HANDLE),
            functions: BTreeMap::new(),
            kernels: BTreeMap::new(),
            unloaded: BTreeSet::new(),
            orphans: BTreeMap::new(),
        }
    }

    /// The function handle of `name` in `module`: CUDA_ERROR_NOT_FOUND if it has none.
    pub(crate) fn function(&mut self, module: u64, name: &str) -> Result<u64, CUresult> {
        let m = self.modules.get_mut(module)?;
        if !m.image.kernels.iter().any(|k| k == name) {
            return Err(CUresult::CUDA_ERROR_NOT_FOUND);
        }
        let f = *m.functions.entry(name.to_string()).or_insert_with(handles::fresh);
        self.functions.insert(f, (module, name.to_string()));
        self.unloaded.remove(&f);
        Ok(f)
    }

    /// The function handles of the first `max` kernels of `module`, in the image's order;
    /// under lazy loading a handle made now is not loaded (one asked for before keeps its
    /// state). CUDA_ERROR_INVALID_HANDLE for another handle; nothing changes on error.
    pub(crate) fn enumerate_functions(&mut self, module: u64, max: usize, lazy: bool) -> Result<Vec<u64>, CUresult> {
        let m = self.modules.get_mut(module)?;
        let mut out = Vec::new();
        for name in m.image.kernels.iter().take(max) {
            let made = !m.functions.contains_key(name);
            let f = *m.functions.entry(name.clone()).or_insert_with(handles::fresh);
            self.functions.insert(f, (module, name.clone()));
            if made && lazy {
                self.unloaded.insert(f);
            }
            out.push(f);
        }
        Ok(out)
    }

    /// The kernel handles of the first `max` kernels of `library`, in the image's order
    /// (the same handle `cuLibraryGetKernel` gives for the name): CUDA_ERROR_INVALID_HANDLE
    /// for another handle, the reason for a library whose image cannot be used; nothing
    /// changes on error.
    pub(crate) fn enumerate_kernels(&mut self, library: u64, max: usize) -> Result<Vec<u64>, CUresult> {
        let lib = self.libraries.get_mut(library)?;
        if let Some(e) = lib.refused {
            return Err(e);
        }
        let mut out = Vec::new();
        // The driver enumerated a library's two kernels last declared first
        // (`module_query.library_enumerate_same_as_get`; a module's in order).
        for name in lib.image.kernels.iter().rev().take(max) {
            let k = *lib.kernels.entry(name.clone()).or_insert_with(handles::fresh);
            self.kernels.insert(k, (library, name.clone()));
            out.push(k);
        }
        Ok(out)
    }

    /// The module of `library`, made on first use.
    pub(crate) fn library_module(&mut self, library: u64) -> Result<u64, CUresult> {
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

    /// Unloads `module` and its functions (its globals are the caller's: see
    /// `lifecycle::unload_module`).
    pub(crate) fn unload_module(&mut self, module: u64) -> Result<(), CUresult> {
        self.modules.remove(module)?;
        self.functions.retain(|_, (m, _)| *m != module);
        let live = &self.functions;
        self.unloaded.retain(|f| live.contains_key(f));
        Ok(())
    }
}
