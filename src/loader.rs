//! Finding and opening the driver, bootstrapping `cuGetProcAddress`, and resolving the table.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use libloading::Library;

use crate::availability::{Availability, Missing};
use crate::sys::{cuuint64_t, CUresult};
use crate::table::{NAMES, NAME_COUNT, VARIANTS, VARIANT_COUNT};
use crate::version;

/// A fixed array of entry-point pointers; null where nothing was resolved.
pub(crate) struct Slots<const N: usize>(pub(crate) [*mut c_void; N]);

impl<const N: usize> Slots<N> {
    pub(crate) const fn null() -> Slots<N> {
        Slots([std::ptr::null_mut(); N])
    }
}

// SAFETY: the pointers are addresses of driver functions, written once during loading
// and only read afterwards; the driver's functions are callable from any thread.
unsafe impl<const N: usize> Send for Slots<N> {}
// SAFETY: after loading, the slots are only read (no interior mutability), so shared
// references on several threads see the same fixed pointers.
unsafe impl<const N: usize> Sync for Slots<N> {}

/// Where a driver came from.
pub(crate) enum Source {
    /// A library cudrv opened. It is never closed: a driver's threads may outlive us.
    Library { path: PathBuf, file: Option<PathBuf>, _library: ManuallyDrop<Library> },
    /// A `cuGetProcAddress` handed in by the program.
    InProcess,
    /// No driver: the placeholder behind the free functions when loading failed.
    None,
}

impl Source {
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::Library { path, .. } => path.display().to_string(),
            Source::InProcess => "in-process driver".to_string(),
            Source::None => "no driver".to_string(),
        }
    }
}

/// Environment variable naming the driver library to load (a path).
pub const ENV_LIBCUDA: &str = "CUDRV_LIBCUDA";
/// Environment variable capping the driver version cudrv uses (e.g. `12.4`).
pub const ENV_MAX_VERSION: &str = "CUDRV_MAX_DRIVER_VERSION";
/// Environment variable that, set to `1`, binds the per-thread default stream variants.
pub const ENV_PER_THREAD: &str = "CUDRV_PER_THREAD_DEFAULT_STREAM";
/// The name the system loader is asked for when no path is given.
pub const SYSTEM_LIBCUDA: &str = "libcuda.so.1";
/// The oldest driver with `cuGetProcAddress`, and so the oldest cudrv loads.
pub const MIN_DRIVER_VERSION: u32 = 11030;

/// `CUdriverProcAddressQueryResult`, the last argument of `cuGetProcAddress_v2`. Defined
/// here rather than taken from cuda.h so that cudrv also builds against 11.x headers.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcAddressQuery(pub std::ffi::c_uint);

impl ProcAddressQuery {
    /// `CU_GET_PROC_ADDRESS_SUCCESS`
    pub const SUCCESS: ProcAddressQuery = ProcAddressQuery(0);
    /// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`
    pub const SYMBOL_NOT_FOUND: ProcAddressQuery = ProcAddressQuery(1);
    /// `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`
    pub const VERSION_NOT_SUFFICIENT: ProcAddressQuery = ProcAddressQuery(2);
}

/// `cuGetProcAddress_v2` (drivers 12.0 and later).
pub type GetProcAddressV2 = unsafe extern "C" fn(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: cuuint64_t,
    symbol_status: *mut ProcAddressQuery,
) -> CUresult;
/// The 4-argument `cuGetProcAddress` of drivers 11.3 to 11.8.
pub type GetProcAddressV1 = unsafe extern "C" fn(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: cuuint64_t,
) -> CUresult;

/// The bootstrap entry point a [`crate::Driver`] resolves everything else through.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum GetProcAddress {
    /// `cuGetProcAddress_v2`, which also reports why a symbol was not found.
    V2(GetProcAddressV2),
    /// The 4-argument `cuGetProcAddress`.
    V1(GetProcAddressV1),
}

/// `cuGetProcAddress` flags.
const FLAG_DEFAULT: u64 = 0;
const FLAG_PER_THREAD: u64 = 2;

