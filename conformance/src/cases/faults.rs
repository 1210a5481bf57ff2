//! Kernel faults (issue 29 item 3): a kernel that traps, asserts, or stores to an illegal
//! or misaligned address, launched directly or as a graph's kernel node. What the launch
//! answers, which calls report the fault (the synchronising ones, then every call that
//! uses the context: a sticky error), which calls still answer, and how a program
//! recovers (another context, a primary context reset, destroying a created context).
//!
//! The calls after the launch begin with a synchronising one, so that what the GPU has
//! done by then does not depend on timing, except in `*_stream_query` (it polls until
//! the stream stops answering NOT_READY) and `*_event_synchronize` (the record made right
//! after the launch may see the fault or not: shown, not compared).

use std::ffi::CStr;
use std::os::raw::c_void;

use super::graph::{graph, instantiate};
use super::{alloc, case, made, step, stream, with, Case, Env, Out};
use cudrv::sys::*;

/// Five kernels of one parameter (`out`, 64 bytes of device memory): `trap_k` traps,
/// `illegal_k` stores to address 16, `misaligned_k` stores 4 bytes at `out + 2`,
/// `assert_k` fails a device-side assert (`__assertfail`, as `assert` compiles), `fine_k`
/// stores 7 at `out`. NUL-terminated.
const FAULTS_PTX: &str = concat!(
    ".version 8.0\n.target sm_90\n.address_size 64\n",
    ".extern .func __assertfail\n(\n.param .b64 __assertfail_param_0,\n.param .b64 __assertfail_param_1,\n",
    ".param .b32 __assertfail_param_2,\n.param .b64 __assertfail_param_3,\n.param .b64 __assertfail_param_4\n)\n;\n",
    ".global .align 1 .b8 msg[2] = {48, 0};\n",
    ".visible .entry trap_k(.param .u64 out)\n{\ntrap;\nret;\n}\n",
    ".visible .entry illegal_k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n",
    "mov.u64 %rd1, 16;\nmov.u32 %r1, 1;\nst.global.u32 [%rd1], %r1;\nret;\n}\n",
    ".visible .entry misaligned_k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n",
    "ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, 1;\nst.global.u32 [%rd2+2], %r1;\nret;\n}\n",
    ".visible .entry assert_k(.param .u64 out)\n{\n.reg .b64 %rd<3>;\n",
    "mov.u64 %rd1, msg;\ncvta.global.u64 %rd2, %rd1;\n",
    "{\n.param .b64 p0;\n.param .b64 p1;\n.param .b32 p2;\n.param .b64 p3;\n.param .b64 p4;\n",
    "st.param.b64 [p0], %rd2;\nst.param.b64 [p1], %rd2;\nst.param.b32 [p2], 1;\nst.param.b64 [p3], %rd2;\n",
    "st.param.b64 [p4], 1;\ncall.uni __assertfail, (p0, p1, p2, p3, p4);\n}\nret;\n}\n",
    ".visible .entry fine_k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n",
    "ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, 7;\nst.global.u32 [%rd2], %r1;\nret;\n}\n",
    "\0"
);

/// The fault a case makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// `trap_k` launched.
    Trap,
    /// `illegal_k` launched.
    Illegal,
    /// `misaligned_k` launched.
    Misaligned,
    /// `assert_k` launched.
    Assert,
    /// A graph of one `trap_k` kernel node, launched.
    Graph,
}

/// What a case has once the fault's work is launched on its stream: the stream, an
/// allocation and an event made before the fault, `fine_k`, and the launch's status.
struct Faulted {
    s: CUstream,
    d: CUdeviceptr,
    ev: CUevent,
    fine: CUfunction,
    launch: CUresult,
}

/// The kernel `name` of a module of [`FAULTS_PTX`] loaded in the current context.
fn kernel(e: &Env, name: &CStr) -> Result<CUfunction, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated PTX image and a valid out-pointer.
    made("cuModuleLoadData", unsafe { e.p.cuModuleLoadData(&mut m, FAULTS_PTX.as_ptr().cast()) }, ())?;
    let mut f = std::ptr::null_mut();
    // SAFETY: a live module, a NUL-terminated name, a valid out-pointer.
    made("cuModuleGetFunction", unsafe { e.p.cuModuleGetFunction(&mut f, m, name.as_ptr()) }, f)
}

