//! Memory pools: the pools of a world, each device's default and current pool, the
//! settable attributes of each, and the "file descriptors" pools are exported under.

use std::collections::BTreeMap;
use std::ffi::c_int;

use cudrv::sys::CUresult;

use crate::model::handles::Registry;

/// One pool.
#[derive(Clone, Copy)]
pub(crate) struct Pool {
    pub(crate) device: c_int,
    /// Made with `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`: can be exported.
    pub(crate) exportable: bool,
    /// For a pool imported from a shareable handle: the exported pool.
    pub(crate) imported_from: Option<u64>,
    /// A device's default pool: never destroyed.
    pub(crate) default: bool,
}

impl Pool {
    /// A pool imported from the exported pool `source` on `device`.
    pub(crate) fn imported(source: u64, device: c_int) -> Pool {
        Pool { device, exportable: false, imported_from: Some(source), default: false }
    }
}

/// A world's pools.
pub(crate) struct Pools {
    /// Every pool made or imported, and the default ones.
    pub(crate) pools: Registry<Pool>,
    /// The default pool of each device, once made.
    pub(crate) defaults: BTreeMap<c_int, u64>,
}

impl Pools {
    /// No pool.
    pub(crate) const fn new() -> Pools {
        Pools { pools: Registry::new("memory pool", CUresult::CUDA_ERROR_INVALID_VALUE), defaults: BTreeMap::new() }
    }
}

/// The settable attributes of one pool.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) follow_event_dependencies: c_int,
    pub(crate) allow_opportunistic: c_int,
    pub(crate) allow_internal_dependencies: c_int,
    pub(crate) release_threshold: u64,
}

/// A new pool's settings (the CUDA documentation's defaults).
pub(crate) const DEFAULT: Settings = Settings {
    follow_event_dependencies: 1,
    allow_opportunistic: 1,
    allow_internal_dependencies: 1,
    release_threshold: 0,
};

/// The attributes set on a world's pools, and each device's current pool.
pub(crate) struct PoolSettings {
    /// Attributes set, by pool.
    pub(crate) settings: BTreeMap<u64, Settings>,
    /// The pool set with `cuDeviceSetMemPool`, by device.
    pub(crate) current: BTreeMap<c_int, u64>,
}

impl PoolSettings {
    /// Nothing set.
    pub(crate) const fn new() -> PoolSettings {
        PoolSettings { settings: BTreeMap::new(), current: BTreeMap::new() }
    }
}

/// The first "file descriptor" handed out.
const FIRST_FD: c_int = 1000;

/// Pools exported as "file descriptors" (unique numbers, not real descriptors).
pub(crate) struct Fds {
    /// The next number.
    pub(crate) next: c_int,
    /// Pool exported under each descriptor.
    pub(crate) pools: BTreeMap<c_int, u64>,
}

impl Fds {
    /// None exported.
    pub(crate) const fn new() -> Fds {
        Fds { next: FIRST_FD, pools: BTreeMap::new() }
    }
}