/// How to load the driver. `LoadOptions::default()` reads no environment variable;
/// [`LoadOptions::from_env`] does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The library to open; `None` asks the system loader for `libcuda.so.1`.
    pub path: Option<PathBuf>,
    /// Behave as a driver of at most this version (driver form, `12040` for 12.4).
    pub max_version: Option<u32>,
    /// Bind the `_ptds`/`_ptsz` variants (requested with flag 2) and make the unversioned
    /// names use them.
    pub per_thread_default_stream: bool,
}

impl LoadOptions {
    /// Options from `CUDRV_LIBCUDA`, `CUDRV_MAX_DRIVER_VERSION` and
    /// `CUDRV_PER_THREAD_DEFAULT_STREAM`. An unparsable value is an error, not ignored.
    pub fn from_env() -> Result<LoadOptions, LoadError> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let mut o = LoadOptions { path: var(ENV_LIBCUDA).map(PathBuf::from), ..LoadOptions::default() };
        if let Some(v) = var(ENV_MAX_VERSION) {
            let text = v.to_string_lossy().into_owned();
            o = o.with_max_version(&text).map_err(|_| LoadError::InvalidSetting {
                name: ENV_MAX_VERSION,
                value: text,
                expected: "a version such as 12.4",
            })?;
        }
        if let Some(v) = var(ENV_PER_THREAD) {
            o.per_thread_default_stream = match v.to_string_lossy().as_ref() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                other => {
                    return Err(LoadError::InvalidSetting {
                        name: ENV_PER_THREAD,
                        value: other.to_string(),
                        expected: "1 or 0",
                    })
                }
            };
        }
        Ok(o)
    }

    /// Sets the library path.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> LoadOptions {
        self.path = Some(path.into());
        self
    }

    /// Sets the version cap from text such as `"12.4"`.
    pub fn with_max_version(mut self, version: &str) -> Result<LoadOptions, LoadError> {
        self.max_version = Some(version::parse(version).ok_or_else(|| LoadError::InvalidSetting {
            name: "max_version",
            value: version.to_string(),
            expected: "a version such as 12.4",
        })?);
        Ok(self)
    }

    /// Sets the per-thread default stream option.
    pub fn with_per_thread_default_stream(mut self, on: bool) -> LoadOptions {
        self.per_thread_default_stream = on;
        self
    }
}

/// Why no driver could be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The library could not be opened. The message says what to do: name a driver with
    /// `CUDRV_LIBCUDA`, or use the stand-in driver.
    #[error(
        "no CUDA driver found: looked for {looked}: {reason}. Set CUDRV_LIBCUDA=/path/to/libcuda.so.1 \
         to use a driver that is not on the loader's path; without a GPU, use cudrv's stand-in \
         driver (crate cudrv-standin): `cudrv_standin::install()` in tests, or \
         CUDRV_LIBCUDA=<cargo target dir>/debug/libcudrv_standin.so for any program"
    )]
    NotFound {
        /// What was opened: a path, or `libcuda.so.1` through the system loader.
        looked: String,
        /// The system loader's message.
        reason: String,
    },
    /// The path names something other than a regular file (a FIFO, a pipe such as
    /// `/dev/stdin`, a socket, a device or a directory). Refused before it is opened:
    /// the system loader would wait for ever on a FIFO or a pipe.
    #[error("{path} is {what}: a CUDA driver library must be a regular file")]
    NotARegularFile {
        /// The path given.
        path: String,
        /// What it is instead (`a FIFO or a pipe`, `a directory`, ...).
        what: &'static str,
    },
    /// The library opened but exports neither `cuGetProcAddress_v2` nor `cuGetProcAddress`.
    #[error("{path} is not a CUDA driver: it exports neither cuGetProcAddress_v2 nor cuGetProcAddress")]
    NotADriver {
        /// The library opened.
        path: String,
    },
    /// `cuDriverGetVersion` could not be resolved or failed.
    #[error("{path}: cuDriverGetVersion failed ({detail})")]
    VersionQueryFailed {
        /// The library opened.
        path: String,
        /// Why: the entry was not found, or the status it returned.
        detail: String,
    },
    /// The driver is older than 11.3, the first with `cuGetProcAddress`.
    #[error("{path}: CUDA driver {found} is older than 11.3, the oldest cudrv supports")]
    TooOld {
        /// The library opened.
        path: String,
        /// The version it reported (`11.2`).
        found: String,
    },
    /// A load setting (option or environment variable) has a value that cannot be used.
    #[error("{name}={value:?} is not valid: expected {expected}")]
    InvalidSetting {
        /// The environment variable or option (`CUDRV_MAX_DRIVER_VERSION`).
        name: &'static str,
        /// The value given.
        value: String,
        /// What it should look like.
        expected: &'static str,
    },
}

