//! Streams made by `cuStreamCreate`, and the names of the default stream.

use std::ffi::{c_int, c_uint};
use std::sync::Arc;

use crate::model::context::Context;
use crate::run::queue::Queue;

/// `CU_STREAM_LEGACY` (a cuda.h macro).
pub const STREAM_LEGACY: u64 = 0x1;
/// `CU_STREAM_PER_THREAD` (a cuda.h macro).
pub const STREAM_PER_THREAD: u64 = 0x2;

/// Whether `s` is one of the default stream's names (NULL, `CU_STREAM_LEGACY`,
/// `CU_STREAM_PER_THREAD`).
pub(crate) fn is_default(s: u64) -> bool {
    matches!(s, 0 | STREAM_LEGACY | STREAM_PER_THREAD)
}

/// One stream made by `cuStreamCreate`.
pub(crate) struct Stream {
    /// Its context.
    pub(crate) ctx: Arc<Context>,
    /// Its work.
    pub(crate) queue: Arc<Queue>,
    /// As created (`cuStreamGetFlags`).
    pub(crate) flags: c_uint,
    /// As created, clamped to the context's range (`cuStreamGetPriority`).
    pub(crate) priority: c_int,
}
