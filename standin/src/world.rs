//! The World: the one owner of a stand-in driver's state.
//!
//! Everything an emulated driver remembers — its version, whether `cuInit` ran, its
//! devices, contexts and each thread's context stack, streams, events, memory, pools,
//! modules, graphs, user objects, captures, peer access, injected faults and the ledger's
//! records — is a field of one [`World`]. Nothing else in the stand-in keeps driver state
//! (the registry of host kernels is code, not state, and is shared by every world; handle
//! values are unique across worlds, so a handle of one world is unknown to another).
//!
//! The C entry points serve a world chosen at compile time: every generated entry is
//! generic over a slot `W` and reads [`World::at::<W>()`](World::at). Slot 0 is the
//! process-wide default world, which the `cdylib`'s exported symbols and
//! `cudrv_standin::install()` serve; `StandIn::new` and `StandIn::isolated` hand out the
//! others. Worlds live as long as the process (a slot is never reused), so a driver loaded
//! over one never outlives it.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_int, c_uint, CStr};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64};
use std::sync::{Arc, LazyLock, Mutex};

use cudrv::sys::CUresult;

use crate::model::context::Contexts;
use crate::model::faults::Faults;
use crate::model::handles::Registry;
use crate::model::memory::Memory;
use crate::model::{capture, event, graph, green, link, module, pool, primary, stream, user_object};
use crate::run::lock::lock;
use crate::run::queue::Queue;

/// Number of worlds one process can hold (slot 0 is the default world).
pub(crate) const SLOTS: usize = 24;

/// The state of one emulated driver.
pub(crate) struct World {
    /// The emulated driver version (driver form, `12040`); 0 while the slot is unused.
    pub(crate) version: AtomicU32,
    /// Whether the slot was handed out by `StandIn::isolated` (never shared).
    pub(crate) isolated: AtomicBool,
    /// Whether `cuInit` succeeded.
    pub(crate) initialized: AtomicBool,
    /// Whether `shutdown` is in effect (every entry answers CUDA_ERROR_DEINITIALIZED).
    pub(crate) shut_down: AtomicBool,
    /// The number of devices set for this world; -1: `CUDRV_STANDIN_DEVICES`.
    pub(crate) device_count: AtomicI32,
    /// Injected faults.
    pub(crate) faults: Faults,
    /// Every context, and each thread's context stack.
    pub(crate) contexts: Contexts,
    /// Each device's primary context.
    pub(crate) primaries: LazyLock<primary::Primaries>,
    /// Limits set in each context, by context and limit number.
    pub(crate) limits: Mutex<BTreeMap<(u64, c_uint), usize>>,
    /// Streams made by `cuStreamCreate`.
    pub(crate) streams: Mutex<Registry<stream::Stream>>,
    /// Events.
    pub(crate) events: Mutex<Registry<event::Event>>,
    /// Device address ranges and pinned host memory.
    pub(crate) memory: Mutex<Memory>,
    /// Managed allocations' attachment, advice and prefetches (their memory is in `memory`).
    pub(crate) managed: Mutex<crate::model::managed::Managed>,
    /// Memory pools and each device's default pool.
    pub(crate) pools: Mutex<pool::Pools>,
    /// Pool attributes set, and each device's current pool.
    pub(crate) pool_settings: Mutex<pool::PoolSettings>,
    /// Pools exported as "file descriptors".
    pub(crate) ipc_fds: Mutex<pool::Fds>,
    /// Modules, libraries and functions.
    pub(crate) modules: Mutex<module::Modules>,
    /// The address of each module global asked for, by module and name.
    pub(crate) globals: Mutex<BTreeMap<(u64, String), u64>>,
    /// Function and kernel attributes set (`cuFuncSetAttribute`, `cuKernelSetAttribute`),
    /// by handle, device (-1 for a function) and attribute.
    pub(crate) func_attrs: Mutex<BTreeMap<(u64, c_int, u32), c_int>>,
    /// Cache configurations set, by function (device -1), kernel and device, or context
    /// (device -1).
    pub(crate) cache_configs: Mutex<BTreeMap<(u64, c_int), u32>>,
    /// Kernel names handed out by `cuFuncGetName`/`cuKernelGetName` (interned: they live
    /// as long as the process).
    pub(crate) names: Mutex<BTreeMap<String, &'static CStr>>,
    /// Link states.
    pub(crate) links: Mutex<Registry<link::Link>>,
    /// Graphs.
    pub(crate) graphs: Mutex<Registry<graph::Graph>>,
    /// Executable graphs.
    pub(crate) execs: Mutex<Registry<graph::Exec>>,
    /// Graph conditions (`cuGraphConditionalHandleCreate`), by handle (their value's
    /// device address).
    pub(crate) conditionals: Mutex<BTreeMap<u64, graph::Conditional>>,
    /// Graph memory: allocation nodes' allocations and what graphs hold of each device.
    pub(crate) graph_mem: Mutex<crate::model::graph_mem::GraphMem>,
    /// The ids given to graphs and execs.
    pub(crate) graph_ids: Mutex<graph::Ids>,
    /// User objects.
    pub(crate) user_objects: Mutex<Registry<user_object::UserObject>>,
    /// Stream capture sequences.
    pub(crate) captures: Mutex<capture::Captures>,
    /// Numbers for capture sequences.
    pub(crate) next_capture: AtomicU64,
    /// `(context, peer)` pairs with peer access enabled.
    pub(crate) peers: Mutex<BTreeSet<(u64, u64)>>,
    /// Virtual memory: reservations, physical allocations, mappings, exported handles.
    pub(crate) vmm: Mutex<crate::model::vmm::Vmm>,
    /// CUDA arrays, texture and surface objects.
    pub(crate) arrays: Mutex<crate::model::array::Arrays>,
    /// Legacy state: functions' launch configurations, texture and surface references,
    /// contexts' attach counts (`model/legacy.rs`).
    pub(crate) legacy: Mutex<crate::model::legacy::Legacy>,
    /// Green contexts and resource descriptors.
    pub(crate) greens: Mutex<green::Greens>,
    /// Coredump settings and log and notification callbacks (`ctx_device_misc.rs`).
    pub(crate) misc: Mutex<crate::model::misc::Misc>,
    /// Imported external memory and this process's checkpoint state (`model/extres.rs`).
    pub(crate) extres: Mutex<crate::model::extres::ExtRes>,
    /// The driver's own thread, for callbacks that belong to no stream (user object
    /// destructors).
    pub(crate) driver_thread: LazyLock<Arc<Queue>>,
    /// The sanitizer's checks and what it has seen (`sanitize/`).
    pub(crate) sanitizer: crate::sanitize::Sanitizer,
}

