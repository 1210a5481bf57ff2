//! Gathering what cudrv-info shows into plain structs: the driver, its devices and the
//! state of its entry-point table. Nothing here prints.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr};
use std::fmt::Write;
use std::time::Duration;

use cudrv::sys::{CUdevice, CUdevice_attribute, CUresult, CUuuid};
use cudrv::{Availability, Driver, EntryInfo, EntryKind, Missing};

/// Where the reported driver came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A driver library that cudrv opened (the system's or a named one).
    Library,
    /// The bundled stand-in, asked for with `--driver stand-in`.
    StandInRequested,
    /// The bundled stand-in, shown because no NVIDIA driver was found.
    StandInFallback,
}

impl Origin {
    /// Whether the report is of the bundled stand-in.
    pub fn is_stand_in(self) -> bool {
        self != Origin::Library
    }
}

/// The states `--state` selects, as the user names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StateFilter {
    /// Callable.
    Resolved,
    /// Newer than the driver (or than the version cap).
    Gated,
    /// Requested, and the driver did not provide it.
    Missing,
    /// A per-thread default stream variant while that option is off.
    NotRequested,
}

impl StateFilter {
    /// Whether an entry in `availability` is in this state.
    pub fn matches(self, availability: &Availability) -> bool {
        match self {
            StateFilter::Resolved => matches!(availability, Availability::Resolved { .. }),
            StateFilter::Gated => matches!(availability, Availability::NeedsDriver { .. }),
            StateFilter::Missing => matches!(availability, Availability::NotInDriver(_) | Availability::NoDriver),
            StateFilter::NotRequested => matches!(availability, Availability::NotRequested),
        }
    }
}

/// What to gather besides the driver and the table's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// Every device attribute, and every entry (unless `states` narrows them).
    pub all: bool,
    /// List only the entries in these states (implies the listing).
    pub states: Vec<StateFilter>,
    /// Show only this device.
    pub device: Option<c_int>,
    /// Answer for this entry.
    pub entry: Option<String>,
}

impl Request {
    /// Whether the entries are listed.
    pub fn lists_entries(&self) -> bool {
        self.all || !self.states.is_empty()
    }
}

/// Everything cudrv-info reports about one loaded driver.
#[derive(Clone, Debug)]
pub struct Report {
    /// Where the driver came from.
    pub origin: Origin,
    /// `driver.source()`: its path, or "in-process driver".
    pub source: String,
    /// `driver.file()`: the file the loader mapped, when it can say.
    pub file: Option<String>,
    /// The version cudrv behaves as (driver form, `13000`).
    pub version: u32,
    /// What the driver itself reports (driver form), before any cap.
    pub driver_version: u32,
    /// The version cap in effect, if any (driver form).
    pub max_version: Option<u32>,
    /// Whether the table was resolved through `cuGetProcAddress_v2`.
    pub get_proc_address_v2: bool,
    /// Whether the per-thread default stream variants were requested.
    pub per_thread_default_stream: bool,
    /// How long resolving the table took.
    pub resolve_time: Duration,
    /// The devices, or the failure of `cuInit`/`cuDeviceGetCount`.
    pub devices: Result<Devices, String>,
    /// Counts over the table.
    pub summary: Summary,
    /// The entry listing, when asked for (`--all`, `--state`), in the states asked for.
    pub entries: Option<Vec<Entry>>,
    /// The entry asked for with `--entry`; `None` inside if the header has no such entry.
    pub entry: Option<Option<Entry>>,
}

impl Report {
    /// Whether a version cap lowered the version cudrv behaves as.
    pub fn capped(&self) -> bool {
        self.version < self.driver_version
    }
}

/// The devices of a driver.
#[derive(Clone, Debug, PartialEq)]
pub struct Devices {
    /// `cuDeviceGetCount`.
    pub count: c_int,
    /// Every device, or only the one asked for (none if it is out of range).
    pub list: Vec<Device>,
}

/// One device: its ordinal and either its details or the failure that stopped reading them.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// The ordinal passed to `cuDeviceGet`.
    pub ordinal: c_int,
    /// The details, or the text of the error of the call that failed.
    pub info: Result<DeviceInfo, String>,
}

