//! External semaphores (`cuImportExternalSemaphore`, `cuSignalExternalSemaphoresAsync`,
//! `cuWaitExternalSemaphoresAsync`, `cuDestroyExternalSemaphore`) and their graph nodes,
//! answered as the real driver answers on a Linux machine with no graphics API and no
//! NvSci (recorded: cases `extsem.*`, driver 580.159.04,
//! `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`).
//!
//! An OPAQUE_FD or TIMELINE_SEMAPHORE_FD semaphore is a descriptor the kernel driver
//! knows: the real driver imports a descriptor `cuMemExportToShareableHandle` gave for
//! virtual memory as a semaphore, and so does the stand-in (the semaphore owns the
//! descriptor, closed when it is destroyed). Any other descriptor is refused by the kernel
//! driver: CUDA_ERROR_UNKNOWN, except a negative TIMELINE_SEMAPHORE_FD descriptor, refused
//! up front: CUDA_ERROR_INVALID_VALUE (a negative OPAQUE_FD one goes to the kernel:
//! CUDA_ERROR_UNKNOWN). The Windows types (opaque Win32, D3D11/D3D12 fences, keyed
//! mutexes, Win32 timeline semaphores) have no meaning on Linux and NvSciSync needs the
//! NvSci libraries: CUDA_ERROR_NOT_SUPPORTED (a null NvSciSync object:
//! CUDA_ERROR_INVALID_VALUE).
//!
//! Nothing on the emulated machine but CUDA can signal or wait for such a semaphore, so a
//! signal or wait of imported semaphores is checked and does nothing (not recorded: no
//! case signals a real semaphore). Signal and wait check the stream first (no context:
//! CUDA_ERROR_INVALID_CONTEXT, even for 0 semaphores), then null arrays and a count of 0
//! (CUDA_ERROR_INVALID_VALUE), then each semaphore: null, CUDA_ERROR_INVALID_VALUE (the
//! real driver answers so for a wait and crashes signalling one: a listed difference);
//! unknown, CUDA_ERROR_INVALID_HANDLE. On a capturing stream they are recorded as a
//! signal or wait node, as the CUDA documentation says the real driver captures them.
//!
//! Graph nodes (`Node::ExtSem`, `model/graph.rs`): the real driver adds a signal or wait
//! node of 0 semaphores, or of null semaphores (the handles are not checked when added),
//! and so does the stand-in; null parameters or graph: CUDA_ERROR_INVALID_VALUE; a null
//! semaphore array with a count crashes it (a listed difference: CUDA_ERROR_INVALID_VALUE
//! here). A node keeps its own copies of the arrays (its get-params calls hand them out)
//! and, launched, signals or waits for nothing. Reading or setting the parameters of a
//! node of another kind: CUDA_ERROR_INVALID_VALUE, as recorded.

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph_params::{replace, replace_in_exec};
use crate::model::extres::{ExtSem, ImportedFd};
use crate::model::graph::{ExtSemNode, ExtSemParams, Node};
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
/// What the real driver answers for a descriptor its kernel driver does not know.
const REFUSED: CUresult = CUresult::CUDA_ERROR_UNKNOWN;
type T = CUexternalSemaphoreHandleType;

fn import(
    w: &World,
    out: *mut CUexternalSemaphore,
    desc: *const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(desc)?;
    // SAFETY: a non-null pointer to the caller's descriptor.
    let d = unsafe { &*desc };
    w.contexts.current()?;
    let fd: c_int = match d.type_ {
        // SAFETY: an OPAQUE_FD descriptor's union holds the descriptor.
        T::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD => unsafe { d.handle.fd },
        T::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD => {
            // SAFETY: a TIMELINE_SEMAPHORE_FD descriptor's union holds the descriptor.
            let fd = unsafe { d.handle.fd };
            if fd < 0 {
                return Err(INVALID);
            }
            fd
        }
        T::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC => {
            // SAFETY: an NvSciSync descriptor's union holds the object pointer.
            non_null(unsafe { d.handle.nvSciSyncObj })?;
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        t if (2..=10).contains(&t.0) => return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED),
        _ => return Err(INVALID),
    };
    crate::extmem::exported_memory(w, fd).ok_or(REFUSED)?;
    // As for external memory, the driver owns the descriptor from a successful import.
    let h = crate::model::handles::fresh();
    lock(&w.extres).semaphores.insert(h, ExtSem { _fd: ImportedFd(fd) });
    write(out, to_ptr(h))
}

