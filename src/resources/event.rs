//! Events.

use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUevent, CUresult};

/// An event. Clones share it; the last one destroys it (if owned) in its context.
#[derive(Clone)]
pub struct Event(Arc<EventInner>);

struct EventInner {
    context: Context,
    raw: CUevent,
    owned: bool,
}

// SAFETY: a CUevent is a driver handle usable from any thread; cudrv never dereferences it.
unsafe impl Send for EventInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for EventInner {}

impl Event {
    /// Creates an event in `context` (`cuEventCreate` with `flags`). On error nothing is
    /// created and the calling thread's context is unchanged.
    pub fn new(context: &Context, flags: u32) -> Result<Event, CudaError> {
        let d = context.driver();
        let create = || {
            let mut raw: CUevent = std::ptr::null_mut();
            // SAFETY: `raw` is a valid out-pointer.
            CudaError::check(d, "cuEventCreate", unsafe { d.p().cuEventCreate(&mut raw, flags) })?;
            Ok(raw)
        };
        let undo = Undo {
            call: "cuEventDestroy",
            arg: |e: &CUevent| handle_arg(*e),
            // SAFETY: the event was just created and is used by nothing else.
            run: |e: &CUevent| unsafe { d.p().cuEventDestroy(*e) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(Event::wrap(context, raw, true))
    }

    /// Adopts an event: the last clone destroys it.
    ///
    /// # Safety
    /// `raw` must be a live event of `context` that nothing else destroys.
    pub unsafe fn from_raw(context: &Context, raw: CUevent) -> Event {
        Event::wrap(context, raw, true)
    }

    /// Uses an event someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must stay a live event of `context` while this handle is used.
    pub unsafe fn borrowed(context: &Context, raw: CUevent) -> Event {
        Event::wrap(context, raw, false)
    }

    fn wrap(context: &Context, raw: CUevent, owned: bool) -> Event {
        Event(Arc::new(EventInner { context: context.clone(), raw, owned }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUevent {
        self.0.raw
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.0.context
    }

    /// Records it on `stream` (`cuEventRecord`).
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        let (d, raw, s) = (self.0.context.driver(), self.0.raw, stream.as_raw());
        // SAFETY: both handles are live while we hold them.
        self.0.context.call("cuEventRecord", || unsafe { d.p().cuEventRecord(raw, s) })
    }

    /// Waits until the work it was recorded after is done (`cuEventSynchronize`).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let (d, raw) = (self.0.context.driver(), self.0.raw);
        // SAFETY: the event is live while we hold it.
        self.0.context.call("cuEventSynchronize", || unsafe { d.p().cuEventSynchronize(raw) })
    }

    /// Whether that work is done (`cuEventQuery`; NOT_READY is `Ok(false)`).
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        let (d, raw) = (self.0.context.driver(), self.0.raw);
        self.0.context.run(|| {
            // SAFETY: as above.
            match unsafe { d.p().cuEventQuery(raw) } {
                CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                status => CudaError::check(d, "cuEventQuery", status).map(|()| true),
            }
        })
    }

    /// Milliseconds from this event to `end` (`cuEventElapsedTime`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, CudaError> {
        let (d, start, stop) = (self.0.context.driver(), self.0.raw, end.as_raw());
        self.0.context.run(|| {
            let mut ms = 0f32;
            // SAFETY: both events are live; `ms` is a valid out-pointer.
            CudaError::check(d, "cuEventElapsedTime", unsafe { d.p().cuEventElapsedTime(&mut ms, start, stop) })?;
            Ok(ms)
        })
    }
}

impl Drop for EventInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the event and this is its last handle.
        let destroy = || unsafe { d.p().cuEventDestroy(raw) };
        // cuEventDestroy needs no current context: the event names its own.
        cleanup_in_context(d, None, "cuEventDestroy", handle_arg(raw), destroy, || {});
    }
}
