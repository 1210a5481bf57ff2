//! The JIT linker (`cuLinkCreate` ... `cuLinkComplete`).

use std::ffi::c_void;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::handle::{kind, Unique};
use crate::resources::module::c_name;
use crate::sys::{CUjitInputType, CUlinkState};

kind!(
    /// The link state kind: owned by its context, destroyed in it.
    LinkerKind: CUlinkState = "Linker", owner Context, driver |o| o.driver(), context |o| Some(o.as_raw()),
    release cuLinkDestroy
);

/// A link in progress. Not `Clone`: a link state is built by one owner. Dropping it
/// destroys the link state in its context.
pub struct Linker(Unique<LinkerKind>);

impl std::fmt::Debug for Linker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt_debug(f)
    }
}

impl Linker {
    /// Starts a link in `context`, with no options. On error nothing is created.
    pub fn new(context: &Context) -> Result<Linker, CudaError> {
        let pc = context.driver().pc();
        let (options, values) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointer; no options.
        let create = |raw: &mut CUlinkState| unsafe { pc.cuLinkCreate(0, options, values, raw) };
        Unique::create_out(context.clone(), context.as_raw(), create).map(Linker)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlinkState {
        self.0.raw()
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
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let (image, options, values) = (data.as_ptr().cast_mut().cast(), std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the driver reads `data` for its length; no options.
        let add = || unsafe { pc.cuLinkAddData(raw, kind, image, data.len(), name.as_ptr(), 0, options, values) };
        Ok(self.0.owner().run(add)?)
    }

    /// Finishes the link and returns a copy of the linked image (`cuLinkComplete`). An
    /// image the host cannot hold a copy of is an [`InvalidArgument`] naming its size,
    /// never an abort; the link state stays as the driver left it.
    pub fn complete(&mut self) -> Result<Vec<u8>, Error> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let (image, len) = self.0.owner().run(|| {
            let mut image: *mut c_void = std::ptr::null_mut();
            let mut len = 0usize;
            // SAFETY: valid out-pointers.
            unsafe { pc.cuLinkComplete(raw, &mut image, &mut len) }?;
            Ok((image, len))
        })?;
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
}