/// The worlds of this process, by slot.
static WORLDS: [World; SLOTS] = [const { World::new() }; SLOTS];

impl World {
    /// An unused world (version 0): every registry empty, no context, `cuInit` not run.
    pub(crate) const fn new() -> World {
        World {
            version: AtomicU32::new(0),
            isolated: AtomicBool::new(false),
            initialized: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            device_count: AtomicI32::new(-1),
            faults: Faults::new(),
            contexts: Contexts::new(),
            primaries: LazyLock::new(primary::Primaries::new),
            limits: Mutex::new(BTreeMap::new()),
            streams: Mutex::new(Registry::new("stream", CUresult::CUDA_ERROR_INVALID_HANDLE)),
            events: Mutex::new(Registry::new("event", CUresult::CUDA_ERROR_INVALID_HANDLE)),
            memory: Mutex::new(Memory::new()),
            managed: Mutex::new(crate::model::managed::Managed::new()),
            pools: Mutex::new(pool::Pools::new()),
            pool_settings: Mutex::new(pool::PoolSettings::new()),
            ipc_fds: Mutex::new(pool::Fds::new()),
            modules: Mutex::new(module::Modules::new()),
            globals: Mutex::new(BTreeMap::new()),
            func_attrs: Mutex::new(BTreeMap::new()),
            cache_configs: Mutex::new(BTreeMap::new()),
            names: Mutex::new(BTreeMap::new()),
            links: Mutex::new(Registry::new("link state", CUresult::CUDA_ERROR_INVALID_HANDLE)),
            graphs: Mutex::new(Registry::new("graph", CUresult::CUDA_ERROR_INVALID_VALUE)),
            execs: Mutex::new(Registry::new("graph exec", CUresult::CUDA_ERROR_INVALID_VALUE)),
            conditionals: Mutex::new(BTreeMap::new()),
            graph_mem: Mutex::new(crate::model::graph_mem::GraphMem::new()),
            graph_ids: Mutex::new(graph::Ids::new()),
            user_objects: Mutex::new(Registry::new("user object", CUresult::CUDA_ERROR_INVALID_HANDLE)),
            captures: Mutex::new(capture::Captures::new()),
            next_capture: AtomicU64::new(1),
            peers: Mutex::new(BTreeSet::new()),
            vmm: Mutex::new(crate::model::vmm::Vmm::new()),
            arrays: Mutex::new(crate::model::array::Arrays::new()),
            legacy: Mutex::new(crate::model::legacy::Legacy::new()),
            greens: Mutex::new(green::Greens::new()),
            misc: Mutex::new(crate::model::misc::Misc::new()),
            extres: Mutex::new(crate::model::extres::ExtRes::new()),
            driver_thread: LazyLock::new(Queue::new),
            sanitizer: crate::sanitize::Sanitizer::new(),
        }
    }

