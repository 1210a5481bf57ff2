//! The user guides, as they are in the repository's `docs/` folder, one module each, so
//! that they can be read here (on docs.rs) as well as on GitHub. Nothing here is code.
//!
//! - [`error_handling`]: the three forms of every entry point, what an `Err` guarantees,
//!   reports, sticky errors, shutdown.
//! - [`version_gating`]: the entry table, availability states, the version cap and the
//!   per-thread default stream.
//! - [`compatibility_matrix`]: `cudrv-matrix`, which runs a program's tests once per
//!   driver version.
//! - [`memory`]: what each kind of memory guarantees, views and the traits for device
//!   memory of `T`, zero lengths, free and total memory, pool attributes, pitched memory,
//!   2D/3D copies, arrays, texture and surface objects.
//! - [`stand_in`]: the stand-in driver (`cudrv-standin`) and how true it is to the real
//!   one.
//! - [`kernels`]: function and kernel attributes, module and library globals, JIT
//!   options and logs, occupancy.
//! - [`execution`]: stream priorities, default streams and attributes, capture modes,
//!   context limits and cache configuration, green contexts, IPC events.
//! - [`graphs`]: stream capture and explicit graphs, node kinds, update, conditional
//!   nodes, and the driver version each needs.
//! - [`gpu_free_kernels`]: testing a program's own kernels without a GPU: CUDA C to PTX,
//!   run by the stand-in's PTX executor in `cargo test`, across driver versions.
//! - [`sanitizer`]: the stand-in's sanitizer: stream-order races, adversarial schedules
//!   and reads of unwritten memory, found with no GPU.
//! - [`performance`]: measured per-call, loading and handle cost.
//! - [`driver_facts`]: what real drivers were seen to do, which the stand-in follows.

#[doc = include_str!("../docs/error-handling.md")]
pub mod error_handling {}

#[doc = include_str!("../docs/version-gating.md")]
pub mod version_gating {}

#[doc = include_str!("../docs/compatibility-matrix.md")]
pub mod compatibility_matrix {}

#[doc = include_str!("../docs/memory.md")]
pub mod memory {}

#[doc = include_str!("../docs/stand-in.md")]
pub mod stand_in {}

#[doc = include_str!("../docs/kernels.md")]
pub mod kernels {}

#[doc = include_str!("../docs/execution.md")]
pub mod execution {}
#[doc = include_str!("../docs/graphs.md")]
pub mod graphs {}
#[doc = include_str!("../docs/gpu-free-kernels.md")]
pub mod gpu_free_kernels {}

#[doc = include_str!("../docs/sanitizer.md")]
pub mod sanitizer {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/driver-facts.md")]
pub mod driver_facts {}
