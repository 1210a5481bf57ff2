//! Batches and the entry points around them: `cuMemcpy3DBatchAsync`, the managed-memory
//! batches (`cuMemPrefetchBatchAsync`, `cuMemDiscardBatchAsync`,
//! `cuMemDiscardAndPrefetchBatchAsync`), `cuMemBatchDecompressAsync`, batch memory
//! operation graph nodes, `cuMemMapArrayAsync` on a non-sparse array, and
//! `cuGreenCtxRecordEvent`/`cuGreenCtxWaitEvent`. No case passes a made-up handle (a real
//! driver may crash on one).

use std::ffi::c_void;

use cudrv::call;
use cudrv::sys::*;

use super::{alloc, case, made, number, step, stream, with, Case, Env, Out, UNTOUCHED};

const SIZE: usize = 1 << 16;

fn managed(e: &Env) -> Result<CUdeviceptr, Out> {
    let mut d = 0;
    let flags = CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0;
    // SAFETY: a valid out-pointer.
    made("cuMemAllocManaged", unsafe { e.p.cuMemAllocManaged(&mut d, SIZE, flags) }, d)
}

fn device_loc(id: i32) -> CUmemLocation {
    let mut l = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
    l.__bindgen_anon_1.id = id;
    l
}

fn host_loc() -> CUmemLocation {
    CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, ..Default::default() }
}

/// What a prefetch batch is made of.
#[derive(Clone, Copy)]
struct Prefetch {
    /// Offsets of the two ranges into a managed allocation (`None`: device memory).
    managed: bool,
    sizes: [usize; 2],
    count: usize,
    locs: [CUmemLocation; 2],
    idxs: [usize; 2],
    nlocs: usize,
    flags: u64,
    /// 0: a stream of the case's; 1: NULL; 2: CU_STREAM_LEGACY.
    stream: u8,
    null_dptrs: bool,
}

const P: Prefetch = Prefetch {
    managed: true,
    sizes: [4096, 4096],
    count: 2,
    locs: [CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1 { id: 0 },
    }; 2],
    idxs: [0, 1],
    nlocs: 1,
    flags: 0,
    stream: 0,
    null_dptrs: false,
};

/// 0: prefetch, 1: discard, 2: discard and prefetch. The status, and after a
/// synchronisation the last prefetch location of the first range.
fn batch(e: &Env, p: Prefetch, which: u8) -> Out {
    let d = with!(if p.managed { managed(e) } else { alloc(e, SIZE) });
    let s = match p.stream {
        0 => with!(stream(e)),
        1 => std::ptr::null_mut(),
        _ => 1usize as CUstream,
    };
    let mut dptrs = [d, d + 8192];
    let mut sizes = p.sizes;
    let mut locs = p.locs;
    let mut idxs = p.idxs;
    let dp = if p.null_dptrs { std::ptr::null_mut() } else { dptrs.as_mut_ptr() };
    // SAFETY: arrays of 2 elements (counts of at most 2), or NULL on purpose.
    let st = unsafe {
        match which {
            0 => e.p.cuMemPrefetchBatchAsync(
                dp,
                sizes.as_mut_ptr(),
                p.count,
                locs.as_mut_ptr(),
                idxs.as_mut_ptr(),
                p.nlocs,
                p.flags,
                s,
            ),
            1 => e.p.cuMemDiscardBatchAsync(dp, sizes.as_mut_ptr(), p.count, p.flags, s),
            _ => e.p.cuMemDiscardAndPrefetchBatchAsync(
                dp,
                sizes.as_mut_ptr(),
                p.count,
                locs.as_mut_ptr(),
                idxs.as_mut_ptr(),
                p.nlocs,
                p.flags,
                s,
            ),
        }
    };
    // SAFETY: no arguments.
    let sync = unsafe { e.p.cuCtxSynchronize() };
    if !p.managed {
        return Out::of(st).eq("sync", sync);
    }
    let mut last: i32 = 77;
    let attr = CUmem_range_attribute::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION;
    // SAFETY: 4 bytes at `last`.
    let got = unsafe { e.p.cuMemRangeGetAttribute((&raw mut last).cast(), 4, attr, d, 4096) };
    let last = if got == CUresult::CUDA_SUCCESS { last.to_string() } else { got.to_string() };
    Out::of(st).eq("sync", sync).eq("last_prefetch", last)
}

const PREFETCH: &[cudrv::Call] = &[call::cuMemPrefetchBatchAsync];
const DISCARD: &[cudrv::Call] = &[call::cuMemDiscardBatchAsync];
const BOTH: &[cudrv::Call] = &[call::cuMemDiscardAndPrefetchBatchAsync];