    /// Returns the world to the state of a new process, keeping its version: every object,
    /// setting, fault and ledger record is forgotten (memory the program still holds is
    /// freed), `cuInit` has not run. Only for a world nothing uses at the time: no other
    /// thread calling it, no queued work pending (see `StandIn::reset`).
    pub(crate) fn reset(&self) {
        use std::sync::atomic::Ordering::Release;
        // Every field is named here, so a field added to `World` must be said how it
        // resets (the compiler refuses a missing one).
        let World {
            version: _,
            isolated: _,
            initialized,
            shut_down,
            device_count,
            faults: _,
            contexts: _,
            primaries: _,
            limits,
            streams,
            events,
            memory,
            managed,
            pools,
            pool_settings,
            ipc_fds,
            modules,
            globals,
            func_attrs,
            cache_configs,
            names: _,
            links,
            graphs,
            execs,
            conditionals,
            graph_mem,
            graph_ids,
            user_objects,
            captures,
            next_capture: _,
            peers,
            vmm,
            arrays,
            legacy,
            greens,
            misc,
            extres,
            driver_thread: _,
            sanitizer: _,
        } = World::new();
        self.initialized.store(initialized.into_inner(), Release);
        self.shut_down.store(shut_down.into_inner(), Release);
        self.device_count.store(device_count.into_inner(), Release);
        self.faults.reset();
        self.contexts.reset();
        self.primaries.clear();
        replace(&self.limits, limits);
        replace(&self.streams, streams);
        replace(&self.events, events);
        replace(&self.memory, memory);
        replace(&self.managed, managed);
        replace(&self.pools, pools);
        replace(&self.pool_settings, pool_settings);
        replace(&self.ipc_fds, ipc_fds);
        replace(&self.modules, modules);
        replace(&self.globals, globals);
        replace(&self.func_attrs, func_attrs);
        replace(&self.cache_configs, cache_configs);
        replace(&self.links, links);
        replace(&self.graphs, graphs);
        replace(&self.execs, execs);
        replace(&self.conditionals, conditionals);
        replace(&self.graph_mem, graph_mem);
        replace(&self.graph_ids, graph_ids);
        replace(&self.user_objects, user_objects);
        replace(&self.captures, captures);
        replace(&self.peers, peers);
        replace(&self.vmm, vmm);
        replace(&self.arrays, arrays);
        replace(&self.legacy, legacy);
        replace(&self.greens, greens);
        replace(&self.misc, misc);
        replace(&self.extres, extres);
        self.sanitizer.reset();
    }

    /// The world of slot `W` (the default world if `W` is out of range, which the
    /// generated code never asks for).
    #[inline(always)]
    pub(crate) fn at<const W: usize>() -> &'static World {
        let [default, ..] = &WORLDS;
        WORLDS.get(W).unwrap_or(default)
    }

    /// The world of slot `slot`, if there is such a slot.
    pub(crate) fn of(slot: usize) -> Option<&'static World> {
        WORLDS.get(slot)
    }

    /// The slot of this world (0 for a world in no slot, which only unit tests make).
    pub(crate) fn slot(&self) -> usize {
        WORLDS.iter().position(|w| std::ptr::eq(w, self)).unwrap_or(0)
    }

    /// The newest PTX ISA version (major, minor) the emulated driver's JIT accepts.
    pub(crate) fn max_isa(&self) -> (u32, u32) {
        crate::model::ptx::max_isa(self.version.load(std::sync::atomic::Ordering::Acquire))
    }

    /// The number of devices: as set for this world, else `CUDRV_STANDIN_DEVICES`.
    pub(crate) fn device_count(&self) -> c_int {
        crate::model::device::count(&self.device_count)
    }
}

/// Puts `fresh`'s value in `m` (dropping the old one after the lock is released).
fn replace<T>(m: &Mutex<T>, fresh: Mutex<T>) {
    let fresh = fresh.into_inner().unwrap_or_else(|e| e.into_inner());
    let old = std::mem::replace(&mut *lock(m), fresh);
    drop(old);
}