/// Opens the driver `options` names (or the system's `libcuda.so.1`), bootstraps
/// `cuGetProcAddress` and resolves the whole table (`Driver::load`).
///
/// # Safety
/// As for `Driver::load`: the library must be a CUDA driver.
pub(crate) unsafe fn load(options: LoadOptions) -> Result<Loaded, LoadError> {
    if let Some(p) = &options.path {
        check_regular_file(p)?;
    }
    let (looked, library) = match &options.path {
        Some(p) => (p.display().to_string(), open(p.as_os_str())),
        None => (
            format!("{SYSTEM_LIBCUDA} through the system loader (LD_LIBRARY_PATH, ld.so.cache)"),
            open(std::ffi::OsStr::new(SYSTEM_LIBCUDA)),
        ),
    };
    let library = library.map_err(|reason| LoadError::NotFound { looked: looked.clone(), reason })?;
    let path = options.path.clone().unwrap_or_else(|| PathBuf::from(SYSTEM_LIBCUDA));
    let gpa = bootstrap(&library).ok_or_else(|| LoadError::NotADriver { path: path.display().to_string() })?;
    let file = file_of(gpa);
    // A driver is never unloaded: its threads and atexit handlers may outlive us.
    let library = ManuallyDrop::new(library);
    resolve(gpa, options, Source::Library { path, file, _library: library })
}

/// Refuses a driver path that names something other than a regular file (after symbolic
/// links): `dlopen` of a FIFO or a pipe waits for a writer for ever. A bare name (no `/`)
/// is searched for by the system loader and is not checked; a path that does not exist is
/// left to the loader's own message.
pub(crate) fn check_regular_file(path: &Path) -> Result<(), LoadError> {
    if !path.as_os_str().as_encoded_bytes().contains(&b'/') {
        return Ok(());
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    match file_kind(&meta) {
        None => Ok(()),
        Some(what) => Err(LoadError::NotARegularFile { path: path.display().to_string(), what }),
    }
}

/// What `meta` describes when it is not a regular file (`a FIFO`), else `None`.
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO or a pipe");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("not a regular file")
}

/// The file the system loader mapped the bootstrap function from (`dladdr`), so that a
/// driver found by name can say where it lives. `None` when the loader does not know it,
/// and always on targets without `dladdr` (not unix).
#[cfg(not(unix))]
fn file_of(_gpa: GetProcAddress) -> Option<PathBuf> {
    None
}

/// The file the system loader mapped the bootstrap function from (`dladdr`), so that a
/// driver found by name can say where it lives. `None` when the loader does not know it.
#[cfg(unix)]
fn file_of(gpa: GetProcAddress) -> Option<PathBuf> {
    #[repr(C)]
    struct DlInfo {
        fname: *const c_char,
        fbase: *mut c_void,
        sname: *const c_char,
        saddr: *mut c_void,
    }
    extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }
    let addr = match gpa {
        GetProcAddress::V2(f) => f as *const c_void,
        GetProcAddress::V1(f) => f as *const c_void,
    };
    let mut info = DlInfo {
        fname: std::ptr::null(),
        fbase: std::ptr::null_mut(),
        sname: std::ptr::null(),
        saddr: std::ptr::null_mut(),
    };
    // SAFETY: `addr` is a function in a loaded object; `info` is a valid out-pointer.
    if unsafe { dladdr(addr, &mut info) } == 0 || info.fname.is_null() {
        return None;
    }
    // SAFETY: dladdr sets fname to a NUL-terminated string owned by the loader.
    let name = unsafe { CStr::from_ptr(info.fname) };
    let path = PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name.to_bytes()));
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

fn open(name: &std::ffi::OsStr) -> Result<Library, String> {
    // SAFETY: opening a shared library runs its initialisers; that is inherent in loading
    // a driver, and is what the user asked for by naming it.
    unsafe { Library::new(name) }.map_err(|e| {
        // dlerror's text starts with the name we already show: keep only the reason.
        let text = e.to_string();
        let prefix = format!("{}: ", name.to_string_lossy());
        text.strip_prefix(&prefix).map_or_else(|| text.clone(), str::to_string)
    })
}