/// `cuImportExternalSemaphore`: a semaphore over an OPAQUE_FD or TIMELINE_SEMAPHORE_FD
/// descriptor of exported driver memory. Null pointers or an unknown handle type:
/// CUDA_ERROR_INVALID_VALUE; a descriptor of no driver memory: CUDA_ERROR_UNKNOWN (a
/// negative timeline one: CUDA_ERROR_INVALID_VALUE); the Windows types and NvSciSync:
/// CUDA_ERROR_NOT_SUPPORTED; no current context: CUDA_ERROR_INVALID_CONTEXT. Nothing is
/// written and the descriptor stays the caller's on error.
pub(crate) unsafe fn cu_import_external_semaphore(
    w: &World,
    out: *mut CUexternalSemaphore,
    desc: *const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC,
) -> CUresult {
    status(import(w, out, desc))
}

/// `cuDestroyExternalSemaphore`: forgets it and closes its descriptor. A null semaphore:
/// CUDA_ERROR_INVALID_VALUE; an unknown (or destroyed) one: CUDA_ERROR_INVALID_HANDLE.
pub(crate) unsafe fn cu_destroy_external_semaphore(w: &World, sem: CUexternalSemaphore) -> CUresult {
    if sem.is_null() {
        return INVALID;
    }
    match lock(&w.extres).semaphores.remove(&from_ptr(sem)) {
        Some(_) => CUresult::CUDA_SUCCESS,
        None => CUresult::CUDA_ERROR_INVALID_HANDLE,
    }
}

