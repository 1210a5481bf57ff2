//! Peer access between contexts on different devices (`cuCtxEnablePeerAccess`,
//! `cuCtxDisablePeerAccess`) and copies between devices (`cuMemcpyPeerAsync`).
//!
//! Peer access is not a resource with a handle: it is a state of a pair of contexts in
//! the process (`docs/driver-facts.md`, "Two GPUs"), which the driver does not
//! count. So cudrv treats enabling and disabling as setting that state:
//! - enabling when it is already enabled (the driver's 704,
//!   `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`) is `Ok(false)`: the state is as asked;
//! - disabling when it is not enabled (705, `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`) is
//!   `Ok(false)` for the same reason;
//! - `Ok(true)` says this call changed the state.
//!
//! Because the state is not counted, one disable undoes every enable of the pair: a
//! component that enables access for a while and then disables it again should disable
//! only if its own enable returned `true`. Every other failure (devices that cannot reach
//! each other, a context of the same device, a sticky error) is an error, as returned.
//!
//! Peer copies work without peer access too (the driver stages them through the host,
//! about ten times slower on NVLink): enabling access is a matter of speed, and of
//! kernels that dereference the peer's memory. The copies themselves are those of every
//! kind of device memory (`DeviceBuffer::copy_from_peer_async`,
//! `DeviceSliceMut::copy_from_peer_async`, in `view.rs`).

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::error::Error;
use crate::resources::context::Context;
use crate::sys::{CUcontext, CUresult};
use crate::typed::success_unless;

impl Context {
    /// Lets this context access `peer`'s memory (`cuCtxEnablePeerAccess(peer, 0)` with this
    /// context current). Access is one-way: `peer` needs its own call to reach this
    /// context's memory. Returns whether this call enabled it: `Ok(false)` if it already
    /// was (the driver's `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`). On error the access is
    /// as it was and the calling thread's context is unchanged (unless a note says
    /// otherwise).
    pub fn enable_peer_access(&self, peer: &Context) -> Result<bool, Error> {
        let t = self.driver().typed();
        // Flags must be 0.
        let already = CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
        self.run(|| success_unless(t.cuCtxEnablePeerAccess(peer.live(), 0), already))
            .inspect(|_| note_peer_access(self.as_raw(), peer.as_raw(), true))
    }

    /// Ends this context's access to `peer`'s memory (`cuCtxDisablePeerAccess(peer)` with
    /// this context current). Returns whether this call disabled it: `Ok(false)` if it was
    /// not enabled (the driver's `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`). The access is not
    /// counted: this ends it for every user of the pair (see the module docs). On error
    /// the access is as it was.
    pub fn disable_peer_access(&self, peer: &Context) -> Result<bool, Error> {
        let t = self.driver().typed();
        let not_enabled = CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
        self.run(|| success_unless(t.cuCtxDisablePeerAccess(peer.live()), not_enabled))
            .inspect(|_| note_peer_access(self.as_raw(), peer.as_raw(), false))
    }
}

/// `(context, peer)` pairs where cudrv enabled the context's access to the peer's memory.
static PEERS: Mutex<BTreeSet<(usize, usize)>> = Mutex::new(BTreeSet::new());

/// Notes that `context` can (`on`) or can no longer reach `peer`'s memory.
pub(crate) fn note_peer_access(context: CUcontext, peer: CUcontext, on: bool) {
    let mut peers = PEERS.lock().unwrap_or_else(|e| e.into_inner());
    if on {
        peers.insert((context as usize, peer as usize));
    } else {
        peers.remove(&(context as usize, peer as usize));
    }
}

#[inline(never)]
pub(crate) fn peer_access(context: CUcontext, peer: CUcontext) -> bool {
    PEERS.lock().unwrap_or_else(|e| e.into_inner()).contains(&(context as usize, peer as usize))
}

/// Whether an argument of context `arg` may be used by a launch in `context`: the same
/// context, or a peer whose memory it can reach (enabled through cudrv).
#[inline]
pub(crate) fn usable_in(context: &Context, arg: CUcontext) -> bool {
    let own = context.as_raw();
    arg == own || peer_access(own, arg)
}
