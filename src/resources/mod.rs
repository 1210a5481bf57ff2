//! RAII handles, one module per resource family.
//!
//! Every handle is a cheap clone of an `Arc` and keeps alive what it depends on (a stream
//! its context, a kernel its library, an allocation its pool and its deallocation
//! stream). Each has `as_raw`; those a higher-level crate may need to adopt also have an
//! owning `from_raw` and a non-owning `borrowed` form.
//!
//! Dropping the last clone destroys the resource with the driver's `p` call in the
//! context that owns it (cudrv's context-scope cleanup helper): restored context first, then
//! a failure is reported through [`crate::report()`], naming the call and the handle.
//! Drop never panics. A resource whose context cannot be made current is leaked, and the
//! leak reported, rather than destroyed from the wrong context.

pub mod array;
pub mod attributes;
pub mod capture;
pub mod context;
pub mod copy3d;
pub mod event;
#[cfg(target_os = "linux")]
pub mod fd_passing;
pub mod flags;
pub(crate) mod function_part;
pub mod global;
pub mod graph;
pub mod green;
pub(crate) mod handle;
pub mod host_fn;
pub mod host_register;
pub mod ipc;
pub mod jit;
pub mod kernel_arg;
pub mod launch;
pub mod launch_attr;
pub mod library;
pub mod linker;
pub mod managed;
pub mod memory;
pub mod module;
pub mod occupancy;
pub(crate) mod params;
pub mod peer;
pub mod pinned;
pub mod pitched;
pub mod pointer_attr;
pub mod pool;
pub mod stream;
pub mod texture;
pub mod user_object;
pub mod values;
pub mod view;
pub mod vmm;
