//! Contexts: a device's primary context (retained and released) and created contexts.

use crate::call;
use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::flags::ContextFlags;
use crate::resources::handle::{handle_type, Handle, Kind, Ownership};
use crate::scope;
use crate::sys::{CUcontext, CUdevice};
use crate::table::Call;
use crate::Driver;

/// The context kind: owned by its driver, on a device.
pub(crate) struct ContextKind;

/// What a context belongs to.
#[derive(Clone, Copy)]
pub(crate) struct ContextOwner {
    driver: &'static Driver,
    device: CUdevice,
}

impl Kind for ContextKind {
    type Raw = CUcontext;
    type Owner = ContextOwner;
    const NAME: &'static str = "Context";
    const NULL: CUcontext = std::ptr::null_mut();
    fn driver(owner: &ContextOwner) -> &'static Driver {
        owner.driver
    }
    fn addr(raw: CUcontext) -> usize {
        raw as usize
    }
    fn arg(owner: &ContextOwner, raw: CUcontext, ownership: Ownership) -> Arg {
        match ownership {
            Ownership::Primary => Arg::Int(i64::from(owner.device)),
            _ => Arg::Pointer(raw as usize),
        }
    }
    fn release_call(_: &ContextOwner, ownership: Ownership) -> Call {
        match ownership {
            Ownership::Primary => call::cuDevicePrimaryCtxRelease,
            _ => call::cuCtxDestroy,
        }
    }
    unsafe fn release(owner: &ContextOwner, raw: CUcontext, ownership: Ownership) -> Result<(), CudaError> {
        let pc = owner.driver.pc();
        match ownership {
            // SAFETY: retained once; this is the matching release. Needs no current context.
            Ownership::Primary => unsafe { pc.cuDevicePrimaryCtxRelease(owner.device) },
            // SAFETY: we own it, and every handle made in it holds a clone, so none is left.
            _ => unsafe { pc.cuCtxDestroy(raw) },
        }
    }
}

/// A CUDA context. Clones share it; the last one releases it (a primary context) or
/// destroys it (a created one). Handles made in it hold clones, so it outlives them; a
/// thread that made it current with [`Context::set_current`] holds no clone, so keep one
/// alive while any thread may still use it as its current context.
#[derive(Clone)]
pub struct Context(pub(crate) Handle<ContextKind>);
handle_type!(Context: ContextKind => CUcontext);

impl Context {
    /// Retains `device`'s primary context (see also [`crate::Device::primary_context`]).
    /// On error nothing is retained.
    pub fn primary(driver: &'static Driver, device: CUdevice) -> Result<Context, CudaError> {
        let mut raw: CUcontext = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        unsafe { driver.pc().cuDevicePrimaryCtxRetain(&mut raw, device) }?;
        Ok(Context::wrap(driver, raw, device, Ownership::Primary))
    }

    /// Creates a context on `device` with `flags` (`cuCtxCreate`; a [`ContextFlags`] or
    /// its raw bits). The calling thread's current context is left as it was. On error
    /// nothing is created.
    pub fn create(
        driver: &'static Driver,
        device: CUdevice,
        flags: impl Into<ContextFlags>,
    ) -> Result<Context, CudaError> {
        let raw = scope::create_context(driver, device, flags.into().bits())?;
        Ok(Context::wrap(driver, raw, device, Ownership::Owned))
    }

    /// Adopts a created context: the last clone destroys it with `cuCtxDestroy`.
    ///
    /// # Safety
    /// `raw` must be a live context on `device`, created with `cuCtxCreate`, that nothing
    /// else destroys.
    pub unsafe fn from_raw(driver: &'static Driver, raw: CUcontext, device: CUdevice) -> Context {
        Context::wrap(driver, raw, device, Ownership::Owned)
    }

    /// Uses a context that someone else owns; cudrv never destroys or releases it.
    ///
    /// # Safety
    /// `raw` must be a live context on `device` for as long as this handle and everything
    /// made from it are used.
    pub unsafe fn borrowed(driver: &'static Driver, raw: CUcontext, device: CUdevice) -> Context {
        Context::wrap(driver, raw, device, Ownership::Borrowed)
    }

    /// The flags it runs with (`cuCtxGetFlags`, with it current): a created context's
    /// creation flags; a primary context's flags (the driver adds `MAP_HOST`).
    pub fn flags(&self) -> Result<ContextFlags, CudaError> {
        let pc = self.driver().pc();
        let mut bits = 0;
        // SAFETY: `bits` is a valid out-pointer; the context is current inside `run`.
        self.run(|| unsafe { pc.cuCtxGetFlags(&mut bits) })?;
        Ok(ContextFlags::from_bits_retain(bits))
    }

    fn wrap(driver: &'static Driver, raw: CUcontext, device: CUdevice, ownership: Ownership) -> Context {
        Context(Handle::new(ContextOwner { driver, device }, raw, ownership))
    }

    /// The device it belongs to.
    pub fn device(&self) -> CUdevice {
        self.0.owner().device
    }

    /// The driver it was made with.
    #[inline(always)]
    pub fn driver(&self) -> &'static Driver {
        self.0.owner().driver
    }

    /// Whether this is a device's primary context.
    pub fn is_primary(&self) -> bool {
        self.0.ownership() == Ownership::Primary
    }

    /// Makes it current on the calling thread with one `cuCtxSetCurrent`; on error the
    /// previous context stays current.
    pub fn set_current(&self) -> Result<(), CudaError> {
        scope::switch_to(self.driver(), self.as_raw())
    }

    /// Runs `op` with this context current (see [`crate::with_context`]).
    #[inline]
    pub fn run<T>(&self, op: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        scope::run_in(self.driver(), self.as_raw(), op)
    }

    /// `cuCtxSynchronize` in this context.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let pc = self.driver().pc();
        // SAFETY: no arguments.
        self.run(|| unsafe { pc.cuCtxSynchronize() })
    }
}
