//! Streams.

use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::event::Event;
use crate::resources::{handle_arg, host_fn};
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUresult, CUstream};

/// A stream. Clones share it; the last one destroys it (if owned) in its context. It keeps
/// its context alive.
#[derive(Clone)]
pub struct Stream(Arc<StreamInner>);

struct StreamInner {
    context: Context,
    raw: CUstream,
    owned: bool,
}

// SAFETY: a CUstream is a driver handle usable from any thread; cudrv never dereferences it.
unsafe impl Send for StreamInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for StreamInner {}

impl Stream {
    /// Creates a stream in `context` (`cuStreamCreate` with `flags`). On error nothing is
    /// created and the calling thread's context is unchanged.
    pub fn new(context: &Context, flags: u32) -> Result<Stream, CudaError> {
        let d = context.driver();
        let create = || {
            let mut raw: CUstream = std::ptr::null_mut();
            // SAFETY: `raw` is a valid out-pointer.
            CudaError::check(d, "cuStreamCreate", unsafe { d.p().cuStreamCreate(&mut raw, flags) })?;
            Ok(raw)
        };
        let undo = Undo {
            call: "cuStreamDestroy",
            arg: |s: &CUstream| handle_arg(*s),
            // SAFETY: the stream was just created and is used by nothing else.
            run: |s: &CUstream| unsafe { d.p().cuStreamDestroy(*s) },
        };
        let raw = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(Stream::wrap(context, raw, true))
    }

    /// The legacy default (NULL) stream of `context`.
    pub fn legacy_default(context: &Context) -> Stream {
        Stream::wrap(context, std::ptr::null_mut(), false)
    }

    /// Adopts a stream: the last clone destroys it.
    ///
    /// # Safety
    /// `raw` must be a live stream of `context` that nothing else destroys.
    pub unsafe fn from_raw(context: &Context, raw: CUstream) -> Stream {
        Stream::wrap(context, raw, true)
    }

    /// Uses a stream someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must stay a live stream of `context` while this handle and what uses it live.
    pub unsafe fn borrowed(context: &Context, raw: CUstream) -> Stream {
        Stream::wrap(context, raw, false)
    }

    fn wrap(context: &Context, raw: CUstream, owned: bool) -> Stream {
        Stream(Arc::new(StreamInner { context: context.clone(), raw, owned }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUstream {
        self.0.raw
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.0.context
    }

    /// Waits for all work queued on it (`cuStreamSynchronize`).
    pub fn synchronize(&self) -> Result<(), CudaError> {
        let (d, raw) = (self.0.context.driver(), self.0.raw);
        // SAFETY: the stream is live while we hold it.
        self.0.context.call("cuStreamSynchronize", || unsafe { d.p().cuStreamSynchronize(raw) })
    }

    /// Whether all work queued on it is done (`cuStreamQuery`; NOT_READY is `Ok(false)`).
    pub fn is_idle(&self) -> Result<bool, CudaError> {
        let (d, raw) = (self.0.context.driver(), self.0.raw);
        self.0.context.run(|| {
            // SAFETY: as above.
            match unsafe { d.p().cuStreamQuery(raw) } {
                CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                status => CudaError::check(d, "cuStreamQuery", status).map(|()| true),
            }
        })
    }

    /// Makes later work on this stream wait for `event` (`cuStreamWaitEvent`).
    pub fn wait_event(&self, event: &Event) -> Result<(), CudaError> {
        let (d, raw, ev) = (self.0.context.driver(), self.0.raw, event.as_raw());
        // SAFETY: both handles are live while we hold them.
        self.0.context.call("cuStreamWaitEvent", || unsafe { d.p().cuStreamWaitEvent(raw, ev, 0) })
    }

    /// Runs `f` on a driver thread once the work queued before it is done
    /// (`cuLaunchHostFunc`). `f` must not call CUDA (nor drop the last clone of a cudrv
    /// handle); a panic in it is caught and reported. On error `f` is dropped without
    /// running, unless the error's note says it was queued (only restoring the caller's
    /// context failed).
    pub fn launch_host_fn(&self, f: impl FnOnce() + Send + 'static) -> Result<(), CudaError> {
        host_fn::launch(self, f)
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.context.driver(), self.raw);
        // SAFETY: we own the stream and this is its last handle.
        let destroy = || unsafe { d.p().cuStreamDestroy(raw) };
        // cuStreamDestroy needs no current context: the stream names its own.
        cleanup_in_context(d, None, "cuStreamDestroy", handle_arg(raw), destroy, || {});
    }
}
