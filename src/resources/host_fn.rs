//! Running user code from the driver: host functions, graph host nodes and user-object
//! destructors all go through a trampoline that catches a panic and reports it, so that
//! nothing ever unwinds into the driver. [`HostFn`] gives programs the same trampoline
//! for any host-function entry (`cuLaunchHostFunc_v13010` with its flags included), so no
//! one writes an `extern "C"` callback by hand.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use crate::error::{Error, InvalidArgument};
use crate::report::{self, Arg, Report};
use crate::resources::stream::Stream;
use crate::sys::CUhostFn;

/// The threads now running user code for the driver (a host function, a host node, a
/// user-object destructor, and the reports made there). The driver forbids CUDA calls on
/// them, so cudrv refuses at once what would call the driver or wait for it there (an
/// IPC import), instead of waiting for work that waits for this very thread. A set, not
/// thread-local state (DESIGN.md); a thread appears once per nested run.
static DRIVER_CALLBACKS: Mutex<Vec<ThreadId>> = Mutex::new(Vec::new());

fn driver_callbacks() -> MutexGuard<'static, Vec<ThreadId>> {
    DRIVER_CALLBACKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the calling thread as running a driver callback until dropped (also on unwind).
struct InCallback(Option<ThreadId>);

impl InCallback {
    fn enter() -> InCallback {
        let id = catch_unwind(|| std::thread::current().id()).ok();
        if let Some(id) = id {
            driver_callbacks().push(id);
        }
        InCallback(id)
    }
}

impl Drop for InCallback {
    fn drop(&mut self) {
        let Some(id) = self.0 else { return };
        let mut now = driver_callbacks();
        if let Some(at) = now.iter().position(|t| *t == id) {
            now.swap_remove(at);
        }
    }
}

/// Whether the calling thread is running a driver callback ([`run_user_code`]), where
/// the driver answers CUDA calls with `CUDA_ERROR_NOT_PERMITTED`.
pub(crate) fn in_driver_callback() -> bool {
    let Ok(id) = catch_unwind(|| std::thread::current().id()) else {
        return false;
    };
    driver_callbacks().contains(&id)
}

/// Runs `f` on a driver thread; a panic is caught and reported as `what(arg) panicked:
/// ...`. The panic payload is leaked rather than dropped, since dropping it could panic
/// again. While it runs, and while its panic is reported, the thread counts as running a
/// driver callback ([`in_driver_callback`]).
pub(crate) fn run_user_code(what: &'static str, arg: Arg, f: impl FnOnce()) {
    let _marked = InCallback::enter();
    if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
        let message = report::panic_message(payload.as_ref());
        std::mem::forget(payload);
        report::report(Report::panic(what, arg, message));
    }
}

type Boxed = Box<dyn FnOnce() + Send + 'static>;

/// The callback of every [`HostFn`]: takes back the boxed closure and runs it once.
unsafe extern "C" fn trampoline(data: *mut c_void) {
    run_user_code("host function", Arg::Pointer(data as usize), || {
        // SAFETY: `data` is the `Box<Boxed>` of a HostFn handed to the driver, which calls
        // its callback exactly once with it.
        let f = unsafe { Box::from_raw(data.cast::<Boxed>()) };
        f();
    });
}

