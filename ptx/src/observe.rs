//! What an embedder may observe of a launch (a sanitizer): each memory access of each
//! thread and each barrier, through [`Observer`], given to [`Module::launch_observed`](crate::Module::launch_observed).
//! A launch without one checks a single `Option` per memory instruction and nothing more.

/// The state space of an access (a generic address is resolved first; local and
/// parameter accesses are not observed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Device memory: `addr` is the address.
    Global,
    /// The block's shared memory: `addr` is the offset in it.
    Shared,
}

/// What an access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A plain (weak) load.
    Read,
    /// A plain (weak) store.
    Write,
    /// An atomic (`atom`, `red`), or a load or store with `.volatile`, `.relaxed`,
    /// `.acquire` or `.release`: a strong access, which does not race.
    Atomic,
}

/// One thread's access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Where.
    pub space: Space,
    /// What.
    pub kind: AccessKind,
    /// The address (global) or offset (shared).
    pub addr: u64,
    /// Bytes.
    pub size: u32,
    /// The thread's linear index in its block (`x + y * ntid.x + z * ntid.x * ntid.y`).
    pub thread: u32,
    /// The instruction's line in the module text.
    pub line: u32,
}

/// An ordering point of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A barrier (`bar.sync`, `barrier.sync`, `bar.red`, `bar.arrive`'s partner) opened:
    /// the threads that waited go on.
    Barrier,
    /// Warp `warp` executed `bar.warp.sync` (`__syncwarp`).
    WarpSync {
        /// The warp's index in the block.
        warp: u32,
    },
    /// A thread executed `membar` or `fence`.
    Fence {
        /// The thread's linear index in its block.
        thread: u32,
    },
}

/// Observes a launch: hands each block an observer of its own (blocks run in parallel).
pub trait Observer: Sync {
    /// The observer of block `ctaid`, called on the host thread that runs it.
    fn block(&self, ctaid: [u32; 3]) -> Box<dyn BlockObserver + '_>;
}

/// Observes one block, in the order the executor runs it (warps in turn, each until it
/// waits at a barrier or ends; the lanes of one warp instruction in lane order).
pub trait BlockObserver {
    /// A thread's access (after it was done; a faulting access is not observed).
    fn access(&mut self, a: &Access);
    /// An ordering point.
    fn event(&mut self, e: Event);
    /// The block has ended (or the launch stopped).
    fn finish(&mut self);
}
