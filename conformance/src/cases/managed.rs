//! Managed memory and pointer attributes (issue 18, item 6): `cuMemAllocManaged` and its
//! flags, `cuStreamAttachMemAsync`, both forms of `cuMemPrefetchAsync` and `cuMemAdvise`,
//! `cuMemRangeGetAttribute`, and the pointer attributes of managed, pinned, registered,
//! device and virtual memory. Recorded on the H200 (`expected/h200-driver-13000.txt`).

use std::ffi::c_int;

use super::{case, made, number, step, stream, with, Case, Env, Out, UNTOUCHED};
use cudrv::call;
use cudrv::sys::*;

const SIZE: usize = 1 << 16;
const GLOBAL: u32 = CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0;
const HOST: u32 = CUmemAttach_flags::CU_MEM_ATTACH_HOST.0;
const SINGLE: u32 = CUmemAttach_flags::CU_MEM_ATTACH_SINGLE.0;
const CPU: CUdevice = -1;

type A = CUmem_advise;
type R = CUmem_range_attribute;
type PA = CUpointer_attribute;

/// `SIZE` bytes of managed memory attached globally.
fn managed(e: &Env) -> Result<CUdeviceptr, Out> {
    let mut d = 0;
    // SAFETY: a valid out-pointer.
    made("cuMemAllocManaged", unsafe { e.p.cuMemAllocManaged(&mut d, SIZE, GLOBAL) }, d)
}

/// `SIZE` bytes of device memory.
fn device(e: &Env) -> Result<CUdeviceptr, Out> {
    let mut d = 0;
    // SAFETY: a valid out-pointer.
    made("cuMemAlloc", unsafe { e.p.cuMemAlloc(&mut d, SIZE) }, d)
}

fn alloc(e: &Env, size: usize, flags: u32) -> Out {
    let mut d = UNTOUCHED;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuMemAllocManaged(&mut d, size, flags) };
    let d = if d == UNTOUCHED || d == 0 { number(d) } else { "set".into() };
    Out::of(st).eq("dptr", d)
}

/// A location of `type_` with `id`.
fn location(type_: CUmemLocationType, id: c_int) -> CUmemLocation {
    let mut l = CUmemLocation { type_, ..Default::default() };
    l.__bindgen_anon_1.id = id;
    l
}

fn on_device(id: c_int) -> CUmemLocation {
    location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id)
}

/// One range attribute of the whole managed range at `d`, 4 bytes.
fn range_attr(e: &Env, attr: R, d: CUdeviceptr, count: usize) -> Out {
    let mut v: u32 = UNTOUCHED as u32;
    // SAFETY: 4 writable bytes.
    let st = unsafe { e.p.cuMemRangeGetAttribute((&raw mut v).cast(), 4, attr, d, count) };
    Out::of(st).eq("value", super::number32(v).replace("4294967295", "-1").replace("4294967294", "-2"))
}

/// One pointer attribute of `ptr` (8 bytes wide, as wide as any): status and value.
fn pointer_attr(e: &Env, attr: PA, ptr: CUdeviceptr) -> (CUresult, u64) {
    let mut v: u64 = UNTOUCHED;
    // SAFETY: a valid out-pointer of 8 bytes.
    let st = unsafe { e.p.cuPointerGetAttribute((&raw mut v).cast(), attr, ptr) };
    (st, v)
}

/// One 4-byte pointer attribute of `ptr`: its status, or its value.
fn pointer_attr4(e: &Env, attr: PA, ptr: CUdeviceptr) -> String {
    let mut v: u32 = UNTOUCHED as u32;
    // SAFETY: a valid out-pointer of 4 bytes, as wide as the attribute.
    let st = unsafe { e.p.cuPointerGetAttribute((&raw mut v).cast(), attr, ptr) };
    if st == CUresult::CUDA_SUCCESS {
        super::number32(v)
    } else {
        format!("{st}")
    }
}

