//! Running graph nodes (`model/graph.rs`): the device work of a kernel, memcpy or memset
//! node, done in a world, for streams (in stream order), stream capture and graph
//! launches; and the checks a stream-ordered copy or memset gets when it is queued.

use cudrv::sys::CUresult;

use crate::model::context::Context;
use crate::model::graph::{CopyNode, End, KernelCode, KernelNode, MemsetNode, Node};
use crate::model::image::FAULT_KERNEL;
use crate::run::footprint::{self, Footprint};
use crate::run::lock::lock;
use crate::run::{kernels, ptx};
use crate::world::World;

/// Runs the kernel over its grid (a host kernel on the calling thread, PTX on the executor,
/// its blocks in parallel on the host's cores). A fault (the kernel named
/// [`FAULT_KERNEL`] of a fake image, a host kernel's sticky failure, a PTX kernel's fault:
/// `run/ptx.rs`) leaves `ctx` sticky-failed.
pub(crate) fn run_kernel(w: &World, k: &KernelNode, ctx: &Context) -> Result<(), CUresult> {
    let memory = |a| lock(&w.memory).allocation_at(a);
    let (status, sticky) = match &k.code {
        None => {
            if k.name == FAULT_KERNEL {
                ctx.make_sticky(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
            }
            return Ok(());
        }
        Some(KernelCode::Host(code)) => {
            // A host kernel's accesses are not followed: the sanitizer assumes it may
            // have written anything.
            w.sanitizer.unknown_writes();
            match kernels::run(&memory, code, k.grid, k.block, k.values.clone()) {
                Ok(()) => return Ok(()),
                Err(e) => (e.status(), e.is_sticky()),
            }
        }
        Some(KernelCode::Ptx { module, globals, shared }) => {
            let launch = ptx::PtxLaunch {
                module,
                kernel: &k.name,
                grid: k.grid,
                block: k.block,
                shared: *shared,
                params: &k.values,
                globals,
                stack: crate::ctx_query::stack_size(w, ctx.handle),
            };
            // Sanitized: the addresses the kernel touches are its footprint (checked once
            // per launch; the plain path is unchanged).
            let collecting = footprint::collecting();
            let (shared, races, init) = (w.sanitizer.shared(), w.sanitizer.races(), w.sanitizer.init());
            let ran = if collecting || shared || races {
                let obs = w.sanitizer.kernel_observer(&k.name, k.grid, k.block, [shared, races, init && collecting]);
                let (r, fp) = ptx::run_recorded(&memory, &launch, collecting, &obs);
                if collecting {
                    if init {
                        // The reads of unwritten bytes with their threads (before the
                        // footprint's check, which then finds those bytes written).
                        let writes = fp.writes.clone().sorted();
                        let found = w.sanitizer.with_unwritten(|u| obs.unwritten_reads(&writes, u));
                        if let Some((key, report)) = found {
                            w.sanitizer.kernel_report(key, report);
                        }
                    }
                    footprint::note(&fp);
                }
                for (key, report) in obs.reports() {
                    w.sanitizer.kernel_report(key, report);
                }
                w.sanitizer.keep_log(obs.into_log());
                r
            } else {
                ptx::run(&memory, &launch)
            };
            match ran {
                Ok(()) => return Ok(()),
                Err(fault) => ptx::status_of(&fault),
            }
        }
    };
    if sticky {
        ctx.make_sticky(status);
    }
    Err(status)
}

/// CUDA_ERROR_INVALID_VALUE (and a use after free in the ledger) if a host end of `c`
/// lies in a freed pinned buffer.
fn check_pinned_ends(w: &World, c: &CopyNode) -> Result<(), CUresult> {
    let mut m = lock(&w.memory);
    for end in [c.dst, c.src] {
        if let End::Host(p) = end {
            if m.touches_freed_pinned(p, c.len) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
        }
    }
    Ok(())
}

/// Checks what can be checked of a copy or memset when it is queued (its memory is live
/// now, its host ends are host memory), as a real driver refuses such a call at once:
/// CUDA_ERROR_INVALID_VALUE. Kernels and other nodes: nothing (a kernel's accesses fail
/// when it runs).
pub(crate) fn check(w: &World, node: &Node) -> Result<(), CUresult> {
    match node {
        Node::Copy(c) => {
            check_pinned_ends(w, c)?;
            let mut m = lock(&w.memory);
            for end in [c.dst, c.src] {
                match end {
                    End::Device(d) => m.check_device(d, c.len)?,
                    End::Host(p) => m.check_host(p, c.len)?,
                }
            }
            Ok(())
        }
        Node::Memset(ms) => {
            let bytes = ms.count.checked_mul(ms.width).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
            if bytes == 0 {
                return Ok(());
            }
            let mut m = lock(&w.memory);
            for row in 0..ms.rows {
                let offset = row.checked_mul(ms.pitch).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
                let dst = ms.dst.checked_add(offset as u64).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
                m.check_device(dst, bytes)?;
            }
            Ok(())
        }
        Node::Empty
        | Node::Host(_)
        | Node::Kernel(_)
        | Node::EventRecord(_)
        | Node::EventWait(_)
        | Node::Child(_)
        | Node::Conditional(_)
        | Node::MemAlloc(_)
        | Node::MemFree(_)
        | Node::BatchMemOp(_)
        | Node::ExtSem(_) => Ok(()),
    }
}

/// Whether `node` is a copy with an end in pageable host memory (not in a live pinned
/// buffer). A real driver does such an asynchronous copy before the call returns, after
/// the stream's earlier work (the CUDA documentation, "API synchronization behavior":
/// pageable memory is staged, or the copy is complete, when the call returns).
pub(crate) fn pageable(w: &World, node: &Node) -> bool {
    let Node::Copy(c) = node else {
        return false;
    };
    let m = lock(&w.memory);
    [c.dst, c.src].into_iter().any(|end| matches!(end, End::Host(p) if !m.is_pinned(p)))
}

/// Does the copy (host to host too, as `cuMemcpy` does with unified addressing; a NULL
/// host end is CUDA_ERROR_INVALID_VALUE; so is a host end in a freed pinned buffer, a use
/// after free in the ledger).
pub(crate) fn run_copy(w: &World, c: &CopyNode) -> Result<(), CUresult> {
    check_pinned_ends(w, c)?;
    match (c.dst, c.src) {
        (End::Device(d), End::Host(s)) => lock(&w.memory).copy_to_device(d, s as *const u8, c.len),
        (End::Host(d), End::Device(s)) => lock(&w.memory).copy_to_host(d as *mut u8, s, c.len),
        (End::Device(d), End::Device(s)) => lock(&w.memory).copy_device(d, s, c.len),
        (End::Host(0), End::Host(_)) | (End::Host(_), End::Host(0)) => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        (End::Host(d), End::Host(s)) => {
            // SAFETY: both are the program's host memory of `len` bytes, as the copy's
            // contract requires (a real driver copies them too).
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, c.len) };
            Ok(())
        }
    }
}

