//! Builds a graph by hand (a memcpy from host memory, a kernel, a host node, a memcpy
//! back), instantiates and launches it, updates the kernel node's parameters in the
//! executable graph and then the whole executable graph from an edited graph, and
//! re-launches: `cargo run --example graph_explicit`. Exits non-zero on wrong data.
//!
//! Kernels: `examples/kernels/graph_kernels.ptx` (`add_f32`), compiled from
//! `graph_kernels.cu`. Kernel nodes need driver 12.0, whole-graph update too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudrv::{CopyEnd, DeviceBuffer, Graph, GraphNodeType, LaunchConfig, Stream};

#[path = "common/graph_kernels.rs"]
mod graph_kernels;
use graph_kernels::load;
const N: usize = 1 << 16;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
    let add = load(&ctx)?.function("add_f32")?;
    let input: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let mut output = vec![0.0f32; N];
    let x = DeviceBuffer::from_slice(&ctx, &vec![0.0f32; N])?;

    // upload -> add_f32(x, 1) -> host node -> download
    let graph = Graph::new(&ctx)?;
    // SAFETY: `input` and `output` outlive the graph and every launch (synchronised below).
    let (from_host, to_host) = unsafe { (CopyEnd::host(input.as_ptr(), N), CopyEnd::host(output.as_mut_ptr(), N)) };
    let upload = graph.add_memcpy_node(&[], CopyEnd::buffer(&x), from_host)?;
    let (one, n) = (1.0f32, N as i32);
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&one).arg(&n);
    let config = LaunchConfig::for_num_elems(N as u32);
    // SAFETY: add_f32(float* x, float a, int n); `x` is kept alive by the graph.
    let kernel = unsafe { graph.add_kernel_node(&[&upload], &params, config) }?;
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let host = graph.add_host_node(&[&kernel], move || {
        counter.fetch_add(1, Ordering::SeqCst);
    })?;
    graph.add_memcpy_node(&[&host], to_host, CopyEnd::buffer(&x))?;
    let kinds: Vec<GraphNodeType> = graph.nodes()?.iter().map(|n| n.node_type()).collect::<Result<_, _>>()?;
    println!("graph: {kinds:?}, {} edges", graph.edges()?.len());

    let mut exec = graph.instantiate()?;
    let mut wrong = 0;
    let mut check = |what: &str, add: f32, output: &[f32]| {
        let bad = output.iter().zip(&input).filter(|(o, i)| **o != **i + add).count();
        println!("{what}: {bad} wrong");
        wrong += bad;
    };
    exec.launch(&stream)?;
    stream.synchronize()?;
    check("first launch (x + 1)", 1.0, &output);

    // The kernel node of the executable graph adds 3 from now on.
    let three = 3.0f32;
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&three).arg(&n);
    // SAFETY: as above.
    unsafe { exec.set_kernel_node_params(&kernel, &params, config) }?;
    exec.launch(&stream)?;
    stream.synchronize()?;
    check("after the node update (x + 3)", 3.0, &output);

    // The graph's kernel node adds 7; the whole executable graph takes it.
    let seven = 7.0f32;
    let mut params = graph.kernel_params(&add);
    params.arg(&x).arg(&seven).arg(&n);
    // SAFETY: as above.
    unsafe { kernel.set_kernel_params(&params, config) }?;
    exec.update(&graph)?;
    exec.launch(&stream)?;
    stream.synchronize()?;
    check("after the whole-graph update (x + 7)", 7.0, &output);

    let runs = runs.load(Ordering::SeqCst);
    println!("graph_explicit: 3 launches, host node ran {runs} times, {N} values, {wrong} wrong");
    if wrong != 0 || runs != 3 {
        std::process::exit(1);
    }
    Ok(())
}
