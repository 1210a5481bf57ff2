//! Conditional nodes (`cuGraphConditionalHandleCreate`, `cuGraphAddNode` with
//! `CU_GRAPH_NODE_TYPE_CONDITIONAL`): a condition of a graph, set from a kernel
//! (`cudaGraphSetConditional` in device code, or a default at each launch), chooses
//! whether (If), how often (While) or which (Switch) body graph runs. If and While need
//! driver 12.3; Switch, and an If with an else body, need 12.8.

use crate::error::{Error, InvalidArgument};
use crate::resources::graph::base::{raw_nodes, Graph, GraphNode};
use crate::sys::{
    CUgraphConditionalHandle, CUgraphConditionalNodeType, CUgraphNode, CUgraphNodeParams, CUgraphNodeType,
    CUDA_CONDITIONAL_NODE_PARAMS, CU_GRAPH_COND_ASSIGN_DEFAULT,
};

/// A condition of a graph (`CUgraphConditionalHandle`): pass it to a kernel (a `u64`
/// parameter) that sets it with `cudaGraphSetConditional`. It belongs to its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConditionalHandle(pub CUgraphConditionalHandle);

/// The kind of a conditional node, with its number of bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConditionalKind {
    /// Runs body 0 once if the condition is non-zero (driver 12.3+).
    If,
    /// Runs body 0 if the condition is non-zero, else body 1 (driver 12.8+).
    IfElse,
    /// Runs body 0 again and again while the condition is non-zero, reading it before
    /// each round (driver 12.3+).
    While,
    /// Runs body `n` once where `n` is the condition; none if it is `bodies` or more
    /// (driver 12.8+).
    Switch {
        /// The number of bodies (at least 1).
        bodies: u32,
    },
}

impl ConditionalKind {
    /// The raw type and body count.
    fn raw(self) -> (CUgraphConditionalNodeType, u32) {
        type T = CUgraphConditionalNodeType;
        match self {
            ConditionalKind::If => (T::CU_GRAPH_COND_TYPE_IF, 1),
            ConditionalKind::IfElse => (T::CU_GRAPH_COND_TYPE_IF, 2),
            ConditionalKind::While => (T::CU_GRAPH_COND_TYPE_WHILE, 1),
            ConditionalKind::Switch { bodies } => (T::CU_GRAPH_COND_TYPE_SWITCH, bodies),
        }
    }

    /// The driver version it needs (as `cuDriverGetVersion` gives it).
    pub fn needs(self) -> u32 {
        match self {
            ConditionalKind::If | ConditionalKind::While => 12030,
            ConditionalKind::IfElse | ConditionalKind::Switch { .. } => 12080,
        }
    }
}

impl Graph {
    /// Makes a condition for conditional nodes of this graph
    /// (`cuGraphConditionalHandleCreate`, driver 12.3+). With `default: Some(v)` each
    /// launch starts by setting it to `v` (`CU_GRAPH_COND_ASSIGN_DEFAULT`); with `None`
    /// it keeps the value the last launch left (initially 0).
    pub fn conditional_handle(&self, default: Option<u32>) -> Result<ConditionalHandle, Error> {
        let (value, flags) = match default {
            Some(v) => (v, CU_GRAPH_COND_ASSIGN_DEFAULT),
            None => (0, 0),
        };
        let t = self.0.driver().typed();
        let _edit = self.kept();
        Ok(ConditionalHandle(t.cuGraphConditionalHandleCreate(self.live(), self.context().live(), value, flags)?))
    }

    /// Adds a conditional node of `kind` on `condition` after `dependencies`
    /// (`cuGraphAddNode`, 12.3+); returns it and its body graphs, to fill with nodes
    /// (bodies take kernel, empty, memcpy, memset, child graph and conditional nodes).
    /// A kind the driver is too old for is [`Error::InvalidArgument`] naming the version.
    pub fn add_conditional_node(
        &self,
        dependencies: &[&GraphNode],
        condition: ConditionalHandle,
        kind: ConditionalKind,
    ) -> Result<(GraphNode, Vec<Graph>), Error> {
        let what = "Graph::add_conditional_node";
        let deps = raw_nodes(what, self, dependencies)?;
        let version = self.0.driver().version_code();
        if version < kind.needs() {
            let v = |n: u32| format!("{}.{}", n / 1000, n % 1000 / 10);
            let why = format!("{kind:?} needs driver {}; this driver is {}", v(kind.needs()), v(version));
            return Err(InvalidArgument::new(what, why).into());
        }
        let (ty, size) = kind.raw();
        // The bodies' handles are held on the host: a count it cannot hold is refused
        // before the driver makes the bodies.
        let mut bodies: Vec<Graph> = Vec::new();
        bodies
            .try_reserve_exact(size as usize)
            .map_err(|_| InvalidArgument::new(what, format!("{size} bodies: the host cannot hold their handles")))?;
        let mut p = CUgraphNodeParams { type_: CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL, ..Default::default() };
        p.__bindgen_anon_1.conditional = CUDA_CONDITIONAL_NODE_PARAMS {
            handle: condition.0,
            type_: ty,
            size,
            phGraph_out: std::ptr::null_mut(),
            ctx: self.context().as_raw(),
        };
        let _edit = self.kept();
        let mut node: CUgraphNode = std::ptr::null_mut();
        let pc = self.0.driver().pc();
        let null = std::ptr::null();
        // SAFETY: valid out-pointer, dependencies and parameters; the graph is live.
        unsafe { pc.cuGraphAddNode(&mut node, self.as_raw(), deps.as_ptr(), null, deps.len(), &mut p) }?;
        // SAFETY: the driver filled the conditional member: an array of `size` graphs
        // owned by the node.
        let raw_bodies = unsafe {
            let out = p.__bindgen_anon_1.conditional.phGraph_out;
            if out.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(out, size as usize)
            }
        };
        bodies.extend(raw_bodies.iter().map(|&raw| self.part(raw)));
        Ok((self.node(node), bodies))
    }
}
