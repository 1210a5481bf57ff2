//! What runs work: host memory standing in for device memory, the queues driver threads
//! serve, program callbacks, host-implemented kernels and PTX kernels (`ptx.rs`). Nothing here knows the world or
//! the model.

pub(crate) mod backing;
pub(crate) mod callback;
pub(crate) mod footprint;
pub(crate) mod kernels;
pub(crate) mod lock;
pub(crate) mod ptx;
pub(crate) mod queue;
pub(crate) mod recorded;
pub(crate) mod schedule;
pub(crate) mod shared_event;
pub(crate) mod texture;
pub(crate) mod thread;
