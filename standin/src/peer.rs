//! Peer access between devices and peer copies.
//!
//! Every two distinct devices can access each other (`cuDeviceCanAccessPeer` 1; a device
//! and itself 0, as a real driver answers). Peer access is a state of a pair of contexts
//! (the current one and a peer), as driver-facts.md ("Two GPUs") describes: enabling it
//! twice is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, disabling it when not enabled
//! CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, and enabling it toward a context of the current
//! context's own device CUDA_ERROR_INVALID_DEVICE. Destroying a context (resetting or
//! releasing a primary one for the last time) ends the pairs it is in.
//!
//! Peer copies work with or without peer access (a real driver stages them without): the
//! memory is host memory, so they are checked copies (`memory.rs`). `cuMemcpyPeer` runs on
//! the current context's legacy stream (it waits for its work and its blocking streams');
//! `cuMemcpyPeerAsync` in stream order (`stream.rs`).

use std::ffi::{c_int, c_uint};
use std::sync::Arc;

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{from_ptr, non_null, status, write};
use crate::model::context::Context;
use crate::model::graph::{CopyNode, End, Node};
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

pub(crate) unsafe fn cu_device_can_access_peer(w: &World, can: *mut c_int, dev: CUdevice, peer: CUdevice) -> CUresult {
    let r = non_null(can).and_then(|()| {
        if !valid_device(w, dev) || !valid_device(w, peer) {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        write(can, c_int::from(dev != peer))
    });
    status(r)
}

/// `cuDeviceGetP2PAttribute`: between distinct devices, access, native atomics and array
/// access are supported and the performance rank is 0; a device and itself:
/// CUDA_ERROR_INVALID_DEVICE, as the CUDA documentation says.
pub(crate) unsafe fn cu_device_get_p2p_attribute(
    w: &World,
    value: *mut c_int,
    attrib: CUdevice_P2PAttribute,
    src: CUdevice,
    dst: CUdevice,
) -> CUresult {
    type A = CUdevice_P2PAttribute;
    let r = non_null(value).and_then(|()| {
        if !valid_device(w, src) || !valid_device(w, dst) || src == dst {
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        let v = match attrib {
            A::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK => 0,
            A::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
            | A::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
            | A::CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED => 1,
            A::CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED => 0,
            _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        };
        write(value, v)
    });
    status(r)
}

/// The current context and the live context `peer` names.
fn pair(w: &World, peer: CUcontext) -> Result<(Arc<Context>, Arc<Context>), CUresult> {
    let current = w.contexts.current()?;
    let peer = w.contexts.lookup(from_ptr(peer))?;
    Ok((current, peer))
}

fn enable(w: &World, peer: CUcontext, flags: c_uint) -> Result<(), CUresult> {
    if flags != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let (current, peer) = pair(w, peer)?;
    if current.device == peer.device {
        return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
    }
    if !lock(&w.peers).insert((current.handle, peer.handle)) {
        return Err(CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    }
    Ok(())
}

/// `cuCtxEnablePeerAccess`: flags must be 0.
pub(crate) unsafe fn cu_ctx_enable_peer_access(w: &World, peer: CUcontext, flags: c_uint) -> CUresult {
    status(enable(w, peer, flags))
}

pub(crate) unsafe fn cu_ctx_disable_peer_access(w: &World, peer: CUcontext) -> CUresult {
    let r = pair(w, peer).and_then(|(current, peer)| {
        if !lock(&w.peers).remove(&(current.handle, peer.handle)) {
            return Err(CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
        }
        Ok(())
    });
    status(r)
}

/// A copy of `n` bytes from `src` (in `src_ctx`) to `dst` (in `dst_ctx`): both contexts
/// must be live and usable; the ranges are checked as every device copy's, when it is
/// called. Done on the current context's legacy stream (`s`: `None`) or queued on `s`.
fn copy_peer(
    w: &'static World,
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    n: usize,
    s: Option<&crate::model::stream::Target>,
) -> CUresult {
    let r = w.contexts.lookup(from_ptr(dst_ctx)).and_then(|d| {
        d.usable()?;
        w.contexts.lookup(from_ptr(src_ctx))?.usable()?;
        if n == 0 {
            return Ok(());
        }
        {
            let mut m = lock(&w.memory);
            m.check_device(src, n)?;
            m.check_device(dst, n)?;
        }
        let node = Node::Copy(CopyNode { dst: End::Device(dst), src: End::Device(src), len: n });
        match s {
            Some(t) => {
                let op = w.sanitizer.issue(t, 0, || crate::sanitized::what(&node));
                let ctx = Arc::clone(&t.ctx);
                let work = move || crate::sanitized::run(w, op.as_ref(), || crate::graph_node::run(w, &node, &ctx));
                t.submit(work).map(drop)
            }
            None => {
                let ctx = w.contexts.current();
                if let Ok(ctx) = &ctx {
                    ctx.wait_legacy()?;
                }
                match ctx {
                    Ok(ctx) => crate::sanitized::synchronous(w, &ctx, &node),
                    Err(_) => lock(&w.memory).copy_device(dst, src, n),
                }
            }
        }
    });
    status(r)
}

pub(crate) unsafe fn cu_memcpy_peer(
    w: &'static World,
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    n: usize,
) -> CUresult {
    copy_peer(w, dst, dst_ctx, src, src_ctx, n, None)
}

/// `cuMemcpyPeerAsync`: in stream order. On a capturing stream:
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating the capture.
pub(crate) unsafe fn cu_memcpy_peer_async(
    w: &'static World,
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    n: usize,
    s: CUstream,
) -> CUresult {
    let t = match stream::resolve(w, s).and_then(|t| crate::capture::refuse(w, s).map(|()| t)) {
        Ok(t) => t,
        Err(e) => return e,
    };
    copy_peer(w, dst, dst_ctx, src, src_ctx, n, Some(&t))
}
