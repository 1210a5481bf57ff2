//! Raw driver API types, enums, constants and `PFN_*` typedefs, as bindgen emits them for
//! the pinned `cuda.h` (CUDA 13.5). Generated: see `DESIGN.md`.
//!
//! Enums are newtypes over their integer (`CUresult(pub u32)`), so a code this header does
//! not know is still a valid value.

#![allow(
    unknown_lints,
    unpredictable_function_pointer_comparisons,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    missing_docs,
    clippy::all,
    clippy::pedantic,
    clippy::indexing_slicing,
    clippy::undocumented_unsafe_blocks,
    missing_debug_implementations
)]

include!("generated/sys.rs");
