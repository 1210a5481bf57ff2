//! JIT options and logs: [`JitOptions`] for `cuModuleLoadDataEx`, `cuLibraryLoadData` and
//! `cuLinkCreate`, and the logs and wall time the driver gives back ([`JitLogs`]).

use std::ffi::{c_void, CStr};

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::{Handle, Ownership};
use crate::resources::library::Library;
use crate::resources::module::{c_name, Module};
use crate::sys::{CUjit_fallback, CUjit_option, CUjit_target, CUlibrary, CUmodule};
use crate::Driver;

/// What the JIT compiler falls back to when no exact binary matches the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JitFallback {
    /// Compile the PTX (`CU_PREFER_PTX`).
    PreferPtx,
    /// Use a compatible binary (`CU_PREFER_BINARY`).
    PreferBinary,
}

/// Options for the JIT compiler and linker: a builder. `JitOptions::new()` is not empty:
/// it asks for an error log and an info log of 4 KiB each and for the wall time (what a
/// load `_with` options hands back in [`JitOutput::logs`]); every other option is the
/// driver's default. Each of the three is turned off explicitly.
///
/// ```
/// let options = cudrv::JitOptions::new().optimization_level(4).max_registers(64).line_info(true);
/// assert_eq!((options.error_log_capacity(), options.info_log_capacity()), (4096, 4096));
/// let bare = cudrv::JitOptions::new().info_log(0).error_log(0).wall_time(false); // no logs
/// assert_eq!(bare.error_log_capacity(), 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct JitOptions {
    optimization_level: Option<u32>,
    target: Option<CUjit_target>,
    max_registers: Option<u32>,
    threads_per_block: Option<u32>,
    debug_info: Option<bool>,
    line_info: Option<bool>,
    log_verbose: Option<bool>,
    fallback: Option<JitFallback>,
    info_log: usize,
    error_log: usize,
    wall_time: bool,
}

impl Default for JitOptions {
    fn default() -> JitOptions {
        JitOptions::new()
    }
}

/// Builder setters (inside `impl JitOptions`): `name(arg: T) => value;` sets the field
/// `name` to `value` and returns the options.
macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident($arg:ident: $t:ty) => $value:expr;)+) => {$(
        $(#[$doc])*
        pub fn $name(mut self, $arg: $t) -> JitOptions {
            self.$name = $value;
            self
        }
    )+};
}

impl JitOptions {
    /// The largest log buffer, in bytes: the driver's `CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES`
    /// and `CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES` are `unsigned int`.
    pub const MAX_LOG_BYTES: usize = u32::MAX as usize;

    /// The JIT's error log only (no info log, no wall time): what `load_ptx` and
    /// `from_ptx` ask for, so that a refused module's error names the reason.
    fn errors_only() -> JitOptions {
        JitOptions::new().info_log(0).wall_time(false)
    }

    /// The defaults: 4 KiB error and info logs, the wall time, nothing else set.
    pub fn new() -> JitOptions {
        JitOptions {
            optimization_level: None,
            target: None,
            max_registers: None,
            threads_per_block: None,
            debug_info: None,
            line_info: None,
            log_verbose: None,
            fallback: None,
            info_log: 4096,
            error_log: 4096,
            wall_time: true,
        }
    }

    setters! {
        /// Optimisation level 0 to 4 (`CU_JIT_OPTIMIZATION_LEVEL`; the driver's default is 4).
        optimization_level(level: u32) => Some(level);
        /// Compiles for `target` (`CU_JIT_TARGET`) instead of the current context's device.
        target(target: CUjit_target) => Some(target);
        /// At most `registers` registers per thread (`CU_JIT_MAX_REGISTERS`).
        max_registers(registers: u32) => Some(registers);
        /// Compiles for blocks of at least `threads` threads (`CU_JIT_THREADS_PER_BLOCK`); the
        /// number the compiler targeted is in [`JitLogs::threads_per_block`].
        threads_per_block(threads: u32) => Some(threads);
        /// Generates debug information (`CU_JIT_GENERATE_DEBUG_INFO`).
        debug_info(on: bool) => Some(on);
        /// Generates line information (`CU_JIT_GENERATE_LINE_INFO`).
        line_info(on: bool) => Some(on);
        /// Writes verbose information to the info log (`CU_JIT_LOG_VERBOSE`).
        log_verbose(on: bool) => Some(on);
        /// What to fall back to when no exact binary matches (`CU_JIT_FALLBACK_STRATEGY`).
        fallback(fallback: JitFallback) => Some(fallback);
        /// An info log of `bytes` bytes (`CU_JIT_INFO_LOG_BUFFER`); 0 asks for none. The
        /// driver takes the size as an `unsigned int`: a load or link with options of more
        /// than [`JitOptions::MAX_LOG_BYTES`] is refused with an [`InvalidArgument`] naming
        /// `info_log` and the limit. The buffer is allocated (zeroed, fallibly: a failure is
        /// the same error) when the options are used, not here.
        info_log(bytes: usize) => bytes;
        /// An error log of `bytes` bytes (`CU_JIT_ERROR_LOG_BUFFER`); 0 asks for none. Limits
        /// and errors as [`JitOptions::info_log`] (the error names `error_log`).
        error_log(bytes: usize) => bytes;
        /// Whether to ask for the wall time (`CU_JIT_WALL_TIME`).
        wall_time(on: bool) => on;
    }

