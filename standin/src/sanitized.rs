//! The sanitizer's hooks in the entry implementations (`sanitize/` holds its state):
//! running a stream operation with its footprint collected and checked, naming operations
//! and allocations for reports.

use std::sync::Arc;

use cudrv::sys::{CUresult, CUstream};

use crate::entry::from_ptr;
use crate::model::context::Context;
use crate::model::graph::{End, Node, Step};
use crate::model::stream::Target;
use crate::run::footprint::{self, Footprint};
use crate::run::lock::lock;
use crate::sanitize::Op;
use crate::world::World;

/// The legacy default stream of `ctx`, as a target (the synchronous calls' stream).
pub(crate) fn legacy(ctx: &Arc<Context>) -> Target {
    Target { queue: Arc::clone(&ctx.default_queue), ctx: Arc::clone(ctx), legacy: true, blocking: false }
}

/// Issues `node` on `t` (`s`: the stream the program passed) if races are checked.
pub(crate) fn issue(w: &World, t: &Target, s: CUstream, node: &Node) -> Option<Op> {
    w.sanitizer.issue(t, from_ptr(s), || what(node))
}

/// Does `work` as operation `op` (plainly when there is none): what it reads and writes
/// is collected (`graph_node::run` notes copies, memsets and kernels) and checked.
pub(crate) fn run(w: &World, op: Option<&Op>, work: impl FnOnce() -> Result<(), CUresult>) -> Result<(), CUresult> {
    let Some(op) = op else { return work() };
    let (r, fp) = footprint::collect(work);
    w.sanitizer.complete(op, canonical(w, fp), |a| allocation(w, a));
    r
}

/// `fp` with each range that lies in an imported allocation moved to the exporter's
/// addresses (the same bytes), so that the checks see one place whichever address wrote or
/// read it.
fn canonical(w: &World, fp: Footprint) -> Footprint {
    let memory = lock(&w.memory);
    if !memory.has_imports() {
        return fp;
    }
    let mut out = Footprint::default();
    for (a, b) in fp.reads.sorted() {
        out.reads.push(memory.canonical(a), b - a);
    }
    for (a, b) in fp.writes.sorted() {
        out.writes.push(memory.canonical(a), b - a);
    }
    out
}

/// Does `node` now as a synchronous call does (on `ctx`'s legacy stream, its earlier work
/// waited for): one operation of that stream, which the host knows done when it returns.
pub(crate) fn synchronous(w: &World, ctx: &Arc<Context>, node: &Node) -> Result<(), CUresult> {
    let op = issue(w, &legacy(ctx), std::ptr::null_mut(), node);
    let r = run(w, op.as_ref(), || crate::graph_node::run(w, node, ctx));
    if let Some(op) = &op {
        w.sanitizer.host_waited(op);
    }
    r
}

/// A stream-ordered free of the allocation at `dptr`, as operation `op`: it writes (ends)
/// the whole allocation. The shadow keeps the free as the range's last writer (an access
/// no ordering puts after it races it, even one that ran alongside it); the range is
/// forgotten when it is allocated again.
pub(crate) fn free(w: &World, op: Option<&Op>, dptr: u64) -> Result<(), CUresult> {
    let Some(op) = op else { return lock(&w.memory).free(dptr) };
    let range = lock(&w.memory).range(dptr).ok();
    let mut fp = Footprint::default();
    if let Some((start, size)) = range {
        fp.writes.push(start, size as u64);
    }
    w.sanitizer.complete(op, fp, |a| allocation(w, a));
    lock(&w.memory).free(dptr)
}

/// Runs a graph launch's top-level steps one by one (`run` does a slice of them as the
/// launch does), collecting each one's footprint (added to the launch's too), and reports
/// two nodes that touch the same bytes, one writing, with no path of `edges` between them.
/// A child graph or conditional node counts as one node.
pub(crate) fn graph_steps(
    w: &World,
    op: &Op,
    steps: &[Step],
    edges: &[(u64, u64)],
    run: impl Fn(&[Step]) -> Result<(), CUresult>,
) -> Result<(), CUresult> {
    let mut done: Vec<(u64, String, Footprint)> = Vec::new();
    let mut result = Ok(());
    for step in steps.iter().filter(|s| s.enabled) {
        let (r, fp) = footprint::collect(|| run(std::slice::from_ref(step)));
        footprint::note(&fp);
        done.push((step.origin, format!("node {:#x} ({})", step.origin, what(&step.node)), fp));
        if r.is_err() {
            result = r;
            break;
        }
    }
    let after = |from: u64, to: u64| reaches(edges, from, to);
    let mut pairs = Vec::new();
    for (i, (a, a_what, a_fp)) in done.iter().enumerate() {
        for (b, b_what, b_fp) in done.iter().skip(i + 1) {
            if after(*a, *b) || after(*b, *a) {
                continue;
            }
            if let Some(m) = crate::sanitize::meet(a_fp, b_fp) {
                pairs.push(((*a, *b), a_what.clone(), b_what.clone(), m));
            }
        }
    }
    for (nodes, a, b, m) in pairs {
        let alloc = allocation(w, m.start);
        w.sanitizer.graph_race(op, nodes, &a, &b, &m, alloc);
    }
    result
}

/// Whether a path of `edges` leads from node `from` to node `to`.
fn reaches(edges: &[(u64, u64)], from: u64, to: u64) -> bool {
    let mut seen = vec![from];
    let mut todo = vec![from];
    while let Some(n) = todo.pop() {
        for &(x, y) in edges {
            if x == n && !seen.contains(&y) {
                if y == to {
                    return true;
                }
                seen.push(y);
                todo.push(y);
            }
        }
    }
    false
}

/// How a report names the allocation holding `addr`.
pub(crate) fn allocation(w: &World, addr: u64) -> Option<String> {
    let i = lock(&w.memory).describe(addr)?;
    let place = if i.host { "host" } else { "device" };
    Some(format!("{:?} {place} allocation {:#x} ({} bytes)", i.kind, i.start, i.size))
}

/// How a report names a stream operation.
pub(crate) fn what(node: &Node) -> String {
    let end = |e: End| match e {
        End::Device(d) => format!("device {d:#x}"),
        End::Host(p) => format!("host {p:#x}"),
    };
    match node {
        Node::Copy(c) => format!("copy of {} bytes from {} to {}", c.len, end(c.src), end(c.dst)),
        Node::Memset(m) => format!("memset of {} bytes at {:#x}", m.count.saturating_mul(m.width), m.dst),
        Node::Kernel(k) => format!(
            "kernel `{}` (grid {}x{}x{}, block {}x{}x{})",
            k.name, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2]
        ),
        _ => "stream operation".into(),
    }
}
