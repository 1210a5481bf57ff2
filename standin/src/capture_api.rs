//! Stream capture entry points: `cuStreamBeginCapture` (and `…ToGraph`),
//! `cuStreamEndCapture`, `cuStreamIsCapturing`, `cuStreamGetCaptureInfo` and
//! `cuThreadExchangeStreamCaptureMode`. The capture state is in `capture.rs`.
//!
//! Behaviour follows `docs/driver-facts.md` ("facts": stream capture).

use cudrv::sys::*;

use crate::capture::{self, Info};
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::stream;
use crate::world::World;

/// Begins a capture on `s`: a default stream (facts: the NULL stream) answers
/// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, a capturing one CUDA_ERROR_ILLEGAL_STATE.
fn begin(w: &World, s: CUstream, into: Option<(u64, Vec<u64>)>, mode: CUstreamCaptureMode) -> Result<(), CUresult> {
    let t = stream::resolve(w, s)?;
    if capture::is_default(s) {
        return Err(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    }
    capture::begin(w, s, t.ctx.handle, into, mode)
}

/// `cuStreamBeginCapture` (10.0): the global mode.
pub(crate) unsafe fn cu_stream_begin_capture(w: &World, s: CUstream) -> CUresult {
    status(begin(w, s, None, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL))
}

pub(crate) unsafe fn cu_stream_begin_capture_v10010(w: &World, s: CUstream, mode: CUstreamCaptureMode) -> CUresult {
    status(begin(w, s, None, mode))
}

/// `cuStreamBeginCaptureToGraph`: captures into `g` after `deps`; only default edges
/// (`edges` null or all zero), else CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_stream_begin_capture_to_graph(
    w: &World,
    s: CUstream,
    g: CUgraph,
    deps: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    mode: CUstreamCaptureMode,
) -> CUresult {
    let r = crate::graph::node_list(deps, n).and_then(|deps| {
        if !edges.is_null() && n > 0 {
            // SAFETY: the program passes `n` edges at a non-null `edges`.
            let edges = unsafe { std::slice::from_raw_parts(edges, n) };
            if edges.iter().any(|e| *e != CUgraphEdgeData::default()) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
        }
        begin(w, s, Some((from_ptr(g), deps)), mode)
    });
    status(r)
}

/// `cuStreamEndCapture`: the graph, or NULL and an error (facts: INVALIDATED after an
/// invalidating call, ILLEGAL_STATE when not capturing).
pub(crate) unsafe fn cu_stream_end_capture(w: &World, s: CUstream, ph: *mut CUgraph) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        stream::resolve(w, s)?;
        let graph = capture::end(w, s);
        write(ph, to_ptr(*graph.as_ref().unwrap_or(&0)))?;
        graph.map(drop)
    });
    status(r)
}

/// The capture state of `s`, a live stream.
fn info_of(w: &World, s: CUstream) -> Result<Info, CUresult> {
    stream::resolve(w, s)?;
    Ok(capture::info(w, s))
}

/// `cuStreamIsCapturing`: facts: 0 none, 1 active, 2 invalidated.
pub(crate) unsafe fn cu_stream_is_capturing(w: &World, s: CUstream, out: *mut CUstreamCaptureStatus) -> CUresult {
    status(non_null(out).and_then(|()| write(out, info_of(w, s)?.status)))
}

/// Writes `value` through `out` unless it is null.
fn put_opt<T>(out: *mut T, value: T) -> Result<(), CUresult> {
    match out.is_null() {
        true => Ok(()),
        false => write(out, value),
    }
}

/// The common part of `cuStreamGetCaptureInfo`'s forms: the status (required), then,
/// while the stream is in a capture, whichever of the others are asked for.
#[allow(clippy::too_many_arguments)] // the world and the widest form's out-pointers
fn get_info(
    w: &World,
    s: CUstream,
    status_out: *mut CUstreamCaptureStatus,
    id_out: *mut cuuint64_t,
    graph_out: *mut CUgraph,
    deps_out: *mut *const CUgraphNode,
    edges_out: *mut *const CUgraphEdgeData,
    n_out: *mut usize,
) -> Result<(), CUresult> {
    non_null(status_out)?;
    let info = info_of(w, s)?;
    write(status_out, info.status)?;
    if info.status == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        return Ok(());
    }
    let (deps, edges, n) = info.deps;
    put_opt(id_out, info.id)?;
    put_opt(graph_out, to_ptr(info.graph))?;
    put_opt(deps_out, deps)?;
    put_opt(edges_out, edges)?;
    put_opt(n_out, n)
}

