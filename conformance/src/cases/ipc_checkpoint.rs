//! Legacy IPC memory handles, checkpointing and multicast (issue 29), in one process.
//!
//! Checkpoint cases name only a pid of no process, pid 0, a live child that is no CUDA
//! process (`sleep`, killed after), and this process for the two reads: locking or
//! checkpointing the process running the case would stop it. No case calls
//! `cuMulticastCreate` (it can take a host's GPUs down): the H200 has no multicast
//! (attribute 132 reads 0), and the other multicast calls get handles 0 and 1 only.

use std::process::{Child, Command};

use cudrv::call;
use cudrv::sys::*;

use super::{alloc, case, number, number32, step, with, Case, Env, Out, UNTOUCHED};

/// No process has this id (Linux's pid_max is at most 2^22).
const NO_PROCESS: i32 = i32::MAX;

/// The handle of `dptr`: the answer and whether bytes were written.
fn get(e: &Env, dptr: CUdeviceptr) -> Out {
    let mut h = CUipcMemHandle { reserved: [0x5e; 64] };
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuIpcGetMemHandle(&mut h, dptr) };
    Out::of(st).eq("written", h.reserved.iter().any(|&b| b != 0x5e))
}

/// Opens `h` with `flags`; the answer and the pointer written.
fn open(e: &Env, h: CUipcMemHandle, flags: u32) -> Out {
    let mut d = UNTOUCHED;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuIpcOpenMemHandle(&mut d, h, flags) };
    Out::of(st).eq("pointer", number(d))
}

/// A live child process that is no CUDA process (`sleep 5`).
fn child() -> Result<Child, Out> {
    Command::new("sleep").arg("5").spawn().map_err(|_| Out::setup_failed("spawn sleep", CUresult::CUDA_ERROR_UNKNOWN))
}

/// `Out` of `f(pid)` for a live non-CUDA child, which is killed after.
fn with_child(f: impl FnOnce(i32) -> Out) -> Out {
    let mut c = with!(child());
    let out = f(i32::try_from(c.id()).unwrap_or(NO_PROCESS));
    let _ = c.kill();
    let _ = c.wait();
    out
}

fn state(e: &Env, pid: i32) -> Out {
    let mut s = CUprocessState(UNTOUCHED as u32);
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuCheckpointProcessGetState(pid, &mut s) };
    Out::of(st).eq("state", number32(s.0))
}

fn restore_tid(e: &Env, pid: i32) -> Out {
    let mut t = UNTOUCHED as i32;
    // SAFETY: a valid out-pointer.
    let st = unsafe { e.p.cuCheckpointProcessGetRestoreThreadId(pid, &mut t) };
    Out::of(st).eq(
        "tid",
        if t == UNTOUCHED as i32 {
            "untouched"
        } else if t > 0 {
            "positive"
        } else {
            "other"
        },
    )
}

/// Lock with a one-second timeout (a lock of a process that never answers returns).
fn lock(e: &Env, pid: i32) -> Out {
    let mut a = CUcheckpointLockArgs { timeoutMs: 1000, ..Default::default() };
    // SAFETY: valid arguments.
    Out::of(unsafe { e.p.cuCheckpointProcessLock(pid, &mut a) })
}

fn checkpoint(e: &Env, pid: i32) -> Out {
    // SAFETY: no arguments (optional).
    Out::of(unsafe { e.p.cuCheckpointProcessCheckpoint(pid, std::ptr::null_mut()) })
}

fn restore(e: &Env, pid: i32) -> Out {
    // SAFETY: no arguments (optional).
    Out::of(unsafe { e.p.cuCheckpointProcessRestore(pid, std::ptr::null_mut()) })
}

fn unlock(e: &Env, pid: i32) -> Out {
    // SAFETY: no arguments (optional).
    Out::of(unsafe { e.p.cuCheckpointProcessUnlock(pid, std::ptr::null_mut()) })
}

/// Multicast properties: one device, 2 MiB, POSIX file descriptors.
fn mc_prop() -> CUmulticastObjectProp {
    CUmulticastObjectProp {
        numDevices: 1,
        size: 2 << 20,
        handleTypes: u64::from(CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0),
        flags: 0,
    }
}

fn granularity(e: &Env, prop: &CUmulticastObjectProp, option: u32) -> Out {
    let mut g = UNTOUCHED as usize;
    // SAFETY: a valid out-pointer and properties.
    let st = unsafe { e.p.cuMulticastGetGranularity(&mut g, prop, CUmulticastGranularity_flags(option)) };
    Out::of(st).eq("granularity", number(g as u64))
}

const CKPT: &[cudrv::Call] = &[call::cuCheckpointProcessGetState];
const MC: &[cudrv::Call] = &[call::cuMulticastGetGranularity];

pub fn cases() -> Vec<Case> {
    [ipc_cases(), checkpoint_cases(), multicast_cases()].concat()
}

