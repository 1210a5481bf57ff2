//! The JIT linker (`cuLinkCreate` ... `cuLinkComplete`).

use std::ffi::c_void;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::{kind, Ownership, Unique};
use crate::resources::jit::{JitBuffers, JitLogs, JitOptions};
use crate::resources::module::{c_name, Module};
use crate::sys::{CUjitInputType, CUlinkState};

kind!(
    /// The link state kind: owned by its context, destroyed in it.
    LinkerKind: CUlinkState = "Linker", owner Context, in its context, release cuLinkDestroy
);

/// A link in progress. Not `Clone`: a link state is built by one owner. Dropping it
/// destroys the link state in its context.
pub struct Linker {
    // Declared first, so dropped first: the link state is destroyed before the option
    // arrays and log buffers it writes into.
    link: Unique<LinkerKind>,
    jit: Option<JitBuffers>,
}

impl std::fmt::Debug for Linker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.link.fmt_debug(f)
    }
}

impl Linker {
    /// Starts a link in `context`, with no options. On error nothing is created.
    pub fn new(context: &Context) -> Result<Linker, Error> {
        let pc = context.driver().pc();
        let (options, values) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointer; no options.
        let create = |raw: &mut CUlinkState| unsafe { pc.cuLinkCreate(0, options, values, raw) };
        let link = Unique::create_out(context.clone(), context.as_raw(), create)?;
        Ok(Linker { link, jit: None })
    }

    /// Starts a link in `context` with JIT `options` (`cuLinkCreate`): the log buffers
    /// live as long as the linker, [`Linker::logs`] reads them at any time, and a failed
    /// [`Linker::add_ptx`], [`Linker::add_data`] or [`Linker::complete`] carries the error
    /// log in its notes. On error nothing is created (and the error carries the logs); a
    /// log size over [`JitOptions::MAX_LOG_BYTES`], or log buffers the host cannot
    /// allocate, is an [`InvalidArgument`] naming the option, before any driver call.
    pub fn new_with(context: &Context, options: &JitOptions) -> Result<Linker, Error> {
        let pc = context.driver().pc();
        let mut jit = options.build("Linker::new_with")?;
        let (n, o, v) = (jit.count(), jit.options(), jit.values());
        // SAFETY: valid out-pointer; the option arrays and log buffers live as long as the
        // link state (the linker holds them and drops them after it).
        let create = |raw: &mut CUlinkState| unsafe { pc.cuLinkCreate(n, o, v, raw) };
        match Unique::create_out(context.clone(), context.as_raw(), create) {
            Ok(link) => Ok(Linker { link, jit: Some(jit) }),
            Err(e) => Err(jit.annotate(e).into()),
        }
    }

