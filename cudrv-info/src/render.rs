//! Writing a [`Report`] as text or as one JSON object.

use std::fmt::Write;

use cudrv::version::display;
use cudrv::{EntryInfo, EntryKind};

use crate::json::Json;
use crate::report::{state_code, Device, Origin, Report, Summary};

/// The first line of the text report: what driver this is.
pub fn driver_label(r: &Report) -> String {
    let emulated = display(r.driver_version);
    match r.origin {
        Origin::Library => r.source.clone(),
        Origin::StandInRequested => {
            format!("cudrv stand-in (emulated CUDA {emulated}; requested with --driver stand-in)")
        }
        Origin::StandInFallback => {
            format!("cudrv stand-in (emulated CUDA {emulated}; no NVIDIA driver on this machine)")
        }
    }
}

/// The version line: the version cudrv behaves as, and how a cap changed it.
fn version_text(r: &Report) -> String {
    let shown = display(r.version);
    match r.max_version {
        Some(cap) if r.capped() => {
            format!("{shown} (capped at {}; the driver reports {})", display(cap), display(r.driver_version))
        }
        Some(cap) => format!("{shown} (the cap {} does not lower it)", display(cap)),
        None => shown,
    }
}

/// `needs 13.1: 12, needs 13.2: 9`.
fn gated_text(s: &Summary) -> String {
    s.gated.iter().map(|(v, n)| format!("needs {}: {n}", display(*v))).collect::<Vec<_>>().join(", ")
}

/// The report as text, ending in a newline.
pub fn text(r: &Report) -> String {
    let mut o = String::new();
    // Writing to a String cannot fail; the results are ignored below.
    let _ = writeln!(o, "driver: {}", driver_label(r));
    if r.origin.is_stand_in() {
        let _ = writeln!(o, "source: {}", r.source);
    }
    if let Some(file) = r.file.as_deref().filter(|f| *f != r.source) {
        let _ = writeln!(o, "file: {file}");
    }
    let _ = writeln!(o, "version: {}", version_text(r));
    let bootstrap = if r.get_proc_address_v2 { "cuGetProcAddress_v2" } else { "cuGetProcAddress (11.x form)" };
    let _ = writeln!(o, "bootstrap: {bootstrap}");
    let ptds = if r.per_thread_default_stream { "on" } else { "off" };
    let _ = writeln!(o, "per-thread default stream: {ptds}");
    let _ = writeln!(o, "resolved in: {:.2} ms", r.resolve_time.as_secs_f64() * 1000.0);
    devices_text(&mut o, &r.devices);
    summary_text(&mut o, &r.summary);
    if !r.entries.is_empty() {
        entries_text(&mut o, &r.entries);
    }
    o
}

fn devices_text(o: &mut String, devices: &Result<Vec<Device>, String>) {
    match devices {
        Err(e) => {
            let _ = writeln!(o, "devices: unavailable: {e}");
        }
        Ok(list) => {
            let _ = writeln!(o, "devices: {}", list.len());
            for d in list {
                match &d.info {
                    Ok(i) => {
                        let (major, minor) = i.compute_capability;
                        let gib = i.total_mem_gib();
                        let _ = writeln!(
                            o,
                            "  {}: {}, compute capability {major}.{minor}, {gib:.1} GiB",
                            d.ordinal, i.name
                        );
                    }
                    Err(e) => {
                        let _ = writeln!(o, "  {}: {e}", d.ordinal);
                    }
                }
            }
        }
    }
}

fn summary_text(o: &mut String, s: &Summary) {
    let _ = writeln!(o, "entry table: {} variants", s.variants);
    let _ = writeln!(o, "  resolved: {}", s.resolved);
    let gated = s.gated_total();
    if gated == 0 {
        let _ = writeln!(o, "  gated by the driver version: 0");
    } else {
        let _ = writeln!(o, "  gated by the driver version: {gated} ({})", gated_text(s));
    }
    let _ = writeln!(o, "  not in this driver: {}", s.not_in_driver);
    let _ = writeln!(o, "  not requested (per-thread, needs --per-thread-default-stream): {}", s.not_requested);
    if s.other > 0 {
        let _ = writeln!(o, "  no driver loaded: {}", s.other);
    }
    let _ = writeln!(o, "unversioned names: {} bound, {} not bound", s.names_bound, s.names_unbound);
}