/// The attributes a kind of memory is told apart by: memory type, managed, whether the
/// host pointer and device pointer are `ptr`, mapped, legacy IPC, allowed handle types,
/// whether the context is the case's.
fn describe(e: &Env, ptr: CUdeviceptr) -> Out {
    let get = |attr| pointer_attr(e, attr, ptr);
    let show = |(st, v): (CUresult, u64)| if st == CUresult::CUDA_SUCCESS { number(v) } else { format!("{st}") };
    let same =
        |(st, v): (CUresult, u64)| if st == CUresult::CUDA_SUCCESS { (v == ptr).to_string() } else { format!("{st}") };
    let (st, ctx) = get(PA::CU_POINTER_ATTRIBUTE_CONTEXT);
    let ctx = if st != CUresult::CUDA_SUCCESS {
        format!("{st}")
    } else if ctx == e.ctx as u64 {
        "current".into()
    } else {
        number(ctx)
    };
    Out::of(CUresult::CUDA_SUCCESS)
        .eq("type", pointer_attr4(e, PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr))
        .eq("managed", pointer_attr4(e, PA::CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr))
        .eq("host_is_ptr", same(get(PA::CU_POINTER_ATTRIBUTE_HOST_POINTER)))
        .eq("device_is_ptr", same(get(PA::CU_POINTER_ATTRIBUTE_DEVICE_POINTER)))
        .eq("mapped", pointer_attr4(e, PA::CU_POINTER_ATTRIBUTE_MAPPED, ptr))
        .eq("legacy_ipc", pointer_attr4(e, PA::CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, ptr))
        .eq("handle_types", show(get(PA::CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES)))
        .eq("context", ctx)
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("managed.alloc_global", Ctx, |e| { alloc(e, SIZE, GLOBAL) }),
        case!("managed.alloc_host", Ctx, |e| { alloc(e, SIZE, HOST) }),
        case!("managed.alloc_zero", Ctx, |e| { alloc(e, 0, GLOBAL) }),
        case!("managed.alloc_flags_zero", Ctx, |e| { alloc(e, SIZE, 0) }),
        case!("managed.alloc_flags_both", Ctx, |e| { alloc(e, SIZE, GLOBAL | HOST) }),
        case!("managed.alloc_flags_single", Ctx, |e| { alloc(e, SIZE, SINGLE) }),
        case!("managed.alloc_no_context", Init, |e| { alloc(e, SIZE, GLOBAL) }),
        case!("managed.host_writes_then_htod_reads", Ctx, |e| {
            // Managed memory as the host source of a copy to device memory.
            let m = with!(managed(e));
            let d = with!(device(e));
            std::ptr::write_bytes(m as usize as *mut u8, 7, 16);
            step!(e.p.cuMemcpyHtoD(d, m as usize as *const std::ffi::c_void, 16));
            let mut back = [0u8; 16];
            let st = e.p.cuMemcpyDtoH(back.as_mut_ptr().cast(), d, 16);
            Out::of(st).eq("copied", back == [7; 16])
        }),
        case!("managed.attach_single", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            step!(e.p.cuStreamAttachMemAsync(s, m, 0, SINGLE));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("managed.attach_single_legacy", Ctx, |e| {
            let m = with!(managed(e));
            Out::of(e.p.cuStreamAttachMemAsync(std::ptr::null_mut(), m, 0, SINGLE))
        }),
        case!("managed.attach_host", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuStreamAttachMemAsync(s, m, 0, HOST))
        }),
        case!("managed.attach_bad_flags", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuStreamAttachMemAsync(s, m, 0, 8))
        }),
        case!("managed.attach_whole_length", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuStreamAttachMemAsync(s, m, SIZE, GLOBAL))
        }),
        case!("managed.attach_part", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuStreamAttachMemAsync(s, m, 4096, GLOBAL))
        }),
        case!("managed.attach_device_memory", Ctx, |e| {
            let (d, s) = (with!(device(e)), with!(stream(e)));
            Out::of(e.p.cuStreamAttachMemAsync(s, d, 0, GLOBAL))
        }),
        case!("managed.prefetch_device", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            step!(e.p.cuMemPrefetchAsync_v8000(m, SIZE, 0, s));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("managed.prefetch_cpu", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v8000(m, SIZE, CPU, s))
        }),
        case!("managed.prefetch_bad_device", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v8000(m, SIZE, 7, s))
        }),
        case!("managed.prefetch_device_memory", Ctx, |e| {
            let (d, s) = (with!(device(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v8000(d, SIZE, 0, s))
        }),
        case!("managed.prefetch_past_end", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v8000(m, SIZE + 4096, 0, s))
        }),
        case!("managed.prefetch_zero_count", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v8000(m, 0, 0, s))
        }),
        case!("managed.prefetch_v2_device", Ctx, since 12020 &[call::cuMemPrefetchAsync_v12020], |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            step!(e.p.cuMemPrefetchAsync_v12020(m, SIZE, on_device(0), 0, s));
            Out::of(e.p.cuStreamSynchronize(s))
        }),
        case!("managed.prefetch_v2_host", Ctx, since 12020 &[call::cuMemPrefetchAsync_v12020], |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            let host = location(CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, 0);
            Out::of(e.p.cuMemPrefetchAsync_v12020(m, SIZE, host, 0, s))
        }),
        case!("managed.prefetch_v2_bad_flags", Ctx, since 12020 &[call::cuMemPrefetchAsync_v12020], |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v12020(m, SIZE, on_device(0), 1, s))
        }),
        case!("managed.prefetch_v2_bad_device", Ctx, since 12020 &[call::cuMemPrefetchAsync_v12020], |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            Out::of(e.p.cuMemPrefetchAsync_v12020(m, SIZE, on_device(7), 0, s))
        }),
        case!("managed.prefetch_v2_invalid_type", Ctx, since 12020 &[call::cuMemPrefetchAsync_v12020], |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            let invalid = location(CUmemLocationType::CU_MEM_LOCATION_TYPE_INVALID, 0);
            Out::of(e.p.cuMemPrefetchAsync_v12020(m, SIZE, invalid, 0, s))
        }),
        case!("managed.advise_read_mostly", Ctx, |e| {
            let m = with!(managed(e));
            step!(e.p.cuMemAdvise_v8000(m, SIZE, A::CU_MEM_ADVISE_SET_READ_MOSTLY, 0));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, SIZE)
        }),
        case!("managed.advise_read_mostly_part", Ctx, |e| {
            // Advised over the first half only: the whole range is not read mostly.
            let m = with!(managed(e));
            step!(e.p.cuMemAdvise_v8000(m, SIZE / 2, A::CU_MEM_ADVISE_SET_READ_MOSTLY, 0));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, SIZE)
        }),
        case!("managed.advise_bad_advice", Ctx, |e| {
            let m = with!(managed(e));
            Out::of(e.p.cuMemAdvise_v8000(m, SIZE, CUmem_advise(99), 0))
        }),
        case!("managed.advise_preferred_bad_device", Ctx, |e| {
            let m = with!(managed(e));
            Out::of(e.p.cuMemAdvise_v8000(m, SIZE, A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 7))
        }),
        case!("managed.advise_device_memory", Ctx, |e| {
            let d = with!(device(e));
            Out::of(e.p.cuMemAdvise_v8000(d, SIZE, A::CU_MEM_ADVISE_SET_READ_MOSTLY, 0))
        }),
        case!("managed.advise_v2_accessed_by_host", Ctx, since 12020 &[call::cuMemAdvise_v12020], |e| {
            let m = with!(managed(e));
            let host = location(CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, 0);
            step!(e.p.cuMemAdvise_v12020(m, SIZE, A::CU_MEM_ADVISE_SET_ACCESSED_BY, host));
            let mut v = [UNTOUCHED as u32 as i32; 3];
            let st = e.p.cuMemRangeGetAttribute(v.as_mut_ptr().cast(), 12, R::CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, SIZE);
            Out::of(st).eq("accessed_by", format!("{v:?}").replace(' ', ""))
        }),
        case!("managed.range_preferred_device", Ctx, |e| {
            let m = with!(managed(e));
            step!(e.p.cuMemAdvise_v8000(m, SIZE, A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 0));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, SIZE)
        }),
        case!("managed.range_preferred_none", Ctx, |e| {
            let m = with!(managed(e));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, SIZE)
        }),
        case!("managed.range_accessed_by", Ctx, |e| {
            let m = with!(managed(e));
            step!(e.p.cuMemAdvise_v8000(m, SIZE, A::CU_MEM_ADVISE_SET_ACCESSED_BY, 0));
            step!(e.p.cuMemAdvise_v8000(m, SIZE, A::CU_MEM_ADVISE_SET_ACCESSED_BY, CPU));
            let mut v = [UNTOUCHED as u32 as i32; 3];
            let st =
                e.p.cuMemRangeGetAttribute(v.as_mut_ptr().cast(), 12, R::CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, SIZE);
            Out::of(st).eq("accessed_by", format!("{v:?}").replace(' ', ""))
        }),
        case!("managed.range_last_prefetch", Ctx, |e| {
            let (m, s) = (with!(managed(e)), with!(stream(e)));
            step!(e.p.cuMemPrefetchAsync_v8000(m, SIZE, 0, s));
            step!(e.p.cuStreamSynchronize(s));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, SIZE)
        }),
        case!("managed.range_never_prefetched", Ctx, |e| {
            let m = with!(managed(e));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, SIZE)
        }),
        case!("managed.range_bad_size", Ctx, |e| {
            let m = with!(managed(e));
            let mut v = 0u64;
            Out::of(e.p.cuMemRangeGetAttribute((&raw mut v).cast(), 8, R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, SIZE))
        }),
        case!("managed.range_device_memory", Ctx, |e| {
            let d = with!(device(e));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, SIZE)
        }),
        case!("managed.range_zero_count", Ctx, |e| {
            let m = with!(managed(e));
            range_attr(e, R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 0)
        }),
        case!("managed.range_bad_attribute", Ctx, |e| {
            let m = with!(managed(e));
            range_attr(e, CUmem_range_attribute(99), m, SIZE)
        }),
        case!("pointer.managed", Ctx, |e| {
            let m = with!(managed(e));
            describe(e, m + 8)
        }),
        case!("pointer.device", Ctx, |e| {
            let d = with!(device(e));
            describe(e, d + 8)
        }),
        case!("pointer.pinned", Ctx, |e| {
            let mut p = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut p, SIZE));
            describe(e, p as u64 + 8)
        }),
        case!("pointer.registered", Ctx, |e| {
            let v: &'static mut [u8] = Box::leak(vec![0u8; 3 * 4096].into_boxed_slice());
            let p = v.as_mut_ptr();
            let p = p.add(p.align_offset(4096));
            step!(e.p.cuMemHostRegister(p.cast(), 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
            describe(e, p as u64 + 8)
        }),
        case!("pointer.vmm_mapping", Ctx, |e| {
            let mib2 = 2 << 20;
            let mut prop = CUmemAllocationProp {
                type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
                requestedHandleTypes: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                ..Default::default()
            };
            prop.location = on_device(0);
            let (mut va, mut h) = (0, 0);
            step!(e.p.cuMemAddressReserve(&mut va, mib2, 0, 0, 0));
            step!(e.p.cuMemCreate(&mut h, mib2, &prop, 0));
            step!(e.p.cuMemMap(va, mib2, 0, h, 0));
            let mut d =
                CUmemAccessDesc { flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE, ..Default::default() };
            d.location = on_device(0);
            step!(e.p.cuMemSetAccess(va, mib2, &d, 1));
            describe(e, va + 8)
        }),
        case!("pointer.vmm_reserved_unmapped", Ctx, |e| {
            let mut va = 0;
            step!(e.p.cuMemAddressReserve(&mut va, 2 << 20, 0, 0, 0));
            let mut v: u32 = UNTOUCHED as u32;
            let st = e.p.cuPointerGetAttribute((&raw mut v).cast(), PA::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va);
            Out::of(st).eq("type", super::number32(v))
        }),
        case!("pointer.host_pointer_of_device_memory", Ctx, |e| {
            let d = with!(device(e));
            let (st, v) = pointer_attr(e, PA::CU_POINTER_ATTRIBUTE_HOST_POINTER, d);
            Out::of(st).eq("value", number(v))
        }),
    ]
}