/// Launches `f(out)` over one block of 32 threads on `s`.
///
/// # Safety
/// `f` and `s` are live; `out` is 64 bytes of device memory (or a fault on purpose).
unsafe fn launch(e: &Env, f: CUfunction, s: CUstream, out: CUdeviceptr) -> CUresult {
    let mut out = out;
    let mut args: [*mut c_void; 1] = [(&raw mut out).cast()];
    // SAFETY: one argument, matching the kernel's `.u64` parameter; it outlives the call.
    unsafe { e.p.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args.as_mut_ptr(), std::ptr::null_mut()) }
}

/// Launches a graph of one kernel node `f(out)` (one block of 32 threads) on `s`.
fn launch_graph(e: &Env, f: CUfunction, s: CUstream, out: CUdeviceptr) -> Result<CUresult, Out> {
    let g = graph(e)?;
    let mut out = out;
    let mut args: [*mut c_void; 1] = [(&raw mut out).cast()];
    let p = CUDA_KERNEL_NODE_PARAMS {
        func: f,
        gridDimX: 1,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: 32,
        blockDimY: 1,
        blockDimZ: 1,
        kernelParams: args.as_mut_ptr(),
        ..Default::default()
    };
    let mut n = std::ptr::null_mut();
    // SAFETY: a live graph, valid parameters whose argument outlives the call.
    made("cuGraphAddKernelNode", unsafe { e.p.cuGraphAddKernelNode(&mut n, g, std::ptr::null(), 0, &p) }, ())?;
    let x = instantiate(e, g)?;
    // SAFETY: a live executable graph and stream.
    Ok(unsafe { e.p.cuGraphLaunch(x, s) })
}

/// Sets up a stream, an allocation and an event, then launches the work of `fault`.
fn fault(e: &Env, fault: Fault) -> Result<Faulted, Out> {
    let s = stream(e)?;
    let d = alloc(e, 64)?;
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    made("cuEventCreate", unsafe { e.p.cuEventCreate(&mut ev, 0) }, ())?;
    let fine = kernel(e, c"fine_k")?;
    let name = match fault {
        Fault::Trap | Fault::Graph => c"trap_k",
        Fault::Illegal => c"illegal_k",
        Fault::Misaligned => c"misaligned_k",
        Fault::Assert => c"assert_k",
    };
    let f = kernel(e, name)?;
    let launch = match fault {
        Fault::Graph => launch_graph(e, f, s, d)?,
        // SAFETY: a live function and stream, 64 bytes at `d`.
        _ => unsafe { launch(e, f, s, d) },
    };
    Ok(Faulted { s, d, ev, fine, launch })
}

/// [`fault`], then `cuStreamSynchronize` (its status is field `sync`).
fn fault_and_sync(e: &Env, kind: Fault) -> Result<(Faulted, CUresult), Out> {
    let f = fault(e, kind)?;
    // SAFETY: the case's live stream.
    let sync = unsafe { e.p.cuStreamSynchronize(f.s) };
    Ok((f, sync))
}

/// The first synchronising call is `cuStreamSynchronize`; a second one after it.
fn stream_synchronize(e: &Env, kind: Fault) -> Out {
    let (f, sync) = with!(fault_and_sync(e, kind));
    // SAFETY: the case's live stream.
    let again = unsafe { e.p.cuStreamSynchronize(f.s) };
    Out::of(sync).eq("launch", f.launch).eq("again", again)
}

/// The first synchronising call is `cuCtxSynchronize`.
fn ctx_synchronize(e: &Env, kind: Fault) -> Out {
    let f = with!(fault(e, kind));
    // SAFETY: plain calls.
    let (sync, again) = unsafe { (e.p.cuCtxSynchronize(), e.p.cuCtxSynchronize()) };
    Out::of(sync).eq("launch", f.launch).eq("again", again)
}

/// An event recorded after the launch, then `cuEventSynchronize` on it.
fn event_synchronize(e: &Env, kind: Fault) -> Out {
    let f = with!(fault(e, kind));
    // SAFETY: the case's live event and stream.
    let record = unsafe { e.p.cuEventRecord(f.ev, f.s) };
    // SAFETY: the case's live event.
    let sync = unsafe { e.p.cuEventSynchronize(f.ev) };
    Out::of(sync).eq("launch", f.launch).info("record", record)
}

