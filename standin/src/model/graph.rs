//! The kinds of graph node the stand-in runs, shared by streams (work done at once), stream
//! capture (work recorded) and graph launches (work replayed): empty, host, kernel, memcpy
//! and memset nodes, and the nodes only explicit graphs have (event record and wait, child
//! graph, conditional) and graph memory nodes (allocation and free, `model/graph_mem.rs`); graphs (nodes and edges) and executable graphs (the steps of an
//! instantiation). Running a node is `graph_node.rs`'s.

use std::collections::BTreeMap;
use std::ffi::c_uint;
use std::sync::Arc;

use cudrv::sys::{
    CUdeviceptr, CUexternalSemaphore, CUgraphConditionalNodeType, CUgraphNodeType, CUresult, CUstreamBatchMemOpParams,
    CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS, CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS,
};

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
    /// The function (or kernel) handle launched, for the node's parameters read back.
    pub(crate) func: u64,
    /// Its dynamic shared memory in bytes.
    pub(crate) shared: u32,
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

/// A conditional node: its condition (a handle of [`Conditional`]), its kind and its body
/// graphs (graphs owned by the node).
#[derive(Clone, Debug)]
pub(crate) struct CondNode {
    pub(crate) handle: u64,
    pub(crate) kind: CUgraphConditionalNodeType,
    pub(crate) bodies: Vec<u64>,
}

impl CondNode {
    /// The body to run for condition `value` this time: If runs body 0 on non-zero (body
    /// 1, if any, on zero); While runs body 0 while non-zero; Switch runs body `value`.
    pub(crate) fn body_for(&self, value: u32) -> Option<usize> {
        match self.kind {
            CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_SWITCH => Some(value as usize),
            CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF if value == 0 => Some(1),
            _ if value == 0 => None,
            _ => Some(0),
        }
        .filter(|&i| i < self.bodies.len())
    }
}

/// A condition (`cuGraphConditionalHandleCreate`): its value lives in 4 bytes of device
/// memory at the handle's value (so a kernel sets it by writing there), allocated in the
/// graph's context and freed when neither the graph nor an exec holds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conditional {
    /// The value set at each launch, with `CU_GRAPH_COND_ASSIGN_DEFAULT`.
    pub(crate) default: Option<u32>,
    /// The graph and execs that hold it.
    pub(crate) holders: u32,
}

/// One node of a graph.
#[derive(Clone)]
pub(crate) enum Node {
    Empty,
    Host(HostCall),
    Kernel(KernelNode),
    Copy(CopyNode),
    Memset(MemsetNode),
    /// Records the event (a handle of an event).
    EventRecord(u64),
    /// Waits for the event.
    EventWait(u64),
    /// Runs the graph (a copy of the one given, owned by the node).
    Child(u64),
    Conditional(CondNode),
    /// Allocates the graph allocation at this address (`model/graph_mem.rs`).
    MemAlloc(u64),
    /// Frees the graph allocation at this address.
    MemFree(u64),
    /// Runs stream memory operations (`graph_memop.rs`).
    BatchMemOp(MemOpNode),
    /// Signals or waits for external semaphores (`extsem.rs`).
    ExtSem(ExtSemNode),
}

/// An external semaphore node's parameters, the node's own copies (its get-params calls
/// hand out these arrays). The handles are not checked when given (as the real driver).
#[derive(Clone)]
pub(crate) struct ExtSemNode {
    /// The semaphores, as the program gave them (NULL among them allowed).
    pub(crate) sems: Vec<CUexternalSemaphore>,
    /// One signal or wait parameter block per semaphore.
    pub(crate) params: ExtSemParams,
}

/// The parameter blocks of a signal or a wait node.
#[derive(Clone)]
pub(crate) enum ExtSemParams {
    Signal(Vec<CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS>),
    Wait(Vec<CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS>),
}

// SAFETY: the semaphore handles and the NvSciSync fence pointers in the parameter blocks
// are values the program gave, never dereferenced by the stand-in (a node signals or waits
// for nothing: `extsem.rs`); moving them between threads moves plain numbers.
unsafe impl Send for ExtSemNode {}

