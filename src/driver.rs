//! The loaded driver: its entry-point slots, its version, the availability of every entry,
//! and the process-wide instance the free `p`/`pw` functions use.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::availability::{Availability, EntryInfo, EntryKind};
use crate::error::{CudaError, ErrorNames};
use crate::loader::{self, GetProcAddress, LoadError, LoadOptions, Loaded, Source};
use crate::report::{self, Arg};
use crate::sys::{CUresult, PFN_cuGetErrorName_v6000, PFN_cuGetErrorString_v6000};
use crate::table::{self, Call, Entry, NAMES, VARIANTS};
use crate::version::{self, RequireError};

/// A loaded CUDA driver and its resolved entry-point table.
///
/// Every entry is callable through [`Driver::p`] (returns the `CUresult`) and
/// [`Driver::pw`] (also reports a failure). An entry that is not resolved returns
/// `CUDA_ERROR_NOT_FOUND` without calling anything; [`Driver::entry`] says why.
pub struct Driver {
    /// What loading gave: where it came from, its versions, slots and availability.
    pub(crate) loaded: Loaded,
    /// `cuInit(0)`'s result, once.
    pub(crate) init: OnceLock<Result<(), CudaError>>,
    /// Its `cuGetErrorName`/`cuGetErrorString`, which its errors name their codes with.
    pub(crate) names: ErrorNames,
}

impl Driver {
    const fn none() -> Driver {
        Driver { loaded: Loaded::none(), init: OnceLock::new(), names: ErrorNames::NONE }
    }

    /// The error for `call` returning `status` (never `CUDA_SUCCESS`). No driver call, no
    /// allocation: the code is named when the error is shown.
    #[cold]
    #[inline(never)]
    pub fn error(&'static self, call: Call, status: CUresult) -> CudaError {
        let error = CudaError::with_driver(self, call, status);
        // An entry this driver does not resolve: nothing was called; say why first.
        match self.unresolved(call.entry(), status) {
            Some(why) => error.with_unresolved(why),
            None => error,
        }
    }

    /// For `CUDA_ERROR_NOT_FOUND` from an entry that is not resolved: why it was not called
    /// (`needs driver 13.1; this driver is 13.0`).
    fn unresolved(&self, entry: Entry, status: CUresult) -> Option<String> {
        if status != CUresult::CUDA_ERROR_NOT_FOUND {
            return None;
        }
        let info = self.info(entry).filter(|i| !i.availability.is_resolved())?;
        Some(crate::error::unresolved_reason(&info.availability, self.loaded.version, self.loaded.driver_version))
    }

    /// `NAME (description)` of `code`, named by this driver.
    pub fn status_text(&self, code: CUresult) -> String {
        crate::error::status_text(Some(&self.names), code)
    }

    /// What a `p` call to an entry that is not resolved returns: `CUDA_ERROR_NOT_FOUND`,
    /// without calling anything (and recorded for `CUDRV_GATED_LOG`).
    #[cold]
    #[inline(never)]
    pub(crate) fn unresolved_call(&self, entry: Entry) -> CUresult {
        crate::gated_log::record(entry, || self.info(entry).map(|i| format!("{}\t{}\n", i.name, i.availability)));
        CUresult::CUDA_ERROR_NOT_FOUND
    }

    #[inline(always)]
    pub(crate) fn variant_slot(&self, index: usize) -> *mut c_void {
        match self.loaded.slots.0.get(index) {
            Some(p) => *p,
            None => std::ptr::null_mut(),
        }
    }

    #[inline(always)]
    pub(crate) fn name_slot(&self, index: usize) -> *mut c_void {
        match self.loaded.name_slots.0.get(index) {
            Some(p) => *p,
            None => std::ptr::null_mut(),
        }
    }

    /// The version cudrv behaves as: the driver's, or the cap if that is lower.
    pub fn version(&self) -> semver::Version {
        version::to_semver(self.loaded.version)
    }

    /// [`Driver::version`] in the driver's integer form (`13000`).
    pub fn version_code(&self) -> u32 {
        self.loaded.version
    }

    /// What `cuDriverGetVersion` returned, before any cap.
    pub fn driver_version_code(&self) -> u32 {
        self.loaded.driver_version
    }

    /// Checks [`Driver::version`] against a semver requirement such as `">=12.4"`.
    pub fn require(&self, requirement: &str) -> Result<(), RequireError> {
        version::require(self.loaded.version, requirement)
    }

