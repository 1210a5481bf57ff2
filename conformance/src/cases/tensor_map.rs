//! Tensor maps (12.0+): `cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col`,
//! `cuTensorMapEncodeIm2colWide`, `cuTensorMapReplaceAddress`, one case per rule of
//! `cuda.h`'s documentation of each parameter: the status and whether the map's 128 bytes
//! were written (`written`). The bytes themselves are opaque (the stand-in's differ from
//! the H200's); a replaced address is compared with an encoding made afresh.

use cudrv::call;
use cudrv::sys::*;

use super::{alloc, case, with, Case, Env, Out};

/// 192 bytes aligned to 64: a map at offset 0, or a misaligned one at offset 8.
#[repr(C, align(64))]
struct Buf([u8; 192]);

const FILL: u8 = 0x5e;

impl Buf {
    fn new() -> Buf {
        Buf([FILL; 192])
    }
    fn at(&mut self, offset: usize) -> *mut CUtensorMap {
        self.0.as_mut_ptr().wrapping_add(offset).cast()
    }
    fn written(&self, offset: usize) -> bool {
        self.0.iter().skip(offset).take(128).any(|&b| b != FILL)
    }
}

/// The parameters of a tiled map.
#[derive(Clone, Copy)]
struct Tiled {
    t: u32,
    rank: u32,
    /// Bytes added to the allocation's address.
    shift: u64,
    null_address: bool,
    dims: [u64; 5],
    strides: [u64; 4],
    boxes: [u32; 5],
    es: [u32; 5],
    il: u32,
    sw: u32,
    l2: u32,
    oob: u32,
    map_offset: usize,
    null_map: bool,
    null_dims: bool,
    null_strides: bool,
}

/// 64 x 64 floats, rows of 256 bytes, a box of 32 x 8.
const T: Tiled = Tiled {
    t: 7,
    rank: 2,
    shift: 0,
    null_address: false,
    dims: [64, 64, 1, 1, 1],
    strides: [256, 0, 0, 0],
    boxes: [32, 8, 1, 1, 1],
    es: [1; 5],
    il: 0,
    sw: 0,
    l2: 0,
    oob: 0,
    map_offset: 0,
    null_map: false,
    null_dims: false,
    null_strides: false,
};

/// 3D interleaved (32B) floats: 8 x 16 x 16, box 8 x 8 x 8.
const T32: Tiled =
    Tiled { rank: 3, dims: [8, 16, 16, 1, 1], strides: [64, 1024, 0, 0], boxes: [8, 8, 8, 1, 1], il: 2, sw: 1, ..T };

/// Encodes `p` over 1 MiB of device memory into `buf`; the status.
unsafe fn encode_tiled(e: &Env, p: Tiled, buf: &mut Buf) -> Result<CUresult, Out> {
    let d = alloc(e, 1 << 20)?;
    let address = if p.null_address { std::ptr::null_mut() } else { (d + p.shift) as *mut std::ffi::c_void };
    let map = if p.null_map { std::ptr::null_mut() } else { buf.at(p.map_offset) };
    let dims = if p.null_dims { std::ptr::null() } else { p.dims.as_ptr() };
    let strides = if p.null_strides { std::ptr::null() } else { p.strides.as_ptr() };
    // SAFETY: arrays of 5 (strides 4) elements, a map of 128 bytes or NULL on purpose.
    Ok(unsafe {
        e.p.cuTensorMapEncodeTiled(
            map,
            CUtensorMapDataType(p.t),
            p.rank,
            address,
            dims,
            strides,
            p.boxes.as_ptr(),
            p.es.as_ptr(),
            CUtensorMapInterleave(p.il),
            CUtensorMapSwizzle(p.sw),
            CUtensorMapL2promotion(p.l2),
            CUtensorMapFloatOOBfill(p.oob),
        )
    })
}

fn tiled(e: &Env, p: Tiled) -> Out {
    let mut buf = Buf::new();
    // SAFETY: see encode_tiled.
    let st = with!(unsafe { encode_tiled(e, p, &mut buf) });
    Out::of(st).eq("written", buf.written(p.map_offset))
}

/// The parameters of an im2col map: floats N=2, H=8, W=8, C=16 (dims C, W, H, N).
#[derive(Clone, Copy)]
struct Im2col {
    rank: u32,
    dims: [u64; 5],
    strides: [u64; 4],
    lower: [i32; 3],
    upper: [i32; 3],
    channels: u32,
    pixels: u32,
    sw: u32,
}