    /// The error log's size in bytes (0: none).
    pub fn error_log_capacity(&self) -> usize {
        self.error_log
    }

    /// The info log's size in bytes (0: none).
    pub fn info_log_capacity(&self) -> usize {
        self.info_log
    }

    /// The options as the driver takes them, with the log buffers they point to; for
    /// `what` (the function using them), which names a log size over the driver's limit
    /// or a buffer the host cannot allocate.
    pub(crate) fn build(&self, what: &'static str) -> Result<JitBuffers, InvalidArgument> {
        let mut b = JitBuffers {
            options: Vec::new(),
            values: Vec::new(),
            info: log_buffer(what, "info_log", self.info_log)?,
            error: log_buffer(what, "error_log", self.error_log)?,
            wall_at: None,
            threads_at: None,
        };
        type O = CUjit_option;
        let flag = |on: bool| usize::from(on);
        if let Some(v) = self.optimization_level {
            b.push(O::CU_JIT_OPTIMIZATION_LEVEL, v as usize);
        }
        if let Some(t) = self.target {
            b.push(O::CU_JIT_TARGET, t.0 as usize);
        }
        if let Some(v) = self.max_registers {
            b.push(O::CU_JIT_MAX_REGISTERS, v as usize);
        }
        if let Some(v) = self.threads_per_block {
            b.threads_at = Some(b.push(O::CU_JIT_THREADS_PER_BLOCK, v as usize));
        }
        if let Some(on) = self.debug_info {
            b.push(O::CU_JIT_GENERATE_DEBUG_INFO, flag(on));
        }
        if let Some(on) = self.line_info {
            b.push(O::CU_JIT_GENERATE_LINE_INFO, flag(on));
        }
        if let Some(on) = self.log_verbose {
            b.push(O::CU_JIT_LOG_VERBOSE, flag(on));
        }
        if let Some(f) = self.fallback {
            let raw = match f {
                JitFallback::PreferPtx => CUjit_fallback::CU_PREFER_PTX,
                JitFallback::PreferBinary => CUjit_fallback::CU_PREFER_BINARY,
            };
            b.push(O::CU_JIT_FALLBACK_STRATEGY, raw.0 as usize);
        }
        if self.info_log > 0 {
            let buffer = b.info.as_mut_ptr() as usize;
            b.push(O::CU_JIT_INFO_LOG_BUFFER, buffer);
            b.push(O::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, self.info_log);
        }
        if self.error_log > 0 {
            let buffer = b.error.as_mut_ptr() as usize;
            b.push(O::CU_JIT_ERROR_LOG_BUFFER, buffer);
            b.push(O::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, self.error_log);
        }
        if self.wall_time {
            b.wall_at = Some(b.push(O::CU_JIT_WALL_TIME, 0));
        }
        Ok(b)
    }
}

/// A zeroed log buffer of `bytes` bytes for `what`, the option `option`: more than
/// [`JitOptions::MAX_LOG_BYTES`], or a buffer the host cannot allocate, is an
/// [`InvalidArgument`]. Allocated zeroed (`alloc_zeroed`: fresh pages, so a large log
/// costs memory only where the driver writes), never aborting.
fn log_buffer(what: &'static str, option: &str, bytes: usize) -> Result<Vec<u8>, InvalidArgument> {
    if bytes > JitOptions::MAX_LOG_BYTES {
        let limit = JitOptions::MAX_LOG_BYTES;
        let why = format!("JitOptions::{option} {bytes} bytes: the driver takes at most {limit} (an unsigned int)");
        return Err(InvalidArgument::new(what, why));
    }
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let cannot = || InvalidArgument::new(what, format!("JitOptions::{option} {bytes} bytes cannot be allocated"));
    let mut log = Vec::new();
    log.try_reserve_exact(bytes).map_err(|_| cannot())?;
    log.resize(bytes, 0);
    Ok(log)
}