/// What is shown of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `cuDeviceGetName`.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (c_int, c_int),
    /// `cuDeviceTotalMem`, in bytes.
    pub total_mem: usize,
    /// `cuDeviceGetUuid` as `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`; `None` if the driver
    /// does not support the query.
    pub uuid: Option<String>,
    /// `cuDeviceGetPCIBusId` (`0000:19:00.0`); `None` if the driver does not support it.
    pub pci_bus_id: Option<String>,
    /// With `--all`: every attribute of [`ATTRIBUTES`], `None` where the query failed.
    pub attributes: Vec<(&'static Attribute, Option<c_int>)>,
}

impl DeviceInfo {
    /// The memory in GiB.
    pub fn total_mem_gib(&self) -> f64 {
        self.total_mem as f64 / f64::from(1u32 << 30)
    }
}

/// How an attribute's value reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A plain number.
    Count,
    /// Bytes.
    Bytes,
    /// Kilohertz.
    KHz,
    /// Bits.
    Bits,
    /// 0 or 1: no or yes.
    Flag,
    /// A `CUcomputemode`.
    ComputeMode,
}

/// A device attribute shown with `--all`.
#[derive(Debug, PartialEq, Eq)]
pub struct Attribute {
    /// The JSON key.
    pub key: &'static str,
    /// The text label.
    pub label: &'static str,
    /// What is asked of `cuDeviceGetAttribute`.
    pub attribute: CUdevice_attribute,
    /// How the value reads.
    pub unit: Unit,
}

macro_rules! attributes {
    ($($key:literal, $label:literal, $attr:ident, $unit:ident;)*) => {
        /// The attributes `--all` shows, in the order shown: what deviceQuery shows, and more.
        pub static ATTRIBUTES: &[Attribute] = &[$(Attribute {
            key: $key,
            label: $label,
            attribute: CUdevice_attribute::$attr,
            unit: Unit::$unit,
        },)*];
    };
}

attributes! {
    "multiprocessor_count", "multiprocessors", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, Count;
    "clock_rate_khz", "GPU max clock rate", CU_DEVICE_ATTRIBUTE_CLOCK_RATE, KHz;
    "memory_clock_rate_khz", "memory clock rate", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, KHz;
    "global_memory_bus_width_bits", "memory bus width", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, Bits;
    "l2_cache_size_bytes", "L2 cache size", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Bytes;
    "max_persisting_l2_cache_size_bytes", "max persisting L2 cache size",
        CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, Bytes;
    "total_constant_memory_bytes", "total constant memory", CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, Bytes;
    "max_shared_memory_per_block_bytes", "shared memory per block",
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, Bytes;
    "max_shared_memory_per_block_optin_bytes", "shared memory per block (opt-in)",
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, Bytes;
    "max_shared_memory_per_multiprocessor_bytes", "shared memory per multiprocessor",
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, Bytes;
    "max_registers_per_block", "registers per block", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, Count;
    "max_registers_per_multiprocessor", "registers per multiprocessor",
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, Count;
    "warp_size", "warp size", CU_DEVICE_ATTRIBUTE_WARP_SIZE, Count;
    "max_threads_per_multiprocessor", "max threads per multiprocessor",
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, Count;
    "max_threads_per_block", "max threads per block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, Count;
    "max_blocks_per_multiprocessor", "max blocks per multiprocessor",
        CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, Count;
    "max_block_dim_x", "max block dimension x", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, Count;
    "max_block_dim_y", "max block dimension y", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, Count;
    "max_block_dim_z", "max block dimension z", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, Count;
    "max_grid_dim_x", "max grid dimension x", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, Count;
    "max_grid_dim_y", "max grid dimension y", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, Count;
    "max_grid_dim_z", "max grid dimension z", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, Count;
    "max_pitch_bytes", "max memory pitch", CU_DEVICE_ATTRIBUTE_MAX_PITCH, Bytes;
    "texture_alignment_bytes", "texture alignment", CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, Bytes;
    "async_engine_count", "copy engines", CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, Count;
    "concurrent_kernels", "concurrent kernels", CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, Flag;
    "integrated", "integrated GPU", CU_DEVICE_ATTRIBUTE_INTEGRATED, Flag;
    "can_map_host_memory", "can map host memory", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, Flag;
    "kernel_exec_timeout", "kernel run time limit", CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, Flag;
    "ecc_enabled", "ECC enabled", CU_DEVICE_ATTRIBUTE_ECC_ENABLED, Flag;
    "unified_addressing", "unified addressing", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, Flag;
    "managed_memory", "managed memory", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, Flag;
    "concurrent_managed_access", "concurrent managed access", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, Flag;
    "pageable_memory_access", "pageable memory access", CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, Flag;
    "compute_preemption_supported", "compute preemption", CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, Flag;
    "cooperative_launch", "cooperative launch", CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, Flag;
    "cluster_launch", "cluster launch", CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, Flag;
    "stream_priorities_supported", "stream priorities", CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, Flag;
    "memory_pools_supported", "memory pools", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, Flag;
    "virtual_memory_management_supported", "virtual memory management",
        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, Flag;
    "gpu_direct_rdma_supported", "GPUDirect RDMA", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, Flag;
    "tcc_driver", "TCC driver", CU_DEVICE_ATTRIBUTE_TCC_DRIVER, Flag;
    "multi_gpu_board", "multi-GPU board", CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, Flag;
    "compute_mode", "compute mode", CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, ComputeMode;
}