/// Does the memset.
pub(crate) fn run_memset(w: &World, m: &MemsetNode) -> Result<(), CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    let bytes = m.count.checked_mul(m.width).ok_or(invalid)?;
    if bytes == 0 {
        return Ok(());
    }
    let one = match m.width {
        1 => Vec::new(),
        2 => (m.value as u16).to_ne_bytes().to_vec(),
        _ => m.value.to_ne_bytes().to_vec(),
    };
    let pattern: Vec<u8> = one.iter().copied().cycle().take(bytes).collect();
    for row in 0..m.rows {
        let offset = row.checked_mul(m.pitch).ok_or(invalid)?;
        let dst = m.dst.checked_add(offset as u64).ok_or(invalid)?;
        match m.width {
            1 => lock(&w.memory).set(dst, m.value as u8, bytes)?,
            _ => lock(&w.memory).copy_to_device(dst, pattern.as_ptr(), bytes)?,
        }
    }
    Ok(())
}

/// What a copy or memset reads and writes, by its arguments.
fn footprint_of(node: &Node) -> Footprint {
    let mut fp = Footprint::default();
    let addr = |e: End| match e {
        End::Device(d) => d,
        End::Host(p) => p as u64,
    };
    match node {
        Node::Copy(c) => {
            fp.reads.push(addr(c.src), c.len as u64);
            fp.writes.push(addr(c.dst), c.len as u64);
        }
        Node::Memset(m) => {
            let bytes = m.count.saturating_mul(m.width) as u64;
            for row in 0..m.rows {
                fp.writes.push(m.dst.saturating_add(row.saturating_mul(m.pitch) as u64), bytes);
            }
        }
        _ => {}
    }
    fp
}

/// Does the device work of `node` in `ctx` now (a host node: nothing; see
/// [`Node::host_call`]; event, child graph and conditional nodes: nothing, a graph launch
/// does them, `graph_exec.rs`; an allocation node: nothing, its launch allocated it,
/// `graph_mem_exec.rs`; a free node frees its allocation; an external semaphore node:
/// nothing, `extsem.rs`).
pub(crate) fn run(w: &World, node: &Node, ctx: &Context) -> Result<(), CUresult> {
    if matches!(node, Node::Copy(_) | Node::Memset(_)) && footprint::collecting() {
        footprint::note(&footprint_of(node));
    }
    match node {
        Node::Empty
        | Node::Host(_)
        | Node::EventRecord(_)
        | Node::EventWait(_)
        | Node::Child(_)
        | Node::Conditional(_)
        | Node::MemAlloc(_)
        | Node::ExtSem(_) => Ok(()),
        Node::MemFree(a) => lock(&w.memory).free(*a),
        Node::BatchMemOp(m) => {
            w.sanitizer.unknown_writes();
            crate::stream_memop::run_params(w, &m.ops)
        }
        Node::Kernel(k) => run_kernel(w, k, ctx),
        Node::Copy(c) => run_copy(w, c),
        Node::Memset(m) => run_memset(w, m),
    }
}
