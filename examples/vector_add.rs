//! Adds two vectors on the GPU with a kernel loaded from PTX, through a module and through
//! a context-independent library: `cargo run --example vector_add`. Exits non-zero on a
//! wrong result.

use cudrv::{DeviceBuffer, LaunchConfig, Library, Module, Stream};

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;
    let n = 1 << 20;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let (da, db) = (DeviceBuffer::from_slice(&ctx, &a)?, DeviceBuffer::from_slice(&ctx, &b)?);
    let dc = DeviceBuffer::<f32>::alloc(&ctx, n)?;
    let n = n as u32;

    let ptx = include_str!("kernels/vector_add.ptx");
    let (module, library) = (Module::from_ptx(&ctx, ptx)?, Library::from_ptx(driver, ptx)?);
    for (path, kernel) in [
        ("module", module.function("vector_add")?.builder(&stream)),
        ("library", library.kernel("vector_add")?.builder(&stream)),
    ] {
        dc.fill(0.0)?;
        let mut launch = kernel;
        launch.arg(&da).arg(&db).arg(&dc).arg(&n);
        // SAFETY: the arguments match vector_add(const float*, const float*, float*, int).
        unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
        stream.synchronize()?;
        let c = dc.to_vec()?;
        let wrong = c.iter().enumerate().filter(|&(i, &v)| v != 3.0 * i as f32).count();
        println!("vector_add through a {path}: {} values, {wrong} wrong", c.len());
        if wrong != 0 {
            std::process::exit(1);
        }
    }
    Ok(())
}