    /// The library's path, or `None` for an in-process driver.
    pub fn path(&self) -> Option<&Path> {
        match &self.loaded.source {
            Source::Library { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The file the driver was mapped from, as the system loader resolved it (for
    /// `libcuda.so.1` found by name, e.g. `/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04`).
    /// `None` for an in-process driver, or if the loader cannot say.
    pub fn file(&self) -> Option<&Path> {
        match &self.loaded.source {
            Source::Library { file, .. } => file.as_deref(),
            _ => None,
        }
    }

    /// A description of where the driver came from (its path, or "in-process driver").
    pub fn source(&self) -> String {
        self.loaded.source.describe()
    }

    /// The options it was loaded with.
    pub fn options(&self) -> &LoadOptions {
        &self.loaded.options
    }

    /// Whether it was bootstrapped through `cuGetProcAddress_v2` (else the 11.x form).
    pub fn uses_get_proc_address_v2(&self) -> bool {
        matches!(self.loaded.gpa, Some(GetProcAddress::V2(_)))
    }

    /// How long resolving the table took.
    pub fn resolve_time(&self) -> Duration {
        self.loaded.resolve_time
    }

    /// The state of one entry, by wrapper name: a variant (`cuLaunchHostFunc_v13010`) or
    /// an unversioned name (`cuLaunchHostFunc`). `None` if the header has no such entry.
    pub fn entry(&self, name: &str) -> Option<EntryInfo> {
        if let Some(i) = table::variant_index(name) {
            return self.info(Entry::Variant(i));
        }
        table::name_index(name).and_then(|i| self.info(Entry::Name(i)))
    }

    /// Every variant, then every unversioned name, with its state.
    pub fn entries(&self) -> impl Iterator<Item = EntryInfo> + '_ {
        let variants = (0..VARIANTS.len()).map(Entry::Variant);
        let names = (0..NAMES.len()).map(Entry::Name);
        variants.chain(names).filter_map(|e| self.info(e))
    }

    /// The state of a table entry.
    pub fn info(&self, entry: Entry) -> Option<EntryInfo> {
        match entry {
            Entry::Variant(i) => {
                let v = VARIANTS.get(i)?;
                Some(EntryInfo {
                    name: v.ident,
                    kind: EntryKind::Variant { symbol: v.symbol_str(), version: v.version, per_thread: v.per_thread },
                    availability: self.variant_state(i),
                })
            }
            Entry::Name(i) => {
                let n = NAMES.get(i)?;
                let bound = self.loaded.bound.get(i).copied().flatten();
                let availability = match bound {
                    Some(b) => self.variant_state(b),
                    None => self.unbound_reason(n),
                };
                Some(EntryInfo {
                    name: n.name,
                    kind: EntryKind::Name { bound: bound.and_then(|b| VARIANTS.get(b)).map(|v| v.ident) },
                    availability,
                })
            }
        }
    }

    fn variant_state(&self, i: usize) -> Availability {
        self.loaded.states.get(i).copied().unwrap_or(Availability::NoDriver)
    }

    /// Why a name bound nothing: the oldest candidate that needs a newer driver, else the
    /// state of its newest candidate.
    fn unbound_reason(&self, n: &table::NameSpec) -> Availability {
        let candidates = if self.loaded.options.per_thread_default_stream && !n.per_thread_candidates.is_empty() {
            n.per_thread_candidates
        } else {
            n.candidates
        };
        let states = candidates.iter().map(|&c| self.variant_state(c));
        let needs = states.clone().filter_map(|s| match s {
            Availability::NeedsDriver { version } => Some(version),
            _ => None,
        });
        match needs.min() {
            Some(version) => Availability::NeedsDriver { version },
            None => states.clone().next().unwrap_or(Availability::NoDriver),
        }
    }

    /// Reports the failure of a `pw` call. `CUDA_ERROR_DEINITIALIZED` is not reported.
    #[cold]
    #[inline(never)]
    pub(crate) fn report_failure(&self, entry: Entry, arg: Arg, status: CUresult) {
        let not_called = self.unresolved(entry, status);
        report::call_failed(Call::of(entry), arg, status, not_called, || self.status_text(status));
    }
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("source", &self.loaded.source.describe())
            .field("version", &version::display(self.loaded.version))
            .field("driver_version", &version::display(self.loaded.driver_version))
            .field("options", &self.loaded.options)
            .finish_non_exhaustive()
    }
}

impl Driver {
    /// Opens the driver `options` names (or the system's `libcuda.so.1`), bootstraps
    /// `cuGetProcAddress` and resolves the whole table.
    ///
    /// On error nothing stays loaded that cudrv will use; the library, if it was opened,
    /// is left mapped (a driver is never unloaded).
    ///
    /// # Safety
    /// Opening a library runs its initialisers, and cudrv calls what it exports as the
    /// CUDA driver: the library `options` names (or the system's `libcuda.so.1`) must be a
    /// CUDA driver (or cudrv's stand-in), as with ash's `Entry::load`. Handles made with
    /// one driver library must never be given to another (two `Driver`s loaded from the
    /// same library may share them).
    /// [`crate::driver()`], the usual way in, is safe: it trusts `CUDRV_LIBCUDA`.
    pub unsafe fn load(options: LoadOptions) -> Result<Driver, LoadError> {
        // SAFETY: forwarded from the caller.
        unsafe { loader::load(options) }.map(Driver::from_loaded)
    }

    /// [`Driver::load`] with only a path.
    ///
    /// # Safety
    /// As for [`Driver::load`]: `path` must be a CUDA driver library.
    pub unsafe fn load_from(path: impl Into<PathBuf>) -> Result<Driver, LoadError> {
        // SAFETY: forwarded from the caller.
        unsafe { Driver::load(LoadOptions::default().with_path(path)) }
    }

    /// Builds a driver from an in-process `cuGetProcAddress` (such as the stand-in's).
    /// `options.path` is ignored.
    ///
    /// # Safety
    /// `gpa` must behave as the driver's does: every pointer it returns for a symbol and
    /// version must be a function with that variant's `PFN_*` signature, valid for the
    /// rest of the process. cudrv's safe handles call through them.
    pub unsafe fn from_get_proc_address(gpa: GetProcAddress, options: LoadOptions) -> Result<Driver, LoadError> {
        loader::resolve(gpa, options, Source::InProcess).map(Driver::from_loaded)
    }

    fn from_loaded(l: Loaded) -> Driver {
        let name_slot = |call: Call| match call.entry() {
            Entry::Name(i) => l.name_slots.0.get(i).copied().unwrap_or(std::ptr::null_mut()),
            Entry::Variant(i) => l.slots.0.get(i).copied().unwrap_or(std::ptr::null_mut()),
        };
        // SAFETY: each slot is null or what the driver returned for a variant of that name,
        // whose signatures are these (one variant each, 6.0); null becomes `None`.
        let names = unsafe {
            ErrorNames {
                name: std::mem::transmute::<*mut c_void, PFN_cuGetErrorName_v6000>(name_slot(
                    crate::call::cuGetErrorName,
                )),
                string: std::mem::transmute::<*mut c_void, PFN_cuGetErrorString_v6000>(name_slot(
                    crate::call::cuGetErrorString,
                )),
            }
        };
        Driver { loaded: l, init: OnceLock::new(), names }
    }
}

impl CudaError {
    /// The error for `call` returning `code`, named through `driver` when shown.
    pub fn with_driver(driver: &'static Driver, call: Call, code: CUresult) -> CudaError {
        CudaError::with_names(&driver.names, call, code)
    }
}

static GLOBAL: OnceLock<Result<Driver, LoadError>> = OnceLock::new();
static NO_DRIVER: Driver = Driver::none();

/// The process-wide driver, loaded on first use with [`LoadOptions::from_env`].
///
/// Safe, unlike [`Driver::load`]: it trusts its settings, so `CUDRV_LIBCUDA`, if set, must
/// name a CUDA driver library (or cudrv's stand-in).
///
/// Safe to call from many threads at once: one loads, the others wait for it. A failure is
/// remembered and returned to every later caller.
pub fn driver() -> Result<&'static Driver, LoadError> {
    match GLOBAL.get_or_init(load_global) {
        Ok(d) => {
            crate::gated_log::check_setting();
            Ok(d)
        }
        Err(e) => Err(e.clone()),
    }
}

/// Makes `driver` the process-wide driver, if none has been loaded or set yet. Otherwise
/// returns it back unchanged.
// The driver is returned by value on purpose: the caller keeps ownership when refused.
#[allow(clippy::result_large_err)]
pub fn set_driver(driver: Driver) -> Result<&'static Driver, Driver> {
    let mut offered = Some(driver);
    let got = GLOBAL.get_or_init(|| offered.take().map_or_else(|| Err(placeholder_error()), Ok));
    match (offered, got) {
        (Some(d), _) => Err(d),
        (None, Ok(d)) => {
            crate::gated_log::check_setting();
            Ok(d)
        }
        // Cannot happen: the closure that took the driver returned it as Ok.
        (None, Err(_)) => Ok(&NO_DRIVER),
    }
}

