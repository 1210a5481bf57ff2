//! One stub per variant, generated with the exact C signature (see `generated/stubs.rs`).

include!("generated/stubs.rs");
