//! Takes the newest path the driver offers and says which it took:
//! - loads its kernel with `cuLibraryLoadData` (CUDA 12.0+), else with `cuModuleLoadData`;
//! - copies a buffer to several others with one `cuMemcpyBatchAsync` (the 13.0 ABI, else
//!   12.8's), else with one `cuMemcpyDtoDAsync` per buffer (also where the batch call
//!   answers CUDA_ERROR_NOT_SUPPORTED, as the stand-in does).
//!
//! `cargo run --example version_fallback`; under every emulated driver version:
//! `cudrv-matrix --stand-in --versions all -- target/debug/examples/version_fallback`.
//! Exits non-zero on a wrong copy.

use cudrv::sys::{CUdeviceptr, CUmemLocationType, CUmemcpyAttributes, CUmemcpySrcAccessOrder, CUresult};
use cudrv::{Context, DeviceBuffer, Driver, LaunchConfig, Library, Module, Stream};

const PTX: &str = include_str!("kernels/scale_f32.ptx");
const LEN: usize = 1 << 16;
const COPIES: usize = 4;

fn has(driver: &Driver, entry: &str) -> bool {
    driver.entry(entry).is_some_and(|e| e.availability.is_resolved())
}

fn main() -> Result<(), cudrv::Error> {
    let driver = cudrv::init()?;
    let ctx = driver.device(0)?.primary_context()?;
    let stream = Stream::new(&ctx, cudrv::StreamFlags::NON_BLOCKING)?;
    println!("driver {}", driver.version());
    let values: Vec<f32> = (0..LEN).map(|i| i as f32).collect();
    let src = DeviceBuffer::from_slice(&ctx, &values)?;
    let (n, s) = (LEN as i32, 3.0f32);
    let (kernel, function);
    let mut launch = if has(driver, "cuLibraryLoadData") {
        println!("kernels: cuLibraryLoadData");
        kernel = Library::from_ptx(driver, PTX)?.kernel("scale_f32")?;
        kernel.builder(&stream)
    } else {
        println!("kernels: cuModuleLoadData (cuLibraryLoadData needs driver 12.0)");
        function = Module::from_ptx(&ctx, PTX)?.function("scale_f32")?;
        function.builder(&stream)
    };
    launch.arg(&src).arg(&s).arg(&n);
    // SAFETY: the arguments match scale_f32(float*, float, int).
    unsafe { launch.launch(LaunchConfig::for_num_elems(LEN as u32)) }?;

    let dsts = (0..COPIES).map(|_| DeviceBuffer::<f32>::alloc(&ctx, LEN)).collect::<Result<Vec<_>, _>>()?;
    let batch = ["cuMemcpyBatchAsync_v13000", "cuMemcpyBatchAsync_v12080"].into_iter().find(|e| has(driver, e));
    match batch.map(|entry| (entry, batch_copy(&ctx, entry, &src, &dsts, &stream))) {
        Some((entry, Ok(()))) => println!("copies: {entry} ({COPIES} buffers in one call)"),
        Some((entry, Err(e))) if e.code() == Some(CUresult::CUDA_ERROR_NOT_SUPPORTED) => {
            println!("copies: {entry} answered CUDA_ERROR_NOT_SUPPORTED: cuMemcpyDtoDAsync per buffer");
            per_buffer(&src, &dsts, &stream)?;
        }
        Some((_, Err(e))) => return Err(e),
        None => {
            println!("copies: cuMemcpyDtoDAsync per buffer (cuMemcpyBatchAsync needs driver 12.8)");
            per_buffer(&src, &dsts, &stream)?;
        }
    }
    stream.synchronize()?;

    let mut wrong = 0;
    for dst in &dsts {
        wrong += dst.to_vec()?.iter().zip(&values).filter(|&(&d, &v)| d != v * s).count();
    }
    println!("{COPIES} copies of {LEN} values, {wrong} wrong");
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}

fn per_buffer(src: &DeviceBuffer<f32>, dsts: &[DeviceBuffer<f32>], stream: &Stream) -> Result<(), cudrv::Error> {
    dsts.iter().try_for_each(|dst| dst.copy_from_device_async(src, stream))
}

/// One `cuMemcpyBatchAsync` (through the variant `entry`) of `src` into every buffer of `dsts`.
fn batch_copy(
    ctx: &Context,
    entry: &str,
    src: &DeviceBuffer<f32>,
    dsts: &[DeviceBuffer<f32>],
    stream: &Stream,
) -> Result<(), cudrv::Error> {
    let mut to: Vec<CUdeviceptr> = dsts.iter().map(|d| d.as_raw()).collect();
    let (mut from, mut sizes) = (vec![src.as_raw(); dsts.len()], vec![src.size_bytes(); dsts.len()]);
    let mut attrs = CUmemcpyAttributes {
        srcAccessOrder: CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
        ..Default::default()
    };
    for hint in [&mut attrs.srcLocHint, &mut attrs.dstLocHint] {
        hint.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        hint.__bindgen_anon_1.id = ctx.device().as_raw();
    }
    let (pc, count, mut attr_index, mut fail_index) = (ctx.driver().pc(), dsts.len(), 0usize, usize::MAX);
    let (to, from, sizes, attr_index, s) =
        (to.as_mut_ptr(), from.as_mut_ptr(), sizes.as_mut_ptr(), &mut attr_index, stream.as_raw());
    ctx.run(|| match entry {
        // SAFETY: `count` live ranges of `size_bytes` each, one attribute for all of them.
        "cuMemcpyBatchAsync_v13000" => unsafe {
            pc.cuMemcpyBatchAsync_v13000(to, from, sizes, count, &mut attrs, attr_index, 1, s)
        },
        // SAFETY: as above; the driver writes the index of a failed copy to `fail_index`.
        _ => unsafe {
            pc.cuMemcpyBatchAsync_v12080(to, from, sizes, count, &mut attrs, attr_index, 1, &mut fail_index, s)
        }
        .map_err(|e| if fail_index == usize::MAX { e } else { e.with_note(format!("copy {fail_index} failed")) }),
    })
}
