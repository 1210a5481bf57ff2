//! The kernels of `graph_explicit` and `graph_conditional`
//! (`examples/kernels/graph_kernels.ptx`, compiled from `graph_kernels.cu`).

use cudrv::sys::CUjitInputType;
use cudrv::{Linker, Module};
use cudrv_standin::{register_kernel, Param, Thread};

const PTX: &str = include_str!("../kernels/graph_kernels.ptx");

/// Loads the example kernels. `count_down` calls `cudaGraphSetConditional`, which lives in
/// the device runtime library: where that library is found (`CUDRV_CUDADEVRT`, default
/// `/usr/local/cuda/lib64/libcudadevrt.a`) the PTX is linked with it; otherwise it is
/// loaded directly (the stand-in runs registered host kernels; driver 580's JIT resolves
/// the call itself, but the kernel it makes faults under compute-sanitizer, see
/// docs/driver-facts.md).
pub fn load(ctx: &cudrv::Context) -> Result<Module, cudrv::Error> {
    register();
    let lib = std::env::var("CUDRV_CUDADEVRT").unwrap_or_else(|_| "/usr/local/cuda/lib64/libcudadevrt.a".into());
    if !std::path::Path::new(&lib).exists() {
        return Module::from_ptx(ctx, PTX);
    }
    let archive = std::fs::read(&lib).map_err(|e| cudrv::InvalidArgument::new("load", format!("{lib}: {e}")))?;
    let mut linker = Linker::new(ctx)?;
    linker.add_ptx(PTX, "graph_kernels.ptx")?;
    // SAFETY: a complete archive, read from its file.
    unsafe { linker.add_data(CUjitInputType::CU_JIT_INPUT_LIBRARY, &archive, "libcudadevrt.a") }?;
    let image = linker.complete()?;
    // SAFETY: a complete image the linker made.
    unsafe { Module::load_data(ctx, &image) }
}

/// Registers both kernels as host kernels for the stand-in, whose PTX executor cannot run
/// `count_down` (its `cudaGraphSetConditional` is a call into the device runtime library);
/// a module loads there when every kernel it has is registered. On a real driver this
/// changes nothing.
pub fn register() {
    register_kernel("add_f32", &[Param::Ptr, Param::F32, Param::I32], |t: &Thread<'_>| {
        let (x, a, n) = (t.ptr(0)?, t.param::<f32>(1)?, t.param::<i32>(2)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store(x, i, t.load::<f32>(x, i)? + a)?;
        }
        Ok(())
    });
    // One thread counts down and sets the condition to whether the count is still above 0.
    register_kernel("count_down", &[Param::Ptr, Param::U64], |t: &Thread<'_>| {
        let (counter, handle) = (t.ptr(0)?, t.param::<u64>(1)?);
        if t.global_x() == 0 {
            let left = t.load::<u32>(counter, 0)?.saturating_sub(1);
            t.store(counter, 0, left)?;
            t.set_conditional(handle, u32::from(left > 0))?;
        }
        Ok(())
    });
}
