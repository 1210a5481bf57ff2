//! A stand-in CUDA driver for tests without a GPU.
//!
//! Built as a `cdylib` it is a drop-in `libcuda.so.1` (its soname; copy or symlink
//! `libcudrv_standin.so` to that name, and to `libcuda.so` to link with `-lcuda`): it
//! exports every function name `cuda.h` 13.5 declares ([`exported_symbols`]: `sym`,
//! `sym_v2`, ..., the `_ptds`/`_ptsz` forms), each with the signature of the variant the
//! real driver binds it to, so C programs, programs linked with `-lcuda` and other
//! bindings load it as well as cudrv. As an `rlib` it gives an in-process
//! `cuGetProcAddress` for [`cudrv::Driver::from_get_proc_address`].
//!
//! In a program's tests, one line makes it the driver `cudrv::init()` loads:
//! [`install`] (idempotent, from any test, on any thread).
//!
//! ```
//! cudrv_standin::install()?;
//! let ctx = cudrv::init()?.device(0)?.primary_context()?;
//! let x = cudrv::DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0])?;
//! assert_eq!(x.to_vec()?, [1.0, 2.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - Each emulated driver is a world of its own ([`StandIn`]): [`StandIn::isolated`] gives a
//!   test a driver no other test in the process sees (its objects, faults and ledger), and
//!   [`StandIn::reset`] returns a world to the state of a new process. The exported symbols,
//!   [`install`] and the free functions use the default world.
//! - Emulates any driver version from 11.3 to 13.5 ([`StandIn::new`], or
//!   `CUDRV_STANDIN_VERSION=12.4` for the exported symbols), answering
//!   `cuGetProcAddress`/`_v2` as `docs/driver-facts.md` describes, with the set of
//!   symbols of each version taken from cudrv's generated table.
//! - Emulates, in host memory: cuInit, cuDriverGetVersion, devices (count, name, memory,
//!   attributes, UUID; one by default, `CUDRV_STANDIN_DEVICES=2` or [`set_device_count`]
//!   for more, up to 8), error names and strings, primary contexts, created contexts and
//!   each thread's context stack, streams and host functions, events, device memory,
//!   copies and memsets, pinned host memory, registration of the program's host memory
//!   (`cuMemHostRegister`), pitched allocations, CUDA arrays, 2D/3D copies between host
//!   memory, device memory and arrays, texture and surface objects (read by host kernels
//!   with [`Thread::texture_fetch`]), virtual memory management (reservations, physical
//!   allocations, mappings with per-device access, POSIX file-descriptor export and
//!   import), memory pools with IPC export and import,
//!   libraries, modules and kernels over a fake image format ([`fake_image`]) and over
//!   PTX with host-implemented kernels (below), `cuLaunchKernel` and `cuLaunchKernelEx`,
//!   the linker (fake images only), graphs of empty, host, kernel, memcpy and memset
//!   nodes, stream capture (below), user objects, and
//!   between devices: `cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`,
//!   `cuCtxEnablePeerAccess`/`cuCtxDisablePeerAccess` (per context pair: 704 when enabled
//!   twice, 705 when not enabled, CUDA_ERROR_INVALID_DEVICE toward the current context's
//!   own device), `cuMemcpyPeer`/`cuMemcpyPeerAsync`, and events recorded on one device
//!   and waited for on another; and the queries `docs/driver-facts.md` ("Edge cases")
//!   lists: primary context state and flags, context API version, flags and limits,
//!   stream priorities and flags, PCI bus ids, pointer attributes, mapped pinned memory
//!   (its device pointer is its host address), function and kernel attributes, pool
//!   attributes and each device's current pool, module globals of fake images, and
//!   `cuLaunchCooperativeKernel`. Every other variant has a generated entry point with its
//!   exact signature that returns `CUDA_ERROR_NOT_SUPPORTED`.
//! - Stream order as on a GPU: every stream-ordered operation (async copies and memsets,
//!   kernel launches, stream-ordered allocation and free, peer copies, event records and
//!   waits, host functions, graph launches) runs after the work queued before it on its
//!   stream. Device work that finds its stream idle is done at once on the calling thread
//!   (its failure returned by the call); behind pending work (a blocked host function) it
//!   is queued and done later on the stream's driver thread, never under a stand-in lock,
//!   and a failure then leaves the context sticky-failed, reported at the next
//!   synchronisation. Arguments are checked when the call is made (INVALID_VALUE there).
//!   The legacy default stream waits for the context's blocking streams (not non-blocking
//!   ones) and they for it; synchronous calls (`cuMemcpy`, `cuMemsetD8`, ...) run on it.
//!   Asynchronous copies to or from pageable host memory are done before the call returns,
//!   after the stream's earlier work, as a real driver does. A stream-ordered free gives
//!   its range back to the pool when the stream reaches it, and the pool's next allocation
//!   of that size reuses the address. Synchronising a stream, an event or the context, and
//!   querying them, reflect the queued work; user object destructors run on a driver
//!   thread.
//! - Stream capture (`docs/driver-facts.md`): `cuStreamBeginCapture` (every mode, and
//!   `…ToGraph`) on a created stream; kernel launches, async copies and memsets, and host
//!   functions are then recorded as graph nodes, each after the stream's previous work,
//!   not done; an event recorded in a capture forks another stream into it through
//!   `cuStreamWaitEvent`, and joins it back. `cuStreamEndCapture` returns the graph
//!   (ILLEGAL_STATE when not capturing, UNJOINED for a fork not joined back);
//!   `cuStreamIsCapturing` and `cuStreamGetCaptureInfo` say 0/1/2 with the capture's id,
//!   graph and dependencies. `cuStreamQuery`, `cuStreamSynchronize` and `cuCtxSynchronize`
//!   during a capture answer STREAM_CAPTURE_UNSUPPORTED and invalidate it (the end then
//!   answers INVALIDATED and no graph), as do calls it cannot record (below).
//! - Contexts die as on the real driver (`docs/driver-facts.md`, "Edge cases on the real
//!   driver"): a created one at `cuCtxDestroy`, a primary one at its last
//!   `cuDevicePrimaryCtxRelease` or at `cuDevicePrimaryCtxReset` (which keeps the retain
//!   count); the next retain makes a fresh primary context with a new handle. A destroyed
//!   context can still be made current (`cuCtxSetCurrent`, `cuCtxPushCurrent`), and every
//!   use of it (work while it is current, work on its streams and events, destroying it
//!   again, `cuCtxPopCurrent` while it is on top, which leaves it there) answers
//!   CUDA_ERROR_CONTEXT_IS_DESTROYED.
//! - Inside a program's callback (a host function, a graph host node, a user object
//!   destructor) every entry answers CUDA_ERROR_NOT_PERMITTED, except `cuGetProcAddress`,
//!   `cuDriverGetVersion`, `cuGetErrorName` and `cuGetErrorString`.
//! - A ledger of each world's live allocations and handles, double frees, uses after free,
//!   double destroys and duplicate IPC imports ([`ledger`] for the default world,
//!   [`StandIn::ledger`] for a stand-in's own).
//! - A sanitizer (`docs/sanitizer.md`): [`ENV_SANITIZE`] (`CUDRV_STANDIN_SANITIZE=races,init`)
//!   reports operations that touch the same bytes with nothing in CUDA's ordering rules
//!   between them, and reads of device memory never written, on stderr and as JSON lines
//!   in `CUDRV_STANDIN_SANITIZE_LOG`, and makes the process exit with status 66 after a
//!   summary; `schedule=SEED` delays each stream's work adversarially.
//!   [`StandIn::sanitize`] and [`StandIn::sanitizer_reports`] do the same for one
//!   stand-in in a test.
//! - A kernel of a fake image named [`FAULT_KERNEL`] makes its context sticky-failed:
//!   every later call that uses the context returns CUDA_ERROR_ILLEGAL_ADDRESS until it
//!   is destroyed (a primary context: reset or released for the last time).
//! - [`shutdown`] makes every entry return CUDA_ERROR_DEINITIALIZED, as during process
//!   teardown; [`restart`] undoes it.
//! - Fault injection ([`faults`]): any entry can be made to return a chosen status, and a
//!   context restoration can be made to fail ([`faults::fail_next_context_restore`]).
//! - No entry point panics: the calling thread's state (its context stack) stays usable
//!   while the thread's thread-locals are destroyed at its exit; a thread that calls in
//!   from another thread-local's destructor after the stand-in's own is gone starts again
//!   with no current context, as a new thread does.
//!
//! # Kernels: the program's own PTX, or host implementations
//!
//! A program's kernels run on the stand-in, so a driver-API program that launches kernels
//! can be tested without a GPU.
//!
//! - `cuModuleLoadData`, `cuModuleLoadDataEx`, `cuLibraryLoadData` and `cuLinkAddData`
//!   accept PTX text (starting, after comments, with `.version`, and having a `.target`
//!   directive). Its kernels run on the PTX executor (the `cudrv-ptx` crate: what NVRTC
//!   and nvcc emit for ordinary CUDA C++ kernels, PTX ISA up to 9.0), with results as the
//!   H200 computes them (see `ptx/README.md` for what it runs and its deliberate
//!   differences). A `.version` newer than the emulated driver's PTX ISA (11.3: 7.3, ...,
//!   12.4: 8.4, 12.5 and 12.6: 8.5, 12.8: 8.7, 12.9: 8.8, 13.x: 9.x) is
//!   CUDA_ERROR_UNSUPPORTED_PTX_VERSION, a `.target` above the device's `sm_90`
//!   CUDA_ERROR_INVALID_PTX; PTX the executor cannot load (an instruction it does not run:
//!   tensor cores, `cp.async`, textures, ...; a syntax error) is CUDA_ERROR_INVALID_PTX,
//!   with a JIT error log naming the line and the instruction.
//! - A kernel whose name has a host implementation registered ([`register_kernel`]) runs
//!   that instead (a registered name wins; its parameter sizes must match the entry's
//!   `.param` declarations, else CUDA_ERROR_INVALID_IMAGE). A module binds the
//!   implementations registered when it is loaded. None is registered by default.
//! - Module globals (`__device__`, `__constant__`) are device allocations with their
//!   initialisers, made when `cuModuleGetGlobal` asks for them or a kernel of the module
//!   is launched; copies and kernels reach the same bytes.
//! - `cuLaunchKernel`, `cuLaunchKernelEx` and kernel graph nodes run in stream order. A
//!   PTX kernel's blocks run in parallel on the host's cores. Its faults arrive as on a
//!   GPU: the launch succeeds, the context is left sticky-failed, and the next
//!   synchronising call and every later call that uses the context return the fault: an
//!   access outside every live allocation CUDA_ERROR_ILLEGAL_ADDRESS, a misaligned one
//!   CUDA_ERROR_MISALIGNED_ADDRESS, `trap` CUDA_ERROR_LAUNCH_FAILED, a failed `assert`
//!   CUDA_ERROR_ASSERT, calls past the context's stack size CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, and a
//!   barrier that the block's threads never all reach CUDA_ERROR_LAUNCH_FAILED (a
//!   deliberate difference: the GPU hangs). `printf` writes to standard output.
//! - A host implementation runs once per thread of the grid, sequentially, on the thread
//!   that runs the launch. The parameters come from `kernelParams` (a pointer to each
//!   value) or `extra` (`CU_LAUNCH_PARAM_BUFFER_POINTER`/`_SIZE`, each value at its
//!   natural alignment).
//! - Device memory is host memory. An implementation reaches it only through its
//!   [`Thread`] ([`Thread::load`], [`Thread::store`], [`Thread::read`],
//!   [`Thread::write`]), which checks every access against the live allocations: an
//!   access outside them (past an end, in freed memory) is not made, and the launch fails
//!   with CUDA_ERROR_ILLEGAL_ADDRESS, leaving the context sticky-failed as a faulting
//!   kernel does. An implementation that fails ([`KernelError::Failed`]) or panics fails
//!   the launch with CUDA_ERROR_LAUNCH_FAILED, sticky too.
//!
//! In the same process (the `rlib`, with [`StandIn`] or
//! [`cudrv::Driver::from_get_proc_address`]), register with [`register_kernel`]:
//!
//! ```
//! use cudrv_standin::{register_kernel, Param, StandIn};
//!
//! // `__global__ void add_one(unsigned* x, int n)`
//! register_kernel("add_one", &[Param::Ptr, Param::I32], |t| {
//!     let (x, n) = (t.ptr(0)?, t.param::<i32>(1)?);
//!     let i = t.global_x();
//!     if i < n as u64 {
//!         t.store::<u32>(x, i, t.load::<u32>(x, i)? + 1)?;
//!     }
//!     Ok(())
//! });
//!
//! let ptx = c".version 8.0\n.target sm_90\n.address_size 64\n\
//!     .visible .entry add_one(.param .u64 x, .param .u32 n)\n{\n\tret;\n}\n";
//! let d = StandIn::new(13050).unwrap().load(Default::default()).unwrap();
//! let p = d.p();
//! // SAFETY (of the example): valid out-pointers and parameters throughout.
//! unsafe {
//!     let (mut ctx, mut m, mut f, mut x) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
//!     assert_eq!(p.cuInit(0).0, 0);
//!     assert_eq!(p.cuCtxCreate(&mut ctx, std::ptr::null_mut(), 0, 0).0, 0);
//!     assert_eq!(p.cuModuleLoadData(&mut m, ptx.as_ptr().cast()).0, 0);
//!     assert_eq!(p.cuModuleGetFunction(&mut f, m, c"add_one".as_ptr()).0, 0);
//!     assert_eq!(p.cuMemAlloc(&mut x, 400).0, 0);
//!     let n = 100i32;
//!     let mut args = [(&x as *const u64).cast_mut().cast(), (&n as *const i32).cast_mut().cast()];
//!     let (stream, extra) = (std::ptr::null_mut(), std::ptr::null_mut());
//!     assert_eq!(p.cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, stream, args.as_mut_ptr(), extra).0, 0);
//!     let mut out = [0u32; 100];
//!     assert_eq!(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), x, 400).0, 0);
//!     assert!(out.iter().all(|&v| v == 1));
//!     assert_eq!(p.cuCtxDestroy(ctx).0, 0);
//! }
//! ```
//!
//! When `CUDRV_LIBCUDA` names the `cdylib` (as in each cell of `cudrv-matrix --stand-in`),
//! [`register_kernel`] registers the kernel with that library as well, so it runs whether
//! cudrv's driver is the in-process stand-in ([`install`]) or the library
//! (`cudrv::init()`): see [`register_kernel`].
//!
//! A program that loads the `cdylib` as `libcuda.so.1` (its registry is its own, apart from
//! the in-process stand-in's) looks up the exported [`cudrv_standin_register_kernel`] with
//! `dlsym` and registers C functions:
//!
//! ```c
//! typedef struct cudrv_standin_thread {
//!     unsigned grid_dim[3], block_dim[3], block_idx[3], thread_idx[3];
//!     unsigned num_params;
//!     const void *const *params;  /* params[i]: the bytes of parameter i */
//!     CUresult (*read)(const struct cudrv_standin_thread *t, CUdeviceptr src, void *dst, size_t n);
//!     CUresult (*write)(const struct cudrv_standin_thread *t, CUdeviceptr dst, const void *src, size_t n);
//!     const void *reserved;
//! } cudrv_standin_thread;
//! typedef CUresult (*cudrv_standin_kernel)(const cudrv_standin_thread *t, void *user_data);
//! CUresult cudrv_standin_register_kernel(const char *name, const size_t *param_sizes,
//!                                        unsigned num_params, cudrv_standin_kernel kernel,
//!                                        void *user_data);
//!
//! static CUresult add_one(const cudrv_standin_thread *t, void *user_data) {
//!     CUdeviceptr x = *(const CUdeviceptr *)t->params[0];
//!     int n = *(const int *)t->params[1];
//!     unsigned i = t->block_idx[0] * t->block_dim[0] + t->thread_idx[0], v;
//!     if (i >= (unsigned)n) return CUDA_SUCCESS;
//!     CUresult r = t->read(t, x + 4 * i, &v, 4);   /* CUDA_ERROR_ILLEGAL_ADDRESS if out of range */
//!     if (r != CUDA_SUCCESS) return r;
//!     v += 1;
//!     return t->write(t, x + 4 * i, &v, 4);
//! }
//! /* after dlopen("libcuda.so.1") as h: */
//! size_t sizes[2] = {8, 4};
//! ((CUresult (*)(const char *, const size_t *, unsigned, cudrv_standin_kernel, void *))
//!     dlsym(h, "cudrv_standin_register_kernel"))("add_one", sizes, 2, add_one, NULL);
//! ```
//!
//! A null `kernel` removes a name's implementation. A C kernel's return value other than
//! CUDA_SUCCESS is its fault, and a refused access one whatever the kernel returns: as a
//! PTX kernel's fault, it leaves the context sticky-failed for the next synchronising call.
//!
//! # Beyond cuda.h
//!
//! The cdylib also exports, as the real `libcuda.so.1` does, the profiler's entry points,
//! the OpenGL, EGL and VDPAU interop ones and the driver's private names
//! ([`exported_symbols_beyond_cuda_h`]). There is no profiler and no display: each answers
//! what the H200's driver answered on a machine with no display (the profiler's start and
//! stop succeed with a context current and do nothing), and the driver's private export
//! tables are not emulated, so the CUDA runtime library does not run on the stand-in.
//! `docs/stand-in.md` ("A drop-in libcuda.so.1") has the answers.
//!
//! # Deliberate differences from the real driver
//!
//! Where a real driver crashes or hangs, or answers from the freed state of a dangling
//! handle, the stand-in answers with the closest error, so that a test of a program that
//! does this fails instead of dying; a few features it does not emulate are reported
//! absent. These are the only cases of the conformance suite (`conformance/`, `docs/stand-in.md`) where its answers
//! differ from the real driver's; `conformance/deliberate-differences.txt` lists them by
//! case.
//! - Any use of a destroyed stream or event (a query, a synchronisation, work queued on
//!   it, a launch on it, destroying it again): CUDA_ERROR_INVALID_HANDLE (the real driver
//!   crashes). A stream of a primary context released for the last time:
//!   CUDA_ERROR_CONTEXT_IS_DESTROYED (crash).
//! - `cuCtxGetDevice` with a destroyed context current: CUDA_ERROR_CONTEXT_IS_DESTROYED
//!   (crash).
//! - NULL out-pointers to `cuGetErrorName`/`cuGetErrorString`, a NULL symbol or function
//!   out-pointer to `cuGetProcAddress`, and `cuDeviceGetName` with length 0:
//!   CUDA_ERROR_INVALID_VALUE (crash). A negative length writes the whole name, as on the
//!   real driver.
//! - A host function that synchronises its own stream gets CUDA_ERROR_NOT_PERMITTED, as
//!   every driver call from a callback does (the real driver never returns).
//! - Destroying a destroyed array, or a 2D copy into one: CUDA_ERROR_INVALID_HANDLE
//!   (crash).
//! - `cuGraphAddKernelNode`, `cuGraphKernelNodeSetParams` and
//!   `cuGraphExecKernelNodeSetParams` with no context current: CUDA_ERROR_INVALID_CONTEXT
//!   (crash, although the parameters name the function).
//! - `cuVDPAUCtxCreate` with a NULL `VdpGetProcAddress`: CUDA_ERROR_INVALID_VALUE; the
//!   private `cuEGLApiInit`: CUDA_ERROR_NOT_SUPPORTED (both crash; outside the suite, in
//!   `standin/tests/beyond_cuda_h.rs`).
//! - An allocation node's access descriptors NULL with a count, a graph node destroyed
//!   twice: CUDA_ERROR_INVALID_VALUE (crash).
//! - Handles used after they were destroyed or released, which the H200 does not check
//!   and answers from freed state (a destroyed pool set as current or asked for its
//!   access, a released memory handle's properties, a destroyed node's type, a destroyed
//!   event given to an event node): the stand-in reports the dangling handle
//!   (CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_INVALID_HANDLE).
//! - Memory the stand-in does not have: host and managed memory pools
//!   (`cuMemGetMemPool` answers CUDA_ERROR_NOT_SUPPORTED for them) and dma-buf
//!   (`cuMemGetHandleForAddressRange`: CUDA_ERROR_NOT_SUPPORTED and the descriptor -1);
//!   the device attributes that announce them read 0.
//!
//! One more, outside the conformance suite (which calls through `cuGetProcAddress`): the
//! `cdylib` exports every name of the 13.5 header whatever version it emulates. On a real
//! driver a function newer than its version is not exported at all (`dlsym` fails, a
//! program linked with `-lcuda` stops at its first call); on the stand-in such a function
//! answers CUDA_ERROR_NOT_FOUND and writes nothing (at 12.4, `cuCtxCreate_v4`, 12.5).
//! `cuGetProcAddress` answers as the older driver does. The bootstrap entries are exempt:
//! `cuGetProcAddress` and `cuDriverGetVersion` answer at every version (an emulated 11.2
//! too), and `cuGetProcAddress_v2` below 12.0 answers CUDA_ERROR_NOT_SUPPORTED.
//!
//! # Limits of the emulation
//!
//! Beyond what the conformance suite covers, the emulation knowingly differs:
//! - Stream capture: the default streams cannot capture (`CU_STREAM_PER_THREAD` neither:
//!   STREAM_CAPTURE_UNSUPPORTED), and work on them while another stream captures is not
//!   refused (no STREAM_CAPTURE_IMPLICIT). `cuMemcpyPeerAsync` and `cuGraphLaunch` on a
//!   capturing stream answer STREAM_CAPTURE_UNSUPPORTED and invalidate the capture (no
//!   child graph nodes). An event record captures no node; a capturing stream waiting for
//!   an event recorded outside the capture answers STREAM_CAPTURE_ISOLATION (with
//!   `CU_EVENT_WAIT_EXTERNAL`: nothing is recorded).
//! - Device work on an idle stream is done when it is called (a kernel's fault is kept and
//!   returned, as on a GPU, by the next synchronising call and every call after it: see
//!   `docs/stand-in.md`, "Kernel faults"). A stream-ordered allocation is made when it is called (a GPU
//!   makes it in stream order), and reuses only ranges whose free is done.
//! - Host kernels run one thread after another: no parallelism, no shared memory, no
//!   synchronisation between threads of a block (`__syncthreads` cannot be expressed);
//!   the dynamic shared memory size is checked against the limits and otherwise ignored.
//!   Kernels of fake images run nothing. `cuLinkAddData` takes fake images only.
//! - A kernel may touch any live allocation, whatever its device and whether peer access
//!   is enabled; peer copies work with or without peer access.
//! - The NULL stream, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` are one default
//!   stream per context (the per-thread default stream synchronises with blocking streams
//!   as the legacy one does). `cuMemFree` frees at once, without waiting for queued work
//!   that uses the memory (that work then faults when it runs).
//! - Destroying a context (or resetting a primary one) does not free what was made in it:
//!   its allocations stay live in the ledger, so a leak stays visible, and can still be
//!   freed; its streams and events answer CUDA_ERROR_CONTEXT_IS_DESTROYED but can still
//!   be destroyed.
//! - A double destroy of a pool, module, library, link state or user object returns an
//!   error; every double destroy is recorded in the ledger.
//! - Freeing the exporter's own allocation does not unmap its IPC imports.
//! - Function attributes, limits and pool settings are kept and reported but change
//!   nothing (except the dynamic shared memory a function may use); a pool keeps a freed
//!   range for its next allocation of the same size, but reports reserved memory as used
//!   memory.
//! - Virtual memory: each mapping is a range of its own, so a copy or memset that crosses
//!   from one mapping into the next fails with CUDA_ERROR_INVALID_VALUE (a GPU does it);
//!   access given to any device makes a mapping usable from every device; exported file
//!   descriptors keep their memory alive for the rest of the process.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, clippy::unreachable)]
#![allow(clippy::missing_safety_doc)]
#![warn(missing_docs)]

