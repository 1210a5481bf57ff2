//! Pitched memory, 2D/3D copies, CUDA arrays, texture and surface objects (issue 18,
//! item 8), through cudrv's safe layer on the stand-in: shapes and pitches, copies with
//! offsets checked before any driver call, descriptors read back, objects keeping their
//! memory alive, and a host kernel reading a texture.

mod common;

use common::standin_driver;
use cudrv::sys::{CUmemorytype, CUresult, CUDA_MEMCPY2D};
use cudrv::{
    AddressMode, Array, ArrayDescriptor, ArrayFlags, ArrayFormat, Context, Copy2D, Copy3D, DeviceBuffer, DeviceSlice,
    DeviceSliceMut, Error, FilterMode, LaunchConfig, Module, PitchedBuffer, ReadMode, ResourceDesc, Stream,
    StreamFlags, SurfaceObject, TextureDesc, TextureObject, TextureResource,
};
use cudrv_standin::{register_kernel, Param};

fn context() -> Context {
    common::capture_reports();
    standin_driver().device(0).unwrap().primary_context().unwrap()
}

/// The refusal's reason, checking that it is an `InvalidArgument` of `what`.
fn refused<T: std::fmt::Debug>(r: Result<T, Error>, what: &str) -> String {
    match r.unwrap_err() {
        Error::InvalidArgument(e) => {
            assert_eq!(e.what(), what, "{e}");
            e.why().to_string()
        }
        other => panic!("not refused by cudrv: {other}"),
    }
}

#[test]
fn pitched_buffers_have_aligned_rows_that_are_views() {
    let ctx = context();
    let values: Vec<f32> = (0..5 * 3).map(|v| v as f32).collect();
    let mut p = PitchedBuffer::from_rows(&ctx, 5, &values).unwrap();
    assert_eq!((p.width(), p.height()), (5, 3));
    // The stand-in's pitch: the row rounded up to 512 bytes (to be checked on the H200).
    assert_eq!(p.pitch(), 512);
    assert_eq!(p.to_vec().unwrap(), values);
    assert_eq!(p.row(1).unwrap().as_raw(), p.as_raw() + 512);
    assert_eq!(p.row(2).unwrap().to_vec().unwrap(), [10.0, 11.0, 12.0, 13.0, 14.0]);
    p.row_mut(0).unwrap().fill(7.0).unwrap();
    assert_eq!(&p.to_vec().unwrap()[..6], &[7.0, 7.0, 7.0, 7.0, 7.0, 5.0]);
    assert!(p.row(3).is_err(), "a row past the last is refused");
    let why = refused(PitchedBuffer::from_rows(&ctx, 4, &values), "PitchedBuffer::from_rows");
    assert!(why.contains("whole rows"), "{why}");
    let empty = PitchedBuffer::<u32>::alloc(&ctx, 0, 9).unwrap();
    assert_eq!((empty.as_raw(), empty.pitch()), (0, 0));
    assert!(empty.to_vec().unwrap().is_empty());
}

