//! The kinds of graph node the stand-in runs, shared by streams (work done at once), stream
//! capture (work recorded) and graph launches (work replayed): empty, host, kernel, memcpy
//! and memset nodes; graphs and executable graphs. Running a node is `graph_node.rs`'s.

use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::Arc;

use cudrv::sys::{CUdeviceptr, CUgraphNodeType, CUresult};

use crate::run::kernels::HostKernel;
use crate::run::queue::{HostCall, Queue};

/// What a kernel node runs.
#[derive(Clone)]
pub(crate) enum KernelCode {
    /// A host implementation.
    Host(Arc<HostKernel>),
    /// PTX on the executor, with its module's globals at these addresses and this much
    /// dynamic shared memory.
    Ptx { module: Arc<cudrv_ptx::Module>, globals: Arc<[u64]>, shared: u32 },
}

/// A kernel launch, its parameters already read.
#[derive(Clone)]
pub(crate) struct KernelNode {
    /// The kernel's name.
    pub(crate) name: String,
    /// What runs it; `None` for a kernel of a fake image (runs nothing).
    pub(crate) code: Option<KernelCode>,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    /// The value of each parameter.
    pub(crate) values: Vec<Vec<u8>>,
}

/// One end of a copy: host memory (an address in this process) or device memory.
#[derive(Clone, Copy, Debug)]
pub(crate) enum End {
    Host(usize),
    Device(CUdeviceptr),
}

/// A copy of `len` bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CopyNode {
    pub(crate) dst: End,
    pub(crate) src: End,
    pub(crate) len: usize,
}

/// A memset of `rows` rows `pitch` bytes apart, each of `count` values of `width` bytes
/// (1, 2 or 4).
#[derive(Clone, Copy, Debug)]
pub(crate) struct MemsetNode {
    pub(crate) dst: CUdeviceptr,
    pub(crate) value: u32,
    pub(crate) width: usize,
    pub(crate) count: usize,
    pub(crate) rows: usize,
    pub(crate) pitch: usize,
}

impl MemsetNode {
    /// A one-row memset; CUDA_ERROR_INVALID_VALUE for a width other than 1, 2 or 4, or a
    /// `dst` not aligned to it (as a real driver refuses a misaligned address).
    pub(crate) fn new(dst: CUdeviceptr, value: u32, width: usize, count: usize) -> Result<MemsetNode, CUresult> {
        if !matches!(width, 1 | 2 | 4) || dst % width as u64 != 0 || count.checked_mul(width).is_none() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        Ok(MemsetNode { dst, value, width, count, rows: 1, pitch: 0 })
    }
}

/// One node of a graph.
#[derive(Clone)]
pub(crate) enum Node {
    Empty,
    Host(HostCall),
    Kernel(KernelNode),
    Copy(CopyNode),
    Memset(MemsetNode),
}

impl Node {
    /// Its `CUgraphNodeType`.
    pub(crate) fn kind(&self) -> CUgraphNodeType {
        match self {
            Node::Empty => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY,
            Node::Host(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_HOST,
            Node::Kernel(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL,
            Node::Copy(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY,
            Node::Memset(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET,
        }
    }

    /// The host function of a host node.
    pub(crate) fn host_call(&self) -> Option<HostCall> {
        match self {
            Node::Host(c) => Some(*c),
            _ => None,
        }
    }
}

/// A graph (`cuGraphCreate`, or made by a stream capture).
pub(crate) struct Graph {
    /// Nodes in the order they were added (an order that respects every dependency, as a
    /// dependency must exist before its dependent).
    pub(crate) nodes: Vec<(u64, Node)>,
    /// References owned by the graph.
    pub(crate) user_objects: BTreeMap<u64, c_uint>,
}

/// An executable graph (`cuGraphInstantiate`).
pub(crate) struct Exec {
    /// The graph's nodes in order, when it was instantiated.
    pub(crate) nodes: Vec<Node>,
    /// References owned by the exec.
    pub(crate) user_objects: BTreeMap<u64, c_uint>,
    /// The last launch on each queue.
    pub(crate) launches: Vec<(Arc<Queue>, u64)>,
}
