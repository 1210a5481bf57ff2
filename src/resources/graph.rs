//! Graphs (`cuGraphCreate`) and executable graphs (`cuGraphInstantiateWithFlags`).

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::resources::host_fn::run_user_code;
use crate::resources::stream::Stream;
use crate::resources::user_object::UserObject;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUgraph, CUgraphExec, CUgraphNode, CUDA_HOST_NODE_PARAMS};

type HostNodeFn = Box<dyn Fn() + Send + Sync + 'static>;

/// A graph. Clones share it; the last one destroys it (if owned). Executable graphs made
/// from it keep it alive.
#[derive(Clone)]
pub struct Graph(Arc<GraphInner>);

struct GraphInner {
    context: Context,
    raw: CUgraph,
    owned: bool,
    /// Host-node closures, at stable addresses the driver holds. Serialises node edits.
    #[allow(clippy::vec_box)] // the inner Box gives each closure a stable address
    host_nodes: Mutex<Vec<Box<HostNodeFn>>>,
}

// SAFETY: a CUgraph is a driver handle usable from any thread; edits are serialised by
// `host_nodes`' mutex; the closures are Send + Sync.
unsafe impl Send for GraphInner {}
// SAFETY: as above.
unsafe impl Sync for GraphInner {}

/// The callback of a host node: runs the closure, catching a panic.
unsafe extern "C" fn host_node_trampoline(data: *mut c_void) {
    run_user_code("graph host node", Arg::Pointer(data as usize), || {
        // SAFETY: `data` points to a HostNodeFn kept alive by its graph (or leaked).
        let f = unsafe { &*data.cast::<HostNodeFn>() };
        f();
    });
}

impl Graph {
    /// Creates an empty graph whose executables will run in `context`.
    pub fn new(context: &Context) -> Result<Graph, CudaError> {
        let d = context.driver();
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: valid out-pointer; flags must be 0.
        CudaError::check(d, "cuGraphCreate", unsafe { d.p().cuGraphCreate(&mut raw, 0) })?;
        Ok(Graph::wrap(context, raw, true))
    }

    /// Adopts a graph: the last clone destroys it.
    ///
    /// # Safety
    /// `raw` must be a live graph that nothing else destroys.
    pub unsafe fn from_raw(context: &Context, raw: CUgraph) -> Graph {
        Graph::wrap(context, raw, true)
    }

    /// Uses a graph someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must stay live while this handle and its executables are used.
    pub unsafe fn borrowed(context: &Context, raw: CUgraph) -> Graph {
        Graph::wrap(context, raw, false)
    }