#[test]
fn a_2d_copy_moves_a_region_with_offsets_and_is_checked_first() {
    let ctx = context();
    let array = Array::new(&ctx, ArrayDescriptor::d2(8, 4, ArrayFormat::U32, 1)).unwrap();
    array.copy_from_host(&[0u32; 32]).unwrap();
    // A 3 x 2 block of a host image of pitch 5, from (1, 1), to the array at (4, 2).
    let host: Vec<u32> = (0..5 * 4).collect();
    Copy2D::new(3, 2).src_host(&host, 5).src_offset(1, 1).dst_array(&array).dst_offset(4, 2).run().unwrap();
    let back: Vec<u32> = array.to_vec().unwrap();
    for (i, v) in back.iter().enumerate() {
        let (x, y) = (i % 8, i / 8);
        let want = if (4..7).contains(&x) && (2..4).contains(&y) { ((y - 1) * 5 + (x - 3)) as u32 } else { 0 };
        assert_eq!(*v, want, "element ({x}, {y})");
    }
    // Checked before any driver call, each naming its end and field.
    let why = refused(Copy2D::new(6, 2).src_host(&host, 5).dst_array(&array).run(), "Copy2D::run");
    assert!(why.contains("source pitch"), "{why}");
    let why = refused(Copy2D::new(3, 2).src_host(&host, 5).dst_array(&array).dst_offset(6, 0).run(), "Copy2D::run");
    assert!(why.contains("destination x offset + width"), "{why}");
    let why = refused(Copy2D::new(3, 4).src_host(&host, 5).dst_array(&array).dst_offset(0, 1).run(), "Copy2D::run");
    assert!(why.contains("destination y offset + height"), "{why}");
    let why = refused(Copy2D::new(5, 5).src_host(&host, 5).dst_array(&array).run(), "Copy2D::run");
    assert!(why.contains("source extent"), "{why}");
    let bytes = [0u16; 64];
    let why = refused(Copy2D::new(2, 2).src_host(&bytes, 8).dst_array(&array).run(), "Copy2D::run");
    assert!(why.contains("an element is 4 bytes"), "{why}");
    let why = refused(Copy2D::<u32>::new(2, 2).dst_array(&array).run(), "Copy2D::run");
    assert!(why.contains("no source"), "{why}");
    // No bytes: no driver call, nothing checked past the ends being given.
    Copy2D::new(0, 2).src_host(&host, 5).dst_array(&array).run().unwrap();
}

