//! Virtual memory management: reserve an address range once, map physical chunks into it
//! as a buffer grows (as allocators with expandable segments do), give the device access,
//! and use the memory like any device memory; then the same with the parts by hand
//! (reserve, create, map, set access) and a second mapping of exported-and-imported memory.
//! Every result is checked against the host: `cargo run --example virtual_memory`. Exits
//! non-zero on a wrong result.
//!
//! Copies and launches stay within one chunk each: a copy that crosses from one mapping
//! into the next is fine on a GPU, but the stand-in keeps each mapping apart.

use cudrv::{
    Access, AddressRange, DeviceSlice, DeviceSliceMut, GrowableBuffer, LaunchConfig, Mapping, Module, PhysicalMemory,
    ShareableHandleTypes, Stream,
};

const PTX: &str = include_str!("kernels/scale_f32.ptx");

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0u32)?;
    let scale = Module::from_ptx(&ctx, PTX)?.function("scale_f32")?;
    let granularity = PhysicalMemory::granularity(&ctx.device(), ShareableHandleTypes::NONE, true)?;
    println!("recommended granularity: {granularity} bytes");

    // A buffer of up to 4 chunks, grown one chunk at a time.
    let per_chunk = granularity / size_of::<f32>();
    let mut buf = GrowableBuffer::<f32>::new(&ctx, 4 * per_chunk)?;
    let start = buf.range().as_raw();
    let mut wrong = 0usize;
    for chunk in 0..4 {
        buf.grow((chunk + 1) * per_chunk)?;
        assert_eq!(buf.as_raw(), start, "a growable buffer never moves");
        let values: Vec<f32> = (0..per_chunk).map(|i| (chunk * per_chunk + i) as f32).collect();
        let mut part = buf.slice_mut(chunk * per_chunk..)?;
        part.copy_from_host(&values)?;
        let (n, factor) = (per_chunk as u32, 2.0f32);
        let mut launch = scale.builder(&stream);
        launch.arg(&part).arg(&factor).arg(&n);
        // SAFETY: scale_f32(float* x, float s, int n) over `n` values of `part`, which
        // outlives the synchronize below.
        unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
        stream.synchronize()?;
    }
    for chunk in 0..4 {
        let got = buf.slice(chunk * per_chunk..(chunk + 1) * per_chunk)?.to_vec()?;
        wrong += got.iter().enumerate().filter(|&(i, &v)| v != 2.0 * (chunk * per_chunk + i) as f32).count();
    }
    println!("grew to {} values in {} chunks at {start:#x}, {wrong} wrong", buf.len(), buf.mappings().len());

    // By hand: memory exportable as a file descriptor, mapped twice (once through its
    // import), read-write for the device in one range and read-only in the other.
    let memory = PhysicalMemory::new(&ctx.device(), granularity, ShareableHandleTypes::POSIX_FD)?;
    let (a, b) = (AddressRange::reserve(&ctx, granularity, 0)?, AddressRange::reserve(&ctx, granularity, 0)?);
    let fd = memory.export_fd()?;
    let imported = PhysicalMemory::import_fd(&ctx.device(), &fd, granularity)?;
    let mut writer = Mapping::map(&a, 0, &memory)?;
    let reader = Mapping::map(&b, 0, &imported)?;
    writer.set_access(&[(&ctx.device(), Access::ReadWrite)])?;
    reader.set_access(&[(&ctx.device(), Access::Read)])?;
    let bytes: Vec<u8> = (0..granularity).map(|i| (i % 253) as u8).collect();
    writer.copy_from_host(&bytes)?;
    let shared_wrong = reader.to_vec()?.iter().zip(&bytes).filter(|(x, y)| x != y).count();
    println!("memory shared through a file descriptor: {granularity} bytes, {shared_wrong} wrong");
    // Drops: each mapping is unmapped first, then its memory released and its range freed.
    drop((writer, reader, memory, imported, a, b, fd, buf));
    let total = wrong + shared_wrong;
    println!("virtual_memory: every result verified, {total} wrong");
    if total != 0 {
        std::process::exit(1);
    }
    Ok(())
}
