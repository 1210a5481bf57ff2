//! The graph itself ([`Graph`]: creation, capture's end, host nodes, user objects) and
//! what a graph and its executable graphs keep alive for their nodes ([`Kept`]). The
//! floor the node families and executable graphs (the other files of `graph/`) stand on.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, InvalidArgument};
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::handle::{handle_type, kind, Handle, Ownership, ToOwner};
use crate::resources::host_fn::run_user_code;
use crate::resources::memory::DeviceMemory;
use crate::resources::stream::Stream;
use crate::resources::user_object::UserObject;
use crate::sys::{CUgraph, CUgraphNode, CUstreamCaptureMode, CUDA_HOST_NODE_PARAMS};
use crate::typed::Live;

type HostNodeFn = Box<dyn Fn() + Send + Sync + 'static>;

/// What a graph or executable graph keeps for its nodes.
pub(crate) enum Kept {
    /// A host node's closure, at a stable address the driver holds; leaked, never dropped
    /// (a launch in flight may still call it).
    Host(std::mem::ManuallyDrop<Box<HostNodeFn>>),
    /// Device memory a node reads or writes, and what keeps it valid when its handle does
    /// not (an import's mapping: `MemoryOwner::keeper`).
    Memory(Handle<DeviceMemory>, Option<Arc<dyn Send + Sync>>),
    /// A graph a node runs, or an executable's graph after an update.
    Graph(Graph),
    /// An event a node records or waits for.
    Event(Arc<crate::resources::event::Event>),
}

/// The list of what a graph (or an executable graph) keeps. A graph's list's lock also
/// serialises every driver call on the graph, on its nodes and on the graphs that are
/// part of its nodes (which share the list): the driver does not synchronise a graph, and
/// no two calls on one may overlap, reads included ("Graph object thread safety" in the
/// driver API documentation). Nothing is removed from it while it lives, and its `id` is never
/// given to another list in the process, so what was once seen in the list with an id is
/// still kept by it ([`KernelNodeParams`] remembers that, to skip the lock).
pub(crate) struct KeptList {
    id: u64,
    list: Mutex<Vec<Kept>>,
}

impl Default for KeptList {
    fn default() -> KeptList {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        KeptList { id: NEXT.fetch_add(1, Ordering::Relaxed), list: Mutex::default() }
    }
}

impl KeptList {
    /// The list, locked.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Vec<Kept>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Its id: unique in the process, never 0.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kept::Host(h) => write!(f, "Host({:p})", &***h),
            Kept::Memory(m, _) => m.fmt_debug(f),
            Kept::Graph(g) => write!(f, "{g:?}"),
            Kept::Event(e) => write!(f, "{e:?}"),
        }
    }
}

impl Kept {
    /// Keeps the allocation `mem` (and what keeps its memory valid, for an import).
    pub(crate) fn memory(mem: &Handle<DeviceMemory>) -> Kept {
        Kept::Memory(mem.clone(), mem.owner().keeper())
    }

    /// Whether it keeps the same thing as `other` (a graph or memory kept twice is kept
    /// once, so repeated updates do not grow the list).
    fn same(&self, other: &Kept) -> bool {
        match (self, other) {
            (Kept::Memory(a, _), Kept::Memory(b, _)) => a.raw() == b.raw(),
            (Kept::Graph(a), Kept::Graph(b)) => a.as_raw() == b.as_raw(),
            _ => false,
        }
    }

    /// Another reference to what it keeps (a host node's closure has one owner: `None`).
    fn share(&self) -> Option<Kept> {
        match self {
            Kept::Host(_) => None,
            Kept::Memory(m, k) => Some(Kept::Memory(m.clone(), k.clone())),
            Kept::Graph(g) => Some(Kept::Graph(g.clone())),
            Kept::Event(e) => Some(Kept::Event(Arc::clone(e))),
        }
    }
}

/// Adds to `list` a reference to each of `new` that keeps something the list does not
/// keep yet; what it keeps already costs no reference count (a repeated update).
pub(crate) fn keep_shared(list: &mut Vec<Kept>, new: &[Kept]) {
    for k in new {
        if !list.iter().any(|old| old.same(k)) {
            list.extend(k.share());
        }
    }
}

/// Adds `new` to `list`, unless it keeps something the list keeps already.
pub(crate) fn keep_in(list: &mut Vec<Kept>, new: impl IntoIterator<Item = Kept>) {
    for k in new {
        if !list.iter().any(|old| old.same(&k)) {
            list.push(k);
        }
    }
}

/// A graph's context and what its nodes use; for a graph that is part of a node (a child
/// graph's, a conditional body), the graph of that node, whose list it shares.
pub(crate) struct GraphOwner {
    context: Context,
    kept: Arc<KeptList>,
    parent: Option<Graph>,
}

impl ToOwner<GraphOwner> for &Context {
    fn to_owner(self) -> GraphOwner {
        GraphOwner { context: self.clone(), kept: Arc::default(), parent: None }
    }
}

