//! Edges and introspection: nodes, root nodes, edges, a node's dependencies, dependents,
//! type, and the parameters of kernel and memset nodes read back. Edges use the 12.3
//! entries (with edge data) where the driver has them, else the 10.0 ones.

use crate::error::{CudaError, Error};
use crate::resources::graph::base::{raw_nodes, Graph, GraphNode};
use crate::resources::launch::LaunchConfig;
use crate::resources::values::raw_mapping;
use crate::sys::{CUdeviceptr, CUfunction, CUgraphNode, CUgraphNodeType};

/// The type of a graph node (`CUgraphNodeType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GraphNodeType {
    /// A kernel launch.
    Kernel,
    /// A memcpy.
    Memcpy,
    /// A memset.
    Memset,
    /// A host function.
    Host,
    /// A child graph.
    Graph,
    /// Nothing (a join point).
    Empty,
    /// An event wait.
    WaitEvent,
    /// An event record.
    EventRecord,
    /// An external semaphore signal.
    ExtSemaphoreSignal,
    /// An external semaphore wait.
    ExtSemaphoreWait,
    /// A memory allocation.
    MemAlloc,
    /// A memory free.
    MemFree,
    /// A batch of memory operations.
    BatchMemOp,
    /// A conditional node (If, While, Switch).
    Conditional,
    /// A type this version of cudrv does not name (its raw value).
    Other(u32),
}

impl GraphNodeType {
    raw_mapping! {
        fn from_raw(CUgraphNodeType) -> GraphNodeType;
        {
            Kernel => CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL,
            Memcpy => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY,
            Memset => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET,
            Host => CUgraphNodeType::CU_GRAPH_NODE_TYPE_HOST,
            Graph => CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH,
            Empty => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY,
            WaitEvent => CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT,
            EventRecord => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD,
            ExtSemaphoreSignal => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL,
            ExtSemaphoreWait => CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT,
            MemAlloc => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC,
            MemFree => CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE,
            BatchMemOp => CUgraphNodeType::CU_GRAPH_NODE_TYPE_BATCH_MEM_OP,
            Conditional => CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL,
        }
        from_raw: { other => GraphNodeType::Other(other.0) }
    }
}

/// A kernel node's parameters, read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelNodeInfo {
    /// The function (or the library kernel's handle, cast) it launches.
    pub function: CUfunction,
    /// Its grid, block and dynamic shared memory.
    pub config: LaunchConfig,
}

/// A memset node's parameters, read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct MemsetNodeInfo {
    /// The first address set.
    pub dst: CUdeviceptr,
    /// The value.
    pub value: u32,
    /// The size of each value (1, 2 or 4 bytes).
    pub element_size: u32,
    /// Values per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

/// The nodes a two-call query gives: the count, then that many.
fn listed(
    query: impl Fn(*mut CUgraphNode, *mut usize) -> Result<(), CudaError>,
) -> Result<Vec<CUgraphNode>, CudaError> {
    let mut n = 0usize;
    query(std::ptr::null_mut(), &mut n)?;
    let mut out = vec![std::ptr::null_mut(); n];
    if n > 0 {
        query(out.as_mut_ptr(), &mut n)?;
        out.truncate(n);
    }
    Ok(out)
}

impl Graph {
    /// Whether the driver has the 12.3 edge entries.
    fn edge_data(&self) -> bool {
        self.0.driver().version_code() >= 12030
    }

    fn nodes_of(&self, raw: Vec<CUgraphNode>) -> Vec<GraphNode> {
        raw.into_iter().map(|n| self.node(n)).collect()
    }

    /// Its nodes (`cuGraphGetNodes`).
    pub fn nodes(&self) -> Result<Vec<GraphNode>, Error> {
        Ok(self.listed_nodes(false)?)
    }

    /// The nodes that depend on none (`cuGraphGetRootNodes`).
    pub fn root_nodes(&self) -> Result<Vec<GraphNode>, Error> {
        Ok(self.listed_nodes(true)?)
    }

    fn listed_nodes(&self, roots: bool) -> Result<Vec<GraphNode>, CudaError> {
        let (pc, g) = (self.0.driver().pc(), self.as_raw());
        let _lock = self.kept();
        // SAFETY: the graph is live (held, and locked); `listed` gives room for `*n` nodes.
        let raw = listed(|out, n| unsafe {
            match roots {
                false => pc.cuGraphGetNodes(g, out, n),
                true => pc.cuGraphGetRootNodes(g, out, n),
            }
        })?;
        Ok(self.nodes_of(raw))
    }

