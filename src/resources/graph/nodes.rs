//! Memcpy, memset, event record and wait, and child graph nodes.

use std::sync::Arc;

use crate::error::Error;
use crate::resources::event::Event;
use crate::resources::graph::base::{live_nodes, raw_nodes, Graph, GraphNode, Kept};
use crate::resources::memory::DeviceBuffer;
use crate::resources::view::{DeviceView, DeviceViewMut};
use crate::sys::{CUdeviceptr, CUgraphNode, CUmemorytype, CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS};

/// One end of a memcpy node: device memory (a buffer or a view, kept alive by the graph)
/// or host memory.
#[derive(Debug)]
pub struct CopyEnd {
    device: Option<CUdeviceptr>,
    host: *mut std::ffi::c_void,
    bytes: usize,
    keep: Option<Kept>,
}

impl CopyEnd {
    /// All of a device buffer.
    pub fn buffer<T>(buffer: &DeviceBuffer<T>) -> CopyEnd {
        let keep = Some(Kept::memory(buffer.allocation()));
        CopyEnd { device: Some(buffer.as_raw()), host: std::ptr::null_mut(), bytes: buffer.size_bytes(), keep }
    }

    /// A view of a device buffer.
    pub fn view<T>(view: &DeviceView<'_, T>) -> CopyEnd {
        let keep = Some(Kept::memory(view.allocation()));
        let bytes = view.len().saturating_mul(std::mem::size_of::<T>());
        CopyEnd { device: Some(view.as_raw()), host: std::ptr::null_mut(), bytes, keep }
    }

    /// A mutable view of a device buffer.
    pub fn view_mut<T>(view: &DeviceViewMut<'_, T>) -> CopyEnd {
        let keep = Some(Kept::memory(view.allocation()));
        let bytes = view.len().saturating_mul(std::mem::size_of::<T>());
        CopyEnd { device: Some(view.as_raw()), host: std::ptr::null_mut(), bytes, keep }
    }

    /// `len` values of host memory at `ptr`.
    ///
    /// # Safety
    /// The memory must stay valid (and, as a destination, used in no conflicting way)
    /// while the graph or an executable made from it may run.
    pub unsafe fn host<T>(ptr: *const T, len: usize) -> CopyEnd {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        CopyEnd { device: None, host: ptr.cast_mut().cast(), bytes, keep: None }
    }

    /// Its size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }
}

impl Graph {
    /// Adds a memcpy node after `dependencies` copying all of `src` to `dst`
    /// (`cuGraphAddMemcpyNode`); both must have the same size (else
    /// [`Error::InvalidArgument`]). The graph keeps device ends' memory alive.
    pub fn add_memcpy_node(&self, dependencies: &[&GraphNode], dst: CopyEnd, src: CopyEnd) -> Result<GraphNode, Error> {
        let what = "Graph::add_memcpy_node";
        let deps = raw_nodes(what, self, dependencies)?;
        if dst.bytes != src.bytes {
            let why = format!("the destination has {} bytes, the source {}", dst.bytes, src.bytes);
            return Err(crate::error::InvalidArgument::new(what, why).into());
        }
        let mut p = CUDA_MEMCPY3D { WidthInBytes: src.bytes, Height: 1, Depth: 1, ..Default::default() };
        match src.device {
            Some(d) => (p.srcMemoryType, p.srcDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, d),
            None => (p.srcMemoryType, p.srcHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, src.host.cast_const()),
        }
        match dst.device {
            Some(d) => (p.dstMemoryType, p.dstDevice) = (CUmemorytype::CU_MEMORYTYPE_DEVICE, d),
            None => (p.dstMemoryType, p.dstHost) = (CUmemorytype::CU_MEMORYTYPE_HOST, dst.host),
        }
        let mut kept = self.kept();
        let mut node: CUgraphNode = std::ptr::null_mut();
        let (pc, ctx) = (self.0.driver().pc(), self.context().as_raw());
        // SAFETY: valid out-pointer, dependencies and parameters; the memory is kept alive
        // (device) or vouched for (host).
        unsafe { pc.cuGraphAddMemcpyNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), &p, ctx) }?;
        crate::resources::graph::base::keep_in(&mut kept, src.keep.into_iter().chain(dst.keep));
        Ok(self.node(node))
    }

    /// Adds a memset node after `dependencies` setting every 4-byte value of `dst` to
    /// `value` (`cuGraphAddMemsetNode`); the graph keeps its memory alive.
    pub fn add_memset_node<T>(
        &self,
        dependencies: &[&GraphNode],
        dst: &DeviceBuffer<T>,
        value: u32,
    ) -> Result<GraphNode, Error> {
        let deps = raw_nodes("Graph::add_memset_node", self, dependencies)?;
        let p = CUDA_MEMSET_NODE_PARAMS {
            dst: dst.as_raw(),
            pitch: 0,
            value,
            elementSize: 4,
            width: dst.size_bytes() / 4,
            height: 1,
        };
        let mut kept = self.kept();
        let mut node: CUgraphNode = std::ptr::null_mut();
        let (pc, ctx) = (self.0.driver().pc(), self.context().as_raw());
        // SAFETY: valid out-pointer, dependencies and parameters; the memory is kept.
        unsafe { pc.cuGraphAddMemsetNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), &p, ctx) }?;
        crate::resources::graph::base::keep_in(&mut kept, [Kept::memory(dst.allocation())]);
        Ok(self.node(node))
    }

    /// Adds a node after `dependencies` that records `event` (`cuGraphAddEventRecordNode`,
    /// 11.1+); the graph keeps the event.
    pub fn add_event_record_node(&self, dependencies: &[&GraphNode], event: &Arc<Event>) -> Result<GraphNode, Error> {
        self.add_event_node("Graph::add_event_record_node", dependencies, event, true)
    }

    /// Adds a node after `dependencies` that waits for `event` (`cuGraphAddEventWaitNode`,
    /// 11.1+); the graph keeps the event.
    pub fn add_event_wait_node(&self, dependencies: &[&GraphNode], event: &Arc<Event>) -> Result<GraphNode, Error> {
        self.add_event_node("Graph::add_event_wait_node", dependencies, event, false)
    }

    fn add_event_node(
        &self,
        what: &'static str,
        dependencies: &[&GraphNode],
        event: &Arc<Event>,
        record: bool,
    ) -> Result<GraphNode, Error> {
        let deps = live_nodes(what, self, dependencies)?;
        let mut kept = self.kept();
        let t = self.0.driver().typed();
        let node = match record {
            true => t.cuGraphAddEventRecordNode(self.live(), &deps, event.live())?,
            false => t.cuGraphAddEventWaitNode(self.live(), &deps, event.live())?,
        };
        kept.push(Kept::Event(Arc::clone(event)));
        Ok(self.node(node))
    }

    /// Adds a node after `dependencies` that runs a copy of `child`, made now
    /// (`cuGraphAddChildGraphNode`); the graph keeps `child` (what its nodes use).
    pub fn add_child_graph_node(&self, dependencies: &[&GraphNode], child: &Graph) -> Result<GraphNode, Error> {
        let deps = live_nodes("Graph::add_child_graph_node", self, dependencies)?;
        // The driver reads `child` to copy it: both graphs are locked.
        let (mut kept, _child) = self.kept_with(child);
        let node = self.0.driver().typed().cuGraphAddChildGraphNode(self.live(), &deps, child.live())?;
        crate::resources::graph::base::keep_in(&mut kept, [Kept::Graph(child.clone())]);
        Ok(self.node(node))
    }
}