mod array;
mod array_query;
mod capture;
mod capture_api;
mod checkpoint;
mod context_api;
mod coop;
mod coop_multi;
mod copy;
mod copy3d;
mod copy3d_batch;
mod copy_any;
mod copy_array;
mod coredump_logs;
mod ctx_device_misc;
mod ctx_query;
mod device;
mod device_attributes;
#[allow(non_snake_case, clippy::all)]
mod entries;
mod entry;
mod errors;
mod event;
mod exports;
mod extmem;
mod extsem;
pub mod faults;
mod func_attr;
mod global;
mod gpa;
mod graph;
mod graph_add;
mod graph_clone;
mod graph_cond;
mod graph_edges;
mod graph_exec;
mod graph_generic;
mod graph_mem;
mod graph_mem_exec;
mod graph_memop;
mod graph_node;
mod graph_node_ops;
mod graph_params;
mod graph_update;
mod green;
mod green_event;
mod host_memory;
mod host_register;
mod install;
mod interop;
mod ipc;
mod ipc_mem;
mod launch;
mod ledger;
mod legacy_ctx;
mod legacy_launch;
mod lifecycle;
mod linker;
mod managed;
mod managed_batch;
mod map_array;
mod memory_api;
mod memset_2d;
mod mipmap;
mod model;
mod module;
mod module_file;
mod module_query;
mod multicast;
mod occupancy;
mod pci;
mod peer;
mod pointer;
mod pool;
mod pool_access;
mod pool_attr;
mod primary;
mod run;
mod sanitize;
mod sanitized;
mod stream;
mod stream_attr;
mod stream_memop;
mod stream_query;
mod table;
mod tensor_map;
mod texref;
mod texref_sampling;
mod texture;
mod user_object;
mod vmm;
mod vmm_handle;
mod world;

