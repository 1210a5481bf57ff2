//! A stand-in CUDA driver for tests without a GPU.
//!
//! Built as a `cdylib` it is a `libcuda.so.1` another process can load (copy or link
//! `libcudrv_standin.so` to that name); as an `rlib` it gives an in-process
//! `cuGetProcAddress` for [`cudrv::Driver::from_get_proc_address`].
//!
//! - Emulates any driver version from 11.3 to 13.5 ([`StandIn::new`], or
//!   `CUDRV_STANDIN_VERSION=12.4` for the exported symbols), answering
//!   `cuGetProcAddress`/`_v2` as `shared/driver-facts.md` describes, with the set of
//!   symbols of each version taken from cudrv's generated table.
//! - Emulates, in host memory: cuInit, cuDriverGetVersion, devices (count, name, memory,
//!   attributes, UUID; `CUDRV_STANDIN_DEVICES`, one by default), error names and strings,
//!   primary contexts, created contexts and each thread's context stack, streams and host
//!   functions, events, device memory, copies and memsets, pinned host memory, memory
//!   pools with IPC export and import, libraries, modules and kernels over a fake image
//!   format ([`fake_image`]), the linker, graphs of host and empty nodes, and user
//!   objects. Every other variant is a stub with its exact signature that returns
//!   `CUDA_ERROR_NOT_SUPPORTED`.
//! - All work is done when it is called, except host functions (`cuLaunchHostFunc`, graph
//!   launches) and user object destructors, which run later on driver threads, in stream
//!   order, never under a stand-in lock; synchronising waits for them.
//! - A [`ledger`] of live allocations and handles, double frees, uses after free, double
//!   destroys and duplicate IPC imports.
//! - A kernel named [`FAULT_KERNEL`] makes its context sticky-failed: every later call that
//!   uses the context returns CUDA_ERROR_ILLEGAL_ADDRESS until it is destroyed (a primary
//!   context: reset or released for the last time).
//! - [`shutdown`] makes every entry return CUDA_ERROR_DEINITIALIZED, as during process
//!   teardown; [`restart`] undoes it.
//! - Fault injection ([`faults`]): any entry can be made to return a chosen status, and a
//!   context restoration can be made to fail ([`faults::fail_next_context_restore`]).
//!
//! Where the emulation knowingly differs from a real driver:
//! - Stream-ordered work other than host functions (copies, memsets, stream-ordered
//!   allocation and free, kernel launches) is done at once, not in stream order after
//!   pending host functions.
//! - The NULL stream, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` are one default
//!   stream per context, with no implicit synchronisation with other streams.
//! - Destroying a context (or resetting a primary one) does not free what was made in it:
//!   its allocations stay live in the ledger, so a leak stays visible, and can still be
//!   freed; its streams and events answer CUDA_ERROR_INVALID_CONTEXT but can still be
//!   destroyed. Primary contexts stay usable whatever their retain count.
//! - A double destroy of a stream, event, pool, module, library, link state, graph, graph
//!   exec or user object returns an error (and is recorded) where a real driver may crash
//!   (`shared/driver-facts.md`: a destroyed stream).
//! - Freeing the exporter's own allocation does not unmap its IPC imports.
//! - A host function that synchronises its own stream gets CUDA_ERROR_NOT_PERMITTED
//!   instead of a hang.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, clippy::unreachable)]
#![allow(clippy::missing_safety_doc)]

mod api;
mod backing;
mod context;
mod context_api;
mod copy;
mod device;
mod entry;
mod errors;
mod event;
pub mod faults;
mod gpa;
mod graph;
mod graph_exec;
mod handles;
mod host_memory;
mod image;
mod ipc;
mod kernels;
mod launch;
mod ledger;
mod linker;
mod memory;
mod memory_api;
mod module;
mod peer;
mod pool;
mod primary;
mod ptx;
mod queue;
mod stream;
#[allow(non_snake_case, clippy::all)]
mod stubs;
mod user_object;

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::LazyLock;

