//! Captures a kernel launch (`scale_f32`) into a graph, adds a host node that counts the
//! runs, instantiates it and replays it 100 times: `cargo run --example graph_replay`.
//! Exits non-zero on a wrong count or wrong data.
//!
//! A driver that cannot capture (answering CUDA_ERROR_NOT_SUPPORTED) gets a graph of the
//! host node alone, and each replay launches the kernel before the graph; the program says
//! which it did. The stand-in captures, as a real driver does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudrv::sys::CUresult;
use cudrv::{DeviceBuffer, Graph, LaunchConfig, Module, Stream};

const PTX: &str = include_str!("kernels/scale_f32.ptx");
const N: usize = 1 << 16;
const REPLAYS: usize = 100;
const S: f32 = 1.0625;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
    let scale = Module::from_ptx(&ctx, PTX)?.function("scale_f32")?;
    let x0: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 - 500.0).collect();
    let x = DeviceBuffer::from_slice(&ctx, &x0)?;
    let n = N as i32;
    let mut launch = scale.builder(&stream);
    launch.arg(&x).arg(&S).arg(&n);
    // SAFETY (both launches below): the arguments match scale_f32(float*, float, int).
    let mut scale_x = || unsafe { launch.launch(LaunchConfig::for_num_elems(N as u32)) };

    // SAFETY: the captured launch uses `x`, which outlives the graph and its replays.
    let (graph, captured) = match unsafe { stream.begin_capture() } {
        Ok(()) => {
            let launched = scale_x();
            let graph = stream.end_capture()?;
            launched?;
            (graph, true)
        }
        Err(e) if e.code() == Some(CUresult::CUDA_ERROR_NOT_SUPPORTED) => {
            println!("no stream capture ({e}): the graph holds the host node, the kernel is launched on its own");
            (Graph::new(&ctx)?, false)
        }
        Err(e) => return Err(e),
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    graph.add_host_node(&[], move || {
        counter.fetch_add(1, Ordering::Relaxed);
    })?;
    let mut exec = graph.instantiate()?;
    for _ in 0..REPLAYS {
        if !captured {
            scale_x()?;
        }
        exec.launch(&stream)?;
    }
    stream.synchronize()?;

    let expected: Vec<f32> = x0.iter().map(|&v| (0..REPLAYS).fold(v, |v, _| v * S)).collect();
    let wrong = x.to_vec()?.iter().zip(&expected).filter(|(a, b)| a != b).count();
    let runs = runs.load(Ordering::Relaxed);
    let path = if captured { "captured kernel node" } else { "kernel launched beside the graph" };
    println!("graph replayed {REPLAYS} times ({path}): host node ran {runs} times, {N} values, {wrong} wrong");
    if wrong != 0 || runs != REPLAYS {
        std::process::exit(1);
    }
    Ok(())
}