/// What the JIT compiler or linker reported.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct JitLogs {
    /// The info log (empty if none was asked for or nothing was written).
    pub info: String,
    /// The error log (usually empty on success).
    pub error: String,
    /// The wall time spent compiling and linking, in milliseconds, if asked for.
    pub wall_time_ms: Option<f32>,
    /// The threads per block the compiler targeted, if [`JitOptions::threads_per_block`]
    /// was given.
    pub threads_per_block: Option<u32>,
}

/// A module, library or linked image made by the JIT, with what it reported.
#[derive(Debug)]
#[non_exhaustive]
pub struct JitOutput<T> {
    /// What was made.
    pub value: T,
    /// The logs and wall time.
    pub logs: JitLogs,
}

/// The option arrays handed to the driver and the log buffers they point to. The driver
/// writes the logs into the buffers and its outputs (log lengths, the wall time, the
/// threads per block) into the value slots; for a link state it keeps both until it is
/// destroyed, so whoever holds the link state holds these too, and drops them after it.
/// Values are kept as `usize` (pointer-sized slots) so that the holder stays `Send`.
pub(crate) struct JitBuffers {
    options: Vec<CUjit_option>,
    values: Vec<usize>,
    info: Vec<u8>,
    error: Vec<u8>,
    wall_at: Option<usize>,
    threads_at: Option<usize>,
}

/// The text of a log buffer, up to its first NUL. The buffer starts zeroed and the driver
/// NUL-terminates what it writes; the length it reports in the size option's slot is not
/// used (a link state may report it at creation and write the log later).
fn log_text(buffer: &[u8]) -> String {
    let text = buffer.split(|b| *b == 0).next().unwrap_or(&[]);
    String::from_utf8_lossy(text).trim_end().to_string()
}

impl JitBuffers {
    /// Adds an option; returns its index.
    fn push(&mut self, option: CUjit_option, value: usize) -> usize {
        self.options.push(option);
        self.values.push(value);
        self.values.len() - 1
    }

    /// The number of options.
    pub(crate) fn count(&self) -> u32 {
        u32::try_from(self.options.len()).unwrap_or(0)
    }

    /// The option array.
    pub(crate) fn options(&mut self) -> *mut CUjit_option {
        self.options.as_mut_ptr()
    }

    /// The value array: pointer-sized slots.
    pub(crate) fn values(&mut self) -> *mut *mut c_void {
        self.values.as_mut_ptr().cast()
    }

    fn slot(&self, at: Option<usize>) -> Option<usize> {
        at.and_then(|i| self.values.get(i).copied())
    }

    /// What the driver wrote: the logs, the wall time (a `float` the driver writes into
    /// the first four bytes of its pointer-sized slot, not an integer), the threads per block.
    pub(crate) fn logs(&self) -> JitLogs {
        let wall_time_ms = self.slot(self.wall_at).map(|v| {
            let [a, b, c, d, ..] = v.to_ne_bytes();
            f32::from_ne_bytes([a, b, c, d])
        });
        JitLogs {
            info: log_text(&self.info),
            error: log_text(&self.error),
            wall_time_ms,
            threads_per_block: self.slot(self.threads_at).and_then(|v| u32::try_from(v).ok()),
        }
    }

    /// `error` with the error log (and the info log, if any) as notes.
    pub(crate) fn annotate(&self, error: CudaError) -> CudaError {
        let logs = self.logs();
        let mut error = error;
        if !logs.error.is_empty() {
            error = error.with_note(format!("JIT error log: {}", logs.error));
        }
        if !logs.info.is_empty() {
            error = error.with_note(format!("JIT info log: {}", logs.info));
        }
        error
    }
}

impl Module {
    /// Loads NUL-terminated PTX (or other text the driver accepts) into `context`
    /// (`cuModuleLoadDataEx` with a 4 KiB error log and no other option). On error nothing
    /// is loaded, and the error's notes carry the JIT's error log, which names what it
    /// refused (an unsupported instruction, a missing declaration).
    ///
    /// ```
    /// # cudrv_standin::install().unwrap();
    /// let ctx = cudrv::init()?.device(0)?.primary_context()?;
    /// let broken = ".version 9.0\n.target sm_90\n.address_size 64\n\
    ///               .visible .entry k() { frobnicate.u32 %r1, 1; ret; }";
    /// let e = cudrv::Module::from_ptx(&ctx, broken).unwrap_err();
    /// assert!(e.notes().iter().any(|n| n.contains("frobnicate")), "{e}");
    /// # Ok::<(), cudrv::Error>(())
    /// ```
    pub fn load_ptx(context: &Context, ptx: &CStr) -> Result<Module, Error> {
        Ok(Module::load_ptx_with(context, ptx, &JitOptions::errors_only())?.value)
    }