use std::sync::LazyLock;

use cudrv::{Driver, GetProcAddress, LoadError, LoadOptions};

pub use exports::{exported_symbols, exported_symbols_beyond_cuda_h};
#[doc(inline)]
pub use faults::Times;
pub use install::{install, InstallError};
pub use ledger::{ledger, ledger_reset, Allocation, AllocationKind, Ledger};
pub use model::device::{DEVICE_CC, DEVICE_NAME, DEVICE_SM_COUNT, DEVICE_TOTAL_MEM, ENV_DEVICES, MAX_DEVICES};
pub use model::image::{fake_image, FAKE_IMAGE_MAGIC, FAULT_KERNEL};
pub use model::stream::{STREAM_LEGACY, STREAM_PER_THREAD};
pub use run::kernels::{
    cudrv_standin_register_kernel, register_kernel, registered_kernels, unregister_kernel, CudrvStandinKernel,
    CudrvStandinThread, Dim3, KernelError, Param, Scalar, Thread,
};
pub use sanitize::{Checks as SanitizeChecks, Report as SanitizerReport};
use world::World;

/// The README's examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Makes every later call of every entry point (emulated or not) of the default world
/// return CUDA_ERROR_DEINITIALIZED, as a real driver does while the process tears down.
/// `cuGetProcAddress`, `cuDriverGetVersion`, `cuGetErrorName` and `cuGetErrorString` keep
/// working. Nothing is freed; [`restart`] undoes it. [`StandIn::shutdown`] does it in a
/// stand-in's own world.
pub fn shutdown() {
    StandIn::DEFAULT.shutdown();
}

