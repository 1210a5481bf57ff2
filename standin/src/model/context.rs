//! Contexts: the primary context of each device, contexts made by `cuCtxCreate`, and each
//! thread's context stack (its current context is the top).
//!
//! A context can be sticky-failed (a `fault` kernel was launched in it, or a host kernel
//! failed): every call that uses it then returns the failure (CUDA_ERROR_ILLEGAL_ADDRESS,
//! CUDA_ERROR_LAUNCH_FAILED), until it is destroyed (a primary context: until it is reset
//! or released for the last time, which destroys it; see `primaries.rs`).
//!
//! A destroyed context's handle stays known (`docs/driver-facts.md`, "Edge cases on the
//! real driver"): it can still be made current, and every use of it answers
//! CUDA_ERROR_CONTEXT_IS_DESTROYED.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cudrv::sys::{CUresult, CUstreamCaptureMode};

use crate::model::faults::Restore;
use crate::model::handles;
use crate::run::lock::lock;
use crate::run::queue::Queue;
use crate::run::thread;

/// One context.
pub(crate) struct Context {
    /// Its handle (`CUcontext`).
    pub(crate) handle: u64,
    /// Its device.
    pub(crate) device: c_int,
    primary: bool,
    /// The flags it was created with, or last set by `cuCtxSetFlags` (a primary context's
    /// are its device's, `primaries.rs`, until `cuCtxSetFlags` sets its own).
    flags: AtomicU32,
    /// Whether `cuCtxSetFlags` set its flags (for a primary context: they then stand for
    /// `cuCtxGetFlags`, and the device's primary state keeps its own).
    flags_set: AtomicBool,
    /// The sticky failure's status (0: none).
    sticky: AtomicU32,
    /// The sticky failure came from a kernel run on the caller's thread inside its launch
    /// and no call has seen it yet: calls that only queue work behind the kernel do not
    /// see it either (on a GPU the kernel is still running), see [`Context::usable_to_queue`].
    held: AtomicBool,
    /// Its world's kernel fault (0: none), shared by every context of the world: on the
    /// H200 a kernel's fault fails every context of the process, and contexts made later.
    world_fault: Arc<AtomicU32>,
    destroyed: AtomicBool,
    /// Its default stream (the NULL stream, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD`).
    pub(crate) default_queue: Arc<Queue>,
    /// The queues of its streams, for `cuCtxSynchronize` (a destroyed stream's pending
    /// work still counts), each with whether its stream is a blocking one (created without
    /// `CU_STREAM_NON_BLOCKING`: the legacy default stream waits for its work, and it for
    /// the legacy stream's).
    queues: Mutex<Vec<(Weak<Queue>, bool)>>,
}

impl Context {
    fn new(device: c_int, primary: bool, flags: c_uint, world_fault: Arc<AtomicU32>) -> Context {
        Context {
            handle: handles::fresh(),
            device,
            primary,
            flags: AtomicU32::new(flags),
            flags_set: AtomicBool::new(false),
            sticky: AtomicU32::new(0),
            held: AtomicBool::new(false),
            world_fault,
            destroyed: AtomicBool::new(false),
            default_queue: Queue::new(),
            queues: Mutex::new(Vec::new()),
        }
    }

    /// Whether calls may use it: CUDA_ERROR_CONTEXT_IS_DESTROYED once destroyed, the sticky
    /// failure (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED) while sticky-failed.
    pub(crate) fn usable(&self) -> Result<(), CUresult> {
        self.alive()?;
        let r = self.fault();
        if r.is_err() {
            // Seen: from now on every call sees it.
            self.held.store(false, Ordering::Release);
        }
        r
    }

    /// As [`Context::usable`], for a call that only queues work on a stream behind what
    /// was launched (`cuEventRecord`): a fault still held from a kernel the launch ran on
    /// the caller's thread does not stop it, as on a GPU the kernel has not reached its
    /// fault yet when the next call comes; the work queued after it does not run, and the
    /// next call that waits for it or checks the context sees the fault.
    pub(crate) fn usable_to_queue(&self) -> Result<(), CUresult> {
        if self.held.load(Ordering::Acquire) && !self.is_destroyed() {
            return Ok(());
        }
        self.usable()
    }

    /// Holds the sticky failure a kernel run inside its launch just left (see
    /// [`Context::usable_to_queue`]).
    pub(crate) fn hold(&self) {
        self.held.store(true, Ordering::Release);
    }

    /// Its sticky failure, or its world's kernel fault, if any.
    fn fault(&self) -> Result<(), CUresult> {
        match (self.sticky.load(Ordering::Acquire), self.world_fault.load(Ordering::Acquire)) {
            (0, 0) => Ok(()),
            (0, s) | (s, _) => Err(CUresult(s)),
        }
    }

