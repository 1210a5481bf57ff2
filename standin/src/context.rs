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

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cudrv::sys::CUresult;

use crate::entry::{self, lock};
use crate::handles;
use crate::ledger;
use crate::queue::Queue;

/// One context.
pub(crate) struct Context {
    /// Its handle (`CUcontext`).
    pub(crate) handle: u64,
    /// Its device.
    pub(crate) device: c_int,
    primary: bool,
    /// The flags it was created with (a primary context's are its device's: `primaries.rs`).
    pub(crate) flags: c_uint,
    /// The sticky failure's status (0: none).
    sticky: AtomicU32,
    destroyed: AtomicBool,
    /// Its default stream (the NULL stream, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD`).
    pub(crate) default_queue: Arc<Queue>,
    /// The queues of its streams, for `cuCtxSynchronize` (a destroyed stream's pending
    /// work still counts).
    queues: Mutex<Vec<Weak<Queue>>>,
}

impl Context {
    fn new(device: c_int, primary: bool, flags: c_uint) -> Context {
        Context {
            handle: handles::fresh(),
            device,
            primary,
            flags,
            sticky: AtomicU32::new(0),
            destroyed: AtomicBool::new(false),
            default_queue: Queue::new(),
            queues: Mutex::new(Vec::new()),
        }
    }

    /// Whether calls may use it: CUDA_ERROR_CONTEXT_IS_DESTROYED once destroyed, the sticky
    /// failure (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED) while sticky-failed.
    pub(crate) fn usable(&self) -> Result<(), CUresult> {
        self.alive()?;
        match self.sticky.load(Ordering::Acquire) {
            0 => Ok(()),
            s => Err(CUresult(s)),
        }
    }

