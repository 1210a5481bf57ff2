//! Virtual memory management entry points (`model/vmm.rs`): `cuMemGetAllocationGranularity`,
//! `cuMemAddressReserve`/`cuMemAddressFree`, `cuMemCreate`/`cuMemRelease`,
//! `cuMemMap`/`cuMemUnmap`, `cuMemSetAccess`/`cuMemGetAccess`, and
//! `cuMemExportToShareableHandle`/`cuMemImportFromShareableHandle` for POSIX file
//! descriptors.
//!
//! Memory created exportable as a POSIX file descriptor is an unlinked temporary file
//! mapped shared (`run/backing.rs`), and an exported descriptor is a new descriptor of that
//! file, so a program can pass it to another process or to itself over a Unix socket. It
//! is known by the inode behind it: any descriptor of that file imports the same memory
//! in this process, and one another process's stand-in exported is mapped shared here
//! too, so the two processes really share the memory (a descriptor of any other file is
//! CUDA_ERROR_INVALID_VALUE). Exported memory stays alive for the rest of the process (its
//! descriptors may be anywhere).
//!
//! No entry here needs a current context (the location names the device). A fabric
//! handle type needs an IMEX channel the emulated machine does not have: `cuMemCreate`
//! answers CUDA_ERROR_NOT_PERMITTED as the H200 does without one; export and import
//! answer CUDA_ERROR_NOT_SUPPORTED.

use std::ffi::{c_int, c_ulonglong, c_void};
use std::fs::File;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::model::handles::fresh;
use crate::model::memory::Owner;
use crate::model::vmm::{Map, Physical, Vmm, GRANULARITY};
use crate::run::backing::Backing;
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const POSIX_FD: u32 = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0;
const FABRIC: u32 = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_FABRIC.0;

/// The device a location names: CUDA_ERROR_INVALID_VALUE unless it is a device of `w`.
fn device_of(w: &World, location: &CUmemLocation) -> Result<i32, CUresult> {
    if location.type_ != CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(INVALID);
    }
    // SAFETY: for a device location the union holds the device ordinal.
    let id = unsafe { location.__bindgen_anon_1.id };
    Vmm::check((0..w.device_count()).contains(&id))?;
    Ok(id)
}

/// The device and handle types of an allocation's properties: pinned device memory only;
/// fabric handles CUDA_ERROR_NOT_PERMITTED (no IMEX channel, as on the H200).
fn read_prop(w: &World, prop: *const CUmemAllocationProp) -> Result<(i32, u32), CUresult> {
    non_null(prop)?;
    // SAFETY: non-null; the caller passes a properties struct.
    let prop = unsafe { &*prop };
    Vmm::check(prop.type_ == CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED)?;
    let types = prop.requestedHandleTypes.0;
    if types & FABRIC != 0 {
        return Err(CUresult::CUDA_ERROR_NOT_PERMITTED);
    }
    Vmm::check(types & !POSIX_FD == 0)?;
    Ok((device_of(w, &prop.location)?, types))
}

/// `cuMemGetAllocationGranularity`: 2 MiB, minimum and recommended.
pub(crate) unsafe fn cu_mem_get_allocation_granularity(
    w: &World,
    granularity: *mut usize,
    prop: *const CUmemAllocationProp,
    _option: CUmemAllocationGranularity_flags,
) -> CUresult {
    status(non_null(granularity).and_then(|()| read_prop(w, prop)).and_then(|_| write(granularity, GRANULARITY)))
}

/// `cuMemAddressReserve`: a size that is not a multiple of the granularity, or an
/// alignment that is not a power of two: CUDA_ERROR_INVALID_VALUE. The address hint is
/// ignored (as a real driver may).
pub(crate) unsafe fn cu_mem_address_reserve(
    w: &World,
    ptr: *mut CUdeviceptr,
    size: usize,
    alignment: usize,
    _addr: CUdeviceptr,
    flags: c_ulonglong,
) -> CUresult {
    let r = non_null(ptr).and_then(|()| {
        Vmm::check(Vmm::granular(size) && flags == 0 && (alignment == 0 || alignment.is_power_of_two()))?;
        let align = alignment.max(GRANULARITY) as u64;
        let mut v = lock(&w.vmm);
        let room = size.checked_add(align as usize).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let raw = lock(&w.memory).reserve_addresses(room)?;
        let start = raw.checked_add(align - 1).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)? & !(align - 1);
        v.reservations.insert(start, size);
        write(ptr, start)
    });
    status(r)
}

/// `cuMemAddressFree`: exactly a reservation (address and size), with nothing mapped in
/// it; anything else CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_address_free(w: &World, ptr: CUdeviceptr, size: usize) -> CUresult {
    let mut v = lock(&w.vmm);
    if v.reservations.get(&ptr) != Some(&size) || v.overlaps_map(ptr, size) {
        return INVALID;
    }
    v.reservations.remove(&ptr);
    CUresult::CUDA_SUCCESS
}