use cudrv::sys::{cuuint64_t, CUresult};
use cudrv::ProcAddressQuery;
use cudrv::{Driver, GetProcAddress, LoadError, LoadOptions};

pub use device::{device_count, set_device_count, DEVICE_CC, DEVICE_NAME, DEVICE_SM_COUNT, DEVICE_TOTAL_MEM};
pub use faults::Times;
pub use image::{fake_image, FAKE_IMAGE_MAGIC};
pub use kernels::{
    cudrv_standin_register_kernel, register_kernel, registered_kernels, unregister_kernel, CudrvStandinKernel,
    CudrvStandinThread, Dim3, KernelError, Param, Scalar, Thread,
};
pub use launch::FAULT_KERNEL;
pub use ledger::{ledger, ledger_reset, Allocation, AllocationKind, Ledger};
pub use stream::{STREAM_LEGACY, STREAM_PER_THREAD};

/// Makes every later call of every entry point (emulated or stub) return
/// CUDA_ERROR_DEINITIALIZED, process-wide, as a real driver does while the process tears
/// down. `cuGetProcAddress`, `cuDriverGetVersion`, `cuGetErrorName` and
/// `cuGetErrorString` keep working. Nothing is freed; [`restart`] undoes it.
pub fn shutdown() {
    entry::set_shut_down(true);
}

/// Undoes [`shutdown`] (for tests).
pub fn restart() {
    entry::set_shut_down(false);
}

/// The oldest version the stand-in emulates (older ones are refused by cudrv anyway, but
/// can be emulated to test that).
pub const MIN_VERSION: u32 = 2000;
/// The version emulated when none is chosen: the newest the header describes.
pub const DEFAULT_VERSION: u32 = cudrv::table::HEADER_VERSION;
/// Environment variable choosing the version of the exported symbols (`12.4` or `12040`).
pub const ENV_VERSION: &str = "CUDRV_STANDIN_VERSION";

/// One emulated driver version in this process.
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
    /// A driver of `version` (driver form, `12040`). `None` if the version is outside
    /// what the header describes, or too many versions are emulated already (24).
    pub fn new(version: u32) -> Option<StandIn> {
        if !(MIN_VERSION..=DEFAULT_VERSION).contains(&version) {
            return None;
        }
        gpa::slot_for(version).map(|slot| StandIn { slot })
    }

    /// The instance behind the exported symbols (`CUDRV_STANDIN_VERSION`, default 13.5).
    pub fn from_env() -> StandIn {
        *ENV_INSTANCE
    }

    /// The emulated version.
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

    /// A cudrv [`Driver`] over this stand-in.
    pub fn load(&self, options: LoadOptions) -> Result<Driver, LoadError> {
        // SAFETY: the stand-in's cuGetProcAddress returns only its own functions, each with
        // the exact signature of the variant asked for (generated or type-checked), and
        // they live as long as the process.
        unsafe { Driver::from_get_proc_address(self.get_proc_address(), options) }
    }
}

// The symbols a `libcuda.so.1` exports, for loading through dlopen. They answer as the
// environment's instance.

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
    query: *mut ProcAddressQuery,
) -> CUresult {
    LazyLock::force(&ENV_INSTANCE);
    // SAFETY: forwarded as received.
    unsafe { gpa::gpa_v2::<0>(symbol, pfn, version, flags, query) }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: cuuint64_t,
) -> CUresult {
    LazyLock::force(&ENV_INSTANCE);
    // SAFETY: forwarded as received.
    unsafe { gpa::gpa_v1::<0>(symbol, pfn, version, flags) }
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CUresult {
    LazyLock::force(&ENV_INSTANCE);
    // SAFETY: forwarded as received.
    unsafe { gpa::driver_get_version::<0>(version) }
}

#[no_mangle]
pub unsafe extern "C" fn cuInit(flags: c_uint) -> CUresult {
    // SAFETY: forwarded as received.
    unsafe { api::cu_init(flags) }
}
