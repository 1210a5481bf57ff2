//! SAXPY (`y = a * x + y`) in four chunks on four streams: pinned host buffers,
//! asynchronous copies, allocations from a memory pool ordered on each stream, and events
//! timing each stream: `cargo run --example saxpy_streams`. Exits non-zero on a wrong result.

use cudrv::{LaunchConfig, MemoryPool, Module, PinnedBuffer, Stream};

const PTX: &str = include_str!("kernels/saxpy.ptx");
const STREAMS: usize = 4;
const CHUNK: usize = 1 << 18;
const A: f32 = 2.0;

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let saxpy = Module::from_ptx(&ctx, PTX)?.function("saxpy")?;
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE)?;
    let x: Vec<f32> = (0..STREAMS * CHUNK).map(|i| i as f32).collect();
    let n = CHUNK as i32;

    let mut chunks = Vec::new();
    for xs in x.chunks(CHUNK) {
        let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
        let (hx, mut hy) = (PinnedBuffer::from_slice(&ctx, xs)?, PinnedBuffer::from_slice(&ctx, &vec![1.0f32; CHUNK])?);
        let start = stream.record_event(0)?;
        // Allocated and freed in stream order: both are given back on `stream` when dropped.
        let (dx, dy) = (pool.alloc_async::<f32>(&stream, CHUNK)?, pool.alloc_async::<f32>(&stream, CHUNK)?);
        dx.copy_from_pinned_async(&hx, &stream)?;
        dy.copy_from_pinned_async(&hy, &stream)?;
        let mut launch = saxpy.builder(&stream);
        launch.arg(&A).arg(&dx).arg(&dy).arg(&n);
        // SAFETY: the arguments match saxpy(float, const float*, float*, int).
        unsafe { launch.launch(LaunchConfig::for_num_elems(CHUNK as u32)) }?;
        dy.copy_to_pinned_async(&mut hy, &stream)?;
        let stop = stream.record_event(0)?;
        chunks.push((hx, hy, start, stop, stream));
    }

    let (mut wrong, mut total) = (0, 0f32);
    for (k, (_, hy, start, stop, _)) in chunks.iter().enumerate() {
        stop.synchronize()?;
        let y = hy.as_slice()?;
        wrong += y.iter().enumerate().filter(|&(i, &v)| v != A * (k * CHUNK + i) as f32 + 1.0).count();
        println!("stream {k}: {} values in {:.3} ms", y.len(), start.elapsed_ms(stop)?);
        total = total.max(chunks[0].2.elapsed_ms(stop)?);
    }
    println!("all streams: {total:.3} ms");
    println!("saxpy over {STREAMS} streams: {} values, {wrong} wrong", x.len());
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