fn placeholder_error() -> LoadError {
    LoadError::NotFound { looked: "nothing".into(), reason: "no driver was offered".into() }
}

#[cold]
fn load_global() -> Result<Driver, LoadError> {
    // SAFETY: the process-wide driver trusts its settings: `CUDRV_LIBCUDA` (if set) names a
    // CUDA driver library; otherwise the system's libcuda.so.1 is the driver.
    LoadOptions::from_env().and_then(|options| unsafe { Driver::load(options) })
}

/// The address of the process-wide driver (or of the placeholder) once it is known: the
/// free functions' fast path is one load of it.
static GLOBAL_FAST: AtomicPtr<Driver> = AtomicPtr::new(std::ptr::null_mut());

/// The process-wide driver, or the empty placeholder (every entry unresolved) if it could
/// not be loaded. This is the fast path of every free `p`/`pw` function: one atomic load
/// (a plain load on x86-64), no read-modify-write.
#[inline(always)]
pub(crate) fn global() -> &'static Driver {
    let fast = GLOBAL_FAST.load(Ordering::Acquire);
    if fast.is_null() {
        return global_slow();
    }
    // SAFETY: GLOBAL_FAST only ever holds the address of a `'static` Driver: the one in
    // GLOBAL (set once, never moved or dropped) or NO_DRIVER.
    unsafe { &*fast }
}

#[cold]
#[inline(never)]
fn global_slow() -> &'static Driver {
    let d = match GLOBAL.get_or_init(load_global) {
        Ok(d) => d,
        Err(_) => &NO_DRIVER,
    };
    GLOBAL_FAST.store(std::ptr::from_ref(d).cast_mut(), Ordering::Release);
    d
}
