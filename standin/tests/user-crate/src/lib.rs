//! A user's library: adds vectors on the GPU with cudrv's safe layer.

use cudrv::{DeviceBuffer, Error, InvalidArgument, LaunchConfig, Module, Stream};

/// The `vector_add` kernel: `c[i] = a[i] + b[i]` for `i < n`.
const VECTOR_ADD: &str = include_str!("vector_add.ptx");

/// `a[i] + b[i]` for every `i`, computed on device 0 of cudrv's process-wide driver.
pub fn add(a: &[f32], b: &[f32]) -> Result<Vec<f32>, Error> {
    if a.len() != b.len() {
        return Err(InvalidArgument::new("b", format!("{} values for {} in a", b.len(), a.len())).into());
    }
    let n = u32::try_from(a.len()).map_err(|_| InvalidArgument::new("a", "more than u32::MAX values"))?;
    let ctx = cudrv::init()?.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0)?;
    let module = Module::from_ptx(&ctx, VECTOR_ADD)?;
    let (da, db) = (DeviceBuffer::from_slice(&ctx, a)?, DeviceBuffer::from_slice(&ctx, b)?);
    let dc = DeviceBuffer::<f32>::alloc(&ctx, a.len())?;
    let kernel = module.function("vector_add")?;
    let mut launch = kernel.builder(&stream);
    launch.arg(&da).arg(&db).arg(&dc).arg(&n);
    // SAFETY: the arguments match vector_add(const float*, const float*, float*, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
    stream.synchronize()?;
    dc.to_vec()
}
