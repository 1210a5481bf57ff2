//! A graph with a conditional While node: a memset node sets a counter to 10, and the
//! loop's body (`add_f32` adds 1 to every value, then `count_down` decrements the counter
//! and sets the loop's condition, with `cudaGraphSetConditional`, to whether it is still
//! above zero) runs until the counter reaches zero: `cargo run --example
//! graph_conditional`. Launched twice; exits non-zero on wrong data.
//!
//! Conditional nodes need driver 12.3 (cudrv says so on an older one). On a real GPU the
//! kernel's `cudaGraphSetConditional` comes from the device runtime library
//! (`libcudadevrt.a`), linked in at load time: set `CUDRV_CUDADEVRT` to its path if it is
//! not `/usr/local/cuda/lib64/libcudadevrt.a`.

use cudrv::{ConditionalKind, DeviceBuffer, Graph, LaunchConfig, Stream};

#[path = "common/graph_kernels.rs"]
mod graph_kernels;

const N: usize = 1 << 16;
const ROUNDS: u32 = 10;
/// Launches of the executable graph, queued back to back; the first argument overrides it
/// (the GPU suite passes 1 under compute-sanitizer, where back-to-back launches of a graph
/// with a conditional node fault: docs/driver-facts.md).
const LAUNCHES: usize = 2;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
    let module = graph_kernels::load(&ctx)?;
    let (add, count_down) = (module.function("add_f32")?, module.function("count_down")?);
    let x = DeviceBuffer::from_slice(&ctx, &vec![0.0f32; N])?;
    let counter = DeviceBuffer::from_slice(&ctx, &[0u32])?;

    let graph = Graph::new(&ctx)?;
    let reset = graph.add_memset_node(&[], &counter, ROUNDS)?;
    // The loop is entered with the condition 1, set at each launch.
    let condition = graph.conditional_handle(Some(1))?;
    let (_node, bodies) = graph.add_conditional_node(&[&reset], condition, ConditionalKind::While)?;
    let body = bodies.first().ok_or_else(|| cudrv::InvalidArgument::new("graph_conditional", "no body graph"))?;
    let (one, n) = (1.0f32, N as i32);
    let mut step = body.kernel_params(&add);
    step.arg(&x).arg(&one).arg(&n);
    // SAFETY: add_f32(float* x, float a, int n); `x` is kept alive by the graph.
    let added = unsafe { body.add_kernel_node(&[], &step, LaunchConfig::for_num_elems(N as u32)) }?;
    let mut down = body.kernel_params(&count_down);
    down.arg(&counter).arg(&condition.0);
    // SAFETY: count_down(unsigned* counter, cudaGraphConditionalHandle handle).
    unsafe { body.add_kernel_node(&[&added], &down, LaunchConfig::new((1, 1, 1), (1, 1, 1))) }?;

    let mut exec = graph.instantiate()?;
    let launches = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(LAUNCHES);
    for _ in 0..launches {
        exec.launch(&stream)?;
    }
    stream.synchronize()?;

    let expected = (ROUNDS as usize * launches) as f32;
    let wrong = x.to_vec()?.iter().filter(|v| **v != expected).count();
    let left = counter.to_vec()?.first().copied().unwrap_or(u32::MAX);
    println!("graph_conditional: while loop of {ROUNDS} rounds, {launches} launches, counter {left}, {N} values, {wrong} wrong");
    if wrong != 0 || left != 0 {
        std::process::exit(1);
    }
    Ok(())
}
