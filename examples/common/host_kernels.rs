//! Host implementations of the examples' own kernels, for the stand-in driver: registered
//! in this process and, when `CUDRV_LIBCUDA` names the stand-in library, with that library
//! (`cudrv_standin::register_kernel`); each computes what its PTX kernel computes, one
//! thread at a time. On a real driver registering changes nothing: the PTX kernels run on
//! the GPU.
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

/// `read_texture_2d(cudaTextureObject_t tex, float* out, int width, int height)`
/// (`kernels/array_texture.cu`): `out[y * width + x]` = the texel (x, y), read through the
/// stand-in's texture hook (`Thread::texture_fetch`) as `tex2D<float>(tex, x + 0.5, y +
/// 0.5)` reads it with point filtering.
pub fn register_read_texture_2d() {
    register_kernel("read_texture_2d", &[Param::U64, Param::Ptr, Param::I32, Param::I32], |t| {
        let (tex, out) = (t.param::<u64>(0)?, t.ptr(1)?);
        let (width, height) = (t.param::<i32>(2)?, t.param::<i32>(3)?);
        let x = t.block_idx().x * t.block_dim().x + t.thread_idx().x;
        let y = t.block_idx().y * t.block_dim().y + t.thread_idx().y;
        if i64::from(x) < i64::from(width) && i64::from(y) < i64::from(height) {
            let v = t.texture_fetch::<f32>(tex, [x as f32 + 0.5, y as f32 + 0.5, 0.0])?;
            t.store(out, u64::from(y) * u64::try_from(width).unwrap_or(0) + u64::from(x), v)?;
        }
        Ok(())
    });
}