/// `cuMemCreate`: zeroed memory of a multiple of the granularity on a device.
pub(crate) unsafe fn cu_mem_create(
    w: &World,
    handle: *mut CUmemGenericAllocationHandle,
    size: usize,
    prop: *const CUmemAllocationProp,
    flags: c_ulonglong,
) -> CUresult {
    let r = non_null(handle).and_then(|()| {
        let (device, handle_types) = read_prop(w, prop)?;
        Vmm::check(Vmm::granular(size) && flags == 0)?;
        // Exportable memory is a file mapped shared, which another process can map too.
        let backing = if handle_types & POSIX_FD != 0 {
            new_file().filter(|f| f.set_len(size as u64).is_ok()).and_then(|f| Backing::shared(f, size))
        } else {
            Backing::zeroed(size)
        };
        let backing = Arc::new(backing.ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?);
        let h = fresh();
        lock(&w.vmm).handles.insert(h, Physical { size, device, handle_types, backing, refs: 1 });
        write(handle, h)
    });
    status(r)
}

/// `cuMemRelease`: drops one reference (`cuMemRetainAllocationHandle` adds them); the
/// last forgets the handle. The memory stays while a mapping of it remains. An unknown
/// (or released) handle: CUDA_ERROR_INVALID_VALUE, and a double release in the ledger.
pub(crate) unsafe fn cu_mem_release(w: &World, handle: CUmemGenericAllocationHandle) -> CUresult {
    let mut v = lock(&w.vmm);
    match v.handles.get_mut(&handle) {
        Some(p) if p.refs > 1 => p.refs -= 1,
        Some(_) => drop(v.handles.remove(&handle)),
        None => {
            v.double_releases.push(handle);
            return INVALID;
        }
    }
    CUresult::CUDA_SUCCESS
}

/// `cuMemMap`: all of a physical allocation (offset 0, its size) at an address of a
/// reservation where nothing is mapped; a non-zero offset CUDA_ERROR_NOT_SUPPORTED (as
/// the H200 answers), anything else CUDA_ERROR_INVALID_VALUE. The mapping is not
/// accessible until `cuMemSetAccess`.
pub(crate) unsafe fn cu_mem_map(
    w: &World,
    ptr: CUdeviceptr,
    size: usize,
    offset: usize,
    handle: CUmemGenericAllocationHandle,
    flags: c_ulonglong,
) -> CUresult {
    let mut v = lock(&w.vmm);
    let r = (|| {
        let p = v.handles.get(&handle).ok_or(INVALID)?;
        if offset != 0 {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        Vmm::check(flags == 0 && size == p.size)?;
        let (device, backing, handle_types) = (p.device, Arc::clone(&p.backing), p.handle_types);
        Vmm::check(v.reservation_of(ptr, size).is_some() && !v.overlaps_map(ptr, size))?;
        v.maps.insert(ptr, Map { size, device, backing, access: Default::default(), handle_types, handle });
        Ok(())
    })();
    status(r)
}

/// The shareable handle types of the physical allocation mapped at `address` (its first
/// address), for pointer attributes; 0 if nothing is mapped there.
pub(crate) fn handle_types_at(w: &World, address: u64) -> u32 {
    lock(&w.vmm).maps.get(&address).map_or(0, |m| m.handle_types)
}

/// `cuMemUnmap`: a range that whole mappings tile exactly; else CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_unmap(w: &World, ptr: CUdeviceptr, size: usize) -> CUresult {
    let mut v = lock(&w.vmm);
    let Some(maps) = v.tiling(ptr, size) else {
        return INVALID;
    };
    let mut memory = lock(&w.memory);
    for at in maps {
        v.maps.remove(&at);
        memory.unmap_backing(at);
    }
    CUresult::CUDA_SUCCESS
}

/// `cuMemSetAccess`: a range that whole mappings tile exactly, and at least one
/// descriptor of a device with `PROT_NONE`, `PROT_READ` or `PROT_READWRITE`; else
/// CUDA_ERROR_INVALID_VALUE. A mapping that some device may access becomes device memory.
pub(crate) unsafe fn cu_mem_set_access(
    w: &World,
    ptr: CUdeviceptr,
    size: usize,
    desc: *const CUmemAccessDesc,
    count: usize,
) -> CUresult {
    let r = (|| {
        non_null(desc)?;
        Vmm::check(count != 0)?;
        // SAFETY: the caller passes `count` descriptors at `desc` (non-null).
        let descs = unsafe { std::slice::from_raw_parts(desc, count) };
        let mut wanted = Vec::with_capacity(count);
        for d in descs {
            Vmm::check(d.flags.0 <= CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE.0)?;
            wanted.push((device_of(w, &d.location)?, d.flags.0));
        }
        let ctx = w.contexts.current().map_or(0, |c| c.handle);
        let mut v = lock(&w.vmm);
        let maps = v.tiling(ptr, size).ok_or(INVALID)?;
        let mut memory = lock(&w.memory);
        for at in maps {
            let Some(m) = v.maps.get_mut(&at) else { continue };
            for &(device, flags) in &wanted {
                m.access.insert(device, flags);
            }
            memory.unmap_backing(at);
            if m.access.values().any(|&f| f != 0) {
                let owner = Owner { ctx, device: m.device };
                memory.map_backing(at, m.size, owner, Arc::clone(&m.backing))?;
            }
        }
        Ok(())
    })();
    status(r)
}

