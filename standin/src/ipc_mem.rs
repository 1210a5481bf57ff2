//! Legacy IPC memory handles: `cuIpcGetMemHandle`, `cuIpcOpenMemHandle`,
//! `cuIpcCloseMemHandle`.
//!
//! A handle is 64 bytes naming memory from `cuMemAlloc` (any address inside it): a mark,
//! the process, the allocation's start and size. As the real driver answers, memory of
//! any other kind (stream-ordered or pool allocations, virtual memory mappings, managed or
//! host memory) has no handle, and a process cannot open its own handle (CUDA_ERROR_INVALID_CONTEXT).
//! The stand-in's `cuMemAlloc` memory is the process's own heap, which no other process
//! can map: a handle another process made is refused with CUDA_ERROR_NOT_SUPPORTED (a
//! listed difference: share memory between processes with virtual memory exported as a
//! file descriptor, `vmm.rs`, or pool IPC, `ipc.rs`, which the stand-in shares for real).
//! Bytes no driver made are refused (CUDA_ERROR_INVALID_VALUE, as the real driver refuses 64
//! zero bytes). Since no handle is ever opened, `cuIpcCloseMemHandle` refuses every address
//! (CUDA_ERROR_INVALID_VALUE, as the real driver refuses a `cuMemAlloc` address and 0).
//! Recorded: cases `ipc_mem.*` (driver 580.159.04,
//! `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`).

use std::ffi::{c_char, c_uint};

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::model::memory::AllocationKind;
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
/// Marks handle bytes made by the stand-in.
const MAGIC: [u8; 8] = *b"cudrvIPM";
const LAZY_ENABLE_PEER_ACCESS: c_uint = CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.0;

/// The handle bytes for the allocation at `start` of `size` bytes, made by this process.
fn encode(start: u64, size: u64) -> CUipcMemHandle {
    let mut bytes = [0u8; 64];
    let fields = [u64::from(std::process::id()), start, size];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(std::iter::once(MAGIC).chain(fields.map(u64::to_le_bytes))) {
        chunk.copy_from_slice(&word);
    }
    CUipcMemHandle { reserved: bytes.map(|b| b as c_char) }
}

/// The process that made handle bytes, if the stand-in made them.
fn maker(h: &CUipcMemHandle) -> Option<u64> {
    let bytes = h.reserved.map(|b| b as u8);
    let mut words = bytes.chunks_exact(8).map(|c| <[u8; 8]>::try_from(c).ok());
    (words.next()?? == MAGIC).then_some(())?;
    Some(u64::from_le_bytes(words.next()??))
}

/// `cuIpcGetMemHandle`: the handle of the `cuMemAlloc` allocation holding `dptr`. A null
/// out-pointer, or an address in no such allocation: CUDA_ERROR_INVALID_VALUE; no current
/// context: CUDA_ERROR_INVALID_CONTEXT. Nothing is written on error.
pub(crate) unsafe fn cu_ipc_get_mem_handle(w: &World, out: *mut CUipcMemHandle, dptr: CUdeviceptr) -> CUresult {
    let r = non_null(out).and_then(|()| {
        w.contexts.current()?;
        let info = lock(&w.memory).describe(dptr).ok_or(INVALID)?;
        if info.host || info.kind != AllocationKind::Device {
            return Err(INVALID);
        }
        write(out, encode(info.start, info.size as u64))
    });
    status(r)
}

/// `cuIpcOpenMemHandle` (both variants): a null out-pointer or unknown flags:
/// CUDA_ERROR_INVALID_VALUE; no current context, or a handle of this process:
/// CUDA_ERROR_INVALID_CONTEXT; another process's stand-in handle: CUDA_ERROR_NOT_SUPPORTED;
/// bytes no stand-in made: CUDA_ERROR_INVALID_VALUE. Nothing is written.
pub(crate) unsafe fn cu_ipc_open_mem_handle(
    w: &World,
    out: *mut CUdeviceptr,
    handle: CUipcMemHandle,
    flags: c_uint,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        if flags & !LAZY_ENABLE_PEER_ACCESS != 0 {
            return Err(INVALID);
        }
        w.contexts.current()?;
        match maker(&handle) {
            None => Err(INVALID),
            Some(pid) if pid == u64::from(std::process::id()) => Err(CUresult::CUDA_ERROR_INVALID_CONTEXT),
            Some(_) => Err(CUresult::CUDA_ERROR_NOT_SUPPORTED),
        }
    });
    status(r)
}

/// `cuIpcCloseMemHandle`: no current context: CUDA_ERROR_INVALID_CONTEXT; any address
/// (none was opened): CUDA_ERROR_INVALID_VALUE.
pub(crate) unsafe fn cu_ipc_close_mem_handle(w: &World, _dptr: CUdeviceptr) -> CUresult {
    status(w.contexts.current().and(Err(INVALID)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_names_its_process() {
        let h = encode(1 << 45, 4096);
        assert_eq!(maker(&h), Some(u64::from(std::process::id())));
        assert_eq!(maker(&CUipcMemHandle { reserved: [0; 64] }), None);
    }
}
