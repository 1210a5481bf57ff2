//! cudrv: the NVIDIA CUDA driver API, loaded at run time and version-gated.
//!
//! # A first program
//!
//! The safe layer, from the driver to a kernel's result: load and initialise the driver
//! ([`init`]), take a [`Device`] and its primary [`Context`], make a [`Stream`], copy data
//! into [`DeviceBuffer`]s, load a [`Module`] from PTX, launch one of its [`Function`]s
//! with the typed [`Launch`] builder, and read the result back.
//!
//! ```
//! # cudrv_standin::install().unwrap(); // in `cargo test`, this runs on the stand-in driver
//! use cudrv::prelude::*; // the traits of device memory: `slice`, `to_vec`, ...
//! use cudrv::{DeviceBuffer, LaunchConfig, Module, Stream, StreamFlags};
//!
//! let driver = cudrv::init()?;                    // load the driver once, cuInit(0) once
//! let ctx = driver.device(0)?.primary_context()?; // released when the last clone drops
//! let stream = Stream::new(&ctx, StreamFlags::NON_BLOCKING)?; // or raw bits: `1`
//!
//! let a = DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
//! let b = DeviceBuffer::from_slice(&ctx, &[10.0f32, 20.0, 30.0])?;
//! let c = DeviceBuffer::<f32>::alloc_async(&stream, 3)?; // freed on `stream` when dropped
//!
//! // vector_add(const float* a, const float* b, float* c, int n): c[i] = a[i] + b[i]
//! let module = Module::from_ptx(&ctx, include_str!("../examples/kernels/vector_add.ptx"))?;
//! let vector_add = module.function("vector_add")?; // keeps the module loaded
//! let n = 3u32;
//! let mut launch = vector_add.builder(&stream);
//! launch.arg(&a).arg(&b).arg(&c).arg(&n);
//! // SAFETY: the arguments match vector_add(const float*, const float*, float*, int).
//! unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
//! stream.synchronize()?;
//! assert_eq!(c.to_vec()?, [11.0, 22.0, 33.0]);
//! assert_eq!(c.slice(1..)?.to_vec()?, [22.0, 33.0]); // a view of part of it
//! # Ok::<(), cudrv::Error>(())
//! ```
//!
//! Every fallible call returns one error type, [`Error`], that names the failed driver
//! call and says what to do; [`docs::error_handling`] says what an `Err` guarantees. Every
//! handle is cheap to clone, keeps what it depends on alive (a buffer its context, a
//! function its module), and releases in the right context when the last clone drops,
//! reporting a failure through [`report()`] instead of panicking.
//!
//! More of the safe layer: [`Event`]s, [`PinnedBuffer`]s (page-locked host memory) for
//! asynchronous copies, views of device memory ([`DeviceView`], [`DeviceViewMut`]) and
//! the traits every kind of device memory implements ([`DeviceSlice`],
//! [`DeviceSliceMut`]; [`docs::memory`]), device memory information ([`MemoryInfo`]),
//! [`MemoryPool`]s with their attributes and IPC ([`IpcExport`], [`ImportedBuffer`]),
//! [`Library`]s and their [`Kernel`]s (context-independent modules), the [`Linker`],
//! [`Graph`]s built node by node or by stream capture, updated in place, with conditional
//! nodes ([`docs::graphs`]), kernel attributes, [`Global`]s, [`JitOptions`] and
//! occupancy ([`docs::kernels`]), stream priorities and attributes, capture modes,
//! context limits, [`GreenContext`]s and IPC events ([`docs::execution`]),
//! [`UserObject`]s, host functions ([`HostFn`],
//! [`Stream::launch_host_fn`]), peer access ([`Context::enable_peer_access`]). Creation
//! flags are typed ([`StreamFlags`], [`EventFlags`], [`ContextFlags`],
//! [`HostAllocFlags`]), and raw bits are still accepted. The
//! examples in the repository's `examples/` folder use each of them.
//!
//! # Testing without a GPU
//!
//! The stand-in driver, [`cudrv-standin`](https://docs.rs/cudrv-standin), emulates any
//! driver from 11.3 to 13.5 in host memory, with fault injection and host-implemented
//! kernels (the `vector_add` above is one). As a dev-dependency, one line at the top of a
//! test makes it the driver [`init`] loads:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! cudrv_standin::install()?; // idempotent: call it in every test, on any thread
//! let driver = cudrv::init()?;
//! assert_eq!(driver.device_count()?, 1);
//! # Ok(())
//! # }
//! ```
//!
//! Every example on these pages runs this way in `cargo test`. `cudrv-matrix` runs a
//! program's tests once per driver version ([`docs::compatibility_matrix`]).
//!
//! # The driver and its entries
//!
//! - The driver (`libcuda.so.1`, or the library `CUDRV_LIBCUDA` names) is opened at run
//!   time, never linked; building needs no CUDA toolkit. [`init`] and [`driver()`] load
//!   the process-wide one; [`Driver::load`] and [`LoadOptions`] load others.
//! - Every entry point of the pinned `cudaTypedefs.h` (CUDA 13.5) is resolved through
//!   `cuGetProcAddress` at exactly its own ABI version, never above the driver's. What
//!   the driver lacks is a visible state ([`Availability`], "needs driver 13.1"), never a
//!   crash ([`docs::version_gating`]). [`Driver::require`] checks the driver's version.
//! - Every entry is callable in three generated forms: [`p`] (silent, returns the
//!   `CUresult`), [`pc`] (checked, returns `Result<(), CudaError>` naming the call) and
//!   [`pw`] (also reports a failure through [`report()`]). The raw types are in [`sys`].
//!
//! ```
//! # cudrv_standin::install().unwrap();
//! let driver = cudrv::init()?;
//! println!("CUDA driver {}", driver.version());
//! for device in driver.devices()? {
//!     println!("{}: {} ({} MiB)", device.as_raw(), device.name()?, device.total_memory()? >> 20);
//! }
//! // "resolved (ABI 13010)", or "needs driver 13.1" on an older driver: never a crash.
//! println!("{}", driver.entry("cuLaunchHostFunc_v13010").map(|e| e.availability.to_string()).unwrap_or_default());
//!
//! let mut count = 0;
//! // SAFETY: `count` is a valid out-pointer.
//! unsafe { cudrv::pc::cuDeviceGetCount(&mut count) }?; // checked: an Err names the call
//! assert_eq!(usize::try_from(count), Ok(driver.device_count()?));
//! # Ok::<(), cudrv::Error>(())
//! ```
//!
//! # Platforms
//!
//! Linux only today. The crate compiles on other targets, but only looks for
//! `libcuda.so.1` (Windows' `nvcuda.dll` is not supported).
//!
//! # Guides
//!
//! The user guides are in [`docs`]: [error handling](docs::error_handling),
//! [version gating](docs::version_gating), [the compatibility
//! matrix](docs::compatibility_matrix), [memory](docs::memory), [the stand-in](docs::stand_in),
//! [kernels: attributes, globals, JIT options, occupancy](docs::kernels),
//! [streams and execution resources: priorities, attributes, capture modes, limits,
//! green contexts, IPC events](docs::execution),
//! [the stand-in's sanitizer](docs::sanitizer), [performance](docs::performance),
//! [driver facts](docs::driver_facts).

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented,
    clippy::indexing_slicing,
    clippy::exit
)]
#![warn(clippy::undocumented_unsafe_blocks, missing_debug_implementations, missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

