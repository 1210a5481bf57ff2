//! Graph launch and executable-graph update: raw `p` calls and cudrv's handles side by
//! side in one process, in short interleaved turns (`cudrv_bench::interleaved`, 50 turns
//! per round, the order rotating each turn).
//!
//! `cargo bench -p cudrv-bench --bench graphs -- [--rounds N]` on a machine with a GPU
//! (driver 12.0+: kernel nodes and `cuGraphExecUpdate_v2`). Prints, per case, the median
//! time per operation of each, cudrv's ratio to the raw calls and its quartiles over the
//! turns (targets, issue 15: launch within 1%, update within 5%). Where cudrv must do more
//! than the one call, a third column times the raw call plus that: the context query
//! before a kernel-node update (the driver crashes with no context current), the lock
//! around a whole update (a `Graph` is `Sync`; the driver's graphs are not).

use std::hint::black_box;

use cudrv::sys::{CUgraphExecUpdateResultInfo, CUgraphNode, CUresult, CUDA_KERNEL_NODE_PARAMS};
use cudrv::{DeviceBuffer, Graph, LaunchConfig, Module, Stream};
use cudrv_bench::{interleaved, rounds, Op};

/// Each round's calls are timed in this many interleaved turns.
const TURNS_PER_ROUND: u32 = 50;

const PTX: &str = ".version 7.0\n.target sm_50\n.address_size 64\n\
.visible .entry noop(.param .u64 noop_p, .param .u32 noop_n)\n{\n\tret;\n}\n";

fn ok(r: CUresult) {
    assert_eq!(r, CUresult::CUDA_SUCCESS);
}

