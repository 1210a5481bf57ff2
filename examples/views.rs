//! Views in library functions written once over "device memory of T"
//! (`DeviceSlice`/`DeviceSliceMut`): a split reduction (halve the range, add the upper
//! half onto the lower with a kernel, repeat) and a copy in chunks spread over several
//! streams. Each runs on a plain buffer, a view of one and a pool allocation, and is
//! checked against the host; then memory of no bytes (no driver call, null, every
//! operation a no-op) and the pool's attributes are checked, and the device's free
//! memory printed: `cargo run --example views`. Exits non-zero on a wrong result.

use cudrv::{
    Context, DeviceBuffer, DeviceSlice, DeviceSliceMut, Function, LaunchConfig, MemoryPool, Module, PinnedBuffer,
    Stream, StreamFlags,
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

/// Buffers of no bytes, of every kind: null, and every operation on them `Ok`. Returns
/// the number of checks that failed.
fn zero_lengths(ctx: &Context, stream: &Stream, pool: &MemoryPool) -> cudrv::Result<usize> {
    let mut plain = DeviceBuffer::<f32>::alloc(ctx, 0)?;
    let from_slice = DeviceBuffer::<f32>::from_slice(ctx, &[])?;
    let ordered = DeviceBuffer::<f32>::alloc_async(stream, 0)?;
    let pooled = pool.alloc_async::<f32>(stream, 0)?;
    let pinned = PinnedBuffer::<f32>::zeroed(ctx, 0)?;
    let full = DeviceBuffer::from_slice(ctx, &[1.0f32, 2.0])?;
    let null = [&plain, &from_slice, &ordered, &pooled].iter().all(|b| b.as_raw() == 0) && pinned.as_raw().is_null();
    plain.fill(1.0)?;
    plain.copy_from_host(&[])?;
    plain.copy_from_device(&full.slice(1..1)?)?;
    plain.copy_from_pinned_async(&pinned, stream)?;
    plain.slice_mut(..)?.fill_async(2.0, stream)?;
    full.copy_from_device(&ordered)?;
    full.copy_from_peer_async(&pooled, stream)?;
    stream.synchronize()?;
    let untouched = full.to_vec()? == [1.0, 2.0] && plain.to_vec()?.is_empty();
    let raw = plain.into_raw().ok() == Some(0) && pinned.into_raw().is_ok_and(|p| p.is_null());
    println!("buffers of no bytes: null {null}, copies and fills no-ops {untouched}, into_raw null {raw}");
    Ok(usize::from(!null) + usize::from(!untouched) + usize::from(!raw))
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
    let pool = MemoryPool::new(&ctx, cudrv::ShareableHandleTypes::NONE)?;
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

    failures += zero_lengths(&ctx, &stream, &pool)?;

    // The pool's attributes: a threshold set is read back; the high mark saw the buffer.
    pool.set_release_threshold(32 << 20)?;
    let threshold = pool.release_threshold()?;
    let high = pool.used_high()?;
    drop(pooled);
    stream.synchronize()?;
    pool.trim_to(0)?;
    let used = pool.used_current()?;
    println!("pool: release threshold {threshold}, used high mark {high} bytes, used after the free {used}");
    failures += usize::from(threshold != 32 << 20) + usize::from(high < (n * 4) as u64) + usize::from(used != 0);
    let info = ctx.memory_info()?;
    println!("device memory: {} MiB free of {} MiB", info.free >> 20, info.total >> 20);
    failures += usize::from(info.free > info.total || info.total == 0);
    if failures != 0 {
        println!("views: {failures} checks failed");
        std::process::exit(1);
    }
    println!("views: every result verified, 0 wrong");
    Ok(())
}
