//! Modules (`cuModuleLoadData`) and their functions.

use std::ffi::{CStr, CString};

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::function_part::Part;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::sys::{CUfunction, CUmodule, CUresult};

kind!(
    /// The module kind: owned by its context, unloaded in it.
    ModuleKind: CUmodule = "Module", owner Context, in its context, release cuModuleUnload
);

/// A loaded module. Clones share it; the last one unloads it (if owned) in its
/// context. Functions from it keep it alive.
#[derive(Clone)]
pub struct Module(pub(crate) Handle<ModuleKind>);
handle_type!(Module: ModuleKind => CUmodule, adopt: &Context, "a module");

kind!(
    /// The function kind: part of its module.
    FunctionKind: CUfunction = "Function", part of Part<Module>, driver |o| o.driver,
    released with cuModuleUnload
);

/// A function of a [`Module`]; keeps the module alive.
#[derive(Clone)]
pub struct Function(pub(crate) Handle<FunctionKind>);
handle_type!(Function: FunctionKind => CUfunction);

/// A C string for a name or text passed to the driver; one with a NUL byte is refused, and
/// so is one whose copy the host cannot allocate (never an abort).
pub(crate) fn c_name(what: &'static str, name: &str) -> Result<CString, InvalidArgument> {
    let shown = || {
        let mut cut: String = name.chars().take(64).collect();
        if cut.len() < name.len() {
            cut.push_str("...");
        }
        cut
    };
    if name.as_bytes().contains(&0) {
        return Err(InvalidArgument::new(what, format!("{:?} contains a NUL byte", shown())));
    }
    let len = name.len();
    let mut bytes = Vec::new();
    // The NUL too, so that `CString::new` does not grow it.
    bytes.try_reserve_exact(len.saturating_add(1)).map_err(|e| {
        InvalidArgument::new(what, format!("a copy of the {len}-byte text (with its NUL) cannot be allocated: {e}"))
    })?;
    bytes.extend_from_slice(name.as_bytes());
    CString::new(bytes).map_err(|_| InvalidArgument::new(what, format!("{:?} contains a NUL byte", shown())))
}

impl Module {
    /// Loads `image` (a cubin, fatbin or NUL-terminated PTX) into `context`. On error
    /// nothing is loaded.
    ///
    /// # Safety
    /// The driver reads the image by its own headers, not by the slice's length: `image`
    /// must be a complete cubin or fatbin, or text that ends with a NUL byte.
    pub unsafe fn load_data(context: &Context, image: &[u8]) -> Result<Module, Error> {
        let pc = context.driver().pc();
        // SAFETY: `raw` is a valid out-pointer; the caller vouches for `image`.
        let create = |raw: &mut CUmodule| unsafe { pc.cuModuleLoadData(raw, image.as_ptr().cast()) };
        Ok(Handle::create_out(context.clone(), context.as_raw(), create).map(Module)?)
    }

    /// The context it was loaded in.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// The function called `name` (`cuModuleGetFunction`). A name with a NUL byte is
    /// refused before any driver call.
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        let name = c_name("Module::function", name)?;
        let raw = (self.0.driver().typed().cuModuleGetFunction(self.live(), &name))
            .map_err(|e| named(e, "function", &name))?;
        Ok(Function(Handle::new(Part::new(self.clone(), self.context().driver()), raw, Ownership::Borrowed)))
    }
}

/// `error` of a lookup by name, with a note naming what was looked for when the driver
/// does not have it (`CUDA_ERROR_NOT_FOUND`: `no kernel named "typo" in it`).
pub(crate) fn named(error: CudaError, what: &str, name: &CStr) -> CudaError {
    if error.code() == CUresult::CUDA_ERROR_NOT_FOUND && error.unresolved().is_none() {
        error.with_note(format!("no {what} named {:?} in it", name.to_string_lossy()))
    } else {
        error
    }
}

impl Function {
    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.0.owner().parent
    }
}