#[test]
fn pitched_device_and_array_copies_round_trip_sync_and_async() {
    let ctx = context();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let values: Vec<f32> = (0..16 * 8).map(|v| v as f32 * 0.5).collect();
    let pitched = PitchedBuffer::from_rows(&ctx, 16, &values).unwrap();
    let array = Array::new(&ctx, ArrayDescriptor::d2(16, 8, ArrayFormat::F32, 1)).unwrap();
    Copy2D::new(16, 8).src_pitched(&pitched).dst_array(&array).run_async(&stream).unwrap();
    let mut linear = DeviceBuffer::<f32>::alloc(&ctx, 16 * 8).unwrap();
    Copy2D::new(16, 8).src_array(&array).dst_device(&mut linear, 16).run_async(&stream).unwrap();
    // The synchronous read waits for the stream the buffer was used on.
    assert_eq!(linear.to_vec().unwrap(), values);
    // Unaligned form, device to pitched.
    let mut other = PitchedBuffer::<f32>::alloc(&ctx, 16, 8).unwrap();
    Copy2D::new(16, 8).src_device(&linear, 16).dst_pitched(&mut other).run_unaligned().unwrap();
    assert_eq!(other.to_vec().unwrap(), values);
    // An asynchronous copy with a host end is the unsafe form's.
    let mut host = vec![0f32; 16 * 8];
    let why =
        refused(Copy2D::new(16, 8).src_array(&array).dst_host(&mut host, 16).run_async(&stream), "Copy2D::run_async");
    assert!(why.contains("host end"), "{why}");
    // SAFETY: `host` is neither touched nor dropped before the synchronize.
    unsafe { Copy2D::new(16, 8).src_array(&array).dst_host(&mut host, 16).run_async_host(&stream) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(host, values);
}

#[test]
fn a_3d_copy_round_trips_through_a_3d_array() {
    let ctx = context();
    let (w, h, d) = (5, 4, 3);
    let desc = ArrayDescriptor::d3(w, h, d, ArrayFormat::I16, 2);
    let array = Array::new(&ctx, desc).unwrap();
    let values: Vec<[i16; 2]> = (0..w * h * d).map(|i| [i as i16, -(i as i16)]).collect();
    array.copy_from_host(&values).unwrap();
    assert_eq!(array.to_vec::<[i16; 2]>().unwrap(), values);
    // Device memory of slices of `rows` rows: one slice, offset in z.
    let mut dev = DeviceBuffer::<[i16; 2]>::alloc(&ctx, w * h).unwrap();
    Copy3D::new(w, h, 1).src_array(&array).src_offset(0, 0, 2).dst_device(&mut dev, w, h).run().unwrap();
    assert_eq!(dev.to_vec().unwrap(), values[2 * w * h..]);
    let why = refused(
        Copy3D::new(w, h, 2).src_array(&array).src_offset(0, 0, 2).dst_device(&mut dev, w, h).run(),
        "Copy3D::run",
    );
    assert!(why.contains("z offset + depth"), "{why}");
    let why = refused(Copy3D::new(w, h, 1).src_array(&array).dst_device(&mut dev, w, h - 1).run(), "Copy3D::run");
    assert!(why.contains("destination height"), "{why}");
    // A host end of slices with more rows than copied (a sub-volume).
    let mut host = vec![[0i16; 2]; w * (h + 1) * d];
    Copy3D::new(w, h, d).src_array(&array).dst_host(&mut host, w, h + 1).run().unwrap();
    assert_eq!(host[(h + 1) * w + 3], values[h * w + 3], "slice 1, row 0, x 3");
    let stream = Stream::new(&ctx, StreamFlags::DEFAULT).unwrap();
    let copy = DeviceBuffer::<[i16; 2]>::from_slice(&ctx, &values).unwrap();
    let target = Array::new(&ctx, desc).unwrap();
    Copy3D::new(w, h, d).src_device(&copy, w, h).dst_array(&target).run_async(&stream).unwrap();
    assert_eq!(target.to_vec::<[i16; 2]>().unwrap(), values, "the synchronous read waited for the stream");
}

#[test]
fn arrays_are_checked_and_their_descriptors_read_back() {
    let ctx = context();
    let why = refused(Array::new(&ctx, ArrayDescriptor::d2(0, 4, ArrayFormat::U8, 1)), "Array::new");
    assert!(why.starts_with("width"), "{why}");
    let why = refused(Array::new(&ctx, ArrayDescriptor::d2(4, 4, ArrayFormat::U8, 3)), "Array::new");
    assert!(why.starts_with("channels"), "{why}");
    let cube = ArrayDescriptor::d3(8, 4, 6, ArrayFormat::F32, 1).flags(ArrayFlags::CUBEMAP);
    let why = refused(Array::new(&ctx, cube), "Array::new");
    assert!(why.contains("cubemap"), "{why}");
    for desc in [
        ArrayDescriptor::d1(100, ArrayFormat::U8, 4),
        ArrayDescriptor::d2(7, 3, ArrayFormat::F16, 2),
        ArrayDescriptor::d3(4, 4, 6, ArrayFormat::F32, 1).flags(ArrayFlags::CUBEMAP),
        ArrayDescriptor::d3(16, 0, 3, ArrayFormat::I32, 1).flags(ArrayFlags::LAYERED),
        ArrayDescriptor::d2(8, 8, ArrayFormat::U16, 1).flags(ArrayFlags::SURFACE_LDST),
    ] {
        let a = Array::new(&ctx, desc).unwrap();
        assert_eq!(a.descriptor().unwrap(), desc);
        assert_eq!(*a.desc(), desc);
    }
}

#[test]
fn texture_objects_read_back_and_keep_their_memory_alive() {
    let ctx = context();
    let array = Array::new(&ctx, ArrayDescriptor::d2(4, 4, ArrayFormat::F32, 1)).unwrap();
    let raw_array = array.as_raw();
    let desc = TextureDesc {
        address_mode: [AddressMode::Border, AddressMode::Clamp, AddressMode::Clamp],
        filter_mode: FilterMode::Point,
        read_mode: ReadMode::ElementType,
        normalized_coords: true,
        border_color: [0.25, 0.0, 0.0, 1.0],
    };
    let tex = TextureObject::new(&TextureResource::array(&array), &desc).unwrap();
    // As on the H200, the border colour reads back as zeros.
    assert_eq!(tex.texture_desc().unwrap(), TextureDesc { border_color: [0.0; 4], ..desc });
    assert_eq!(tex.resource_desc().unwrap(), ResourceDesc::Array(raw_array));
    drop(array);
    let live = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().ledger();
    assert!(live.handle_is_live("array", raw_array as u64), "the texture keeps its array");
    assert!(live.handle_is_live("texture object", tex.as_raw()));
    let tex_raw = tex.as_raw();
    drop(tex);
    let after = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().ledger();
    assert!(!after.handle_is_live("array", raw_array as u64) && !after.handle_is_live("texture object", tex_raw));

    // Over linear and pitched memory.
    let buf = DeviceBuffer::from_slice(&ctx, &[1.0f32; 64]).unwrap();
    let linear =
        TextureObject::new(&TextureResource::linear(&buf, ArrayFormat::F32, 1).unwrap(), &Default::default()).unwrap();
    let want =
        ResourceDesc::Linear { address: buf.as_raw(), format: Some(ArrayFormat::F32), channels: 1, size_bytes: 256 };
    assert_eq!(linear.resource_desc().unwrap(), want);
    let pitched = PitchedBuffer::<[u8; 4]>::alloc(&ctx, 10, 3).unwrap();
    let res = TextureResource::pitched(&pitched, ArrayFormat::U8, 4).unwrap();
    let t = TextureObject::new(&res, &Default::default()).unwrap();
    let want = ResourceDesc::Pitch2D {
        address: pitched.as_raw(),
        format: Some(ArrayFormat::U8),
        channels: 4,
        width: 10,
        height: 3,
        pitch: pitched.pitch(),
    };
    assert_eq!(t.resource_desc().unwrap(), want);
    let e = TextureResource::pitched(&pitched, ArrayFormat::U8, 1).unwrap_err();
    assert!(e.why().contains("a value of T 4"), "{e}");

    // Surfaces need a surface-writable array.
    let plain = Array::new(&ctx, ArrayDescriptor::d2(4, 4, ArrayFormat::F32, 1)).unwrap();
    let why = refused(SurfaceObject::new(&plain), "SurfaceObject::new");
    assert!(why.contains("SURFACE_LDST"), "{why}");
    let ldst =
        Array::new(&ctx, ArrayDescriptor::d2(4, 4, ArrayFormat::F32, 1).flags(ArrayFlags::SURFACE_LDST)).unwrap();
    let s = SurfaceObject::new(&ldst).unwrap();
    assert_eq!(s.resource_desc().unwrap(), ResourceDesc::Array(ldst.as_raw()));
}

#[test]
fn a_host_kernel_reads_an_array_through_a_texture_object() {
    let ctx = context();
    register_kernel("read_texture_2d", &[Param::U64, Param::Ptr, Param::I32, Param::I32], |t| {
        let (tex, out, w, h) = (t.param::<u64>(0)?, t.ptr(1)?, t.param::<i32>(2)?, t.param::<i32>(3)?);
        let x = t.block_idx().x * t.block_dim().x + t.thread_idx().x;
        let y = t.block_idx().y * t.block_dim().y + t.thread_idx().y;
        if (x as i32) < w && (y as i32) < h {
            let v = t.texture_fetch::<f32>(tex, [x as f32 + 0.5, y as f32 + 0.5, 0.0])?;
            t.store(out, u64::from(y) * w as u64 + u64::from(x), v)?;
        }
        Ok(())
    });
    let (w, h) = (37usize, 21usize);
    let image: Vec<f32> = (0..w * h).map(|i| (i as f32).sin()).collect();
    let array = Array::new(&ctx, ArrayDescriptor::d2(w, h, ArrayFormat::F32, 1)).unwrap();
    array.copy_from_host(&image).unwrap();
    let tex = TextureObject::new(&TextureResource::array(&array), &TextureDesc::default()).unwrap();
    let out = DeviceBuffer::<f32>::alloc(&ctx, w * h).unwrap();
    let module = Module::from_ptx(&ctx, include_str!("../examples/kernels/array_texture.ptx")).unwrap();
    let f = module.function("read_texture_2d").unwrap();
    let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let (wi, hi) = (w as i32, h as i32);
    let mut launch = f.builder(&stream);
    launch.arg(&tex).arg(&out).arg(&wi).arg(&hi);
    let config = LaunchConfig::new((3, 3, 1), (16, 8, 1));
    // SAFETY: the arguments match read_texture_2d(cudaTextureObject_t, float*, int, int);
    // `out` holds w * h values.
    unsafe { launch.launch(config) }.unwrap();
    stream.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), image);
}

