//! The JIT linker (`cuLinkCreate` ... `cuLinkComplete`).

use std::ffi::c_void;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::resources::module::c_name;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUjitInputType, CUlinkState};

/// A link in progress. Not `Clone`: a link state is built by one owner. Dropping it
/// destroys the link state in its context.
pub struct Linker {
    context: Context,
    raw: CUlinkState,
}

// SAFETY: a CUlinkState is a driver handle; `&mut self` methods serialise its use.
unsafe impl Send for Linker {}

impl Linker {
    /// Starts a link in `context`, with no options. On error nothing is created.
    pub fn new(context: &Context) -> Result<Linker, CudaError> {
        let d = context.driver();
        let create = || {
            let mut raw: CUlinkState = std::ptr::null_mut();
            // SAFETY: valid out-pointer; no options.
            CudaError::check(d, "cuLinkCreate", unsafe {
                d.p().cuLinkCreate(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut raw)
            })?;
            Ok(raw)
        };
        let undo = Undo {
            call: "cuLinkDestroy",
            arg: |l: &CUlinkState| handle_arg(*l),
            // SAFETY: the link state was just created and is used by nothing else.
            run: |l: &CUlinkState| unsafe { d.p().cuLinkDestroy(*l) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(Linker { context: context.clone(), raw })
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlinkState {
        self.raw
    }

    /// Adds `data` of `kind` (PTX, cubin, fatbin, ...) under `name` (`cuLinkAddData`).
    pub fn add_data(&mut self, kind: CUjitInputType, data: &[u8], name: &str) -> Result<(), CudaError> {
        let d = self.context.driver();
        let name = c_name(d, "cuLinkAddData", name)?;
        let raw = self.raw;
        self.context.run(|| {
            // SAFETY: the driver reads `data` for its length; no options.
            let status = unsafe {
                d.p().cuLinkAddData(
                    raw,
                    kind,
                    data.as_ptr().cast_mut().cast(),
                    data.len(),
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            CudaError::check(d, "cuLinkAddData", status)
        })
    }

    /// Finishes the link and returns a copy of the linked image (`cuLinkComplete`).
    pub fn complete(&mut self) -> Result<Vec<u8>, CudaError> {
        let d = self.context.driver();
        let raw = self.raw;
        self.context.run(|| {
            let mut image: *mut c_void = std::ptr::null_mut();
            let mut len = 0usize;
            // SAFETY: valid out-pointers.
            CudaError::check(d, "cuLinkComplete", unsafe { d.p().cuLinkComplete(raw, &mut image, &mut len) })?;
            if image.is_null() {
                return Ok(Vec::new());
            }
            // SAFETY: the driver owns `len` bytes at `image` until the link state is destroyed.
            Ok(unsafe { std::slice::from_raw_parts(image.cast::<u8>(), len) }.to_vec())
        })
    }
}

impl Drop for Linker {
    fn drop(&mut self) {
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the link state.
        let destroy = || unsafe { d.p().cuLinkDestroy(raw) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuLinkDestroy", handle_arg(raw), destroy, || {});
    }
}
