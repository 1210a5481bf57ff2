//! The cases, by family. Each case runs alone, in its own process ([`crate::runner`]), so
//! a case that destroys a context, poisons one or crashes the driver affects no other.
//!
//! A case is a short sequence of raw driver calls through cudrv's silent form (`p`); it
//! ends with the status of the call it is about and reports what the calls wrote. Cases
//! that pass destroyed handles or NULL pointers do so on purpose, to record the driver's
//! answer; on a real driver some of those crash, which the runner records.

use std::ffi::CStr;
use std::fmt::Display;

use cudrv::sys::*;
use cudrv::{Call, P};

mod array;
mod attributes;
mod batch_more;
mod batch_ops;
mod capture;
mod context;
mod ctx_device_misc;
mod device;
mod errors;
mod execution;
mod extmem;
mod faults;
mod graph;
mod graph_explicit;
mod graph_memory;
mod graph_nodes;
mod host_fn;
mod host_register;
mod images;
mod ipc_checkpoint;
mod kernel;
mod launch;
mod legacy_launch;
mod managed;
mod memory;
mod memory_more;
mod module;
mod module_query;
mod pool;
mod proc_address;
mod stream_event;
mod stream_ops;
mod tensor_map;
mod texref;
mod version;
mod vmm;

/// What a case needs before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
    /// The driver loaded, `cuInit` not called.
    Bare,
    /// `cuInit(0)`, no current context.
    Init,
    /// `cuInit(0)`, device 0's primary context retained and current.
    Ctx,
}

/// What a case runs with.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    /// The silent calls of the driver under test.
    pub p: P<'static>,
    /// Device 0 (after [`Setup::Init`]).
    pub dev: CUdevice,
    /// Device 0's primary context, retained once and current (after [`Setup::Ctx`]).
    pub ctx: CUcontext,
}

/// A case's answer: the final status and what the calls wrote.
#[derive(Debug)]
pub struct Out {
    pub status: String,
    pub fields: Vec<crate::record::Field>,
}

impl Out {
    /// Ends with `status`.
    pub fn of(status: CUresult) -> Out {
        Out { status: status.to_string(), fields: Vec::new() }
    }

    /// Ends before the call the case is about: a setup call failed.
    /// `what` is the call, or the expression that made it (`e.p.cuMemAlloc(&mut d, 16)`),
    /// of which the entry's name is kept.
    pub fn setup_failed(what: &str, status: CUresult) -> Out {
        let name = what.rsplit("p.").next().unwrap_or(what);
        let name = name.split('(').next().unwrap_or(name);
        Out { status: "SETUP_FAILED".into(), fields: Vec::new() }.eq("at", name).eq("status", status)
    }

    /// A value another driver must write alike.
    pub fn eq(mut self, key: &str, value: impl Display) -> Out {
        self.fields.push(field(key, value, true));
        self
    }

    /// A value shown only (names, sizes, addresses).
    pub fn info(mut self, key: &str, value: impl Display) -> Out {
        self.fields.push(field(key, value, false));
        self
    }
}

fn field(key: &str, value: impl Display, compared: bool) -> crate::record::Field {
    let value: String = value.to_string().chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect();
    crate::record::Field { key: key.into(), value: if value.is_empty() { "\"\"".into() } else { value }, compared }
}

/// A case: its name (`family.what`), what it needs, and its calls.
#[derive(Clone, Copy)]
pub struct Case {
    pub name: &'static str,
    pub setup: Setup,
    /// Entries that appeared in a later driver and the version that brought them: below
    /// it, cudrv answers the case itself (`GATED`) without calling the driver.
    pub since: Option<(u32, &'static [Call])>,
    pub run: fn(&Env) -> Out,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case").field("name", &self.name).field("setup", &self.setup).finish()
    }
}

/// Declares a case. The body runs inside one `unsafe` block: the cases call the driver
/// directly.
macro_rules! case {
    ($name:literal, $setup:ident, |$e:ident| $body:block) => {
        $crate::cases::Case {
            name: $name,
            setup: $crate::cases::Setup::$setup,
            since: None,
            run: |$e: &$crate::cases::Env| -> $crate::cases::Out {
                #[allow(unused_unsafe)]
                // SAFETY: every pointer passed is to a live local or a buffer the case
                // allocated; handles are the case's own. Cases that pass destroyed handles
                // or NULL do so on purpose, in a process of their own (the runner).
                unsafe {
                    $body
                }
            },
        }
    };
    ($name:literal, $setup:ident, since $v:literal $calls:expr, |$e:ident| $body:block) => {
        $crate::cases::Case { since: Some(($v, $calls)), ..case!($name, $setup, |$e| $body) }
    };
}
pub(crate) use case;