#[test]
fn the_stand_in_refuses_a_width_past_the_pitch_and_unknown_memory_types() {
    let ctx = context();
    let d = standin_driver();
    let buf = DeviceBuffer::<u8>::alloc(&ctx, 4096).unwrap();
    let host = vec![0u8; 4096];
    let copy = |width: usize, pitch: usize, kind: CUmemorytype| {
        let c = CUDA_MEMCPY2D {
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: host.as_ptr().cast(),
            srcPitch: 64,
            dstMemoryType: kind,
            dstDevice: buf.as_raw(),
            dstPitch: pitch,
            WidthInBytes: width,
            Height: 4,
            ..Default::default()
        };
        // SAFETY: valid descriptor over live memory; run in the buffer's context.
        ctx.run(|| Ok(unsafe { d.p().cuMemcpy2D(&c) })).unwrap()
    };
    assert_eq!(copy(64, 64, CUmemorytype::CU_MEMORYTYPE_DEVICE), CUresult::CUDA_SUCCESS);
    assert_eq!(copy(65, 64, CUmemorytype::CU_MEMORYTYPE_DEVICE), CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(copy(16, 64, CUmemorytype(9)), CUresult::CUDA_ERROR_INVALID_VALUE);
}

/// Blocks `stream` until the returned sender sends (or is dropped).
fn gate(stream: &Stream) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv();
        })
        .unwrap();
    tx
}