pub mod availability;
pub mod call;
mod device;
pub mod docs;
mod driver;
pub mod error;
mod gated_log;
mod loader;
pub mod p;
pub mod pc;
pub mod prelude;
pub mod pw;
pub mod report;
mod resources;
mod scope;
pub mod sys;
pub mod table;
mod typed;
pub mod version;

// Every public type is listed on the crate page (`scripts/check-docs.sh` checks it): the
// safe layer's types come from private modules, and the re-exports from public modules
// are inlined; only the raw `sys` types and the generated `table`'s types stay in their
// modules.
#[doc(inline)]
pub use availability::{Availability, EntryInfo, EntryKind, Missing};
pub use device::{init, Device, Uuid};
pub use driver::{driver, set_driver, Driver};
#[doc(inline)]
pub use error::{CudaError, Error, InvalidArgument, Result};
pub use gated_log::ENV_GATED_LOG;
pub use loader::{
    GetProcAddress, GetProcAddressV1, GetProcAddressV2, LoadError, LoadOptions, ProcAddressQuery, ENV_LIBCUDA,
    ENV_MAX_VERSION, ENV_PER_THREAD, MIN_DRIVER_VERSION, SYSTEM_LIBCUDA,
};
#[doc(inline)]
pub use p::P;
#[doc(inline)]
pub use pc::Pc;
#[doc(inline)]
pub use pw::Pw;
#[doc(inline)]
pub use report::{report, reset_reporter, set_reporter, Arg, Problem, Report};
pub use resources::array::{Array, ArrayDescriptor, ArrayFormat};
pub use resources::capture::{CaptureInfo, CaptureMode, CaptureModeGuard, CaptureStatus};
pub use resources::context::{Context, Limit, SharedMemConfig, StreamPriorityRange};
pub use resources::copy3d::{Copy2D, Copy3D};
pub use resources::event::{Event, IpcEventHandle};
#[cfg(target_os = "linux")]
pub use resources::fd_passing::{recv_fd, send_fd};
pub use resources::flags::{
    ArrayFlags, ContextFlags, EventFlags, HostAllocFlags, HostRegisterFlags, InstantiateFlags, OccupancyFlags,
    ShareableHandleTypes, StreamFlags,
};
pub use resources::global::Global;
pub use resources::graph::{
    ConditionalHandle, ConditionalKind, CopyEnd, Graph, GraphExec, GraphNode, GraphNodeType, KernelNodeInfo,
    KernelNodeParams, MemsetNodeInfo,
};
pub use resources::green::{GreenContext, SmResource, SmSplit};
pub use resources::host_fn::HostFn;
pub use resources::host_register::HostRegistration;
pub use resources::ipc::{ImportedBuffer, IpcExport};
pub use resources::jit::{JitFallback, JitLogs, JitOptions, JitOutput};
pub use resources::kernel_arg::KernelArg;
pub use resources::launch::{Launch, LaunchConfig};
pub use resources::launch_attr::LaunchAttribute;
pub use resources::library::{Kernel, Library};
pub use resources::linker::Linker;
#[allow(deprecated)]
pub use resources::managed::StreamAttach;
pub use resources::managed::{ManagedAdvice, ManagedAttach, ManagedBuffer, ManagedLocation, ManagedRangeAttributes};
pub use resources::memory::{DeviceBuffer, DeviceRepr, MemoryInfo};
pub use resources::module::{Function, Module};
pub use resources::occupancy::PotentialBlockSize;
pub use resources::pinned::PinnedBuffer;
pub use resources::pitched::PitchedBuffer;
pub use resources::pointer_attr::{MemoryType, PointerAttributes};
pub use resources::pool::MemoryPool;
pub use resources::stream::{Stream, StreamAttribute, StreamAttributeKind, SyncPolicy};
pub use resources::texture::{
    AddressMode, FilterMode, ReadMode, ResourceDesc, SurfaceObject, TextureDesc, TextureObject, TextureResource,
};
pub use resources::user_object::UserObject;
pub use resources::values::{
    AccessPolicyWindow, AccessProperty, CacheConfig, FunctionAttribute, FunctionAttributes, MemSyncDomain, ParamInfo,
};
pub use resources::view::{DeviceChunks, DeviceChunksMut, DeviceSlice, DeviceSliceMut, DeviceView, DeviceViewMut};
pub use resources::vmm::{Access, AddressRange, GrowableBuffer, Mapping, PhysicalMemory};
pub use scope::{set_current, with_context};
pub use sys::CUresult;
#[doc(inline)]
pub use table::Call;
#[doc(inline)]
pub use version::RequireError;

/// The README's examples, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
