//! Stream capture beyond the global mode: [`CaptureMode`] for
//! [`Stream::begin_capture_with`], the calling thread's capture interaction mode as a
//! scoped guard ([`CaptureModeGuard`], `cuThreadExchangeStreamCaptureMode`), and what a
//! stream's capture stands at ([`Stream::capture_info`], `cuStreamGetCaptureInfo`).
//! [`Stream::begin_capture`] and [`Stream::end_capture`] are with the graphs.

use crate::error::Error;
use crate::resources::stream::Stream;
use crate::resources::values::raw_mapping;
use crate::sys::{CUgraph, CUgraphEdgeData, CUgraphNode, CUstreamCaptureMode, CUstreamCaptureStatus};
use crate::Driver;

/// How a capture interacts with unsafe calls (`CUstreamCaptureMode`): which threads'
/// potentially unsafe API calls (a synchronous `cuMemcpy`, `cuMalloc`-like calls that
/// may synchronise) are refused while the capture runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    /// Unsafe calls are refused on every thread while any global-mode capture, or a
    /// thread-local capture of the calling thread, runs (the default).
    Global,
    /// Unsafe calls are refused only on the thread that began the capture.
    ThreadLocal,
    /// No call is refused because of this capture.
    Relaxed,
}

impl CaptureMode {
    /// The driver's value.
    pub fn raw(self) -> CUstreamCaptureMode {
        match self {
            CaptureMode::Global => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
        }
    }

    /// From the driver's value; `None` for a value none of the three.
    pub fn from_raw(raw: CUstreamCaptureMode) -> Option<CaptureMode> {
        match raw {
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL => Some(CaptureMode::Global),
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL => Some(CaptureMode::ThreadLocal),
            CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED => Some(CaptureMode::Relaxed),
            _ => None,
        }
    }
}

/// Whether a stream is capturing (`CUstreamCaptureStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CaptureStatus {
    /// Not capturing.
    None,
    /// Capturing.
    Active,
    /// Capturing, but the capture was invalidated (an unsupported call): ending it fails.
    Invalidated,
    /// A value this version of cudrv does not know.
    Other(u32),
}

impl CaptureStatus {
    raw_mapping! {
        fn from_raw(CUstreamCaptureStatus) -> CaptureStatus;
        {
            None => CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE,
            Active => CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
            Invalidated => CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_INVALIDATED,
        }
        from_raw: { other => CaptureStatus::Other(other.0) }
    }
}

/// What a stream's capture stands at ([`Stream::capture_info`]).
#[derive(Debug)]
pub struct CaptureInfo {
    /// Whether the stream is capturing.
    pub status: CaptureStatus,
    /// The capture sequence's id, unique in the process (0 when not capturing).
    pub id: u64,
    /// The raw handle of the graph being captured into; `None` when not capturing or on a
    /// driver older than 11.3. Raw, not a [`Graph`](crate::Graph): the capture owns the graph, which
    /// [`Stream::end_capture`] hands over (and the caller may then drop) and an invalidated
    /// capture destroys, so no safe handle could promise it is still there. To use it
    /// while the capture runs, wrap it with the `unsafe` [`Graph::borrowed`](crate::Graph::borrowed).
    pub graph: Option<CUgraph>,
    /// The raw handles of the nodes the stream's next captured work will depend on (nodes
    /// of `graph`, with its lifetime).
    pub dependencies: Vec<CUgraphNode>,
}

impl Stream {
    /// Starts capturing the work queued on this stream into a graph in `mode`
    /// (`cuStreamBeginCapture`); [`Stream::end_capture`] returns it. On error nothing is
    /// capturing.
    ///
    /// # Safety
    /// As [`Stream::begin_capture`]: everything captured work uses must outlive every
    /// launch of the graph and of executables made from it.
    pub unsafe fn begin_capture_with(&self, mode: CaptureMode) -> Result<(), Error> {
        let t = self.context().driver().typed();
        Ok(self.run(|| t.cuStreamBeginCapture(self.live(), mode.raw()))?)
    }

    /// Where its capture stands (`cuStreamGetCaptureInfo`, the newest form the driver
    /// has: 12.3's, else 11.3's; the dependencies need 11.3).
    pub fn capture_info(&self) -> Result<CaptureInfo, Error> {
        let (pc, raw) = (self.context().driver().pc(), self.as_raw());
        let mut status = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let (mut id, mut graph, mut n) = (0u64, std::ptr::null_mut::<crate::sys::CUgraph_st>(), 0usize);
        let mut deps: *const CUgraphNode = std::ptr::null();
        let mut edges: *const CUgraphEdgeData = std::ptr::null();
        // SAFETY: the stream is live; every out-pointer is valid in both forms (11.3's has
        // no edge data).
        self.run(|| unsafe {
            match pc.cuStreamGetCaptureInfo_v12030(raw, &mut status, &mut id, &mut graph, &mut deps, &mut edges, &mut n)
            {
                Err(e) if e.unresolved().is_some() => {
                    pc.cuStreamGetCaptureInfo_v11030(raw, &mut status, &mut id, &mut graph, &mut deps, &mut n)
                }
                r => r,
            }
        })?;
        let status = CaptureStatus::from_raw(status);
        if status == CaptureStatus::None || graph.is_null() {
            return Ok(CaptureInfo { status, id, graph: None, dependencies: Vec::new() });
        }
        let dependencies = match (deps.is_null(), n) {
            (true, _) | (_, 0) => Vec::new(),
            // SAFETY: the driver gives `n` nodes at `deps`, valid until the stream's next
            // captured call; they are copied out at once.
            _ => unsafe { std::slice::from_raw_parts(deps, n) }.to_vec(),
        };
        Ok(CaptureInfo { status, id, graph: Some(graph as CUgraph), dependencies })
    }
}

/// The calling thread's capture interaction mode, changed for as long as the guard lives
/// (`cuThreadExchangeStreamCaptureMode`): dropping it puts the previous mode back, on
/// the thread that made it (the guard is not `Send`).
#[derive(Debug)]
pub struct CaptureModeGuard {
    driver: &'static Driver,
    previous: CUstreamCaptureMode,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl CaptureModeGuard {
    /// Sets the calling thread's mode to `mode` until the guard is dropped. On error the
    /// mode is unchanged.
    pub fn new(driver: &'static Driver, mode: CaptureMode) -> Result<CaptureModeGuard, Error> {
        let mut m = mode.raw();
        driver.typed().cuThreadExchangeStreamCaptureMode(&mut m)?;
        Ok(CaptureModeGuard { driver, previous: m, _not_send: std::marker::PhantomData })
    }

    /// The mode that was in effect before (and is put back on drop).
    pub fn previous(&self) -> Option<CaptureMode> {
        CaptureMode::from_raw(self.previous)
    }
}

impl Drop for CaptureModeGuard {
    fn drop(&mut self) {
        let mut m = self.previous;
        // It cannot fail for a mode the driver gave back; if it does, the report channel
        // gets it.
        if let Err(e) = self.driver.typed().cuThreadExchangeStreamCaptureMode(&mut m) {
            crate::report::error(e, crate::report::Arg::None, Some("restoring the capture mode".into()));
        }
    }
}