/// `cuMemGetAccess`: the flags a device has on the mapping holding `ptr` (0 if none was
/// set); an address in no mapping: CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_get_access(
    w: &World,
    flags: *mut c_ulonglong,
    location: *const CUmemLocation,
    ptr: CUdeviceptr,
) -> CUresult {
    let r = non_null(flags).and_then(|()| {
        non_null(location)?;
        // SAFETY: non-null; the caller passes a location.
        let device = device_of(w, unsafe { &*location })?;
        let v = lock(&w.vmm);
        let (&start, m) = v.maps.range(..=ptr).next_back().ok_or(INVALID)?;
        Vmm::check(ptr - start < m.size as u64)?;
        write(flags, c_ulonglong::from(m.access.get(&device).copied().unwrap_or(0)))
    });
    status(r)
}

/// The inode of the file behind descriptor `fd` of this process.
pub(crate) fn inode_of(fd: c_int) -> Option<u64> {
    std::fs::metadata(format!("/proc/self/fd/{fd}")).ok().map(|m| m.ino())
}

/// The start of the name of the files behind exportable memory.
const FILE_PREFIX: &str = "cudrv-standin-vmm-";

/// A new, unlinked temporary file.
fn new_file() -> Option<File> {
    // A number no other file of this process has (handles are never reused).
    let n = crate::model::handles::fresh();
    let path = std::env::temp_dir().join(format!("{FILE_PREFIX}{}-{n}", std::process::id()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).ok()?;
    let _ = std::fs::remove_file(&path);
    Some(file)
}

/// Another process's exported memory behind descriptor `fd` (a stand-in's file, mapped
/// shared here too), with its size; `None` for any other descriptor.
pub(crate) fn foreign(fd: c_int) -> Option<(usize, Backing)> {
    let name = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let ours = name.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(FILE_PREFIX));
    if !ours {
        return None;
    }
    // SAFETY: the caller's descriptor, open for this call; it is duplicated, not taken.
    let file = File::from(unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned().ok()?);
    let size = usize::try_from(file.metadata().ok()?.len()).ok().filter(|&s| Vmm::granular(s))?;
    Some((size, Backing::shared(file, size)?))
}

/// `cuMemExportToShareableHandle`: a POSIX file descriptor (written as an `int`) for a
/// handle created with that type requested; another type: CUDA_ERROR_INVALID_VALUE
/// (fabric: CUDA_ERROR_NOT_SUPPORTED).
pub(crate) unsafe fn cu_mem_export_to_shareable_handle(
    w: &World,
    shareable: *mut c_void,
    handle: CUmemGenericAllocationHandle,
    handle_type: CUmemAllocationHandleType,
    flags: c_ulonglong,
) -> CUresult {
    let r = non_null(shareable).and_then(|()| {
        if handle_type.0 == FABRIC {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        Vmm::check(handle_type.0 == POSIX_FD && flags == 0)?;
        let mut v = lock(&w.vmm);
        let p = v.handles.get(&handle).ok_or(INVALID)?;
        Vmm::check(p.handle_types & POSIX_FD != 0)?;
        let entry = (p.size, p.device, Arc::clone(&p.backing));
        // A new descriptor of the file the memory is.
        let file = p.backing.file().and_then(|f| f.try_clone().ok()).ok_or(CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
        let inode = file.metadata().map_err(|_| CUresult::CUDA_ERROR_OUT_OF_MEMORY)?.ino();
        v.exported.insert(inode, entry);
        write(shareable.cast::<c_int>(), file.into_raw_fd())
    });
    status(r)
}

/// `cuMemImportFromShareableHandle`: a new handle over the memory a descriptor of this
/// process's exports names (the descriptor passed as the pointer's value, as in C);
/// anything else CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_mem_import_from_shareable_handle(
    w: &World,
    handle: *mut CUmemGenericAllocationHandle,
    os_handle: *mut c_void,
    handle_type: CUmemAllocationHandleType,
) -> CUresult {
    let r = non_null(handle).and_then(|()| {
        if handle_type.0 == FABRIC {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        Vmm::check(handle_type.0 == POSIX_FD)?;
        let fd = c_int::try_from(os_handle as usize).map_err(|_| INVALID)?;
        let inode = inode_of(fd).ok_or(INVALID)?;
        let mut v = lock(&w.vmm);
        let known = v.exported.get(&inode).map(|(s, d, b)| (*s, *d, Arc::clone(b)));
        let (size, device, backing) = match known {
            Some(k) => k,
            None => {
                // Another process's export: its file, mapped shared here (on device 0).
                let (size, backing) = foreign(fd).ok_or(INVALID)?;
                let backing = Arc::new(backing);
                v.exported.insert(inode, (size, 0, Arc::clone(&backing)));
                (size, 0, backing)
            }
        };
        let h = fresh();
        v.handles.insert(h, Physical { size, device, handle_types: POSIX_FD, backing, refs: 1 });
        write(handle, h)
    });
    status(r)
}