/// Picks the bootstrap: the 4-argument `cuGetProcAddress` (every driver since 11.3
/// exports it) reads the version; drivers 12.0 and later are then resolved through
/// `cuGetProcAddress_v2`, which also says why a symbol is missing.
fn bootstrap(library: &Library) -> Option<GetProcAddress> {
    // SAFETY: both symbols, where present, have these C signatures (cuda.h).
    let (v2, v1) = unsafe {
        (
            library.get::<GetProcAddressV2>(b"cuGetProcAddress_v2\0").ok().map(|f| *f),
            library.get::<GetProcAddressV1>(b"cuGetProcAddress\0").ok().map(|f| *f),
        )
    };
    match (v1, v2) {
        (Some(v1), Some(v2)) => {
            let v1 = GetProcAddress::V1(v1);
            match read_version(v1) {
                Ok(v) if v >= 12000 => Some(GetProcAddress::V2(v2)),
                _ => Some(v1),
            }
        }
        (Some(v1), None) => Some(GetProcAddress::V1(v1)),
        (None, Some(v2)) => Some(GetProcAddress::V2(v2)),
        (None, None) => None,
    }
}

impl GetProcAddress {
    /// Requests `symbol` at exactly `version`. Checks the status, the query result and
    /// the pointer: a pointer is returned only if all three say it is valid.
    pub(crate) fn request(&self, symbol: &CStr, version: u32, flags: u64) -> Result<*mut c_void, Missing> {
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let cuda_version = c_int::try_from(version).map_err(|_| Missing::Status(CUresult::CUDA_ERROR_INVALID_VALUE))?;
        let status = match self {
            GetProcAddress::V2(f) => {
                let mut query = ProcAddressQuery::SUCCESS;
                // SAFETY: symbol is NUL-terminated; pfn and query are valid out-pointers.
                let status = unsafe { f(symbol.as_ptr(), &mut pfn, cuda_version, flags, &mut query) };
                if status == CUresult::CUDA_SUCCESS {
                    if query == ProcAddressQuery::SYMBOL_NOT_FOUND {
                        return Err(Missing::SymbolNotFound);
                    }
                    if query == ProcAddressQuery::VERSION_NOT_SUFFICIENT {
                        return Err(Missing::VersionNotSufficient);
                    }
                    if query != ProcAddressQuery::SUCCESS {
                        return Err(Missing::Status(status));
                    }
                }
                status
            }
            // SAFETY: symbol is NUL-terminated; pfn is a valid out-pointer (V1 has no query).
            GetProcAddress::V1(f) => unsafe { f(symbol.as_ptr(), &mut pfn, cuda_version, flags) },
        };
        if status == CUresult::CUDA_ERROR_NOT_FOUND {
            return Err(Missing::SymbolNotFound);
        }
        if status != CUresult::CUDA_SUCCESS {
            return Err(Missing::Status(status));
        }
        if pfn.is_null() {
            return Err(Missing::NullPointer);
        }
        Ok(pfn)
    }
}

/// Resolves `cuDriverGetVersion` at its first ABI (2020) and calls it.
fn read_version(gpa: GetProcAddress) -> Result<u32, String> {
    let variant = match crate::call::cuDriverGetVersion_v2020.entry() {
        crate::table::Entry::Variant(i) => crate::table::VARIANTS.get(i),
        _ => None,
    }
    .ok_or("the table has no cuDriverGetVersion variant")?;
    let f = gpa
        .request(variant.symbol, variant.version, FLAG_DEFAULT)
        .map_err(|m| format!("not resolvable: {}", missing_text(m)))?;
    // SAFETY: the driver returned this pointer for that variant, whose signature is
    // PFN_cuDriverGetVersion_v2020.
    let f = unsafe { std::mem::transmute::<*mut c_void, crate::sys::PFN_cuDriverGetVersion_v2020>(f) }
        .ok_or("a null pointer")?;
    let mut raw: c_int = 0;
    // SAFETY: `raw` is a valid out-pointer.
    let status = unsafe { f(&mut raw) };
    if status != CUresult::CUDA_SUCCESS {
        return Err(format!("returned {}", status_text(status)));
    }
    u32::try_from(raw).map_err(|_| format!("returned the version {raw}"))
}