fn entries_text(o: &mut String, entries: &[EntryInfo]) {
    let (variants, names): (Vec<&EntryInfo>, Vec<&EntryInfo>) =
        entries.iter().partition(|e| matches!(e.kind, EntryKind::Variant { .. }));
    let width = |list: &[&EntryInfo]| list.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let w = width(&variants);
    let _ = writeln!(o, "variants:");
    for e in &variants {
        let _ = writeln!(o, "  {:<w$}  {}", e.name, e.availability);
    }
    let w = width(&names);
    let _ = writeln!(o, "names:");
    for e in &names {
        match e.kind {
            EntryKind::Name { bound: Some(b) } => {
                let _ = writeln!(o, "  {:<w$}  {}, bound to {b}", e.name, e.availability);
            }
            _ => {
                let _ = writeln!(o, "  {:<w$}  {}, bound to nothing", e.name, e.availability);
            }
        }
    }
}

/// The report as one JSON object, ending in a newline.
pub fn json(r: &Report) -> String {
    let mut fields = vec![
        ("stand_in", Json::Bool(r.origin.is_stand_in())),
        (
            "origin",
            Json::str(match r.origin {
                Origin::Library => "library",
                Origin::StandInRequested => "stand_in_requested",
                Origin::StandInFallback => "stand_in_no_driver_found",
            }),
        ),
        ("driver", driver_json(r)),
    ];
    match &r.devices {
        Ok(list) => {
            fields.push(("devices", Json::Array(list.iter().map(device_json).collect())));
            fields.push(("devices_error", Json::Null));
        }
        Err(e) => {
            fields.push(("devices", Json::Array(Vec::new())));
            fields.push(("devices_error", Json::str(e.as_str())));
        }
    }
    fields.push(("summary", summary_json(&r.summary)));
    if !r.entries.is_empty() {
        let entries = r.entries.iter().map(entry_json).collect();
        fields.push(("entries", Json::Array(entries)));
    }
    let mut out = Json::Object(fields).to_text();
    out.push('\n');
    out
}

fn driver_json(r: &Report) -> Json {
    Json::Object(vec![
        ("label", Json::str(driver_label(r))),
        ("source", Json::str(r.source.as_str())),
        ("file", r.file.as_deref().map_or(Json::Null, Json::str)),
        ("version", Json::str(display(r.version))),
        ("version_code", Json::int(r.version)),
        ("driver_version", Json::str(display(r.driver_version))),
        ("driver_version_code", Json::int(r.driver_version)),
        ("max_version", Json::opt_str(r.max_version.map(display))),
        ("capped", Json::Bool(r.capped())),
        ("get_proc_address", Json::str(if r.get_proc_address_v2 { "v2" } else { "v1" })),
        ("per_thread_default_stream", Json::Bool(r.per_thread_default_stream)),
        ("resolve_time_ms", Json::float(r.resolve_time.as_secs_f64() * 1000.0, 3)),
    ])
}

fn device_json(d: &Device) -> Json {
    let mut fields = vec![("ordinal", Json::int(d.ordinal))];
    match &d.info {
        Ok(i) => {
            let (major, minor) = i.compute_capability;
            fields.push(("name", Json::str(i.name.as_str())));
            fields.push(("compute_capability", Json::str(format!("{major}.{minor}"))));
            fields.push(("total_mem_bytes", Json::count(i.total_mem)));
            fields.push(("total_mem_gib", Json::float(i.total_mem_gib(), 2)));
        }
        Err(e) => fields.push(("error", Json::str(e.as_str()))),
    }
    Json::Object(fields)
}

fn summary_json(s: &Summary) -> Json {
    let by_version = s
        .gated
        .iter()
        .map(|(v, n)| Json::Object(vec![("needs", Json::str(display(*v))), ("count", Json::count(*n))]))
        .collect();
    Json::Object(vec![
        ("variants", Json::count(s.variants)),
        ("resolved", Json::count(s.resolved)),
        ("gated", Json::count(s.gated_total())),
        ("gated_by_version", Json::Array(by_version)),
        ("not_in_driver", Json::count(s.not_in_driver)),
        ("not_requested", Json::count(s.not_requested)),
        ("no_driver", Json::count(s.other)),
        ("names_bound", Json::count(s.names_bound)),
        ("names_unbound", Json::count(s.names_unbound)),
    ])
}

fn entry_json(e: &EntryInfo) -> Json {
    let mut fields = vec![("name", Json::str(e.name))];
    match e.kind {
        EntryKind::Variant { symbol, version, per_thread } => {
            fields.push(("kind", Json::str("variant")));
            fields.push(("symbol", Json::str(symbol)));
            fields.push(("abi_version", Json::int(version)));
            fields.push(("per_thread", Json::Bool(per_thread)));
        }
        EntryKind::Name { bound } => {
            fields.push(("kind", Json::str("name")));
            fields.push(("bound", Json::opt_str(bound)));
        }
    }
    fields.push(("state", Json::str(state_code(&e.availability))));
    if let cudrv::Availability::NeedsDriver { version } = e.availability {
        fields.push(("needs", Json::str(display(version))));
    }
    fields.push(("detail", Json::str(e.availability.to_string())));
    Json::Object(fields)
}
