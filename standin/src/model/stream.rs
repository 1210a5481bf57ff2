//! Streams made by `cuStreamCreate`, and the names of the default stream.

use std::ffi::{c_int, c_uint};
use std::sync::Arc;

use crate::model::context::Context;
use crate::run::queue::{Queue, Task};

use cudrv::sys::CUresult;

/// `CU_STREAM_LEGACY` (a cuda.h macro).
pub const STREAM_LEGACY: u64 = 0x1;
/// `CU_STREAM_PER_THREAD` (a cuda.h macro).
pub const STREAM_PER_THREAD: u64 = 0x2;

/// Whether `s` is one of the default stream's names (NULL, `CU_STREAM_LEGACY`,
/// `CU_STREAM_PER_THREAD`).
pub(crate) fn is_default(s: u64) -> bool {
    matches!(s, 0 | STREAM_LEGACY | STREAM_PER_THREAD)
}

/// One stream made by `cuStreamCreate`.
pub(crate) struct Stream {
    /// Its context.
    pub(crate) ctx: Arc<Context>,
    /// Its work.
    pub(crate) queue: Arc<Queue>,
    /// As created (`cuStreamGetFlags`).
    pub(crate) flags: c_uint,
    /// As created, clamped to the context's range (`cuStreamGetPriority`); changed by
    /// the priority attribute.
    pub(crate) priority: c_int,
    /// The attributes set with `cuStreamSetAttribute` (the priority is `priority`).
    pub(crate) attrs: Attributes,
}

/// A stream's attributes (`cuStreamGetAttribute`/`SetAttribute`), as plain values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Attributes {
    /// `CUsynchronizationPolicy`.
    pub(crate) sync_policy: c_uint,
    /// The access policy window: base, bytes, hit ratio, hit and miss properties.
    pub(crate) window: (u64, usize, f32, c_uint, c_uint),
    /// `CUlaunchMemSyncDomain`.
    pub(crate) mem_sync_domain: c_uint,
    /// `CUlaunchMemSyncDomainMap`: the default and remote domains' numbers.
    pub(crate) mem_sync_domain_map: (u8, u8),
}

impl Attributes {
    /// What a new stream (and a default stream) reports, as the H200 (conformance
    /// `stream_attr.*`): a synchronisation policy of 0xFFFFFFFF (none set), no window,
    /// the default domain, domain map default 0 and remote 1.
    pub(crate) const DEFAULT: Attributes = Attributes {
        sync_policy: c_uint::MAX,
        window: (0, 0, 0.0, 0, 0),
        mem_sync_domain: 0,
        mem_sync_domain_map: (0, 1),
    };
}

/// What a stream argument stands for: its context and its queue.
pub(crate) struct Target {
    pub(crate) ctx: Arc<Context>,
    pub(crate) queue: Arc<Queue>,
    /// Whether it is the legacy default stream.
    pub(crate) legacy: bool,
    /// Whether it is a blocking stream (created without `CU_STREAM_NON_BLOCKING`).
    pub(crate) blocking: bool,
}

/// The status a failure of queued work leaves its context sticky-failed with: a memory
/// access a call checked up front but that fails when done (the memory was freed in
/// between) is CUDA_ERROR_ILLEGAL_ADDRESS, as a fault on a GPU; others as they are.
fn sticky_status(e: CUresult) -> CUresult {
    match e {
        CUresult::CUDA_ERROR_INVALID_VALUE => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        e => e,
    }
}

impl Target {
    /// The work on other streams that work queued on this one waits for (CUDA's legacy
    /// stream semantics): on the legacy stream, the pending work of the context's blocking
    /// streams; on a blocking stream, the legacy stream's; on a non-blocking one, none.
    pub(crate) fn implicit(&self) -> Vec<(Arc<Queue>, u64)> {
        if self.legacy {
            return self.ctx.blocking_pending();
        }
        match (self.blocking, self.ctx.default_queue.pending()) {
            (true, Some(p)) => vec![(Arc::clone(&self.ctx.default_queue), p)],
            _ => Vec::new(),
        }
    }

    /// Queues device work in stream order and returns its position: done at once on the
    /// calling thread when the stream is idle and waits for nothing, else queued behind
    /// the pending work (its failure then leaves the context sticky-failed, see
    /// [`sticky_status`]).
    ///
    /// Work done at once that fails as a GPU fault does (a kernel's trap, assert or bad
    /// access: the work left the context sticky-failed) is `Ok` here, as a GPU accepts the
    /// launch and reports the fault at the next synchronising call: the fault is held by
    /// the context, and every later call that uses it returns it. Work done at once that
    /// fails without making the context sticky-failed (a copy's refused address, a kernel
    /// the executor cannot start) returns its failure, as the call would on a GPU.
    pub(crate) fn submit<F>(&self, work: F) -> Result<u64, CUresult>
    where
        F: FnOnce() -> Result<(), CUresult> + Send + 'static,
    {
        let ctx = Arc::clone(&self.ctx);
        let work = move |now: bool| {
            let clean = ctx.not_sticky().is_ok();
            let r = work();
            match r {
                Err(e) if !now => ctx.make_sticky(sticky_status(e)),
                // A fault the work made sticky: held until the next synchronising call.
                Err(_) if clean && ctx.not_sticky().is_err() => {
                    if now {
                        ctx.hold();
                    }
                    return Ok(());
                }
                _ => {}
            }
            r
        };
        let after = self.implicit();
        if crate::run::schedule::on() {
            // The adversarial schedule: queued behind a delay, never done at once.
            let place = self.ctx.all_queues().iter().position(|q| Arc::ptr_eq(q, &self.queue)).unwrap_or(0);
            let position = self.queue.position().saturating_add(1);
            let delay = crate::run::schedule::delay(place, position);
            return self.queue.push_after(
                after,
                Box::new(move || {
                    std::thread::sleep(delay);
                    let _ = work(false);
                }),
            );
        }
        if after.is_empty() {
            let ran = self.queue.exec(work)?;
            let position = ran.position();
            return ran.result().map(|()| position);
        }
        self.queue.push_after(
            after,
            Box::new(move || {
                let _ = work(false);
            }),
        )
    }

    /// Queues `task` (a host function, a wait) in stream order, on the stream's driver
    /// thread, never on the calling thread; returns its position.
    pub(crate) fn push(&self, task: Task) -> Result<u64, CUresult> {
        let after = self.implicit();
        if after.is_empty() {
            return self.queue.push(task);
        }
        self.queue.push_after(after, task)
    }

    /// Waits for the work queued on it so far (the legacy stream: and for what its work
    /// waits for, the blocking streams' work).
    pub(crate) fn drain(&self) -> Result<(), CUresult> {
        self.queue.drain()?;
        if self.legacy {
            self.ctx.blocking_pending().into_iter().try_for_each(|(q, p)| q.wait(p))?;
        }
        Ok(())
    }

    /// Whether work queued on it (the legacy stream: or on a blocking stream) is pending.
    pub(crate) fn busy(&self) -> bool {
        self.queue.busy() || (self.legacy && !self.ctx.blocking_pending().is_empty())
    }
}