fn ipc_cases() -> Vec<Case> {
    vec![
        case!("ipc_mem.get", Ctx, |e| { get(e, with!(alloc(e, 4096))) }),
        case!("ipc_mem.get_interior", Ctx, |e| { get(e, with!(alloc(e, 4096)) + 256) }),
        case!("ipc_mem.get_null_handle", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            Out::of(e.p.cuIpcGetMemHandle(std::ptr::null_mut(), d))
        }),
        case!("ipc_mem.get_zero", Ctx, |e| { get(e, 0) }),
        case!("ipc_mem.get_freed", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            step!(e.p.cuMemFree(d));
            get(e, d)
        }),
        case!("ipc_mem.get_async_alloc", Ctx, |e| {
            let mut d = 0;
            step!(e.p.cuMemAllocAsync(&mut d, 4096, std::ptr::null_mut()));
            step!(e.p.cuStreamSynchronize(std::ptr::null_mut()));
            get(e, d)
        }),
        case!("ipc_mem.get_host", Ctx, |e| {
            let mut p = std::ptr::null_mut();
            step!(e.p.cuMemAllocHost(&mut p, 4096));
            get(e, p as usize as CUdeviceptr)
        }),
        case!("ipc_mem.get_managed", Ctx, |e| {
            let mut d = 0;
            step!(e.p.cuMemAllocManaged(&mut d, 4096, CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL.0));
            get(e, d)
        }),
        case!("ipc_mem.get_no_context", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            step!(e.p.cuCtxSetCurrent(std::ptr::null_mut()));
            get(e, d)
        }),
        case!("ipc_mem.open_same_process", Ctx, |e| {
            let mut h = CUipcMemHandle { reserved: [0; 64] };
            step!(e.p.cuIpcGetMemHandle(&mut h, with!(alloc(e, 4096))));
            open(e, h, CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.0)
        }),
        case!("ipc_mem.open_zeros", Ctx, |e| { open(e, CUipcMemHandle { reserved: [0; 64] }, 1) }),
        case!("ipc_mem.open_bad_flags", Ctx, |e| {
            let mut h = CUipcMemHandle { reserved: [0; 64] };
            step!(e.p.cuIpcGetMemHandle(&mut h, with!(alloc(e, 4096))));
            open(e, h, 2)
        }),
        case!("ipc_mem.open_null_out", Ctx, |e| {
            let mut h = CUipcMemHandle { reserved: [0; 64] };
            step!(e.p.cuIpcGetMemHandle(&mut h, with!(alloc(e, 4096))));
            Out::of(e.p.cuIpcOpenMemHandle(std::ptr::null_mut(), h, 1))
        }),
        case!("ipc_mem.close_mem_alloc", Ctx, |e| { Out::of(e.p.cuIpcCloseMemHandle(with!(alloc(e, 4096)))) }),
        case!("ipc_mem.close_zero", Ctx, |e| { Out::of(e.p.cuIpcCloseMemHandle(0)) }),
    ]
}

fn checkpoint_cases() -> Vec<Case> {
    vec![
        case!("checkpoint.get_state_self", Init, since 12080 CKPT, |e| {
            state(e, std::process::id() as i32)
        }),
        case!("checkpoint.get_state_self_null", Init, since 12080 CKPT, |e| {
            Out::of(e.p.cuCheckpointProcessGetState(std::process::id() as i32, std::ptr::null_mut()))
        }),
        case!("checkpoint.get_state_pid_zero", Init, since 12080 CKPT, |e| { state(e, 0) }),
        case!("checkpoint.get_state_no_process", Init, since 12080 CKPT, |e| { state(e, NO_PROCESS) }),
        case!("checkpoint.get_state_child", Init, since 12080 CKPT, |e| { with_child(|pid| state(e, pid)) }),
        case!("checkpoint.restore_tid_self", Init, since 12080 CKPT, |e| {
            restore_tid(e, std::process::id() as i32)
        }),
        case!("checkpoint.restore_tid_self_null", Init, since 12080 CKPT, |e| {
            Out::of(e.p.cuCheckpointProcessGetRestoreThreadId(std::process::id() as i32, std::ptr::null_mut()))
        }),
        case!("checkpoint.restore_tid_no_process", Init, since 12080 CKPT, |e| { restore_tid(e, NO_PROCESS) }),
        case!("checkpoint.restore_tid_child", Init, since 12080 CKPT, |e| { with_child(|pid| restore_tid(e, pid)) }),
        case!("checkpoint.lock_pid_zero", Init, since 12080 CKPT, |e| { lock(e, 0) }),
        case!("checkpoint.lock_no_process", Init, since 12080 CKPT, |e| { lock(e, NO_PROCESS) }),
        case!("checkpoint.lock_child", Init, since 12080 CKPT, |e| { with_child(|pid| lock(e, pid)) }),
        case!("checkpoint.lock_reserved_no_process", Init, since 12080 CKPT, |e| {
            let mut a = CUcheckpointLockArgs { reserved0: 1, ..Default::default() };
            Out::of(e.p.cuCheckpointProcessLock(NO_PROCESS, &mut a))
        }),
        case!("checkpoint.checkpoint_no_process", Init, since 12080 CKPT, |e| { checkpoint(e, NO_PROCESS) }),
        case!("checkpoint.checkpoint_child", Init, since 12080 CKPT, |e| { with_child(|pid| checkpoint(e, pid)) }),
        case!("checkpoint.restore_no_process", Init, since 12080 CKPT, |e| { restore(e, NO_PROCESS) }),
        case!("checkpoint.restore_child", Init, since 12080 CKPT, |e| { with_child(|pid| restore(e, pid)) }),
        case!("checkpoint.unlock_pid_zero", Init, since 12080 CKPT, |e| { unlock(e, 0) }),
        case!("checkpoint.unlock_no_process", Init, since 12080 CKPT, |e| { unlock(e, NO_PROCESS) }),
        case!("checkpoint.unlock_child", Init, since 12080 CKPT, |e| { with_child(|pid| unlock(e, pid)) }),
    ]
}

