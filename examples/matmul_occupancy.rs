//! Matrix multiply sized by the occupancy API: the block size comes from
//! `Function::max_potential_block_size` (the driver's occupancy calculator,
//! `cuOccupancyMaxPotentialBlockSize`), checked against
//! `max_active_blocks_per_multiprocessor`; the product is verified against the CPU's:
//! `cargo run --example matmul_occupancy`. Exits non-zero on a wrong result.

#[path = "common/host_kernels.rs"]
mod host_kernels;

use cudrv::{DeviceBuffer, JitOptions, LaunchConfig, Module, OccupancyFlags, Stream};

const N: usize = 96;

fn main() -> Result<(), cudrv::Error> {
    host_kernels::register();
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;
    let options = JitOptions::new().error_log(4096);
    let module = Module::from_ptx_with(&ctx, include_str!("kernels/execution.ptx"), &options)?.value;
    let f = module.function("matmul_f32")?;

    let best = f.max_potential_block_size(0, 0, OccupancyFlags::DEFAULT)?;
    let per_sm = f.max_active_blocks_per_multiprocessor(best.block_size, 0, OccupancyFlags::DEFAULT)?;
    println!(
        "matmul_occupancy: block size {} (min grid {} for full occupancy), {per_sm} blocks of it per multiprocessor",
        best.block_size, best.min_grid_size
    );
    if best.block_size == 0 || per_sm == 0 {
        eprintln!("matmul_occupancy: the occupancy API gave no usable block size");
        std::process::exit(1);
    }

    // Small integers: every product and sum is exact in f32, whatever the order.
    let a: Vec<f32> = (0..N * N).map(|i| ((i * 7) % 5) as f32).collect();
    let b: Vec<f32> = (0..N * N).map(|i| ((i * 3) % 4) as f32).collect();
    let (da, db) = (DeviceBuffer::from_slice(&ctx, &a)?, DeviceBuffer::from_slice(&ctx, &b)?);
    let dc = DeviceBuffer::<f32>::alloc(&ctx, N * N)?;
    let elems = (N * N) as u32;
    let grid = elems.div_ceil(best.block_size);
    let n = N as i32;
    let mut launch = f.builder(&stream);
    launch.arg(&da).arg(&db).arg(&dc).arg(&n);
    // SAFETY: the arguments match matmul_f32(const float*, const float*, float*, int).
    unsafe { launch.launch(LaunchConfig::new((grid, 1, 1), (best.block_size, 1, 1))) }?;
    stream.synchronize()?;
    let c = dc.to_vec()?;

    let mut wrong = 0;
    for row in 0..N {
        for col in 0..N {
            let want: f32 = (0..N).map(|k| a[row * N + k] * b[k * N + col]).sum();
            if c[row * N + col] != want {
                wrong += 1;
            }
        }
    }
    println!("matmul_occupancy: {N}x{N} product in {grid} blocks of {} threads, {wrong} wrong", best.block_size);
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