    fn wrap(context: &Context, raw: CUgraph, owned: bool) -> Graph {
        Graph(Arc::new(GraphInner { context: context.clone(), raw, owned, host_nodes: Mutex::default() }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUgraph {
        self.0.raw
    }

    /// Adds an empty node after `dependencies`.
    pub fn add_empty_node(&self, dependencies: &[CUgraphNode]) -> Result<CUgraphNode, CudaError> {
        let d = self.0.context.driver();
        let _edit = self.0.host_nodes.lock().unwrap_or_else(|e| e.into_inner());
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: valid out-pointer and dependency list; the graph is live.
        let status =
            unsafe { d.p().cuGraphAddEmptyNode(&mut node, self.0.raw, dependencies.as_ptr(), dependencies.len()) };
        CudaError::check(d, "cuGraphAddEmptyNode", status)?;
        Ok(node)
    }

    /// Adds a host node after `dependencies` that runs `f` on a driver thread at each
    /// launch. A panic in `f` is caught and reported. `f` is kept until the graph is
    /// dropped, and then leaked rather than freed (a launch still in flight may call it):
    /// a deliberate leak, not reported. `f` must not call CUDA (a driver rule), which
    /// includes dropping the last clone of a cudrv handle.
    pub fn add_host_node(
        &self,
        dependencies: &[CUgraphNode],
        f: impl Fn() + Send + Sync + 'static,
    ) -> Result<CUgraphNode, CudaError> {
        let d = self.0.context.driver();
        let mut nodes = self.0.host_nodes.lock().unwrap_or_else(|e| e.into_inner());
        let boxed: Box<HostNodeFn> = Box::new(Box::new(f));
        let data = (&*boxed as *const HostNodeFn).cast_mut().cast::<c_void>();
        let params = CUDA_HOST_NODE_PARAMS { fn_: Some(host_node_trampoline), userData: data };
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: valid out-pointer, dependencies and parameters; `data` outlives the graph.
        let status = unsafe {
            d.p().cuGraphAddHostNode(&mut node, self.0.raw, dependencies.as_ptr(), dependencies.len(), &params)
        };
        if let Err(e) = CudaError::check(d, "cuGraphAddHostNode", status) {
            // The closure is user code: drop it only after the lock is released.
            drop(nodes);
            drop(boxed);
            return Err(e);
        }
        nodes.push(boxed);
        Ok(node)
    }

    /// Makes the graph hold a reference to `object` (`cuGraphRetainUserObject`), released
    /// when the graph is destroyed.
    pub fn retain_user_object(&self, object: &UserObject) -> Result<(), CudaError> {
        let d = self.0.context.driver();
        // SAFETY: both handles are live; flags 0 retains a new reference.
        let status = unsafe { d.p().cuGraphRetainUserObject(self.0.raw, object.as_raw(), 1, 0) };
        CudaError::check(d, "cuGraphRetainUserObject", status)
    }

    /// Instantiates it in its context (`cuGraphInstantiateWithFlags`). On error nothing
    /// is created.
    pub fn instantiate(&self) -> Result<GraphExec, CudaError> {
        let context = &self.0.context;
        let (d, graph) = (context.driver(), self.0.raw);
        let create = || {
            let mut raw: CUgraphExec = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the graph is live.
            CudaError::check(d, "cuGraphInstantiateWithFlags", unsafe {
                d.p().cuGraphInstantiateWithFlags(&mut raw, graph, 0)
            })?;
            Ok(raw)
        };
        let undo = Undo {
            call: "cuGraphExecDestroy",
            arg: |e: &CUgraphExec| handle_arg(*e),
            // SAFETY: the executable was just created and is used by nothing else.
            run: |e: &CUgraphExec| unsafe { d.p().cuGraphExecDestroy(*e) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(GraphExec::wrap(context, Some(self.clone()), raw, true))
    }
}

impl Drop for GraphInner {
    fn drop(&mut self) {
        // Host-node closures may still be called by a launch in flight: leak them.
        let nodes = std::mem::take(self.host_nodes.get_mut().unwrap_or_else(|e| e.into_inner()));
        std::mem::forget(nodes);
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the graph; its executables hold clones, so none is left.
        let destroy = || unsafe { d.p().cuGraphDestroy(raw) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuGraphDestroy", handle_arg(raw), destroy, || {});
    }
}

/// An executable graph; keeps its graph (when cudrv made it) and its context alive. The
/// last clone destroys it (if owned).
#[derive(Clone)]
pub struct GraphExec(Arc<GraphExecInner>);

struct GraphExecInner {
    context: Context,
    /// The graph it was instantiated from (its host-node closures), if cudrv made it.
    graph: Option<Graph>,
    raw: CUgraphExec,
    owned: bool,
}

// SAFETY: a CUgraphExec is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for GraphExecInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for GraphExecInner {}

impl GraphExec {
    fn wrap(context: &Context, graph: Option<Graph>, raw: CUgraphExec, owned: bool) -> GraphExec {
        GraphExec(Arc::new(GraphExecInner { context: context.clone(), graph, raw, owned }))
    }

    /// Adopts an executable graph of `context`: the last clone destroys it.
    ///
    /// # Safety
    /// `raw` must be a live executable graph that nothing else destroys, whose host
    /// nodes' data outlives it.
    pub unsafe fn from_raw(context: &Context, raw: CUgraphExec) -> GraphExec {
        GraphExec::wrap(context, None, raw, true)
    }

    /// Uses an executable graph someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must stay live while this handle is used.
    pub unsafe fn borrowed(context: &Context, raw: CUgraphExec) -> GraphExec {
        GraphExec::wrap(context, None, raw, false)
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUgraphExec {
        self.0.raw
    }

    /// The graph it was made from, if cudrv made it.
    pub fn graph(&self) -> Option<&Graph> {
        self.0.graph.as_ref()
    }

    /// Launches it on `stream` (`cuGraphLaunch`).
    pub fn launch(&self, stream: &Stream) -> Result<(), CudaError> {
        let (d, raw, s) = (stream.context().driver(), self.0.raw, stream.as_raw());
        // SAFETY: both handles are live while we hold them.
        stream.context().call("cuGraphLaunch", || unsafe { d.p().cuGraphLaunch(raw, s) })
    }
}

impl Drop for GraphExecInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the executable and this is its last handle.
        let destroy = || unsafe { d.p().cuGraphExecDestroy(raw) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuGraphExecDestroy", handle_arg(raw), destroy, || {});
    }
}
