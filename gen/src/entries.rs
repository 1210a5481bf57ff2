//! The stand-in driver's entry points: one per variant, with the exact C signature.

use std::fmt::Write;

use crate::emit::{banner, ty};
use crate::model::Model;

/// `standin/src/generated/entries.rs`: the `Table` type (one `Option<Imp<fn>>` field per
/// variant, filled by hand in `standin/src/table.rs`), and one `extern "C"` entry point per
/// variant. An entry whose field is set runs the prologue its `Imp` declares, then the
/// implementation (a direct call: the field is read at compile time); any other answers as
/// an unsupported call.
pub fn entries(model: &Model) -> String {
    let mut s = banner(model, "the stand-in driver's entry points, one per variant");
    let _ = writeln!(s, "use cudrv::sys::*;\nuse core::ffi::c_void;\n\nuse crate::entry::Imp;\n");
    let _ = writeln!(s, "/// The header these entries were generated from; must equal cudrv's table.");
    let _ = writeln!(s, "pub(crate) const ENTRY_HEADER_VERSION: u32 = {};", model.header_version);
    let _ = writeln!(s, "/// Number of entries (one per variant).");
    let _ = writeln!(s, "pub(crate) const ENTRY_COUNT: usize = {};\n", model.variants.len());
    let _ = writeln!(s, "/// One field per variant: its implementation and prologue, or `None` (unsupported).");
    let _ = writeln!(s, "pub(crate) struct Table {{");
    for v in &model.variants {
        let params = v.params.iter().map(|(_, t)| ty(t)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(s, "    pub(crate) {}: Option<Imp<unsafe fn({params}) -> CUresult>>,", v.ident);
    }
    let _ = writeln!(s, "}}\n\nimpl Table {{");
    let _ = writeln!(s, "    /// No variant implemented: `..Table::NONE` completes a table.");
    let _ = writeln!(s, "    pub(crate) const NONE: Table = Table {{");
    for v in &model.variants {
        let _ = writeln!(s, "        {}: None,", v.ident);
    }
    let _ = writeln!(s, "    }};\n}}\n");
    for v in &model.variants {
        let params = v.params.iter().map(|(n, t)| format!("{n}: {}", ty(t))).collect::<Vec<_>>().join(", ");
        let args = v.params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        let id = &v.ident;
        let _ = writeln!(s, "pub(crate) unsafe extern \"C\" fn {id}({params}) -> CUresult {{");
        let _ = writeln!(s, "    match const {{ crate::table::TABLE.{id} }} {{");
        let _ = writeln!(s, "        Some(imp) => match crate::entry::enter(cudrv::call::{id}, imp.gate) {{");
        let _ = writeln!(s, "            Ok(()) => (imp.f)({args}),");
        let _ = writeln!(s, "            Err(status) => status,\n        }},");
        let _ = writeln!(s, "        None => crate::entry::unsupported(cudrv::call::{id}),\n    }}\n}}");
    }
    let _ = writeln!(s, "\n/// The entry point of variant `index` of `cudrv::table::VARIANTS`, null if there is none.");
    let _ = writeln!(s, "pub(crate) fn entry(index: usize) -> *mut c_void {{\n    match index {{");
    for (i, v) in model.variants.iter().enumerate() {
        let _ = writeln!(s, "        {i} => {} as *mut c_void,", v.ident);
    }
    let _ = writeln!(s, "        _ => core::ptr::null_mut(),\n    }}\n}}\n");
    let _ = writeln!(s, "/// Whether `table.rs` implements variant `index`.");
    let _ = writeln!(s, "#[cfg(test)]");
    let _ = writeln!(s, "pub(crate) fn implemented(index: usize) -> bool {{\n    match index {{");
    for (i, v) in model.variants.iter().enumerate() {
        let _ = writeln!(s, "        {i} => const {{ crate::table::TABLE.{}.is_some() }},", v.ident);
    }
    let _ = writeln!(s, "        _ => false,\n    }}\n}}");
    s
}
