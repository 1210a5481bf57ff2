//! Graph launch and executable-graph update: raw `p` calls and cudrv's handles side by
//! side in one process, in interleaved rounds (the order alternates each round).
//!
//! `cargo bench -p cudrv-bench --bench graphs -- [--rounds N]` on a machine with a GPU
//! (driver 12.0+: kernel nodes and `cuGraphExecUpdate_v2`). Prints, per case, the median
//! time per operation of each and cudrv's ratio to the raw calls (targets, issue 15:
//! launch within 1%, update within 5%).

use std::hint::black_box;

use cudrv::sys::{CUgraphExecUpdateResultInfo, CUgraphNode, CUresult, CUDA_KERNEL_NODE_PARAMS};
use cudrv::{DeviceBuffer, Graph, LaunchConfig, Module, Stream};
use cudrv_bench::{median, rounds, time, Op};

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

    // One graph of 4 chained kernel nodes, instantiated twice: one exec for the raw
    // calls, one for cudrv's.
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
    let (raw_exec, exec) = (graph.instantiate().unwrap(), graph.instantiate().unwrap());
    let (re, s, g) = (raw_exec.as_raw(), stream.as_raw(), graph.as_raw());
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

    let settle = || stream.synchronize().unwrap();
    let idle = || {};
    let mut cases: Vec<(&str, u32, u32, [Op<'_>; 2])> = vec![
        (
            "graph launch (4 kernel nodes)",
            20_000,
            200,
            [
                // SAFETY: live exec and stream.
                Box::new(|| ok(black_box(unsafe { p.cuGraphLaunch(re, s) }))) as Op<'_>,
                Box::new(|| exec.launch(&stream).unwrap()),
            ],
        ),
        (
            "exec kernel node update",
            200_000,
            u32::MAX,
            [
                // SAFETY: live exec and node; parameters of the node's kernel.
                Box::new(|| ok(black_box(unsafe { p.cuGraphExecKernelNodeSetParams(re, node, &raw_params) })))
                    as Op<'_>,
                // SAFETY: noop(u64, u32).
                Box::new(|| unsafe { exec.set_kernel_node_params(&nodes[0], &params, cfg) }.unwrap()),
            ],
        ),
        (
            "whole exec update",
            50_000,
            u32::MAX,
            [
                Box::new(|| {
                    let mut info = CUgraphExecUpdateResultInfo::default();
                    // SAFETY: live exec and graph; valid out-pointer.
                    ok(black_box(unsafe { p.cuGraphExecUpdate(re, g, &mut info) }));
                }) as Op<'_>,
                Box::new(|| exec.update(&graph).unwrap()),
            ],
        ),
    ];
    println!("| case | raw | cudrv | cudrv/raw |");
    println!("| --- | --- | --- | --- |");
    for (name, per_round, batch, ops) in &mut cases {
        let mut t: [Vec<f64>; 2] = Default::default();
        for round in 0..rounds {
            for k in 0..2 {
                let i = (k + round) % 2;
                let mut s: Box<dyn FnMut()> = if *batch == u32::MAX { Box::new(idle) } else { Box::new(settle) };
                t[i].push(time(&mut ops[i], *per_round, *batch, &mut *s));
            }
        }
        let (raw, ours) = (median(&mut t[0]), median(&mut t[1]));
        println!("| {name} | {raw:.1} ns | {ours:.1} ns | {:.3}x |", ours / raw);
    }
}
