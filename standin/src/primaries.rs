//! The primary context of each device: made by the first retain, destroyed by the last
//! release or by a reset (`docs/driver-facts.md`, "Edge cases on the real driver"). The old
//! handle then answers CUDA_ERROR_CONTEXT_IS_DESTROYED to every use, and the next retain
//! makes a fresh primary context, with a new handle and a clean state.
//!
//! A reset does not release (CUDA documentation of `cuDevicePrimaryCtxReset`): the retain
//! count stays, and a retain after it makes the fresh context.

use std::ffi::{c_int, c_uint};
use std::sync::{Arc, LazyLock, Mutex};

use cudrv::sys::CUresult;

use crate::context::{self, Context};
use crate::device::{valid_device, MAX_DEVICES};
use crate::entry::lock;

/// One device's primary context.
#[derive(Default)]
struct Slot {
    /// The live primary context, while it is active.
    ctx: Option<Arc<Context>>,
    /// Retains not yet released.
    retained: u32,
    /// Its flags (`cuDevicePrimaryCtxSetFlags`), kept while it is inactive too.
    flags: c_uint,
}

static SLOTS: LazyLock<Vec<Mutex<Slot>>> = LazyLock::new(|| (0..MAX_DEVICES).map(|_| Mutex::default()).collect());

/// The slot of `device`: CUDA_ERROR_INVALID_DEVICE for an invalid device.
fn slot(device: c_int) -> Result<&'static Mutex<Slot>, CUresult> {
    let i = usize::try_from(device).ok().filter(|_| valid_device(device));
    i.and_then(|i| SLOTS.get(i)).ok_or(CUresult::CUDA_ERROR_INVALID_DEVICE)
}

/// `cuDevicePrimaryCtxRetain`: the device's primary context, made now if it is not active.
pub(crate) fn retain(device: c_int) -> Result<Arc<Context>, CUresult> {
    let mut s = lock(slot(device)?);
    s.retained = s.retained.checked_add(1).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    Ok(Arc::clone(s.ctx.get_or_insert_with(|| context::create(device, true, 0))))
}

/// `cuDevicePrimaryCtxRelease`: the last release destroys the context (after its work).
/// With no retain outstanding: CUDA_ERROR_INVALID_CONTEXT.
pub(crate) fn release(device: c_int) -> Result<(), CUresult> {
    let ended = {
        let mut s = lock(slot(device)?);
        s.retained = s.retained.checked_sub(1).ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        if s.retained > 0 {
            return Ok(());
        }
        s.ctx.take()
    };
    // Outside the slot's lock: waiting may take a while.
    ended.map_or(Ok(()), |c| context::end_primary(&c))
}

/// `cuDevicePrimaryCtxReset`: destroys the active primary context (after its work); the
/// retain count stays.
pub(crate) fn reset(device: c_int) -> Result<(), CUresult> {
    let ended = lock(slot(device)?).ctx.take();
    ended.map_or(Ok(()), |c| context::end_primary(&c))
}

/// `device`'s primary context flags, and whether it is active (retained, and not reset
/// since): CUDA_ERROR_INVALID_DEVICE for an invalid device. For
/// `cuDevicePrimaryCtxGetState` and `cuCtxGetFlags`.
pub(crate) fn state(device: c_int) -> Result<(c_uint, bool), CUresult> {
    let s = lock(slot(device)?);
    Ok((s.flags, s.ctx.is_some()))
}

/// `cuDevicePrimaryCtxSetFlags`: kept, reported by [`state`]; they change nothing else.
pub(crate) fn set_flags(device: c_int, flags: c_uint) -> Result<(), CUresult> {
    lock(slot(device)?).flags = flags;
    Ok(())
}
