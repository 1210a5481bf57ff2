//! The owner part of a function or kernel handle ([`Part`]): its module or library, its
//! driver, its read-only attributes and what is known of its parameter layout once asked
//! (`params.rs` asks and checks launches against it). Below modules and libraries, which
//! name their handles' owners with it.

use std::sync::OnceLock;

use crate::error::Error;
use crate::resources::values::{Fixed, ParamInfo};
use crate::sys::CUresult;
use crate::Driver;

/// The owner of a function or kernel handle: its module or library, its driver (kept here
/// too, so that a query reaches it in one step rather than through the parent's context),
/// and what is known of its parameter layout once asked for (`None`: the driver does not
/// say).
pub(crate) struct Part<P> {
    pub(crate) parent: P,
    pub(crate) driver: &'static Driver,
    pub(crate) layout: OnceLock<Option<Known>>,
    /// A module function's read-only attributes, once asked (unused for a library kernel,
    /// whose attributes are per device).
    pub(crate) fixed: Fixed,
}

impl<P> Part<P> {
    pub(crate) fn new(parent: P, driver: &'static Driver) -> Part<P> {
        Part { parent, driver, layout: OnceLock::new(), fixed: Fixed::new() }
    }
}

/// The most parameters a kernel can have: its parameters fit in 32 764 bytes (CUDA 12.1+),
/// each at least one byte.
const MAX_PARAMS: usize = 32_764;

/// What is known of a kernel's parameters.
pub(crate) struct Known {
    /// The places of its first parameters: all of them when `complete`.
    pub(crate) params: Box<[ParamInfo]>,
    /// Whether `params` holds every parameter.
    pub(crate) complete: bool,
}

impl Known {
    /// Asks the driver: the count and every place where it says how many (`count`), else
    /// the places of the first `args` parameters (`info`), stopping where an index is past
    /// the last. `None` where the driver does not say.
    pub(crate) fn learn(
        count: impl FnOnce() -> Result<usize, Error>,
        info: impl Fn(usize) -> Result<ParamInfo, Error>,
        args: usize,
    ) -> Option<Known> {
        if let Ok(n) = count() {
            // A count no kernel can have is not believed (nor allocated for).
            if n > MAX_PARAMS {
                return None;
            }
            let params = (0..n).map(&info).collect::<Result<Box<[ParamInfo]>, _>>().ok()?;
            return Some(Known { params, complete: true });
        }
        // Room for at most as many places as a kernel can have parameters, reserved
        // fallibly: with more arguments, the driver refuses the first index past the last.
        let mut params = Vec::new();
        params.try_reserve_exact(args.min(MAX_PARAMS)).ok()?;
        for i in 0..args {
            match info(i) {
                Ok(p) => params.push(p),
                Err(e) if e.answered(CUresult::CUDA_ERROR_INVALID_VALUE) => {
                    return Some(Known { params: params.into_boxed_slice(), complete: true });
                }
                Err(_) => return None,
            }
        }
        Some(Known { params: params.into_boxed_slice(), complete: false })
    }
}
