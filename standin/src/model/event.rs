//! Events: where each was last recorded, and when that completed.

use std::ffi::c_uint;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::model::context::Context;
use crate::run::queue::Queue;

/// A point in a queue's work.
pub(crate) type Position = (Arc<Queue>, u64);

/// Where an event stands.
#[derive(Default)]
pub(crate) struct Mark {
    /// Bumped by every record, so a stale stamp task does nothing.
    pub(crate) generation: u64,
    /// The queue and position of the last record.
    pub(crate) at: Option<Position>,
    /// When the last record completed.
    pub(crate) time: Option<Instant>,
}

#[derive(Clone)]
/// One event.
pub(crate) struct Event {
    pub(crate) ctx: Arc<Context>,
    pub(crate) flags: c_uint,
    pub(crate) mark: Arc<Mutex<Mark>>,
}
