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
