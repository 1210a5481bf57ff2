//! Object lifetimes across families, in one place: what ends with a context, and what a
//! destroy takes with it.
//!
//! - A context ends (`cuCtxDestroy`, a primary context's last release or reset) after its
//!   queued work; the peer access pairs it is in end with it. What was made in it stays
//!   (see the crate docs, "Limits of the emulation"): its allocations stay live in the
//!   ledger, its streams and events answer CUDA_ERROR_CONTEXT_IS_DESTROYED.
//! - A stream's destroy ends the capture begun on it, destroying the capture's graph; a
//!   graph's destroy releases its user object references and destroys the graphs its
//!   child graph and conditional nodes own; an exec's destroy releases its references
//!   once its launches have completed. A condition's value is freed when neither its
//!   graph nor an exec holds it.
//! - A module's unload (its own, or its library's) frees its globals.

use cudrv::sys::CUresult;

use crate::model::context::Context;
use crate::model::graph::{Exec, Graph, Node};
use crate::run::lock::lock;
use crate::user_object;
use crate::world::World;

/// Marks `c` destroyed and ends the peer access pairs it is in; `false` if it already was.
pub(crate) fn end_context(w: &World, c: &Context) -> bool {
    if !c.end() {
        return false;
    }
    lock(&w.peers).retain(|&(a, b)| a != c.handle && b != c.handle);
    true
}

/// Ends a primary context (its last release, or a reset): waits for its work, then marks
/// it destroyed. Its handle then answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
pub(crate) fn end_primary(w: &World, c: &Context) -> Result<(), CUresult> {
    let r = c.wait_all();
    end_context(w, c);
    r
}

/// Destroys a created context: waits for its work, marks it destroyed, and pops it if it
/// is this thread's current context. A primary context cannot be destroyed
/// (CUDA_ERROR_INVALID_CONTEXT); a destroyed one answers CUDA_ERROR_CONTEXT_IS_DESTROYED
/// (facts) and is recorded as a double destroy.
pub(crate) fn destroy_context(w: &World, handle: u64) -> Result<(), CUresult> {
    let c = w.contexts.find(handle)?;
    if c.is_primary() {
        return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    let twice = || {
        w.contexts.double_destroy(handle);
        Err(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED)
    };
    if c.is_destroyed() {
        return twice();
    }
    // The work already queued finishes first (outside any lock).
    c.wait_all()?;
    if !end_context(w, &c) {
        return twice();
    }
    w.contexts.pop_if_top(handle);
    Ok(())
}

/// Unloads `module` and its functions, and frees its globals.
pub(crate) fn unload_module(w: &World, module: u64) -> Result<(), CUresult> {
    lock(&w.modules).unload_module(module)?;
    lock(&w.legacy).unload_module(module);
    let gone: Vec<u64> = {
        let mut g = lock(&w.globals);
        let keys: Vec<(u64, String)> = g.keys().filter(|(m, _)| *m == module).cloned().collect();
        keys.iter().filter_map(|k| g.remove(k)).collect()
    };
    for &address in &gone {
        // A managed global's state goes with it.
        lock(&w.managed).remove(address);
    }
    let mut memory = lock(&w.memory);
    for address in gone {
        // Freed once, here: it cannot fail.
        let _ = memory.free(address);
    }
    Ok(())
}

/// Stream `h` was destroyed: it leaves the capture it is in; a capture begun on it ends,
/// and the graph that capture made is destroyed.
pub(crate) fn stream_destroyed(w: &World, h: u64) {
    let graph = lock(&w.captures).forget_stream(h);
    if let Some(g) = graph {
        destroy_graph(w, g);
    }
}

/// Destroys graph `g` (one a capture made and no one got), releasing its references.
pub(crate) fn destroy_graph(w: &World, g: u64) {
    let removed = lock(&w.graphs).remove(g);
    if let Ok(graph) = removed {
        graph_destroyed(w, graph);
    }
}

/// A graph was destroyed: its user object references are released, the graphs its child
/// graph and conditional nodes own are destroyed, and it lets go of its conditions.
pub(crate) fn graph_destroyed(w: &World, graph: Graph) {
    user_object::release_all(w, graph.user_objects);
    release_conditionals(w, &graph.conditionals);
    for (_, node) in graph.nodes {
        match node {
            Node::Child(g) => destroy_graph(w, g),
            Node::Conditional(c) => c.bodies.into_iter().for_each(|g| destroy_graph(w, g)),
            _ => {}
        }
    }
}

/// A graph or exec lets go of `conditions`: a condition no one holds any longer is
/// forgotten and its value's memory freed.
pub(crate) fn release_conditionals(w: &World, conditions: &[u64]) {
    let gone: Vec<u64> = {
        let mut all = lock(&w.conditionals);
        conditions
            .iter()
            .filter(|h| match all.get_mut(h) {
                Some(c) => {
                    c.holders = c.holders.saturating_sub(1);
                    c.holders == 0
                }
                None => false,
            })
            .copied()
            .collect()
    };
    let mut all = lock(&w.conditionals);
    let mut memory = lock(&w.memory);
    for h in gone {
        all.remove(&h);
        // Freed once, here: it cannot fail.
        let _ = memory.free(h);
    }
}

/// An exec was destroyed: its user object references are released once its launches have
/// completed (at once when none is pending, else on the driver thread, never a stream's
/// worker; if no thread can be started the references are leaked).
pub(crate) fn exec_destroyed(w: &'static World, exec: Exec) {
    let pending: Vec<_> = exec.launches.into_iter().filter(|(q, p)| !q.reached(*p)).collect();
    let (refs, conditions) = (exec.user_objects, exec.conditionals);
    if pending.is_empty() {
        user_object::release_all(w, refs);
        release_conditionals(w, &conditions);
        return;
    }
    let release = Box::new(move || {
        for (q, p) in pending {
            let _ = q.wait(p);
        }
        user_object::release_all(w, refs);
        release_conditionals(w, &conditions);
    });
    let _ = w.driver_thread.push(release);
}
