//! The traits a program using the safe layer wants in scope, in one import:
//! `use cudrv::prelude::*;` gives every kind of device memory its views, copies and fills
//! ([`DeviceSlice`], [`DeviceSliceMut`]: `len`, `slice`, `split_at`, `chunks`, `to_vec`,
//! `copy_from_host`, ...) and names what a kernel takes ([`KernelArg`], [`DeviceRepr`]).
//!
//! ```
//! # cudrv_standin::install().unwrap();
//! use cudrv::prelude::*;
//!
//! let ctx = cudrv::init()?.device(0)?.primary_context()?;
//! let buffer = cudrv::DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4])?;
//! assert_eq!(buffer.slice(1..3)?.to_vec()?, [2, 3]); // `slice`: DeviceSlice
//! # Ok::<(), cudrv::Error>(())
//! ```

pub use crate::resources::kernel_arg::KernelArg;
pub use crate::resources::memory::DeviceRepr;
pub use crate::resources::view::{DeviceSlice, DeviceSliceMut};