/// A blocking copy (`cuMemcpyDtoH`, on the legacy stream: it waits for the case's
/// blocking stream) after the launch.
fn blocking_copy(e: &Env, kind: Fault) -> Out {
    let f = with!(fault(e, kind));
    let mut host = [0u8; 4];
    // SAFETY: 4 bytes of host memory, 64 of device memory.
    let st = unsafe { e.p.cuMemcpyDtoH(host.as_mut_ptr().cast(), f.d, 4) };
    Out::of(st).eq("launch", f.launch)
}

/// `cuStreamQuery` until it stops answering NOT_READY (at most about 5 s).
fn stream_query(e: &Env, kind: Fault) -> Out {
    let f = with!(fault(e, kind));
    let mut polls = 0u32;
    let st = loop {
        polls += 1;
        // SAFETY: the case's live stream.
        match unsafe { e.p.cuStreamQuery(f.s) } {
            CUresult::CUDA_ERROR_NOT_READY if polls < 5000 => std::thread::sleep(std::time::Duration::from_millis(1)),
            st => break st,
        }
    };
    Out::of(st).eq("launch", f.launch).info("polls", polls)
}

/// After the fault and a synchronisation, what the other calls answer, in this order.
fn after(e: &Env, kind: Fault) -> Out {
    let (f, sync) = with!(fault_and_sync(e, kind));
    let mut out = Out::of(sync).eq("launch", f.launch);
    // SAFETY: the case's live handles and valid out-pointers throughout.
    unsafe {
        out = out.eq("stream_query", e.p.cuStreamQuery(f.s));
        out = out.eq("ctx_synchronize", e.p.cuCtxSynchronize());
        let mut d = 0;
        out = out.eq("mem_alloc", e.p.cuMemAlloc(&mut d, 16));
        let host = [1u8; 4];
        out = out.eq("memcpy_htod", e.p.cuMemcpyHtoD(f.d, host.as_ptr().cast(), 4));
        let mut m = std::ptr::null_mut();
        out = out.eq("module_load", e.p.cuModuleLoadData(&mut m, FAULTS_PTX.as_ptr().cast()));
        out = out.eq("event_record", e.p.cuEventRecord(f.ev, f.s));
        out = out.eq("event_query", e.p.cuEventQuery(f.ev));
        out = out.eq("event_synchronize", e.p.cuEventSynchronize(f.ev));
        out = out.eq("launch_fine", launch(e, f.fine, f.s, f.d));
        let mut s2 = std::ptr::null_mut();
        out = out.eq("stream_create", e.p.cuStreamCreate(&mut s2, 0));
        let mut ev2 = std::ptr::null_mut();
        out = out.eq("event_create", e.p.cuEventCreate(&mut ev2, 0));
        let mut dev = -1;
        out = out.eq("ctx_get_device", e.p.cuCtxGetDevice(&mut dev)).eq("device", dev);
        let mut cur = std::ptr::null_mut();
        let st = e.p.cuCtxGetCurrent(&mut cur);
        out = out.eq("ctx_get_current", st).eq("current_is_ctx", cur == e.ctx);
        let mut sms = -1;
        let attr = CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
        out = out.eq("device_get_attribute", e.p.cuDeviceGetAttribute(&mut sms, attr, e.dev)).eq("sms", sms);
        let mut name = std::ptr::null();
        out = out.eq("get_error_name", e.p.cuGetErrorName(sync, &mut name));
        let mut api = 0;
        out = out.eq("ctx_get_api_version", e.p.cuCtxGetApiVersion(e.ctx, &mut api));
        let (mut free, mut total) = (0, 0);
        out = out.eq("mem_get_info", e.p.cuMemGetInfo(&mut free, &mut total));
        out = out.eq("stream_destroy", e.p.cuStreamDestroy(f.s));
        out = out.eq("event_destroy", e.p.cuEventDestroy(f.ev));
        out = out.eq("mem_free", e.p.cuMemFree(f.d));
    }
    out
}

