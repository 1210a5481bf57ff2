//! Work queues run by driver threads: the asynchronous part of the emulation.
//!
//! Each stream (and each context's default stream) has a [`Queue`]. Work is numbered in
//! the order it is pushed; a worker thread, started when work arrives and gone when the
//! queue is empty, runs it in that order with no stand-in lock held, so a host function
//! may call back into the driver. Synchronising means waiting until the work pushed so far
//! has completed.
//!
//! Device work that finds its queue idle (nothing pending, no worker) may run at once on
//! the calling thread ([`Queue::exec`]): it takes its position as pushed work does, so work
//! pushed meanwhile from other threads waits for it, and the caller learns its result.
//! Work pushed behind pending work runs later on the worker, in order.

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};

use cudrv::sys::{CUhostFn, CUresult};

use crate::run::lock::lock;

/// One piece of queued work.
pub(crate) type Task = Box<dyn FnOnce() + Send>;

/// A program's host function and its argument (`cuLaunchHostFunc`, host nodes, user
/// object destructors).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostCall {
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
}

// SAFETY: the driver API's contract: the program passes a function and argument that may
// be used on a driver thread.
unsafe impl Send for HostCall {}

impl HostCall {
    /// `None` for a null function.
    pub(crate) fn new(f: CUhostFn, data: *mut c_void) -> Option<HostCall> {
        f.map(|f| HostCall { f, data })
    }

    /// Calls the function, with the thread marked as running a callback (driver calls
    /// from it answer CUDA_ERROR_NOT_PERMITTED). Never called with a stand-in lock held.
    pub(crate) fn run(self) {
        // SAFETY: the program's host function with its own argument, as it asked.
        crate::run::callback::run(|| unsafe { (self.f)(self.data) })
    }

    /// Its function and argument.
    pub(crate) fn parts(self) -> (CUhostFn, *mut c_void) {
        (Some(self.f), self.data)
    }

    /// The call as a queue task.
    pub(crate) fn task(self) -> Task {
        Box::new(move || self.run())
    }
}

struct State {
    tasks: VecDeque<Task>,
    /// Number of tasks ever pushed: the position of the last one.
    pushed: u64,
    /// Number of tasks completed.
    completed: u64,
    /// Whether a worker thread is serving the queue.
    worker: bool,
}

/// An ordered queue of work and its worker.
pub(crate) struct Queue {
    state: Mutex<State>,
    done: Condvar,
}

thread_local! {
    /// The queue this thread works for (its address), 0 on other threads.
    static WORKING_FOR: Cell<usize> = const { Cell::new(0) };
}

/// Where [`Queue::exec`] ran its work.
pub(crate) enum Ran {
    /// At once, on the calling thread, at this position, with this result.
    Now(u64, Result<(), CUresult>),
    /// Queued at this position, behind pending work.
    Queued(u64),
}

impl Ran {
    /// Its position in the queue.
    pub(crate) fn position(&self) -> u64 {
        match self {
            Ran::Now(p, _) | Ran::Queued(p) => *p,
        }
    }

    /// The result of work done at once; `Ok` for queued work.
    pub(crate) fn result(self) -> Result<(), CUresult> {
        match self {
            Ran::Now(_, r) => r,
            Ran::Queued(_) => Ok(()),
        }
    }
}

impl Queue {
    /// An empty queue.
    pub(crate) fn new() -> Arc<Queue> {
        Arc::new(Queue {
            state: Mutex::new(State { tasks: VecDeque::new(), pushed: 0, completed: 0, worker: false }),
            done: Condvar::new(),
        })
    }

    /// Pushes `task`, starting a worker if none runs; returns its position.
    /// CUDA_ERROR_OPERATING_SYSTEM if no thread could be started (nothing is pushed).
    pub(crate) fn push(self: &Arc<Self>, task: Task) -> Result<u64, CUresult> {
        let mut s = lock(&self.state);
        self.push_locked(&mut s, task)
    }

    fn push_locked(self: &Arc<Self>, s: &mut State, task: Task) -> Result<u64, CUresult> {
        if !s.worker {
            self.spawn()?;
            s.worker = true;
        }
        s.tasks.push_back(task);
        s.pushed += 1;
        Ok(s.pushed)
    }

