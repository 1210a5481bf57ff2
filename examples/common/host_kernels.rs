//! Host implementations of the kernels in `examples/kernels/execution.ptx`, for the
//! stand-in driver (`cudrv-standin`), which runs a PTX module's kernels as registered host
//! functions: each computes what the PTX kernel computes, one thread at a time. On a real
//! driver (when `CUDRV_LIBCUDA` names no stand-in library) registering them changes
//! nothing: the GPU runs the PTX.
#![allow(dead_code)]

use cudrv_standin::{register_kernel, Param, Thread};

/// Registers every kernel of `execution.ptx` (a module is loaded only when all of its
/// kernels have host implementations).
pub fn register() {
    register_reverse_block();
    register_matmul();
}

/// Registers `reverse_block(const float* in, float* out, int n)`: each block reverses its
/// `n` values (the GPU kernel goes through dynamic shared memory).
pub fn register_reverse_block() {
    register_kernel("reverse_block", &[Param::Ptr, Param::Ptr, Param::I32], |t: &Thread<'_>| {
        let (input, out, n) = (t.ptr(0)?, t.ptr(1)?, t.param::<i32>(2)?);
        let n = u64::try_from(n).unwrap_or(0);
        let base = u64::from(t.block_idx().x) * n;
        let step = u64::from(t.block_dim().x.max(1));
        let mut i = u64::from(t.thread_idx().x);
        while i < n {
            t.store(out, base + i, t.load::<f32>(input, base + n - 1 - i)?)?;
            i += step;
        }
        Ok(())
    });
}

/// Registers `matmul_f32(const float* a, const float* b, float* c, int n)`: one thread per
/// element of `c = a * b` (row-major, n x n).
pub fn register_matmul() {
    register_kernel("matmul_f32", &[Param::Ptr, Param::Ptr, Param::Ptr, Param::I32], |t: &Thread<'_>| {
        let (a, b, c, n) = (t.ptr(0)?, t.ptr(1)?, t.ptr(2)?, t.param::<i32>(3)?);
        let n = u64::try_from(n).unwrap_or(0);
        let idx = t.global_x();
        if idx < n * n {
            let (row, col) = (idx / n, idx % n);
            let mut sum = 0.0f32;
            for k in 0..n {
                sum += t.load::<f32>(a, row * n + k)? * t.load::<f32>(b, k * n + col)?;
            }
            t.store(c, idx, sum)?;
        }
        Ok(())
    });
}
