//! Graphs (`cuGraphCreate`, stream capture), their nodes, and executable graphs
//! (`cuGraphInstantiateWithFlags`).

use std::ffi::c_void;
use std::sync::Mutex;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::handle::{handle_type, kind, Handle, Ownership, ToOwner};
use crate::resources::host_fn::run_user_code;
use crate::resources::stream::Stream;
use crate::resources::user_object::UserObject;
use crate::sys::{CUgraph, CUgraphExec, CUgraphNode, CUstreamCaptureMode, CUDA_HOST_NODE_PARAMS};

type HostNodeFn = Box<dyn Fn() + Send + Sync + 'static>;

/// A graph's context and its host-node closures.
pub(crate) struct GraphOwner {
    context: Context,
    /// Host-node closures, at stable addresses the driver holds. Serialises node edits.
    #[allow(clippy::vec_box)] // the inner Box gives each closure a stable address
    host_nodes: Mutex<Vec<Box<HostNodeFn>>>,
}

impl ToOwner<GraphOwner> for &Context {
    fn to_owner(self) -> GraphOwner {
        GraphOwner { context: self.clone(), host_nodes: Mutex::default() }
    }
}

kind!(
    /// The graph kind: destroyed in its context; its host-node closures are leaked.
    GraphKind: CUgraph = "Graph", owner GraphOwner, driver |o| o.context.driver(), context |o| Some(o.context.as_raw()),
    release cuGraphDestroy,
    on_drop |o| {
        // Host-node closures may still be called by a launch in flight: leak them.
        let nodes = std::mem::take(o.host_nodes.get_mut().unwrap_or_else(|e| e.into_inner()));
        std::mem::forget(nodes);
    }
);

/// A graph. Clones share it; the last one destroys it (if owned). Executable graphs
/// made from it keep it alive.
#[derive(Clone)]
pub struct Graph(pub(crate) Handle<GraphKind>);
handle_type!(Graph: GraphKind => CUgraph, adopt: &Context, "a graph");

kind!(
    /// The graph node kind: part of its graph.
    GraphNodeKind: CUgraphNode = "GraphNode", part of Graph, driver |o| o.context().driver(),
    released with cuGraphDestroy
);

/// A node of a [`Graph`]; keeps the graph alive. Nodes are destroyed with their graph.
#[derive(Clone)]
pub struct GraphNode(pub(crate) Handle<GraphNodeKind>);
handle_type!(GraphNode: GraphNodeKind => CUgraphNode);

/// The callback of a host node: runs the closure, catching a panic.
unsafe extern "C" fn host_node_trampoline(data: *mut c_void) {
    run_user_code("graph host node", Arg::Pointer(data as usize), || {
        // SAFETY: `data` points to a HostNodeFn kept alive by its graph (or leaked).
        let f = unsafe { &*data.cast::<HostNodeFn>() };
        f();
    });
}

/// The raw handles of `nodes`, which must all belong to `graph`.
fn raw_nodes(what: &'static str, graph: &Graph, nodes: &[&GraphNode]) -> Result<Vec<CUgraphNode>, InvalidArgument> {
    if nodes.iter().any(|n| n.graph().as_raw() != graph.as_raw()) {
        return Err(InvalidArgument::new(what, "a dependency belongs to another graph"));
    }
    Ok(nodes.iter().map(|n| n.as_raw()).collect())
}

impl Graph {
    /// Creates an empty graph whose executables will run in `context`.
    pub fn new(context: &Context) -> Result<Graph, CudaError> {
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: valid out-pointer; flags must be 0.
        unsafe { context.driver().pc().cuGraphCreate(&mut raw, 0) }?;
        Ok(Graph(Handle::new(context.to_owner(), raw, Ownership::Owned)))
    }

    /// The context its executables run in.
    pub fn context(&self) -> &Context {
        &self.0.owner().context
    }

    fn node(&self, raw: CUgraphNode) -> GraphNode {
        GraphNode(Handle::new(self.clone(), raw, Ownership::Borrowed))
    }

