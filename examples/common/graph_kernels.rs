//! The kernels of `graph_explicit` and `graph_conditional`
//! (`examples/kernels/graph_kernels.ptx`, compiled from `graph_kernels.cu`).

use cudrv::sys::CUjitInputType;
use cudrv::{Linker, Module};

const PTX: &str = include_str!("../kernels/graph_kernels.ptx");

/// Loads the example kernels: directly, or (a real driver, whose PTX JIT leaves
/// `cudaGraphSetConditional` unresolved) linked with the device runtime library named by
/// `CUDRV_CUDADEVRT` (default `/usr/local/cuda/lib64/libcudadevrt.a`).
pub fn load(ctx: &cudrv::Context) -> Result<Module, cudrv::Error> {
    match Module::from_ptx(ctx, PTX) {
        Ok(m) => Ok(m),
        Err(first) => {
            let lib =
                std::env::var("CUDRV_CUDADEVRT").unwrap_or_else(|_| "/usr/local/cuda/lib64/libcudadevrt.a".into());
            if !std::path::Path::new(&lib).exists() {
                println!("the kernels need the device runtime library: set CUDRV_CUDADEVRT (not found: {lib})");
                return Err(first);
            }
            let archive =
                std::fs::read(&lib).map_err(|e| cudrv::InvalidArgument::new("load", format!("{lib}: {e}")))?;
            let mut linker = Linker::new(ctx)?;
            linker.add_ptx(PTX, "graph_kernels.ptx")?;
            // SAFETY: a complete archive, read from its file.
            unsafe { linker.add_data(CUjitInputType::CU_JIT_INPUT_LIBRARY, &archive, "libcudadevrt.a") }?;
            let image = linker.complete()?;
            // SAFETY: a complete image the linker made.
            Ok(unsafe { Module::load_data(ctx, &image) }?)
        }
    }
}
