//! Batch memory operation nodes (11.7): `cuGraphAddBatchMemOpNode`,
//! `cuGraphBatchMemOpNodeGetParams`, `cuGraphBatchMemOpNodeSetParams`,
//! `cuGraphExecBatchMemOpNodeSetParams`. A node holds its own copy of the operations
//! (`model/graph.rs`, `Node::BatchMemOp`), checked when given by the rules of
//! `cuStreamBatchMemOp` (`stream_memop.rs`: each operation's type, flags and address), and
//! runs them in order when its graph is launched (`graph_node.rs`): a wait holds the
//! launch's later nodes back as it holds a stream.
//!
//! Parameters: non-null, 0 to 256 operations at a non-null array, flags 0, a context that
//! is live (NULL is refused, not the current context): CUDA_ERROR_INVALID_VALUE otherwise,
//! as the H100's driver 580.159.04 answers (recording 2026-12-05, `graph_memop.*`). A node
//! of no operations does nothing at launch. The array read
//! back is the node's own (valid until the node goes or its parameters change), as the
//! CUDA documentation says. In an exec only the addresses and values of waits and writes
//! and a wait's condition may change (the documentation's list): another context, count,
//! operation type, wait flush bit or any change to another operation:
//! CUDA_ERROR_INVALID_VALUE, the exec unchanged.

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::graph::{add_node, find_node};
use crate::graph_params::replace;
use crate::model::graph::{MemOpNode, Node, Step};
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// The most operations a node takes (as `cuStreamBatchMemOp`).
const MAX_OPS: u32 = 256;

/// The node made of the program's parameters, checked.
pub(crate) fn node_of(w: &World, p: &CUDA_BATCH_MEM_OP_NODE_PARAMS) -> Result<MemOpNode, CUresult> {
    // A count of 0 is taken and a NULL context refused (conformance graph_memop.add_count_0,
    // graph_memop.add_null_ctx: driver 580.159.04, 2026-12-05).
    if p.count > MAX_OPS || p.paramArray.is_null() || p.flags != 0 || p.ctx.is_null() {
        return Err(INVALID);
    }
    let ctx = w.contexts.lookup(from_ptr(p.ctx)).map_err(|_| INVALID)?.handle;
    // SAFETY: the program passes `count` operations at a non-null `paramArray`.
    let ops = unsafe { std::slice::from_raw_parts(p.paramArray, p.count as usize) }.to_vec();
    crate::stream_memop::check_params(w, &ops)?;
    Ok(MemOpNode { ctx, ops, flags: p.flags })
}

/// The node made of a non-null pointer to the program's parameters.
///
/// # Safety
/// `p` is null or points to the program's parameters.
unsafe fn read(w: &World, p: *const CUDA_BATCH_MEM_OP_NODE_PARAMS) -> Result<MemOpNode, CUresult> {
    non_null(p)?;
    // SAFETY: non-null: the program's parameters.
    node_of(w, unsafe { &*p })
}

/// `cuGraphAddBatchMemOpNode`.
pub(crate) unsafe fn cu_graph_add_batch_mem_op_node(
    w: &World,
    ph: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const CUDA_BATCH_MEM_OP_NODE_PARAMS,
) -> CUresult {
    let r = non_null(ph).and_then(|()| {
        // SAFETY: forwarded from the program.
        let node = unsafe { read(w, p) }?;
        add_node(w, ph, g, deps, n, Node::BatchMemOp(node))
    });
    status(r)
}

/// The parameters of node `h`, its array the node's own.
pub(crate) fn params_of(w: &World, h: CUgraphNode) -> Result<CUDA_BATCH_MEM_OP_NODE_PARAMS, CUresult> {
    let graphs = lock(&w.graphs);
    match find_node(&graphs, from_ptr(h))?.1 {
        Node::BatchMemOp(m) => Ok(CUDA_BATCH_MEM_OP_NODE_PARAMS {
            ctx: to_ptr(m.ctx),
            count: m.ops.len() as u32,
            paramArray: m.ops.as_ptr().cast_mut(),
            flags: m.flags,
        }),
        _ => Err(INVALID),
    }
}

/// `cuGraphBatchMemOpNodeGetParams`.
pub(crate) unsafe fn cu_graph_batch_mem_op_node_get_params(
    w: &World,
    h: CUgraphNode,
    out: *mut CUDA_BATCH_MEM_OP_NODE_PARAMS,
) -> CUresult {
    status(non_null(out).and_then(|()| write(out, params_of(w, h)?)))
}

/// `cuGraphBatchMemOpNodeSetParams`.
pub(crate) unsafe fn cu_graph_batch_mem_op_node_set_params(
    w: &World,
    h: CUgraphNode,
    p: *const CUDA_BATCH_MEM_OP_NODE_PARAMS,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { read(w, p) }.and_then(|m| replace(w, h, Node::BatchMemOp(m))))
}

/// Whether operation `new` may replace `old` in an exec (see the module's note).
fn may_change(old: &CUstreamBatchMemOpParams, new: &CUstreamBatchMemOpParams) -> bool {
    type T = CUstreamBatchMemOpType;
    // SAFETY: every member starts with the operation; plain data of 48 bytes, any bits valid.
    let (o, n, ob, nb) = unsafe { (old.operation, new.operation, old.pad, new.pad) };
    if o != n {
        return false;
    }
    match o {
        T::CU_STREAM_MEM_OP_WAIT_VALUE_32 | T::CU_STREAM_MEM_OP_WAIT_VALUE_64 => {
            let flush = CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_FLUSH.0;
            // SAFETY: the member of a wait.
            let (of, nf) = unsafe { (old.waitValue.flags, new.waitValue.flags) };
            of & flush == nf & flush
        }
        T::CU_STREAM_MEM_OP_WRITE_VALUE_32 | T::CU_STREAM_MEM_OP_WRITE_VALUE_64 => {
            // SAFETY: the member of a write.
            unsafe { old.writeValue.flags == new.writeValue.flags }
        }
        _ => ob == nb,
    }
}

fn exec_set(w: &World, e: CUgraphExec, h: CUgraphNode, new: MemOpNode) -> Result<(), CUresult> {
    let mut execs = lock(&w.execs);
    let exec = execs.get_mut(from_ptr(e))?;
    let step = Step::find_mut(&mut exec.steps, from_ptr(h)).ok_or(INVALID)?;
    let Node::BatchMemOp(old) = &step.node else {
        return Err(INVALID);
    };
    if old.ctx != new.ctx || old.ops.len() != new.ops.len() {
        return Err(INVALID);
    }
    if !old.ops.iter().zip(&new.ops).all(|(o, n)| may_change(o, n)) {
        return Err(INVALID);
    }
    step.node = Node::BatchMemOp(new);
    Ok(())
}

/// `cuGraphExecBatchMemOpNodeSetParams`.
pub(crate) unsafe fn cu_graph_exec_batch_mem_op_node_set_params(
    w: &World,
    e: CUgraphExec,
    h: CUgraphNode,
    p: *const CUDA_BATCH_MEM_OP_NODE_PARAMS,
) -> CUresult {
    // SAFETY: forwarded from the program.
    status(unsafe { read(w, p) }.and_then(|m| exec_set(w, e, h, m)))
}
