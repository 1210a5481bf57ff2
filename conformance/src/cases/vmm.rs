//! Virtual memory management (issue 18, item 7): granularity, reservations, physical
//! allocations, mappings, access, export and import of file descriptors. Recorded on the
//! H200 (`expected/h200-driver-13000.txt`).

use super::{case, made, number, step, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

const MIB2: usize = 2 << 20;
const POSIX_FD: CUmemAllocationHandleType = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

/// Pinned memory on device 0, exportable as `types`.
fn prop(types: CUmemAllocationHandleType) -> CUmemAllocationProp {
    let mut p = CUmemAllocationProp {
        type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: types,
        ..Default::default()
    };
    p.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.__bindgen_anon_1.id = 0;
    p
}

/// Read-write access for device 0.
fn rw() -> CUmemAccessDesc {
    let mut d = CUmemAccessDesc { flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE, ..Default::default() };
    d.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.__bindgen_anon_1.id = 0;
    d
}

fn granularity(e: &Env, types: CUmemAllocationHandleType, option: CUmemAllocationGranularity_flags) -> Out {
    let mut g = UNTOUCHED as usize;
    // SAFETY: valid out-pointer and properties.
    let st = unsafe { e.p.cuMemGetAllocationGranularity(&mut g, &prop(types), option) };
    Out::of(st).eq("granularity", number(g as u64))
}

/// A reservation of `size` bytes.
fn reserve(e: &Env, size: usize) -> Result<CUdeviceptr, Out> {
    let mut va = 0;
    // SAFETY: valid out-pointer.
    made("cuMemAddressReserve", unsafe { e.p.cuMemAddressReserve(&mut va, size, 0, 0, 0) }, va)
}

/// A physical allocation of `size` bytes.
fn create(e: &Env, size: usize, types: CUmemAllocationHandleType) -> Result<CUmemGenericAllocationHandle, Out> {
    let mut h = 0;
    // SAFETY: valid out-pointer and properties.
    made("cuMemCreate", unsafe { e.p.cuMemCreate(&mut h, size, &prop(types), 0) }, h)
}

/// 2 MiB mapped at the start of a 4 MiB reservation, with read-write access if `access`.
fn mapped(e: &Env, access: bool) -> Result<(CUdeviceptr, CUmemGenericAllocationHandle), Out> {
    let va = reserve(e, 2 * MIB2)?;
    let h = create(e, MIB2, CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE)?;
    // SAFETY: a reserved address and a live handle.
    made("cuMemMap", unsafe { e.p.cuMemMap(va, MIB2, 0, h, 0) }, ())?;
    if access {
        // SAFETY: one descriptor for a mapped range.
        made("cuMemSetAccess", unsafe { e.p.cuMemSetAccess(va, MIB2, &rw(), 1) }, ())?;
    }
    Ok((va, h))
}

type G = CUmemAllocationGranularity_flags;
const NONE: CUmemAllocationHandleType = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;

pub fn cases() -> Vec<Case> {
    vec![
        case!("vmm.granularity_minimum", Init, |e| { granularity(e, NONE, G::CU_MEM_ALLOC_GRANULARITY_MINIMUM) }),
        case!("vmm.granularity_recommended", Init, |e| {
            granularity(e, NONE, G::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        }),
        case!("vmm.granularity_posix_fd", Init, |e| { granularity(e, POSIX_FD, G::CU_MEM_ALLOC_GRANULARITY_MINIMUM) }),
        case!("vmm.reserve_not_granular", Ctx, |e| {
            let mut va = UNTOUCHED;
            Out::of(e.p.cuMemAddressReserve(&mut va, 4096, 0, 0, 0))
        }),
        case!("vmm.reserve_no_context", Init, |e| {
            let mut va = 0;
            let st = e.p.cuMemAddressReserve(&mut va, MIB2, 0, 0, 0);
            Out::of(st).eq("aligned", va % MIB2 as u64 == 0)
        }),
        case!("vmm.create_not_granular", Ctx, |e| {
            let mut h = 0;
            Out::of(e.p.cuMemCreate(&mut h, 4096, &prop(NONE), 0))
        }),
        case!("vmm.create_fabric", Ctx, |e| {
            let mut h = 0;
            let fabric = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_FABRIC;
            let st = e.p.cuMemCreate(&mut h, MIB2, &prop(fabric), 0);
            Out::of(st)
        }),
        case!("vmm.map_copy_back", Ctx, |e| {
            let (va, _) = with!(mapped(e, true));
            let src = [7u8; 16];
            let mut dst = [0u8; 16];
            step!(e.p.cuMemcpyHtoD(va, src.as_ptr().cast(), 16));
            let st = e.p.cuMemcpyDtoH(dst.as_mut_ptr().cast(), va, 16);
            Out::of(st).eq("same", src == dst)
        }),
        case!("vmm.map_twice", Ctx, |e| {
            let (va, _) = with!(mapped(e, false));
            let h = with!(create(e, MIB2, NONE));
            Out::of(e.p.cuMemMap(va, MIB2, 0, h, 0))
        }),
        case!("vmm.map_offset_nonzero", Ctx, |e| {
            let va = with!(reserve(e, 2 * MIB2));
            let h = with!(create(e, 2 * MIB2, NONE));
            Out::of(e.p.cuMemMap(va, MIB2, MIB2, h, 0))
        }),
        case!("vmm.map_outside_reservation", Ctx, |e| {
            let va = with!(reserve(e, MIB2));
            let h = with!(create(e, 2 * MIB2, NONE));
            Out::of(e.p.cuMemMap(va, 2 * MIB2, 0, h, 0))
        }),
        case!("vmm.copy_unmapped", Ctx, |e| {
            let (va, _) = with!(mapped(e, true));
            let src = [7u8; 16];
            Out::of(e.p.cuMemcpyHtoD(va + MIB2 as u64, src.as_ptr().cast(), 16))
        }),
        case!("vmm.copy_without_access", Ctx, |e| {
            let (va, _) = with!(mapped(e, false));
            let src = [7u8; 16];
            Out::of(e.p.cuMemcpyHtoD(va, src.as_ptr().cast(), 16))
        }),
        case!("vmm.copy_across_mappings", Ctx, |e| {
            let (va, _) = with!(mapped(e, true));
            let h = with!(create(e, MIB2, NONE));
            step!(e.p.cuMemMap(va + MIB2 as u64, MIB2, 0, h, 0));
            step!(e.p.cuMemSetAccess(va + MIB2 as u64, MIB2, &rw(), 1));
            let src = [7u8; 32];
            Out::of(e.p.cuMemcpyHtoD(va + MIB2 as u64 - 16, src.as_ptr().cast(), 32))
        }),
        case!("vmm.get_access_before_set", Ctx, |e| {
            let (va, _) = with!(mapped(e, false));
            let mut flags = UNTOUCHED;
            let st = e.p.cuMemGetAccess(&mut flags, &rw().location, va);
            Out::of(st).eq("flags", number(flags))
        }),
        case!("vmm.get_access_after_set", Ctx, |e| {
            let (va, _) = with!(mapped(e, true));
            let mut flags = UNTOUCHED;
            let st = e.p.cuMemGetAccess(&mut flags, &rw().location, va);
            Out::of(st).eq("flags", number(flags))
        }),
        case!("vmm.set_access_unmapped", Ctx, |e| {
            let va = with!(reserve(e, MIB2));
            Out::of(e.p.cuMemSetAccess(va, MIB2, &rw(), 1))
        }),
        case!("vmm.unmap_part", Ctx, |e| {
            let va = with!(reserve(e, 2 * MIB2));
            let h = with!(create(e, 2 * MIB2, NONE));
            step!(e.p.cuMemMap(va, 2 * MIB2, 0, h, 0));
            Out::of(e.p.cuMemUnmap(va, MIB2))
        }),
        case!("vmm.release_while_mapped_then_copy", Ctx, |e| {
            let (va, h) = with!(mapped(e, true));
            step!(e.p.cuMemRelease(h));
            let src = [7u8; 16];
            Out::of(e.p.cuMemcpyHtoD(va, src.as_ptr().cast(), 16))
        }),
        case!("vmm.release_twice", Ctx, |e| {
            let h = with!(create(e, MIB2, NONE));
            step!(e.p.cuMemRelease(h));
            Out::of(e.p.cuMemRelease(h))
        }),
        case!("vmm.address_free_while_mapped", Ctx, |e| {
            let (va, _) = with!(mapped(e, true));
            Out::of(e.p.cuMemAddressFree(va, 2 * MIB2))
        }),
        case!("vmm.address_free_wrong_size", Ctx, |e| {
            let va = with!(reserve(e, 2 * MIB2));
            Out::of(e.p.cuMemAddressFree(va, MIB2))
        }),
        case!("vmm.export_fd_not_requested", Ctx, |e| {
            let h = with!(create(e, MIB2, NONE));
            let mut fd: i32 = -7;
            let st = e.p.cuMemExportToShareableHandle((&raw mut fd).cast(), h, POSIX_FD, 0);
            Out::of(st).eq("fd", fd)
        }),
        case!("vmm.export_import_fd_same_process", Ctx, |e| {
            let h = with!(create(e, MIB2, POSIX_FD));
            let mut fd: i32 = -7;
            step!(e.p.cuMemExportToShareableHandle((&raw mut fd).cast(), h, POSIX_FD, 0));
            let mut imported = 0;
            let st = e.p.cuMemImportFromShareableHandle(&mut imported, fd as isize as *mut std::ffi::c_void, POSIX_FD);
            Out::of(st).eq("fd_nonnegative", fd >= 0).eq("new_handle", imported != 0 && imported != h)
        }),
    ]
}
