//! Libraries, modules, kernels and functions of a world (`module.rs` has the rules).

use std::collections::BTreeMap;

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
}

impl Modules {
    /// None.
    pub(crate) const fn new() -> Modules {
        Modules {
            modules: Registry::new("module", CUresult::CUDA_ERROR_INVALID_HANDLE),
            libraries: Registry::new("library", CUresult::CUDA_ERROR_INVALID_HANDLE),
            functions: BTreeMap::new(),
            kernels: BTreeMap::new(),
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
        Ok(f)
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
        Ok(())
    }
}
