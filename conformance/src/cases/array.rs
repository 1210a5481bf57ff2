//! Pitched allocations, CUDA arrays, 2D/3D copies, texture and surface objects (issue 18,
//! item 8). Recorded on the H200 (`expected/h200-driver-13000.txt`); the stand-in answers
//! in `standin/src/array.rs`, `copy3d.rs` and `texture.rs`.

use super::{case, handle, number, step, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// A 2D array of `w` x `h` floats (`flags` through `cuArray3DCreate` when non-zero).
unsafe fn array(e: &Env, w: usize, h: usize, depth: usize, flags: u32) -> Result<CUarray, Out> {
    let mut a: CUarray = std::ptr::null_mut();
    let d = CUDA_ARRAY3D_DESCRIPTOR {
        Width: w,
        Height: h,
        Depth: depth,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
        Flags: flags,
    };
    // SAFETY: valid out-pointer and descriptor.
    match unsafe { e.p.cuArray3DCreate(&mut a, &d) } {
        CUresult::CUDA_SUCCESS => Ok(a),
        s => Err(Out::setup_failed("cuArray3DCreate", s)),
    }
}

/// `cuArrayCreate` of `w` x `h` elements of `format` with `channels`.
unsafe fn create_2d(e: &Env, w: usize, h: usize, format: CUarray_format, channels: u32) -> Out {
    let mut a: CUarray = super::sentinel();
    let d = CUDA_ARRAY_DESCRIPTOR { Width: w, Height: h, Format: format, NumChannels: channels };
    // SAFETY: valid out-pointer and descriptor.
    let st = unsafe { e.p.cuArrayCreate(&mut a, &d) };
    Out::of(st).eq("array", handle(a))
}

/// `cuArray3DCreate` of floats.
unsafe fn create_3d(e: &Env, w: usize, h: usize, depth: usize, flags: u32) -> Out {
    let mut a: CUarray = super::sentinel();
    let d = CUDA_ARRAY3D_DESCRIPTOR {
        Width: w,
        Height: h,
        Depth: depth,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
        Flags: flags,
    };
    // SAFETY: valid out-pointer and descriptor.
    let st = unsafe { e.p.cuArray3DCreate(&mut a, &d) };
    Out::of(st).eq("array", handle(a))
}

/// A 2D copy of `width` x 4 bytes from a host buffer (pitch 64) to device memory of pitch
/// `dst_pitch`, or to `array` when given.
unsafe fn copy_2d(e: &Env, width: usize, dst_pitch: usize, dst: Option<CUarray>, kind: CUmemorytype) -> Out {
    let host = vec![1u8; 4096];
    let mut d: CUdeviceptr = 0;
    step!(e.p.cuMemAlloc(&mut d, 4096));
    let mut c = CUDA_MEMCPY2D {
        srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
        srcHost: host.as_ptr().cast(),
        srcPitch: 64,
        dstMemoryType: kind,
        dstDevice: d,
        dstPitch: dst_pitch,
        WidthInBytes: width,
        Height: 4,
        ..Default::default()
    };
    if let Some(a) = dst {
        c.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
        c.dstArray = a;
    }
    // SAFETY: a valid descriptor of live memory (but for what the case is about).
    Out::of(unsafe { e.p.cuMemcpy2D(&c) })
}

/// A texture object over `res` with a default texture descriptor (clamp, point).
unsafe fn tex_over(e: &Env, res: &CUDA_RESOURCE_DESC) -> (CUresult, CUtexObject) {
    let mut t: CUtexObject = UNTOUCHED;
    let td = CUDA_TEXTURE_DESC::default();
    // SAFETY: valid pointers; no view.
    let st = unsafe { e.p.cuTexObjectCreate(&mut t, res, &td, std::ptr::null()) };
    (st, t)
}

fn array_res(a: CUarray) -> CUDA_RESOURCE_DESC {
    let mut r = CUDA_RESOURCE_DESC { resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY, ..Default::default() };
    r.res.array.hArray = a;
    r
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("array.alloc_pitch_pitch", Ctx, |e| {
            let (mut d, mut pitch) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuMemAllocPitch(&mut d, &mut pitch, 100, 4, 4);
            Out::of(st).eq("pitch", number(pitch as u64))
        }),
        case!("array.alloc_pitch_wide_rows", Ctx, |e| {
            let (mut d, mut pitch) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuMemAllocPitch(&mut d, &mut pitch, 2036, 4, 16);
            Out::of(st).eq("pitch", number(pitch as u64))
        }),
        case!("array.alloc_pitch_element_3", Ctx, |e| {
            let (mut d, mut pitch) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuMemAllocPitch(&mut d, &mut pitch, 100, 4, 3);
            Out::of(st).eq("dptr", number(d)).eq("pitch", number(pitch as u64))
        }),
        case!("array.alloc_pitch_width_zero", Ctx, |e| {
            let (mut d, mut pitch) = (UNTOUCHED, UNTOUCHED as usize);
            Out::of(e.p.cuMemAllocPitch(&mut d, &mut pitch, 0, 4, 4)).eq("dptr", number(d))
        }),
        case!("array.alloc_pitch_height_zero", Ctx, |e| {
            let (mut d, mut pitch) = (UNTOUCHED, UNTOUCHED as usize);
            Out::of(e.p.cuMemAllocPitch(&mut d, &mut pitch, 100, 0, 4)).eq("dptr", number(d))
        }),
        case!("array.create_2d", Ctx, |e| { create_2d(e, 64, 32, CUarray_format::CU_AD_FORMAT_FLOAT, 1) }),
        case!("array.create_1d", Ctx, |e| { create_2d(e, 64, 0, CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, 4) }),
        case!("array.create_width_zero", Ctx, |e| { create_2d(e, 0, 32, CUarray_format::CU_AD_FORMAT_FLOAT, 1) }),
        case!("array.create_channels_3", Ctx, |e| { create_2d(e, 64, 32, CUarray_format::CU_AD_FORMAT_FLOAT, 3) }),
        case!("array.create_bad_format", Ctx, |e| { create_2d(e, 64, 32, CUarray_format(77), 1) }),
        case!("array.create_no_context", Init, |e| { create_2d(e, 64, 32, CUarray_format::CU_AD_FORMAT_FLOAT, 1) }),
        case!("array.create_3d", Ctx, |e| { create_3d(e, 16, 8, 4, 0) }),
        case!("array.create_3d_height_zero", Ctx, |e| { create_3d(e, 16, 0, 4, 0) }),
        case!("array.create_layered_1d", Ctx, |e| { create_3d(e, 16, 0, 4, CUDA_ARRAY3D_LAYERED) }),
        case!("array.create_layered_no_layers", Ctx, |e| { create_3d(e, 16, 8, 0, CUDA_ARRAY3D_LAYERED) }),
        case!("array.create_cubemap", Ctx, |e| { create_3d(e, 8, 8, 6, CUDA_ARRAY3D_CUBEMAP) }),
        case!("array.create_cubemap_not_square", Ctx, |e| { create_3d(e, 8, 4, 6, CUDA_ARRAY3D_CUBEMAP) }),
        case!("array.create_unknown_flag", Ctx, |e| { create_3d(e, 8, 8, 0, 1 << 20) }),
        case!("array.get_descriptor_3d_flags", Ctx, |e| {
            let a = super::with!(array(e, 8, 8, 2, CUDA_ARRAY3D_SURFACE_LDST));
            let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
            let st = e.p.cuArray3DGetDescriptor(&mut d, a);
            Out::of(st).eq("width", d.Width).eq("height", d.Height).eq("depth", d.Depth).eq("flags", d.Flags)
        }),
        case!("array.get_descriptor_2d_of_3d", Ctx, |e| {
            let a = super::with!(array(e, 8, 8, 2, 0));
            let mut d = CUDA_ARRAY_DESCRIPTOR::default();
            Out::of(e.p.cuArrayGetDescriptor(&mut d, a))
        }),
        case!("array.get_descriptor_3d_of_2d", Ctx, |e| {
            let a = super::with!(array(e, 8, 8, 0, 0));
            let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
            let st = e.p.cuArray3DGetDescriptor(&mut d, a);
            Out::of(st).eq("depth", d.Depth).eq("flags", d.Flags)
        }),
        case!("array.destroy_twice", Ctx, |e| {
            let a = super::with!(array(e, 8, 8, 0, 0));
            step!(e.p.cuArrayDestroy(a));
            Out::of(e.p.cuArrayDestroy(a))
        }),
        case!("array.memcpy2d_host_to_device", Ctx, |e| {
            copy_2d(e, 64, 64, None, CUmemorytype::CU_MEMORYTYPE_DEVICE)
        }),
        case!("array.memcpy2d_width_past_pitch", Ctx, |e| {
            copy_2d(e, 64, 32, None, CUmemorytype::CU_MEMORYTYPE_DEVICE)
        }),
        case!("array.memcpy2d_width_past_src_pitch", Ctx, |e| {
            copy_2d(e, 65, 128, None, CUmemorytype::CU_MEMORYTYPE_DEVICE)
        }),
        case!("array.memcpy2d_bad_memory_type", Ctx, |e| { copy_2d(e, 16, 64, None, CUmemorytype(9)) }),
        case!("array.memcpy2d_zero_width", Ctx, |e| { copy_2d(e, 0, 64, None, CUmemorytype::CU_MEMORYTYPE_DEVICE) }),
        case!("array.memcpy2d_to_array", Ctx, |e| {
            let a = super::with!(array(e, 16, 4, 0, 0));
            copy_2d(e, 64, 0, Some(a), CUmemorytype::CU_MEMORYTYPE_ARRAY)
        }),
        case!("array.memcpy2d_past_array_extent", Ctx, |e| {
            let a = super::with!(array(e, 8, 4, 0, 0));
            copy_2d(e, 64, 0, Some(a), CUmemorytype::CU_MEMORYTYPE_ARRAY)
        }),
        case!("array.memcpy2d_destroyed_array", Ctx, |e| {
            let a = super::with!(array(e, 16, 4, 0, 0));
            step!(e.p.cuArrayDestroy(a));
            copy_2d(e, 64, 0, Some(a), CUmemorytype::CU_MEMORYTYPE_ARRAY)
        }),
        case!("array.memcpy3d_round_trip", Ctx, |e| {
            let a = super::with!(array(e, 4, 3, 2, 0));
            let src: Vec<f32> = (0..24).map(|v| v as f32).collect();
            let mut back = vec![0f32; 24];
            let mut c = CUDA_MEMCPY3D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                srcHost: src.as_ptr().cast(),
                srcPitch: 16,
                srcHeight: 3,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                dstArray: a,
                WidthInBytes: 16,
                Height: 3,
                Depth: 2,
                ..Default::default()
            };
            step!(e.p.cuMemcpy3D(&c));
            c = CUDA_MEMCPY3D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                srcArray: a,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                dstHost: back.as_mut_ptr().cast(),
                dstPitch: 16,
                dstHeight: 3,
                WidthInBytes: 16,
                Height: 3,
                Depth: 2,
                ..Default::default()
            };
            let st = e.p.cuMemcpy3D(&c);
            Out::of(st).eq("same", back == src)
        }),
        case!("array.memcpy3d_lod_nonzero", Ctx, |e| {
            let a = super::with!(array(e, 4, 3, 2, 0));
            let src = [0f32; 24];
            let c = CUDA_MEMCPY3D {
                srcMemoryType: CUmemorytype::CU_MEMORYTYPE_HOST,
                srcHost: src.as_ptr().cast(),
                srcPitch: 16,
                srcHeight: 3,
                srcLOD: 1,
                dstMemoryType: CUmemorytype::CU_MEMORYTYPE_ARRAY,
                dstArray: a,
                WidthInBytes: 16,
                Height: 3,
                Depth: 2,
                ..Default::default()
            };
            Out::of(e.p.cuMemcpy3D(&c))
        }),
        case!("array.tex_object_over_array", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, 0));
            let (st, t) = tex_over(e, &array_res(a));
            let mut back = CUDA_RESOURCE_DESC::default();
            let st2 = e.p.cuTexObjectGetResourceDesc(&mut back, t);
            Out::of(st)
                .eq("tex", if t == UNTOUCHED { "untouched" } else { "set" })
                .eq("get", st2)
                .eq("same_array", back.resType == CUresourcetype::CU_RESOURCE_TYPE_ARRAY && back.res.array.hArray == a)
        }),
        case!("array.tex_object_texture_desc", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, 0));
            let td = CUDA_TEXTURE_DESC {
                addressMode: [CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER; 3],
                filterMode: CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
                flags: CU_TRSF_NORMALIZED_COORDINATES,
                borderColor: [0.5, 0.0, 0.0, 1.0],
                ..Default::default()
            };
            let mut t: CUtexObject = 0;
            step!(e.p.cuTexObjectCreate(&mut t, &array_res(a), &td, std::ptr::null()));
            let mut back = CUDA_TEXTURE_DESC::default();
            let st = e.p.cuTexObjectGetTextureDesc(&mut back, t);
            Out::of(st)
                .eq("address_mode", format!("{:?}", back.addressMode.map(|m| m.0)))
                .eq("filter", back.filterMode.0)
                .eq("flags", back.flags)
                .eq("border", format!("{:?}", back.borderColor))
        }),
        case!("array.tex_object_destroy_twice", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, 0));
            let (st, t) = tex_over(e, &array_res(a));
            step!(st);
            step!(e.p.cuTexObjectDestroy(t));
            Out::of(e.p.cuTexObjectDestroy(t))
        }),
        case!("array.tex_object_destroy_zero", Ctx, |e| { Out::of(e.p.cuTexObjectDestroy(0)) }),
        case!("array.tex_object_destroyed_array", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, 0));
            step!(e.p.cuArrayDestroy(a));
            Out::of(tex_over(e, &array_res(a)).0)
        }),
        case!("array.tex_object_linear_unaligned", Ctx, |e| {
            let mut d: CUdeviceptr = 0;
            step!(e.p.cuMemAlloc(&mut d, 4096));
            let mut r = CUDA_RESOURCE_DESC { resType: CUresourcetype::CU_RESOURCE_TYPE_LINEAR, ..Default::default() };
            r.res.linear.devPtr = d + 4;
            r.res.linear.format = CUarray_format::CU_AD_FORMAT_FLOAT;
            r.res.linear.numChannels = 1;
            r.res.linear.sizeInBytes = 1024;
            Out::of(tex_over(e, &r).0)
        }),
        case!("array.tex_object_pitch2d_pitch_below_row", Ctx, |e| {
            let (mut d, mut pitch) = (0u64, 0usize);
            step!(e.p.cuMemAllocPitch(&mut d, &mut pitch, 256, 8, 4));
            let mut r = CUDA_RESOURCE_DESC { resType: CUresourcetype::CU_RESOURCE_TYPE_PITCH2D, ..Default::default() };
            r.res.pitch2D.devPtr = d;
            r.res.pitch2D.format = CUarray_format::CU_AD_FORMAT_FLOAT;
            r.res.pitch2D.numChannels = 1;
            r.res.pitch2D.width = 64;
            r.res.pitch2D.height = 8;
            r.res.pitch2D.pitchInBytes = 128;
            Out::of(tex_over(e, &r).0)
        }),
        case!("array.surf_object_needs_ldst", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, 0));
            let mut s: CUsurfObject = UNTOUCHED;
            Out::of(e.p.cuSurfObjectCreate(&mut s, &array_res(a)))
        }),
        case!("array.surf_object_ldst", Ctx, |e| {
            let a = super::with!(array(e, 16, 16, 0, CUDA_ARRAY3D_SURFACE_LDST));
            let mut s: CUsurfObject = UNTOUCHED;
            let st = e.p.cuSurfObjectCreate(&mut s, &array_res(a));
            Out::of(st).eq("surf", if s == UNTOUCHED { "untouched" } else { "set" })
        }),
    ]
}