/// A signal or wait of the `n` semaphores at `sems` on `stream`, as the module says; on a
/// capturing stream, recorded as a node of that kind (`kind`).
fn enqueue<P: Copy>(
    w: &World,
    sems: *const CUexternalSemaphore,
    params: *const P,
    n: c_uint,
    stream: CUstream,
    kind: fn(Vec<P>) -> ExtSemParams,
) -> Result<(), CUresult> {
    crate::stream::resolve(w, stream)?;
    non_null(sems)?;
    non_null(params)?;
    if n == 0 {
        return Err(INVALID);
    }
    let n = usize::try_from(n).map_err(|_| INVALID)?;
    // SAFETY: the caller's arrays of `n` semaphores and `n` parameter blocks (non-null,
    // checked above).
    let (list, blocks) = unsafe { (std::slice::from_raw_parts(sems, n), std::slice::from_raw_parts(params, n)) };
    for &s in list {
        non_null(s)?;
        if !lock(&w.extres).semaphores.contains_key(&from_ptr(s)) {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
    }
    let node = Node::ExtSem(ExtSemNode { sems: list.to_vec(), params: kind(blocks.to_vec()) });
    // Not capturing: nothing to do (the module's note).
    crate::capture::record(w, stream, node).map(drop)
}

/// `cuSignalExternalSemaphoresAsync` (and `_ptsz`): see [`enqueue`].
pub(crate) unsafe fn cu_signal_external_semaphores_async(
    w: &World,
    sems: *const CUexternalSemaphore,
    params: *const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS,
    n: c_uint,
    stream: CUstream,
) -> CUresult {
    status(enqueue(w, sems, params, n, stream, ExtSemParams::Signal))
}

/// `cuWaitExternalSemaphoresAsync` (and `_ptsz`): see [`enqueue`].
pub(crate) unsafe fn cu_wait_external_semaphores_async(
    w: &World,
    sems: *const CUexternalSemaphore,
    params: *const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS,
    n: c_uint,
    stream: CUstream,
) -> CUresult {
    status(enqueue(w, sems, params, n, stream, ExtSemParams::Wait))
}

/// The node made of parameters naming `n` semaphores at `sems`, their blocks at `blocks`:
/// with a count, null arrays: CUDA_ERROR_INVALID_VALUE (a null semaphore array crashes
/// the real driver). A count of 0 and null or unknown semaphores pass (the real driver
/// adds such nodes); the node keeps its own copies.
fn node_of<P: Copy>(
    sems: *mut CUexternalSemaphore,
    blocks: *const P,
    n: c_uint,
    kind: fn(Vec<P>) -> ExtSemParams,
) -> Result<Node, CUresult> {
    let n = usize::try_from(n).map_err(|_| INVALID)?;
    if n == 0 {
        return Ok(Node::ExtSem(ExtSemNode { sems: Vec::new(), params: kind(Vec::new()) }));
    }
    non_null(sems)?;
    non_null(blocks)?;
    // SAFETY: the program passes `n` semaphores and `n` parameter blocks at non-null arrays.
    let (sems, blocks) = unsafe { (std::slice::from_raw_parts(sems, n), std::slice::from_raw_parts(blocks, n)) };
    Ok(Node::ExtSem(ExtSemNode { sems: sems.to_vec(), params: kind(blocks.to_vec()) }))
}

/// The signal node of the parameters at `p`: null: CUDA_ERROR_INVALID_VALUE; then
/// [`node_of`].
fn signal_node(p: *const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS) -> Result<Node, CUresult> {
    non_null(p)?;
    // SAFETY: a non-null pointer to the caller's parameters.
    let p = unsafe { &*p };
    node_of(p.extSemArray, p.paramsArray, p.numExtSems, ExtSemParams::Signal)
}

/// As [`signal_node`] for wait node parameters.
fn wait_node(p: *const CUDA_EXT_SEM_WAIT_NODE_PARAMS) -> Result<Node, CUresult> {
    non_null(p)?;
    // SAFETY: a non-null pointer to the caller's parameters.
    let p = unsafe { &*p };
    node_of(p.extSemArray, p.paramsArray, p.numExtSems, ExtSemParams::Wait)
}

/// The node of generic (`cuGraphAddNode`) parameters of type `EXT_SEMAS_SIGNAL` (`signal`)
/// or `EXT_SEMAS_WAIT`, as [`node_of`].
///
/// # Safety
/// `u` is the program's parameters, its member the one of the type.
pub(crate) unsafe fn generic_node(u: &CUgraphNodeParams_st__bindgen_ty_1, signal: bool) -> Result<Node, CUresult> {
    if signal {
        // SAFETY: the caller's parameters are of a signal node.
        let p = unsafe { &u.extSemSignal };
        node_of(p.extSemArray, p.paramsArray, p.numExtSems, ExtSemParams::Signal)
    } else {
        // SAFETY: the caller's parameters are of a wait node.
        let p = unsafe { &u.extSemWait };
        node_of(p.extSemArray, p.paramsArray, p.numExtSems, ExtSemParams::Wait)
    }
}

/// Adds an external semaphore node: the out-pointer, graph and dependencies are checked
/// as for any node, then the parameters. A launch of the graph signals or waits for
/// nothing (no semaphore of the emulated machine is signalled by anyone else: the module's
/// note).
fn add(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    node: Result<Node, CUresult>,
) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        let list = crate::graph::node_list(deps, n)?;
        crate::graph::check_deps(w, from_ptr(g), &list)?;
        crate::graph::add_node(w, ph, g, deps, n, node?)
    });
    status(r)
}

/// `cuGraphAddExternalSemaphoresSignalNode`: see [`add`] and [`node_of`].
pub(crate) unsafe fn cu_graph_add_external_semaphores_signal_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS,
) -> CUresult {
    add(w, ph, g, deps, n, signal_node(params))
}

/// `cuGraphAddExternalSemaphoresWaitNode`: see [`add`] and [`node_of`].
pub(crate) unsafe fn cu_graph_add_external_semaphores_wait_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    params: *const CUDA_EXT_SEM_WAIT_NODE_PARAMS,
) -> CUresult {
    add(w, ph, g, deps, n, wait_node(params))
}

