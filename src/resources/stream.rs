//! Streams.

use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::flags::StreamFlags;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::values::{raw_mapping, AccessPolicyWindow, MemSyncDomain};
use crate::sys::{
    CUcontext, CUlaunchAttributeID, CUstream, CUstreamAttrValue, CUstreamCaptureStatus, CUsynchronizationPolicy,
};
use crate::typed::ready;

/// `CU_STREAM_PER_THREAD` (a `cuda.h` macro: `((CUstream)0x2)`).
const STREAM_PER_THREAD: usize = 0x2;

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
    pub fn new(context: &Context, flags: impl Into<StreamFlags>) -> Result<Stream, Error> {
        let t = context.driver().typed();
        let flags = flags.into().bits();
        Ok(Handle::create_in(context.clone(), context.as_raw(), || t.cuStreamCreate(flags)).map(Stream)?)
    }

    /// Creates a stream in `context` with `priority` (`cuStreamCreateWithPriority`): lower
    /// numbers are greater priorities, within [`Context::stream_priority_range`]; the
    /// driver clamps a priority outside it (read it back with [`Stream::priority`]). On
    /// error nothing is created and the calling thread's context is unchanged.
    pub fn with_priority(context: &Context, flags: impl Into<StreamFlags>, priority: i32) -> Result<Stream, Error> {
        let t = context.driver().typed();
        let flags = flags.into().bits();
        let create = || t.cuStreamCreateWithPriority(flags, priority);
        Ok(Handle::create_in(context.clone(), context.as_raw(), create).map(Stream)?)
    }

    /// The legacy default (NULL) stream of `context`.
    pub fn legacy_default(context: &Context) -> Stream {
        Stream(Handle::new(context.clone(), std::ptr::null_mut(), Ownership::Borrowed))
    }

    /// The per-thread default stream of `context` (`CU_STREAM_PER_THREAD`): each thread
    /// that uses it has its own, which does not synchronise with other streams (unlike
    /// the legacy default stream). Work queued on it runs with `context` current, as on
    /// every cudrv stream.
    pub fn per_thread_default(context: &Context) -> Stream {
        let raw = STREAM_PER_THREAD as CUstream;
        Stream(Handle::new(context.clone(), raw, Ownership::Borrowed))
    }

    /// Whether this is one of the default streams (legacy or per-thread).
    #[inline(always)]
    pub fn is_default(&self) -> bool {
        matches!(self.as_raw() as usize, 0 | 1 | STREAM_PER_THREAD)
    }

    /// The context it belongs to.
    #[inline(always)]
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// The flags it was created with (`cuStreamGetFlags`).
    pub fn flags(&self) -> Result<StreamFlags, Error> {
        let bits = self.run(|| self.0.driver().typed().cuStreamGetFlags(self.live()))?;
        Ok(StreamFlags::from_bits_retain(bits))
    }

    /// Its priority (`cuStreamGetPriority`): what it was created with, clamped to the
    /// context's range; 0 for a default stream.
    pub fn priority(&self) -> Result<i32, Error> {
        Ok(self.run(|| self.0.driver().typed().cuStreamGetPriority(self.live()))?)
    }

    /// The driver's unique id of the stream (`cuStreamGetId`, driver 12.0+: an older
    /// driver's error says so).
    pub fn id(&self) -> Result<u64, Error> {
        Ok(self.run(|| self.0.driver().typed().cuStreamGetId(self.live()))?)
    }

    /// The context the driver says the stream belongs to (`cuStreamGetCtx`): for a
    /// default stream, the current one ([`Stream::context`], made current for the call);
    /// for a stream of a green context, the context made from it
    /// ([`crate::GreenContext::context`]).
    pub fn driver_context(&self) -> Result<CUcontext, Error> {
        Ok(self.run(|| self.0.driver().typed().cuStreamGetCtx(self.live()))?)
    }

    /// Reads one of its attributes (`cuStreamGetAttribute`).
    pub fn attribute(&self, which: StreamAttributeKind) -> Result<StreamAttribute, Error> {
        let value = self.run(|| self.0.driver().typed().cuStreamGetAttribute(self.live(), which.raw()))?;
        Ok(StreamAttribute::from_raw(which, &value))
    }

    /// Sets one of its attributes (`cuStreamSetAttribute`); work queued later uses it.
    /// On error nothing changes.
    pub fn set_attribute(&self, value: StreamAttribute) -> Result<(), Error> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let (id, value) = value.raw();
        // SAFETY: the stream is live; `value` is a valid union for `id`.
        Ok(self.run(|| unsafe { pc.cuStreamSetAttribute(raw, id, &value) })?)
    }

    /// Runs the checked driver call `f` with the stream's context current.
    #[inline(always)]
    pub(crate) fn run<T>(&self, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        self.context().run_raw(f)
    }

    /// Runs the checked driver call `f`, which names this stream: for a created stream
    /// without making its context current where the driver does not need that
    /// ([`Context::run_named`]); a default stream (legacy or per-thread) means the current
    /// context's, so there `f` runs with the stream's context current.
    #[inline(always)]
    pub(crate) fn run_named<T>(&self, f: impl FnMut() -> Result<T, CudaError>) -> Result<T, CudaError> {
        if self.is_default() {
            self.context().run_raw(f)
        } else {
            self.context().run_named(f)
        }
    }

    /// Waits for all work queued on it (`cuStreamSynchronize`).
    pub fn synchronize(&self) -> Result<(), Error> {
        Ok(self.synchronize_raw()?)
    }

    /// [`Stream::synchronize`] with the driver's error, for cudrv's own waits.
    pub(crate) fn synchronize_raw(&self) -> Result<(), CudaError> {
        self.run(|| self.0.driver().typed().cuStreamSynchronize(self.live()))
    }

    /// Whether all work queued on it is done (`cuStreamQuery`; NOT_READY is `Ok(false)`).
    pub fn is_idle(&self) -> Result<bool, Error> {
        Ok(self.run(|| ready(self.0.driver().typed().cuStreamQuery(self.live())))?)
    }

    /// Whether work queued on it is being captured into a graph (`cuStreamIsCapturing`).
    pub fn is_capturing(&self) -> Result<bool, Error> {
        Ok(self.is_capturing_raw()?)
    }

    /// [`Stream::is_capturing`] with the driver's error.
    pub(crate) fn is_capturing_raw(&self) -> Result<bool, CudaError> {
        self.run(|| self.capturing_here())
    }

    /// [`Stream::is_capturing`] with the stream's context already current.
    pub(crate) fn capturing_here(&self) -> Result<bool, CudaError> {
        let status = self.0.driver().typed().cuStreamIsCapturing(self.live())?;
        Ok(status != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }
}

