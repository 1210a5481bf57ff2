//! Views in a small library function: `sum` adds up any device memory of `f32` (a buffer,
//! a view of one, managed memory: anything that is `DeviceSlice<f32>`) by splitting it
//! into views of at most `CHUNK` values, launching a reduction kernel per chunk, each into
//! its own slot (a one-value view) of a buffer of partial sums, and adding those on the
//! host. Every sum is checked against the host's: `cargo run --example split_reduction`.
//! Exits non-zero on a wrong result.
//!
//! The kernel (`kernels/sum_f32.cu`, compiled by NVRTC) runs on a GPU; on the stand-in a
//! host implementation of it is registered (and used unless the stand-in runs the PTX).

use cudrv::{
    Context, DeviceBuffer, DeviceSlice, DeviceSliceMut, LaunchConfig, ManagedAttach, ManagedBuffer, Module, Stream,
    StreamFlags,
};

const PTX: &str = include_str!("kernels/sum_f32.ptx");
/// The most values one launch adds up.
const CHUNK: usize = 1 << 18;
/// Threads per block: the kernel's shared array holds one value per thread.
const BLOCK: u32 = 256;

/// The sum of `data`'s values, computed on `stream` in chunks (views of `data`), each
/// reduced by one launch of `sum_f32` into its own slot of a buffer of partial sums.
/// Written once for every kind of device memory of `f32`.
fn sum(ctx: &Context, stream: &Stream, data: &impl DeviceSlice<f32>) -> cudrv::Result<f32> {
    // A library would load its module once per context; an example loads it per call.
    let kernel = Module::from_ptx(ctx, PTX)?.function("sum_f32")?;
    let chunks = data.len().div_ceil(CHUNK);
    let mut partials = DeviceBuffer::<f32>::alloc_async(stream, chunks)?;
    partials.fill_async(0.0, stream)?;
    for (i, chunk) in data.chunks(CHUNK)?.enumerate() {
        let slot = partials.slice_mut(i..=i)?;
        let n = chunk.len() as i32;
        let blocks = (chunk.len() as u32).div_ceil(BLOCK).min(1024);
        let mut launch = kernel.builder(stream);
        launch.arg(&chunk).arg(&n).arg(&slot);
        // SAFETY: sum_f32(const float* x, int n, float* out) with `n` values at `chunk` and
        // one at `slot`, in blocks of BLOCK threads (its shared array's size); both views'
        // memory outlives the launch (their uses are recorded on the stream).
        unsafe { launch.launch(LaunchConfig::new((blocks, 1, 1), (BLOCK, 1, 1))) }?;
    }
    // A synchronous copy waits for the stream the partial sums were made on.
    Ok(partials.to_vec()?.iter().sum::<f32>() + 0.0)
}

/// The stand-in's version of `sum_f32`: each thread adds its grid-stride share to `*out`
/// (the stand-in runs a launch's threads one after the other).
fn register_host_kernel() {
    use cudrv_standin::{register_kernel, Param};
    register_kernel("sum_f32", &[Param::Ptr, Param::I32, Param::Ptr], |t| {
        let (x, n, out) = (t.ptr(0)?, t.param::<i32>(1)?, t.ptr(2)?);
        let stride = u64::from(t.grid_dim().x) * u64::from(t.block_dim().x);
        let (mut i, mut acc) = (t.global_x(), 0.0f32);
        while i < u64::try_from(n).unwrap_or(0) {
            acc += t.load::<f32>(x, i)?;
            i += stride;
        }
        t.store::<f32>(out, 0, t.load::<f32>(out, 0)? + acc)
    });
}

fn main() -> Result<(), cudrv::Error> {
    register_host_kernel();
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let n = 3 * CHUNK + 12_345;
    // Small integers: every partial sum is exact in f32, whatever the order of the adds.
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let host_sum = |range: std::ops::Range<usize>| values[range].iter().map(|&v| f64::from(v)).sum::<f64>() as f32;
    let mut failures = 0;
    let mut check = |what: &str, got: f32, want: f32| {
        println!("{what}: {got} (expected {want})");
        failures += usize::from(got != want);
    };

    let buf = DeviceBuffer::from_slice(&ctx, &values)?;
    check("sum of a buffer", sum(&ctx, &stream, &buf)?, host_sum(0..n));
    let (start, end) = (1000, 2 * CHUNK + 77);
    check("sum of a view", sum(&ctx, &stream, &buf.slice(start..end)?)?, host_sum(start..end));
    let (head, tail) = buf.split_at(CHUNK + 5)?;
    check("sum of the head of a split", sum(&ctx, &stream, &head)?, host_sum(0..CHUNK + 5));
    check("sum of the tail of a split", sum(&ctx, &stream, &tail)?, host_sum(CHUNK + 5..n));
    let managed = ManagedBuffer::from_slice(&ctx, &values, ManagedAttach::Global)?;
    check("sum of managed memory", sum(&ctx, &stream, &managed)?, host_sum(0..n));
    check("sum of no values", sum(&ctx, &stream, &buf.slice(5..5)?)?, 0.0);

    if failures != 0 {
        println!("split_reduction: {failures} sums wrong");
        std::process::exit(1);
    }
    println!("split_reduction: every sum verified, 0 wrong");
    Ok(())
}