macro_rules! pf {
    ($name:literal, $which:literal, $calls:expr, $p:expr) => {
        case!($name, Ctx, since 13000 $calls, |e| { batch(e, $p, $which) })
    };
}

fn managed_cases() -> Vec<Case> {
    vec![
        pf!("managed_batch.prefetch_ok", 0, PREFETCH, P),
        pf!(
            "managed_batch.prefetch_two_locations",
            0,
            PREFETCH,
            Prefetch { nlocs: 2, locs: [host_loc(), device_loc(0)], ..P }
        ),
        pf!("managed_batch.prefetch_host", 0, PREFETCH, Prefetch { locs: [host_loc(), host_loc()], ..P }),
        pf!("managed_batch.prefetch_count_0", 0, PREFETCH, Prefetch { count: 0, ..P }),
        pf!("managed_batch.prefetch_null_dptrs", 0, PREFETCH, Prefetch { null_dptrs: true, ..P }),
        pf!("managed_batch.prefetch_flags_1", 0, PREFETCH, Prefetch { flags: 1, ..P }),
        pf!("managed_batch.prefetch_null_stream", 0, PREFETCH, Prefetch { stream: 1, ..P }),
        pf!("managed_batch.prefetch_legacy_stream", 0, PREFETCH, Prefetch { stream: 2, ..P }),
        pf!("managed_batch.prefetch_device_memory", 0, PREFETCH, Prefetch { managed: false, ..P }),
        pf!("managed_batch.prefetch_size_0", 0, PREFETCH, Prefetch { sizes: [0, 4096], ..P }),
        pf!("managed_batch.prefetch_past_allocation", 0, PREFETCH, Prefetch { sizes: [4096, SIZE], ..P }),
        pf!("managed_batch.prefetch_no_locations", 0, PREFETCH, Prefetch { nlocs: 0, ..P }),
        pf!("managed_batch.prefetch_first_index_1", 0, PREFETCH, Prefetch { idxs: [1, 1], ..P }),
        pf!("managed_batch.prefetch_indices_not_increasing", 0, PREFETCH, Prefetch { nlocs: 2, idxs: [0, 0], ..P }),
        pf!("managed_batch.prefetch_index_past_count", 0, PREFETCH, Prefetch { nlocs: 2, idxs: [0, 2], ..P }),
        pf!("managed_batch.prefetch_more_locations_than_ops", 0, PREFETCH, Prefetch { count: 1, nlocs: 2, ..P }),
        pf!("managed_batch.prefetch_bad_device", 0, PREFETCH, Prefetch { locs: [device_loc(7), device_loc(7)], ..P }),
        pf!("managed_batch.discard_ok", 1, DISCARD, P),
        pf!("managed_batch.discard_count_0", 1, DISCARD, Prefetch { count: 0, ..P }),
        pf!("managed_batch.discard_flags_1", 1, DISCARD, Prefetch { flags: 1, ..P }),
        pf!("managed_batch.discard_null_stream", 1, DISCARD, Prefetch { stream: 1, ..P }),
        pf!("managed_batch.discard_device_memory", 1, DISCARD, Prefetch { managed: false, ..P }),
        pf!("managed_batch.discard_and_prefetch_ok", 2, BOTH, P),
        pf!("managed_batch.discard_and_prefetch_no_locations", 2, BOTH, Prefetch { nlocs: 0, ..P }),
        pf!("managed_batch.discard_and_prefetch_device_memory", 2, BOTH, Prefetch { managed: false, ..P }),
    ]
}

/// One decompression of 256 bytes between two device allocations, with `count`, `flags`
/// and NULL params on request.
fn decompress(e: &Env, count: usize, flags: u32, null: bool) -> Out {
    let (src, dst, act) = (with!(alloc(e, 256)), with!(alloc(e, 256)), with!(alloc(e, 4)));
    let s = with!(stream(e));
    let mut p = CUmemDecompressParams {
        srcNumBytes: 256,
        dstNumBytes: 256,
        dstActBytes: act as *mut u32,
        src: src as *const c_void,
        dst: dst as *mut c_void,
        algo: CUmemDecompressAlgorithm::CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE,
        ..Default::default()
    };
    let mut index = UNTOUCHED as usize;
    let pp = if null { std::ptr::null_mut() } else { &raw mut p };
    // SAFETY: one parameter set (or NULL on purpose), a valid index pointer.
    let st = unsafe { e.p.cuMemBatchDecompressAsync(pp, count, flags, &mut index, s) };
    Out::of(st).eq("error_index", number(index as u64))
}

const DECOMPRESS: &[cudrv::Call] = &[call::cuMemBatchDecompressAsync];