    /// CUDA_ERROR_CONTEXT_IS_DESTROYED once destroyed.
    pub(crate) fn alive(&self) -> Result<(), CUresult> {
        if self.is_destroyed() {
            return Err(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
        }
        Ok(())
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
        match self.sticky.load(Ordering::Acquire) {
            s if s != 0 && !self.destroyed.load(Ordering::Acquire) => Err(CUresult(s)),
            _ => Ok(()),
        }
    }

    /// Makes it sticky-failed with `status` (a kernel faulted), unless it already is.
    pub(crate) fn make_sticky(&self, status: CUresult) {
        let _ = self.sticky.compare_exchange(0, status.0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Marks it destroyed and ends its peer access pairs; `false` if it already was.
    fn end(&self) -> bool {
        if self.destroyed.swap(true, Ordering::AcqRel) {
            return false;
        }
        crate::peer::forget_context(self.handle);
        true
    }

    /// Adds a stream's queue.
    pub(crate) fn add_queue(&self, q: &Arc<Queue>) {
        let mut queues = lock(&self.queues);
        queues.retain(|w| w.strong_count() > 0);
        queues.push(Arc::downgrade(q));
    }

    /// Waits for the work pushed so far on all its streams.
    pub(crate) fn wait_all(&self) -> Result<(), CUresult> {
        let queues: Vec<Arc<Queue>> = lock(&self.queues).iter().filter_map(Weak::upgrade).collect();
        self.default_queue.drain()?;
        queues.iter().try_for_each(|q| q.drain())
    }

    /// `cuCtxSynchronize`: waits for all its work, then reports a sticky failure.
    pub(crate) fn synchronize(&self) -> Result<(), CUresult> {
        self.alive()?;
        self.wait_all()?;
        self.usable()
    }
}

/// Every context, live and destroyed (a destroyed one can still be made current, and is
/// recognised when destroyed again): made by `cuCtxCreate`, and each primary context
/// made by a retain (`primaries.rs`).
static CONTEXTS: Mutex<BTreeMap<u64, Arc<Context>>> = Mutex::new(BTreeMap::new());

thread_local! {
    static STACK: RefCell<Vec<Arc<Context>>> = const { RefCell::new(Vec::new()) };
}

/// The stacks of threads whose `STACK` is already destroyed (code running in another
/// thread-local's destructor at thread exit), by [`entry::thread_key`]. Such a thread
/// starts again with no current context, as the stand-in can no longer see the stack it
/// had; an entry goes when its stack is empty again (one left non-empty at thread exit
/// stays, holding only references to contexts, which live on anyway).
static LATE_STACKS: Mutex<BTreeMap<u64, Vec<Arc<Context>>>> = Mutex::new(BTreeMap::new());

/// Runs `f` on the calling thread's context stack. Never fails: while or after the
/// thread's thread-locals are destroyed, it uses the thread's entry in `LATE_STACKS`.
/// (`None` only if `f` was not run, which cannot happen.)
fn with_stack<R>(f: impl FnOnce(&mut Vec<Arc<Context>>) -> R) -> Option<R> {
    let mut f = Some(f);
    let done = STACK.try_with(|s| {
        // Nothing run under the borrow comes back here, so it is always free; should it
        // not be, the late stack answers.
        let mut s = s.try_borrow_mut().ok()?;
        f.take().map(|f| f(&mut s))
    });
    if let Ok(Some(r)) = done {
        return Some(r);
    }
    let key = entry::thread_key();
    let mut late = lock(&LATE_STACKS);
    let stack = late.entry(key).or_default();
    let r = f.take().map(|f| f(stack));
    if stack.is_empty() {
        late.remove(&key);
    }
    r
}

/// The context `handle` names, destroyed or not; CUDA_ERROR_INVALID_CONTEXT for a handle
/// that never named one.
pub(crate) fn find(handle: u64) -> Result<Arc<Context>, CUresult> {
    lock(&CONTEXTS).get(&handle).cloned().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)
}

/// The live context `handle` names: CUDA_ERROR_CONTEXT_IS_DESTROYED for a destroyed one,
/// CUDA_ERROR_INVALID_CONTEXT for a handle that never named one.
pub(crate) fn lookup(handle: u64) -> Result<Arc<Context>, CUresult> {
    let c = find(handle)?;
    c.alive()?;
    Ok(c)
}

/// The calling thread's current context, whatever its state.
pub(crate) fn top() -> Option<Arc<Context>> {
    with_stack(|s| s.last().cloned()).flatten()
}

/// The handle of the calling thread's current context (no reference count taken).
pub(crate) fn top_handle() -> Option<u64> {
    with_stack(|s| s.last().map(|c| c.handle)).flatten()
}

/// The current context, usable: CUDA_ERROR_INVALID_CONTEXT with none,
/// CUDA_ERROR_CONTEXT_IS_DESTROYED for a destroyed one, the sticky failure while it is
/// sticky-failed.
pub(crate) fn current() -> Result<Arc<Context>, CUresult> {
    let c = top().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
    c.usable()?;
    Ok(c)
}

/// Pushes `c` on this thread's stack.
pub(crate) fn push(c: Arc<Context>) {
    let _ = with_stack(|s| s.push(c));
}

/// Pops this thread's stack.
pub(crate) fn pop() -> Option<Arc<Context>> {
    with_stack(|s| s.pop()).flatten()
}

/// Replaces the top of this thread's stack (pushes on an empty one).
pub(crate) fn replace_top(c: Arc<Context>) {
    let _ = with_stack(|s| {
        s.pop();
        s.push(c);
    });
}

/// Makes a context on `device` (not current yet): a created one, or a primary one (for
/// `primaries.rs`).
pub(crate) fn create(device: c_int, primary: bool, flags: c_uint) -> Arc<Context> {
    let c = Arc::new(Context::new(device, primary, flags));
    lock(&CONTEXTS).insert(c.handle, Arc::clone(&c));
    c
}

/// Ends a primary context (its last release, or a reset): waits for its work, then marks
/// it destroyed. Its handle then answers CUDA_ERROR_CONTEXT_IS_DESTROYED.
pub(crate) fn end_primary(c: &Context) -> Result<(), CUresult> {
    let r = c.wait_all();
    c.end();
    r
}

/// Destroys a created context: waits for its work, marks it destroyed, and pops it if it
/// is this thread's current context. A primary context cannot be destroyed
/// (CUDA_ERROR_INVALID_CONTEXT); a destroyed one answers CUDA_ERROR_CONTEXT_IS_DESTROYED
/// (facts) and is recorded as a double destroy.
pub(crate) fn destroy(handle: u64) -> Result<(), CUresult> {
    let c = find(handle)?;
    if c.primary {
        return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
    }
    let twice = || {
        ledger::double_destroy("context", handle);
        Err(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED)
    };
    if c.is_destroyed() {
        return twice();
    }
    // The work already queued finishes first (outside any lock).
    c.wait_all()?;
    if !c.end() {
        return twice();
    }
    let _ = with_stack(|s| {
        if s.last().is_some_and(|t| t.handle == handle) {
            s.pop();
        }
    });
    Ok(())
}

/// Appends the live created contexts.
pub(crate) fn live_handles(out: &mut Vec<(&'static str, u64)>) {
    let contexts = lock(&CONTEXTS);
    out.extend(contexts.values().filter(|c| !c.primary && !c.is_destroyed()).map(|c| ("context", c.handle)));
}

/// Forgets destroyed contexts (their handles then answer CUDA_ERROR_INVALID_CONTEXT, and a
/// destroy is no longer recognised as a double one).
pub(crate) fn forget_destroyed() {
    lock(&CONTEXTS).retain(|_, c| !c.is_destroyed());
}