    /// CUDA_ERROR_CONTEXT_IS_DESTROYED once destroyed.
    pub(crate) fn alive(&self) -> Result<(), CUresult> {
        if self.is_destroyed() {
            return Err(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        }
        Ok(())
    }

    /// Its flags (a created context's; a primary context's are its device's).
    pub(crate) fn flags(&self) -> c_uint {
        self.flags.load(Ordering::Acquire)
    }

    /// Replaces its flags (`cuCtxSetFlags`).
    pub(crate) fn set_flags(&self, flags: c_uint) {
        self.flags.store(flags, Ordering::Release);
        self.flags_set.store(true, Ordering::Release);
    }

    /// The flags `cuCtxSetFlags` set, if it did.
    pub(crate) fn flags_set(&self) -> Option<c_uint> {
        self.flags_set.load(Ordering::Acquire).then(|| self.flags())
    }

    /// Whether it is a device's primary context.
    pub(crate) fn is_primary(&self) -> bool {
        self.primary
    }

    /// Whether it has been destroyed (a primary one: released for the last time, or reset).
    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// The sticky failure while sticky-failed (a destroyed context is not).
    pub(crate) fn not_sticky(&self) -> Result<(), CUresult> {
        if self.destroyed.load(Ordering::Acquire) {
            return Ok(());
        }
        self.fault()
    }

    /// Makes it sticky-failed with `status` (a kernel faulted), unless it already is, and
    /// its world too: every other context of the world, and every one made later, fails
    /// with it (as the H200 answers: docs/driver-facts.md, "Kernel faults").
    pub(crate) fn make_sticky(&self, status: CUresult) {
        let _ = self.world_fault.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
        let _ = self.sticky.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Marks it destroyed; `false` if it already was.
    pub(crate) fn end(&self) -> bool {
        !self.destroyed.swap(true, Ordering::AcqRel)
    }

    /// Adds a stream's queue; `blocking`: the stream synchronises with the legacy default
    /// stream.
    pub(crate) fn add_queue(&self, q: &Arc<Queue>, blocking: bool) {
        let mut queues = lock(&self.queues);
        queues.retain(|(w, _)| w.strong_count() > 0);
        queues.push((Arc::downgrade(q), blocking));
    }

    /// Waits for the work pushed so far on all its streams.
    pub(crate) fn wait_all(&self) -> Result<(), CUresult> {
        let queues: Vec<Arc<Queue>> = lock(&self.queues).iter().filter_map(|(w, _)| w.upgrade()).collect();
        self.default_queue.drain()?;
        queues.iter().try_for_each(|q| q.drain())
    }

    /// Its default queue and the queues of its live streams (a green context's work).
    pub(crate) fn all_queues(&self) -> Vec<Arc<Queue>> {
        let streams = lock(&self.queues).iter().filter_map(|(w, _)| w.upgrade()).collect::<Vec<_>>();
        std::iter::once(Arc::clone(&self.default_queue)).chain(streams).collect()
    }

    /// Where the pending work of its blocking streams ends: what work on the legacy
    /// default stream waits for (CUDA's legacy stream semantics). Non-blocking streams'
    /// work is not waited for.
    pub(crate) fn blocking_pending(&self) -> Vec<(Arc<Queue>, u64)> {
        let queues = lock(&self.queues);
        queues
            .iter()
            .filter(|(_, blocking)| *blocking)
            .filter_map(|(w, _)| w.upgrade())
            .filter_map(|q| q.pending().map(|p| (q, p)))
            .collect()
    }

    /// Waits, as a synchronous call does (it runs on the legacy default stream), for the
    /// work pushed so far on the legacy stream and on its blocking streams.
    pub(crate) fn wait_legacy(&self) -> Result<(), CUresult> {
        self.default_queue.drain()?;
        self.blocking_pending().into_iter().try_for_each(|(q, p)| q.wait(p))
    }

    /// `cuCtxSynchronize`: waits for all its work, then reports a sticky failure.
    pub(crate) fn synchronize(&self) -> Result<(), CUresult> {
        self.alive()?;
        self.wait_all()?;
        self.usable()
    }
}

/// What a world keeps for one thread: its context stack, its capture interaction mode
/// (`cuThreadExchangeStreamCaptureMode`) and its context-restore hook.
pub(crate) struct PerThread {
    /// The context stack; the current context is the top.
    pub(crate) stack: Vec<Arc<Context>>,
    /// The capture interaction mode.
    pub(crate) capture_mode: CUstreamCaptureMode,
    /// The context-restore fault hook (`faults::fail_next_context_restore`).
    pub(crate) restore: Restore,
}

impl Default for PerThread {
    fn default() -> PerThread {
        PerThread {
            stack: Vec::new(),
            capture_mode: CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
            restore: Restore::Off,
        }
    }
}

impl PerThread {
    fn is_default(&self) -> bool {
        self.stack.is_empty()
            && self.capture_mode == CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL
            && matches!(self.restore, Restore::Off)
    }
}

/// A thread's state in each world it used: `(world's Contexts address, generation, state)`.
struct Threads(Vec<(usize, u64, PerThread)>);

impl Drop for Threads {
    /// The thread's states are gone: so is the cache of its current context, which later
    /// calls (from other thread-locals' destructors) must not read.
    fn drop(&mut self) {
        let _ = TOP.try_with(|c| c.set((0, 0, 0)));
    }
}

thread_local! {
    /// This thread's state in each world it used, by the world's [`Contexts`] address and
    /// generation (a reset world starts a new generation: the old states are dropped).
    static THREADS: RefCell<Threads> = const { RefCell::new(Threads(Vec::new())) };
    /// The current context's handle (0: none) in the world this thread used last, with that
    /// world's [`Contexts`] address and generation: `cuCtxGetCurrent` without a borrow or a
    /// search. Every [`Contexts::with_thread`] refreshes it, so it is right whenever its
    /// world and generation match. A `const` thread-local without a destructor: always
    /// readable.
    static TOP: Cell<(usize, u64, u64)> = const { Cell::new((0, 0, 0)) };
}

/// A world's contexts: every context, live and destroyed (a destroyed one can still be
/// made current, and is recognised when destroyed again), made by `cuCtxCreate` and by
/// primary context retains; and each thread's [`PerThread`] state.
pub(crate) struct Contexts {
    all: Mutex<BTreeMap<u64, Arc<Context>>>,
    /// The state of threads whose thread-locals are already destroyed (code running in
    /// another thread-local's destructor at thread exit), by thread key. Such a thread
    /// starts again with no current context, as the stand-in can no longer see the stack it
    /// had; an entry goes when it is back to the default state (one left non-empty at
    /// thread exit stays, holding only references to contexts, which live on anyway).
    late: Mutex<BTreeMap<u64, PerThread>>,
    /// Created contexts destroyed again.
    double_destroys: Mutex<Vec<u64>>,
    /// Bumped by [`Contexts::reset`]: threads' states of older generations are gone.
    generation: AtomicU64,
    /// The world's kernel fault, shared with every context (see [`Context::make_sticky`]).
    fault: Mutex<Option<Arc<AtomicU32>>>,
}

impl Contexts {
    /// No context.
    pub(crate) const fn new() -> Contexts {
        Contexts {
            all: Mutex::new(BTreeMap::new()),
            late: Mutex::new(BTreeMap::new()),
            double_destroys: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
            fault: Mutex::new(None),
        }
    }

    /// Runs `f` on the calling thread's state in this world. Works at any point of the
    /// thread's life: while or after its thread-locals are destroyed, it uses the thread's
    /// entry in `late`. (`None` only if `f` was not run, which cannot happen.)
    pub(crate) fn with_thread<R>(&self, f: impl FnOnce(&mut PerThread) -> R) -> Option<R> {
        let me = self as *const Contexts as usize;
        let generation = self.generation.load(Ordering::Acquire);
        let mut f = Some(f);
        let done = THREADS.try_with(|t| {
            // Nothing run under the borrow comes back here, so it is always free; should it
            // not be, the late state answers.
            let mut t = t.try_borrow_mut().ok()?;
            let t = &mut t.0;
            let i = match t.iter().position(|(w, _, _)| *w == me) {
                Some(i) if t.get(i).is_some_and(|(_, g, _)| *g == generation) => i,
                found => {
                    // A state of an older generation (the world was reset) goes.
                    if let Some(i) = found {
                        t.swap_remove(i);
                    }
                    t.push((me, generation, PerThread::default()));
                    t.len() - 1
                }
            };
            let state = &mut t.get_mut(i)?.2;
            let r = f.take().map(|f| f(state));
            let top = state.stack.last().map_or(0, |c| c.handle);
            let _ = TOP.try_with(|c| c.set((me, generation, top)));
            r
        });
        if let Ok(Some(r)) = done {
            return Some(r);
        }
        // The late state is not cached.
        let _ = TOP.try_with(|c| c.set((0, 0, 0)));
        let key = thread::key();
        let mut late = lock(&self.late);
        let state = late.entry(key).or_default();
        let r = f.take().map(|f| f(state));
        if state.is_default() {
            late.remove(&key);
        }
        r
    }

    /// The context `handle` names, destroyed or not; CUDA_ERROR_INVALID_CONTEXT for a handle
    /// that never named one.
    pub(crate) fn find(&self, handle: u64) -> Result<Arc<Context>, CUresult> {
        lock(&self.all).get(&handle).cloned().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)
    }

    /// The live context `handle` names: CUDA_ERROR_CONTEXT_IS_DESTROYED for a destroyed one,
    /// CUDA_ERROR_INVALID_CONTEXT for a handle that never named one.
    pub(crate) fn lookup(&self, handle: u64) -> Result<Arc<Context>, CUresult> {
        let c = self.find(handle)?;
        c.alive()?;
        Ok(c)
    }

    /// The calling thread's current context, whatever its state.
    pub(crate) fn top(&self) -> Option<Arc<Context>> {
        self.with_thread(|t| t.stack.last().cloned()).flatten()
    }

    /// The handle of the calling thread's current context (no reference count taken).
    #[inline]
    pub(crate) fn top_handle(&self) -> Option<u64> {
        let me = self as *const Contexts as usize;
        if let Ok((w, generation, top)) = TOP.try_with(Cell::get) {
            if w == me && generation == self.generation.load(Ordering::Acquire) {
                return (top != 0).then_some(top);
            }
        }
        self.with_thread(|t| t.stack.last().map(|c| c.handle)).flatten()
    }

    /// The current context, usable: CUDA_ERROR_INVALID_CONTEXT with none,
    /// CUDA_ERROR_CONTEXT_IS_DESTROYED for a destroyed one, the sticky failure while it is
    /// sticky-failed.
    pub(crate) fn current(&self) -> Result<Arc<Context>, CUresult> {
        let c = self.top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        c.usable()?;
        Ok(c)
    }

    /// Pushes `c` on this thread's stack.
    pub(crate) fn push(&self, c: Arc<Context>) {
        let _ = self.with_thread(|t| t.stack.push(c));
    }

    /// Pops this thread's stack.
    pub(crate) fn pop(&self) -> Option<Arc<Context>> {
        self.with_thread(|t| t.stack.pop()).flatten()
    }

    /// Replaces the top of this thread's stack (pushes on an empty one).
    pub(crate) fn replace_top(&self, c: Arc<Context>) {
        let _ = self.with_thread(|t| {
            t.stack.pop();
            t.stack.push(c);
        });
    }

    /// Pops `handle` if it is this thread's current context.
    pub(crate) fn pop_if_top(&self, handle: u64) {
        let _ = self.with_thread(|t| {
            if t.stack.last().is_some_and(|c| c.handle == handle) {
                t.stack.pop();
            }
        });
    }

    /// Makes a context on `device` (not current yet): a created one, or a primary one.
    /// The world's kernel fault fails it: a context cannot be made after one (the H200
    /// answers the fault to `cuCtxCreate` and to a primary context's new retain).
    pub(crate) fn create(&self, device: c_int, primary: bool, flags: c_uint) -> Result<Arc<Context>, CUresult> {
        let fault = Arc::clone(lock(&self.fault).get_or_insert_with(|| Arc::new(AtomicU32::new(0))));
        match fault.load(Ordering::Acquire) {
            0 => {}
            s => return Err(CUresult(s)),
        }
        let c = Arc::new(Context::new(device, primary, flags, fault));
        lock(&self.all).insert(c.handle, Arc::clone(&c));
        Ok(c)
    }

    /// Records that the created context `handle` was destroyed again.
    pub(crate) fn double_destroy(&self, handle: u64) {
        lock(&self.double_destroys).push(handle);
    }

    /// The created contexts destroyed again.
    pub(crate) fn double_destroys(&self) -> Vec<u64> {
        lock(&self.double_destroys).clone()
    }

    /// Every live context, primary ones too.
    pub(crate) fn live(&self) -> Vec<Arc<Context>> {
        lock(&self.all).values().filter(|c| !c.is_destroyed()).cloned().collect()
    }

    /// The live created contexts.
    pub(crate) fn live_handles(&self) -> Vec<u64> {
        lock(&self.all).values().filter(|c| !c.primary && !c.is_destroyed()).map(|c| c.handle).collect()
    }

    /// Forgets every context and every thread's state, as a new process starts: only for
    /// a world nothing uses at the time (see `StandIn::reset`).
    pub(crate) fn reset(&self) {
        *lock(&self.fault) = None;
        lock(&self.all).clear();
        lock(&self.late).clear();
        lock(&self.double_destroys).clear();
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Forgets destroyed contexts (their handles then answer CUDA_ERROR_INVALID_CONTEXT, and
    /// a destroy is no longer recognised as a double one).
    pub(crate) fn forget_destroyed(&self) {
        lock(&self.all).retain(|_, c| !c.is_destroyed());
        lock(&self.double_destroys).clear();
    }
}