/// Undoes [`shutdown`] (for tests).
pub fn restart() {
    StandIn::DEFAULT.restart();
}

/// Number of virtual devices of the default world: the last [`set_device_count`], else
/// `CUDRV_STANDIN_DEVICES` (0 to 8; another value is ignored), default 1.
pub fn device_count() -> std::ffi::c_int {
    StandIn::DEFAULT.device_count()
}

/// Sets the number of virtual devices of the default world (0 to [`MAX_DEVICES`]), in
/// place of `CUDRV_STANDIN_DEVICES`; returns `false` (and changes nothing) for another
/// count. Devices beyond a lowered count become invalid ordinals; what was made on them
/// stays as it is. [`StandIn::set_device_count`] sets a stand-in's own.
pub fn set_device_count(count: std::ffi::c_int) -> bool {
    StandIn::DEFAULT.set_device_count(count)
}

/// The oldest version the stand-in emulates (older ones are refused by cudrv anyway, but
/// can be emulated to test that).
pub const MIN_VERSION: u32 = 2000;
/// The version emulated when none is chosen: the newest the header describes.
pub const DEFAULT_VERSION: u32 = cudrv::table::HEADER_VERSION;
/// Environment variable choosing the version of the exported symbols (`12.4` or `12040`).
pub const ENV_VERSION: &str = "CUDRV_STANDIN_VERSION";