/// The name of a `CUcomputemode` value, as cuda.h's enum says it (lower case).
pub fn compute_mode_name(mode: c_int) -> Option<&'static str> {
    match mode {
        0 => Some("default"),
        2 => Some("prohibited"),
        3 => Some("exclusive_process"),
        _ => None,
    }
}

/// One entry of the table, with the version it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name, kind and state.
    pub info: EntryInfo,
    /// The oldest driver that provides it: a variant's ABI version, or for a name the
    /// oldest of the variants it may bind (with the per-thread option in effect).
    pub needs: Option<u32>,
}

impl Entry {
    /// The entry of `info` in a driver whose per-thread option is `per_thread`.
    pub fn of(info: EntryInfo, per_thread: bool) -> Entry {
        let needs = match info.kind {
            EntryKind::Variant { version, .. } => Some(version),
            EntryKind::Name { .. } => {
                cudrv::table::name_index(info.name).and_then(|i| cudrv::table::NAMES.get(i)).and_then(|n| {
                    n.candidates_for(per_thread)
                        .iter()
                        .filter_map(|&c| cudrv::table::VARIANTS.get(c))
                        .map(|v| v.version)
                        .min()
                })
            }
            _ => None,
        };
        Entry { info, needs }
    }
}

/// Counts over the table: variants by state, and unversioned names bound or not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Number of variants in the table.
    pub variants: usize,
    /// Variants resolved.
    pub resolved: usize,
    /// Variants gated by the driver version: (version they need, count), oldest first.
    pub gated: Vec<(u32, usize)>,
    /// Variants requested that the driver did not provide.
    pub not_in_driver: usize,
    /// Per-thread variants not requested (the per-thread option is off).
    pub not_requested: usize,
    /// Variants in any other state (no driver); 0 for a loaded driver.
    pub other: usize,
    /// Unversioned names that bound a variant.
    pub names_bound: usize,
    /// Unversioned names that bound nothing.
    pub names_unbound: usize,
}

impl Summary {
    /// The number of variants gated by the driver version, over all versions.
    pub fn gated_total(&self) -> usize {
        self.gated.iter().map(|(_, n)| n).sum()
    }

    /// Counts the states of `entries`.
    pub fn of<I: IntoIterator<Item = EntryInfo>>(entries: I) -> Summary {
        let mut s = Summary::default();
        let mut gated = BTreeMap::new();
        for e in entries {
            match e.kind {
                EntryKind::Name { bound: Some(_) } => s.names_bound += 1,
                EntryKind::Name { bound: None } => s.names_unbound += 1,
                EntryKind::Variant { .. } => {
                    s.variants += 1;
                    match e.availability {
                        Availability::Resolved { .. } => s.resolved += 1,
                        Availability::NeedsDriver { version } => {
                            *gated.entry(version).or_insert(0) += 1;
                        }
                        Availability::NotInDriver(_) => s.not_in_driver += 1,
                        Availability::NotRequested => s.not_requested += 1,
                        _ => s.other += 1,
                    }
                }
                _ => s.other += 1,
            }
        }
        s.gated = gated.into_iter().collect();
        s
    }
}

/// A short machine-readable name of an entry's state.
pub fn state_code(availability: &Availability) -> &'static str {
    match availability {
        Availability::Resolved { .. } => "resolved",
        Availability::NeedsDriver { .. } => "needs_driver",
        Availability::NotInDriver(_) => "not_in_driver",
        Availability::NotRequested => "not_requested",
        Availability::NoDriver => "no_driver",
        _ => "other",
    }
}