/// Runs a setup call; on failure the case ends with [`Out::setup_failed`].
macro_rules! step {
    ($call:expr) => {{
        let status = $call;
        if status != cudrv::sys::CUresult::CUDA_SUCCESS {
            return $crate::cases::Out::setup_failed(stringify!($call), status);
        }
    }};
}
pub(crate) use step;

/// The value of a helper's `Ok`; on `Err` the case ends with that answer.
macro_rules! with {
    ($r:expr) => {
        match $r {
            Ok(v) => v,
            Err(out) => return out,
        }
    };
}
pub(crate) use with;

/// Cases that need a process of their own (beyond a fresh driver): their host functions
/// count runs or keep what they saw in process-wide statics, or call back through cudrv's
/// process-wide driver. [`crate::runner::run_case_on`] cannot run them beside other
/// drivers in one process; the suite's runner (a process per case) runs every case.
pub fn needs_own_process(name: &str) -> bool {
    name.starts_with("host_fn.")
        || matches!(
            name,
            "graph.host_node_launch_twice" | "graph.launch_after_graph_destroyed" | "graph.launch_legacy_stream"
        )
}

/// The cases of the families written for issue 29, recorded or not: each is in [`all`]
/// once its line is in the expected file, in [`pending`] until then (whether unrecorded,
/// or recorded on the H200 in `docs/gpu-runs/h200/` but not yet agreed with).
fn newer_families() -> Vec<Case> {
    [
        memory_more::cases(),
        attributes::pending(),
        images::pending(),
        faults::cases(),
        stream_ops::cases(),
        graph_memory::cases(),
        graph_nodes::cases(),
        module_query::cases(),
        ctx_device_misc::cases(),
        extmem::cases(),
        ipc_checkpoint::cases(),
        tensor_map::cases(),
        batch_ops::cases(),
        legacy_launch::cases(),
        texref::cases(),
    ]
    .concat()
}

/// Whether the expected file has a line for case `name`.
fn recorded(name: &str) -> bool {
    crate::EXPECTED.lines().any(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with(' ')))
}

/// Cases written whose answers on the H200 are not in the expected file yet:
/// `cudrv-conformance run --pending` runs them (for recording); once their lines are in
/// the expected file they move into [`all`].
pub fn pending() -> Vec<Case> {
    newer_families().into_iter().filter(|c| !recorded(c.name)).collect()
}

/// Every case, recorded or pending (to find one by name).
pub fn every() -> Vec<Case> {
    [all(), pending()].concat()
}

/// Every case, in the order the suite runs them.
pub fn all() -> Vec<Case> {
    [
        device::cases(),
        attributes::cases(),
        errors::cases(),
        proc_address::cases(),
        context::cases(),
        stream_event::cases(),
        memory::cases(),
        pool::cases(),
        module::cases(),
        launch::cases(),
        host_fn::cases(),
        graph::cases(),
        capture::cases(),
        version::cases(),
        kernel::cases(),
        vmm::cases(),
        host_register::cases(),
        array::cases(),
        managed::cases(),
        execution::cases(),
        graph_explicit::cases(),
        launch::named_context_cases(),
        kernel::named_context_cases(),
        graph_explicit::named_context_cases(),
        newer_families().into_iter().filter(|c| recorded(c.name)).collect(),
    ]
    .concat()
}

/// A sentinel a case stores in an out-value before a call, to see whether it was written.
pub const UNTOUCHED: u64 = 0x5eed_5eed_5eed_5eed;

/// A pointer initialised to [`UNTOUCHED`].
pub fn sentinel<T>() -> *mut T {
    UNTOUCHED as usize as *mut T
}

/// How a handle out-value came back: `untouched`, `null` or `set`.
pub fn handle<T>(h: *mut T) -> &'static str {
    if h as usize as u64 == UNTOUCHED {
        "untouched"
    } else if h.is_null() {
        "null"
    } else {
        "set"
    }
}

/// How a number out-value came back: `untouched` or its value.
pub fn number(v: u64) -> String {
    if v == UNTOUCHED {
        "untouched".into()
    } else {
        v.to_string()
    }
}

/// How a 32-bit out-value came back: `untouched` (the low half of [`UNTOUCHED`]) or its
/// value.
pub fn number32(v: u32) -> String {
    if v == UNTOUCHED as u32 {
        "untouched".into()
    } else {
        v.to_string()
    }
}

