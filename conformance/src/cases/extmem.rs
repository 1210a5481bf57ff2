//! External memory and semaphores (issue 29), as the H200 answers with no graphics API
//! installed: memory from a descriptor `cuMemExportToShareableHandle` gave (virtual
//! memory), shared with the mapping it was exported from; the handle types such a machine
//! cannot produce; descriptor checks; semaphore imports refused, and the argument checks
//! of the calls and graph nodes that take semaphores (no semaphore can be imported, so
//! no case passes one: a made-up handle could crash the driver).

use std::ffi::c_void;

use cudrv::sys::*;

use super::{case, handle, made, number, sentinel, step, with, Case, Env, Out, UNTOUCHED};

const MIB: usize = 1 << 20;
const MIB2: usize = 2 << 20;
type MemType = CUexternalMemoryHandleType;
type SemType = CUexternalSemaphoreHandleType;
const OPAQUE: MemType = MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
const SEM_OPAQUE: SemType = SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
const TIMELINE: SemType = SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;

/// 2 MiB of exportable virtual memory on device 0, mapped read-write at a reserved
/// address, and a descriptor exported for it.
fn exported(e: &Env) -> Result<(CUdeviceptr, i32), Out> {
    let mut prop = CUmemAllocationProp {
        type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        ..Default::default()
    };
    prop.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.__bindgen_anon_1.id = e.dev;
    let mut access =
        CUmemAccessDesc { flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE, ..Default::default() };
    access.location = prop.location;
    let (mut h, mut va, mut fd) = (0, 0, -7i32);
    // SAFETY: valid out-pointers and properties; the handle and reservation are this
    // case's.
    unsafe {
        made("cuMemCreate", e.p.cuMemCreate(&mut h, MIB2, &prop, 0), ())?;
        made("cuMemAddressReserve", e.p.cuMemAddressReserve(&mut va, MIB2, 0, 0, 0), ())?;
        made("cuMemMap", e.p.cuMemMap(va, MIB2, 0, h, 0), ())?;
        made("cuMemSetAccess", e.p.cuMemSetAccess(va, MIB2, &access, 1), ())?;
        let t = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        made("cuMemExportToShareableHandle", e.p.cuMemExportToShareableHandle((&raw mut fd).cast(), h, t, 0), ())?;
    }
    Ok((va, fd))
}

/// An external memory descriptor of `type_` for descriptor `fd`, `size` bytes.
fn mem_desc(type_: MemType, fd: i32, size: u64, flags: u32) -> CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
    let mut d = CUDA_EXTERNAL_MEMORY_HANDLE_DESC { type_, size, flags, ..Default::default() };
    d.handle.fd = fd;
    d
}

/// A Windows-style descriptor (handle value 1, no name): meaningless on Linux.
fn win32_desc(type_: MemType, flags: u32) -> CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
    let mut d = CUDA_EXTERNAL_MEMORY_HANDLE_DESC { type_, size: MIB2 as u64, flags, ..Default::default() };
    d.handle.win32.handle = std::ptr::without_provenance_mut::<c_void>(1);
    d
}

/// Imports descriptor `d`; the answer and whether the object was written.
fn import(e: &Env, d: &CUDA_EXTERNAL_MEMORY_HANDLE_DESC) -> Out {
    let mut m: CUexternalMemory = sentinel();
    // SAFETY: a valid out-pointer and descriptor.
    let st = unsafe { e.p.cuImportExternalMemory(&mut m, d) };
    Out::of(st).eq("object", handle(m))
}

/// The VMM memory imported as external memory of 2 MiB.
fn imported(e: &Env) -> Result<(CUdeviceptr, CUexternalMemory), Out> {
    let (va, fd) = exported(e)?;
    let mut m = std::ptr::null_mut();
    let d = mem_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, fd, MIB2 as u64, 0);
    // SAFETY: a valid out-pointer and descriptor.
    made("cuImportExternalMemory", unsafe { e.p.cuImportExternalMemory(&mut m, &d) }, (va, m))
}