fn decompress_cases() -> Vec<Case> {
    vec![
        case!("decompress.one_deflate", Ctx, since 12060 DECOMPRESS, |e| { decompress(e, 1, 0, false) }),
        case!("decompress.null_params", Ctx, since 12060 DECOMPRESS, |e| { decompress(e, 1, 0, true) }),
        case!("decompress.count_0", Ctx, since 12060 DECOMPRESS, |e| { decompress(e, 0, 0, false) }),
        case!("decompress.flags_1", Ctx, since 12060 DECOMPRESS, |e| { decompress(e, 1, 1, false) }),
        case!("decompress.attributes", Init, |e| {
            let (mut mask, mut max) = (-7, -7);
            let a = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK;
            let b = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH;
            step!(e.p.cuDeviceGetAttribute(&mut mask, a, e.dev));
            Out::of(e.p.cuDeviceGetAttribute(&mut max, b, e.dev)).eq("mask", mask).eq("max_length", max)
        }),
    ]
}

/// A pointer operand.
fn ptr_operand(p: CUdeviceptr, row: usize, layer: usize) -> CUmemcpy3DOperand {
    let mut o =
        CUmemcpy3DOperand { type_: CUmemcpy3DOperandType::CU_MEMCPY_OPERAND_TYPE_POINTER, ..Default::default() };
    o.op.ptr = CUmemcpy3DOperand_st__bindgen_ty_1__bindgen_ty_1 {
        ptr: p,
        rowLength: row,
        layerHeight: layer,
        ..Default::default()
    };
    o
}

/// An array operand at offset 0.
fn array_operand(a: CUarray) -> CUmemcpy3DOperand {
    let mut o = CUmemcpy3DOperand { type_: CUmemcpy3DOperandType::CU_MEMCPY_OPERAND_TYPE_ARRAY, ..Default::default() };
    o.op.array = CUmemcpy3DOperand_st__bindgen_ty_1__bindgen_ty_2 { array: a, offset: CUoffset3D::default() };
    o
}

/// A 4 x 4 array of `format` (1 channel).
fn array(e: &Env, format: CUarray_format) -> Result<CUarray, Out> {
    let mut a = std::ptr::null_mut();
    let d = CUDA_ARRAY3D_DESCRIPTOR { Width: 4, Height: 4, Depth: 0, Format: format, NumChannels: 1, Flags: 0 };
    // SAFETY: a valid out-pointer and descriptor.
    made("cuArray3DCreate", unsafe { e.p.cuArray3DCreate(&mut a, &d) }, a)
}

/// A copy of 64 bytes (16 floats, 4 x 4) from `src` to `dst`.
fn op(src: CUmemcpy3DOperand, dst: CUmemcpy3DOperand, w: usize, h: usize) -> CUDA_MEMCPY3D_BATCH_OP {
    CUDA_MEMCPY3D_BATCH_OP {
        src,
        dst,
        extent: CUextent3D { width: w, height: h, depth: 1 },
        srcAccessOrder: CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
        flags: 0,
    }
}

/// Runs `ops` (13.0 form) on a fresh stream (`null`: NULL) with `flags`; the status and
/// whether `check` (device memory of 16 floats) then holds 0..16.
fn run3d(e: &Env, ops: &mut [CUDA_MEMCPY3D_BATCH_OP], flags: u64, null: bool, check: CUdeviceptr) -> Out {
    let s = if null { std::ptr::null_mut() } else { with!(stream(e)) };
    let ptr = if ops.is_empty() { std::ptr::null_mut() } else { ops.as_mut_ptr() };
    // SAFETY: `ops.len()` operations.
    let st = unsafe { e.p.cuMemcpy3DBatchAsync(ops.len(), ptr, flags, s) };
    // SAFETY: no arguments.
    let sync = unsafe { e.p.cuCtxSynchronize() };
    let back = with!(super::read_f32(e, check, 16));
    let copied = back.iter().enumerate().all(|(i, v)| *v == i as f32);
    Out::of(st).eq("sync", sync).eq("copied", copied)
}

/// A source of 0..16 and a zeroed destination, 64 bytes each.
fn ends(e: &Env) -> Result<(CUdeviceptr, CUdeviceptr), Out> {
    let (a, b) = (alloc(e, 64)?, alloc(e, 64)?);
    super::write_f32(e, a, &(0..16).map(|i| i as f32).collect::<Vec<_>>())?;
    super::write_f32(e, b, &[0.0; 16])?;
    Ok((a, b))
}

/// The default `cuMemcpy3DBatchAsync` binds 13.0's variant (12.8's is the `v12080` cases').
const COPY3D: &[cudrv::Call] = &[call::cuMemcpy3DBatchAsync];

macro_rules! c3 {
    ($name:literal, |$e:ident, $a:ident, $b:ident| $ops:expr, $flags:expr, $null:expr) => {
        case!($name, Ctx, since 13000 COPY3D, |$e| {
            let ($a, $b) = with!(ends($e));
            let mut ops = $ops;
            run3d($e, &mut ops, $flags, $null, $b)
        })
    };
}

