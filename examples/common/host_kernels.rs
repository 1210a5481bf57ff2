//! Host implementations of the examples' own kernels, for the stand-in driver: registered
//! in this process and, when `CUDRV_LIBCUDA` names the stand-in library, with that library
//! (`cudrv_standin::register_kernel`). On a real driver registering changes nothing: the
//! PTX kernels run on the GPU.
#![allow(dead_code)]

use cudrv_standin::{register_kernel, Param};

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
