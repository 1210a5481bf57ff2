//! Arrays and a texture object (NVIDIA's simpleTextureDrv, the cudrv way): fill a 2D
//! `f32` array from a pitched buffer with a 2D copy, create a texture object over it
//! (point filtering, unnormalised coordinates), run a kernel that reads every texel with
//! `tex2D` and writes it to linear memory, and check it against the host; then a 3D copy
//! round trip (host -> 3D array -> device memory -> host) and the descriptors read back:
//! `cargo run --example array_texture`. Exits non-zero on a wrong result.
//!
//! The kernel is `kernels/array_texture.cu` compiled to PTX; on the stand-in driver it
//! runs as a host kernel registered by `common/host_kernels.rs`.

#[path = "common/host_kernels.rs"]
mod host_kernels;

use cudrv::{
    Array, ArrayDescriptor, ArrayFormat, Copy2D, Copy3D, DeviceBuffer, LaunchConfig, Module, PitchedBuffer,
    ResourceDesc, Stream, TextureDesc, TextureObject, TextureResource,
};

const PTX: &str = include_str!("kernels/array_texture.ptx");

fn main() -> Result<(), cudrv::Error> {
    host_kernels::register_read_texture_2d();
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, 0u32)?;
    let mut wrong = 0usize;

    // An image in a pitched buffer, copied into a 2D array.
    let (w, h) = (509usize, 123usize);
    let image: Vec<f32> = (0..w * h).map(|i| ((i % w) as f32 * 0.25 - (i / w) as f32).sin()).collect();
    let pitched = PitchedBuffer::from_rows(&ctx, w, &image)?;
    println!("pitched buffer: {w} x {h} f32, pitch {} bytes", pitched.pitch());
    let array = Array::new(&ctx, ArrayDescriptor::d2(w, h, ArrayFormat::F32, 1))?;
    Copy2D::new(w, h).src_pitched(&pitched).dst_array(&array).run_async(&stream)?;

    // A texture object over it; a kernel reads every texel.
    let tex = TextureObject::new(&TextureResource::array(&array), &TextureDesc::default())?;
    let (res, got) = (tex.resource_desc()?, tex.texture_desc()?);
    let made = TextureDesc::default();
    println!("texture object {:#x}: {res:?}, {got:?}", tex.as_raw());
    let same = got.address_mode[..2] == made.address_mode[..2]
        && got.filter_mode == made.filter_mode
        && got.normalized_coords == made.normalized_coords;
    if res != ResourceDesc::Array(array.as_raw()) || !same {
        println!("the texture's descriptors did not read back as made");
        wrong += 1;
    }
    let out = DeviceBuffer::<f32>::alloc(&ctx, w * h)?;
    let module = Module::from_ptx(&ctx, PTX)?;
    let read = module.function("read_texture_2d")?;
    let (wi, hi) = (w as i32, h as i32);
    let block = (16u32, 16u32, 1u32);
    let grid = ((w as u32).div_ceil(block.0), (h as u32).div_ceil(block.1), 1);
    let mut launch = read.builder(&stream);
    launch.arg(&tex).arg(&out).arg(&wi).arg(&hi);
    // SAFETY: read_texture_2d(cudaTextureObject_t, float*, int, int): `out` holds w * h
    // floats; the texture (and the array it keeps alive) outlive the launch.
    unsafe { launch.launch(LaunchConfig::new(grid, block)) }?;
    stream.synchronize()?;
    let read_back = out.to_vec()?;
    let bad = read_back.iter().zip(&image).filter(|(a, b)| a != b).count();
    println!("texture read by a kernel: {} texels, {bad} wrong", w * h);
    wrong += bad;

    // A 3D copy round trip: host -> 3D array -> device memory -> host.
    let (x, y, z) = (33usize, 17usize, 9usize);
    let volume: Vec<u32> = (0..x * y * z).map(|i| (i as u32).wrapping_mul(2_654_435_761)).collect();
    let desc = ArrayDescriptor::d3(x, y, z, ArrayFormat::U32, 1);
    let cube = Array::new(&ctx, desc)?;
    Copy3D::new(x, y, z).src_host(&volume, x, y).dst_array(&cube).run()?;
    let mut dev = DeviceBuffer::<u32>::alloc(&ctx, x * y * z)?;
    Copy3D::new(x, y, z).src_array(&cube).dst_device(&mut dev, x, y).run_async(&stream)?;
    let back = dev.to_vec()?;
    let bad = back.iter().zip(&volume).filter(|(a, b)| a != b).count();
    println!("3D copy round trip: {} values, {bad} wrong", x * y * z);
    wrong += bad;
    if cube.descriptor()? != desc {
        println!("the 3D array's descriptor did not read back as made: {:?}", cube.descriptor()?);
        wrong += 1;
    }

    println!("array_texture: every result verified, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
