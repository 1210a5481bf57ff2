//! Graphs built by hand: nodes, instantiation, launch, and destroyed or NULL graphs.

use std::os::raw::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{case, handle, made, number, sentinel, step, stream, with, Case, Env, Out};
use cudrv::sys::*;

/// How many times [`count_run`] ran.
static RUNS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn count_run(_: *mut c_void) {
    RUNS.fetch_add(1, Ordering::SeqCst);
}

/// An empty graph.
pub fn graph(e: &Env) -> Result<CUgraph, Out> {
    let mut g = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuGraphCreate", unsafe { e.p.cuGraphCreate(&mut g, 0) }, g)
}

/// A graph of one host node running [`count_run`].
fn host_graph(e: &Env) -> Result<CUgraph, Out> {
    let g = graph(e)?;
    let params = CUDA_HOST_NODE_PARAMS { fn_: Some(count_run), userData: std::ptr::null_mut() };
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, no dependencies, valid parameters.
    made("cuGraphAddHostNode", unsafe { e.p.cuGraphAddHostNode(&mut n, g, std::ptr::null(), 0, &params) }, g)
}

/// Instantiates `g`.
pub fn instantiate(e: &Env, g: CUgraph) -> Result<CUgraphExec, Out> {
    let mut x = std::ptr::null_mut();
    // SAFETY: a live graph and a valid out-pointer.
    made("cuGraphInstantiateWithFlags", unsafe { e.p.cuGraphInstantiateWithFlags(&mut x, g, 0) }, x)
}

/// The number of nodes of `g`.
pub fn node_count(e: &Env, g: CUgraph) -> (CUresult, String) {
    let mut n = super::UNTOUCHED as usize;
    // SAFETY: NULL nodes asks for the count only.
    let st = unsafe { e.p.cuGraphGetNodes(g, std::ptr::null_mut(), &mut n) };
    (st, number(n as u64))
}

/// A graph, destroyed.
fn dead_graph(e: &Env) -> Result<CUgraph, Out> {
    let g = graph(e)?;
    // SAFETY: a live graph of this case.
    made("cuGraphDestroy", unsafe { e.p.cuGraphDestroy(g) }, g)
}

/// An executable graph (of one host node), destroyed.
fn dead_exec(e: &Env) -> Result<CUgraphExec, Out> {
    let x = instantiate(e, host_graph(e)?)?;
    // SAFETY: a live executable graph of this case.
    made("cuGraphExecDestroy", unsafe { e.p.cuGraphExecDestroy(x) }, x)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("graph.create", Ctx, |e| {
            let mut g: CUgraph = sentinel();
            Out::of(e.p.cuGraphCreate(&mut g, 0)).eq("graph", handle(g))
        }),
        case!("graph.create_bad_flags", Ctx, |e| {
            let mut g: CUgraph = sentinel();
            Out::of(e.p.cuGraphCreate(&mut g, 1)).eq("graph", handle(g))
        }),
        case!("graph.empty_node_count", Ctx, |e| {
            let g = with!(graph(e));
            let mut n = std::ptr::null_mut();
            let st = e.p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0);
            let (_, count) = node_count(e, g);
            Out::of(st).eq("nodes", count)
        }),
        case!("graph.instantiate_empty", Ctx, |e| {
            let g = with!(graph(e));
            let mut x: CUgraphExec = sentinel();
            Out::of(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0)).eq("exec", handle(x))
        }),
        case!("graph.host_node_launch_twice", Ctx, |e| {
            let x = with!(instantiate(e, with!(host_graph(e))));
            let s = with!(stream(e));
            step!(e.p.cuGraphLaunch(x, s));
            let st = e.p.cuGraphLaunch(x, s);
            step!(e.p.cuStreamSynchronize(s));
            Out::of(st).eq("runs", RUNS.load(Ordering::SeqCst))
        }),
        case!("graph.launch_after_graph_destroyed", Ctx, |e| {
            let g = with!(host_graph(e));
            let x = with!(instantiate(e, g));
            step!(e.p.cuGraphDestroy(g));
            let s = with!(stream(e));
            let st = e.p.cuGraphLaunch(x, s);
            step!(e.p.cuStreamSynchronize(s));
            Out::of(st).eq("runs", RUNS.load(Ordering::SeqCst))
        }),
        case!("graph.launch_legacy_stream", Ctx, |e| {
            let x = with!(instantiate(e, with!(host_graph(e))));
            let st = e.p.cuGraphLaunch(x, std::ptr::null_mut());
            step!(e.p.cuCtxSynchronize());
            Out::of(st).eq("runs", RUNS.load(Ordering::SeqCst))
        }),
        case!("graph.destroyed_get_nodes", Ctx, |e| {
            let g = with!(dead_graph(e));
            let (st, _) = node_count(e, g);
            Out::of(st)
        }),
        case!("graph.destroyed_destroy", Ctx, |e| {
            let g = with!(dead_graph(e));
            Out::of(e.p.cuGraphDestroy(g))
        }),
        case!("graph.destroyed_instantiate", Ctx, |e| {
            let g = with!(dead_graph(e));
            let mut x: CUgraphExec = sentinel();
            Out::of(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0)).eq("exec", handle(x))
        }),
        case!("graph.destroyed_add_node", Ctx, |e| {
            let g = with!(dead_graph(e));
            let mut n: CUgraphNode = sentinel();
            Out::of(e.p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0))
        }),
        case!("graph.null_get_nodes", Ctx, |e| {
            let (st, _) = node_count(e, std::ptr::null_mut());
            Out::of(st)
        }),
        case!("graph.null_destroy", Ctx, |e| { Out::of(e.p.cuGraphDestroy(std::ptr::null_mut())) }),
        case!("graph.exec_destroyed_launch", Ctx, |e| {
            let x = with!(dead_exec(e));
            let s = with!(stream(e));
            Out::of(e.p.cuGraphLaunch(x, s))
        }),
        case!("graph.exec_destroyed_destroy", Ctx, |e| {
            let x = with!(dead_exec(e));
            Out::of(e.p.cuGraphExecDestroy(x))
        }),
        case!("graph.exec_null_launch", Ctx, |e| {
            let s = with!(stream(e));
            Out::of(e.p.cuGraphLaunch(std::ptr::null_mut(), s))
        }),
        case!("graph.exec_null_destroy", Ctx, |e| { Out::of(e.p.cuGraphExecDestroy(std::ptr::null_mut())) }),
    ]
}