    /// Adopts a link state made with `cuLinkCreate`: dropping the linker destroys it in
    /// `context`. cudrv does not know its options, so [`Linker::logs`] is empty (read the
    /// logs from the buffers you gave the driver).
    ///
    /// # Safety
    /// `raw` must be a live link state created in `context` that nothing else destroys,
    /// and the option values and log buffers it was created with must outlive it.
    pub unsafe fn from_raw(context: &Context, raw: CUlinkState) -> Linker {
        Linker { link: Unique::new(context.clone(), raw, Ownership::Owned), jit: None }
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlinkState {
        self.link.raw()
    }

    /// What the linker has reported so far (empty for a linker made without options):
    /// the info and error logs, and after [`Linker::complete`] the wall time.
    pub fn logs(&self) -> JitLogs {
        self.jit.as_ref().map(JitBuffers::logs).unwrap_or_default()
    }

    /// `error` with the linker's error log as a note, if it has one.
    fn annotate(&self, error: CudaError) -> CudaError {
        match &self.jit {
            Some(jit) => jit.annotate(error),
            None => error,
        }
    }

    /// Adds PTX text under `name` (`cuLinkAddData`), with the NUL the driver needs. Text
    /// or a name with a NUL byte inside is refused before any driver call.
    pub fn add_ptx(&mut self, ptx: &str, name: &str) -> Result<(), Error> {
        let ptx = c_name("Linker::add_ptx", ptx)?;
        // SAFETY: NUL-terminated PTX: the driver reads no further than its end.
        unsafe { self.add_data(CUjitInputType::CU_JIT_INPUT_PTX, ptx.as_bytes_with_nul(), name) }
    }

    /// Adds `data` of `kind` (PTX, cubin, fatbin, ...) under `name` (`cuLinkAddData`). A
    /// name with a NUL byte is refused before any driver call.
    ///
    /// # Safety
    /// The driver reads PTX up to its NUL and binary images by their own headers, not by
    /// the slice's length: `data` must be NUL-terminated text or a complete image of
    /// `kind` ([`Linker::add_ptx`] is the safe form for PTX).
    pub unsafe fn add_data(&mut self, kind: CUjitInputType, data: &[u8], name: &str) -> Result<(), Error> {
        let name = c_name("Linker::add_data", name)?;
        let (pc, raw) = (self.link.driver().pc(), self.as_raw());
        let (image, options, values) = (data.as_ptr().cast_mut().cast(), std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the driver reads `data` for its length; no options.
        let add = || unsafe { pc.cuLinkAddData(raw, kind, image, data.len(), name.as_ptr(), 0, options, values) };
        Ok(self.link.owner().run_raw(add).map_err(|e| self.annotate(e))?)
    }

    /// Finishes the link and returns a copy of the linked image (`cuLinkComplete`); on a
    /// linker made with [`Linker::new_with`], a failure carries the error log in its notes,
    /// and [`Linker::logs`] then has the info log and the wall time. An
    /// image the host cannot hold a copy of is an [`InvalidArgument`] naming its size,
    /// never an abort; the link state stays as the driver left it.
    pub fn complete(&mut self) -> Result<Vec<u8>, Error> {
        let (pc, raw) = (self.link.driver().pc(), self.as_raw());
        let (image, len) = self
            .link
            .owner()
            .run_raw(|| {
                let mut image: *mut c_void = std::ptr::null_mut();
                let mut len = 0usize;
                // SAFETY: valid out-pointers; the link state is live (`self` holds it), and the
                // image it returns stays valid until that state is destroyed (copied below).
                unsafe { pc.cuLinkComplete(raw, &mut image, &mut len) }?;
                Ok((image, len))
            })
            .map_err(|e| self.annotate(e))?;
        if image.is_null() {
            return Ok(Vec::new());
        }
        let mut copy = Vec::new();
        copy.try_reserve_exact(len).map_err(|e| {
            InvalidArgument::new(
                "Linker::complete",
                format!("a host copy of the {len}-byte image cannot be allocated: {e}"),
            )
        })?;
        // SAFETY: the driver owns `len` bytes at `image` until the link state is destroyed,
        // which `&mut self` prevents until we return.
        copy.extend_from_slice(unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) });
        Ok(copy)
    }

    /// Completes the link ([`Linker::complete`]) and loads the linked image into the
    /// linker's context as a module (`cuModuleLoadData`), with no `unsafe`: the image is
    /// the driver's own. Errors as `complete`, then as the load; on error no module is
    /// loaded.
    ///
    /// ```
    /// # cudrv_standin::install().unwrap();
    /// let ctx = cudrv::init()?.device(0)?.primary_context()?;
    /// let mut linker = cudrv::Linker::new(&ctx)?;
    /// linker.add_ptx(include_str!("../../examples/kernels/vector_add.ptx"), "vector_add.ptx")?;
    /// let module = linker.load_module()?;
    /// module.function("vector_add")?;
    /// # Ok::<(), cudrv::Error>(())
    /// ```
    pub fn load_module(&mut self) -> Result<Module, Error> {
        let image = self.complete()?;
        // SAFETY: `image` is a whole image as `cuLinkComplete` made it (a cubin), which the
        // driver reads by its own headers, all within the copy.
        unsafe { Module::load_data(self.link.owner(), &image) }
    }
}