    /// Loads PTX text (`include_str!("kernel.ptx")`), adding the NUL the driver needs. Text
    /// with a NUL byte inside is refused before any driver call. On error nothing is
    /// loaded; errors as [`Module::load_ptx`] (the JIT's error log in the notes).
    pub fn from_ptx(context: &Context, ptx: &str) -> Result<Module, Error> {
        let ptx = c_name("Module::from_ptx", ptx)?;
        Module::load_ptx(context, &ptx)
    }

    /// Loads NUL-terminated PTX into `context` with JIT `options` (`cuModuleLoadDataEx`),
    /// returning the module and what the JIT reported. On error nothing is loaded and the
    /// error's notes carry the JIT's error log (its text says what the log says); a log
    /// size over [`JitOptions::MAX_LOG_BYTES`], or log buffers the host cannot allocate,
    /// is an [`InvalidArgument`] naming the option, before any driver call.
    pub fn load_ptx_with(context: &Context, ptx: &CStr, options: &JitOptions) -> Result<JitOutput<Module>, Error> {
        // SAFETY: a CStr is NUL-terminated, so the driver reads no further than its end.
        unsafe { Module::load_data_with(context, ptx.to_bytes_with_nul(), options) }
    }

    /// [`Module::load_ptx_with`] for PTX text, adding the NUL the driver needs. Text with a
    /// NUL byte inside is refused before any driver call.
    pub fn from_ptx_with(context: &Context, ptx: &str, options: &JitOptions) -> Result<JitOutput<Module>, Error> {
        let ptx = c_name("Module::from_ptx_with", ptx)?;
        Module::load_ptx_with(context, &ptx, options)
    }

    /// Loads `image` (a cubin, fatbin or NUL-terminated PTX) into `context` with JIT
    /// `options` (`cuModuleLoadDataEx`). Errors as [`Module::load_ptx_with`].
    ///
    /// # Safety
    /// As [`Module::load_data`]: `image` must be a complete cubin or fatbin, or text that
    /// ends with a NUL byte.
    pub unsafe fn load_data_with(
        context: &Context,
        image: &[u8],
        options: &JitOptions,
    ) -> Result<JitOutput<Module>, Error> {
        let pc = context.driver().pc();
        let mut jit = options.build("Module::load_data_with")?;
        let (n, o, v) = (jit.count(), jit.options(), jit.values());
        // SAFETY: `raw` is a valid out-pointer; the option arrays and log buffers live
        // across the call; the caller vouches for `image`.
        let create = |raw: &mut CUmodule| unsafe { pc.cuModuleLoadDataEx(raw, image.as_ptr().cast(), n, o, v) };
        match Handle::create_out(context.clone(), context.as_raw(), create) {
            Ok(h) => Ok(JitOutput { value: Module(h), logs: jit.logs() }),
            Err(e) => Err(jit.annotate(e).into()),
        }
    }
}

impl Library {
    /// Loads NUL-terminated PTX (or other text the driver accepts). Needs no current
    /// context. On error nothing is loaded and the error's notes carry the JIT's error log
    /// (as [`Module::load_ptx`]).
    pub fn load_ptx(driver: &'static Driver, ptx: &CStr) -> Result<Library, Error> {
        Ok(Library::load_ptx_with(driver, ptx, &JitOptions::errors_only())?.value)
    }

    /// Loads PTX text (`include_str!("kernel.ptx")`), adding the NUL the driver needs. Text
    /// with a NUL byte inside is refused before any driver call. On error nothing is loaded.
    pub fn from_ptx(driver: &'static Driver, ptx: &str) -> Result<Library, Error> {
        let ptx = c_name("Library::from_ptx", ptx)?;
        Library::load_ptx(driver, &ptx)
    }

    /// Loads NUL-terminated PTX with JIT `options` (`cuLibraryLoadData`'s JIT options).
    /// Needs no current context. On error nothing is loaded and the error's notes carry the
    /// JIT's error log; log sizes are checked as [`Module::load_ptx_with`] checks them.
    pub fn load_ptx_with(
        driver: &'static Driver,
        ptx: &CStr,
        options: &JitOptions,
    ) -> Result<JitOutput<Library>, Error> {
        // SAFETY: a CStr is NUL-terminated, so the driver reads no further than its end.
        unsafe { Library::load_data_with(driver, ptx.to_bytes_with_nul(), options) }
    }