/// Maps a buffer of `m` at `offset`, `size` bytes, `flags`.
fn buffer(e: &Env, m: CUexternalMemory, offset: usize, size: usize, flags: u32) -> (CUresult, CUdeviceptr) {
    let d = CUDA_EXTERNAL_MEMORY_BUFFER_DESC { offset: offset as u64, size: size as u64, flags, ..Default::default() };
    let mut p = UNTOUCHED;
    // SAFETY: a valid out-pointer and descriptor.
    let st = unsafe { e.p.cuExternalMemoryGetMappedBuffer(&mut p, m, &d) };
    (st, p)
}

/// A descriptor of `/dev/null` (a file no driver exported), left open.
fn dev_null() -> i32 {
    use std::os::fd::IntoRawFd;
    std::fs::File::open("/dev/null").map_or(-1, IntoRawFd::into_raw_fd)
}

/// Writes 16 bytes of `v` at `dst` and reads 16 bytes back from `src`.
fn through(e: &Env, dst: CUdeviceptr, src: CUdeviceptr, v: u8) -> Result<bool, Out> {
    let (w, mut r) = ([v; 16], [0u8; 16]);
    // SAFETY: 16-byte host buffers; device addresses of this case.
    unsafe {
        made("cuMemcpyHtoD", e.p.cuMemcpyHtoD(dst, w.as_ptr().cast(), 16), ())?;
        made("cuMemcpyDtoH", e.p.cuMemcpyDtoH(r.as_mut_ptr().cast(), src, 16), ())?;
    }
    Ok(w == r)
}

fn sem_desc(type_: SemType, fd: i32) -> CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
    let mut d = CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC { type_, ..Default::default() };
    d.handle.fd = fd;
    d
}

fn import_sem(e: &Env, d: &CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC) -> Out {
    let mut s: CUexternalSemaphore = sentinel();
    // SAFETY: a valid out-pointer and descriptor.
    let st = unsafe { e.p.cuImportExternalSemaphore(&mut s, d) };
    Out::of(st).eq("semaphore", handle(s))
}

/// A graph with one empty node.
fn graph_with_node(e: &Env) -> Result<(CUgraph, CUgraphNode), Out> {
    let (mut g, mut n) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers; the graph is this case's.
    unsafe {
        made("cuGraphCreate", e.p.cuGraphCreate(&mut g, 0), ())?;
        made("cuGraphAddEmptyNode", e.p.cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0), (g, n))
    }
}

pub fn cases() -> Vec<Case> {
    [memory_cases(), semaphore_cases(), node_cases()].concat()
}