/// A closure packaged as a C host function: a callback and its user data for any entry
/// that takes a `CUhostFn` (`cuLaunchHostFunc`, `cuLaunchHostFunc_v13010`, ...).
///
/// The closure runs on a driver thread, once; it must not call CUDA (a driver rule, which
/// includes dropping the last clone of a cudrv handle; cudrv refuses an
/// [`crate::ImportedBuffer::import`] there with `CUDA_ERROR_NOT_PERMITTED`). A panic in it
/// is caught and reported. Never hand it to a stream that is capturing: the captured graph would call
/// it at every replay, after the first has freed it (`Stream::launch_host_fn` refuses
/// that; `Graph::add_host_node` is the form for graphs). If the driver did not take it, dropping the `HostFn` drops the closure
/// unrun; once the driver took it, call [`HostFn::handed_over`].
///
/// ```
/// # cudrv_standin::install().unwrap();
/// # let ctx = cudrv::init()?.device(0)?.primary_context()?;
/// # let stream = cudrv::Stream::new(&ctx, 0)?;
/// let (done, ran) = std::sync::mpsc::channel();
/// let f = cudrv::HostFn::new(move || done.send("done").unwrap_or(()));
/// // SAFETY: a live stream; the callback and data come from `f`.
/// let status = unsafe { cudrv::p::cuLaunchHostFunc(stream.as_raw(), f.callback(), f.user_data()) };
/// if status == cudrv::CUresult::CUDA_SUCCESS {
///     f.handed_over();
/// }
/// stream.synchronize()?;
/// assert_eq!(ran.try_recv(), Ok("done"));
/// # Ok::<(), cudrv::Error>(())
/// ```
pub struct HostFn {
    data: *mut c_void,
}

impl std::fmt::Debug for HostFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostFn({:#x})", self.data as usize)
    }
}

// SAFETY: the closure is Send, and `data` is only its box.
unsafe impl Send for HostFn {}

impl HostFn {
    /// Packages `f`.
    pub fn new(f: impl FnOnce() + Send + 'static) -> HostFn {
        HostFn { data: Box::into_raw(Box::new(Box::new(f) as Boxed)).cast() }
    }

    /// The callback to give the driver.
    pub fn callback(&self) -> CUhostFn {
        Some(trampoline)
    }

    /// The user data to give the driver with it.
    pub fn user_data(&self) -> *mut c_void {
        self.data
    }

    /// The driver accepted the callback: it now owns the closure and will run it once.
    pub fn handed_over(self) {
        std::mem::forget(self);
    }
}

impl Drop for HostFn {
    /// The driver never took it: drop the closure unrun.
    fn drop(&mut self) {
        // SAFETY: `data` is the box from `new`, not handed over (else this would not run).
        drop(unsafe { Box::from_raw(self.data.cast::<Boxed>()) });
    }
}

impl Stream {
    /// Runs `f` on a driver thread once the work queued before it is done
    /// (`cuLaunchHostFunc`). `f` must not call CUDA (nor drop the last clone of a cudrv
    /// handle); a panic in it is caught and reported. On error `f` is dropped without
    /// running, unless the error's note says it was queued (only restoring the caller's
    /// context failed). A capturing stream is refused (`InvalidArgument`): use
    /// [`crate::Graph::add_host_node`] for a host function in a graph.
    pub fn launch_host_fn(&self, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
        launch(self, f)
    }
}

/// Enqueues `f` on `stream` with `cuLaunchHostFunc`. If the driver did not accept it, `f`
/// is dropped without running; if it did and only restoring the caller's context failed,
/// the error says so in a note and `f` will run. A stream that is capturing is refused:
/// the host function would become a graph node run at every replay, and `f` runs once.
fn launch(stream: &Stream, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
    let d = stream.context().driver();
    let host = HostFn::new(f);
    let (raw, callback, data) = (stream.as_raw(), host.callback(), host.user_data());
    let mut accepted = false;
    // One switch to the stream's context for the capture check and the launch.
    let result = stream.run(|| {
        if stream.capturing_here()? {
            return Ok(());
        }
        // SAFETY: the stream is live (we hold it); callback and data come from `host`.
        unsafe { d.pc().cuLaunchHostFunc(raw, callback, data) }?;
        accepted = true;
        Ok(())
    });
    if !accepted {
        result?;
        let why = "the stream is capturing: a graph would run this one-shot closure at every replay \
                   (use Graph::add_host_node)";
        return Err(InvalidArgument::new("Stream::launch_host_fn", why).into());
    }
    host.handed_over();
    Ok(result.map_err(|e| e.with_note("the host function was queued and will run"))?)
}