impl GraphNode {
    /// The graph a child graph node runs (`cuGraphChildGraphNodeGetGraph`): part of this
    /// node, kept alive by this node's graph.
    pub fn child_graph(&self) -> Result<Graph, Error> {
        let _lock = self.graph().kept();
        let raw = self.graph().0.driver().typed().cuGraphChildGraphNodeGetGraph(self.live())?;
        Ok(self.graph().part(raw))
    }
}

impl Graph {
    /// Adds a node after `dependencies` that allocates `bytes` of device memory of the
    /// graph's device each launch (`cuGraphAddMemAllocNode`, driver 11.4+); returns it and
    /// the address the allocation has at every launch. The memory is the graph's: free it
    /// with a free node ([`Graph::add_mem_free_node`]), after the stream's work, or with
    /// [`crate::InstantiateFlags::auto_free_on_launch`]; cudrv does not track it.
    pub fn add_mem_alloc_node(
        &self,
        dependencies: &[&GraphNode],
        bytes: usize,
    ) -> Result<(GraphNode, CUdeviceptr), Error> {
        use crate::sys::{CUmemAllocationType, CUmemLocationType, CUDA_MEM_ALLOC_NODE_PARAMS};
        let deps = raw_nodes("Graph::add_mem_alloc_node", self, dependencies)?;
        let mut p = CUDA_MEM_ALLOC_NODE_PARAMS { bytesize: bytes, ..Default::default() };
        p.poolProps.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        p.poolProps.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        p.poolProps.location.__bindgen_anon_1.id = self.context().device().as_raw();
        let _edit = self.kept();
        let mut node: CUgraphNode = std::ptr::null_mut();
        let pc = self.0.driver().pc();
        // SAFETY: valid out-pointer, dependencies and parameters; the graph is live.
        unsafe { pc.cuGraphAddMemAllocNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), &mut p) }?;
        Ok((self.node(node), p.dptr))
    }

    /// Adds a node after `dependencies` that frees `address`, the address of a memory
    /// allocation node of this graph (`cuGraphAddMemFreeNode`, driver 11.4+).
    ///
    /// # Safety
    /// `address` must be memory a graph allocated (never cudrv's buffers), used by no work
    /// after this node.
    pub unsafe fn add_mem_free_node(
        &self,
        dependencies: &[&GraphNode],
        address: CUdeviceptr,
    ) -> Result<GraphNode, Error> {
        let deps = raw_nodes("Graph::add_mem_free_node", self, dependencies)?;
        let _edit = self.kept();
        let mut node: CUgraphNode = std::ptr::null_mut();
        let pc = self.0.driver().pc();
        // SAFETY: valid out-pointer and dependencies; the caller vouches for `address`.
        unsafe { pc.cuGraphAddMemFreeNode(&mut node, self.as_raw(), deps.as_ptr(), deps.len(), address) }?;
        Ok(self.node(node))
    }
}
