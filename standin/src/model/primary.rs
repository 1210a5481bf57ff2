//! The primary context of each device: made by the first retain, destroyed by the last
//! release or by a reset (`docs/driver-facts.md`, "Edge cases on the real driver"). The old
//! handle then answers CUDA_ERROR_CONTEXT_IS_DESTROYED to every use, and the next retain
//! makes a fresh primary context, with a new handle and a clean state.
//!
//! A reset does not release (CUDA documentation of `cuDevicePrimaryCtxReset`): the retain
//! count stays, and a retain after it makes the fresh context.

use std::ffi::{c_int, c_uint};
use std::sync::{Arc, Mutex};

use cudrv::sys::CUresult;

use crate::model::context::{Context, Contexts};
use crate::model::device::MAX_DEVICES;
use crate::run::lock::lock;

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

/// Every device's primary context slot.
pub(crate) struct Primaries {
    slots: Vec<Mutex<Slot>>,
}

impl Primaries {
    /// No primary context retained, flags 0.
    pub(crate) fn new() -> Primaries {
        Primaries { slots: (0..MAX_DEVICES).map(|_| Mutex::default()).collect() }
    }

    /// No primary context retained, flags 0, again (see `Contexts::reset`).
    pub(crate) fn clear(&self) {
        for slot in &self.slots {
            *lock(slot) = Slot::default();
        }
    }

    /// The slot of `device` (a valid ordinal, `valid`): CUDA_ERROR_INVALID_DEVICE otherwise.
    fn slot(&self, device: c_int, valid: bool) -> Result<&Mutex<Slot>, CUresult> {
        let i = usize::try_from(device).ok().filter(|_| valid);
        i.and_then(|i| self.slots.get(i)).ok_or(CUresult::CUDA_ERROR_INVALID_DEVICE)
    }

    /// `cuDevicePrimaryCtxRetain`: the device's primary context, made now (in
    /// `contexts`) if it is not active.
    pub(crate) fn retain(&self, contexts: &Contexts, device: c_int, valid: bool) -> Result<Arc<Context>, CUresult> {
        let mut s = lock(self.slot(device, valid)?);
        let retained = s.retained.checked_add(1).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if s.ctx.is_none() {
            s.ctx = Some(contexts.create(device, true, 0)?);
        }
        s.retained = retained;
        s.ctx.as_ref().map(Arc::clone).ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)
    }

    /// `cuDevicePrimaryCtxRelease`: the context to end when this was the last release.
    /// With no retain outstanding: CUDA_ERROR_INVALID_CONTEXT.
    pub(crate) fn release(&self, device: c_int, valid: bool) -> Result<Option<Arc<Context>>, CUresult> {
        let mut s = lock(self.slot(device, valid)?);
        s.retained = s.retained.checked_sub(1).ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        if s.retained > 0 {
            return Ok(None);
        }
        Ok(s.ctx.take())
    }

    /// `cuDevicePrimaryCtxReset`: the active primary context, to end; the retain count
    /// stays.
    pub(crate) fn reset(&self, device: c_int, valid: bool) -> Result<Option<Arc<Context>>, CUresult> {
        Ok(lock(self.slot(device, valid)?).ctx.take())
    }

    /// `device`'s primary context flags, and whether it is active (retained, and not reset
    /// since): CUDA_ERROR_INVALID_DEVICE for an invalid device. For
    /// `cuDevicePrimaryCtxGetState` and `cuCtxGetFlags`.
    pub(crate) fn state(&self, device: c_int, valid: bool) -> Result<(c_uint, bool), CUresult> {
        let s = lock(self.slot(device, valid)?);
        Ok((s.flags, s.ctx.is_some()))
    }

    /// `cuDevicePrimaryCtxSetFlags`: kept, reported by [`Primaries::state`]; they change
    /// nothing else.
    pub(crate) fn set_flags(&self, device: c_int, valid: bool, flags: c_uint) -> Result<(), CUresult> {
        lock(self.slot(device, valid)?).flags = flags;
        Ok(())
    }
}
