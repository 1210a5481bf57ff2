//! Managed memory entry points: `cuMemAllocManaged`, `cuStreamAttachMemAsync`,
//! `cuMemPrefetchAsync` (8.0's device ordinal and 12.2's location forms), `cuMemAdvise`
//! (both forms), `cuMemRangeGetAttribute` and `cuMemRangeGetAttributes`.
//!
//! A managed allocation is host memory at its own address (`model/memory.rs`, kind
//! `Managed`): the host and every device use one pointer, and nothing migrates. Its
//! attachment, advice and prefetches are remembered (`model/managed.rs`) and answered
//! by the range attributes; a prefetch and an attachment take effect when they are called
//! (nothing is queued: the driver's range attributes report a prefetch as soon as it is
//! asked for, too). Validation as docs/driver-facts.md records the H200's answers (cases
//! `managed.*` of the conformance suite): a range that no one managed allocation holds,
//! or of no bytes, is CUDA_ERROR_INVALID_VALUE; a device that is neither one of the
//! world's nor the host is CUDA_ERROR_INVALID_DEVICE; unknown flags, advice, attributes
//! and location types are CUDA_ERROR_INVALID_VALUE.

use std::ffi::{c_int, c_uint, c_void};

use cudrv::sys::*;

use crate::device::valid_device;
use crate::entry::{non_null, status, write};
use crate::model::managed::{Location, CPU, INVALID as NO_LOCATION};
use crate::model::memory::Owner;
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const GLOBAL: u32 = CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0;
const HOST: u32 = CUmemAttach_flags::CU_MEM_ATTACH_HOST.0;
const SINGLE: u32 = CUmemAttach_flags::CU_MEM_ATTACH_SINGLE.0;

/// `cuMemAllocManaged`: flags exactly GLOBAL or HOST, a size above 0
/// (CUDA_ERROR_INVALID_VALUE otherwise, writing 0), a current context.
pub(crate) unsafe fn cu_mem_alloc_managed(w: &World, dptr: *mut CUdeviceptr, size: usize, flags: c_uint) -> CUresult {
    let r = non_null(dptr).and_then(|()| {
        write(dptr, 0)?;
        let c = w.contexts.current()?;
        if flags != GLOBAL && flags != HOST {
            return Err(INVALID);
        }
        let address = lock(&w.memory).alloc_managed(size, Owner::of(&c))?;
        lock(&w.managed).add(address, size, flags);
        write(dptr, address)
    });
    status(r)
}

/// Forgets a managed allocation's state when `cuMemFree` frees it (any address).
pub(crate) fn forget(w: &World, address: u64) {
    lock(&w.managed).remove(address);
}

/// `cuStreamAttachMemAsync`: `dptr` in a managed allocation, `length` 0 (all of it) or
/// its whole size from its start; flags GLOBAL, HOST or SINGLE, and SINGLE not on the
/// legacy default stream.
pub(crate) unsafe fn cu_stream_attach_mem_async(
    w: &World,
    s: CUstream,
    dptr: CUdeviceptr,
    length: usize,
    flags: c_uint,
) -> CUresult {
    let r = stream::resolve(w, s).and_then(|t| {
        if ![GLOBAL, HOST, SINGLE].contains(&flags) || (flags == SINGLE && t.legacy) {
            return Err(INVALID);
        }
        let mut managed = lock(&w.managed);
        let (start, range) = managed.holding(dptr, 1).ok_or(INVALID)?;
        if length != 0 && (dptr != start || length != range.size) {
            return Err(INVALID);
        }
        range.attach = (flags, if flags == SINGLE { s as usize as u64 } else { 0 });
        Ok(())
    });
    status(r)
}

/// The location an 8.0 form names: a device of the world, or the host
/// (CUDA_ERROR_INVALID_DEVICE otherwise).
fn ordinal(w: &World, device: CUdevice) -> Result<Location, CUresult> {
    if device == CPU || valid_device(w, device) {
        Ok(device)
    } else {
        Err(CUresult::CUDA_ERROR_INVALID_DEVICE)
    }
}

/// The location a 12.2 form names: a device of the world (else
/// CUDA_ERROR_INVALID_DEVICE) or the host (any host type); other types
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) fn location(w: &World, l: CUmemLocation) -> Result<Location, CUresult> {
    type T = CUmemLocationType;
    // SAFETY: every location type keeps an ordinal (or nothing read) in the union's id.
    let id = unsafe { l.__bindgen_anon_1.id };
    match l.type_ {
        T::CU_MEM_LOCATION_TYPE_DEVICE if valid_device(w, id) => Ok(id),
        T::CU_MEM_LOCATION_TYPE_DEVICE => Err(CUresult::CUDA_ERROR_INVALID_DEVICE),
        T::CU_MEM_LOCATION_TYPE_HOST | T::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => Ok(CPU),
        T::CU_MEM_LOCATION_TYPE_HOST_NUMA if id == 0 => Ok(CPU),
        _ => Err(INVALID),
    }
}

