//! Checked wrappers: as [`crate::p`], but a failure is returned as `Err(CudaError)` that
//! names the call: `cudrv::pc::cuMemAlloc(&mut ptr, len)?`. Nothing is reported or kept;
//! building the error makes no driver call and no allocation.
//!
//! `driver.pc()` exists for a `&'static Driver` (the process-wide one, or one given to
//! [`crate::set_driver`] or leaked): the error keeps it to look up the code's name and
//! description when it is shown.
//!
//! # Safety
//! As for [`crate::p`].

#![allow(non_snake_case, clippy::all, clippy::undocumented_unsafe_blocks)]

use crate::driver::Driver;

/// The checked wrappers of one [`Driver`]; see the [module documentation](self).
#[derive(Clone, Copy, Debug)]
pub struct Pc(pub(crate) &'static Driver);

impl Driver {
    /// The checked wrappers: as [`Driver::p`], returning `Err(CudaError)` naming the call
    /// on a failure. Only for a `&'static Driver`, which the error keeps to name its code.
    #[inline(always)]
    pub fn pc(&'static self) -> Pc {
        Pc(self)
    }
}

include!("generated/pc.rs");
