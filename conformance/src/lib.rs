//! The conformance suite: a fixed sequence of driver calls, one line per case, run on a
//! real GPU to record what the driver does and on the stand-in to check that it answers
//! alike. See `docs/stand-in.md`.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod cases;
pub mod record;
pub mod runner;

/// The reference answers: the real driver's, recorded on an H200 (see the file's header).
pub const EXPECTED: &str = include_str!("../expected/h200-driver-13000.txt");

/// The cases whose answers on the stand-in differ from the real driver's on purpose.
pub const DIFFERENCES: &str = include_str!("../deliberate-differences.txt");

/// What a 12.4 driver answers in place of the H200's line where the answer depends on the
/// driver's version and not on its entry points: 12.4's JIT refuses PTX ISA 8.8 before it
/// reads the `.target` (the H200 accepts 8.8 and refuses sm_100), and 12.4's
/// `CUdevSmResource` has no partition size or alignment (13.0's fields, left 0).
pub const AT_12_4: &[&str] = &[
    "jit.ptx_target_sm_100 CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "jit.ptx_target_sm_100a CUDA_ERROR_UNSUPPORTED_PTX_VERSION module=untouched",
    "green.device_resource CUDA_SUCCESS type=1 sms=132 min_partition=0 alignment=0",
];

/// The reference answers for a driver of version `emulated` (`None`: the H200's own):
/// [`EXPECTED`], with [`AT_12_4`] in place of the H200's lines at 12.4. Which cases a
/// driver gates for want of an entry point is [`record::expected_at`]'s business.
pub fn reference(emulated: Option<u32>) -> Vec<record::Line> {
    let mut lines = record::parse_all(EXPECTED);
    if emulated == Some(12040) {
        for line in AT_12_4.iter().filter_map(|l| record::Line::parse(l)) {
            if let Some(slot) = lines.iter_mut().find(|r| r.case == line.case) {
                *slot = line;
            }
        }
    }
    lines
}
