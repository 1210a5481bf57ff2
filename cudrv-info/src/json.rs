//! The JSON form of a [`Report`], written through serde. The schema (version
//! [`SCHEMA_VERSION`]) is documented in `cudrv-info/README.md`; a change that removes or
//! retypes a key raises the version.

use std::ffi::c_int;

use cudrv::version::display;
use cudrv::EntryKind;
use serde::Serialize;

use crate::render::driver_label;
use crate::report::{compute_mode_name, state_code, state_text, Device, Entry, Origin, Report, Summary, Unit};

/// The version of the JSON schema; raised when a key is removed or changes meaning or type.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole output.
#[derive(Serialize)]
struct Output {
    schema_version: u32,
    tool_version: &'static str,
    /// The CUDA version of the pinned header the entry table was generated from.
    header_version: String,
    header_version_code: u32,
    origin: &'static str,
    /// This machine's driver (or the library named); empty when the stand-in is shown.
    #[serde(flatten)]
    machine: Section,
    /// The bundled stand-in's report, when it is what is shown; else `null`.
    stand_in: Option<StandIn>,
}

/// A driver's report.
#[derive(Serialize, Default)]
struct Section {
    driver: Option<DriverJson>,
    device_count: Option<c_int>,
    devices: Vec<DeviceJson>,
    devices_error: Option<String>,
    summary: Option<SummaryJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<Vec<EntryJson>>,
    /// With `--entry`: the answer, `null` if the header has no such entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<Option<EntryJson>>,
}

#[derive(Serialize)]
struct StandIn {
    /// Why the stand-in is shown: `requested` or `no_driver_found`.
    reason: &'static str,
    #[serde(flatten)]
    report: Section,
}

#[derive(Serialize)]
struct DriverJson {
    label: String,
    source: String,
    file: Option<String>,
    version: String,
    version_code: u32,
    driver_version: String,
    driver_version_code: u32,
    max_version: Option<String>,
    capped: bool,
    get_proc_address: &'static str,
    per_thread_default_stream: bool,
    resolve_time_ms: f64,
}