/// `CUDA_ERROR_UNKNOWN (999)`: a status as written text, named from the pinned header.
pub fn status_text(status: CUresult) -> String {
    match cudrv::table::header_error_name(status.0) {
        Some(name) => format!("{name} ({})", status.0),
        None => format!("unknown CUresult {}", status.0),
    }
}

/// An entry's state as written text (the codes named, never debug text).
pub fn state_text(availability: &Availability) -> String {
    match availability {
        Availability::NotInDriver(Missing::Status(s)) => {
            format!("not in this driver (cuGetProcAddress returned {})", status_text(*s))
        }
        other => other.to_string(),
    }
}

/// Builds the report of `driver`: the driver, its devices, the table's counts, and what
/// `request` asks for besides.
pub fn gather(driver: &Driver, origin: Origin, request: &Request) -> Report {
    let per_thread = driver.options().per_thread_default_stream;
    let entries = request.lists_entries().then(|| {
        driver
            .entries()
            .filter(|e| request.states.is_empty() || request.states.iter().any(|s| s.matches(&e.availability)))
            .map(|e| Entry::of(e, per_thread))
            .collect()
    });
    Report {
        origin,
        source: driver.source(),
        file: driver.file().map(|f| f.display().to_string()),
        version: driver.version_code(),
        driver_version: driver.driver_version_code(),
        max_version: driver.options().max_version,
        get_proc_address_v2: driver.uses_get_proc_address_v2(),
        per_thread_default_stream: per_thread,
        resolve_time: driver.resolve_time(),
        devices: devices(driver, request.device, request.all),
        summary: Summary::of(driver.entries()),
        entries,
        entry: request.entry.as_deref().map(|name| driver.entry(name).map(|e| Entry::of(e, per_thread))),
    }
}

/// The Display text of the error of `call` returning `status`, or `Ok` on success.
fn check(driver: &Driver, call: &'static str, status: CUresult) -> Result<(), String> {
    if status == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call} failed: {}", driver.status_text(status)))
    }
}

/// Like [`check`], but a query the driver does not support (`CUDA_ERROR_NOT_SUPPORTED`, or
/// an entry it does not provide) is `Ok(false)`.
fn check_optional(driver: &Driver, call: &'static str, status: CUresult) -> Result<bool, String> {
    match status {
        CUresult::CUDA_ERROR_NOT_SUPPORTED | CUresult::CUDA_ERROR_NOT_FOUND => Ok(false),
        s => check(driver, call, s).map(|()| true),
    }
}