/// Records a prefetch of `[ptr, ptr + count)` to `to` on stream `s`.
fn prefetch(w: &World, ptr: CUdeviceptr, count: usize, to: Location, s: CUstream) -> Result<(), CUresult> {
    stream::resolve(w, s)?;
    let mut managed = lock(&w.managed);
    let (_, range) = managed.holding(ptr, count).ok_or(INVALID)?;
    range.prefetched.set(ptr, ptr + count as u64, Some(to));
    Ok(())
}

/// `cuMemPrefetchAsync` (8.0): to a device ordinal or `CU_DEVICE_CPU`.
pub(crate) unsafe fn cu_mem_prefetch_async(
    w: &World,
    ptr: CUdeviceptr,
    count: usize,
    device: CUdevice,
    s: CUstream,
) -> CUresult {
    status(ordinal(w, device).and_then(|to| prefetch(w, ptr, count, to, s)))
}

/// `cuMemPrefetchAsync_v2` (12.2): to a location; flags must be 0.
pub(crate) unsafe fn cu_mem_prefetch_async_v2(
    w: &World,
    ptr: CUdeviceptr,
    count: usize,
    to: CUmemLocation,
    flags: c_uint,
    s: CUstream,
) -> CUresult {
    let r = (|| {
        if flags != 0 {
            return Err(INVALID);
        }
        prefetch(w, ptr, count, location(w, to)?, s)
    })();
    status(r)
}

/// Applies `advice` about `location` (already checked where the advice takes one) to
/// `[ptr, ptr + count)`.
fn advise(w: &World, ptr: CUdeviceptr, count: usize, advice: CUmem_advise, to: Location) -> Result<(), CUresult> {
    type A = CUmem_advise;
    let mut managed = lock(&w.managed);
    let (_, range) = managed.holding(ptr, count).ok_or(INVALID)?;
    let end = ptr + count as u64;
    match advice {
        A::CU_MEM_ADVISE_SET_READ_MOSTLY => range.read_mostly.set(ptr, end, Some(())),
        A::CU_MEM_ADVISE_UNSET_READ_MOSTLY => range.read_mostly.set(ptr, end, None),
        A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION => range.preferred.set(ptr, end, Some(to)),
        A::CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION => range.preferred.set(ptr, end, None),
        A::CU_MEM_ADVISE_SET_ACCESSED_BY => range.accessed_by.entry(to).or_default().set(ptr, end, Some(())),
        A::CU_MEM_ADVISE_UNSET_ACCESSED_BY => range.accessed_by.entry(to).or_default().set(ptr, end, None),
        _ => return Err(INVALID),
    }
    Ok(())
}

/// Whether `advice` takes a location (the others ignore it).
fn takes_location(advice: CUmem_advise) -> bool {
    type A = CUmem_advise;
    matches!(
        advice,
        A::CU_MEM_ADVISE_SET_PREFERRED_LOCATION | A::CU_MEM_ADVISE_SET_ACCESSED_BY | A::CU_MEM_ADVISE_UNSET_ACCESSED_BY
    )
}

/// The advice a number names: CUDA_ERROR_INVALID_VALUE for none.
fn known(advice: CUmem_advise) -> Result<CUmem_advise, CUresult> {
    let valid = CUmem_advise::CU_MEM_ADVISE_SET_READ_MOSTLY.0..=CUmem_advise::CU_MEM_ADVISE_UNSET_ACCESSED_BY.0;
    if valid.contains(&advice.0) {
        Ok(advice)
    } else {
        Err(INVALID)
    }
}

/// `cuMemAdvise` (8.0): a device ordinal or `CU_DEVICE_CPU` where the advice takes one.
pub(crate) unsafe fn cu_mem_advise(
    w: &World,
    ptr: CUdeviceptr,
    count: usize,
    advice: CUmem_advise,
    device: CUdevice,
) -> CUresult {
    let r = known(advice).and_then(|advice| {
        let to = if takes_location(advice) { ordinal(w, device)? } else { NO_LOCATION };
        advise(w, ptr, count, advice, to)
    });
    status(r)
}

