//! cudrv: the NVIDIA CUDA driver API, loaded at run time and version-gated.
//!
//! - The driver (`libcuda.so.1`) is opened at run time, never linked; building needs no
//!   CUDA toolkit.
//! - Every entry point of the pinned `cudaTypedefs.h` (CUDA 13.5) is resolved through
//!   `cuGetProcAddress` at exactly its own ABI version, never above the driver's. What
//!   the driver lacks is a visible state ([`Availability`]), never a crash.
//! - Every entry is callable through [`p`] (silent, returns the `CUresult`) and [`pw`]
//!   (also reports a failure through [`report()`]).
//! - Platforms: Linux only today. The crate compiles on other targets, but only looks for
//!   `libcuda.so.1` (Windows' `nvcuda.dll` is not supported).
//!
//! ```no_run
//! let driver = cudrv::driver()?;
//! println!("CUDA driver {}", driver.version());
//! let mut count = 0;
//! // SAFETY: `count` is a valid out-pointer.
//! let status = unsafe { cudrv::pw::cuDeviceGetCount(&mut count) };
//! # Ok::<(), cudrv::LoadError>(())
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
#![warn(clippy::undocumented_unsafe_blocks)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

pub mod availability;
pub mod call;
mod device;
mod driver;
mod gated_log;
pub mod error;
mod loader;
pub mod p;
pub mod pc;
pub mod pw;
pub mod report;
pub mod resources;
mod scope;
pub mod sys;
pub mod table;
pub mod version;

pub use availability::{Availability, EntryInfo, EntryKind, Missing};
pub use driver::{driver, set_driver, Driver};
pub use gated_log::ENV_GATED_LOG;
pub use error::{CudaError, Error, InvalidArgument, Result};
pub use loader::{
    GetProcAddress, GetProcAddressV1, GetProcAddressV2, LoadError, LoadOptions, ProcAddressQuery, ENV_LIBCUDA,
    ENV_MAX_VERSION, ENV_PER_THREAD, MIN_DRIVER_VERSION, SYSTEM_LIBCUDA,
};
pub use p::P;
pub use pc::Pc;
pub use pw::Pw;
pub use report::{report, reset_reporter, set_reporter, Arg, Problem, Report};
pub use device::{init, Device, Uuid};
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
