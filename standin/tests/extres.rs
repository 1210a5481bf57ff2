//! External memory and semaphores over exported virtual memory, legacy IPC memory handles,
//! the checkpoint state of the stand-in's own process and multicast (`extmem.rs`,
//! `extsem.rs`, `ipc_mem.rs`, `checkpoint.rs`, `multicast.rs`). The answers asserted are
//! the real driver's where it recorded them (driver 580.159.04,
//! `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`).

mod common;

use common::{driver, driver_alone, new_context, ok};
use cudrv::sys::*;

const MIB: usize = 1 << 20;

/// 2 MiB of exportable virtual memory on device 0, mapped read-write, and a descriptor
/// exported for it: `(address, descriptor)`.
fn exported(d: &cudrv::Driver) -> (CUdeviceptr, i32) {
    let p = d.p();
    let mut prop = CUmemAllocationProp {
        type_: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        ..Default::default()
    };
    prop.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let mut access =
        CUmemAccessDesc { flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE, ..Default::default() };
    access.location = prop.location;
    let (mut h, mut va, mut fd) = (0, 0, -1i32);
    // SAFETY: valid out-pointers, properties and descriptors; handles of this test.
    unsafe {
        ok(p.cuMemCreate(&mut h, 2 * MIB, &prop, 0));
        ok(p.cuMemAddressReserve(&mut va, 2 * MIB, 0, 0, 0));
        ok(p.cuMemMap(va, 2 * MIB, 0, h, 0));
        ok(p.cuMemSetAccess(va, 2 * MIB, &access, 1));
        let t = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        ok(p.cuMemExportToShareableHandle((&raw mut fd).cast(), h, t, 0));
    }
    (va, fd)
}

/// An OPAQUE_FD external memory descriptor of `size` bytes for `fd`.
fn opaque(fd: i32, size: usize) -> CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
    let mut desc = CUDA_EXTERNAL_MEMORY_HANDLE_DESC {
        type_: CUexternalMemoryHandleType::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD,
        size: size as u64,
        ..Default::default()
    };
    desc.handle.fd = fd;
    desc
}

#[test]
fn a_buffer_of_imported_memory_shares_the_exported_bytes() {
    // A world of its own: its ledger and free memory are this test's alone.
    let (s, d) = driver_alone();
    let p = d.p();
    new_context(&d);
    let (va, fd) = exported(&d);
    let live = |h: u64| s.ledger().live_handles.iter().any(|&(k, v)| k == "external memory" && v == h);
    let (mut free_before, mut free_after, mut total) = (0, 0, 0);
    let mut m = std::ptr::null_mut();
    // SAFETY: valid out-pointers and descriptors; objects of this test.
    unsafe {
        ok(p.cuImportExternalMemory(&mut m, &opaque(fd, 2 * MIB)));
        assert!(live(m as u64));
        ok(p.cuMemGetInfo(&mut free_before, &mut total));
        let b = CUDA_EXTERNAL_MEMORY_BUFFER_DESC { offset: MIB as u64, size: MIB as u64, ..Default::default() };
        let mut buf = 0;
        ok(p.cuExternalMemoryGetMappedBuffer(&mut buf, m, &b));
        // As recorded (extmem.buffer_past_size).
        let past =
            CUDA_EXTERNAL_MEMORY_BUFFER_DESC { offset: MIB as u64, size: (2 * MIB) as u64, ..Default::default() };
        let mut none = 0;
        assert_eq!(p.cuExternalMemoryGetMappedBuffer(&mut none, m, &past), CUresult::CUDA_ERROR_INVALID_VALUE);
        // Written through the virtual memory mapping, read through the buffer, and back.
        let (w, mut r) = ([9u8; 8], [0u8; 8]);
        ok(p.cuMemcpyHtoD(va + MIB as u64 + 8, w.as_ptr().cast(), 8));
        ok(p.cuMemcpyDtoH(r.as_mut_ptr().cast(), buf + 8, 8));
        assert_eq!(r, w);
        ok(p.cuMemsetD8(buf, 4, 8));
        ok(p.cuMemcpyDtoH(r.as_mut_ptr().cast(), va + MIB as u64, 8));
        assert_eq!(r, [4u8; 8]);
        ok(p.cuDestroyExternalMemory(m));
        assert_eq!(p.cuDestroyExternalMemory(m), CUresult::CUDA_ERROR_INVALID_HANDLE);
        // As recorded (extmem.buffer_after_destroy_still_reads): the buffer outlives the
        // object, and its free gives back no device memory.
        ok(p.cuMemcpyDtoH(r.as_mut_ptr().cast(), buf, 8));
        ok(p.cuMemFree(buf));
        ok(p.cuMemGetInfo(&mut free_after, &mut total));
    }
    assert_eq!(free_after, free_before);
    assert!(!live(m as u64));
}

