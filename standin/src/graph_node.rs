//! The kinds of graph node the stand-in runs, shared by streams (work done at once), stream
//! capture (work recorded) and graph launches (work replayed): empty, host, kernel, memcpy
//! and memset nodes.

use std::sync::Arc;

use cudrv::sys::{CUdeviceptr, CUgraphNodeType, CUresult};

use crate::context::Context;
use crate::kernels::{self, HostKernel};
use crate::launch::FAULT_KERNEL;
use crate::memory;
use crate::queue::HostCall;

/// A kernel launch, its parameters already read.
#[derive(Clone)]
pub(crate) struct KernelNode {
    /// The kernel's name.
    pub(crate) name: String,
    /// Its host implementation; `None` for a kernel of a fake image (runs nothing).
    pub(crate) code: Option<Arc<HostKernel>>,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    /// The value of each parameter.
    pub(crate) values: Vec<Vec<u8>>,
}

impl KernelNode {
    /// Runs the kernel over its grid on the calling thread. A fault (the kernel named
    /// [`FAULT_KERNEL`] of a fake image, or a host kernel's sticky failure) leaves `ctx`
    /// sticky-failed.
    pub(crate) fn run(&self, ctx: &Context) -> Result<(), CUresult> {
        let Some(code) = &self.code else {
            if self.name == FAULT_KERNEL {
                ctx.make_sticky(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
            }
            return Ok(());
        };
        kernels::run(code, self.grid, self.block, self.values.clone()).map_err(|e| {
            if e.is_sticky() {
                ctx.make_sticky(e.status());
            }
            e.status()
        })
    }
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

impl CopyNode {
    /// Does the copy (host to host too, as `cuMemcpy` does with unified addressing; a NULL
    /// host end is CUDA_ERROR_INVALID_VALUE).
    pub(crate) fn run(&self) -> Result<(), CUresult> {
        match (self.dst, self.src) {
            (End::Device(d), End::Host(s)) => memory::copy_to_device(d, s as *const u8, self.len),
            (End::Host(d), End::Device(s)) => memory::copy_to_host(d as *mut u8, s, self.len),
            (End::Device(d), End::Device(s)) => memory::copy_device(d, s, self.len),
            (End::Host(0), End::Host(_)) | (End::Host(_), End::Host(0)) => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            (End::Host(d), End::Host(s)) => {
                // SAFETY: both are the program's host memory of `len` bytes, as the copy's
                // contract requires (a real driver copies them too).
                unsafe { std::ptr::copy(s as *const u8, d as *mut u8, self.len) };
                Ok(())
            }
        }
    }
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

    /// Does the memset.
    pub(crate) fn run(&self) -> Result<(), CUresult> {
        let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
        let bytes = self.count.checked_mul(self.width).ok_or(invalid)?;
        if bytes == 0 {
            return Ok(());
        }
        let one = match self.width {
            1 => Vec::new(),
            2 => (self.value as u16).to_ne_bytes().to_vec(),
            _ => self.value.to_ne_bytes().to_vec(),
        };
        let pattern: Vec<u8> = one.iter().copied().cycle().take(bytes).collect();
        for row in 0..self.rows {
            let offset = row.checked_mul(self.pitch).ok_or(invalid)?;
            let dst = self.dst.checked_add(offset as u64).ok_or(invalid)?;
            match self.width {
                1 => memory::set(dst, self.value as u8, bytes)?,
                _ => memory::copy_to_device(dst, pattern.as_ptr(), bytes)?,
            }
        }
        Ok(())
    }
}

/// One node of a graph.
#[derive(Clone)]
pub(crate) enum Node {
    Empty,
    Host(HostCall),
    Kernel(KernelNode),
    Copy(CopyNode),
    Memset(MemsetNode),
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
        }
    }

    /// Does the device work of the node in `ctx` at once (a host node: nothing; see
    /// [`Node::host_call`]).
    pub(crate) fn run(&self, ctx: &Context) -> Result<(), CUresult> {
        match self {
            Node::Empty | Node::Host(_) => Ok(()),
            Node::Kernel(k) => k.run(ctx),
            Node::Copy(c) => c.run(),
            Node::Memset(m) => m.run(),
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
