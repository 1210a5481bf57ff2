//! Reporting wrappers: as [`crate::p`], and a failure other than
//! `CUDA_ERROR_DEINITIALIZED` is reported through [`crate::report()`], naming the call and
//! the first handle, device pointer or device it was passed by value (never an
//! out-pointer; none if it has none):
//! `cuMemFree(0x7f3a00000000) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)`,
//! `cuMemAlloc() failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)`.
//!
//! Each failure gives its own report; nothing is kept between calls. The reporter runs on
//! the calling thread, so never call a `pw` function while holding a lock the reporter
//! might take: call [`crate::p`], keep the status, and report after unlocking.
//!
//! # Safety
//! As for [`crate::p`].

#![allow(non_snake_case, clippy::all, clippy::undocumented_unsafe_blocks)]

use crate::driver::Driver;

/// The reporting wrappers of one [`Driver`]; see the [module documentation](self).
#[derive(Clone, Copy, Debug)]
pub struct Pw<'d>(pub(crate) &'d Driver);

impl Driver {
    /// The reporting wrappers: as [`Driver::p`], and a failure other than
    /// `CUDA_ERROR_DEINITIALIZED` is reported through [`crate::report()`].
    #[inline(always)]
    pub fn pw(&self) -> Pw<'_> {
        Pw(self)
    }
}

include!("generated/pw.rs");
