//! Graphs (`cuGraphCreate`, stream capture), their nodes, and executable graphs
//! (`cuGraphInstantiateWithFlags`). `base.rs` holds the graph itself and what it keeps; explicit nodes are added in `nodes.rs` (memcpy,
//! memset, event, child graph, memory allocation and free) and `kernel_node.rs`
//! (kernel nodes from a typed argument list); `conditional.rs` has conditional nodes;
//! `edges.rs` edges and introspection; `exec.rs` instantiation, update and launch.
//!
//! Everything a graph's nodes use that cudrv owns (host closures, the device memory of
//! kernel and copy arguments, child graphs, events) is kept in the graph's [`Kept`] list,
//! and each executable graph keeps the graph (and what its updates used): it lives as long
//! as any instantiation may run it.

pub(crate) mod base;
mod conditional;
mod edges;
mod exec;
mod kernel_node;
mod nodes;

pub use conditional::{ConditionalHandle, ConditionalKind};
pub use edges::{GraphNodeType, KernelNodeInfo, MemsetNodeInfo};
pub use exec::GraphExec;
pub use kernel_node::KernelNodeParams;
pub use nodes::CopyEnd;

pub use base::{Graph, GraphNode};