/// A batch memory operation node's parameters, as given (checked when given).
#[derive(Clone)]
pub(crate) struct MemOpNode {
    /// The context the operations are for.
    pub(crate) ctx: u64,
    /// The operations, the node's own copy (`cuGraphBatchMemOpNodeGetParams` hands it out).
    pub(crate) ops: Vec<CUstreamBatchMemOpParams>,
    pub(crate) flags: c_uint,
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
            Node::EventRecord(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD,
            Node::EventWait(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT,
            Node::Child(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH,
            Node::Conditional(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL,
            Node::MemAlloc(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC,
            Node::MemFree(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE,
            Node::BatchMemOp(_) => CUgraphNodeType::CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
            Node::ExtSem(ExtSemNode { params: ExtSemParams::Signal(_), .. }) => {
                CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL
            }
            Node::ExtSem(ExtSemNode { params: ExtSemParams::Wait(_), .. }) => {
                CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT
            }
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

/// A graph (`cuGraphCreate`, made by a stream capture, a clone, or owned by a child graph
/// or conditional node).
#[derive(Default)]
pub(crate) struct Graph {
    /// Nodes in the order they were added.
    pub(crate) nodes: Vec<(u64, Node)>,
    /// Edges `(from, to)`: `to` runs after `from`, in the order they were added.
    pub(crate) edges: Vec<(u64, u64)>,
    /// References owned by the graph.
    pub(crate) user_objects: BTreeMap<u64, c_uint>,
    /// The conditions made for it.
    pub(crate) conditionals: Vec<u64>,
    /// For a copy: `(original node, its copy here)`.
    pub(crate) clone_of: Vec<(u64, u64)>,
    /// Kernel node attributes set (`cuGraphKernelNodeSetAttribute`), by node and
    /// attribute: the value's bytes.
    pub(crate) kernel_attrs: BTreeMap<(u64, u32), AttrBytes>,
}

/// The bytes of a `CUkernelNodeAttrValue` (a union; kept as bytes, as it may hold
/// handles).
pub(crate) type AttrBytes = [u8; std::mem::size_of::<cudrv::sys::CUkernelNodeAttrValue>()];

impl Graph {
    /// The node `h`.
    pub(crate) fn node(&self, h: u64) -> Option<&Node> {
        self.nodes.iter().find(|(n, _)| *n == h).map(|(_, n)| n)
    }

    /// The node `h`, to change.
    pub(crate) fn node_mut(&mut self, h: u64) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|(n, _)| *n == h).map(|(_, n)| n)
    }

    /// The nodes that depend on nothing, in the order they were added.
    pub(crate) fn roots(&self) -> Vec<u64> {
        self.nodes.iter().map(|(h, _)| *h).filter(|h| !self.edges.iter().any(|(_, to)| to == h)).collect()
    }

    /// The nodes in an order that respects every edge (the order they were added where
    /// edges allow); `None` if the edges make a cycle.
    pub(crate) fn order(&self) -> Option<Vec<u64>> {
        let mut done: Vec<u64> = Vec::with_capacity(self.nodes.len());
        while done.len() < self.nodes.len() {
            let next =
                self.nodes.iter().map(|(h, _)| *h).find(|h| {
                    !done.contains(h) && self.edges.iter().all(|(from, to)| to != h || done.contains(from))
                })?;
            done.push(next);
        }
        Some(done)
    }
}

/// One step of an executable graph: a node of the graph it was made from (`origin`), and
/// for a child graph or conditional node, the steps of each body.
#[derive(Clone)]
pub(crate) struct Step {
    pub(crate) origin: u64,
    pub(crate) node: Node,
    pub(crate) enabled: bool,
    pub(crate) bodies: Vec<Vec<Step>>,
}

impl Step {
    /// The step made from node `origin` (depth first through bodies).
    pub(crate) fn find_mut(steps: &mut [Step], origin: u64) -> Option<&mut Step> {
        for s in steps {
            if s.origin == origin {
                return Some(s);
            }
            if let Some(found) = s.bodies.iter_mut().find_map(|b| Step::find_mut(b, origin)) {
                return Some(found);
            }
        }
        None
    }

    /// Calls `f` on every step, depth first.
    pub(crate) fn each(steps: &[Step], f: &mut impl FnMut(&Step)) {
        for s in steps {
            f(s);
            for b in &s.bodies {
                Step::each(b, f);
            }
        }
    }
}

/// An executable graph (`cuGraphInstantiate`).
pub(crate) struct Exec {
    /// The graph's nodes in dependency order, when it was instantiated (or last updated).
    pub(crate) steps: Vec<Step>,
    /// The edges of the graph it was made from (for `cuGraphExecUpdate`'s topology check).
    pub(crate) edges: Vec<(u64, u64)>,
    /// References owned by the exec.
    pub(crate) user_objects: BTreeMap<u64, c_uint>,
    /// The conditions it holds.
    pub(crate) conditionals: Vec<u64>,
    /// The flags it was instantiated with.
    pub(crate) flags: u64,
    /// The last launch on each queue.
    pub(crate) launches: Vec<(Arc<Queue>, u64)>,
}

/// The ids of graphs and execs (`cuGraphGetId`, `cuGraphExecGetId`): numbers from 1,
/// given when first asked for, by handle (handles are never reused).
pub(crate) struct Ids {
    next: c_uint,
    given: BTreeMap<u64, c_uint>,
}

impl Ids {
    /// None given yet.
    pub(crate) const fn new() -> Ids {
        Ids { next: 1, given: BTreeMap::new() }
    }

    /// The id of graph or exec `h`.
    pub(crate) fn of(&mut self, h: u64) -> c_uint {
        let next = &mut self.next;
        *self.given.entry(h).or_insert_with(|| {
            let id = *next;
            *next = next.wrapping_add(1).max(1);
            id
        })
    }
}
