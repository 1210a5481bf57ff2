//! Contexts: a device's primary context (retained and released) and created contexts.

use crate::call;
use crate::device::Device;
use crate::error::{CudaError, Error};
use crate::report::Arg;
use crate::resources::flags::ContextFlags;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::values::{raw_mapping, CacheConfig};
use crate::scope;
use crate::sys::{CUcontext, CUdevice, CUlimit, CUsharedconfig};
use crate::table::Call;
use crate::typed::Typed;
use crate::Driver;

/// What a context belongs to.
#[derive(Clone, Copy)]
pub(crate) struct ContextOwner {
    driver: &'static Driver,
    device: CUdevice,
    /// For the context of a green context (`cuCtxFromGreenCtx`): the green context
    /// (`CUgreenCtx` as an address), which its release destroys; 0 otherwise.
    green: usize,
}

kind!(
    /// The context kind: owned by its driver, on a device.
    ContextKind: CUcontext = "Context", owner ContextOwner, driver |o| o.driver, release {
        fn arg(owner: &ContextOwner, raw: CUcontext, ownership: Ownership) -> Arg {
            match ownership {
                Ownership::Primary => Arg::Int(i64::from(owner.device)),
                _ if owner.green != 0 => Arg::Pointer(owner.green),
                _ => Arg::Pointer(raw as usize),
            }
        }
        fn release_call(owner: &ContextOwner, ownership: Ownership) -> Call {
            match ownership {
                Ownership::Primary => call::cuDevicePrimaryCtxRelease,
                _ if owner.green != 0 => call::cuGreenCtxDestroy,
                _ => call::cuCtxDestroy,
            }
        }
        unsafe fn release(owner: &ContextOwner, raw: CUcontext, ownership: Ownership) -> Result<(), CudaError> {
            let pc = owner.driver.pc();
            // SAFETY: the last clone releases once (the trait's contract): a primary context
            // retained once (its release needs no current context), or a green context or
            // context we own, in which every handle made holds a clone of this one, so none is
            // left.
            unsafe {
                match ownership {
                    Ownership::Primary => pc.cuDevicePrimaryCtxRelease(owner.device),
                    _ if owner.green != 0 => pc.cuGreenCtxDestroy(owner.green as crate::sys::CUgreenCtx),
                    _ => pc.cuCtxDestroy(raw),
                }
            }
        }
    }
);

