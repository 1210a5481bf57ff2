//! Contexts: a device's primary context (retained and released) and created contexts.

use std::sync::Arc;

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::handle_arg;
use crate::scope::{self, cleanup_in_context};
use crate::sys::{CUcontext, CUdevice, CUresult};
use crate::Driver;

/// A CUDA context. Clones share it; the last one releases it (a primary context) or
/// destroys it (a created one). Handles made in it hold clones, so it outlives them; a
/// thread that made it current with [`Context::set_current`] holds no clone, so keep one
/// alive while any thread may still use it as its current context.
#[derive(Clone)]
pub struct Context(Arc<ContextInner>);

struct ContextInner {
    driver: &'static Driver,
    raw: CUcontext,
    device: CUdevice,
    ownership: Ownership,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ownership {
    /// Retained with cuDevicePrimaryCtxRetain; released on drop.
    Primary,
    /// Created (by cudrv or adopted with `from_raw`); destroyed on drop.
    Created,
    /// Someone else's; never destroyed by cudrv.
    Borrowed,
}

// SAFETY: a CUcontext is a driver handle usable from any thread; cudrv never dereferences it.
unsafe impl Send for ContextInner {}
// SAFETY: as above; the struct is immutable after construction.
unsafe impl Sync for ContextInner {}

impl Context {
    /// Retains `device`'s primary context. On error nothing is retained.
    pub fn primary(driver: &'static Driver, device: CUdevice) -> Result<Context, CudaError> {
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        let status = unsafe { driver.p().cuDevicePrimaryCtxRetain(&mut raw, device) };
        CudaError::check(driver, "cuDevicePrimaryCtxRetain", status)?;
        Ok(Context::wrap(driver, raw, device, Ownership::Primary))
    }

    /// Creates a context on `device` with `flags` (`cuCtxCreate`). The calling thread's
    /// current context is left as it was. On error nothing is created.
    pub fn create(driver: &'static Driver, device: CUdevice, flags: u32) -> Result<Context, CudaError> {
        let raw = scope::create_context(driver, device, flags)?;
        Ok(Context::wrap(driver, raw, device, Ownership::Created))
    }

    /// Adopts a created context: the last clone destroys it with `cuCtxDestroy`.
    ///
    /// # Safety
    /// `raw` must be a live context on `device`, created with `cuCtxCreate`, that nothing
    /// else destroys.
    pub unsafe fn from_raw(driver: &'static Driver, raw: CUcontext, device: CUdevice) -> Context {
        Context::wrap(driver, raw, device, Ownership::Created)
    }

    /// Uses a context that someone else owns; cudrv never destroys or releases it.
    ///
    /// # Safety
    /// `raw` must be a live context on `device` for as long as this handle and everything
    /// made from it are used.
    pub unsafe fn borrowed(driver: &'static Driver, raw: CUcontext, device: CUdevice) -> Context {
        Context::wrap(driver, raw, device, Ownership::Borrowed)
    }

    fn wrap(driver: &'static Driver, raw: CUcontext, device: CUdevice, ownership: Ownership) -> Context {
        Context(Arc::new(ContextInner { driver, raw, device, ownership }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUcontext {
        self.0.raw
    }

    /// The device it belongs to.
    pub fn device(&self) -> CUdevice {
        self.0.device
    }

    /// The driver it was made with.
    pub fn driver(&self) -> &'static Driver {
        self.0.driver
    }

    /// Whether this is a device's primary context.
    pub fn is_primary(&self) -> bool {
        self.0.ownership == Ownership::Primary
    }

    /// Makes it current on the calling thread with one `cuCtxSetCurrent`; on error the
    /// previous context stays current.
    pub fn set_current(&self) -> Result<(), CudaError> {
        scope::switch_to(self.0.driver, self.0.raw)
    }

    /// Runs `op` with this context current (see [`crate::with_context`]).
    pub fn run<T>(&self, op: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        scope::run_in(self.0.driver, self.0.raw, op)
    }

    /// Runs the driver call `f` (named `call` in errors) with this context current.
    pub(crate) fn call(&self, call: &'static str, f: impl FnOnce() -> CUresult) -> Result<(), CudaError> {
        let d = self.0.driver;
        self.run(|| CudaError::check(d, call, f()))
    }

    /// `cuCtxSynchronize` in this context.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let d = self.0.driver;
        // SAFETY: no arguments.
        self.call("cuCtxSynchronize", || unsafe { d.p().cuCtxSynchronize() })
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        let p = self.driver.p();
        let (raw, device) = (self.raw, self.device);
        match self.ownership {
            Ownership::Borrowed => {}
            Ownership::Primary => {
                // SAFETY: we retained it once; this is the matching release.
                let release = || unsafe { p.cuDevicePrimaryCtxRelease(device) };
                let arg = Arg::Int(i64::from(device));
                cleanup_in_context(self.driver, None, "cuDevicePrimaryCtxRelease", arg, release, || {});
            }
            Ownership::Created => {
                // SAFETY: we own it, and every handle made in it holds a clone, so none is left.
                let destroy = || unsafe { p.cuCtxDestroy(raw) };
                cleanup_in_context(self.driver, None, "cuCtxDestroy", handle_arg(raw), destroy, || {});
            }
        }
    }
}
