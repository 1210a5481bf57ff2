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
//! kernels that dereference the peer's memory.

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::memory::{DeviceBuffer, DeviceRepr};
use crate::resources::stream::Stream;
use crate::sys::CUresult;

impl Context {
    /// Lets this context access `peer`'s memory (`cuCtxEnablePeerAccess(peer, 0)` with this
    /// context current). Access is one-way: `peer` needs its own call to reach this
    /// context's memory. Returns whether this call enabled it: `Ok(false)` if it already
    /// was (the driver's `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`). On error the access is
    /// as it was and the calling thread's context is unchanged (unless a note says
    /// otherwise).
    pub fn enable_peer_access(&self, peer: &Context) -> Result<bool, CudaError> {
        let (d, raw) = (self.driver(), peer.as_raw());
        self.run(|| {
            // SAFETY: `raw` is a live context (we hold it); flags must be 0.
            match unsafe { d.p().cuCtxEnablePeerAccess(raw, 0) } {
                CUresult::CUDA_SUCCESS => Ok(true),
                CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(false),
                status => Err(d.error(call::cuCtxEnablePeerAccess, status)),
            }
        })
    }

    /// Ends this context's access to `peer`'s memory (`cuCtxDisablePeerAccess(peer)` with
    /// this context current). Returns whether this call disabled it: `Ok(false)` if it was
    /// not enabled (the driver's `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`). The access is not
    /// counted: this ends it for every user of the pair (see the module docs). On error
    /// the access is as it was.
    pub fn disable_peer_access(&self, peer: &Context) -> Result<bool, CudaError> {
        let (d, raw) = (self.driver(), peer.as_raw());
        self.run(|| {
            // SAFETY: `raw` is a live context (we hold it).
            match unsafe { d.p().cuCtxDisablePeerAccess(raw) } {
                CUresult::CUDA_SUCCESS => Ok(true),
                CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED => Ok(false),
                status => Err(d.error(call::cuCtxDisablePeerAccess, status)),
            }
        })
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Copies `src`, which may belong to another context or device, to the start of this
    /// buffer, ordered on `stream` (`cuMemcpyPeerAsync` with both buffers' contexts). Works
    /// with or without peer access (without it the driver stages the copy). Order `src`'s
    /// producer before it with an event ([`Stream::wait_event`]). A source longer than
    /// this buffer is refused before any driver call.
    pub fn copy_from_peer_async(&self, src: &DeviceBuffer<T>, stream: &Stream) -> Result<(), Error> {
        if src.len() > self.len() {
            let why = format!("{} values do not fit in a buffer of {}", src.len(), self.len());
            return Err(InvalidArgument::new("DeviceBuffer::copy_from_peer_async", why).into());
        }
        let pc = stream.context().driver().pc();
        let (dst, dst_ctx) = (self.as_raw(), self.context().as_raw());
        let (from, src_ctx) = (src.as_raw(), src.context().as_raw());
        let (bytes, s) = (src.size_bytes(), stream.as_raw());
        // SAFETY: both ranges are live allocations of at least `bytes` in their contexts,
        // which we hold; the stream is live.
        Ok(stream.context().run(|| unsafe { pc.cuMemcpyPeerAsync(dst, dst_ctx, from, src_ctx, bytes, s) })?)
    }
}