#[derive(Serialize)]
struct DeviceJson {
    ordinal: c_int,
    error: Option<String>,
    name: Option<String>,
    compute_capability: Option<String>,
    total_mem_bytes: Option<usize>,
    total_mem_gib: Option<f64>,
    uuid: Option<String>,
    pci_bus_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attributes: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
struct GatedJson {
    needs: String,
    needs_code: u32,
    count: usize,
}

#[derive(Serialize)]
struct SummaryJson {
    variants: usize,
    resolved: usize,
    gated: usize,
    gated_by_version: Vec<GatedJson>,
    not_in_driver: usize,
    not_requested: usize,
    no_driver: usize,
    names_bound: usize,
    names_unbound: usize,
}

#[derive(Serialize)]
struct EntryJson {
    name: &'static str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    symbol: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    abi_version: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_thread: Option<bool>,
    /// For a name: the variant it binds, or `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    bound: Option<Option<&'static str>>,
    state: &'static str,
    resolved: bool,
    needs: Option<String>,
    needs_code: Option<u32>,
    detail: String,
}

/// Rounds to `decimals` decimals, so that the JSON shows what the text shows.
fn round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// The report as one JSON object, pretty-printed, ending in a newline.
pub fn json(r: &Report) -> String {
    let section = section(r);
    let (machine, stand_in) = match r.origin {
        Origin::Library => (section, None),
        Origin::StandInRequested => (Section::default(), Some(StandIn { reason: "requested", report: section })),
        Origin::StandInFallback => (Section::default(), Some(StandIn { reason: "no_driver_found", report: section })),
    };
    let output = Output {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION"),
        header_version: display(cudrv::table::HEADER_VERSION),
        header_version_code: cudrv::table::HEADER_VERSION,
        origin: match r.origin {
            Origin::Library => "library",
            Origin::StandInRequested => "stand_in_requested",
            Origin::StandInFallback => "stand_in_no_driver_found",
        },
        machine,
        stand_in,
    };
    // Serialising plain structs with string keys cannot fail; say so if it ever does.
    let mut out = serde_json::to_string_pretty(&output).unwrap_or_else(|e| {
        serde_json::json!({ "schema_version": SCHEMA_VERSION, "error": e.to_string() }).to_string()
    });
    out.push('\n');
    out
}

fn section(r: &Report) -> Section {
    let (device_count, devices, devices_error) = match &r.devices {
        Ok(d) => (Some(d.count), d.list.iter().map(device_json).collect(), None),
        Err(e) => (None, Vec::new(), Some(e.clone())),
    };
    Section {
        driver: Some(driver_json(r)),
        device_count,
        devices,
        devices_error,
        summary: Some(summary_json(&r.summary)),
        entries: r.entries.as_ref().map(|list| list.iter().map(entry_json).collect()),
        entry: r.entry.as_ref().map(|e| e.as_ref().map(entry_json)),
    }
}

fn driver_json(r: &Report) -> DriverJson {
    DriverJson {
        label: driver_label(r),
        source: r.source.clone(),
        file: r.file.clone(),
        version: display(r.version),
        version_code: r.version,
        driver_version: display(r.driver_version),
        driver_version_code: r.driver_version,
        max_version: r.max_version.map(display),
        capped: r.capped(),
        get_proc_address: if r.get_proc_address_v2 { "v2" } else { "v1" },
        per_thread_default_stream: r.per_thread_default_stream,
        resolve_time_ms: round(r.resolve_time.as_secs_f64() * 1000.0, 3),
    }
}

fn device_json(d: &Device) -> DeviceJson {
    let mut j = DeviceJson {
        ordinal: d.ordinal,
        error: None,
        name: None,
        compute_capability: None,
        total_mem_bytes: None,
        total_mem_gib: None,
        uuid: None,
        pci_bus_id: None,
        attributes: None,
    };
    match &d.info {
        Ok(i) => {
            let (major, minor) = i.compute_capability;
            j.name = Some(i.name.clone());
            j.compute_capability = Some(format!("{major}.{minor}"));
            j.total_mem_bytes = Some(i.total_mem);
            j.total_mem_gib = Some(round(i.total_mem_gib(), 2));
            j.uuid = i.uuid.clone();
            j.pci_bus_id = i.pci_bus_id.clone();
            if !i.attributes.is_empty() {
                let map = i.attributes.iter().map(|(a, v)| (a.key.to_string(), attribute_json(a.unit, *v))).collect();
                j.attributes = Some(map);
            }
        }
        Err(e) => j.error = Some(e.clone()),
    }
    j
}

/// A number; a flag as a boolean; a compute mode by name; `null` if unknown.
fn attribute_json(unit: Unit, value: Option<c_int>) -> serde_json::Value {
    use serde_json::Value;
    match (unit, value) {
        (_, None) => Value::Null,
        (Unit::Flag, Some(v)) => Value::Bool(v != 0),
        (Unit::ComputeMode, Some(v)) => compute_mode_name(v).map_or_else(|| Value::from(v), Value::from),
        (Unit::Count | Unit::Bytes | Unit::KHz | Unit::Bits, Some(v)) => Value::from(v),
    }
}

fn summary_json(s: &Summary) -> SummaryJson {
    SummaryJson {
        variants: s.variants,
        resolved: s.resolved,
        gated: s.gated_total(),
        gated_by_version: s
            .gated
            .iter()
            .map(|&(v, n)| GatedJson { needs: display(v), needs_code: v, count: n })
            .collect(),
        not_in_driver: s.not_in_driver,
        not_requested: s.not_requested,
        no_driver: s.other,
        names_bound: s.names_bound,
        names_unbound: s.names_unbound,
    }
}

fn entry_json(e: &Entry) -> EntryJson {
    let info = &e.info;
    let (kind, symbol, abi_version, per_thread, bound) = match info.kind {
        EntryKind::Variant { symbol, version, per_thread } => {
            ("variant", Some(symbol), Some(version), Some(per_thread), None)
        }
        EntryKind::Name { bound } => {
            let abi = match info.availability {
                cudrv::Availability::Resolved { version } => Some(version),
                _ => None,
            };
            ("name", None, abi, None, Some(bound))
        }
        _ => ("other", None, None, None, None),
    };
    EntryJson {
        name: info.name,
        kind,
        symbol,
        abi_version,
        per_thread,
        bound,
        state: state_code(&info.availability),
        resolved: info.availability.is_resolved(),
        needs: e.needs.map(display),
        needs_code: e.needs,
        detail: state_text(&info.availability),
    }
}
