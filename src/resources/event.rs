//! Events.

use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::flags::EventFlags;
use crate::resources::handle::{handle_type, kind, Unique};
use crate::resources::stream::Stream;
use crate::sys::{CUevent, CUipcEventHandle};
use crate::typed::ready;

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
    pub fn new(context: &Context, flags: impl Into<EventFlags>) -> Result<Event, Error> {
        Ok(Event::new_raw(context, flags.into())?)
    }

    /// [`Event::new`] with the driver's error.
    pub(crate) fn new_raw(context: &Context, flags: EventFlags) -> Result<Event, CudaError> {
        let t = context.driver().typed();
        Unique::create_in(context.clone(), context.as_raw(), || t.cuEventCreate(flags.bits())).map(Event)
    }

    /// The handle another process opens this event with ([`Event::open_ipc`],
    /// `cuIpcGetEventHandle`): the event must have been created with
    /// [`EventFlags::INTERPROCESS`] and [`EventFlags::DISABLE_TIMING`]. The handle is
    /// plain bytes, to send to the other process any way (a pipe, a command line); it is
    /// valid while this event lives.
    pub fn export_ipc(&self) -> Result<IpcEventHandle, Error> {
        let handle = self.context().run(|| self.0.driver().typed().cuIpcGetEventHandle(self.live()))?;
        Ok(IpcEventHandle(handle.reserved.map(|b| b as u8)))
    }

    /// Opens, in `context`, an event another process exported with
    /// [`Event::export_ipc`] (`cuIpcOpenEventHandle`): waiting for it here
    /// ([`Event::synchronize`], [`Stream::wait_event`]) waits for the work the other
    /// process recorded it after; it cannot be recorded here with timing. Dropping it
    /// releases this process's use (`cuEventDestroy`). On error nothing is opened and the
    /// calling thread's context is unchanged. A driver refuses a handle exported by the
    /// same process.
    pub fn open_ipc(context: &Context, handle: &IpcEventHandle) -> Result<Event, Error> {
        let t = context.driver().typed();
        let raw_handle = CUipcEventHandle { reserved: handle.0.map(|b| b as std::ffi::c_char) };
        let open = || t.cuIpcOpenEventHandle(raw_handle);
        Ok(Unique::create_in(context.clone(), context.as_raw(), open).map(Event)?)
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// Records it on `stream` (`cuEventRecord`).
    pub fn record(&self, stream: &Stream) -> Result<(), Error> {
        Ok(self.record_raw(stream)?)
    }

    /// [`Event::record`] with the driver's error.
    pub(crate) fn record_raw(&self, stream: &Stream) -> Result<(), CudaError> {
        stream.run(|| self.0.driver().typed().cuEventRecord(self.live(), stream.live()))
    }

    /// Waits until the work it was recorded after is done (`cuEventSynchronize`).
    pub fn synchronize(&self) -> Result<(), Error> {
        Ok(self.synchronize_raw()?)
    }

    /// [`Event::synchronize`] with the driver's error.
    pub(crate) fn synchronize_raw(&self) -> Result<(), CudaError> {
        self.context().run_raw(|| self.0.driver().typed().cuEventSynchronize(self.live()))
    }

    /// Whether that work is done (`cuEventQuery`; NOT_READY is `Ok(false)`).
    pub fn is_complete(&self) -> Result<bool, Error> {
        self.context().run(|| ready(self.0.driver().typed().cuEventQuery(self.live())))
    }

    /// Milliseconds from this event to `end` (`cuEventElapsedTime`).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, Error> {
        let (pc, start, stop) = (self.0.driver().pc(), self.as_raw(), end.as_raw());
        self.context().run(|| {
            let mut ms = 0f32;
            // SAFETY: both events are live; `ms` is a valid out-pointer.
            unsafe { pc.cuEventElapsedTime(&mut ms, start, stop) }?;
            Ok(ms)
        })
    }
}

impl Stream {
    /// Makes later work on this stream wait for `event` (`cuStreamWaitEvent`), which may
    /// belong to another context or device.
    pub fn wait_event(&self, event: &Event) -> Result<(), Error> {
        Ok(self.wait_event_raw(event)?)
    }

    /// [`Stream::wait_event`] with the driver's error.
    pub(crate) fn wait_event_raw(&self, event: &Event) -> Result<(), CudaError> {
        self.run(|| self.0.driver().typed().cuStreamWaitEvent(self.live(), event.live(), 0))
    }

    /// Records a new event on this stream and returns it (`cuEventCreate` with `flags`,
    /// then `cuEventRecord`). On error no event is left behind.
    pub fn record_event(&self, flags: impl Into<EventFlags>) -> Result<Event, Error> {
        let event = Event::new(self.context(), flags)?;
        event.record(self)?;
        Ok(event)
    }
}

/// An event's inter-process handle (`CUipcEventHandle`, 64 bytes), from
/// [`Event::export_ipc`] for [`Event::open_ipc`] in another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IpcEventHandle(pub [u8; 64]);

impl IpcEventHandle {
    /// The handle as 128 lower-case hex digits (to pass on a command line).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A handle from 128 hex digits ([`IpcEventHandle::to_hex`]); `None` if `hex` is not that.
    pub fn from_hex(hex: &str) -> Option<IpcEventHandle> {
        if hex.len() != 128 || !hex.is_ascii() {
            return None;
        }
        let mut bytes = [0u8; 64];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(IpcEventHandle(bytes))
    }
}
