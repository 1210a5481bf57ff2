//! One C entry point per variant, generated with the exact C signature (see
//! `generated/entries.rs`); each dispatches through `table.rs`.

include!("generated/entries.rs");
