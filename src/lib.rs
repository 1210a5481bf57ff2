//! cudrv: the NVIDIA CUDA driver API, loaded at run time and version-gated.
//!
//! - The driver (`libcuda.so.1`) is opened at run time, never linked; building needs no
//!   CUDA toolkit.
//! - Every entry point of the pinned `cudaTypedefs.h` (CUDA 13.5) is resolved through
//!   `cuGetProcAddress` at exactly its own ABI version, never above the driver's. What
//!   the driver lacks is a visible state ([`Availability`]), never a crash.
//! - Every entry is callable in three generated forms: [`p`] (silent, returns the
//!   `CUresult`), [`pc`] (checked, returns `Result<(), CudaError>` naming the call) and
//!   [`pw`] (also reports a failure through [`report()`]).
//! - A safe layer on one handle core: [`init`], [`Device`], [`Context`], [`Stream`],
//!   [`Event`], typed [`DeviceBuffer`]/[`PinnedBuffer`], [`MemoryPool`], modules and
//!   libraries with a typed launch builder ([`Launch`]), graphs, IPC.
//! - Platforms: Linux only today. The crate compiles on other targets, but only looks for
//!   `libcuda.so.1` (Windows' `nvcuda.dll` is not supported).
//!
//! ```no_run
//! let driver = cudrv::init()?;
//! println!("CUDA driver {}", driver.version());
//! for device in driver.devices()? {
//!     println!("{}: {} ({} MiB)", device.as_raw(), device.name()?, device.total_memory()? >> 20);
//! }
//! let mut count = 0;
//! // SAFETY: `count` is a valid out-pointer.
//! unsafe { cudrv::pc::cuDeviceGetCount(&mut count) }?;
//! # Ok::<(), cudrv::Error>(())
//! ```

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
mod driver;
pub mod error;
mod gated_log;
mod loader;
pub mod p;
pub mod pc;
pub mod pw;
pub mod report;
mod resources;
mod scope;
pub mod sys;
pub mod table;
pub mod version;

pub use availability::{Availability, EntryInfo, EntryKind, Missing};
pub use device::{init, Device, Uuid};
pub use driver::{driver, set_driver, Driver};
pub use error::{CudaError, Error, InvalidArgument, Result};
pub use gated_log::ENV_GATED_LOG;
pub use loader::{
    GetProcAddress, GetProcAddressV1, GetProcAddressV2, LoadError, LoadOptions, ProcAddressQuery, ENV_LIBCUDA,
    ENV_MAX_VERSION, ENV_PER_THREAD, MIN_DRIVER_VERSION, SYSTEM_LIBCUDA,
};
pub use p::P;
pub use pc::Pc;
pub use pw::Pw;
pub use report::{report, reset_reporter, set_reporter, Arg, Problem, Report};
pub use resources::context::Context;
pub use resources::event::Event;
pub use resources::graph::{Graph, GraphExec, GraphNode};
pub use resources::host_fn::HostFn;
pub use resources::ipc::{ImportedBuffer, IpcExport};
pub use resources::launch::{KernelArg, Launch, LaunchConfig};
pub use resources::library::{Kernel, Library};
pub use resources::linker::Linker;
pub use resources::memory::{DeviceBuffer, DeviceRepr};
pub use resources::module::{Function, Module};
pub use resources::pinned::PinnedBuffer;
pub use resources::pool::MemoryPool;
pub use resources::stream::Stream;
pub use resources::user_object::UserObject;
pub use scope::{set_current, with_context};
pub use sys::CUresult;
pub use table::Call;

/// The README's examples, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
