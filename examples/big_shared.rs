//! A kernel that uses more than 48 KiB of dynamic shared memory: `reverse_block` reverses
//! each block's 16384 floats (64 KiB) through shared memory. A launch asking for more than
//! 48 KiB fails until the function opts in (`Function::set_max_dynamic_shared_size_bytes`,
//! `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): this program shows the refusal, opts
//! in, launches and checks every value: `cargo run --example big_shared`. Exits non-zero on
//! a wrong result.

#[path = "common/host_kernels.rs"]
mod host_kernels;

use cudrv::{DeviceBuffer, FunctionAttribute, JitOptions, LaunchConfig, Module, Stream};

const PER_BLOCK: usize = 16384; // floats: 64 KiB of shared memory per block
const BLOCKS: usize = 8;

fn main() -> Result<(), cudrv::Error> {
    host_kernels::register();
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;
    let options = JitOptions::new().error_log(4096);
    let module = Module::from_ptx_with(&ctx, include_str!("kernels/execution.ptx"), &options)?.value;
    let f = module.function("reverse_block")?;

    let n = PER_BLOCK * BLOCKS;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let d_in = DeviceBuffer::from_slice(&ctx, &input)?;
    let d_out = DeviceBuffer::<f32>::alloc(&ctx, n)?;
    let bytes = (PER_BLOCK * 4) as u32;
    let config = LaunchConfig::new((BLOCKS as u32, 1, 1), (256, 1, 1)).shared_mem(bytes);
    let per_block = PER_BLOCK as i32;

    let before = f.attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)?;
    let mut launch = f.builder(&stream);
    launch.arg(&d_in).arg(&d_out).arg(&per_block);
    // SAFETY: the arguments match reverse_block(const float*, float*, int).
    let refused = unsafe { launch.launch(config) };
    println!(
        "big_shared: max dynamic shared memory {before} bytes; a {bytes}-byte launch: {}",
        match &refused {
            Ok(()) => "accepted".to_string(),
            Err(e) => format!("refused ({e})"),
        }
    );
    if refused.is_ok() {
        stream.synchronize()?;
        eprintln!("big_shared: a launch above the function's limit was accepted");
        std::process::exit(1);
    }

    f.set_max_dynamic_shared_size_bytes(bytes as usize)?;
    let after = f.attribute(FunctionAttribute::MaxDynamicSharedSizeBytes)?;
    let mut launch = f.builder(&stream);
    launch.arg(&d_in).arg(&d_out).arg(&per_block);
    // SAFETY: as above.
    unsafe { launch.launch(config) }?;
    stream.synchronize()?;
    let out = d_out.to_vec()?;
    let wrong = (0..n)
        .filter(|&i| {
            let (block, j) = (i / PER_BLOCK, i % PER_BLOCK);
            out[i] != input[block * PER_BLOCK + PER_BLOCK - 1 - j]
        })
        .count();
    println!("big_shared: opted in to {after} bytes; {BLOCKS} blocks of {bytes} bytes of shared memory, {n} values, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