    /// Its edges, `(from, to)`: `to` runs after `from` (`cuGraphGetEdges`).
    pub fn edges(&self) -> Result<Vec<(GraphNode, GraphNode)>, Error> {
        let (pc, g, v2) = (self.0.driver().pc(), self.as_raw(), self.edge_data());
        let null: CUgraphNode = std::ptr::null_mut();
        let query = |from: *mut CUgraphNode, to: *mut CUgraphNode, n: &mut usize| {
            // SAFETY: the graph is live; the arrays have room for `n` entries.
            unsafe {
                match v2 {
                    true => pc.cuGraphGetEdges(g, from, to, std::ptr::null_mut(), n),
                    false => pc.cuGraphGetEdges_v10000(g, from, to, n),
                }
            }
        };
        let mut n = 0usize;
        let _lock = self.kept();
        query(std::ptr::null_mut(), std::ptr::null_mut(), &mut n)?;
        let (mut from, mut to) = (vec![null; n], vec![null; n]);
        if n > 0 {
            query(from.as_mut_ptr(), to.as_mut_ptr(), &mut n)?;
        }
        Ok(from.into_iter().zip(to).take(n).map(|(a, b)| (self.node(a), self.node(b))).collect())
    }

    /// Adds the edges `from[i] -> to[i]` (`cuGraphAddDependencies`).
    pub fn add_edges(&self, edges: &[(&GraphNode, &GraphNode)]) -> Result<(), crate::Error> {
        self.change_edges("Graph::add_edges", edges, true)
    }

    /// Removes the edges `from[i] -> to[i]` (`cuGraphRemoveDependencies`).
    pub fn remove_edges(&self, edges: &[(&GraphNode, &GraphNode)]) -> Result<(), crate::Error> {
        self.change_edges("Graph::remove_edges", edges, false)
    }

    fn change_edges(
        &self,
        what: &'static str,
        edges: &[(&GraphNode, &GraphNode)],
        add: bool,
    ) -> Result<(), crate::Error> {
        let from: Vec<&GraphNode> = edges.iter().map(|e| e.0).collect();
        let to: Vec<&GraphNode> = edges.iter().map(|e| e.1).collect();
        let (from, to) = (raw_nodes(what, self, &from)?, raw_nodes(what, self, &to)?);
        let (pc, g, n, v2) = (self.0.driver().pc(), self.as_raw(), from.len(), self.edge_data());
        let _edit = self.kept();
        let null = std::ptr::null();
        // SAFETY: the graph is live; both arrays have `n` nodes of it.
        unsafe {
            match (add, v2) {
                (true, true) => pc.cuGraphAddDependencies(g, from.as_ptr(), to.as_ptr(), null, n),
                (true, false) => pc.cuGraphAddDependencies_v10000(g, from.as_ptr(), to.as_ptr(), n),
                (false, true) => pc.cuGraphRemoveDependencies(g, from.as_ptr(), to.as_ptr(), null, n),
                (false, false) => pc.cuGraphRemoveDependencies_v10000(g, from.as_ptr(), to.as_ptr(), n),
            }
        }?;
        Ok(())
    }
}

impl GraphNode {
    /// Its type (`cuGraphNodeGetType`).
    pub fn node_type(&self) -> Result<GraphNodeType, Error> {
        let _lock = self.graph().kept();
        Ok(GraphNodeType::from_raw(self.graph().0.driver().typed().cuGraphNodeGetType(self.live())?))
    }

    /// The nodes it depends on (`cuGraphNodeGetDependencies`).
    pub fn dependencies(&self) -> Result<Vec<GraphNode>, Error> {
        Ok(self.neighbours(false)?)
    }

    /// The nodes that depend on it (`cuGraphNodeGetDependentNodes`).
    pub fn dependents(&self) -> Result<Vec<GraphNode>, Error> {
        Ok(self.neighbours(true)?)
    }

    fn neighbours(&self, dependents: bool) -> Result<Vec<GraphNode>, CudaError> {
        let g = self.graph();
        let (pc, h, v2) = (g.0.driver().pc(), self.as_raw(), g.edge_data());
        let null = std::ptr::null_mut();
        let _lock = g.kept();
        // SAFETY: the node is live; the array has room for the count given.
        let raw = listed(|out, n| unsafe {
            match (dependents, v2) {
                (false, true) => pc.cuGraphNodeGetDependencies(h, out, null, n),
                (false, false) => pc.cuGraphNodeGetDependencies_v10000(h, out, n),
                (true, true) => pc.cuGraphNodeGetDependentNodes(h, out, null, n),
                (true, false) => pc.cuGraphNodeGetDependentNodes_v10000(h, out, n),
            }
        })?;
        Ok(g.nodes_of(raw))
    }

    /// A kernel node's function and shape (`cuGraphKernelNodeGetParams_v2`, 12.0+).
    pub fn kernel_info(&self) -> Result<KernelNodeInfo, Error> {
        let _lock = self.graph().kept();
        let p = self.graph().0.driver().typed().cuGraphKernelNodeGetParams(self.live())?;
        let config = LaunchConfig::new((p.gridDimX, p.gridDimY, p.gridDimZ), (p.blockDimX, p.blockDimY, p.blockDimZ))
            .shared_mem(p.sharedMemBytes);
        Ok(KernelNodeInfo { function: p.func, config })
    }

    /// A memset node's parameters (`cuGraphMemsetNodeGetParams`).
    pub fn memset_info(&self) -> Result<MemsetNodeInfo, Error> {
        let _lock = self.graph().kept();
        let p = self.graph().0.driver().typed().cuGraphMemsetNodeGetParams(self.live())?;
        Ok(MemsetNodeInfo { dst: p.dst, value: p.value, element_size: p.elementSize, width: p.width, height: p.height })
    }
}
