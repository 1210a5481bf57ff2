//! Modules (`cuModuleLoadData`) and their functions.

use std::ffi::{CStr, CString};

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::{handle_type, Handle, Kind, Ownership};
use crate::resources::launch::Launch;
use crate::resources::stream::Stream;
use crate::sys::{CUcontext, CUfunction, CUmodule};
use crate::table::Call;
use crate::Driver;

/// The module kind: owned by its context.
pub(crate) struct ModuleKind;

impl Kind for ModuleKind {
    type Raw = CUmodule;
    type Owner = Context;
    const NAME: &'static str = "Module";
    fn driver(owner: &Context) -> &'static Driver {
        owner.driver()
    }
    fn addr(raw: CUmodule) -> usize {
        raw as usize
    }
    fn release_call(_: &Context, _: Ownership) -> Call {
        call::cuModuleUnload
    }
    fn release_context(owner: &Context) -> Option<CUcontext> {
        Some(owner.as_raw())
    }
    unsafe fn release(owner: &Context, raw: CUmodule, _: Ownership) -> Result<(), CudaError> {
        // SAFETY: released once; its functions hold clones, so none is left.
        unsafe { owner.driver().pc().cuModuleUnload(raw) }
    }
}

handle_type!(
    /// A loaded module. Clones share it; the last one unloads it (if owned) in its
    /// context. Functions from it keep it alive.
    Module: ModuleKind => CUmodule, adopt: &Context, "a module"
);

/// The function kind: part of its module, never destroyed on its own.
pub(crate) struct FunctionKind;

impl Kind for FunctionKind {
    type Raw = CUfunction;
    type Owner = Module;
    const NAME: &'static str = "Function";
    fn driver(owner: &Module) -> &'static Driver {
        owner.context().driver()
    }
    fn addr(raw: CUfunction) -> usize {
        raw as usize
    }
    fn release_call(_: &Module, _: Ownership) -> Call {
        call::cuModuleUnload
    }
    /// Never called: a function is always held as borrowed from its module.
    unsafe fn release(_: &Module, _: CUfunction, _: Ownership) -> Result<(), CudaError> {
        Ok(())
    }
}

handle_type!(
    /// A function of a [`Module`]; keeps the module alive.
    Function: FunctionKind => CUfunction
);

/// A C string for a name passed to the driver; a name with a NUL byte is refused.
pub(crate) fn c_name(what: &'static str, name: &str) -> Result<CString, InvalidArgument> {
    CString::new(name).map_err(|_| InvalidArgument::new(what, format!("{name:?} contains a NUL byte")))
}

impl Module {
    /// Loads NUL-terminated PTX (or other text the driver accepts) into `context`. On error
    /// nothing is loaded.
    pub fn load_ptx(context: &Context, ptx: &CStr) -> Result<Module, CudaError> {
        // SAFETY: a CStr is NUL-terminated, so the driver reads no further than its end.
        unsafe { Module::load_data(context, ptx.to_bytes_with_nul()) }
    }

    /// Loads `image` (a cubin, fatbin or NUL-terminated PTX) into `context`. On error
    /// nothing is loaded.
    ///
    /// # Safety
    /// The driver reads the image by its own headers, not by the slice's length: `image`
    /// must be a complete cubin or fatbin, or text that ends with a NUL byte.
    pub unsafe fn load_data(context: &Context, image: &[u8]) -> Result<Module, CudaError> {
        let pc = context.driver().pc();
        let create = || {
            let mut raw: CUmodule = std::ptr::null_mut();
            // SAFETY: `raw` is a valid out-pointer; the caller vouches for `image`.
            unsafe { pc.cuModuleLoadData(&mut raw, image.as_ptr().cast()) }?;
            Ok(raw)
        };
        Handle::create_in(context.clone(), context.as_raw(), create).map(Module)
    }

    /// The context it was loaded in.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// The function called `name` (`cuModuleGetFunction`). A name with a NUL byte is
    /// refused before any driver call.
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        let name = c_name("Module::function", name)?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: valid out-pointer and C string; the module is live.
        unsafe { self.0.driver().pc().cuModuleGetFunction(&mut raw, self.as_raw(), name.as_ptr()) }?;
        Ok(Function(Handle::new(self.clone(), raw, Ownership::Borrowed)))
    }
}

impl Function {
    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        self.0.owner()
    }

    /// Starts a launch of it on `stream` (`cuLaunchKernel`): push its arguments with
    /// [`Launch::arg`], then [`Launch::launch`].
    pub fn builder<'a>(&'a self, stream: &'a Stream) -> Launch<'a> {
        Launch::new(stream, self.as_raw())
    }
}