/// The environment variable that turns the sanitizer on (docs/sanitizer.md): a list of
/// `races`, `init`, `shared`, `schedule=SEED` or `all`, read once per process.
pub const ENV_SANITIZE: &str = sanitize::VAR;

/// One emulated driver in this process: a world of its own (its devices, contexts,
/// memory, ... and ledger) answering as a driver of one version.
///
/// - [`StandIn::from_env`] is the default world, which the `cdylib`'s exported symbols
///   and [`install`] serve, of the version `CUDRV_STANDIN_VERSION` names.
/// - [`StandIn::new`] is the world every `StandIn::new` of that version shares (the
///   default world for the default world's version).
/// - [`StandIn::isolated`] is a fresh world no one else sees: tests that run in parallel
///   in one process and must not see each other's objects, faults or ledger entries each
///   take one.
///
/// A process holds up to 24 worlds; they live as long as the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandIn {
    slot: usize,
}

static ENV_INSTANCE: LazyLock<StandIn> = LazyLock::new(|| {
    let v = std::env::var(ENV_VERSION).ok().and_then(|v| cudrv::version::parse(&v)).unwrap_or(DEFAULT_VERSION);
    gpa::set_slot_version(0, v.clamp(MIN_VERSION, DEFAULT_VERSION));
    StandIn { slot: 0 }
});