const I: Im2col = Im2col {
    rank: 4,
    dims: [16, 8, 8, 2, 1],
    strides: [64, 512, 4096, 0],
    lower: [-1, -1, 0],
    upper: [-1, -1, 0],
    channels: 16,
    pixels: 64,
    sw: 0,
};

fn im2col(e: &Env, p: Im2col) -> Out {
    let d = with!(alloc(e, 1 << 20));
    let mut buf = Buf::new();
    let es = [1u32; 5];
    // SAFETY: arrays of 5 (strides 4, corners 3) elements, a map of 128 bytes.
    let st = unsafe {
        e.p.cuTensorMapEncodeIm2col(
            buf.at(0),
            CUtensorMapDataType(7),
            p.rank,
            d as *mut std::ffi::c_void,
            p.dims.as_ptr(),
            p.strides.as_ptr(),
            p.lower.as_ptr(),
            p.upper.as_ptr(),
            p.channels,
            p.pixels,
            es.as_ptr(),
            CUtensorMapInterleave(0),
            CUtensorMapSwizzle(p.sw),
            CUtensorMapL2promotion(0),
            CUtensorMapFloatOOBfill(0),
        )
    };
    Out::of(st).eq("written", buf.written(0))
}

fn wide(e: &Env, rank: u32, sw: u32) -> Out {
    let d = with!(alloc(e, 1 << 20));
    let mut buf = Buf::new();
    let es = [1u32; 5];
    // SAFETY: as for im2col.
    let st = unsafe {
        e.p.cuTensorMapEncodeIm2colWide(
            buf.at(0),
            CUtensorMapDataType(7),
            rank,
            d as *mut std::ffi::c_void,
            I.dims.as_ptr(),
            I.strides.as_ptr(),
            -1,
            -1,
            16,
            64,
            es.as_ptr(),
            CUtensorMapInterleave(0),
            CUtensorMapIm2ColWideMode(0),
            CUtensorMapSwizzle(sw),
            CUtensorMapL2promotion(0),
            CUtensorMapFloatOOBfill(0),
        )
    };
    Out::of(st).eq("written", buf.written(0))
}

/// Encodes `p`, replaces its address by the allocation's plus `shift` (or NULL), and
/// compares with `p` encoded at that address.
fn replace(e: &Env, p: Tiled, shift: u64, null: bool) -> Out {
    let mut buf = Buf::new();
    // SAFETY: see encode_tiled.
    let st = with!(unsafe { encode_tiled(e, p, &mut buf) });
    if st != CUresult::CUDA_SUCCESS {
        return Out::setup_failed("cuTensorMapEncodeTiled", st);
    }
    let d = with!(alloc(e, 1 << 20));
    let before = buf.0;
    let address = if null { std::ptr::null_mut() } else { (d + shift) as *mut std::ffi::c_void };
    // SAFETY: a map the driver wrote.
    let st = unsafe { e.p.cuTensorMapReplaceAddress(buf.at(0), address) };
    let changed = buf.0 != before;
    let mut fresh = Buf::new();
    let map = fresh.at(0);
    let again = CUresult::CUDA_SUCCESS
        // SAFETY: arrays of 5 elements, a map of 128 bytes.
        == unsafe {
            e.p.cuTensorMapEncodeTiled(
                map,
                CUtensorMapDataType(p.t),
                p.rank,
                address,
                p.dims.as_ptr(),
                p.strides.as_ptr(),
                p.boxes.as_ptr(),
                p.es.as_ptr(),
                CUtensorMapInterleave(p.il),
                CUtensorMapSwizzle(p.sw),
                CUtensorMapL2promotion(p.l2),
                CUtensorMapFloatOOBfill(p.oob),
            )
        };
    let same = again && fresh.0.get(..128) == buf.0.get(..128);
    Out::of(st).eq("changed", changed).eq("same_as_fresh_encoding", same)
}

const TILED: &[cudrv::Call] = &[call::cuTensorMapEncodeTiled];
const IM2COL: &[cudrv::Call] = &[call::cuTensorMapEncodeIm2col];
const WIDE: &[cudrv::Call] = &[call::cuTensorMapEncodeIm2colWide];
const REPLACE: &[cudrv::Call] = &[call::cuTensorMapReplaceAddress];

