//! Modules (`cuModuleLoadData`), their functions, and kernel launches.

use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUfunction, CUmodule, CUresult};
use crate::Driver;

/// A loaded module. Clones share it; the last one unloads it (if owned) in its context.
/// Functions from it keep it alive.
#[derive(Clone)]
pub struct Module(Arc<ModuleInner>);

struct ModuleInner {
    context: Context,
    raw: CUmodule,
    owned: bool,
}

// SAFETY: a CUmodule is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for ModuleInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for ModuleInner {}

/// A function of a [`Module`]; keeps the module alive.
#[derive(Clone)]
pub struct Function {
    module: Module,
    raw: CUfunction,
}

// SAFETY: a CUfunction is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for Function {}
// SAFETY: as above.
unsafe impl Sync for Function {}

/// Grid and block dimensions and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_mem_bytes: u32,
}

/// A C string for a name passed to the driver, or INVALID_VALUE for one with a NUL.
pub(crate) fn c_name(driver: &Driver, call: &'static str, name: &str) -> Result<CString, CudaError> {
    CString::new(name).map_err(|_| {
        CudaError::new(driver, call, CUresult::CUDA_ERROR_INVALID_VALUE)
            .with_note(format!("{name:?} contains a NUL byte"))
    })
}

/// `cuLaunchKernel` of `function` (a CUfunction, or a CUkernel cast to one) on `stream`.
///
/// # Safety
/// `params` must point to arguments matching the kernel's parameters, alive until the
/// call returns.
pub(crate) unsafe fn launch(
    stream: &Stream,
    function: CUfunction,
    config: &LaunchConfig,
    params: &mut [*mut c_void],
) -> Result<(), CudaError> {
    let (d, s) = (stream.context().driver(), stream.as_raw());
    let (g, b) = (config.grid, config.block);
    let args = if params.is_empty() { std::ptr::null_mut() } else { params.as_mut_ptr() };
    stream.context().run(|| {
        // SAFETY: handles are live; the caller vouches for the parameters.
        let status = unsafe {
            d.p().cuLaunchKernel(
                function,
                g.0,
                g.1,
                g.2,
                b.0,
                b.1,
                b.2,
                config.shared_mem_bytes,
                s,
                args,
                std::ptr::null_mut(),
            )
        };
        CudaError::check(d, "cuLaunchKernel", status)
    })
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
        let d = context.driver();
        let create = || {
            let mut raw: CUmodule = std::ptr::null_mut();
            // SAFETY: `raw` is a valid out-pointer; `image` is readable.
            CudaError::check(d, "cuModuleLoadData", unsafe {
                d.p().cuModuleLoadData(&mut raw, image.as_ptr().cast())
            })?;
            Ok(raw)
        };
        let undo = Undo {
            call: "cuModuleUnload",
            arg: |m: &CUmodule| handle_arg(*m),
            // SAFETY: the module was just loaded and is used by nothing else.
            run: |m: &CUmodule| unsafe { d.p().cuModuleUnload(*m) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(Module(Arc::new(ModuleInner { context: context.clone(), raw, owned: true })))
    }

    /// Adopts a module: the last clone unloads it.
    ///
    /// # Safety
    /// `raw` must be a live module of `context` that nothing else unloads.
    pub unsafe fn from_raw(context: &Context, raw: CUmodule) -> Module {
        Module(Arc::new(ModuleInner { context: context.clone(), raw, owned: true }))
    }

    /// Uses a module someone else owns; cudrv never unloads it.
    ///
    /// # Safety
    /// `raw` must stay loaded while this handle and its functions are used.
    pub unsafe fn borrowed(context: &Context, raw: CUmodule) -> Module {
        Module(Arc::new(ModuleInner { context: context.clone(), raw, owned: false }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUmodule {
        self.0.raw
    }

    /// The context it was loaded in.
    pub fn context(&self) -> &Context {
        &self.0.context
    }

    /// The function called `name` (`cuModuleGetFunction`).
    pub fn function(&self, name: &str) -> Result<Function, CudaError> {
        let d = self.0.context.driver();
        let name = c_name(d, "cuModuleGetFunction", name)?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: valid out-pointer and C string; the module is live.
        let status = unsafe { d.p().cuModuleGetFunction(&mut raw, self.0.raw, name.as_ptr()) };
        CudaError::check(d, "cuModuleGetFunction", status)?;
        Ok(Function { module: self.clone(), raw })
    }
}

impl Function {
    /// The raw handle.
    pub fn as_raw(&self) -> CUfunction {
        self.raw
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Launches it on `stream` (`cuLaunchKernel`).
    ///
    /// # Safety
    /// `params` must point to arguments matching the kernel's parameters.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        // SAFETY: forwarded from the caller.
        unsafe { launch(stream, self.raw, config, params) }
    }
}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the module; its functions hold clones, so none is left.
        let unload = || unsafe { d.p().cuModuleUnload(raw) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuModuleUnload", handle_arg(raw), unload, || {});
    }
}