impl StandIn {
    /// The default world, whatever its version (for the free functions).
    const DEFAULT: StandIn = StandIn { slot: 0 };

    /// The stand-in of `version` (driver form, `12040`) that every call with this version
    /// shares. `None` if the version is outside what the header describes, or the
    /// process holds 24 worlds already.
    pub fn new(version: u32) -> Option<StandIn> {
        if !(MIN_VERSION..=DEFAULT_VERSION).contains(&version) {
            return None;
        }
        // The default world's version is settled first, so that it is shared when it
        // matches.
        let _ = StandIn::from_env();
        gpa::shared_slot(version).map(|slot| StandIn { slot })
    }

    /// A stand-in of `version` in a fresh world of its own, which nothing else in the
    /// process sees: its own devices, contexts, memory, faults and ledger. `None` if the
    /// version is outside what the header describes, or the process holds 24 worlds
    /// already.
    pub fn isolated(version: u32) -> Option<StandIn> {
        if !(MIN_VERSION..=DEFAULT_VERSION).contains(&version) {
            return None;
        }
        let _ = StandIn::from_env();
        gpa::fresh_slot(version).map(|slot| StandIn { slot })
    }

    /// The instance behind the exported symbols (`CUDRV_STANDIN_VERSION`, default 13.5).
    pub fn from_env() -> StandIn {
        *ENV_INSTANCE
    }

