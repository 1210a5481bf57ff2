//! Checkpointing (`cuCheckpointProcess{GetState,GetRestoreThreadId,Lock,Checkpoint,
//! Restore,Unlock}`).
//!
//! The stand-in knows one CUDA process: its own. Its state follows the documented machine
//! (`model/extres.rs`): RUNNING, LOCKED by `Lock`, CHECKPOINTED by `Checkpoint`, LOCKED
//! again by `Restore`, RUNNING by `Unlock`; a step from any other state:
//! CUDA_ERROR_ILLEGAL_STATE. Nothing is saved or blocked (the emulated device memory is
//! host memory, which a process checkpoint saves anyway). Custom storage for the calling
//! process is not supported, as documented. Its restore thread is reported as its main
//! thread (the stand-in has no restore thread).
//!
//! Recorded (driver 580.159.04, `docs/gpu-runs/h100/conformance-pending-2026-12-05.txt`,
//! cases `checkpoint.*`, all with no context current): the driver looks the pid up in the
//! operating system first, so pid 0 and a pid of no process answer
//! CUDA_ERROR_OPERATING_SYSTEM from every call; a live process that never initialised CUDA
//! (a child `sleep`) answers CUDA_ERROR_NOT_INITIALIZED; the process itself reads RUNNING
//! (0) and a positive restore thread id. Argument checks come before the pid: null
//! out-pointers and arguments whose reserved fields are not zero answer
//! CUDA_ERROR_INVALID_VALUE (lock arguments with `reserved0` 1, for a pid of no process).
//! Negative pids are taken as no process (not recorded). Another live CUDA process
//! answers CUDA_ERROR_NOT_INITIALIZED too: the stand-in cannot reach its driver (a
//! difference; not recorded: locking a process with a GPU context is not something a
//! case does).

use std::ffi::c_int;

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::model::extres::Checkpoint;
use crate::run::lock::lock;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const ILLEGAL: CUresult = CUresult::CUDA_ERROR_ILLEGAL_STATE;
/// A pid the operating system has no process for (or 0).
const NO_PROCESS: CUresult = CUresult::CUDA_ERROR_OPERATING_SYSTEM;

/// Which process `pid` is: `Ok(())` for this one; errors as the module says for others.
fn this_process(pid: c_int) -> Result<(), CUresult> {
    if pid <= 0 {
        return Err(NO_PROCESS);
    }
    if u32::try_from(pid).ok() == Some(std::process::id()) {
        return Ok(());
    }
    if std::path::Path::new(&format!("/proc/{pid}")).exists() {
        Err(CUresult::CUDA_ERROR_NOT_INITIALIZED)
    } else {
        Err(NO_PROCESS)
    }
}

/// Moves this process from `from` to `to` (else CUDA_ERROR_ILLEGAL_STATE).
fn step(w: &World, pid: c_int, from: Checkpoint, to: Checkpoint) -> Result<(), CUresult> {
    this_process(pid)?;
    let mut x = lock(&w.extres);
    if x.checkpoint != from {
        return Err(ILLEGAL);
    }
    x.checkpoint = to;
    Ok(())
}

/// `cuCheckpointProcessGetState`: this process's state.
pub(crate) unsafe fn cu_checkpoint_process_get_state(w: &World, pid: c_int, out: *mut CUprocessState) -> CUresult {
    let r = non_null(out).and_then(|()| {
        this_process(pid)?;
        let state = match lock(&w.extres).checkpoint {
            Checkpoint::Running => CUprocessState::CU_PROCESS_STATE_RUNNING,
            Checkpoint::Locked => CUprocessState::CU_PROCESS_STATE_LOCKED,
            Checkpoint::Checkpointed => CUprocessState::CU_PROCESS_STATE_CHECKPOINTED,
        };
        write(out, state)
    });
    status(r)
}

/// `cuCheckpointProcessGetRestoreThreadId`: this process's main thread.
pub(crate) unsafe fn cu_checkpoint_process_get_restore_thread_id(w: &World, pid: c_int, out: *mut c_int) -> CUresult {
    let _ = w;
    status(non_null(out).and_then(|()| this_process(pid)).and_then(|()| write(out, pid)))
}

/// Whether optional arguments at `args` are absent or have zero reserved fields.
fn reserved_zero<A>(args: *const A, zero: impl FnOnce(&A) -> bool) -> Result<(), CUresult> {
    if args.is_null() {
        return Ok(());
    }
    // SAFETY: a non-null pointer to the caller's arguments.
    if zero(unsafe { &*args }) {
        Ok(())
    } else {
        Err(INVALID)
    }
}

/// `cuCheckpointProcessLock`: RUNNING to LOCKED (the timeout is not needed: nothing runs
/// that a lock waits for).
pub(crate) unsafe fn cu_checkpoint_process_lock(w: &World, pid: c_int, args: *mut CUcheckpointLockArgs) -> CUresult {
    let r = reserved_zero(args, |a| a.reserved0 == 0 && a.reserved1.iter().all(|&x| x == 0))
        .and_then(|()| step(w, pid, Checkpoint::Running, Checkpoint::Locked));
    status(r)
}

/// `cuCheckpointProcessCheckpoint`: LOCKED to CHECKPOINTED; custom storage (for the
/// calling process): CUDA_ERROR_NOT_SUPPORTED.
pub(crate) unsafe fn cu_checkpoint_process_checkpoint(
    w: &World,
    pid: c_int,
    args: *mut CUcheckpointCheckpointArgs,
) -> CUresult {
    let r = reserved_zero(args, |a| a.reserved.iter().all(|&x| x == 0)).and_then(|()| {
        this_process(pid)?;
        // SAFETY: null or the caller's arguments (checked readable above).
        if !args.is_null() && !unsafe { (*args).customStorageInfo_out }.is_null() {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        step(w, pid, Checkpoint::Locked, Checkpoint::Checkpointed)
    });
    status(r)
}

/// `cuCheckpointProcessRestore`: CHECKPOINTED to LOCKED; GPU pairs must be a non-empty
/// array or none; custom storage (for the calling process): CUDA_ERROR_NOT_SUPPORTED.
pub(crate) unsafe fn cu_checkpoint_process_restore(
    w: &World,
    pid: c_int,
    args: *mut CUcheckpointRestoreArgs,
) -> CUresult {
    let r = reserved_zero(args, |a| {
        a.padding0 == 0 && a.reserved.iter().all(|&x| x == 0) && a.gpuPairs.is_null() == (a.gpuPairsCount == 0)
    })
    .and_then(|()| {
        this_process(pid)?;
        // SAFETY: null or the caller's arguments (checked readable above).
        if !args.is_null() && !unsafe { (*args).customStorageInfo_out }.is_null() {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        step(w, pid, Checkpoint::Checkpointed, Checkpoint::Locked)
    });
    status(r)
}

/// `cuCheckpointProcessUnlock`: LOCKED to RUNNING.
pub(crate) unsafe fn cu_checkpoint_process_unlock(
    w: &World,
    pid: c_int,
    args: *mut CUcheckpointUnlockArgs,
) -> CUresult {
    let r = reserved_zero(args, |a| a.reserved.iter().all(|&x| x == 0))
        .and_then(|()| step(w, pid, Checkpoint::Locked, Checkpoint::Running));
    status(r)
}
