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

/// One warp instruction's accesses in one space: lane `l` of `mask` accessed `size` bytes
/// at `addrs[l]` as thread `first_thread + l` (the lanes in lane order, as [`Access`]es
/// would be).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpAccess<'a> {
    /// Where.
    pub space: Space,
    /// What.
    pub kind: AccessKind,
    /// Each lane's address (global) or offset (shared); lanes outside `mask` are unspecified.
    pub addrs: &'a [u64; 32],
    /// The lanes that accessed.
    pub mask: u32,
    /// Bytes each.
    pub size: u32,
    /// Lane 0's linear thread index in its block.
    pub first_thread: u32,
    /// The instruction's line in the module text.
    pub line: u32,
}

impl WarpAccess<'_> {
    /// The lanes' accesses one by one, in lane order.
    pub fn each(&self) -> impl Iterator<Item = Access> + '_ {
        (0..32u32).filter(|l| self.mask >> l & 1 != 0).map(|l| Access {
            space: self.space,
            kind: self.kind,
            addr: self.addrs.get(l as usize).copied().unwrap_or(0),
            size: self.size,
            thread: self.first_thread + l,
            line: self.line,
        })
    }
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
    /// A warp instruction's accesses in one space (the executor's way of handing them over:
    /// an observer that can check a warp's lanes together overrides this; by default
    /// each lane goes to [`BlockObserver::access`] in lane order).
    fn warp_access(&mut self, w: &WarpAccess) {
        for a in w.each() {
            self.access(&a);
        }
    }
    /// An ordering point.
    fn event(&mut self, e: Event);
    /// The block has ended (or the launch stopped).
    fn finish(&mut self);
}