impl Device {
    /// Retains its primary context, released when the last clone drops. On error nothing
    /// is retained.
    pub fn primary_context(&self) -> Result<Context, Error> {
        Context::primary_on(self.driver(), self.as_raw())
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
    /// Creates a context on `device` with `flags` (`cuCtxCreate`; a [`ContextFlags`] or
    /// its raw bits). The calling thread's current context is left as it was. On error
    /// nothing is created. A device's primary context is [`Device::primary_context`].
    pub fn new(device: &Device, flags: impl Into<ContextFlags>) -> Result<Context, Error> {
        Context::create_on(device.driver(), device.as_raw(), flags.into())
    }

    /// Retains `device`'s primary context. On error nothing is retained.
    #[deprecated(since = "0.2.0", note = "use `Device::primary_context` (`driver.device(n)?.primary_context()`)")]
    pub fn primary(driver: &'static Driver, device: CUdevice) -> Result<Context, Error> {
        Context::primary_on(driver, device)
    }

    /// Creates a context on `device` with `flags` (`cuCtxCreate`). On error nothing is
    /// created.
    #[deprecated(since = "0.2.0", note = "use `Context::new(&device, flags)`")]
    pub fn create(driver: &'static Driver, device: CUdevice, flags: impl Into<ContextFlags>) -> Result<Context, Error> {
        Context::create_on(driver, device, flags.into())
    }

    fn primary_on(driver: &'static Driver, device: CUdevice) -> Result<Context, Error> {
        let raw = driver.typed().cuDevicePrimaryCtxRetain(device)?;
        Ok(Context::wrap(driver, raw, device, Ownership::Primary))
    }

    fn create_on(driver: &'static Driver, device: CUdevice, flags: ContextFlags) -> Result<Context, Error> {
        let raw = scope::create_context(driver, device, flags.bits())?;
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
    pub fn flags(&self) -> Result<ContextFlags, Error> {
        self.run_typed(|t| t.cuCtxGetFlags()).map(ContextFlags::from_bits_retain)
    }

    fn wrap(driver: &'static Driver, raw: CUcontext, device: CUdevice, ownership: Ownership) -> Context {
        Context(Handle::new(ContextOwner { driver, device, green: 0 }, raw, ownership))
    }

    /// The context `raw` of the green context `green` (`cuCtxFromGreenCtx`): the last clone
    /// destroys the green context (if `owned`).
    pub(crate) fn wrap_green(
        driver: &'static Driver,
        raw: CUcontext,
        device: CUdevice,
        green: crate::sys::CUgreenCtx,
        owned: bool,
    ) -> Context {
        let ownership = if owned { Ownership::Owned } else { Ownership::Borrowed };
        Context(Handle::new(ContextOwner { driver, device, green: green as usize }, raw, ownership))
    }

    /// The green context it was made from (`cuCtxFromGreenCtx`), if cudrv made it so;
    /// null otherwise.
    pub(crate) fn green_raw(&self) -> crate::sys::CUgreenCtx {
        self.0.owner().green as crate::sys::CUgreenCtx
    }

    /// [`Context::green_raw`] as live while this is borrowed.
    pub(crate) fn green_live(&self) -> crate::typed::Live<'_, crate::sys::CUgreenCtx> {
        // SAFETY: a context made from a green context keeps it alive (owned: destroyed by
        // the last clone; borrowed: the caller of `GreenContext::borrowed` promised it).
        unsafe { crate::typed::Live::new(self.green_raw()) }
    }

    /// The device it belongs to.
    pub fn device(&self) -> Device {
        Device::known(self.driver(), self.0.owner().device)
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
    pub fn set_current(&self) -> Result<(), Error> {
        Ok(scope::switch_to(self.driver(), self.as_raw())?)
    }

    /// Runs `op` with this context current (see [`crate::with_context`]).
    #[inline]
    pub fn run<T>(&self, op: impl FnOnce() -> Result<T, CudaError>) -> Result<T, Error> {
        Ok(self.run_raw(op)?)
    }

    /// [`Context::run`] with the driver's error, for cudrv's own calls.
    #[inline(always)]
    pub(crate) fn run_raw<T>(&self, op: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        scope::run_in(self.driver(), self.as_raw(), op)
    }

    /// Runs the typed call `call` with this context current ([`Context::run`]): the
    /// context's own queries and settings, which the driver makes of the current context.
    #[inline]
    fn run_typed<T>(&self, call: impl FnOnce(Typed) -> Result<T, CudaError>) -> Result<T, Error> {
        let t = self.driver().typed();
        self.run(|| call(t))
    }

    /// Runs `op`, a call whose handles name this context, without making it current where
    /// the driver does not need that (`scope::run_named`).
    #[inline(always)]
    pub(crate) fn run_named<T>(&self, op: impl FnMut() -> Result<T, CudaError>) -> Result<T, CudaError> {
        scope::run_named(self.driver(), || self.as_raw(), op)
    }

    /// The range of stream priorities in this context (`cuCtxGetStreamPriorityRange`):
    /// `least` is the numerically greatest (0 on every device so far), `greatest` the
    /// numerically least (-5 on an H200). A priority outside it is clamped.
    pub fn stream_priority_range(&self) -> Result<StreamPriorityRange, Error> {
        let (least, greatest) = self.run_typed(|t| t.cuCtxGetStreamPriorityRange())?;
        Ok(StreamPriorityRange { least, greatest })
    }

    /// The value of `limit` in this context (`cuCtxGetLimit`).
    pub fn limit(&self, limit: Limit) -> Result<usize, Error> {
        self.run_typed(|t| t.cuCtxGetLimit(limit.raw()))
    }

    /// Sets `limit` in this context (`cuCtxSetLimit`). The driver may round the value
    /// (read it back with [`Context::limit`]); some limits can only be set before the
    /// first launch that uses them. On error the limit is unchanged.
    pub fn set_limit(&self, limit: Limit, value: usize) -> Result<(), Error> {
        self.run_typed(|t| t.cuCtxSetLimit(limit.raw(), value))
    }

    /// The context's preferred split of on-chip memory between L1 and shared memory
    /// (`cuCtxGetCacheConfig`; a function's own preference wins).
    pub fn cache_config(&self) -> Result<CacheConfig, Error> {
        self.run_typed(|t| t.cuCtxGetCacheConfig()).map(CacheConfig::from_raw)
    }

    /// Sets the context's preferred cache configuration (`cuCtxSetCacheConfig`; a device
    /// with a fixed split ignores it).
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<(), Error> {
        self.run_typed(|t| t.cuCtxSetCacheConfig(config.raw()))
    }

    /// The shared memory bank size (`cuCtxGetSharedMemConfig`, deprecated: drivers since
    /// compute capability 5.0 devices report the default and ignore a setting; a driver
    /// without the entry says so in the error).
    pub fn shared_mem_config(&self) -> Result<SharedMemConfig, Error> {
        self.run_typed(|t| t.cuCtxGetSharedMemConfig()).map(SharedMemConfig::from_raw)
    }

    /// Sets the shared memory bank size (`cuCtxSetSharedMemConfig`, deprecated; see
    /// [`Context::shared_mem_config`]).
    pub fn set_shared_mem_config(&self, config: SharedMemConfig) -> Result<(), Error> {
        self.run_typed(|t| t.cuCtxSetSharedMemConfig(config.raw()))
    }

    /// `cuCtxSynchronize` in this context.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.run_typed(|t| t.cuCtxSynchronize())
    }
}

/// The stream priorities a context allows ([`Context::stream_priority_range`]): lower
/// numbers are greater priorities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamPriorityRange {
    /// The least priority (numerically greatest; what a stream gets by default).
    pub least: i32,
    /// The greatest priority (numerically least).
    pub greatest: i32,
}

