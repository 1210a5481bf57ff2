//! Events.

use crate::call;
use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::flags::EventFlags;
use crate::resources::handle::{handle_type, kind, Unique};
use crate::resources::stream::Stream;
use crate::sys::{CUevent, CUresult};

kind!(
    /// The event kind: owned by its context; its release needs no current context.
    EventKind: CUevent = "Event", owner Context, driver |o| o.driver(), context |_o| None,
    release cuEventDestroy
);

/// An event, with one owner (not `Clone`: share one through an `Arc`); dropping it
/// destroys it (if owned).
pub struct Event(pub(crate) Unique<EventKind>);
handle_type!(Event: Unique<EventKind> => CUevent, adopt: &Context, "an event");

impl Event {
    /// Creates an event in `context` (`cuEventCreate` with `flags`: an [`EventFlags`] or
    /// its raw bits). On error nothing is created and the calling thread's context is
    /// unchanged.
    pub fn new(context: &Context, flags: impl Into<EventFlags>) -> Result<Event, CudaError> {
        let pc = context.driver().pc();
        let flags = flags.into().bits();
        // SAFETY: `raw` is a valid out-pointer.
        let create = |raw: &mut CUevent| unsafe { pc.cuEventCreate(raw, flags) };
        Unique::create_out(context.clone(), context.as_raw(), create).map(Event)
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// Records it on `stream` (`cuEventRecord`).
    pub fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        let (pc, raw, s) = (self.0.driver().pc(), self.as_raw(), stream.as_raw());
        // SAFETY: both handles are live while we hold them.
        stream.run(|| unsafe { pc.cuEventRecord(raw, s) })
    }

    /// Waits until the work it was recorded after is done (`cuEventSynchronize`).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        // SAFETY: the event is live while we hold it.
        self.context().run(|| unsafe { pc.cuEventSynchronize(raw) })
    }

    /// Whether that work is done (`cuEventQuery`; NOT_READY is `Ok(false)`).
    pub fn is_complete(&self) -> Result<bool, CudaError> {
        let (d, raw) = (self.0.driver(), self.as_raw());
        self.context().run(|| {
            // SAFETY: as above.
            match unsafe { d.p().cuEventQuery(raw) } {
                CUresult::CUDA_SUCCESS => Ok(true),
                CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                status => Err(d.error(call::cuEventQuery, status)),
            }
        })
    }

    /// Milliseconds from this event to `end` (`cuEventElapsedTime`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, CudaError> {
        let (pc, start, stop) = (self.0.driver().pc(), self.as_raw(), end.as_raw());
        self.context().run(|| {
            let mut ms = 0f32;
            // SAFETY: both events are live; `ms` is a valid out-pointer.
            unsafe { pc.cuEventElapsedTime(&mut ms, start, stop) }?;
            Ok(ms)
        })
    }
}