fn memory_cases() -> Vec<Case> {
    vec![
        case!("extmem.import_vmm_fd", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, MIB2 as u64, 0))
        }),
        case!("extmem.import_vmm_fd_dedicated", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, MIB2 as u64, 1))
        }),
        case!("extmem.import_vmm_fd_smaller", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, MIB as u64, 0))
        }),
        case!("extmem.import_vmm_fd_larger", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, 2 * MIB2 as u64, 0))
        }),
        case!("extmem.import_size_zero", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, 0, 0))
        }),
        case!("extmem.import_bad_flags", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, MIB2 as u64, 2))
        }),
        case!("extmem.import_type_zero", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(CUexternalMemoryHandleType_enum(0), fd, MIB2 as u64, 0))
        }),
        case!("extmem.import_type_unknown", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(CUexternalMemoryHandleType_enum(99), fd, MIB2 as u64, 0))
        }),
        case!("extmem.import_fd_negative", Ctx, |e| { import(e, &mem_desc(OPAQUE, -1, MIB2 as u64, 0)) }),
        case!("extmem.import_fd_dev_null", Ctx, |e| { import(e, &mem_desc(OPAQUE, dev_null(), MIB2 as u64, 0)) }),
        case!("extmem.import_null_desc", Ctx, |e| {
            let mut m: CUexternalMemory = sentinel();
            Out::of(e.p.cuImportExternalMemory(&mut m, std::ptr::null())).eq("object", handle(m))
        }),
        case!("extmem.import_null_out", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            Out::of(e.p.cuImportExternalMemory(std::ptr::null_mut(), &mem_desc(OPAQUE, fd, MIB2 as u64, 0)))
        }),
        case!("extmem.import_no_context", Init, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(OPAQUE, fd, MIB2 as u64, 0))
        }),
        case!("extmem.import_opaque_win32", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32, 0))
        }),
        case!("extmem.import_opaque_win32_kmt", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_WIN32_KMT, 0))
        }),
        case!("extmem.import_d3d12_heap", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_HEAP, 0))
        }),
        case!("extmem.import_d3d12_resource", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D12_RESOURCE, 1))
        }),
        case!("extmem.import_d3d11_resource", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE, 1))
        }),
        case!("extmem.import_d3d11_resource_kmt", Ctx, |e| {
            import(e, &win32_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_D3D11_RESOURCE_KMT, 1))
        }),
        case!("extmem.import_nvscibuf_null", Ctx, |e| {
            import(e, &mem_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF, 0, MIB2 as u64, 0))
        }),
        case!("extmem.import_nvscibuf", Ctx, |e| {
            // A readable block of zeros standing for an object: the machine has no NvSci.
            let zeros = [0u64; 64];
            let mut d = mem_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_NVSCIBUF, 0, MIB2 as u64, 0);
            d.handle.nvSciBufObject = zeros.as_ptr().cast();
            import(e, &d)
        }),
        case!("extmem.import_dmabuf_vmm_fd", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import(e, &mem_desc(MemType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD, fd, MIB2 as u64, 0))
        }),
        case!("extmem.buffer_shares_vmm_memory", Ctx, |e| {
            let (va, m) = with!(imported(e));
            let (st, p) = buffer(e, m, 0, MIB2, 0);
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("buffer", number(p));
            }
            let seen_by_buffer = with!(through(e, va, p, 0x5a));
            let seen_by_vmm = with!(through(e, p, va, 0xa5));
            Out::of(st).eq("buffer_reads_vmm", seen_by_buffer).eq("vmm_reads_buffer", seen_by_vmm).eq("other", p != va)
        }),
        case!("extmem.buffer_at_offset", Ctx, |e| {
            let (va, m) = with!(imported(e));
            let (st, p) = buffer(e, m, MIB, MIB, 0);
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("buffer", number(p));
            }
            let seen = with!(through(e, va + MIB as u64, p, 0x3c));
            Out::of(st).eq("buffer_reads_vmm_at_offset", seen)
        }),
        case!("extmem.buffer_past_size", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let (st, p) = buffer(e, m, MIB, MIB2, 0);
            Out::of(st).eq("buffer", number(p))
        }),
        case!("extmem.buffer_size_zero", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let (st, p) = buffer(e, m, 0, 0, 0);
            Out::of(st).eq("buffer", number(p))
        }),
        case!("extmem.buffer_flags", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let (st, p) = buffer(e, m, 0, MIB2, 1);
            Out::of(st).eq("buffer", number(p))
        }),
        case!("extmem.buffer_null_desc", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let mut p = UNTOUCHED;
            Out::of(e.p.cuExternalMemoryGetMappedBuffer(&mut p, m, std::ptr::null())).eq("buffer", number(p))
        }),
        case!("extmem.buffer_null_out", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let d = CUDA_EXTERNAL_MEMORY_BUFFER_DESC { size: MIB2 as u64, ..Default::default() };
            Out::of(e.p.cuExternalMemoryGetMappedBuffer(std::ptr::null_mut(), m, &d))
        }),
        case!("extmem.buffer_null_object", Ctx, |e| {
            let (st, p) = buffer(e, std::ptr::null_mut(), 0, MIB2, 0);
            Out::of(st).eq("buffer", number(p))
        }),
        case!("extmem.buffer_free", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let (st, p) = buffer(e, m, 0, MIB2, 0);
            step!(st);
            Out::of(e.p.cuMemFree(p))
        }),
        case!("extmem.buffer_after_destroy_still_reads", Ctx, |e| {
            let (va, m) = with!(imported(e));
            let (st, p) = buffer(e, m, 0, MIB2, 0);
            step!(st);
            step!(e.p.cuDestroyExternalMemory(m));
            let seen = with!(through(e, va, p, 0x77));
            Out::of(CUresult::CUDA_SUCCESS).eq("buffer_reads_vmm", seen)
        }),
        case!("extmem.destroy", Ctx, |e| {
            let (_, m) = with!(imported(e));
            Out::of(e.p.cuDestroyExternalMemory(m))
        }),
        case!("extmem.destroy_null", Ctx, |e| { Out::of(e.p.cuDestroyExternalMemory(std::ptr::null_mut())) }),
        case!("extmem.mipmap_vmm_fd", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let mut d = CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC { numLevels: 1, ..Default::default() };
            d.arrayDesc = CUDA_ARRAY3D_DESCRIPTOR {
                Width: 64,
                Height: 64,
                Format: CUarray_format::CU_AD_FORMAT_FLOAT,
                NumChannels: 1,
                ..Default::default()
            };
            let mut a: CUmipmappedArray = sentinel();
            let st = e.p.cuExternalMemoryGetMappedMipmappedArray(&mut a, m, &d);
            Out::of(st).eq("array", handle(a))
        }),
        case!("extmem.mipmap_null_desc", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let mut a: CUmipmappedArray = sentinel();
            let st = e.p.cuExternalMemoryGetMappedMipmappedArray(&mut a, m, std::ptr::null());
            Out::of(st).eq("array", handle(a))
        }),
        case!("extmem.mipmap_no_levels", Ctx, |e| {
            let (_, m) = with!(imported(e));
            let d = CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC {
                arrayDesc: CUDA_ARRAY3D_DESCRIPTOR {
                    Width: 64,
                    Format: CUarray_format::CU_AD_FORMAT_FLOAT,
                    NumChannels: 1,
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut a: CUmipmappedArray = sentinel();
            let st = e.p.cuExternalMemoryGetMappedMipmappedArray(&mut a, m, &d);
            Out::of(st).eq("array", handle(a))
        }),
    ]
}