#[test]
fn ipc_memory_handles_name_mem_alloc_memory_only() {
    let d = driver();
    let p = d.p();
    new_context(&d);
    let (mut dptr, mut async_ptr) = (0, 0);
    let mut handle = CUipcMemHandle { reserved: [0; 64] };
    // SAFETY: valid out-pointers; memory of this test.
    unsafe {
        ok(p.cuMemAlloc(&mut dptr, 4096));
        ok(p.cuIpcGetMemHandle(&mut handle, dptr + 16));
        assert!(handle.reserved.iter().any(|&b| b != 0));
        ok(p.cuMemAllocAsync(&mut async_ptr, 4096, std::ptr::null_mut()));
        ok(p.cuStreamSynchronize(std::ptr::null_mut()));
        let mut other = CUipcMemHandle { reserved: [0; 64] };
        assert_eq!(p.cuIpcGetMemHandle(&mut other, async_ptr), CUresult::CUDA_ERROR_INVALID_VALUE);
        let mut opened = 0;
        assert_eq!(p.cuIpcOpenMemHandle(&mut opened, handle, 1), CUresult::CUDA_ERROR_INVALID_CONTEXT);
        // As recorded (ipc_mem.open_zeros): bytes no driver made are refused.
        assert_eq!(
            p.cuIpcOpenMemHandle(&mut opened, CUipcMemHandle { reserved: [0; 64] }, 1),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(opened, 0);
        assert_eq!(p.cuIpcCloseMemHandle(dptr), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn the_own_process_walks_the_checkpoint_states() {
    let d = cudrv_standin::StandIn::isolated(13000).unwrap().load(Default::default()).unwrap();
    let p = d.p();
    let pid = std::process::id() as i32;
    let state = |want: CUprocessState| {
        let mut s = CUprocessState(99);
        // SAFETY: a valid out-pointer.
        ok(unsafe { p.cuCheckpointProcessGetState(pid, &mut s) });
        assert_eq!(s, want);
    };
    // SAFETY: plain calls; no arguments (optional).
    unsafe {
        ok(p.cuInit(0));
        state(CUprocessState::CU_PROCESS_STATE_RUNNING);
        let null = std::ptr::null_mut();
        assert_eq!(p.cuCheckpointProcessUnlock(pid, null), CUresult::CUDA_ERROR_ILLEGAL_STATE);
        ok(p.cuCheckpointProcessLock(pid, std::ptr::null_mut()));
        state(CUprocessState::CU_PROCESS_STATE_LOCKED);
        assert_eq!(p.cuCheckpointProcessLock(pid, std::ptr::null_mut()), CUresult::CUDA_ERROR_ILLEGAL_STATE);
        ok(p.cuCheckpointProcessCheckpoint(pid, std::ptr::null_mut()));
        state(CUprocessState::CU_PROCESS_STATE_CHECKPOINTED);
        ok(p.cuCheckpointProcessRestore(pid, std::ptr::null_mut()));
        state(CUprocessState::CU_PROCESS_STATE_LOCKED);
        ok(p.cuCheckpointProcessUnlock(pid, null));
        state(CUprocessState::CU_PROCESS_STATE_RUNNING);
        // As recorded (checkpoint.*_pid_zero, *_no_process): the operating system knows
        // no such process.
        let mut s = CUprocessState(99);
        assert_eq!(p.cuCheckpointProcessGetState(0, &mut s), CUresult::CUDA_ERROR_OPERATING_SYSTEM);
        assert_eq!(p.cuCheckpointProcessLock(i32::MAX, std::ptr::null_mut()), CUresult::CUDA_ERROR_OPERATING_SYSTEM);
        assert_eq!(s, CUprocessState(99));
        let mut a = CUcheckpointLockArgs { reserved0: 1, ..Default::default() };
        assert_eq!(p.cuCheckpointProcessLock(i32::MAX, &mut a), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn imports_take_sizes_past_the_memory_and_refuse_unknown_descriptors() {
    let (world, d) = driver_alone();
    let p = d.p();
    new_context(&d);
    let (_, fd) = exported(&d);
    let (_, other) = exported(&d);
    let null = std::fs::File::open("/dev/null").unwrap();
    let null_fd = std::os::fd::AsRawFd::as_raw_fd(&null);
    // SAFETY: valid out-pointers and descriptors; objects of this test.
    unsafe {
        // As recorded (extmem.import_fd_negative, import_fd_dev_null): the kernel refuses.
        let mut m = std::ptr::null_mut();
        assert_eq!(p.cuImportExternalMemory(&mut m, &opaque(-1, 2 * MIB)), CUresult::CUDA_ERROR_UNKNOWN);
        assert_eq!(p.cuImportExternalMemory(&mut m, &opaque(null_fd, 2 * MIB)), CUresult::CUDA_ERROR_UNKNOWN);
        assert!(m.is_null());
        // As recorded (extmem.import_vmm_fd_larger): twice the memory is taken.
        ok(p.cuImportExternalMemory(&mut m, &opaque(fd, 4 * MIB)));
        // Not recorded: no buffer reaches past the memory itself.
        let mut buf = 0;
        let past =
            CUDA_EXTERNAL_MEMORY_BUFFER_DESC { offset: MIB as u64, size: (2 * MIB) as u64, ..Default::default() };
        assert_eq!(p.cuExternalMemoryGetMappedBuffer(&mut buf, m, &past), CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(buf, 0);
        let inside = CUDA_EXTERNAL_MEMORY_BUFFER_DESC { size: (2 * MIB) as u64, ..Default::default() };
        ok(p.cuExternalMemoryGetMappedBuffer(&mut buf, m, &inside));
        ok(p.cuMemFree(buf));
        // As recorded (extmem.buffer_null_object, destroy_null): a null object.
        assert_eq!(
            p.cuExternalMemoryGetMappedBuffer(&mut buf, std::ptr::null_mut(), &inside),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(p.cuDestroyExternalMemory(std::ptr::null_mut()), CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuDestroyExternalMemory(m));
        // As recorded (extsem.import_opaque_fd_vmm_memory): exported memory is a semaphore.
        let mut desc = CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
            type_: CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD,
            ..Default::default()
        };
        desc.handle.fd = other;
        let mut s = std::ptr::null_mut();
        ok(p.cuImportExternalSemaphore(&mut s, &desc));
        let live = || world.ledger().live_handles.iter().any(|&(k, v)| k == "external semaphore" && v == s as u64);
        assert!(live());
        let sems = [s];
        let signal = [CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default()];
        let wait = [CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default()];
        let stream = std::ptr::null_mut();
        ok(p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), signal.as_ptr(), 1, stream));
        ok(p.cuWaitExternalSemaphoresAsync(sems.as_ptr(), wait.as_ptr(), 1, stream));
        // As recorded (extsem.signal_none, wait_null_semaphore): no semaphores, a null one.
        let err = p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), signal.as_ptr(), 0, stream);
        assert_eq!(err, CUresult::CUDA_ERROR_INVALID_VALUE);
        let nulls = [std::ptr::null_mut()];
        let err = p.cuWaitExternalSemaphoresAsync(nulls.as_ptr(), wait.as_ptr(), 1, stream);
        assert_eq!(err, CUresult::CUDA_ERROR_INVALID_VALUE);
        ok(p.cuDestroyExternalSemaphore(s));
        assert!(!live());
        assert_eq!(p.cuDestroyExternalSemaphore(s), CUresult::CUDA_ERROR_INVALID_HANDLE);
        let err = p.cuSignalExternalSemaphoresAsync(sems.as_ptr(), signal.as_ptr(), 1, stream);
        assert_eq!(err, CUresult::CUDA_ERROR_INVALID_HANDLE);
        // As recorded (extsem.import_*_fd_dev_null, import_timeline_fd_negative).
        desc.handle.fd = null_fd;
        assert_eq!(p.cuImportExternalSemaphore(&mut s, &desc), CUresult::CUDA_ERROR_UNKNOWN);
        desc.type_ = CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD;
        desc.handle.fd = -1;
        assert_eq!(p.cuImportExternalSemaphore(&mut s, &desc), CUresult::CUDA_ERROR_INVALID_VALUE);
    }
}

#[test]
fn external_semaphore_nodes_keep_their_parameters_and_are_captured() {
    let (_s, d) = driver_alone();
    let p = d.p();
    new_context(&d);
    let (_va, fd) = exported(&d);
    let mut desc = CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC {
        type_: CUexternalSemaphoreHandleType::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD,
        ..Default::default()
    };
    desc.handle.fd = fd;
    // SAFETY: valid out-pointers and parameter arrays of this test; handles of this test.
    unsafe {
        let mut sem = std::ptr::null_mut();
        ok(p.cuImportExternalSemaphore(&mut sem, &desc));
        let (mut g, mut node) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuGraphCreate(&mut g, 0));
        // A signal node of one semaphore, then read back: the node's own copies.
        let mut sems = [sem];
        let mut blocks = [CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS::default()];
        blocks[0].params.fence.value = 42;
        let params = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS {
            extSemArray: sems.as_mut_ptr(),
            paramsArray: blocks.as_ptr(),
            numExtSems: 1,
        };
        ok(p.cuGraphAddExternalSemaphoresSignalNode(&mut node, g, std::ptr::null(), 0, &params));
        sems[0] = std::ptr::null_mut();
        let mut back = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS::default();
        ok(p.cuGraphExternalSemaphoresSignalNodeGetParams(node, &mut back));
        assert_eq!(back.numExtSems, 1);
        assert_ne!(back.extSemArray, sems.as_mut_ptr(), "the node's own array");
        assert_eq!(*back.extSemArray, sem);
        assert_ne!(back.paramsArray, blocks.as_ptr(), "the node's own array");
        assert_eq!((*back.paramsArray).params.fence.value, 42);
        let mut kind = CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        ok(p.cuGraphNodeGetType(node, &mut kind));
        assert_eq!(kind, CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL);
        // The wait form refuses a signal node, as for any node of another kind.
        let mut wait_back = CUDA_EXT_SEM_WAIT_NODE_PARAMS::default();
        let err = p.cuGraphExternalSemaphoresWaitNodeGetParams(node, &mut wait_back);
        assert_eq!(err, CUresult::CUDA_ERROR_INVALID_VALUE);
        // Set to no semaphores; the exec takes new parameters; a launch does nothing else.
        let none = CUDA_EXT_SEM_SIGNAL_NODE_PARAMS::default();
        ok(p.cuGraphExternalSemaphoresSignalNodeSetParams(node, &none));
        ok(p.cuGraphExternalSemaphoresSignalNodeGetParams(node, &mut back));
        assert_eq!(back.numExtSems, 0);
        let mut exec = std::ptr::null_mut();
        ok(p.cuGraphInstantiateWithFlags(&mut exec, g, 0));
        sems[0] = sem;
        ok(p.cuGraphExecExternalSemaphoresSignalNodeSetParams(exec, node, &params));
        ok(p.cuGraphLaunch(exec, std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
        ok(p.cuGraphExecDestroy(exec));
        ok(p.cuGraphDestroy(g));
        // A wait on a capturing stream is recorded as a wait node.
        let mut stream = std::ptr::null_mut();
        ok(p.cuStreamCreate(&mut stream, CUstream_flags::CU_STREAM_NON_BLOCKING.0));
        ok(p.cuStreamBeginCapture(stream, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL));
        let wait = [CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS::default()];
        ok(p.cuWaitExternalSemaphoresAsync(sems.as_ptr(), wait.as_ptr(), 1, stream));
        ok(p.cuStreamEndCapture(stream, &mut g));
        let (mut nodes, mut count) = ([std::ptr::null_mut(); 2], 2usize);
        ok(p.cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut count));
        assert_eq!(count, 1);
        ok(p.cuGraphNodeGetType(nodes[0], &mut kind));
        assert_eq!(kind, CUgraphNodeType::CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT);
        ok(p.cuGraphDestroy(g));
        ok(p.cuStreamDestroy(stream));
        ok(p.cuDestroyExternalSemaphore(sem));
    }
}

#[test]
fn a_mipmapped_array_of_imported_memory_lies_over_its_bytes() {
    let d = driver();
    let p = d.p();
    new_context(&d);
    let (va, fd) = exported(&d);
    let mut desc = CUDA_EXTERNAL_MEMORY_MIPMAPPED_ARRAY_DESC { offset: 4096, numLevels: 2, ..Default::default() };
    desc.arrayDesc = CUDA_ARRAY3D_DESCRIPTOR {
        Width: 64,
        Height: 64,
        Format: CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
        NumChannels: 1,
        ..Default::default()
    };
    // SAFETY: valid out-pointers and descriptors; objects of this test.
    unsafe {
        let mut m = std::ptr::null_mut();
        ok(p.cuImportExternalMemory(&mut m, &opaque(fd, 2 * MIB)));
        // As recorded (extmem.mipmap_vmm_fd).
        let mut mm = std::ptr::null_mut();
        ok(p.cuExternalMemoryGetMappedMipmappedArray(&mut mm, m, &desc));
        let (mut level0, mut level1) = (std::ptr::null_mut(), std::ptr::null_mut());
        ok(p.cuMipmappedArrayGetLevel(&mut level0, mm, 0));
        ok(p.cuMipmappedArrayGetLevel(&mut level1, mm, 1));
        // Level 0 starts at the offset, row after row; level 1 right after it.
        let row: Vec<u8> = (0..64).collect();
        ok(p.cuMemcpyHtoA(level0, 0, row.as_ptr().cast(), row.len()));
        let mut back = vec![0u8; 64];
        ok(p.cuMemcpyDtoH(back.as_mut_ptr().cast(), va + 4096, back.len()));
        assert_eq!(back, row);
        ok(p.cuMemsetD8(va + 4096 + 64 * 64, 7, 32 * 32));
        let mut small = [0u8; 32];
        ok(p.cuMemcpyAtoH(small.as_mut_ptr().cast(), level1, 0, small.len()));
        assert_eq!(small, [7u8; 32]);
        // Levels past the imported size.
        let mut far = desc;
        far.offset = (2 * MIB - 4096) as u64;
        let mut none = std::ptr::null_mut();
        let err = p.cuExternalMemoryGetMappedMipmappedArray(&mut none, m, &far);
        assert_eq!(err, CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(none.is_null());
        ok(p.cuDestroyExternalMemory(m));
        ok(p.cuMipmappedArrayDestroy(mm));
    }
}

#[test]
fn every_multicast_call_is_not_supported() {
    let d = driver();
    let p = d.p();
    // As recorded (multicast.*): before any argument or context is looked at.
    let none = CUresult::CUDA_ERROR_NOT_SUPPORTED;
    // SAFETY: the calls look at no argument (null pointers included).
    unsafe {
        ok(p.cuInit(0));
        let option = CUmulticastGranularity_flags(0);
        assert_eq!(p.cuMulticastGetGranularity(std::ptr::null_mut(), std::ptr::null(), option), none);
        assert_eq!(p.cuMulticastCreate(std::ptr::null_mut(), std::ptr::null()), none);
        new_context(&d);
        assert_eq!(p.cuMulticastAddDevice(0, 99), none);
        assert_eq!(p.cuMulticastBindMem_v12010(1, 0, 1, 0, 2 * MIB, 0), none);
        assert_eq!(p.cuMulticastBindAddr_v12010(0, 0, 0, 2 * MIB, 0), none);
        assert_eq!(p.cuMulticastUnbind(1, 0, 0, 2 * MIB), none);
    }
}