kind!(
    /// The graph kind: destroyed in its context; its host-node closures are leaked.
    GraphKind: CUgraph = "Graph", owner GraphOwner, driver |o| o.context.driver(), context |o| Some(o.context.as_raw()),
    release cuGraphDestroy
);

/// A graph. Clones share it; the last one destroys it (if owned). Executable graphs
/// made from it keep it alive.
///
/// The driver does not synchronise a graph: no two calls on one may overlap, reads
/// included. A `Graph` is `Sync` because cudrv serialises every call on it, on its nodes
/// and on the graphs that are part of its nodes (child graphs, conditional bodies) with
/// one lock per graph hierarchy. That lock covers cudrv's own handles only: a graph
/// adopted with `from_raw` or `borrowed` must not be used through another handle (or raw)
/// while cudrv uses it.
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

/// The parameters of a host node running `f`, and the box that must outlive every launch.
pub(crate) fn host_params(f: impl Fn() + Send + Sync + 'static) -> (CUDA_HOST_NODE_PARAMS, Box<HostNodeFn>) {
    let boxed: Box<HostNodeFn> = Box::new(Box::new(f));
    let data = (&*boxed as *const HostNodeFn).cast_mut().cast::<c_void>();
    (CUDA_HOST_NODE_PARAMS { fn_: Some(host_node_trampoline), userData: data }, boxed)
}

/// The raw handles of `nodes`, which must all belong to `graph`.
pub(crate) fn raw_nodes(
    what: &'static str,
    graph: &Graph,
    nodes: &[&GraphNode],
) -> Result<Vec<CUgraphNode>, InvalidArgument> {
    if nodes.iter().any(|n| n.graph().as_raw() != graph.as_raw()) {
        return Err(InvalidArgument::new(what, "a dependency belongs to another graph"));
    }
    Ok(nodes.iter().map(|n| n.as_raw()).collect())
}

/// [`raw_nodes`] as live handles, for the typed calls.
pub(crate) fn live_nodes<'a>(
    what: &'static str,
    graph: &Graph,
    nodes: &[&'a GraphNode],
) -> Result<Vec<Live<'a, CUgraphNode>>, InvalidArgument> {
    if nodes.iter().any(|n| n.graph().as_raw() != graph.as_raw()) {
        return Err(InvalidArgument::new(what, "a dependency belongs to another graph"));
    }
    Ok(nodes.iter().map(|n| n.live()).collect())
}

impl Graph {
    /// Creates an empty graph whose executables will run in `context`.
    pub fn new(context: &Context) -> Result<Graph, Error> {
        // Flags must be 0.
        let raw = context.driver().typed().cuGraphCreate(0)?;
        Ok(Graph(Handle::new(context.to_owner(), raw, Ownership::Owned)))
    }

    /// The context its executables run in.
    pub fn context(&self) -> &Context {
        &self.0.owner().context
    }

    /// The node `raw` of this graph.
    pub(crate) fn node(&self, raw: CUgraphNode) -> GraphNode {
        GraphNode(Handle::new(self.clone(), raw, Ownership::Borrowed))
    }

    /// A graph `raw` that is part of a node of this graph: borrowed, keeping this graph
    /// alive and sharing what it keeps.
    pub(crate) fn part(&self, raw: CUgraph) -> Graph {
        let kept = Arc::clone(&self.0.owner().kept);
        let owner = GraphOwner { context: self.context().clone(), kept, parent: Some(self.clone()) };
        Graph(Handle::new(owner, raw, Ownership::Borrowed))
    }

    /// The graph whose node this graph is part of, if any.
    pub fn parent(&self) -> Option<&Graph> {
        self.0.owner().parent.as_ref()
    }

    /// Another reference to each allocation this graph's nodes use, and the graphs it
    /// keeps use (child graphs' sources, a clone's original, and theirs), each once: what an
    /// executable made from it uses at every launch. Each graph's list is read under its
    /// own lock, one at a time (a list only grows, so what a node copied is still there).
    /// Also returns how long this graph's own list was: what was gathered covers its
    /// nodes up to there (a graph it keeps is a copy's source: its later nodes are in no
    /// copy).
    pub(crate) fn memory_used(&self) -> (Vec<Kept>, usize) {
        let (mut seen, mut addresses) = (std::collections::HashSet::new(), std::collections::HashSet::new());
        let (mut todo, mut used, mut own_len) = (vec![self.clone()], Vec::new(), 0);
        while let Some(graph) = todo.pop() {
            if !seen.insert(graph.kept_id()) {
                continue;
            }
            let list = graph.kept();
            if graph.kept_id() == self.kept_id() {
                own_len = list.len();
            }
            for k in list.iter() {
                match k {
                    Kept::Memory(m, _) if addresses.insert(m.raw()) => used.extend(k.share()),
                    Kept::Graph(g) => todo.push(g.clone()),
                    _ => {}
                }
            }
        }
        (used, own_len)
    }