/// `CUDA_ERROR_UNKNOWN (999)`: a status as written text, named from the pinned header.
fn status_text(status: CUresult) -> String {
    match crate::table::header_error_name(status.0) {
        Some(name) => format!("{name} ({})", status.0),
        None => format!("unknown CUresult {}", status.0),
    }
}

/// Why a request was not satisfied, as written text.
fn missing_text(m: Missing) -> String {
    match m {
        Missing::SymbolNotFound => "the driver does not export it".to_string(),
        Missing::VersionNotSufficient => "the driver has no variant at this ABI version".to_string(),
        Missing::Status(s) => format!("cuGetProcAddress returned {}", status_text(s)),
        Missing::NullPointer => "cuGetProcAddress returned a null pointer".to_string(),
    }
}

/// What loading gives: everything a `Driver` is made of.
pub(crate) struct Loaded {
    pub(crate) source: Source,
    /// `None` only for no driver ([`Loaded::none`]).
    pub(crate) gpa: Option<GetProcAddress>,
    pub(crate) driver_version: u32,
    pub(crate) version: u32,
    pub(crate) options: LoadOptions,
    pub(crate) slots: Slots<VARIANT_COUNT>,
    pub(crate) name_slots: Slots<NAME_COUNT>,
    pub(crate) states: Vec<Availability>,
    pub(crate) bound: Vec<Option<usize>>,
    pub(crate) resolve_time: Duration,
}

impl Loaded {
    /// No driver: nothing resolved, every slot null.
    pub(crate) const fn none() -> Loaded {
        Loaded {
            source: Source::None,
            gpa: None,
            driver_version: 0,
            version: 0,
            options: LoadOptions { path: None, max_version: None, per_thread_default_stream: false },
            slots: Slots::null(),
            name_slots: Slots::null(),
            states: Vec::new(),
            bound: Vec::new(),
            resolve_time: Duration::ZERO,
        }
    }
}

/// Reads the driver version, then resolves every variant and binds every name.
pub(crate) fn resolve(gpa: GetProcAddress, options: LoadOptions, source: Source) -> Result<Loaded, LoadError> {
    let started = Instant::now();
    let path = source.describe();
    let driver_version =
        read_version(gpa).map_err(|detail| LoadError::VersionQueryFailed { path: path.clone(), detail })?;
    if driver_version < MIN_DRIVER_VERSION {
        return Err(LoadError::TooOld { path, found: version::display(driver_version) });
    }
    let version = options.max_version.map_or(driver_version, |cap| cap.min(driver_version));

    let mut slots = Slots::null();
    let mut states = Vec::with_capacity(VARIANTS.len());
    for (slot, v) in slots.0.iter_mut().zip(VARIANTS.iter()) {
        let state = if v.per_thread && !options.per_thread_default_stream {
            Availability::NotRequested
        } else if v.version > version {
            Availability::NeedsDriver { version: v.version }
        } else {
            let flags = if v.per_thread { FLAG_PER_THREAD } else { FLAG_DEFAULT };
            match gpa.request(v.symbol, v.version, flags) {
                Ok(p) => {
                    *slot = p;
                    Availability::Resolved { version: v.version }
                }
                Err(m) => Availability::NotInDriver(m),
            }
        };
        states.push(state);
    }

    let mut name_slots = Slots::null();
    let mut bound = Vec::with_capacity(NAMES.len());
    for (slot, n) in name_slots.0.iter_mut().zip(NAMES.iter()) {
        let candidates = n.candidates_for(options.per_thread_default_stream);
        let pick = candidates.iter().copied().find(|&i| slots.0.get(i).is_some_and(|p| !p.is_null()));
        if let Some(p) = pick.and_then(|i| slots.0.get(i)) {
            *slot = *p;
        }
        bound.push(pick);
    }
    Ok(Loaded {
        source,
        gpa: Some(gpa),
        driver_version,
        version,
        options,
        slots,
        name_slots,
        states,
        bound,
        resolve_time: started.elapsed(),
    })
}