macro_rules! t {
    ($name:literal, $p:expr) => {
        case!($name, Ctx, since 12000 TILED, |e| { tiled(e, $p) })
    };
}

macro_rules! i {
    ($name:literal, $p:expr) => {
        case!($name, Ctx, since 12000 IM2COL, |e| { im2col(e, $p) })
    };
}

pub fn cases() -> Vec<Case> {
    [tiled_cases(), im2col_cases()].concat()
}

fn tiled_cases() -> Vec<Case> {
    vec![
        t!("tensor_map.tiled_ok", T),
        case!("tensor_map.tiled_no_context", Init, since 12000 TILED, |e| {
            let mut buf = Buf::new();
            let (dims, strides, boxes, es) = (T.dims, T.strides, T.boxes, T.es);
            let st = e.p.cuTensorMapEncodeTiled(
                buf.at(0),
                CUtensorMapDataType(7),
                2,
                0x7000_0000_0000usize as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                es.as_ptr(),
                CUtensorMapInterleave(0),
                CUtensorMapSwizzle(0),
                CUtensorMapL2promotion(0),
                CUtensorMapFloatOOBfill(0),
            );
            Out::of(st).eq("written", buf.written(0))
        }),
        t!("tensor_map.tiled_null_map", Tiled { null_map: true, ..T }),
        t!("tensor_map.tiled_map_unaligned", Tiled { map_offset: 8, ..T }),
        t!("tensor_map.tiled_bad_type", Tiled { t: 16, ..T }),
        t!("tensor_map.tiled_rank_0", Tiled { rank: 0, ..T }),
        t!("tensor_map.tiled_rank_6", Tiled { rank: 6, ..T }),
        t!("tensor_map.tiled_rank_1_null_strides", Tiled { rank: 1, null_strides: true, ..T }),
        t!("tensor_map.tiled_rank_2_null_strides", Tiled { null_strides: true, ..T }),
        t!("tensor_map.tiled_null_dims", Tiled { null_dims: true, ..T }),
        t!("tensor_map.tiled_address_null", Tiled { null_address: true, ..T }),
        t!("tensor_map.tiled_address_8", Tiled { shift: 8, ..T }),
        t!("tensor_map.tiled_address_16", Tiled { shift: 16, ..T }),
        t!("tensor_map.tiled_dim_0", Tiled { dims: [64, 0, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_dim_2_32", Tiled { dims: [64, 1 << 32, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_dim_over_2_32", Tiled { dims: [64, (1 << 32) + 1, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_stride_not_16", Tiled { strides: [264, 0, 0, 0], ..T }),
        t!("tensor_map.tiled_stride_2_40", Tiled { strides: [1 << 40, 0, 0, 0], ..T }),
        t!("tensor_map.tiled_stride_below_2_40", Tiled { strides: [(1 << 40) - 16, 0, 0, 0], ..T }),
        t!("tensor_map.tiled_box_0", Tiled { boxes: [32, 0, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_box_256", Tiled { boxes: [32, 256, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_box_257", Tiled { boxes: [32, 257, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_box_inner_8_bytes", Tiled { boxes: [2, 8, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_element_stride_8", Tiled { es: [1, 8, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_element_stride_9", Tiled { es: [1, 9, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_element_stride_0_second", Tiled { es: [1, 0, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_element_stride_0_first_ignored", Tiled { es: [0, 1, 1, 1, 1], ..T }),
        t!("tensor_map.tiled_interleave_16b_rank_2", Tiled { il: 1, ..T }),
        t!("tensor_map.tiled_interleave_32b_ok", T32),
        t!("tensor_map.tiled_interleave_32b_swizzle_none", Tiled { sw: 0, ..T32 }),
        t!("tensor_map.tiled_interleave_32b_stride_16", Tiled { strides: [48, 1024, 0, 0], ..T32 }),
        t!("tensor_map.tiled_interleave_32b_address_16", Tiled { shift: 16, ..T32 }),
        t!("tensor_map.tiled_interleave_3", Tiled { il: 3, rank: 3, ..T32 }),
        t!("tensor_map.tiled_swizzle_32b_inner_32", Tiled { boxes: [8, 8, 1, 1, 1], sw: 1, ..T }),
        t!("tensor_map.tiled_swizzle_32b_inner_64", Tiled { boxes: [16, 8, 1, 1, 1], sw: 1, ..T }),
        t!("tensor_map.tiled_swizzle_64b_inner_128", Tiled { sw: 2, ..T }),
        t!("tensor_map.tiled_swizzle_128b_inner_128", Tiled { sw: 3, ..T }),
        t!("tensor_map.tiled_swizzle_128b_inner_256", Tiled { boxes: [64, 8, 1, 1, 1], sw: 3, ..T }),
        t!("tensor_map.tiled_swizzle_128b_atom_32b", Tiled { sw: 4, ..T }),
        t!("tensor_map.tiled_swizzle_7", Tiled { sw: 7, ..T }),
        t!("tensor_map.tiled_l2_256b", Tiled { l2: 3, ..T }),
        t!("tensor_map.tiled_l2_4", Tiled { l2: 4, ..T }),
        t!("tensor_map.tiled_oob_nan_float", Tiled { oob: 1, ..T }),
        t!("tensor_map.tiled_oob_nan_uint32", Tiled { oob: 1, t: 2, ..T }),
        t!("tensor_map.tiled_oob_2", Tiled { oob: 2, ..T }),
        t!("tensor_map.tiled_type_16u4_align8b", Tiled { t: 13, boxes: [32, 8, 1, 1, 1], ..T }),
    ]
}

fn im2col_cases() -> Vec<Case> {
    vec![
        i!("tensor_map.im2col_ok", I),
        i!("tensor_map.im2col_rank_2", Im2col { rank: 2, ..I }),
        i!("tensor_map.im2col_rank_6", Im2col { rank: 6, ..I }),
        i!("tensor_map.im2col_rank_4_corner_minus_129", Im2col { lower: [-129, -1, 0], ..I }),
        i!("tensor_map.im2col_rank_4_corner_127", Im2col { upper: [127, -1, 0], ..I }),
        i!(
            "tensor_map.im2col_rank_3_corner_minus_200",
            Im2col {
                rank: 3,
                dims: [16, 256, 2, 1, 1],
                strides: [64, 16384, 0, 0],
                lower: [-200, 0, 0],
                upper: [0, 0, 0],
                ..I
            }
        ),
        i!(
            "tensor_map.im2col_zero_area",
            Im2col {
                rank: 3,
                dims: [16, 4, 2, 1, 1],
                strides: [64, 256, 0, 0],
                lower: [0, 0, 0],
                upper: [-4, 0, 0],
                ..I
            }
        ),
        i!("tensor_map.im2col_channels_0", Im2col { channels: 0, ..I }),
        i!("tensor_map.im2col_channels_257", Im2col { channels: 257, ..I }),
        i!("tensor_map.im2col_pixels_0", Im2col { pixels: 0, ..I }),
        i!("tensor_map.im2col_pixels_1024", Im2col { pixels: 1024, ..I }),
        i!("tensor_map.im2col_pixels_1025", Im2col { pixels: 1025, ..I }),
        i!("tensor_map.im2col_swizzle_32b_channels_64_bytes", Im2col { sw: 1, ..I }),
        i!("tensor_map.im2col_swizzle_64b_channels_64_bytes", Im2col { sw: 2, ..I }),
        case!("tensor_map.im2col_wide_on_h200", Ctx, since 12080 WIDE, |e| { wide(e, 4, 3) }),
        case!("tensor_map.im2col_wide_rank_2", Ctx, since 12080 WIDE, |e| { wide(e, 2, 3) }),
        case!("tensor_map.im2col_wide_swizzle_none", Ctx, since 12080 WIDE, |e| { wide(e, 4, 0) }),
        case!("tensor_map.replace_ok", Ctx, since 12000 REPLACE, |e| { replace(e, T, 256, false) }),
        case!("tensor_map.replace_address_8", Ctx, since 12000 REPLACE, |e| { replace(e, T, 8, false) }),
        case!("tensor_map.replace_address_null", Ctx, since 12000 REPLACE, |e| { replace(e, T, 0, true) }),
        case!("tensor_map.replace_interleave_32b_address_16", Ctx, since 12000 REPLACE, |e| {
            replace(e, T32, 16, false)
        }),
        case!("tensor_map.replace_null_map", Ctx, since 12000 REPLACE, |e| {
            Out::of(e.p.cuTensorMapReplaceAddress(std::ptr::null_mut(), 0x7000_0000_0000usize as *mut std::ffi::c_void))
        }),
    ]
}