/// How a thread waiting for a stream waits (`CUsynchronizationPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SyncPolicy {
    /// The driver decides.
    Auto,
    /// Spin.
    Spin,
    /// Yield the processor.
    Yield,
    /// Block on a synchronisation primitive.
    BlockingSync,
    /// None set: what a stream reports until a policy is set (driver 580 reads 0xFFFFFFFF
    /// there: conformance case `stream_attr.sync_policy_default`). Not a policy to set: it
    /// passes 0xFFFFFFFF, outside the header's values, which the driver is expected to
    /// refuse with `CUDA_ERROR_INVALID_VALUE` as it refuses 9 (`stream_attr.sync_policy_bad`;
    /// 0xFFFFFFFF itself was not tried on the H200).
    NotSet,
    /// A value this version of cudrv does not know.
    Other(u32),
}

/// The synchronisation policy a stream reads before one is set.
const POLICY_NOT_SET: u32 = u32::MAX;

impl SyncPolicy {
    raw_mapping! {
        fn raw -> CUsynchronizationPolicy;
        fn from_raw -> SyncPolicy;
        {
            Auto => CUsynchronizationPolicy::CU_SYNC_POLICY_AUTO,
            Spin => CUsynchronizationPolicy::CU_SYNC_POLICY_SPIN,
            Yield => CUsynchronizationPolicy::CU_SYNC_POLICY_YIELD,
            BlockingSync => CUsynchronizationPolicy::CU_SYNC_POLICY_BLOCKING_SYNC,
        }
        raw: {
            SyncPolicy::NotSet => CUsynchronizationPolicy(POLICY_NOT_SET),
            SyncPolicy::Other(v) => CUsynchronizationPolicy(v),
        }
        from_raw: {
            CUsynchronizationPolicy(POLICY_NOT_SET) => SyncPolicy::NotSet,
            other => SyncPolicy::Other(other.0),
        }
    }
}