fn main() {
    let rounds = rounds(7);
    let driver = cudrv::init().expect("a CUDA driver");
    let device = driver.device(0).unwrap();
    println!(
        "# graphs: {} ({}), driver {}, {rounds} rounds",
        device.name().unwrap(),
        driver.source(),
        driver.version()
    );
    let ctx = device.primary_context().unwrap();
    ctx.set_current().unwrap();
    let stream = Stream::new(&ctx, 1).unwrap();
    let p = driver.p();
    let f = Module::from_ptx(&ctx, PTX).unwrap().function("noop").unwrap();
    let buf = DeviceBuffer::<u32>::alloc(&ctx, 1024).unwrap();
    let n: u32 = 1024;
    let cfg = LaunchConfig::new((1, 1, 1), (1, 1, 1));

    // One graph of 4 chained kernel nodes, instantiated four times: one exec for the raw
    // calls, and one for each case's cudrv calls (an exec has one owner: its calls take
    // `&mut`).
    let graph = Graph::new(&ctx).unwrap();
    let mut params = graph.kernel_params(&f);
    params.arg(&buf).arg(&n);
    let mut nodes = Vec::new();
    for _ in 0..4 {
        let deps: Vec<&cudrv::GraphNode> = nodes.last().into_iter().collect();
        // SAFETY: noop(u64, u32).
        let node = unsafe { graph.add_kernel_node(&deps, &params, cfg) }.unwrap();
        nodes.push(node);
    }
    let raw_exec = graph.instantiate().unwrap();
    let [mut launched, mut node_updated, mut updated] = [(); 3].map(|()| graph.instantiate().unwrap());
    let (re, s, g) = (raw_exec.as_raw(), stream.as_raw(), graph.as_raw());
    // Every exec is launched once before timing: an exec never launched is updated
    // several times slower (seen on the H200), and the raw one is launched by the first case.
    for exec in [&mut launched, &mut node_updated, &mut updated] {
        exec.launch(&stream).unwrap();
    }
    // SAFETY: live exec and stream.
    ok(unsafe { p.cuGraphLaunch(re, s) });
    stream.synchronize().unwrap();
    let node: CUgraphNode = nodes[0].as_raw();
    let ptr = buf.as_raw();
    let mut args = [(&ptr as *const u64).cast_mut().cast(), (&n as *const u32).cast_mut().cast()];
    let raw_params = CUDA_KERNEL_NODE_PARAMS {
        func: f.as_raw(),
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 1,
        blockDimY: 1,
        blockDimZ: 1,
        kernelParams: args.as_mut_ptr(),
        ..Default::default()
    };

    let mut generic = cudrv::sys::CUgraphNodeParams {
        type_: cudrv::sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL,
        ..Default::default()
    };
    // SAFETY: writing the kernel member of a plain-data union.
    unsafe {
        let k = &mut generic.__bindgen_anon_1.kernel;
        (k.func, k.kernelParams) = (raw_params.func, raw_params.kernelParams);
        (k.gridDimX, k.gridDimY, k.gridDimZ, k.blockDimX, k.blockDimY, k.blockDimZ) = (1, 1, 1, 1, 1, 1);
    }
    let settle = || stream.synchronize().unwrap();
    let edit_lock = std::sync::Mutex::new(());
    let mut cases: Vec<(&str, u32, u32, Vec<Op<'_>>)> = vec![
        (
            "graph launch (4 kernel nodes)",
            20_000,
            200,
            vec![
                // SAFETY: live exec and stream.
                Box::new(|| ok(black_box(unsafe { p.cuGraphLaunch(re, s) }))),
                Box::new(|| launched.launch(&stream).unwrap()),
            ],
        ),
        (
            "exec kernel node update",
            200_000,
            u32::MAX,
            vec![
                // SAFETY: live exec and node; parameters of the node's kernel.
                Box::new(|| ok(black_box(unsafe { p.cuGraphExecKernelNodeSetParams(re, node, &raw_params) }))),
                // SAFETY: noop(u64, u32).
                Box::new(|| unsafe { node_updated.set_kernel_node_params(&nodes[0], &params, cfg) }.unwrap()),
                Box::new(|| {
                    let mut current = std::ptr::null_mut();
                    // SAFETY: valid out-pointer; live exec and node; parameters of the node's kernel.
                    unsafe {
                        ok(p.cuCtxGetCurrent(&mut current));
                        assert!(!black_box(current).is_null());
                        ok(black_box(p.cuGraphExecKernelNodeSetParams(re, node, &raw_params)));
                    }
                }),
                // The generic per-node update (12.2+), raw.
                // SAFETY: live exec and node; kernel parameters of the node's kernel.
                Box::new(|| ok(black_box(unsafe { p.cuGraphExecNodeSetParams(re, node, &mut generic) }))),
            ],
        ),
        (
            "whole exec update",
            50_000,
            u32::MAX,
            vec![
                Box::new(|| {
                    let mut info = CUgraphExecUpdateResultInfo::default();
                    // SAFETY: live exec and graph; valid out-pointer.
                    ok(black_box(unsafe { p.cuGraphExecUpdate(re, g, &mut info) }));
                }),
                Box::new(|| updated.update(&graph).unwrap()),
                Box::new(|| {
                    let mut info = CUgraphExecUpdateResultInfo::default();
                    let _edit = edit_lock.lock().unwrap();
                    // SAFETY: live exec and graph; valid out-pointer.
                    ok(black_box(unsafe { p.cuGraphExecUpdate(re, g, &mut info) }));
                }),
            ],
        ),
    ];
    println!(
        "| case | raw | cudrv | raw + what cudrv must add | raw generic update | cudrv/raw | cudrv/raw per turn (p25 / p50 / p75) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (name, per_round, batch, ops) in &mut cases {
        let mut s: Box<dyn FnMut()> = if *batch == u32::MAX { Box::new(|| {}) } else { Box::new(settle) };
        let turns = u32::try_from(rounds).unwrap_or(u32::MAX).saturating_mul(TURNS_PER_ROUND);
        let t = interleaved(ops, *per_round / TURNS_PER_ROUND, turns, *batch, &mut *s);
        let (raw, ours) = (t.median(0), t.median(1));
        let other = |i: usize| if ops.len() > i { format!("{:.1} ns", t.median(i)) } else { "-".into() };
        let (third, fourth) = (other(2), other(3));
        let [lo, mid, hi] = t.ratio_quartiles(1, 0);
        println!(
            "| {name} | {raw:.1} ns | {ours:.1} ns | {third} | {fourth} | {:.3}x | {lo:.3} / {mid:.3} / {hi:.3} |",
            ours / raw
        );
    }
}