/// After the fault and a synchronisation: popping the faulted context and pushing it back.
fn push_pop(e: &Env, kind: Fault) -> Out {
    let (f, sync) = with!(fault_and_sync(e, kind));
    let mut popped = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the case's context.
    unsafe {
        let pop = e.p.cuCtxPopCurrent(&mut popped);
        let push = e.p.cuCtxPushCurrent(e.ctx);
        let mut d = 0;
        let alloc = e.p.cuMemAlloc(&mut d, 16);
        Out::of(pop)
            .eq("launch", f.launch)
            .eq("sync", sync)
            .eq("popped_is_ctx", popped == e.ctx)
            .eq("push", push)
            .eq("mem_alloc", alloc)
    }
}

/// After the fault and a synchronisation: a new context (`cuCtxCreate`), work in it, and
/// the faulted context again once it is destroyed.
fn new_context(e: &Env, kind: Fault) -> Out {
    let (f, sync) = with!(fault_and_sync(e, kind));
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointers; handles of the case.
    unsafe {
        let create = e.p.cuCtxCreate_v3020(&mut c, 0, e.dev);
        let mut out = Out::of(create).eq("launch", f.launch).eq("sync", sync);
        if create != CUresult::CUDA_SUCCESS {
            return out;
        }
        let mut d = 0;
        out = out.eq("mem_alloc", e.p.cuMemAlloc(&mut d, 16));
        let fine = kernel(e, c"fine_k");
        out = out.eq("module_load", fine.is_ok());
        if let Ok(fine) = fine {
            out = out.eq("launch_fine", launch(e, fine, std::ptr::null_mut(), d));
        }
        out = out.eq("ctx_synchronize", e.p.cuCtxSynchronize());
        out = out.eq("ctx_destroy", e.p.cuCtxDestroy(c));
        // The faulted context is current again (the created one was popped).
        out.eq("faulted_ctx_synchronize", e.p.cuCtxSynchronize())
    }
}

/// After the fault and a synchronisation: `cuDevicePrimaryCtxReset`, then allocations
/// before and after the primary context is retained and made current again.
fn primary_reset(e: &Env, kind: Fault) -> Out {
    let (f, sync) = with!(fault_and_sync(e, kind));
    // SAFETY: valid out-pointers; the case's device.
    unsafe {
        let reset = e.p.cuDevicePrimaryCtxReset(e.dev);
        let mut out = Out::of(reset).eq("launch", f.launch).eq("sync", sync);
        let mut d = 0;
        out = out.eq("mem_alloc_before_retain", e.p.cuMemAlloc(&mut d, 16));
        let mut c = std::ptr::null_mut();
        out = out.eq("retain", e.p.cuDevicePrimaryCtxRetain(&mut c, e.dev)).info("same_handle", c == e.ctx);
        out = out.eq("set_current", e.p.cuCtxSetCurrent(c));
        out = out.eq("mem_alloc", e.p.cuMemAlloc(&mut d, 16));
        let fine = kernel(e, c"fine_k");
        out = out.eq("module_load", fine.is_ok());
        if let Ok(fine) = fine {
            out = out.eq("launch_fine", launch(e, fine, std::ptr::null_mut(), d));
        }
        out.eq("ctx_synchronize", e.p.cuCtxSynchronize())
    }
}

/// The fault in a created context: its synchronisation, destroying it, and the primary
/// context afterwards.
fn created_context_destroy(e: &Env) -> Out {
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointers; handles of the case.
    unsafe {
        step!(e.p.cuCtxCreate_v3020(&mut c, 0, e.dev));
        let (f, sync) = with!(fault_and_sync(e, Fault::Trap));
        let destroy = e.p.cuCtxDestroy(c);
        let mut cur = std::ptr::null_mut();
        let st = e.p.cuCtxGetCurrent(&mut cur);
        let mut out = Out::of(destroy)
            .eq("launch", f.launch)
            .eq("sync", sync)
            .eq("ctx_get_current", st)
            .eq("current_is_primary", cur == e.ctx);
        out = out.eq("set_primary", e.p.cuCtxSetCurrent(e.ctx));
        let mut d = 0;
        out = out.eq("mem_alloc", e.p.cuMemAlloc(&mut d, 16));
        out.eq("ctx_synchronize", e.p.cuCtxSynchronize())
    }
}