/// Opens the gate from another thread after a while (nothing asserts the time).
fn open_later(tx: std::sync::mpsc::Sender<()>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let _ = tx.send(());
    })
}

/// An array dropped while a copy out of it is queued (behind a blocked host function) on
/// a non-blocking stream: its destroy waits for the copy, which reads the array's values
/// (the stand-in frees an array's memory at once, so a destroy that did not wait would
/// fail the copy with CUDA_ERROR_ILLEGAL_ADDRESS).
#[test]
fn an_array_is_not_destroyed_under_a_queued_copy() {
    let ctx = context();
    let s2 = Stream::new(&ctx, StreamFlags::NON_BLOCKING).unwrap();
    let values: Vec<u32> = (0..64 * 8).collect();
    let array = Array::new(&ctx, ArrayDescriptor::d2(64, 8, ArrayFormat::U32, 1)).unwrap();
    array.copy_from_host(&values).unwrap();
    let mut out = DeviceBuffer::<u32>::alloc(&ctx, 64 * 8).unwrap();
    let tx = gate(&s2);
    Copy2D::new(64, 8).src_array(&array).dst_device(&mut out, 64).run_async(&s2).unwrap();
    let opener = open_later(tx);
    drop(array);
    opener.join().unwrap();
    s2.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), values);
}

/// A texture object keeps its linear memory alive, and a launch through it records the
/// memory's use on its stream: the buffer's free (its last clone, in the texture) waits.
#[test]
fn a_texture_over_a_buffer_keeps_it_alive_after_the_buffer_is_dropped() {
    let ctx = context();
    let buf = DeviceBuffer::from_slice(&ctx, &[3.0f32; 16]).unwrap();
    let address = buf.as_raw();
    let tex = TextureObject::new(&TextureResource::linear(&buf, ArrayFormat::F32, 1).unwrap(), &TextureDesc::default())
        .unwrap();
    drop(buf);
    let ledger = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().ledger();
    assert!(ledger.allocation(address).is_some(), "the texture keeps the buffer's memory");
    drop(tex);
    let ledger = cudrv_standin::StandIn::new(cudrv::table::HEADER_VERSION).unwrap().ledger();
    assert!(ledger.allocation(address).is_none(), "freed with the texture's last clone");
}
