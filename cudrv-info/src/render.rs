//! Writing a [`Report`] as text (the JSON form is in [`crate::json`]).

use std::ffi::c_int;
use std::fmt::Write;

use cudrv::version::display;
use cudrv::EntryKind;

use crate::report::{compute_mode_name, state_text, Device, Devices, Entry, Origin, Report, Summary, Unit};

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

/// The report as text, ending in a newline. With `--entry`, only the driver and the answer.
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
    if let Some(entry) = &r.entry {
        if let Some(e) = entry {
            entry_text(&mut o, e);
        }
        return o;
    }
    let _ = writeln!(
        o,
        "header: {} (the cuda.h the entry table was generated from)",
        display(cudrv::table::HEADER_VERSION)
    );
    let bootstrap = if r.get_proc_address_v2 { "cuGetProcAddress_v2" } else { "cuGetProcAddress (11.x form)" };
    let _ = writeln!(o, "bootstrap: {bootstrap}");
    let ptds = if r.per_thread_default_stream { "on" } else { "off" };
    let _ = writeln!(o, "per-thread default stream: {ptds}");
    let _ = writeln!(o, "resolved in: {:.2} ms", r.resolve_time.as_secs_f64() * 1000.0);
    devices_text(&mut o, &r.devices);
    summary_text(&mut o, &r.summary);
    if let Some(entries) = &r.entries {
        entries_text(&mut o, entries);
    }
    o
}

/// The answer for one entry (`--entry`).
fn entry_text(o: &mut String, e: &Entry) {
    let info = &e.info;
    let _ = writeln!(o, "entry: {}", info.name);
    match info.kind {
        EntryKind::Variant { symbol, version, per_thread } => {
            let per_thread = if per_thread { ", per-thread default stream" } else { "" };
            let _ = writeln!(o, "kind: variant of {symbol} at ABI {version}{per_thread}");
        }
        EntryKind::Name { bound } => {
            let _ = writeln!(o, "kind: unversioned name");
            let _ = writeln!(o, "bound to: {}", bound.unwrap_or("nothing"));
        }
        _ => {
            let _ = writeln!(o, "kind: other");
        }
    }
    let _ = writeln!(o, "state: {}", state_text(&info.availability));
    if let Some(v) = e.needs {
        let _ = writeln!(o, "needs: driver {}", display(v));
    }
}

/// `80.0 GiB`, `50 MiB`, `48 KiB`, `512 bytes`: the largest unit that divides evenly, else GiB.
fn bytes_text(v: c_int) -> String {
    const KIB: c_int = 1 << 10;
    const MIB: c_int = 1 << 20;
    match v {
        v if v >= MIB && v % MIB == 0 => format!("{} MiB", v / MIB),
        v if v >= KIB && v % KIB == 0 => format!("{} KiB", v / KIB),
        v => format!("{v} bytes"),
    }
}

/// An attribute's value as text.
fn attribute_text(unit: Unit, value: Option<c_int>) -> String {
    let Some(v) = value else {
        return "unknown".to_string();
    };
    match unit {
        Unit::Count => v.to_string(),
        Unit::Bytes => bytes_text(v),
        Unit::KHz => format!("{} MHz", v / 1000),
        Unit::Bits => format!("{v} bits"),
        Unit::Flag => (if v != 0 { "yes" } else { "no" }).to_string(),
        Unit::ComputeMode => compute_mode_name(v).map_or_else(|| format!("unknown ({v})"), str::to_string),
    }
}

fn device_text(o: &mut String, d: &Device) {
    let i = match &d.info {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(o, "  {}: {e}", d.ordinal);
            return;
        }
    };
    let (major, minor) = i.compute_capability;
    let gib = i.total_mem_gib();
    let _ = writeln!(o, "  {}: {}, compute capability {major}.{minor}, {gib:.1} GiB", d.ordinal, i.name);
    let _ = writeln!(o, "     UUID: {}", i.uuid.as_deref().unwrap_or("unknown"));
    let _ = writeln!(o, "     PCI bus id: {}", i.pci_bus_id.as_deref().unwrap_or("unknown"));
    let width = i.attributes.iter().map(|(a, _)| a.label.len()).max().unwrap_or(0);
    for (a, v) in &i.attributes {
        let label = format!("{}:", a.label);
        let _ = writeln!(o, "     {label:<w$} {}", attribute_text(a.unit, *v), w = width + 1);
    }
}

fn devices_text(o: &mut String, devices: &Result<Devices, String>) {
    match devices {
        Err(e) => {
            let _ = writeln!(o, "devices: unavailable: {e}");
        }
        Ok(d) => {
            if d.list.len() == usize::try_from(d.count).unwrap_or(0) {
                let _ = writeln!(o, "devices: {}", d.count);
            } else {
                let _ = writeln!(o, "devices: {} (showing {})", d.count, d.list.len());
            }
            for device in &d.list {
                device_text(o, device);
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

fn entries_text(o: &mut String, entries: &[Entry]) {
    let (variants, names): (Vec<&Entry>, Vec<&Entry>) =
        entries.iter().partition(|e| matches!(e.info.kind, EntryKind::Variant { .. }));
    let width = |list: &[&Entry]| list.iter().map(|e| e.info.name.len()).max().unwrap_or(0);
    let w = width(&variants);
    let _ = writeln!(o, "variants:");
    for e in &variants {
        let _ = writeln!(o, "  {:<w$}  {}", e.info.name, state_text(&e.info.availability));
    }
    let w = width(&names);
    let _ = writeln!(o, "names:");
    for e in &names {
        let bound = match e.info.kind {
            EntryKind::Name { bound: Some(b) } => b,
            _ => "nothing",
        };
        let _ = writeln!(o, "  {:<w$}  {}, bound to {bound}", e.info.name, state_text(&e.info.availability));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_in_their_units() {
        assert_eq!(attribute_text(Unit::Bytes, Some(50 << 20)), "50 MiB");
        assert_eq!(attribute_text(Unit::Bytes, Some(48 << 10)), "48 KiB");
        assert_eq!(attribute_text(Unit::Bytes, Some(1000)), "1000 bytes");
        assert_eq!(attribute_text(Unit::KHz, Some(1_980_000)), "1980 MHz");
        assert_eq!(attribute_text(Unit::Flag, Some(1)), "yes");
        assert_eq!(attribute_text(Unit::ComputeMode, Some(3)), "exclusive_process");
        assert_eq!(attribute_text(Unit::ComputeMode, Some(7)), "unknown (7)");
        assert_eq!(attribute_text(Unit::Count, None), "unknown");
    }
}