pub(crate) unsafe fn cu_stream_get_capture_info(
    w: &World,
    s: CUstream,
    status_out: *mut CUstreamCaptureStatus,
    id_out: *mut cuuint64_t,
) -> CUresult {
    let null = std::ptr::null_mut();
    status(get_info(w, s, status_out, id_out, null, null.cast(), null.cast(), null.cast()))
}

pub(crate) unsafe fn cu_stream_get_capture_info_v11030(
    w: &World,
    s: CUstream,
    status_out: *mut CUstreamCaptureStatus,
    id_out: *mut cuuint64_t,
    graph_out: *mut CUgraph,
    deps_out: *mut *const CUgraphNode,
    n_out: *mut usize,
) -> CUresult {
    status(get_info(w, s, status_out, id_out, graph_out, deps_out, std::ptr::null_mut(), n_out))
}

#[allow(clippy::too_many_arguments)] // the world and the C signature
pub(crate) unsafe fn cu_stream_get_capture_info_v12030(
    w: &World,
    s: CUstream,
    status_out: *mut CUstreamCaptureStatus,
    id_out: *mut cuuint64_t,
    graph_out: *mut CUgraph,
    deps_out: *mut *const CUgraphNode,
    edges_out: *mut *const CUgraphEdgeData,
    n_out: *mut usize,
) -> CUresult {
    status(get_info(w, s, status_out, id_out, graph_out, deps_out, edges_out, n_out))
}

/// `CU_STREAM_ADD_CAPTURE_DEPENDENCIES` and `CU_STREAM_SET_CAPTURE_DEPENDENCIES`.
const ADD_DEPS: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_ADD_CAPTURE_DEPENDENCIES.0;
const SET_DEPS: u32 = CUstreamUpdateCaptureDependencies_flags::CU_STREAM_SET_CAPTURE_DEPENDENCIES.0;

/// The common part of `cuStreamUpdateCaptureDependencies`' forms: a flag other than ADD
/// or SET, or non-default edge data, is CUDA_ERROR_INVALID_VALUE (edge data is not
/// emulated, as in `cuStreamBeginCaptureToGraph`); then see `capture::update_deps`.
fn update_deps(
    w: &World,
    s: CUstream,
    deps: *const CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    flags: u32,
) -> Result<(), CUresult> {
    let set = match flags {
        ADD_DEPS => false,
        SET_DEPS => true,
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    };
    stream::resolve(w, s)?;
    let deps = crate::graph::node_list(deps, n)?;
    if !edges.is_null() && n > 0 {
        // SAFETY: the program passes `n` edges at a non-null `edges`.
        let edges = unsafe { std::slice::from_raw_parts(edges, n) };
        if edges.iter().any(|e| *e != CUgraphEdgeData::default()) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
    }
    capture::update_deps(w, s, deps, set)
}

/// `cuStreamUpdateCaptureDependencies` (11.3): see [`update_deps`].
pub(crate) unsafe fn cu_stream_update_capture_dependencies(
    w: &World,
    s: CUstream,
    deps: *mut CUgraphNode,
    n: usize,
    flags: std::ffi::c_uint,
) -> CUresult {
    status(update_deps(w, s, deps, std::ptr::null(), n, flags))
}

/// `cuStreamUpdateCaptureDependencies_v2` (12.3): with edge data (NULL: default edges).
pub(crate) unsafe fn cu_stream_update_capture_dependencies_v12030(
    w: &World,
    s: CUstream,
    deps: *mut CUgraphNode,
    edges: *const CUgraphEdgeData,
    n: usize,
    flags: std::ffi::c_uint,
) -> CUresult {
    status(update_deps(w, s, deps, edges, n, flags))
}

/// `cuThreadExchangeStreamCaptureMode`: swaps the calling thread's mode with `*mode`.
pub(crate) unsafe fn cu_thread_exchange_stream_capture_mode(w: &World, mode: *mut CUstreamCaptureMode) -> CUresult {
    let r = non_null(mode).and_then(|()| {
        // SAFETY: a non-null pointer to the caller's mode.
        let old = capture::exchange_thread_mode(w, unsafe { *mode })?;
        write(mode, old)
    });
    status(r)
}