/// Which stream attribute to read ([`Stream::attribute`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamAttributeKind {
    /// [`StreamAttribute::Priority`].
    Priority,
    /// [`StreamAttribute::SyncPolicy`].
    SyncPolicy,
    /// [`StreamAttribute::AccessPolicyWindow`].
    AccessPolicyWindow,
    /// [`StreamAttribute::MemSyncDomain`].
    MemSyncDomain,
}

impl StreamAttributeKind {
    fn raw(self) -> CUlaunchAttributeID {
        type Id = CUlaunchAttributeID;
        match self {
            StreamAttributeKind::Priority => Id::CU_LAUNCH_ATTRIBUTE_PRIORITY,
            StreamAttributeKind::SyncPolicy => Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
            StreamAttributeKind::AccessPolicyWindow => Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
            StreamAttributeKind::MemSyncDomain => Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN,
        }
    }
}

/// A stream attribute with its value (`CUstreamAttrValue`), for [`Stream::set_attribute`]
/// and from [`Stream::attribute`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum StreamAttribute {
    /// The stream's priority (see [`Context::stream_priority_range`]; setting it needs
    /// a driver that accepts the priority attribute on streams).
    Priority(i32),
    /// How a thread waiting for the stream waits.
    SyncPolicy(SyncPolicy),
    /// The L2 access policy window for kernels launched on the stream (`bytes` 0: none).
    AccessPolicyWindow(AccessPolicyWindow),
    /// The memory synchronisation domain of the stream's kernels.
    MemSyncDomain(MemSyncDomain),
}

impl StreamAttribute {
    /// Which attribute it is.
    pub fn kind(&self) -> StreamAttributeKind {
        match self {
            StreamAttribute::Priority(_) => StreamAttributeKind::Priority,
            StreamAttribute::SyncPolicy(_) => StreamAttributeKind::SyncPolicy,
            StreamAttribute::AccessPolicyWindow(_) => StreamAttributeKind::AccessPolicyWindow,
            StreamAttribute::MemSyncDomain(_) => StreamAttributeKind::MemSyncDomain,
        }
    }

    fn raw(&self) -> (CUlaunchAttributeID, CUstreamAttrValue) {
        let mut v = CUstreamAttrValue::default();
        match *self {
            StreamAttribute::Priority(p) => v.priority = p,
            StreamAttribute::SyncPolicy(p) => v.syncPolicy = p.raw(),
            StreamAttribute::AccessPolicyWindow(w) => v.accessPolicyWindow = w.raw(),
            StreamAttribute::MemSyncDomain(d) => v.memSyncDomain = d.raw(),
        }
        (self.kind().raw(), v)
    }

    fn from_raw(which: StreamAttributeKind, v: &CUstreamAttrValue) -> StreamAttribute {
        // SAFETY: each arm reads the union member of its kind, the one the driver wrote for
        // `which`; every member is plain data for which any bits are a value (`from_raw`
        // maps unknown enumerators).
        unsafe {
            match which {
                StreamAttributeKind::Priority => StreamAttribute::Priority(v.priority),
                StreamAttributeKind::SyncPolicy => StreamAttribute::SyncPolicy(SyncPolicy::from_raw(v.syncPolicy)),
                StreamAttributeKind::AccessPolicyWindow => {
                    StreamAttribute::AccessPolicyWindow(AccessPolicyWindow::from_raw(&v.accessPolicyWindow))
                }
                StreamAttributeKind::MemSyncDomain => {
                    StreamAttribute::MemSyncDomain(MemSyncDomain::from_raw(v.memSyncDomain))
                }
            }
        }
    }
}
