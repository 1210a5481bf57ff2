//! Silent wrappers: every entry point, with its exact C signature, returning the `CUresult`.
//!
//! `cudrv::p::cuXxx(..)` calls through the process-wide driver ([`crate::driver()`]);
//! `driver.p().cuXxx(..)` through a given one. An entry that is not resolved returns
//! `CUDA_ERROR_NOT_FOUND` without calling anything. Nothing is reported, allocated, locked
//! or remembered: on success the cost is the raw pointer call's.
//!
//! Unversioned names (`cuMemAlloc`) bind what cuda.h binds: the variant its macros select,
//! with its prototype (else an older one with the identical prototype, never a newer one);
//! versioned names (`cuMemAlloc_v3020`,
//! `cuLaunchHostFunc_v13010`) call exactly that variant.
//!
//! # Safety
//! Every function is `unsafe`: its arguments must meet the driver's contract for the C
//! function of the same name (valid pointers, live handles, and so on).

#![allow(non_snake_case, clippy::all, clippy::undocumented_unsafe_blocks)]

use crate::driver::Driver;

/// The silent wrappers of one [`Driver`]; see the [module documentation](self).
#[derive(Clone, Copy, Debug)]
pub struct P<'d>(pub(crate) &'d Driver);

impl Driver {
    /// The silent wrappers: every entry, returning its `CUresult`.
    #[inline(always)]
    pub fn p(&self) -> P<'_> {
        P(self)
    }
}

include!("generated/p.rs");
