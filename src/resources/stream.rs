//! Streams.

use crate::call;
use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::event::Event;
use crate::resources::flags::{EventFlags, StreamFlags};
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::host_fn;
use crate::sys::{CUresult, CUstream, CUstreamCaptureStatus};

kind!(
    /// The stream kind: owned by its context; its release needs no current context (the
    /// stream names its own).
    StreamKind: CUstream = "Stream", owner Context, driver |o| o.driver(), context |_o| None,
    release cuStreamDestroy
);

/// A stream. Clones share it; the last one destroys it (if owned). It keeps its
/// context alive.
#[derive(Clone)]
pub struct Stream(pub(crate) Handle<StreamKind>);
handle_type!(Stream: StreamKind => CUstream, adopt: &Context, "a stream");

impl Stream {
    /// Creates a stream in `context` (`cuStreamCreate` with `flags`: a [`StreamFlags`] or
    /// its raw bits). On error nothing is created and the calling thread's context is
    /// unchanged.
    pub fn new(context: &Context, flags: impl Into<StreamFlags>) -> Result<Stream, CudaError> {
        let pc = context.driver().pc();
        let flags = flags.into().bits();
        // SAFETY: `raw` is a valid out-pointer.
        let create = |raw: &mut CUstream| unsafe { pc.cuStreamCreate(raw, flags) };
        Handle::create_out(context.clone(), context.as_raw(), create).map(Stream)
    }

    /// The legacy default (NULL) stream of `context`.
    pub fn legacy_default(context: &Context) -> Stream {
        Stream(Handle::new(context.clone(), std::ptr::null_mut(), Ownership::Borrowed))
    }

    /// The context it belongs to.
    #[inline(always)]
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// The flags it was created with (`cuStreamGetFlags`).
    pub fn flags(&self) -> Result<StreamFlags, CudaError> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let mut bits = 0;
        // SAFETY: the stream is live while we hold it; `bits` is a valid out-pointer.
        self.run(|| unsafe { pc.cuStreamGetFlags(raw, &mut bits) })?;
        Ok(StreamFlags::from_bits_retain(bits))
    }

    /// Runs the checked driver call `f` with the stream's context current.
    #[inline(always)]
    pub(crate) fn run<T>(&self, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        self.context().run(f)
    }

    /// Waits for all work queued on it (`cuStreamSynchronize`).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        // SAFETY: the stream is live while we hold it.
        self.run(|| unsafe { pc.cuStreamSynchronize(raw) })
    }

    /// Whether all work queued on it is done (`cuStreamQuery`; NOT_READY is `Ok(false)`).
    pub fn is_idle(&self) -> Result<bool, CudaError> {
        let (d, raw) = (self.0.driver(), self.as_raw());
        self.run(|| {
            // SAFETY: as above.
            match unsafe { d.p().cuStreamQuery(raw) } {
                CUresult::CUDA_SUCCESS => Ok(true),
                CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                status => Err(d.error(call::cuStreamQuery, status)),
            }
        })
    }

    /// Makes later work on this stream wait for `event` (`cuStreamWaitEvent`), which may
    /// belong to another context or device.
    pub fn wait_event(&self, event: &Event) -> Result<(), CudaError> {
        let (pc, raw, ev) = (self.0.driver().pc(), self.as_raw(), event.as_raw());
        // SAFETY: both handles are live while we hold them.
        self.run(|| unsafe { pc.cuStreamWaitEvent(raw, ev, 0) })
    }

    /// Records a new event on this stream and returns it (`cuEventCreate` with `flags`,
    /// then `cuEventRecord`). On error no event is left behind.
    pub fn record_event(&self, flags: impl Into<EventFlags>) -> Result<Event, CudaError> {
        let event = Event::new(self.context(), flags)?;
        event.record(self)?;
        Ok(event)
    }

    /// Runs `f` on a driver thread once the work queued before it is done
    /// (`cuLaunchHostFunc`). `f` must not call CUDA (nor drop the last clone of a cudrv
    /// handle); a panic in it is caught and reported. On error `f` is dropped without
    /// running, unless the error's note says it was queued (only restoring the caller's
    /// context failed). A capturing stream is refused (`InvalidArgument`): use
    /// [`crate::Graph::add_host_node`] for a host function in a graph.
    pub fn launch_host_fn(&self, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        host_fn::launch(self, f)
    }

    /// Whether work queued on it is being captured into a graph (`cuStreamIsCapturing`).
    pub fn is_capturing(&self) -> Result<bool, CudaError> {
        self.run(|| self.capturing_here())
    }

    /// [`Stream::is_capturing`] with the stream's context already current.
    pub(crate) fn capturing_here(&self) -> Result<bool, CudaError> {
        let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: the stream is live; `status` is a valid out-pointer.
        unsafe { self.0.driver().pc().cuStreamIsCapturing(self.as_raw(), &mut status) }?;
        Ok(status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }
}