    /// The id of the list it keeps (shared with the graphs that are parts of its nodes).
    pub(crate) fn kept_id(&self) -> u64 {
        self.0.owner().kept.id()
    }

    /// What the graph keeps, locked: every driver call on the graph or its nodes holds it.
    pub(crate) fn kept(&self) -> MutexGuard<'_, Vec<Kept>> {
        self.0.owner().kept.lock()
    }

    /// The locks of this graph and `other`, for a call that uses both: taken in the order
    /// of the lists' ids, so two threads locking the same pair cannot deadlock; one lock
    /// when they share a list (`None` for `other`'s).
    pub(crate) fn kept_with<'a>(
        &'a self,
        other: &'a Graph,
    ) -> (MutexGuard<'a, Vec<Kept>>, Option<MutexGuard<'a, Vec<Kept>>>) {
        let (mine, theirs) = (&self.0.owner().kept, &other.0.owner().kept);
        if Arc::ptr_eq(mine, theirs) {
            return (mine.lock(), None);
        }
        if mine.id() < theirs.id() {
            let mine = mine.lock();
            (mine, Some(theirs.lock()))
        } else {
            let theirs = theirs.lock();
            (mine.lock(), Some(theirs))
        }
    }

    /// Copies the graph (`cuGraphClone`): the copy's nodes have the same parameters and
    /// edges, and it keeps what this graph keeps (and this graph). A graph with
    /// conditional nodes cannot be cloned (the driver refuses). On error nothing is made.
    pub fn try_clone(&self) -> Result<Graph, Error> {
        let t = self.0.driver().typed();
        let create = || {
            // Only the call is locked: a failed context restore after it reports.
            let _lock = self.kept();
            t.cuGraphClone(self.live())
        };
        let copy = Handle::create_in(self.context().to_owner(), self.context().as_raw(), create).map(Graph)?;
        copy.kept().push(Kept::Graph(self.clone()));
        Ok(copy)
    }

    /// The node of this clone that copies `original` (a node of the graph it was cloned
    /// from) (`cuGraphNodeFindInClone`).
    pub fn find_in_clone(&self, original: &GraphNode) -> Result<GraphNode, Error> {
        let _locks = self.kept_with(original.graph());
        let raw = self.0.driver().typed().cuGraphNodeFindInClone(original.live(), self.live())?;
        Ok(self.node(raw))
    }

    /// Writes a DOT description of the graph to `path` (`cuGraphDebugDotPrint`, driver
    /// 11.3+), with the driver's most verbose detail. A path with a NUL byte is
    /// [`Error::InvalidArgument`].
    pub fn debug_dot(&self, path: impl AsRef<std::path::Path>) -> Result<(), Error> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(path.as_ref().as_os_str().as_bytes())
            .map_err(|_| InvalidArgument::new("Graph::debug_dot", "the path has a NUL byte"))?;
        const VERBOSE: u32 = 1;
        let _lock = self.kept();
        Ok(self.0.driver().typed().cuGraphDebugDotPrint(self.live(), &path, VERBOSE)?)
    }

    /// Adds an empty node after `dependencies`.
    pub fn add_empty_node(&self, dependencies: &[&GraphNode]) -> Result<GraphNode, Error> {
        let deps = live_nodes("Graph::add_empty_node", self, dependencies)?;
        let _edit = self.kept();
        Ok(self.node(self.0.driver().typed().cuGraphAddEmptyNode(self.live(), &deps)?))
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
        let mut kept = self.kept();
        let (params, boxed) = host_params(f);
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: valid out-pointer, dependencies and parameters; `data` outlives the graph.
        let added = unsafe { pc.cuGraphAddHostNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), &params) };
        if let Err(e) = added {
            // The closure is user code: drop it only after the lock is released.
            drop(kept);
            drop(boxed);
            return Err(e.into());
        }
        kept.push(Kept::Host(std::mem::ManuallyDrop::new(boxed)));
        Ok(self.node(node))
    }

    /// Makes the graph hold a reference to `object` (`cuGraphRetainUserObject`), released
    /// when the graph is destroyed.
    pub fn retain_user_object(&self, object: &UserObject) -> Result<(), Error> {
        let _lock = self.kept();
        // SAFETY: both handles are live; flags 0 retains a new reference.
        unsafe { Ok(self.0.driver().pc().cuGraphRetainUserObject(self.as_raw(), object.as_raw(), 1, 0)?) }
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
    pub unsafe fn begin_capture(&self) -> Result<(), Error> {
        let t = self.context().driver().typed();
        let mode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
        Ok(self.run(|| t.cuStreamBeginCapture(self.live(), mode))?)
    }

    /// Ends a capture and returns the captured graph (`cuStreamEndCapture`). On error no
    /// graph is left behind.
    pub fn end_capture(&self) -> Result<Graph, Error> {
        let t = self.context().driver().typed();
        let end = || t.cuStreamEndCapture(self.live());
        Ok(Handle::create_in(self.context().to_owner(), self.context().as_raw(), end).map(Graph)?)
    }
}