fn copy3d_cases() -> Vec<Case> {
    vec![
        c3!("memcpy3d_batch.pointers", |e, a, b| [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1)], 0, false),
        c3!(
            "memcpy3d_batch.pointers_rows",
            |e, a, b| [op(ptr_operand(a, 16, 0), ptr_operand(b, 0, 0), 16, 4)],
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.two_halves",
            |e, a, b| {
                [
                    op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 32, 1),
                    op(ptr_operand(a + 32, 0, 0), ptr_operand(b + 32, 0, 0), 32, 1),
                ]
            },
            0,
            false
        ),
        case!("memcpy3d_batch.through_array", Ctx, since 13000 COPY3D, |e| {
            let (a, b) = with!(ends(e));
            let arr = with!(array(e, CUarray_format::CU_AD_FORMAT_FLOAT));
            let mut first = [op(ptr_operand(a, 0, 0), array_operand(arr), 4, 4)];
            let s = with!(stream(e));
            step!(e.p.cuMemcpy3DBatchAsync(1, first.as_mut_ptr(), 0, s));
            let mut second = [op(array_operand(arr), ptr_operand(b, 0, 0), 4, 4)];
            run3d(e, &mut second, 0, false, b)
        }),
        c3!(
            "memcpy3d_batch.count_0",
            |e, a, b| {
                let _ = (a, b);
                Vec::<CUDA_MEMCPY3D_BATCH_OP>::new()
            },
            0,
            false
        ),
        c3!("memcpy3d_batch.flags_1", |e, a, b| [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1)], 1, false),
        c3!("memcpy3d_batch.null_stream", |e, a, b| [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1)], 0, true),
        c3!("memcpy3d_batch.zero_width", |e, a, b| [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 0, 1)], 0, false),
        c3!(
            "memcpy3d_batch.row_length_below_width",
            |e, a, b| [op(ptr_operand(a, 8, 0), ptr_operand(b, 0, 0), 16, 4)],
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.layer_height_below_height",
            |e, a, b| [op(ptr_operand(a, 0, 2), ptr_operand(b, 0, 0), 16, 4)],
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.operand_type_3",
            |e, a, b| {
                let mut src = ptr_operand(a, 0, 0);
                src.type_ = CUmemcpy3DOperandType(3);
                [op(src, ptr_operand(b, 0, 0), 64, 1)]
            },
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.access_order_invalid",
            |e, a, b| {
                let mut o = op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1);
                o.srcAccessOrder = CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
                [o]
            },
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.access_order_during_call",
            |e, a, b| {
                let mut o = op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1);
                o.srcAccessOrder = CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
                [o]
            },
            0,
            false
        ),
        c3!(
            "memcpy3d_batch.op_flags_2",
            |e, a, b| {
                let mut o = op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1);
                o.flags = 2;
                [o]
            },
            0,
            false
        ),
        case!("memcpy3d_batch.arrays_of_other_element_sizes", Ctx, since 13000 COPY3D, |e| {
            let f = with!(array(e, CUarray_format::CU_AD_FORMAT_FLOAT));
            let u = with!(array(e, CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8));
            let s = with!(stream(e));
            let mut ops = [op(array_operand(f), array_operand(u), 4, 4)];
            Out::of(e.p.cuMemcpy3DBatchAsync(1, ops.as_mut_ptr(), 0, s))
        }),
        case!("memcpy3d_batch.v12080_fail_index", Ctx, since 12080 &[call::cuMemcpy3DBatchAsync_v12080], |e| {
            let (a, b) = with!(ends(e));
            let s = with!(stream(e));
            let mut ops = [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1), op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 0, 1)];
            let mut index = UNTOUCHED as usize;
            let st = e.p.cuMemcpy3DBatchAsync_v12080(2, ops.as_mut_ptr(), &mut index, 0, s);
            Out::of(st).eq("fail_index", number(index as u64))
        }),
        case!("memcpy3d_batch.v12080_fail_index_flags", Ctx, since 12080 &[call::cuMemcpy3DBatchAsync_v12080], |e| {
            let (a, b) = with!(ends(e));
            let s = with!(stream(e));
            let mut ops = [op(ptr_operand(a, 0, 0), ptr_operand(b, 0, 0), 64, 1)];
            let mut index = UNTOUCHED as usize;
            let st = e.p.cuMemcpy3DBatchAsync_v12080(1, ops.as_mut_ptr(), &mut index, 1, s);
            Out::of(st).eq("fail_index", number(index as u64))
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [managed_cases(), decompress_cases(), copy3d_cases(), super::batch_more::cases()].concat()
}