impl StreamPriorityRange {
    /// Whether `priority` is in the range (else the driver clamps it).
    pub fn contains(&self, priority: i32) -> bool {
        (self.greatest..=self.least).contains(&priority)
    }
}

/// A context limit (`CUlimit`), for [`Context::limit`] and [`Context::set_limit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The stack size of each GPU thread, in bytes.
    StackSize,
    /// The size of the FIFO that device `printf` writes to, in bytes.
    PrintfFifoSize,
    /// The size of the heap device `malloc` allocates from, in bytes.
    MallocHeapSize,
    /// The nesting depth of device-runtime launches a grid may synchronise at.
    DevRuntimeSyncDepth,
    /// The number of device-runtime launches that may be pending.
    DevRuntimePendingLaunchCount,
    /// The L2 cache fetch granularity, in bytes (a hint).
    MaxL2FetchGranularity,
    /// The size of the L2 cache set aside for persisting accesses, in bytes.
    PersistingL2CacheSize,
    /// Another `CU_LIMIT_*` value, passed as it is.
    Other(u32),
}

impl Limit {
    /// The driver's value.
    pub fn raw(self) -> CUlimit {
        match self {
            Limit::StackSize => CUlimit::CU_LIMIT_STACK_SIZE,
            Limit::PrintfFifoSize => CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE,
            Limit::MallocHeapSize => CUlimit::CU_LIMIT_MALLOC_HEAP_SIZE,
            Limit::DevRuntimeSyncDepth => CUlimit::CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH,
            Limit::DevRuntimePendingLaunchCount => CUlimit::CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT,
            Limit::MaxL2FetchGranularity => CUlimit::CU_LIMIT_MAX_L2_FETCH_GRANULARITY,
            Limit::PersistingL2CacheSize => CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE,
            Limit::Other(v) => CUlimit(v),
        }
    }
}

/// The shared memory bank size of a context (`CUsharedconfig`, deprecated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SharedMemConfig {
    /// The device's default bank size.
    DefaultBankSize,
    /// Four-byte banks.
    FourByteBankSize,
    /// Eight-byte banks.
    EightByteBankSize,
}

impl SharedMemConfig {
    raw_mapping! {
        fn raw -> CUsharedconfig;
        fn from_raw -> SharedMemConfig;
        {
            DefaultBankSize => CUsharedconfig::CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE,
            FourByteBankSize => CUsharedconfig::CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE,
            EightByteBankSize => CUsharedconfig::CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE,
        }
        from_raw: { _ => SharedMemConfig::DefaultBankSize }
    }
}
