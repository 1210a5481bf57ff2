//! Work queues run by driver threads: the asynchronous part of the emulation.
//!
//! Each stream (and each context's default stream) has a [`Queue`]. Work is numbered in
//! the order it is pushed; a worker thread, started when work arrives and gone when the
//! queue is empty, runs it in that order with no stand-in lock held, so a host function
//! may call back into the driver. Synchronising means waiting until the work pushed so far
//! has completed.

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

/// Outcome of [`Queue::push_if_busy`].
pub(crate) enum Pushed {
    /// The queue was idle: nothing was pushed; the work pushed so far ends at this position.
    Idle(u64),
    /// The task was pushed at this position.
    At(u64),
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

    /// Pushes `task` only if earlier work is still pending.
    pub(crate) fn push_if_busy(self: &Arc<Self>, task: Task) -> Result<Pushed, CUresult> {
        let mut s = lock(&self.state);
        if s.completed == s.pushed {
            return Ok(Pushed::Idle(s.pushed));
        }
        self.push_locked(&mut s, task).map(Pushed::At)
    }

    fn push_locked(self: &Arc<Self>, s: &mut State, task: Task) -> Result<u64, CUresult> {
        if !s.worker {
            let me = Arc::clone(self);
            std::thread::Builder::new()
                .name("cudrv-standin-worker".into())
                .spawn(move || me.work())
                .map_err(|_| CUresult::CUDA_ERROR_OPERATING_SYSTEM)?;
            s.worker = true;
        }
        s.tasks.push_back(task);
        s.pushed += 1;
        Ok(s.pushed)
    }

    /// The worker: runs tasks in order, with no lock held, until the queue is empty.
    fn work(self: Arc<Self>) {
        // (A thread-local without a destructor: `try_with` cannot fail.)
        let _ = WORKING_FOR.try_with(|w| w.set(Arc::as_ptr(&self) as usize));
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
