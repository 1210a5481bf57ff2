//! Executable graphs: instantiation with typed flags, launch, upload, whole-graph update
//! (`cuGraphExecUpdate_v2`, driver 12.0+) with the result explained on failure, and
//! per-node updates (kernel, memcpy, memset and host parameters; enabling and disabling
//! nodes).

use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::flags::InstantiateFlags;
use crate::resources::graph::base::{Graph, GraphNode, Kept, KeptList};
use crate::resources::graph::kernel_node::KernelNodeParams;
use crate::resources::handle::{handle_type, kind, Handle, ToOwner};
use crate::resources::launch::LaunchConfig;
use crate::resources::stream::Stream;
use crate::sys::{
    CUgraphExec, CUgraphExecUpdateResult, CUgraphExecUpdateResultInfo, CUresult, CUDA_GRAPH_INSTANTIATE_PARAMS,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The setters of 0.1's builder, one per flag: `name(self, on)` sets or clears `FLAG`
/// (inside `impl InstantiateFlags`), deprecated with `note`.
macro_rules! deprecated_setters {
    ($($name:ident => $flag:ident, $note:literal;)*) => {
        $(
            #[doc = concat!("With or without [`InstantiateFlags::", stringify!($flag), "`].")]
            #[deprecated(since = "0.2.0", note = $note)]
            pub const fn $name(self, on: bool) -> InstantiateFlags {
                self.with(InstantiateFlags::$flag, on)
            }
        )*
    };
}

/// The builder of 0.1, kept for code written against it: flags are a flag set now
/// (`InstantiateFlags::UPLOAD | InstantiateFlags::DEVICE_LAUNCH`).
impl InstantiateFlags {
    /// No flags.
    #[deprecated(since = "0.2.0", note = "use `InstantiateFlags::NONE`")]
    pub const fn new() -> InstantiateFlags {
        InstantiateFlags::NONE
    }

    deprecated_setters! {
        auto_free_on_launch => AUTO_FREE_ON_LAUNCH, "use `| InstantiateFlags::AUTO_FREE_ON_LAUNCH`";
        upload => UPLOAD, "use `| InstantiateFlags::UPLOAD`";
        device_launch => DEVICE_LAUNCH, "use `| InstantiateFlags::DEVICE_LAUNCH`";
        use_node_priority => USE_NODE_PRIORITY, "use `| InstantiateFlags::USE_NODE_PRIORITY`";
    }

    const fn with(self, flag: InstantiateFlags, on: bool) -> InstantiateFlags {
        let bits = if on { self.bits() | flag.bits() } else { self.bits() & !flag.bits() };
        InstantiateFlags::from_bits_retain(bits)
    }
}

/// An executable graph's context, the graph it was made from (if cudrv made it), and
/// what its updates use.
pub(crate) struct GraphExecOwner {
    context: Context,
    graph: Option<Graph>,
    kept: KeptList,
    /// The graph list (id) whose memory was last gathered into `kept`, and how long that
    /// list was then: an update from the same list, no longer, gathers nothing new. Only
    /// written under `&mut GraphExec`.
    gathered: (AtomicU64, AtomicUsize),
}

impl GraphExecOwner {
    fn new(context: &Context, graph: Option<Graph>) -> GraphExecOwner {
        let gathered = (AtomicU64::new(0), AtomicUsize::new(0));
        GraphExecOwner { context: context.clone(), graph, kept: KeptList::default(), gathered }
    }
}

impl ToOwner<GraphExecOwner> for &Context {
    fn to_owner(self) -> GraphExecOwner {
        GraphExecOwner::new(self, None)
    }
}

kind!(
    /// The executable graph kind: destroyed in its context.
    GraphExecKind: CUgraphExec = "GraphExec", owner GraphExecOwner, driver |o| o.context.driver(),
    context |o| Some(o.context.as_raw()), release cuGraphExecDestroy
);

/// An executable graph; keeps its graph (when cudrv made it), what its node updates use,
/// and its context alive. Dropping it destroys it (if owned). Adopted ones (`from_raw`)
/// must have nodes whose data outlives them.
///
/// The driver does not synchronise an executable graph: no two calls on one may run at
/// once, from any threads, launches included ("Graph object thread safety" in the driver
/// API documentation). So it has one owner and every call on it takes `&mut self`: safe
/// code cannot race on it, and a launch costs no lock. To share one between threads, put it
/// in a `Mutex`:
///
/// ```compile_fail
/// # fn f(exec: &cudrv::GraphExec, stream: &cudrv::Stream) {
/// exec.launch(stream).unwrap(); // a shared reference cannot launch
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(exec: &cudrv::GraphExec) {
/// let other: cudrv::GraphExec = exec.clone(); // one owner: not `Clone`
/// # }
/// ```
pub struct GraphExec(pub(crate) Handle<GraphExecKind>);
handle_type!(GraphExec: GraphExecKind => CUgraphExec, adopt: &Context, "an executable graph");

/// What an update result means.
fn explain(result: CUgraphExecUpdateResult) -> &'static str {
    type R = CUgraphExecUpdateResult;
    match result {
        R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED => "topology changed (nodes or edges differ)",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED => "node type changed",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED => "a kernel node's function changed (another context)",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED => "parameters changed in a way an update cannot apply",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED => "something about the node is not supported by update",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE => {
            "a kernel's function changed in an unsupported way"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED => "a node's attributes changed in an unsupported way",
        _ => "the update failed",
    }
}

impl Graph {
    /// Instantiates it in its context (`cuGraphInstantiateWithFlags`, no flags). On error
    /// nothing is created.
    pub fn instantiate(&self) -> Result<GraphExec, Error> {
        self.instantiate_with(InstantiateFlags::default())
    }

    /// Instantiates it with `flags` (`cuGraphInstantiateWithFlags`, 11.4+; with the upload
    /// flag `cuGraphInstantiateWithParams`, 12.0+, uploading on the context's legacy
    /// default stream). On error nothing is created.
    pub fn instantiate_with(&self, flags: impl Into<InstantiateFlags>) -> Result<GraphExec, Error> {
        let flags = flags.into();
        let context = self.context();
        let (pc, graph, bits) = (context.driver().pc(), self.as_raw(), flags.bits());
        let create = |raw: &mut CUgraphExec| {
            // Only the call is locked: a failed context restore after it reports.
            let _lock = self.kept();
            if flags.contains(InstantiateFlags::UPLOAD) {
                let mut params = CUDA_GRAPH_INSTANTIATE_PARAMS { flags: bits, ..Default::default() };
                // SAFETY: valid out-pointer and parameters; the graph is live; a null upload
                // stream is the current context's legacy default stream.
                return unsafe { pc.cuGraphInstantiateWithParams(raw, graph, &mut params) };
            }
            // SAFETY: valid out-pointer; the graph is live.
            unsafe { pc.cuGraphInstantiateWithFlags(raw, graph, bits) }
        };
        let owner = GraphExecOwner::new(context, Some(self.clone()));
        let exec = Handle::create_out(owner, context.as_raw(), create).map(GraphExec)?;
        // Every launch records a use of the memory its nodes use (see `GraphExec::launch`).
        exec.gather_memory(self);
        Ok(exec)
    }
}

impl GraphExec {
    /// The graph it was made from, if cudrv made it.
    pub fn graph(&self) -> Option<&Graph> {
        self.0.owner().graph.as_ref()
    }

    /// What it keeps alive beyond its graph (locked).
    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<Kept>> {
        self.0.owner().kept.lock()
    }

    /// Launches it on `stream` (`cuGraphLaunch`). The launch is a use, on `stream`, of
    /// every allocation its nodes use (kernel arguments, memcpy and memset ends, child
    /// graphs' and conditional bodies' too), recorded first as a copy's is: their frees
    /// and unmaps wait for it, a managed buffer's host access waits for it, and `stream`
    /// first waits for a stream-ordered allocation made on another stream. On error
    /// nothing is launched.
    #[inline]
    pub fn launch(&mut self, stream: &Stream) -> Result<(), Error> {
        self.use_memory_on(stream)?;
        let (pc, raw, s) = (stream.context().driver().pc(), self.as_raw(), stream.as_raw());
        // SAFETY: both handles are live while we hold them.
        Ok(stream.run_named(|| unsafe { pc.cuGraphLaunch(raw, s) })?)
    }

    /// Keeps every allocation `graph`'s nodes use (`Graph::memory_used`), for its launches
    /// to record as uses; nothing to gather when the graph's list has not grown since the
    /// last time (a repeated update).
    fn gather_memory(&self, graph: &Graph) {
        let (id, len) = &self.0.owner().gathered;
        let (used, own_len) = graph.memory_used();
        crate::resources::graph::base::keep_shared(&mut self.kept(), &used);
        id.store(graph.kept_id(), Ordering::Relaxed);
        len.store(own_len, Ordering::Relaxed);
    }

    /// Whether the memory of `graph`'s list, `len` entries long, was gathered already.
    fn gathered(&self, graph: &Graph, len: usize) -> bool {
        let (id, gathered_len) = &self.0.owner().gathered;
        id.load(Ordering::Relaxed) == graph.kept_id() && gathered_len.load(Ordering::Relaxed) >= len
    }

    /// Records a use on `stream` of every allocation it keeps (`MemoryOwner::used_on`), before
    /// a launch there. No other call on it can run meanwhile (`&mut self`).
    #[inline]
    fn use_memory_on(&self, stream: &Stream) -> Result<(), CudaError> {
        self.kept().iter().try_for_each(|k| match k {
            Kept::Memory(m, _) => m.owner().used_on(stream),
            _ => Ok(()),
        })
    }

    /// Uploads it to the device on `stream` ahead of its first launch (`cuGraphUpload`,
    /// 11.1+).
    pub fn upload(&mut self, stream: &Stream) -> Result<(), Error> {
        let t = stream.context().driver().typed();
        Ok(stream.run(|| t.cuGraphUpload(self.live(), stream.live()))?)
    }

    /// Takes the parameters of `graph`, which must have the shape of the graph it was
    /// made from (`cuGraphExecUpdate_v2`, driver 12.0+). A refusal is a
    /// `CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE` whose note says why ("topology changed",
    /// "node type changed", ...) and names the node; the exec is then unchanged. From then
    /// on it keeps `graph` (and what its nodes use) alive too.
    #[inline]
    pub fn update(&mut self, graph: &Graph) -> Result<(), Error> {
        let mut info = CUgraphExecUpdateResultInfo::default();
        let pc = self.0.driver().pc();
        let (exec, raw) = (self.as_raw(), graph.as_raw());
        let edit = graph.kept();
        let len = edit.len();
        // The executable names its context; driver 13.0 updates with none current
        // (docs/driver-facts.md).
        // SAFETY: live handles; valid out-pointer.
        let r = self.0.owner().context.run_named(|| unsafe { pc.cuGraphExecUpdate(exec, raw, &mut info) });
        drop(edit);
        match r {
            // The same graph as last time, with no node or parameter added since.
            Ok(()) if self.gathered(graph, len) => Ok(()),
            Ok(()) => {
                // What its launches use now (the graph it was made from may have new
                // parameters); that graph is kept by its owner already.
                if self.graph().is_none_or(|g| g.as_raw() != raw) {
                    crate::resources::graph::base::keep_in(&mut self.kept(), [Kept::Graph(graph.clone())]);
                }
                self.gather_memory(graph);
                Ok(())
            }
            Err(e) if e.code() == CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE => {
                let node =
                    if info.errorNode.is_null() { String::new() } else { format!(", at node {:?}", info.errorNode) };
                Err(Error::from(e.with_note(format!(
                    "update refused: {} ({:?}){node}",
                    explain(info.result),
                    info.result
                ))))
            }
            Err(e) => Err(Error::from(e)),
        }
    }

    /// Sets the kernel node `node` (of the graph it was made from) to run with `params`
    /// and `config` at later launches (`cuGraphExecKernelNodeSetParams_v2`, 12.0+). The
    /// checks and keeping of [`Graph::add_kernel_node`] apply.
    ///
    /// # Safety
    /// As [`Graph::add_kernel_node`].
    #[inline]
    pub unsafe fn set_kernel_node_params(
        &mut self,
        node: &GraphNode,
        params: &KernelNodeParams<'_>,
        config: LaunchConfig,
    ) -> Result<(), Error> {
        params.check("GraphExec::set_kernel_node_params", &self.0.owner().context)?;
        let (pc, exec, node) = (self.0.driver().pc(), self.as_raw(), node.as_raw());
        // In the context, as adding a kernel node (docs/driver-facts.md).
        let context = &self.0.owner().context;
        let set = |raw: &_| {
            // SAFETY: live handles; the raw parameters live across the call; the caller
            // vouches for the arguments; a context is current.
            context.run(|| unsafe { pc.cuGraphExecKernelNodeSetParams(exec, node, raw) })
        };
        params.with_raw(config, set)?;
        // Parameters updated with before hold nothing this exec does not keep yet: no lock.
        params.keep_in(&self.0.owner().kept);
        Ok(())
    }

    /// Sets a memset node's value at later launches (`cuGraphExecMemsetNodeSetParams`),
    /// keeping the rest of its parameters (read back from the node).
    pub fn set_memset_value(&mut self, node: &GraphNode, value: u32) -> Result<(), Error> {
        let pc = self.0.driver().pc();
        // The node's parameters are read from its graph, under the graph's lock.
        let lock = node.graph().kept();
        let mut p = pc.0.typed().cuGraphMemsetNodeGetParams(node.live())?;
        drop(lock);
        p.value = value;
        // SAFETY: live handles; valid parameter pointers.
        unsafe {
            Ok(pc.cuGraphExecMemsetNodeSetParams(self.as_raw(), node.as_raw(), &p, self.0.owner().context.as_raw())?)
        }
    }

    /// Makes a host node of the graph run `f` instead at later launches
    /// (`cuGraphExecHostNodeSetParams`); `f` is kept (and leaked) as
    /// [`Graph::add_host_node`] keeps its closure.
    pub fn set_host_node_fn(&mut self, node: &GraphNode, f: impl Fn() + Send + Sync + 'static) -> Result<(), Error> {
        let (params, boxed) = crate::resources::graph::base::host_params(f);
        // SAFETY: live handles; the closure outlives the exec (kept below, leaked at the end).
        let r = unsafe { self.0.driver().pc().cuGraphExecHostNodeSetParams(self.as_raw(), node.as_raw(), &params) };
        match r {
            Ok(()) => {
                self.kept().push(Kept::Host(std::mem::ManuallyDrop::new(boxed)));
                Ok(())
            }
            Err(e) => Err(Error::from(e)),
        }
    }

    /// Enables or disables a kernel, memcpy or memset node at later launches
    /// (`cuGraphNodeSetEnabled`, 11.6+); a disabled node does nothing.
    pub fn set_node_enabled(&mut self, node: &GraphNode, enabled: bool) -> Result<(), Error> {
        Ok(self.0.driver().typed().cuGraphNodeSetEnabled(self.live(), node.live(), u32::from(enabled))?)
    }

    /// Whether a node is enabled (`cuGraphNodeGetEnabled`, 11.6+).
    pub fn node_enabled(&mut self, node: &GraphNode) -> Result<bool, Error> {
        Ok(self.0.driver().typed().cuGraphNodeGetEnabled(self.live(), node.live())? != 0)
    }
}