/// A NUL-terminated C string as text (`null` for a NULL pointer).
///
/// # Safety
/// `s` is NULL, [`UNTOUCHED`], or a NUL-terminated string that lives through the call.
pub unsafe fn text(s: *const std::os::raw::c_char) -> String {
    if s.is_null() || s as usize as u64 == UNTOUCHED {
        return if s.is_null() { "null".into() } else { "untouched".into() };
    }
    // SAFETY: the driver returned a NUL-terminated string it owns for the process's life.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// Launch geometry: grid and block dimensions, dynamic shared memory bytes.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
}

/// The PTX of `scale_f32(float* x, float s, int n)` (`x[i] *= s`), which the stand-in
/// runs on the host; NUL-terminated.
pub const SCALE_PTX: &str = concat!(include_str!("../../../examples/kernels/scale_f32.ptx"), "\0");

/// `value`, made by a setup call that answered `status`; if that failed, the case ends
/// with [`Out::setup_failed`] naming the call `what`.
pub fn made<T>(what: &str, status: CUresult, value: T) -> Result<T, Out> {
    match status {
        CUresult::CUDA_SUCCESS => Ok(value),
        st => Err(Out::setup_failed(what, st)),
    }
}

/// A fresh stream of the current context (flags 0).
pub fn stream(e: &Env) -> Result<CUstream, Out> {
    let mut s = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuStreamCreate", unsafe { e.p.cuStreamCreate(&mut s, 0) }, s)
}

/// A second context on device 0 (`cuCtxCreate_v3020`), with the case's context (`e.ctx`)
/// current again afterwards.
pub fn other_context(e: &Env) -> Result<CUcontext, Out> {
    let mut c = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuCtxCreate_v3020", unsafe { e.p.cuCtxCreate_v3020(&mut c, 0, e.dev) }, ())?;
    // SAFETY: the case's live context.
    made("cuCtxSetCurrent", unsafe { e.p.cuCtxSetCurrent(e.ctx) }, c)
}

/// `bytes` of device memory in the current context.
pub fn alloc(e: &Env, bytes: usize) -> Result<CUdeviceptr, Out> {
    let mut d = 0;
    // SAFETY: a valid out-pointer.
    made("cuMemAlloc", unsafe { e.p.cuMemAlloc(&mut d, bytes) }, d)
}

/// `scale_f32` from a module loaded from [`SCALE_PTX`] in the current context.
pub fn scale_kernel(e: &Env) -> Result<CUfunction, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated PTX image and a valid out-pointer.
    made("cuModuleLoadData", unsafe { e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()) }, ())?;
    let mut f = std::ptr::null_mut();
    // SAFETY: a live module, a NUL-terminated name, a valid out-pointer.
    made("cuModuleGetFunction", unsafe { e.p.cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr()) }, f)
}

/// Launches `scale_f32(x, 2.0, n)` with the given shape on `stream`.
///
/// # Safety
/// `f` and `stream` are live, or invalid on purpose in a case run in its own process.
pub unsafe fn launch_scale(e: &Env, f: CUfunction, shape: Shape, stream: CUstream, x: CUdeviceptr, n: i32) -> CUresult {
    let Shape { grid, block, shared } = shape;
    let (mut x, mut s, mut n) = (x, 2.0f32, n);
    let mut args: [*mut std::os::raw::c_void; 3] = [(&raw mut x).cast(), (&raw mut s).cast(), (&raw mut n).cast()];
    // SAFETY: the arguments match scale_f32's parameters and outlive the call, which
    // copies them.
    unsafe {
        e.p.cuLaunchKernel(
            f,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared,
            stream,
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
}

/// Reads `n` floats back from device memory (synchronously).
pub fn read_f32(e: &Env, d: CUdeviceptr, n: usize) -> Result<Vec<f32>, Out> {
    let mut v = vec![0f32; n];
    // SAFETY: `v` has room for `n` floats.
    made("cuMemcpyDtoH", unsafe { e.p.cuMemcpyDtoH(v.as_mut_ptr().cast(), d, n * 4) }, v)
}

/// Writes floats to device memory (synchronously).
pub fn write_f32(e: &Env, d: CUdeviceptr, v: &[f32]) -> Result<(), Out> {
    // SAFETY: `v` holds `v.len()` floats.
    made("cuMemcpyHtoD", unsafe { e.p.cuMemcpyHtoD(d, v.as_ptr().cast(), std::mem::size_of_val(v)) }, ())
}
