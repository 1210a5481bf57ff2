//! Events: where each was last recorded, and when that completed.

use std::ffi::c_uint;
use std::path::PathBuf;
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
    /// For an event shared between processes: its state's file and the number of the
    /// last record there.
    pub(crate) ipc: Option<IpcLink>,
}

/// How an inter-process event is shared (`run/shared_event.rs`).
#[derive(Clone, Debug)]
pub(crate) struct IpcLink {
    /// The file of its state.
    pub(crate) path: PathBuf,
    /// The number of the last record made here (in the file's count).
    pub(crate) n: u64,
    /// Whether it was opened here (`cuIpcOpenEventHandle`), not exported from here.
    pub(crate) imported: bool,
}

#[derive(Clone)]
/// One event.
pub(crate) struct Event {
    pub(crate) ctx: Arc<Context>,
    pub(crate) flags: c_uint,
    pub(crate) mark: Arc<Mutex<Mark>>,
}