fn multicast_cases() -> Vec<Case> {
    vec![
        case!("multicast.supported_attribute", Init, |e| {
            let mut v = UNTOUCHED as i32;
            let a = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED;
            let st = e.p.cuDeviceGetAttribute(&mut v, a, e.dev);
            Out::of(st).eq("value", v)
        }),
        case!("multicast.granularity_minimum", Ctx, since 12010 MC, |e| { granularity(e, &mc_prop(), 0) }),
        case!("multicast.granularity_recommended", Ctx, since 12010 MC, |e| { granularity(e, &mc_prop(), 1) }),
        case!("multicast.granularity_no_context", Init, since 12010 MC, |e| { granularity(e, &mc_prop(), 0) }),
        case!("multicast.granularity_bad_option", Ctx, since 12010 MC, |e| { granularity(e, &mc_prop(), 7) }),
        case!("multicast.granularity_no_devices", Ctx, since 12010 MC, |e| {
            granularity(e, &CUmulticastObjectProp { numDevices: 0, ..mc_prop() }, 0)
        }),
        case!("multicast.granularity_size_zero", Ctx, since 12010 MC, |e| {
            granularity(e, &CUmulticastObjectProp { size: 0, ..mc_prop() }, 0)
        }),
        case!("multicast.granularity_flags", Ctx, since 12010 MC, |e| {
            granularity(e, &CUmulticastObjectProp { flags: 1, ..mc_prop() }, 0)
        }),
        case!("multicast.granularity_win32_handles", Ctx, since 12010 MC, |e| {
            let t = u64::from(CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_WIN32.0);
            granularity(e, &CUmulticastObjectProp { handleTypes: t, ..mc_prop() }, 0)
        }),
        case!("multicast.granularity_null_prop", Ctx, since 12010 MC, |e| {
            let mut g = UNTOUCHED as usize;
            let st = e.p.cuMulticastGetGranularity(&mut g, std::ptr::null(), CUmulticastGranularity_flags(0));
            Out::of(st).eq("granularity", number(g as u64))
        }),
        case!("multicast.granularity_null_out", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastGetGranularity(std::ptr::null_mut(), &mc_prop(), CUmulticastGranularity_flags(0)))
        }),
        case!("multicast.add_device_handle_zero", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastAddDevice(0, e.dev))
        }),
        case!("multicast.add_device_handle_one", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastAddDevice(1, e.dev))
        }),
        case!("multicast.add_device_bad_device", Ctx, since 12010 MC, |e| { Out::of(e.p.cuMulticastAddDevice(0, 99)) }),
        case!("multicast.bind_mem_handle_zero", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastBindMem_v12010(0, 0, 0, 0, 2 << 20, 0))
        }),
        case!("multicast.bind_mem_handle_one", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastBindMem_v12010(1, 0, 1, 0, 2 << 20, 0))
        }),
        case!("multicast.bind_addr_handle_zero", Ctx, since 12010 MC, |e| {
            let d = with!(alloc(e, 2 << 20));
            Out::of(e.p.cuMulticastBindAddr_v12010(0, 0, d, 2 << 20, 0))
        }),
        case!("multicast.bind_addr_handle_one", Ctx, since 12010 MC, |e| {
            let d = with!(alloc(e, 2 << 20));
            Out::of(e.p.cuMulticastBindAddr_v12010(1, 0, d, 2 << 20, 0))
        }),
        case!("multicast.unbind_handle_zero", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastUnbind(0, e.dev, 0, 2 << 20))
        }),
        case!("multicast.unbind_handle_one", Ctx, since 12010 MC, |e| {
            Out::of(e.p.cuMulticastUnbind(1, e.dev, 0, 2 << 20))
        }),
    ]
}