/// `cuInit(0)`, `cuDeviceGetCount`, then every device (or only `only`, if in range).
fn devices(driver: &Driver, only: Option<c_int>, all: bool) -> Result<Devices, String> {
    let p = driver.p();
    // SAFETY: cuInit takes flags by value.
    check(driver, "cuInit", unsafe { p.cuInit(0) })?;
    let mut count: c_int = 0;
    // SAFETY: `count` is a valid out-pointer.
    check(driver, "cuDeviceGetCount", unsafe { p.cuDeviceGetCount(&mut count) })?;
    let list = (0..count)
        .filter(|o| only.is_none_or(|n| n == *o))
        .map(|ordinal| Device { ordinal, info: device(driver, ordinal, all) })
        .collect();
    Ok(Devices { count, list })
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as nvidia-smi writes a UUID.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let mut s = String::from("GPU");
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 0 | 4 | 6 | 8 | 10) {
            s.push('-');
        }
        // Writing to a String cannot fail.
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Reads a NUL-terminated string that the driver wrote into `buf`; never past its end.
fn c_string(buf: &mut [c_char]) -> String {
    if let Some(last) = buf.last_mut() {
        *last = 0;
    }
    // SAFETY: `buf` is NUL-terminated (its last byte is 0).
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// Reads the details of device `ordinal`; with `all`, every attribute of [`ATTRIBUTES`].
fn device(driver: &Driver, ordinal: c_int, all: bool) -> Result<DeviceInfo, String> {
    let p = driver.p();
    let mut dev: CUdevice = 0;
    // SAFETY: `dev` is a valid out-pointer.
    check(driver, "cuDeviceGet", unsafe { p.cuDeviceGet(&mut dev, ordinal) })?;

    let mut buf: [c_char; 256] = [0; 256];
    let len = c_int::try_from(buf.len()).unwrap_or(c_int::MAX);
    // SAFETY: `buf` has room for `len` bytes.
    check(driver, "cuDeviceGetName", unsafe { p.cuDeviceGetName(buf.as_mut_ptr(), len, dev) })?;
    let name = c_string(&mut buf);

    let attribute = |attrib: CUdevice_attribute| -> Result<c_int, String> {
        let mut v: c_int = 0;
        // SAFETY: `v` is a valid out-pointer.
        check(driver, "cuDeviceGetAttribute", unsafe { p.cuDeviceGetAttribute(&mut v, attrib, dev) })?;
        Ok(v)
    };
    let major = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;

    let mut total_mem: usize = 0;
    // SAFETY: `total_mem` is a valid out-pointer.
    check(driver, "cuDeviceTotalMem", unsafe { p.cuDeviceTotalMem(&mut total_mem, dev) })?;

    let mut raw = CUuuid { bytes: [0; 16] };
    // SAFETY: `raw` is a valid out-pointer.
    let uuid = check_optional(driver, "cuDeviceGetUuid", unsafe { p.cuDeviceGetUuid(&mut raw, dev) })?
        .then(|| format_uuid(&raw.bytes.map(|b| u8::from_ne_bytes(b.to_ne_bytes()))));

    let mut buf: [c_char; 64] = [0; 64];
    let len = c_int::try_from(buf.len()).unwrap_or(c_int::MAX);
    // SAFETY: `buf` has room for `len` bytes.
    let pci = unsafe { p.cuDeviceGetPCIBusId(buf.as_mut_ptr(), len, dev) };
    let pci_bus_id = check_optional(driver, "cuDeviceGetPCIBusId", pci)?.then(|| c_string(&mut buf));

    // An attribute an older driver does not know is shown as unknown, not as a failure.
    let attributes =
        if all { ATTRIBUTES.iter().map(|a| (a, attribute(a.attribute).ok())).collect() } else { Vec::new() };

    Ok(DeviceInfo { name, compute_capability: (major, minor), total_mem, uuid, pci_bus_id, attributes })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use cudrv::LoadOptions;
    use cudrv_standin::{faults, StandIn, Times};

    fn stand_in(version: u32, options: LoadOptions) -> Driver {
        StandIn::new(version).unwrap().load(options).unwrap()
    }

    fn all() -> Request {
        Request { all: true, ..Request::default() }
    }

    #[test]
    fn counts_add_up() {
        let d = stand_in(13050, LoadOptions::default().with_max_version("12.4").unwrap());
        let r = gather(&d, Origin::StandInRequested, &all());
        let s = &r.summary;
        assert!(r.capped());
        assert_eq!(r.version, 12040);
        assert_eq!(r.driver_version, 13050);
        assert!(s.resolved > 0 && s.gated_total() > 0 && s.not_requested > 0);
        assert_eq!(s.resolved + s.gated_total() + s.not_in_driver + s.not_requested + s.other, s.variants);
        assert_eq!(r.entries.unwrap().len(), s.variants + s.names_bound + s.names_unbound);
        assert!(s.gated.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(s.gated.iter().all(|(v, _)| *v > 12040));
    }

    #[test]
    fn per_thread_option_requests_the_per_thread_variants() {
        let d = stand_in(13050, LoadOptions::default().with_per_thread_default_stream(true));
        let r = gather(&d, Origin::StandInRequested, &Request::default());
        assert_eq!(r.summary.not_requested, 0);
        assert!(r.per_thread_default_stream);
        assert!(r.entries.is_none());
    }

    #[test]
    fn state_filters_select_only_their_state() {
        let d = stand_in(13050, LoadOptions::default().with_max_version("12.4").unwrap());
        for (filter, code) in [
            (StateFilter::Resolved, "resolved"),
            (StateFilter::Gated, "needs_driver"),
            (StateFilter::NotRequested, "not_requested"),
        ] {
            let r = gather(&d, Origin::StandInRequested, &Request { states: vec![filter], ..Request::default() });
            let entries = r.entries.unwrap();
            assert!(!entries.is_empty(), "{filter:?}");
            assert!(entries.iter().all(|e| state_code(&e.info.availability) == code), "{filter:?}");
        }
        let r = gather(&d, Origin::StandInRequested, &Request { states: vec![StateFilter::Missing], ..all() });
        assert_eq!(r.entries.unwrap().len(), 0);
    }

    #[test]
    fn an_entry_says_the_version_it_needs() {
        let d = stand_in(13050, LoadOptions::default().with_max_version("12.0").unwrap());
        let entry = |name: &str| {
            let r = gather(&d, Origin::StandInRequested, &Request { entry: Some(name.into()), ..Request::default() });
            r.entry.unwrap()
        };
        let e = entry("cuMemAlloc_v3020").unwrap();
        assert_eq!(e.needs, Some(3020));
        assert!(e.info.availability.is_resolved());
        let e = entry("cuLaunchHostFunc_v13010").unwrap();
        assert_eq!(e.needs, Some(13010));
        assert_eq!(e.info.availability, Availability::NeedsDriver { version: 13010 });
        // A name needs the oldest variant it may bind.
        let e = entry("cuMemAlloc").unwrap();
        assert_eq!(e.needs, Some(3020));
        assert!(entry("cuNoSuchThing").is_none());
    }

    #[test]
    fn reads_the_stand_in_device() {
        let d = stand_in(13050, LoadOptions::default());
        let devices = devices(&d, None, true).unwrap();
        assert_eq!(devices.count, 1);
        let info = devices.list[0].info.as_ref().unwrap();
        assert_eq!(info.name, cudrv_standin::DEVICE_NAME);
        assert_eq!(info.compute_capability, cudrv_standin::DEVICE_CC);
        assert_eq!(info.total_mem, cudrv_standin::DEVICE_TOTAL_MEM);
        // "cudrv-standin-0" and the ordinal.
        assert_eq!(info.uuid.as_deref(), Some("GPU-63756472-762d-7374-616e-64696e2d3000"));
        // As the real driver of docs/driver-facts.md ("Edge cases") answers.
        assert_eq!(info.pci_bus_id.as_deref(), Some("0000:00:06.0"));
        let sm = info.attributes.iter().find(|(a, _)| a.key == "multiprocessor_count").unwrap();
        assert_eq!(sm.1, Some(cudrv_standin::DEVICE_SM_COUNT));
        assert_eq!(info.attributes.len(), ATTRIBUTES.len());
    }

    #[test]
    fn formats_a_uuid_as_nvidia_smi_does() {
        let bytes: [u8; 16] = std::array::from_fn(|i| u8::try_from(i * 17).unwrap());
        assert_eq!(format_uuid(&bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn only_the_device_asked_for_is_read() {
        let d = stand_in(13050, LoadOptions::default());
        let devices = devices(&d, Some(0), false).unwrap();
        assert_eq!(devices.list.len(), 1);
        assert!(devices.list[0].info.as_ref().unwrap().attributes.is_empty());
        let devices = super::devices(&d, Some(5), false).unwrap();
        assert_eq!((devices.count, devices.list.len()), (1, 0));
    }

    #[test]
    fn a_failing_device_call_is_shown_not_fatal() {
        let d = stand_in(13050, LoadOptions::default());
        faults::inject_on_this_thread(cudrv::call::cuDeviceGetName, CUresult::CUDA_ERROR_INVALID_DEVICE, Times::Once);
        let devices = devices(&d, None, false).unwrap();
        let err = devices.list[0].info.as_ref().unwrap_err();
        assert!(err.starts_with("cuDeviceGetName failed: CUDA_ERROR_INVALID_DEVICE"));

        faults::inject_on_this_thread(cudrv::call::cuDeviceGetUuid, CUresult::CUDA_ERROR_UNKNOWN, Times::Once);
        let devices = super::devices(&d, None, false).unwrap();
        let err = devices.list[0].info.as_ref().unwrap_err();
        assert!(err.starts_with("cuDeviceGetUuid failed: CUDA_ERROR_UNKNOWN"), "{err}");

        faults::inject_on_this_thread(cudrv::call::cuInit, CUresult::CUDA_ERROR_NO_DEVICE, Times::Once);
        let err = super::devices(&d, None, false).unwrap_err();
        assert!(err.starts_with("cuInit failed: CUDA_ERROR_NO_DEVICE"), "{err}");
    }

    #[test]
    fn states_name_their_codes() {
        let text = state_text(&Availability::NotInDriver(Missing::Status(CUresult::CUDA_ERROR_UNKNOWN)));
        assert_eq!(text, "not in this driver (cuGetProcAddress returned CUDA_ERROR_UNKNOWN (999))");
        assert_eq!(status_text(CUresult(123_456)), "unknown CUresult 123456");
    }
}
