//! Kernel nodes from the typed argument list a launch takes ([`KernelNodeParams`]), with
//! the launch's checks (argument count and sizes against the kernel's parameter layout,
//! every buffer of the graph's context or a reachable peer). The driver copies the
//! argument values when the node is added or updated; the graph (or executable graph)
//! keeps the device memory of each buffer or view argument alive.

use std::cell::Cell;
use std::ffi::c_void;

use crate::error::{Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::graph::base::{raw_nodes, Graph, GraphNode, Kept, KeptList};
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::launch::{launch_shaped, LaunchConfig};
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::resources::params::{self, Check, Foreign, Target};
use crate::resources::peer;
use crate::sys::{CUcontext, CUfunction, CUgraphNode, CUkernel, CUDA_KERNEL_NODE_PARAMS};

/// The function and arguments of a kernel node, made by [`Graph::kernel_params`] (a
/// module's function) or [`Graph::library_kernel_params`] (a library's kernel); push the
/// arguments with [`KernelNodeParams::arg`] as for a launch. They stay borrowed until it
/// is dropped.
pub struct KernelNodeParams<'a> {
    target: Target<'a>,
    function: CUfunction,
    kernel: CUkernel,
    ptrs: Vec<*mut c_void>,
    sizes: Vec<u32>,
    contexts: Vec<Option<&'a Context>>,
    memory: Vec<Kept>,
    /// The id of a [`KeptList`] known to keep all of `memory` (0: none): set when it was
    /// added there, cleared when an argument is pushed.
    kept_by: Cell<u64>,
    /// The context these parameters passed the launch checks in (null: none), where the
    /// pass relied on nothing that can change since (no argument of another context, which
    /// peer access decides): checking there again is skipped. Cleared when an argument is
    /// pushed.
    checked_in: Cell<CUcontext>,
}

impl std::fmt::Debug for KernelNodeParams<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelNodeParams").field("function", &self.function).field("args", &self.ptrs.len()).finish()
    }
}