fn semaphore_cases() -> Vec<Case> {
    vec![
        case!("extsem.import_opaque_fd_dev_null", Ctx, |e| { import_sem(e, &sem_desc(SEM_OPAQUE, dev_null())) }),
        case!("extsem.import_opaque_fd_negative", Ctx, |e| { import_sem(e, &sem_desc(SEM_OPAQUE, -1)) }),
        case!("extsem.import_opaque_fd_vmm_memory", Ctx, |e| {
            let (_, fd) = with!(exported(e));
            import_sem(e, &sem_desc(SEM_OPAQUE, fd))
        }),
        case!("extsem.import_timeline_fd_dev_null", Ctx, |e| { import_sem(e, &sem_desc(TIMELINE, dev_null())) }),
        case!("extsem.import_timeline_fd_negative", Ctx, |e| { import_sem(e, &sem_desc(TIMELINE, -1)) }),
        case!("extsem.import_opaque_win32", Ctx, |e| {
            let mut d = sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_WIN32, 0);
            d.handle.win32.handle = std::ptr::without_provenance_mut::<c_void>(1);
            import_sem(e, &d)
        }),
        case!("extsem.import_d3d12_fence", Ctx, |e| {
            let mut d = sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D12_FENCE, 0);
            d.handle.win32.handle = std::ptr::without_provenance_mut::<c_void>(1);
            import_sem(e, &d)
        }),
        case!("extsem.import_d3d11_keyed_mutex", Ctx, |e| {
            let mut d = sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_D3D11_KEYED_MUTEX, 0);
            d.handle.win32.handle = std::ptr::without_provenance_mut::<c_void>(1);
            import_sem(e, &d)
        }),
        case!("extsem.import_timeline_win32", Ctx, |e| {
            let mut d = sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32, 0);
            d.handle.win32.handle = std::ptr::without_provenance_mut::<c_void>(1);
            import_sem(e, &d)
        }),
        case!("extsem.import_nvscisync_null", Ctx, |e| {
            import_sem(e, &sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC, 0))
        }),
        case!("extsem.import_nvscisync", Ctx, |e| {
            let zeros = [0u64; 64];
            let mut d = sem_desc(SemType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_NVSCISYNC, 0);
            d.handle.nvSciSyncObj = zeros.as_ptr().cast();
            import_sem(e, &d)
        }),
        case!("extsem.import_type_zero", Ctx, |e| {
            import_sem(e, &sem_desc(CUexternalSemaphoreHandleType_enum(0), dev_null()))
        }),
        case!("extsem.import_null_desc", Ctx, |e| {
            let mut s: CUexternalSemaphore = sentinel();
            Out::of(e.p.cuImportExternalSemaphore(&mut s, std::ptr::null())).eq("semaphore", handle(s))
        }),
        case!("extsem.import_null_out", Ctx, |e| {
            Out::of(e.p.cuImportExternalSemaphore(std::ptr::null_mut(), &sem_desc(SEM_OPAQUE, dev_null())))
        }),
        case!("extsem.destroy_null", Ctx, |e| { Out::of(e.p.cuDestroyExternalSemaphore(std::ptr::null_mut())) }),
        case!("extsem.signal_null_arrays", Ctx, |e| {
            Out::of(e.p.cuSignalExternalSemaphoresAsync(std::ptr::null(), std::ptr::null(), 1, std::ptr::null_mut()))
        }),
        case!("extsem.signal_none_null_arrays", Ctx, |e| {
            Out::of(e.p.cuSignalExternalSemaphoresAsync(std::ptr::null(), std::ptr::null(), 0, std::ptr::null_mut()))
        }),
        case!("extsem.signal_none", Ctx, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default(); 1];
            Out::of(e.p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 0, std::ptr::null_mut()))
        }),
        case!("extsem.signal_null_semaphore", Ctx, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default(); 1];
            Out::of(e.p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 1, std::ptr::null_mut()))
        }),
        // A destroyed stream crashes the real driver (deliberate-differences.txt): no
        // current context stands for an unusable stream.
        case!("extsem.signal_no_context", Init, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default(); 1];
            Out::of(e.p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 0, std::ptr::null_mut()))
        }),
        case!("extsem.wait_null_arrays", Ctx, |e| {
            Out::of(e.p.cuWaitExternalSemaphoresAsync(std::ptr::null(), std::ptr::null(), 1, std::ptr::null_mut()))
        }),
        case!("extsem.wait_none", Ctx, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default(); 1];
            Out::of(e.p.cuWaitExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 0, std::ptr::null_mut()))
        }),
        case!("extsem.wait_null_semaphore", Ctx, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default(); 1];
            Out::of(e.p.cuWaitExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 1, std::ptr::null_mut()))
        }),
        // A destroyed stream crashes the real driver (deliberate-differences.txt): no
        // current context stands for an unusable stream.
        case!("extsem.wait_no_context", Init, |e| {
            let sems = [std::ptr::null_mut::<CUextSemaphore_st>(); 1];
            let params = [CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default(); 1];
            Out::of(e.p.cuWaitExternalSemaphoresAsync(sems.as_ptr(), params.as_ptr(), 0, std::ptr::null_mut()))
        }),
    ]
}

