//! Green contexts: the SM resources of a device and the green contexts made of them
//! (`green.rs` has the entry points).

use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::model::context::Context;
use crate::model::handles::Registry;

/// The smallest SM group `cuDevSmResourceSplitByCount` makes on the emulated device
/// (sm_90), and the multiple a group's size is rounded up to (driver-facts.md: to be
/// checked on the H200).
pub(crate) const SM_SPLIT_MIN: c_uint = 8;
/// The granularity of a split's group sizes on sm_90.
pub(crate) const SM_SPLIT_ALIGN: c_uint = 8;
/// The granularity with `CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING` (to be checked).
pub(crate) const SM_SPLIT_ALIGN_IGNORING_COSCHEDULING: c_uint = 2;

/// One green context.
pub(crate) struct Green {
    /// The context `cuCtxFromGreenCtx` gives (made with it, never current by itself).
    pub(crate) ctx: Arc<Context>,
    /// The number of SMs it runs on.
    pub(crate) sms: c_uint,
}

/// A world's green contexts and resource descriptors.
pub(crate) struct Greens {
    pub(crate) greens: Registry<Green>,
    /// Descriptors (`cuDevResourceGenerateDesc`, never destroyed): the SM count of each.
    pub(crate) descs: BTreeMap<u64, c_uint>,
}

impl Greens {
    /// None.
    pub(crate) const fn new() -> Greens {
        Greens { greens: Registry::new("green context", CUresult::CUDA_ERROR_INVALID_HANDLE), descs: BTreeMap::new() }
    }

    /// The green context whose context is `ctx`; 0 if none.
    pub(crate) fn of_context(&self, ctx: u64) -> u64 {
        self.greens.iter().find(|(_, g)| g.ctx.handle == ctx).map_or(0, |(&h, _)| h)
    }
}

/// The size of each group of a split of `available` SMs with at least `min_count` each
/// (0: the smallest), and the number of groups possible.
pub(crate) fn split(available: c_uint, min_count: c_uint, ignore_coscheduling: bool) -> (c_uint, c_uint) {
    let align = if ignore_coscheduling { SM_SPLIT_ALIGN_IGNORING_COSCHEDULING } else { SM_SPLIT_ALIGN };
    let min = if ignore_coscheduling { align } else { SM_SPLIT_MIN };
    let size = min_count.max(min).div_ceil(align).saturating_mul(align);
    (size, available / size)
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_round_up_to_the_granularity() {
        assert_eq!(super::split(132, 0, false), (8, 16));
        assert_eq!(super::split(132, 9, false), (16, 8));
        assert_eq!(super::split(132, 66, false), (72, 1));
        assert_eq!(super::split(132, 200, false), (200, 0));
        assert_eq!(super::split(132, 3, true), (4, 33));
    }
}