    /// [`Library::load_ptx_with`] for PTX text, adding the NUL the driver needs. Text with
    /// a NUL byte inside is refused before any driver call.
    pub fn from_ptx_with(
        driver: &'static Driver,
        ptx: &str,
        options: &JitOptions,
    ) -> Result<JitOutput<Library>, Error> {
        let ptx = c_name("Library::from_ptx_with", ptx)?;
        Library::load_ptx_with(driver, &ptx, options)
    }

    /// Loads `image` with JIT `options` (`cuLibraryLoadData`). Errors as
    /// [`Library::load_ptx_with`].
    ///
    /// # Safety
    /// As [`Library::load_data`]: `image` must be a complete cubin or fatbin, or text that
    /// ends with a NUL byte.
    pub unsafe fn load_data_with(
        driver: &'static Driver,
        image: &[u8],
        options: &JitOptions,
    ) -> Result<JitOutput<Library>, Error> {
        let mut raw: CUlibrary = std::ptr::null_mut();
        let mut jit = options.build("Library::load_data_with")?;
        let (n, o, v) = (jit.count(), jit.options(), jit.values());
        let (library_options, library_values) = (std::ptr::null_mut(), std::ptr::null_mut());
        let image = image.as_ptr().cast();
        // SAFETY: valid out-pointer; the option arrays and log buffers live across the
        // call; the caller vouches for `image`.
        let loaded =
            unsafe { driver.pc().cuLibraryLoadData(&mut raw, image, o, v, n, library_options, library_values, 0) };
        match loaded {
            Ok(()) => Ok(JitOutput { value: Library(Handle::new(driver, raw, Ownership::Owned)), logs: jit.logs() }),
            Err(e) => Err(jit.annotate(e).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wall_time_is_a_float_in_the_first_four_bytes_of_its_slot() {
        let mut jit = JitOptions::new().info_log(0).error_log(0).build("test").unwrap();
        assert_eq!(jit.count(), 1);
        let slot = jit.values();
        // What the driver does: `*(float *)&values[i] = ms`.
        // SAFETY: the slot is pointer-sized, so it has room and alignment for an f32.
        unsafe { slot.cast::<f32>().write(12.5) };
        assert_eq!(jit.logs().wall_time_ms, Some(12.5));
    }

    #[test]
    fn logs_stop_at_the_first_nul() {
        assert_eq!(log_text(b"error: bad\n\0junk"), "error: bad");
        assert_eq!(log_text(b"no nul at all"), "no nul at all");
        assert_eq!(log_text(b""), "");
    }

    #[test]
    fn every_option_has_its_value_and_the_logs_point_to_their_buffers() {
        let mut jit = JitOptions::new()
            .optimization_level(2)
            .threads_per_block(128)
            .info_log(64)
            .error_log(32)
            .build("test")
            .unwrap();
        // level, threads, info buffer and size, error buffer and size, wall time.
        assert_eq!(jit.count(), 7);
        let (options, values) = (jit.options.clone(), jit.values.clone());
        assert_eq!(options[0], CUjit_option::CU_JIT_OPTIMIZATION_LEVEL);
        assert_eq!(values[..2], [2, 128]);
        assert_eq!(values[2], jit.info.as_mut_ptr() as usize);
        assert_eq!((values[3], values[5]), (64, 32));
        assert_eq!(jit.logs().threads_per_block, Some(128));
    }

    #[test]
    fn a_log_over_the_drivers_unsigned_int_is_refused_and_the_limit_is_allocated_lazily() {
        let over = JitOptions::MAX_LOG_BYTES + 1;
        for (options, name) in [
            (JitOptions::new().info_log(over), "JitOptions::info_log"),
            (JitOptions::new().error_log(usize::MAX), "JitOptions::error_log"),
        ] {
            let e = options.build("Module::load_ptx_with").err().unwrap();
            assert_eq!(e.what(), "Module::load_ptx_with");
            assert!(e.why().contains(name) && e.why().contains("4294967295"), "{e}");
        }
        // The limit: 4 GiB of fresh zeroed pages, or, on a host that cannot reserve them, an
        // InvalidArgument saying so.
        match JitOptions::new().info_log(JitOptions::MAX_LOG_BYTES).build("test") {
            Ok(jit) => assert_eq!(
                (jit.info.len(), jit.info.first(), jit.info.last()),
                (JitOptions::MAX_LOG_BYTES, Some(&0), Some(&0))
            ),
            Err(e) => assert!(e.why().contains("JitOptions::info_log 4294967295 bytes cannot be allocated"), "{e}"),
        }
    }
}
