//! Green contexts: the SM resources of a device and the green contexts made of them
//! (`green.rs` has the entry points).

use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::model::context::Context;
use crate::model::handles::Registry;

/// The smallest SM group `cuDevSmResourceSplitByCount` makes on the emulated device
/// (sm_90), and the multiple a group's size is rounded up to (measured on the H200:
/// docs/gpu-runs/h200/green-split.txt).
pub(crate) const SM_SPLIT_MIN: c_uint = 8;
/// The granularity of a split's group sizes on sm_90.
pub(crate) const SM_SPLIT_ALIGN: c_uint = 8;
/// The granularity with `CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING`.
pub(crate) const SM_SPLIT_ALIGN_IGNORING_COSCHEDULING: c_uint = 2;
/// The most co-scheduled groups one split makes: the H200 gives 15 groups of 8 of its 132
/// SMs (not 16) and otherwise as many as fit; without co-scheduling, 16 groups of 8.
pub(crate) const SM_SPLIT_MAX_COSCHEDULED_GROUPS: c_uint = 15;

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
        Greens {
            greens: Registry::new("green context", CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED),
            descs: BTreeMap::new(),
        }
    }

    /// The green context whose context is `ctx`; 0 if none.
    pub(crate) fn of_context(&self, ctx: u64) -> u64 {
        self.greens.iter().find(|(_, g)| g.ctx.handle == ctx).map_or(0, |(&h, _)| h)
    }
}

/// The size of each group of a split of `available` SMs with at least `min_count` each
/// (0: the smallest), and the number of groups possible (0: none fits). A size rounded up
/// past `available` is all of it, as on the H200 (`minCount` 129 of 132 SMs: one group
/// of 132).
pub(crate) fn split(available: c_uint, min_count: c_uint, ignore_coscheduling: bool) -> (c_uint, c_uint) {
    let align = if ignore_coscheduling { SM_SPLIT_ALIGN_IGNORING_COSCHEDULING } else { SM_SPLIT_ALIGN };
    let min = if ignore_coscheduling { align } else { SM_SPLIT_MIN };
    if min_count > available {
        return (min_count, 0);
    }
    let size = min_count.max(min).div_ceil(align).saturating_mul(align).min(available);
    let fit = available.checked_div(size).unwrap_or(0);
    let groups = if ignore_coscheduling { fit } else { fit.min(SM_SPLIT_MAX_COSCHEDULED_GROUPS) };
    (size, groups)
}

#[cfg(test)]
#[allow(clippy::panic)] // a test fails by panicking
mod tests {
    #[test]
    fn splits_round_up_to_the_granularity() {
        // docs/gpu-runs/h200/green-split.txt
        assert_eq!(super::split(132, 0, false), (8, 15));
        assert_eq!(super::split(132, 1, false), (8, 15));
        assert_eq!(super::split(132, 9, false), (16, 8));
        assert_eq!(super::split(132, 41, false), (48, 2));
        assert_eq!(super::split(132, 66, false), (72, 1));
        assert_eq!(super::split(132, 129, false), (132, 1));
        assert_eq!(super::split(132, 133, false), (133, 0));
        assert_eq!(super::split(132, 200, false), (200, 0));
        assert_eq!(super::split(132, 3, true), (4, 33));
        assert_eq!(super::split(132, 7, true), (8, 16));
        assert_eq!(super::split(132, 131, true), (132, 1));
    }

    /// Every split the H200 made of its 132 SMs (minCount 1-133, with and without
    /// co-scheduling): the group size and count agree.
    #[test]
    fn splits_agree_with_the_h200() {
        let table = include_str!("../../../docs/gpu-runs/h200/green-split.txt");
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            let v: Vec<u32> = line.split_whitespace().map(|x| x.parse().unwrap_or(u32::MAX)).collect();
            let [flags, min, _, groups, size, ..] = v[..] else { panic!("bad row {line:?}") };
            let (got_size, got_groups) = super::split(132, min, flags == 1);
            assert_eq!(got_groups, groups, "groups for minCount {min}, flags {flags}");
            if groups > 0 {
                assert_eq!(got_size, size, "group size for minCount {min}, flags {flags}");
            }
            rows += 1;
        }
        assert_eq!(rows, 266);
    }
}