/// The arrays of external semaphore node `h` (the node's own, valid until it goes or its
/// parameters change) and their count: CUDA_ERROR_INVALID_VALUE for a node of another
/// kind (also the other direction) or no node.
pub(crate) fn arrays_of(
    w: &World,
    h: CUgraphNode,
    signal: bool,
) -> Result<(*mut CUexternalSemaphore, *const std::ffi::c_void, c_uint), CUresult> {
    let graphs = lock(&w.graphs);
    let Node::ExtSem(node) = crate::graph::find_node(&graphs, from_ptr(h))?.1 else {
        return Err(INVALID);
    };
    let blocks = match (&node.params, signal) {
        (ExtSemParams::Signal(b), true) => b.as_ptr().cast(),
        (ExtSemParams::Wait(b), false) => b.as_ptr().cast(),
        _ => return Err(INVALID),
    };
    let n = c_uint::try_from(node.sems.len()).map_err(|_| INVALID)?;
    Ok((node.sems.as_ptr().cast_mut(), blocks, n))
}

/// `cuGraphExternalSemaphoresSignalNodeGetParams`: the node's own arrays; a null
/// out-pointer or a node of another kind: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_graph_external_semaphores_signal_node_get_params(
    w: &World,
    h: CUgraphNode,
    out: *mut CUDA_EXT_SEM_SIGNAL_NODE_PARAMS,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (sems, blocks, n) = arrays_of(w, h, true)?;
        write(out, CUDA_EXT_SEM_SIGNAL_NODE_PARAMS { extSemArray: sems, paramsArray: blocks.cast(), numExtSems: n })
    });
    status(r)
}

/// `cuGraphExternalSemaphoresWaitNodeGetParams`: as the signal form.
pub(crate) unsafe fn cu_graph_external_semaphores_wait_node_get_params(
    w: &World,
    h: CUgraphNode,
    out: *mut CUDA_EXT_SEM_WAIT_NODE_PARAMS,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let (sems, blocks, n) = arrays_of(w, h, false)?;
        write(out, CUDA_EXT_SEM_WAIT_NODE_PARAMS { extSemArray: sems, paramsArray: blocks.cast(), numExtSems: n })
    });
    status(r)
}

/// `cuGraphExternalSemaphoresSignalNodeSetParams`: the parameters are checked first
/// ([`node_of`]), then the node (another kind: CUDA_ERROR_INVALID_VALUE, unchanged).
pub(crate) unsafe fn cu_graph_external_semaphores_signal_node_set_params(
    w: &World,
    h: CUgraphNode,
    params: *const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS,
) -> CUresult {
    status(signal_node(params).and_then(|node| replace(w, h, node)))
}

/// `cuGraphExternalSemaphoresWaitNodeSetParams`: as the signal form.
pub(crate) unsafe fn cu_graph_external_semaphores_wait_node_set_params(
    w: &World,
    h: CUgraphNode,
    params: *const CUDA_EXT_SEM_WAIT_NODE_PARAMS,
) -> CUresult {
    status(wait_node(params).and_then(|node| replace(w, h, node)))
}

/// `cuGraphExecExternalSemaphoresSignalNodeSetParams`: an unknown exec: its error; a node
/// the exec does not have or of another kind, or parameters refused by [`node_of`]:
/// CUDA_ERROR_INVALID_VALUE, the exec unchanged.
pub(crate) unsafe fn cu_graph_exec_external_semaphores_signal_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    params: *const CUDA_EXT_SEM_SIGNAL_NODE_PARAMS,
) -> CUresult {
    status(signal_node(params).and_then(|node| replace_in_exec(w, e, h, node)))
}

/// `cuGraphExecExternalSemaphoresWaitNodeSetParams`: as the signal form.
pub(crate) unsafe fn cu_graph_exec_external_semaphores_wait_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    params: *const CUDA_EXT_SEM_WAIT_NODE_PARAMS,
) -> CUresult {
    status(wait_node(params).and_then(|node| replace_in_exec(w, e, h, node)))
}