/// Signal node parameters over `sems` (`n` of them).
fn signal_params(sems: &mut [CUexternalSemaphore], n: u32) -> CUDA_EXT_SEM_SIGNAL_NODE_PARAMS {
    CUDA_EXT_SEM_SIGNAL_NODE_PARAMS {
        extSemArray: sems.as_mut_ptr(),
        paramsArray: &CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default(),
        numExtSems: n,
    }
}

/// Wait node parameters over `sems` (`n` of them).
fn wait_params(sems: &mut [CUexternalSemaphore], n: u32) -> CUDA_EXT_SEM_WAIT_NODE_PARAMS {
    CUDA_EXT_SEM_WAIT_NODE_PARAMS {
        extSemArray: sems.as_mut_ptr(),
        paramsArray: &CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default(),
        numExtSems: n,
    }
}

fn node_cases() -> Vec<Case> {
    vec![
        case!("extsem.add_signal_node_null_params", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresSignalNode(&mut n, g, std::ptr::null(), 0, std::ptr::null());
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_signal_node_none", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = signal_params(&mut sems, 0);
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresSignalNode(&mut n, g, std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_signal_node_null_array", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let mut p = signal_params(&mut sems, 1);
            p.extSemArray = std::ptr::null_mut();
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresSignalNode(&mut n, g, std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_signal_node_null_semaphore", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = signal_params(&mut sems, 1);
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresSignalNode(&mut n, g, std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_signal_node_null_graph", Ctx, |e| {
            let mut sems = [std::ptr::null_mut(); 1];
            let p = signal_params(&mut sems, 1);
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresSignalNode(&mut n, std::ptr::null_mut(), std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_wait_node_null_params", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresWaitNode(&mut n, g, std::ptr::null(), 0, std::ptr::null());
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_wait_node_none", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = wait_params(&mut sems, 0);
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresWaitNode(&mut n, g, std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.add_wait_node_null_semaphore", Ctx, |e| {
            let (g, _) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = wait_params(&mut sems, 1);
            let mut n: CUgraphNode = sentinel();
            let st = e.p.cuGraphAddExternalSemaphoresWaitNode(&mut n, g, std::ptr::null(), 0, &p);
            Out::of(st).eq("node", handle(n))
        }),
        case!("extsem.signal_node_get_params_empty_node", Ctx, |e| {
            let (_, node) = with!(graph_with_node(e));
            let mut p = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS::default();
            Out::of(e.p.cuGraphExternalSemaphoresSignalNodeGetParams(node, &mut p))
        }),
        case!("extsem.wait_node_get_params_empty_node", Ctx, |e| {
            let (_, node) = with!(graph_with_node(e));
            let mut p = CUDA_EXT_SEM_WAIT_NODE_PARAMS::default();
            Out::of(e.p.cuGraphExternalSemaphoresWaitNodeGetParams(node, &mut p))
        }),
        case!("extsem.signal_node_get_params_null_out", Ctx, |e| {
            let (_, node) = with!(graph_with_node(e));
            Out::of(e.p.cuGraphExternalSemaphoresSignalNodeGetParams(node, std::ptr::null_mut()))
        }),
        case!("extsem.signal_node_set_params_empty_node", Ctx, |e| {
            let (_, node) = with!(graph_with_node(e));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = signal_params(&mut sems, 0);
            Out::of(e.p.cuGraphExternalSemaphoresSignalNodeSetParams(node, &p))
        }),
        case!("extsem.wait_node_set_params_null", Ctx, |e| {
            let (_, node) = with!(graph_with_node(e));
            Out::of(e.p.cuGraphExternalSemaphoresWaitNodeSetParams(node, std::ptr::null()))
        }),
        case!("extsem.exec_signal_node_set_params_empty_node", Ctx, |e| {
            let (g, node) = with!(graph_with_node(e));
            let mut x = std::ptr::null_mut();
            step!(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0));
            let mut sems = [std::ptr::null_mut(); 1];
            let p = signal_params(&mut sems, 0);
            Out::of(e.p.cuGraphExecExternalSemaphoresSignalNodeSetParams(x, node, &p))
        }),
        case!("extsem.exec_wait_node_set_params_null", Ctx, |e| {
            let (g, node) = with!(graph_with_node(e));
            let mut x = std::ptr::null_mut();
            step!(e.p.cuGraphInstantiateWithFlags(&mut x, g, 0));
            Out::of(e.p.cuGraphExecExternalSemaphoresWaitNodeSetParams(x, node, std::ptr::null()))
        }),
    ]
}
