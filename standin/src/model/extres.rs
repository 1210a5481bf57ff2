//! External resources and process-wide driver state with no family of its own: imported
//! external memory objects (`extmem.rs`), imported external semaphores (`extsem.rs`), and
//! this process's checkpoint state (`checkpoint.rs`).
//!
//! The only semaphores the emulated machine can import are descriptors of the driver's own
//! exported memory (the real driver takes those: `extsem.rs`).

use std::collections::BTreeMap;
use std::ffi::c_int;
use std::sync::Arc;

use crate::run::backing::Backing;

/// One imported external memory object.
pub(crate) struct ExtMem {
    /// The size the import described (the real driver takes a size past the memory).
    pub(crate) size: u64,
    /// The size of the memory behind it: no buffer or array reaches past it.
    pub(crate) memory: usize,
    /// The device the memory is on.
    pub(crate) device: i32,
    /// The memory (shared with the allocation it was exported from).
    pub(crate) backing: Arc<Backing>,
    /// The file descriptor imported: the driver owns it from a successful import, and
    /// closes it when the object is destroyed.
    pub(crate) _fd: ImportedFd,
}

/// One imported external semaphore: nothing but the descriptor it owns (no API on the
/// emulated machine can signal or wait for it besides CUDA's).
pub(crate) struct ExtSem {
    /// The descriptor imported, closed when the semaphore is destroyed.
    pub(crate) _fd: ImportedFd,
}

// The C library's `close` (which the standard library links anyway).
unsafe extern "C" {
    fn close(fd: c_int) -> c_int;
}

/// A descriptor the program gave the driver with an import: closed when dropped, as the
/// real driver closes it, whatever the program did with it meanwhile (a program that
/// closed it already, against the documentation, gets a failed close, ignored, or closes
/// whatever file has its number now: the real driver's behaviour, not an abort).
pub(crate) struct ImportedFd(pub(crate) c_int);

impl Drop for ImportedFd {
    fn drop(&mut self) {
        // SAFETY: `close` takes any number; a bad one fails with EBADF, ignored here.
        let _ = unsafe { close(self.0) };
    }
}

/// The checkpoint state of this process (`CUprocessState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Checkpoint {
    /// `CU_PROCESS_STATE_RUNNING`.
    #[default]
    Running,
    /// `CU_PROCESS_STATE_LOCKED`.
    Locked,
    /// `CU_PROCESS_STATE_CHECKPOINTED`.
    Checkpointed,
}

/// A world's external resources.
pub(crate) struct ExtRes {
    /// Imported external memory objects, by handle.
    pub(crate) memories: BTreeMap<u64, ExtMem>,
    /// Imported external semaphores, by handle.
    pub(crate) semaphores: BTreeMap<u64, ExtSem>,
    /// The checkpoint state of this process.
    pub(crate) checkpoint: Checkpoint,
}

impl ExtRes {
    /// Nothing imported; the process running.
    pub(crate) const fn new() -> ExtRes {
        ExtRes { memories: BTreeMap::new(), semaphores: BTreeMap::new(), checkpoint: Checkpoint::Running }
    }

    /// Live external memory objects, for the ledger: `(kind, value)`.
    pub(crate) fn live(&self, out: &mut Vec<(&'static str, u64)>) {
        out.extend(self.memories.keys().map(|&h| ("external memory", h)));
        out.extend(self.semaphores.keys().map(|&h| ("external semaphore", h)));
    }
}