impl<'a> KernelNodeParams<'a> {
    fn new(target: Target<'a>, function: CUfunction, kernel: CUkernel) -> KernelNodeParams<'a> {
        let (ptrs, sizes, contexts, memory) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (kept_by, checked_in) = (Cell::new(0), Cell::new(std::ptr::null_mut()));
        KernelNodeParams { target, function, kernel, ptrs, sizes, contexts, memory, kept_by, checked_in }
    }

    /// Pushes the next argument: a plain value, a device buffer or a view of one (passed
    /// as its device address; the node keeps its allocation alive).
    pub fn arg<A: KernelArg + ?Sized>(&mut self, arg: &'a A) -> &mut KernelNodeParams<'a> {
        if let Some(ArgUse(mem)) = arg.memory_use() {
            self.memory.push(Kept::memory(mem));
            self.kept_by.set(0);
        }
        self.checked_in.set(std::ptr::null_mut());
        self.ptrs.push(arg.param());
        self.sizes.push(u32::try_from(arg.param_size()).unwrap_or(u32::MAX));
        self.contexts.push(arg.param_context());
        self
    }

    /// The launch checks in `context` (`what` names the call). A pass is remembered when
    /// every argument is of `context` itself (or of none): the answer cannot change then.
    /// The function's context is alive while these parameters borrow it, and its
    /// arguments' contexts while they borrow them, so a remembered address names the same
    /// context; a library kernel's checks do not depend on the context.
    #[inline]
    pub(crate) fn check(&self, what: &'static str, context: &Context) -> Result<(), InvalidArgument> {
        if self.checked_in.get() == context.as_raw() {
            return Ok(());
        }
        self.check_now(what, context)
    }

    /// [`KernelNodeParams::check`] when it was not passed in `context` before.
    #[inline(never)]
    fn check_now(&self, what: &'static str, context: &Context) -> Result<(), InvalidArgument> {
        let own = context.as_raw();
        let foreign: Foreign = self
            .contexts
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.filter(|c| !peer::usable_in(context, c.as_raw())).map(|c| (i, c.as_raw())));
        params::check(Check { what, target: self.target, context, sizes: &self.sizes, foreign })?;
        if self.contexts.iter().flatten().all(|c| c.as_raw() == own) {
            self.checked_in.set(own);
        }
        Ok(())
    }

    /// The device memory its arguments use, for the graph to keep.
    pub(crate) fn memory(&self) -> &[Kept] {
        &self.memory
    }

    /// Makes `list` keep the device memory its arguments use; without taking the list's
    /// lock when these parameters were added to it before (a list never drops anything,
    /// and no other list ever has its id).
    #[inline]
    pub(crate) fn keep_in(&self, list: &KeptList) {
        if self.kept_by.get() != list.id() {
            self.keep_now(list);
        }
    }

    #[inline(never)]
    fn keep_now(&self, list: &KeptList) {
        crate::resources::graph::base::keep_shared(&mut list.lock(), &self.memory);
        self.kept_by.set(list.id());
    }

    /// Runs `f` with the raw node parameters for `config`, which live only during `f`.
    pub(crate) fn with_raw<T>(&self, config: LaunchConfig, f: impl FnOnce(&CUDA_KERNEL_NODE_PARAMS) -> T) -> T {
        // The driver reads the parameter array (and copies the values it points to); it
        // never writes through it.
        let params = if self.ptrs.is_empty() { std::ptr::null_mut() } else { self.ptrs.as_ptr().cast_mut() };
        let raw = launch_shaped!(CUDA_KERNEL_NODE_PARAMS, config, {
            func: self.function,
            kernelParams: params,
            extra: std::ptr::null_mut(),
            kern: self.kernel,
            ctx: std::ptr::null_mut(),
        });
        f(&raw)
    }
}

impl Graph {
    /// Starts the parameters of a kernel node of `function` (of a module of the graph's
    /// context).
    pub fn kernel_params<'a>(&self, function: &'a Function) -> KernelNodeParams<'a> {
        KernelNodeParams::new(Target::Function(function), function.as_raw(), std::ptr::null_mut())
    }

    /// Starts the parameters of a kernel node of a library's `kernel` (resolved for the
    /// graph's context).
    pub fn library_kernel_params<'a>(&self, kernel: &'a Kernel) -> KernelNodeParams<'a> {
        KernelNodeParams::new(Target::Kernel(kernel), std::ptr::null_mut(), kernel.as_raw())
    }

    /// Adds a kernel node after `dependencies` that launches `params` with `config`
    /// (`cuGraphAddKernelNode_v2`, driver 12.0+). The launch checks are made first (see
    /// [`crate::Launch::launch`]): a failed one is [`Error::InvalidArgument`] and nothing
    /// is added. The graph keeps each buffer argument's memory alive.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameters in number, order and type, and
    /// the kernel must only touch memory that stays valid while the graph or an
    /// executable made from it may run.
    pub unsafe fn add_kernel_node(
        &self,
        dependencies: &[&GraphNode],
        params: &KernelNodeParams<'_>,
        config: LaunchConfig,
    ) -> Result<GraphNode, Error> {
        let deps = raw_nodes("Graph::add_kernel_node", self, dependencies)?;
        params.check("Graph::add_kernel_node", self.context())?;
        let mut list = self.kept();
        let pc = self.0.driver().pc();
        let mut node: CUgraphNode = std::ptr::null_mut();
        // With no context current, driver 580 dereferences null here (docs/driver-facts.md):
        // the call runs in the graph's context.
        let add = |raw: &_| {
            // SAFETY: valid out-pointer and dependencies; the raw parameters live across
            // the call; the caller vouches for the arguments; a context is current.
            let call = || unsafe { pc.cuGraphAddKernelNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), raw) };
            self.context().run(call)
        };
        params.with_raw(config, add)?;
        crate::resources::graph::base::keep_shared(&mut list, params.memory());
        Ok(self.node(node))
    }
}

impl GraphNode {
    /// Sets this kernel node's function, arguments and shape (`cuGraphKernelNodeSetParams_v2`,
    /// 12.0+), for executables made after; the checks and keeping of
    /// [`Graph::add_kernel_node`] apply.
    ///
    /// # Safety
    /// As [`Graph::add_kernel_node`].
    pub unsafe fn set_kernel_params(&self, params: &KernelNodeParams<'_>, config: LaunchConfig) -> Result<(), Error> {
        let graph = self.graph();
        params.check("GraphNode::set_kernel_params", graph.context())?;
        let mut list = graph.kept();
        let pc = graph.0.driver().pc();
        // In the graph's context, as adding the node.
        let set = |raw: &_| {
            // SAFETY: the node is live; the raw parameters live across the call; a context
            // is current.
            graph.context().run(|| unsafe { pc.cuGraphKernelNodeSetParams(self.as_raw(), raw) })
        };
        params.with_raw(config, set)?;
        crate::resources::graph::base::keep_shared(&mut list, params.memory());
        Ok(())
    }
}