    /// Adds an empty node after `dependencies`.
    pub fn add_empty_node(&self, dependencies: &[&GraphNode]) -> Result<GraphNode, Error> {
        let deps = raw_nodes("Graph::add_empty_node", self, dependencies)?;
        let _edit = self.0.owner().host_nodes.lock().unwrap_or_else(|e| e.into_inner());
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: valid out-pointer and dependency list; the graph is live.
        unsafe { self.0.driver().pc().cuGraphAddEmptyNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len()) }?;
        Ok(self.node(node))
    }

    /// Adds a host node after `dependencies` that runs `f` on a driver thread at each
    /// launch. A panic in `f` is caught and reported. `f` is kept until the graph is
    /// dropped, and then leaked rather than freed (a launch still in flight may call it):
    /// a deliberate leak, not reported. `f` must not call CUDA (a driver rule), which
    /// includes dropping the last clone of a cudrv handle.
    pub fn add_host_node(
        &self,
        dependencies: &[&GraphNode],
        f: impl Fn() + Send + Sync + 'static,
    ) -> Result<GraphNode, Error> {
        let deps = raw_nodes("Graph::add_host_node", self, dependencies)?;
        let pc = self.0.driver().pc();
        let mut nodes = self.0.owner().host_nodes.lock().unwrap_or_else(|e| e.into_inner());
        let boxed: Box<HostNodeFn> = Box::new(Box::new(f));
        let data = (&*boxed as *const HostNodeFn).cast_mut().cast::<c_void>();
        let params = CUDA_HOST_NODE_PARAMS { fn_: Some(host_node_trampoline), userData: data };
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: valid out-pointer, dependencies and parameters; `data` outlives the graph.
        let added = unsafe { pc.cuGraphAddHostNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), &params) };
        if let Err(e) = added {
            // The closure is user code: drop it only after the lock is released.
            drop(nodes);
            drop(boxed);
            return Err(e.into());
        }
        nodes.push(boxed);
        Ok(self.node(node))
    }

    /// Makes the graph hold a reference to `object` (`cuGraphRetainUserObject`), released
    /// when the graph is destroyed.
    pub fn retain_user_object(&self, object: &UserObject) -> Result<(), CudaError> {
        // SAFETY: both handles are live; flags 0 retains a new reference.
        unsafe { self.0.driver().pc().cuGraphRetainUserObject(self.as_raw(), object.as_raw(), 1, 0) }
    }

    /// Instantiates it in its context (`cuGraphInstantiateWithFlags`). On error nothing
    /// is created.
    pub fn instantiate(&self) -> Result<GraphExec, CudaError> {
        let context = self.context();
        let (pc, graph) = (context.driver().pc(), self.as_raw());
        // SAFETY: valid out-pointer; the graph is live.
        let create = |raw: &mut CUgraphExec| unsafe { pc.cuGraphInstantiateWithFlags(raw, graph, 0) };
        let owner = GraphExecOwner { context: context.clone(), graph: Some(self.clone()) };
        Handle::create_out(owner, context.as_raw(), create).map(GraphExec)
    }
}

impl GraphNode {
    /// The graph it belongs to.
    pub fn graph(&self) -> &Graph {
        self.0.owner()
    }
}

impl Stream {
    /// Starts capturing the work queued on this stream into a graph
    /// (`cuStreamBeginCapture`, global mode); [`Stream::end_capture`] returns it.
    ///
    /// # Safety
    /// Work queued while capturing is not done but recorded, and done again at every
    /// launch of the graph: everything it reads or writes (device buffers, pinned buffers,
    /// host memory) must stay allocated, and be used in no conflicting way, for as long as
    /// the graph or an executable made from it may be launched. cudrv cannot track that
    /// for captured work. ([`Stream::launch_host_fn`] refuses a capturing stream; nothing
    /// else may queue one-shot host functions on it while it captures.)
    pub unsafe fn begin_capture(&self) -> Result<(), CudaError> {
        let (pc, raw) = (self.context().driver().pc(), self.as_raw());
        let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
        // SAFETY: the stream is live.
        self.run(|| unsafe { pc.cuStreamBeginCapture(raw, mode) })
    }

    /// Ends a capture and returns the captured graph (`cuStreamEndCapture`). On error no
    /// graph is left behind.
    pub fn end_capture(&self) -> Result<Graph, CudaError> {
        let (pc, raw) = (self.context().driver().pc(), self.as_raw());
        // SAFETY: the stream is live; `graph` is a valid out-pointer.
        let end = |graph: &mut CUgraph| unsafe { pc.cuStreamEndCapture(raw, graph) };
        Handle::create_out(self.context().to_owner(), self.context().as_raw(), end).map(Graph)
    }
}

/// An executable graph's context, and the graph it was made from (its host-node
/// closures), if cudrv made it.
#[derive(Clone)]
pub(crate) struct GraphExecOwner {
    context: Context,
    graph: Option<Graph>,
}

impl ToOwner<GraphExecOwner> for &Context {
    fn to_owner(self) -> GraphExecOwner {
        GraphExecOwner { context: self.clone(), graph: None }
    }
}

kind!(
    /// The executable graph kind: destroyed in its context.
    GraphExecKind: CUgraphExec = "GraphExec", owner GraphExecOwner, driver |o| o.context.driver(),
    context |o| Some(o.context.as_raw()), release cuGraphExecDestroy
);

/// An executable graph; keeps its graph (when cudrv made it) and its context alive.
/// The last clone destroys it (if owned). Adopted ones (`from_raw`) must have host
/// nodes whose data outlives them.
#[derive(Clone)]
pub struct GraphExec(pub(crate) Handle<GraphExecKind>);
handle_type!(GraphExec: GraphExecKind => CUgraphExec, adopt: &Context, "an executable graph");

impl GraphExec {
    /// The graph it was made from, if cudrv made it.
    pub fn graph(&self) -> Option<&Graph> {
        self.0.owner().graph.as_ref()
    }

    /// Launches it on `stream` (`cuGraphLaunch`).
    pub fn launch(&self, stream: &Stream) -> Result<(), CudaError> {
        let (pc, raw, s) = (stream.context().driver().pc(), self.as_raw(), stream.as_raw());
        // SAFETY: both handles are live while we hold them.
        stream.run(|| unsafe { pc.cuGraphLaunch(raw, s) })
    }
}