    fn spawn(self: &Arc<Self>) -> Result<(), CUresult> {
        let me = Arc::clone(self);
        std::thread::Builder::new()
            .name("cudrv-standin-worker".into())
            .spawn(move || me.work())
            .map(drop)
            .map_err(|_| CUresult::CUDA_ERROR_OPERATING_SYSTEM)
    }

    /// Runs `work` in queue order: at once on the calling thread (`work(true)`) if the
    /// queue is idle, else pushed behind the pending work (`work(false)` on the worker,
    /// whose result is dropped: the work reports its own failures, as a GPU does at a
    /// later call). Work done at once holds its position, so work pushed meanwhile by other
    /// threads runs after it. CUDA_ERROR_OPERATING_SYSTEM if no thread could be started for
    /// queued work (nothing is queued).
    pub(crate) fn exec<F>(self: &Arc<Self>, work: F) -> Result<Ran, CUresult>
    where
        F: FnOnce(bool) -> Result<(), CUresult> + Send + 'static,
    {
        let mut s = lock(&self.state);
        if s.worker || s.completed < s.pushed {
            let task: Task = Box::new(move || {
                let _ = work(false);
            });
            return self.push_locked(&mut s, task).map(Ran::Queued);
        }
        // Idle: this thread serves the queue for this one piece of work.
        s.worker = true;
        s.pushed += 1;
        let position = s.pushed;
        drop(s);
        let result = work(true);
        let mut s = lock(&self.state);
        s.completed += 1;
        if s.tasks.is_empty() {
            s.worker = false;
        } else if self.spawn().is_err() {
            // Work pushed meanwhile needs a worker and none can be started: this thread
            // serves the queue until it is empty (it never waits for the program).
            drop(s);
            self.done.notify_all();
            self.serve();
            return Ok(Ran::Now(position, result));
        }
        drop(s);
        self.done.notify_all();
        Ok(Ran::Now(position, result))
    }

    /// Pushes `task` to run once the work up to each position in `after` (of other queues)
    /// has completed, in this queue's order.
    pub(crate) fn push_after(self: &Arc<Self>, after: Vec<(Arc<Queue>, u64)>, task: Task) -> Result<u64, CUresult> {
        self.push(Box::new(move || {
            for (q, p) in after {
                // A wait from another queue's worker cannot fail.
                let _ = q.wait(p);
            }
            task()
        }))
    }

    /// The worker: runs tasks in order, with no lock held, until the queue is empty.
    fn work(self: Arc<Self>) {
        // (A thread-local without a destructor: `try_with` cannot fail.)
        let _ = WORKING_FOR.try_with(|w| w.set(Arc::as_ptr(&self) as usize));
        self.serve();
    }

    /// Runs the queued tasks in order until there are none (the caller holds the worker
    /// role).
    fn serve(&self) {
        loop {
            let task = {
                let mut s = lock(&self.state);
                match s.tasks.pop_front() {
                    Some(t) => t,
                    None => {
                        s.worker = false;
                        return;
                    }
                }
            };
            task();
            lock(&self.state).completed += 1;
            self.done.notify_all();
        }
    }

    /// The position of the last work pushed.
    pub(crate) fn position(&self) -> u64 {
        lock(&self.state).pushed
    }

    /// Whether the work up to `position` has completed.
    pub(crate) fn reached(&self, position: u64) -> bool {
        lock(&self.state).completed >= position
    }

    /// Whether work is pending.
    pub(crate) fn busy(&self) -> bool {
        let s = lock(&self.state);
        s.completed < s.pushed
    }

    /// The position of the last work pushed, if it has not completed.
    pub(crate) fn pending(&self) -> Option<u64> {
        let s = lock(&self.state);
        (s.completed < s.pushed).then_some(s.pushed)
    }

    /// Waits until the work up to `position` has completed. From the queue's own worker
    /// (a host function synchronising its own stream) that would never happen:
    /// CUDA_ERROR_NOT_PERMITTED instead.
    pub(crate) fn wait(&self, position: u64) -> Result<(), CUresult> {
        let own = WORKING_FOR.try_with(Cell::get).unwrap_or(0) == self as *const Queue as usize;
        let mut s = lock(&self.state);
        if own && s.completed < position {
            return Err(CUresult::CUDA_ERROR_NOT_PERMITTED);
        }
        while s.completed < position {
            s = self.done.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        Ok(())
    }

    /// Waits until the work pushed so far has completed.
    pub(crate) fn drain(&self) -> Result<(), CUresult> {
        self.wait(self.position())
    }
}