    fn world(&self) -> &'static World {
        // Every StandIn holds a slot in range.
        World::of(self.slot).unwrap_or(World::at::<0>())
    }

    /// Returns this stand-in's world to the state a new process sees, keeping its version:
    /// every context, stream, event, allocation, module, pool, graph, user object, fault,
    /// setting (the device count included) and ledger record is forgotten, and `cuInit`
    /// has to run again. Memory the program still holds is freed; handles and addresses
    /// handed out before are unknown afterwards (they are never handed out again).
    ///
    /// For tests that each want a fresh driver, one after another, in one world. Call it
    /// only while nothing uses the world: no other thread calling this stand-in's entry
    /// points, no work queued on its streams (synchronise first), no callback of it
    /// running. Queued work that is still pending runs against the fresh world.
    pub fn reset(&self) {
        self.world().reset();
    }

    /// A snapshot of this stand-in's ledger (see [`ledger`]).
    pub fn ledger(&self) -> Ledger {
        ledger::of(self.world())
    }

    /// Forgets everything recorded in this stand-in's ledger (see [`ledger_reset`]).
    pub fn ledger_reset(&self) {
        ledger::reset(self.world())
    }

    /// Makes every later call of this stand-in return CUDA_ERROR_DEINITIALIZED (see
    /// [`shutdown`]).
    pub fn shutdown(&self) {
        self.world().shut_down.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Undoes [`StandIn::shutdown`].
    pub fn restart(&self) {
        self.world().shut_down.store(false, std::sync::atomic::Ordering::Release);
    }

    /// Its number of virtual devices (see [`device_count`]).
    pub fn device_count(&self) -> std::ffi::c_int {
        self.world().device_count()
    }

    /// Sets its number of virtual devices (see [`set_device_count`]).
    pub fn set_device_count(&self, count: std::ffi::c_int) -> bool {
        if !(0..=MAX_DEVICES).contains(&count) {
            return false;
        }
        self.world().device_count.store(count, std::sync::atomic::Ordering::Release);
        true
    }

    /// Makes `call` (every variant of its symbol) of this stand-in return `status`, for
    /// every thread (see [`faults::inject`]).
    pub fn inject(&self, call: cudrv::Call, status: cudrv::sys::CUresult, times: Times) {
        self.world().faults.inject(call, status, times, None);
    }

    /// The same for calls from the current thread only (see
    /// [`faults::inject_on_this_thread`]).
    pub fn inject_on_this_thread(&self, call: cudrv::Call, status: cudrv::sys::CUresult, times: Times) {
        self.world().faults.inject(call, status, times, Some(run::thread::key()));
    }

    /// Removes this stand-in's faults of this thread and of every thread, and disarms its
    /// context-restore hook on this thread (see [`faults::clear`]).
    pub fn clear_faults(&self) {
        faults::clear_in(self.world());
    }

    /// The emulated version (driver form, `12040`).
    pub fn version(&self) -> u32 {
        gpa::slot_version(self.slot)
    }

    /// Its bootstrap: `cuGetProcAddress_v2` from 12.0 on, the 4-argument form before.
    pub fn get_proc_address(&self) -> GetProcAddress {
        match (self.version() >= 12000, gpa::gpa_v2_of(self.slot), gpa::gpa_v1_of(self.slot)) {
            (true, Some(v2), _) => GetProcAddress::V2(v2),
            (_, _, Some(v1)) => GetProcAddress::V1(v1),
            // Slots are always in range; fall back to slot 0's.
            _ => GetProcAddress::V1(gpa::gpa_v1::<0>),
        }
    }

    /// The 4-argument `cuGetProcAddress`, which every version has.
    pub fn get_proc_address_v1(&self) -> GetProcAddress {
        GetProcAddress::V1(gpa::gpa_v1_of(self.slot).unwrap_or(gpa::gpa_v1::<0>))
    }

    /// Sets the sanitizer's checks for this stand-in (docs/sanitizer.md), as
    /// `CUDRV_STANDIN_SANITIZE` does for every stand-in of a process: a list such as
    /// `races`; an empty list turns it off. What it had seen is forgotten. A list that does
    /// not parse is refused with the reason.
    pub fn sanitize(&self, list: &str) -> Result<(), String> {
        let checks = SanitizeChecks::parse(list)?;
        self.world().sanitizer.set(checks);
        Ok(())
    }

    /// The sanitizer's reports in this stand-in so far (each was also written to stderr
    /// and to `CUDRV_STANDIN_SANITIZE_LOG`).
    pub fn sanitizer_reports(&self) -> Vec<SanitizerReport> {
        self.world().sanitizer.reports()
    }

    /// A cudrv [`Driver`] over this stand-in.
    pub fn load(&self, options: LoadOptions) -> Result<Driver, LoadError> {
        // SAFETY: the stand-in's cuGetProcAddress returns only its own functions, each with
        // the exact signature of the variant asked for (generated or type-checked), and
        // they live as long as the process.
        unsafe { Driver::from_get_proc_address(self.get_proc_address(), options) }
    }
}