/// A fault in the primary context, then a created context: is it sticky there too?
fn other_context_faults_alone(e: &Env) -> Out {
    let mut c = std::ptr::null_mut();
    // SAFETY: valid out-pointers; handles of the case.
    unsafe {
        step!(e.p.cuCtxCreate_v3020(&mut c, 0, e.dev));
        let mut d = 0;
        step!(e.p.cuMemAlloc(&mut d, 16));
        step!(e.p.cuCtxSetCurrent(e.ctx));
        let (f, sync) = with!(fault_and_sync(e, Fault::Trap));
        let set = e.p.cuCtxSetCurrent(c);
        let host = [1u8; 4];
        let copy = e.p.cuMemcpyHtoD(d, host.as_ptr().cast(), 4);
        Out::of(copy)
            .eq("launch", f.launch)
            .eq("sync", sync)
            .eq("set_created", set)
            .eq("ctx_synchronize", e.p.cuCtxSynchronize())
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("faults.trap_stream_synchronize", Ctx, |e| { stream_synchronize(e, Fault::Trap) }),
        case!("faults.trap_ctx_synchronize", Ctx, |e| { ctx_synchronize(e, Fault::Trap) }),
        case!("faults.trap_event_synchronize", Ctx, |e| { event_synchronize(e, Fault::Trap) }),
        case!("faults.trap_blocking_copy", Ctx, |e| { blocking_copy(e, Fault::Trap) }),
        case!("faults.trap_stream_query", Ctx, |e| { stream_query(e, Fault::Trap) }),
        case!("faults.trap_after", Ctx, |e| { after(e, Fault::Trap) }),
        case!("faults.trap_push_pop", Ctx, |e| { push_pop(e, Fault::Trap) }),
        case!("faults.trap_new_context", Ctx, |e| { new_context(e, Fault::Trap) }),
        case!("faults.trap_primary_reset", Ctx, |e| { primary_reset(e, Fault::Trap) }),
        case!("faults.trap_created_context_destroy", Ctx, |e| { created_context_destroy(e) }),
        case!("faults.trap_other_context", Ctx, |e| { other_context_faults_alone(e) }),
        case!("faults.illegal_address_stream_synchronize", Ctx, |e| { stream_synchronize(e, Fault::Illegal) }),
        case!("faults.illegal_address_ctx_synchronize", Ctx, |e| { ctx_synchronize(e, Fault::Illegal) }),
        case!("faults.illegal_address_event_synchronize", Ctx, |e| { event_synchronize(e, Fault::Illegal) }),
        case!("faults.illegal_address_blocking_copy", Ctx, |e| { blocking_copy(e, Fault::Illegal) }),
        case!("faults.illegal_address_stream_query", Ctx, |e| { stream_query(e, Fault::Illegal) }),
        case!("faults.illegal_address_after", Ctx, |e| { after(e, Fault::Illegal) }),
        case!("faults.illegal_address_push_pop", Ctx, |e| { push_pop(e, Fault::Illegal) }),
        case!("faults.illegal_address_new_context", Ctx, |e| { new_context(e, Fault::Illegal) }),
        case!("faults.illegal_address_primary_reset", Ctx, |e| { primary_reset(e, Fault::Illegal) }),
        case!("faults.graph_stream_synchronize", Ctx, |e| { stream_synchronize(e, Fault::Graph) }),
        case!("faults.graph_ctx_synchronize", Ctx, |e| { ctx_synchronize(e, Fault::Graph) }),
        case!("faults.graph_event_synchronize", Ctx, |e| { event_synchronize(e, Fault::Graph) }),
        case!("faults.graph_blocking_copy", Ctx, |e| { blocking_copy(e, Fault::Graph) }),
        case!("faults.graph_stream_query", Ctx, |e| { stream_query(e, Fault::Graph) }),
        case!("faults.graph_after", Ctx, |e| { after(e, Fault::Graph) }),
        case!("faults.graph_push_pop", Ctx, |e| { push_pop(e, Fault::Graph) }),
        case!("faults.graph_new_context", Ctx, |e| { new_context(e, Fault::Graph) }),
        case!("faults.graph_primary_reset", Ctx, |e| { primary_reset(e, Fault::Graph) }),
        case!("faults.misaligned_stream_synchronize", Ctx, |e| { stream_synchronize(e, Fault::Misaligned) }),
        case!("faults.misaligned_after", Ctx, |e| { after(e, Fault::Misaligned) }),
        case!("faults.assert_stream_synchronize", Ctx, |e| { stream_synchronize(e, Fault::Assert) }),
        case!("faults.assert_after", Ctx, |e| { after(e, Fault::Assert) }),
    ]
}