/// `cuMemAdvise_v2` (12.2): a location where the advice takes one.
pub(crate) unsafe fn cu_mem_advise_v2(
    w: &World,
    ptr: CUdeviceptr,
    count: usize,
    advice: CUmem_advise,
    to: CUmemLocation,
) -> CUresult {
    let r = known(advice).and_then(|advice| {
        let to = if takes_location(advice) { location(w, to)? } else { NO_LOCATION };
        advise(w, ptr, count, advice, to)
    });
    status(r)
}

/// The value of `attr` over `[ptr, ptr + count)` into `size` bytes at `data`: 4 bytes
/// for every attribute but ACCESSED_BY (a multiple of 4: as many locations as fit, the
/// rest `CU_DEVICE_INVALID`); the 12.2 attributes only from a 12.2 world.
fn range_attribute(
    w: &World,
    data: *mut c_void,
    size: usize,
    attr: CUmem_range_attribute,
    ptr: CUdeviceptr,
    count: usize,
) -> Result<(), CUresult> {
    type R = CUmem_range_attribute;
    type T = CUmemLocationType;
    non_null(data)?;
    let newer = w.version.load(std::sync::atomic::Ordering::Acquire) >= 12020;
    let mut managed = lock(&w.managed);
    let (_, range) = managed.holding(ptr, count).ok_or(INVALID)?;
    let end = ptr + count as u64;
    let or_none = |l: Option<Location>| l.unwrap_or(NO_LOCATION);
    let kind = |l: Location| match l {
        NO_LOCATION => T::CU_MEM_LOCATION_TYPE_INVALID.0 as c_int,
        CPU => T::CU_MEM_LOCATION_TYPE_HOST.0 as c_int,
        _ => T::CU_MEM_LOCATION_TYPE_DEVICE.0 as c_int,
    };
    let id = |l: Location| if l >= 0 { l } else { 0 };
    let one = match attr {
        R::CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY => {
            if size == 0 || size % 4 != 0 {
                return Err(INVALID);
            }
            let mut locations = range.accessed_by(ptr, end).into_iter();
            for i in 0..size / 4 {
                let v = locations.next().unwrap_or(NO_LOCATION);
                // SAFETY: `data` has `size` bytes (the caller's), room for `size / 4` ints.
                write(unsafe { data.cast::<c_int>().add(i) }, v)?;
            }
            return Ok(());
        }
        R::CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY => c_int::from(range.read_mostly.uniform(ptr, end).is_some()),
        R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION => or_none(range.preferred.uniform(ptr, end)),
        R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION => or_none(range.prefetched.uniform(ptr, end)),
        R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE if newer => kind(or_none(range.preferred.uniform(ptr, end))),
        R::CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID if newer => id(or_none(range.preferred.uniform(ptr, end))),
        R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE if newer => {
            kind(or_none(range.prefetched.uniform(ptr, end)))
        }
        R::CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID if newer => id(or_none(range.prefetched.uniform(ptr, end))),
        _ => return Err(INVALID),
    };
    if size != 4 {
        return Err(INVALID);
    }
    write(data.cast::<c_int>(), one)
}

/// `cuMemRangeGetAttribute`.
pub(crate) unsafe fn cu_mem_range_get_attribute(
    w: &World,
    data: *mut c_void,
    size: usize,
    attr: CUmem_range_attribute,
    ptr: CUdeviceptr,
    count: usize,
) -> CUresult {
    status(range_attribute(w, data, size, attr, ptr, count))
}

/// `cuMemRangeGetAttributes`: each of `num` attributes as `cuMemRangeGetAttribute`
/// answers it (stopping at the first error); `num` 0 or a null array:
/// CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_range_get_attributes(
    w: &World,
    data: *mut *mut c_void,
    sizes: *mut usize,
    attrs: *mut CUmem_range_attribute,
    num: usize,
    ptr: CUdeviceptr,
    count: usize,
) -> CUresult {
    let r = (|| {
        non_null(data)?;
        non_null(sizes)?;
        non_null(attrs)?;
        if num == 0 {
            return Err(INVALID);
        }
        // SAFETY: the caller passes `num` data pointers, sizes and attributes.
        let (data, sizes, attrs) = unsafe {
            (
                std::slice::from_raw_parts(data, num),
                std::slice::from_raw_parts(sizes, num),
                std::slice::from_raw_parts(attrs, num),
            )
        };
        for ((&d, &size), &attr) in data.iter().zip(sizes).zip(attrs) {
            range_attribute(w, d, size, attr, ptr, count)?;
        }
        Ok(())
    })();
    status(r)
}
