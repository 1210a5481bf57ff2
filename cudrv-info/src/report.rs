//! Gathering what cudrv-info shows into plain structs: the driver, its devices and the
//! state of its entry-point table. Nothing here prints.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr};
use std::time::Duration;

use cudrv::sys::{CUdevice, CUdevice_attribute, CUresult};
use cudrv::{Availability, CudaError, Driver, EntryInfo, EntryKind};

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
    pub devices: Result<Vec<Device>, String>,
    /// Counts over the table.
    pub summary: Summary,
    /// Every entry with its state; filled only when asked for (`--all`).
    pub entries: Vec<EntryInfo>,
}

impl Report {
    /// Whether a version cap lowered the version cudrv behaves as.
    pub fn capped(&self) -> bool {
        self.version < self.driver_version
    }
}

/// One device: its ordinal and either its details or the failure that stopped reading them.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// The ordinal passed to `cuDeviceGet`.
    pub ordinal: c_int,
    /// The details, or the Display text of the [`CudaError`] of the call that failed.
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
}

impl DeviceInfo {
    /// The memory in GiB.
    pub fn total_mem_gib(&self) -> f64 {
        self.total_mem as f64 / f64::from(1u32 << 30)
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
                        Availability::NoDriver => s.other += 1,
                    }
                }
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
    }
}

/// Builds the report of `driver`. `all` also lists every entry.
pub fn gather(driver: &Driver, origin: Origin, all: bool) -> Report {
    Report {
        origin,
        source: driver.source(),
        file: driver.file().map(|f| f.display().to_string()),
        version: driver.version_code(),
        driver_version: driver.driver_version_code(),
        max_version: driver.options().max_version,
        get_proc_address_v2: driver.uses_get_proc_address_v2(),
        per_thread_default_stream: driver.options().per_thread_default_stream,
        resolve_time: driver.resolve_time(),
        devices: devices(driver),
        summary: Summary::of(driver.entries()),
        entries: if all { driver.entries().collect() } else { Vec::new() },
    }
}

/// The Display text of the error of `call` returning `status`, or `Ok` on success.
fn check(driver: &Driver, call: &'static str, status: CUresult) -> Result<(), String> {
    if status == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::new(driver, call, status).to_string())
    }
}

/// `cuInit(0)`, `cuDeviceGetCount`, then every device.
fn devices(driver: &Driver) -> Result<Vec<Device>, String> {
    let p = driver.p();
    // SAFETY: cuInit takes flags by value.
    check(driver, "cuInit", unsafe { p.cuInit(0) })?;
    let mut count: c_int = 0;
    // SAFETY: `count` is a valid out-pointer.
    check(driver, "cuDeviceGetCount", unsafe { p.cuDeviceGetCount(&mut count) })?;
    Ok((0..count).map(|ordinal| Device { ordinal, info: device(driver, ordinal) }).collect())
}

/// Reads the name, compute capability and memory of device `ordinal`.
fn device(driver: &Driver, ordinal: c_int) -> Result<DeviceInfo, String> {
    let p = driver.p();
    let mut dev: CUdevice = 0;
    // SAFETY: `dev` is a valid out-pointer.
    check(driver, "cuDeviceGet", unsafe { p.cuDeviceGet(&mut dev, ordinal) })?;

    let mut buf: [c_char; 256] = [0; 256];
    let len = c_int::try_from(buf.len()).unwrap_or(c_int::MAX);
    // SAFETY: `buf` has room for `len` bytes.
    check(driver, "cuDeviceGetName", unsafe { p.cuDeviceGetName(buf.as_mut_ptr(), len, dev) })?;
    // Never read past the buffer, even if the driver wrote no NUL.
    if let Some(last) = buf.last_mut() {
        *last = 0;
    }
    // SAFETY: `buf` is NUL-terminated (its last byte is 0).
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();

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

    Ok(DeviceInfo { name, compute_capability: (major, minor), total_mem })
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

    #[test]
    fn counts_add_up() {
        let d = stand_in(13050, LoadOptions::default().with_max_version("12.4").unwrap());
        let r = gather(&d, Origin::StandInRequested, true);
        let s = &r.summary;
        assert!(r.capped());
        assert_eq!(r.version, 12040);
        assert_eq!(r.driver_version, 13050);
        assert!(s.resolved > 0 && s.gated_total() > 0 && s.not_requested > 0);
        assert_eq!(s.resolved + s.gated_total() + s.not_in_driver + s.not_requested + s.other, s.variants);
        assert_eq!(r.entries.len(), s.variants + s.names_bound + s.names_unbound);
        assert!(s.gated.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(s.gated.iter().all(|(v, _)| *v > 12040));
    }

    #[test]
    fn per_thread_option_requests_the_per_thread_variants() {
        let d = stand_in(13050, LoadOptions::default().with_per_thread_default_stream(true));
        let r = gather(&d, Origin::StandInRequested, false);
        assert_eq!(r.summary.not_requested, 0);
        assert!(r.per_thread_default_stream);
        assert!(r.entries.is_empty());
    }

    #[test]
    fn reads_the_stand_in_device() {
        let d = stand_in(13050, LoadOptions::default());
        let devices = devices(&d).unwrap();
        let info = devices[0].info.as_ref().unwrap();
        assert_eq!(info.name, cudrv_standin::DEVICE_NAME);
        assert_eq!(info.compute_capability, cudrv_standin::DEVICE_CC);
        assert_eq!(info.total_mem, cudrv_standin::DEVICE_TOTAL_MEM);
    }

    #[test]
    fn a_failing_device_call_is_shown_not_fatal() {
        let d = stand_in(13050, LoadOptions::default());
        faults::inject_on_this_thread("cuDeviceGetName", CUresult::CUDA_ERROR_INVALID_DEVICE, Times::Once);
        let devices = devices(&d).unwrap();
        let err = devices[0].info.as_ref().unwrap_err();
        assert!(err.starts_with("cuDeviceGetName failed: CUDA_ERROR_INVALID_DEVICE"));

        faults::inject_on_this_thread("cuInit", CUresult::CUDA_ERROR_NO_DEVICE, Times::Once);
        let err = super::devices(&d).unwrap_err();
        assert!(err.starts_with("cuInit failed: CUDA_ERROR_NO_DEVICE"), "{err}");
    }
}
