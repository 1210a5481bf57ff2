//! The JIT linker (`cuLinkCreate` ... `cuLinkComplete`).

use std::ffi::c_void;

use crate::call;
use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::handle::{Kind, Ownership, Unique};
use crate::resources::module::c_name;
use crate::sys::{CUcontext, CUjitInputType, CUlinkState};
use crate::table::Call;
use crate::Driver;

/// The link state kind.
pub(crate) struct LinkerKind;

impl Kind for LinkerKind {
    type Raw = CUlinkState;
    type Owner = Context;
    const NAME: &'static str = "Linker";
    fn driver(owner: &Context) -> &'static Driver {
        owner.driver()
    }
    fn addr(raw: CUlinkState) -> usize {
        raw as usize
    }
    fn release_call(_: &Context, _: Ownership) -> Call {
        call::cuLinkDestroy
    }
    fn release_context(owner: &Context) -> Option<CUcontext> {
        Some(owner.as_raw())
    }
    unsafe fn release(owner: &Context, raw: CUlinkState, _: Ownership) -> Result<(), CudaError> {
        // SAFETY: released once, by its only owner.
        unsafe { owner.driver().pc().cuLinkDestroy(raw) }
    }
}

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
        let create = || {
            let mut raw: CUlinkState = std::ptr::null_mut();
            // SAFETY: valid out-pointer; no options.
            unsafe { pc.cuLinkCreate(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut raw) }?;
            Ok(raw)
        };
        Unique::create_in(context.clone(), context.as_raw(), create).map(Linker)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlinkState {
        self.0.raw()
    }

    /// Adds `data` of `kind` (PTX, cubin, fatbin, ...) under `name` (`cuLinkAddData`). A
    /// name with a NUL byte is refused before any driver call.
    pub fn add_data(&mut self, kind: CUjitInputType, data: &[u8], name: &str) -> Result<(), Error> {
        let name = c_name("Linker::add_data", name)?;
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let (image, options, values) = (data.as_ptr().cast_mut().cast(), std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the driver reads `data` for its length; no options.
        let add = || unsafe { pc.cuLinkAddData(raw, kind, image, data.len(), name.as_ptr(), 0, options, values) };
        Ok(self.0.owner().run(add)?)
    }

    /// Finishes the link and returns a copy of the linked image (`cuLinkComplete`).
    pub fn complete(&mut self) -> Result<Vec<u8>, CudaError> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        self.0.owner().run(|| {
            let mut image: *mut c_void = std::ptr::null_mut();
            let mut len = 0usize;
            // SAFETY: valid out-pointers.
            unsafe { pc.cuLinkComplete(raw, &mut image, &mut len) }?;
            if image.is_null() {
                return Ok(Vec::new());
            }
            // SAFETY: the driver owns `len` bytes at `image` until the link state is destroyed.
            Ok(unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) }.to_vec())
        })
    }
}
