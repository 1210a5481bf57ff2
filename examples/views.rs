//! Views in library functions written once over "device memory of T"
//! (`DeviceSlice`/`DeviceSliceMut`): a split reduction (halve the range, add the upper
//! half onto the lower with a kernel, repeat) and a copy in chunks spread over several
//! streams. Each runs on a plain buffer, a view of one and a pool allocation, and is
//! checked against the host: `cargo run --example views`. Exits non-zero on a wrong result.

use cudrv::{
    DeviceBuffer, DeviceSlice, DeviceSliceMut, Function, LaunchConfig, MemoryPool, Module, Stream, StreamFlags,
};

/// The sum of `mem`'s values, computed in place (the values are overwritten): while more
/// than one value is left, the upper half is added onto the lower half by
/// `vector_add(a, b, c, n)` (c[i] = a[i] + b[i]) on views of `mem`. Any device memory of
/// `f32` will do: a buffer, a view, a pool allocation, an imported buffer's view.
fn reduce_sum(mem: &mut impl DeviceSliceMut<f32>, add: &Function, stream: &Stream) -> cudrv::Result<f32> {
    let mut len = mem.len();
    while len > 1 {
        let half = len / 2;
        let keep = len - half;
        let mut live = mem.slice_mut(..len)?;
        let (mut lower, upper) = live.split_at_mut(keep)?;
        let lower = lower.slice_mut(..half)?;
        let n = half as u32;
        let mut launch = add.builder(stream);
        launch.arg(&lower).arg(&upper).arg(&lower).arg(&n);
        // SAFETY: the arguments match vector_add(const float*, const float*, float*, int):
        // `lower` and `upper` are `half` values each and do not overlap (each thread reads
        // and writes its own index of `lower`); `mem` outlives the synchronize below.
        unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
        len = keep;
    }
    stream.synchronize()?;
    let mut first = [0.0f32];
    if !mem.is_empty() {
        mem.copy_to_host(&mut first)?;
    }
    Ok(first[0])
}

/// Copies `src` into the start of `dst` in chunks of `chunk` values, chunk `i` on stream
/// `i % streams.len()`, and waits for all of them.
fn copy_in_chunks<T: cudrv::DeviceRepr>(
    dst: &mut impl DeviceSliceMut<T>,
    src: &impl DeviceSlice<T>,
    chunk: usize,
    streams: &[Stream],
) -> cudrv::Result<()> {
    let mut dst = dst.slice_mut(..src.len())?;
    for (i, (mut to, from)) in dst.chunks_mut(chunk)?.zip(src.chunks(chunk)?).enumerate() {
        to.copy_from_device_async(&from, &streams[i % streams.len()])?;
    }
    for stream in streams {
        stream.synchronize()?;
    }
    Ok(())
}

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?;
    let add = Module::from_ptx(&ctx, include_str!("kernels/vector_add.ptx"))?.function("vector_add")?;
    let n = 1 << 20;
    // Small integers: every partial sum is exact in f32.
    let values: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let sum_of = |range: std::ops::Range<usize>| values[range].iter().map(|&v| v as f64).sum::<f64>() as f32;
    let check = |what: &str, got: f32, want: f32| {
        println!("{what}: {got} (expected {want})");
        usize::from(got != want)
    };
    let mut failures = 0;

    // A plain buffer, whole.
    let mut whole = DeviceBuffer::from_slice(&ctx, &values)?;
    failures += check("split reduction of a buffer", reduce_sum(&mut whole, &add, &stream)?, sum_of(0..n));

    // A view of a buffer: only its range is reduced, the rest is left as it was.
    let mut buf = DeviceBuffer::from_slice(&ctx, &values)?;
    let (start, end) = (1000, 5001);
    failures += check(
        "split reduction of a view",
        reduce_sum(&mut buf.slice_mut(start..end)?, &add, &stream)?,
        sum_of(start..end),
    );
    let outside_intact =
        buf.slice(..start)?.to_vec()? == values[..start] && buf.slice(end..)?.to_vec()? == values[end..];
    failures += check("values outside the view left as they were", f32::from(u8::from(outside_intact)), 1.0);

    // A pool allocation, filled by a chunked copy over four streams.
    let pool = MemoryPool::new(&ctx, false)?;
    let mut pooled = pool.alloc_async::<f32>(&stream, n)?;
    stream.synchronize()?;
    let streams = (0..4).map(|_| Stream::new(&ctx, StreamFlags::NON_BLOCKING)).collect::<Result<Vec<_>, _>>()?;
    let source = DeviceBuffer::from_slice(&ctx, &values)?;
    copy_in_chunks(&mut pooled, &source, 100_000, &streams)?;
    let copied = pooled.to_vec()?;
    let wrong = copied.iter().zip(&values).filter(|(a, b)| a != b).count();
    println!("chunked copy over {} streams: {} values, {wrong} wrong", streams.len(), copied.len());
    failures += usize::from(wrong != 0);
    failures += check("split reduction of a pool allocation", reduce_sum(&mut pooled, &add, &stream)?, sum_of(0..n));

    let info = ctx.memory_info()?;
    println!(
        "device memory: {} MiB free of {} MiB; the pool's high mark: {} bytes",
        info.free >> 20,
        info.total >> 20,
        pool.used_high()?
    );
    if failures != 0 {
        println!("views: {failures} checks failed");
        std::process::exit(1);
    }
    println!("views: every result verified, 0 wrong");
    Ok(())
}
