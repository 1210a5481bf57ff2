//! The stand-in driver's entry points: one per variant, with the exact C signature.

use std::fmt::Write;

use crate::emit::{banner, ty};
use crate::model::Model;

/// `standin/src/generated/entries.rs`: the `Table` type (one `Option<Imp<fn>>` field per
/// variant, filled by hand in `standin/src/table.rs`), and one `extern "C"` entry point per
/// variant, generic over the slot `W` of the world it serves (`standin/src/world.rs`). An
/// entry whose field is set runs the prologue its `Imp` declares, then the implementation
/// with its world (a direct call: the field is read at compile time); any other answers
/// as an unsupported call.
pub fn entries(model: &Model) -> String {
    let mut s = banner(model, "the stand-in driver's entry points, one per variant");
    let _ =
        writeln!(s, "use cudrv::sys::*;\nuse core::ffi::c_void;\n\nuse crate::entry::Imp;\nuse crate::world::World;\n");
    let _ = writeln!(s, "/// The header these entries were generated from; must equal cudrv's table.");
    let _ = writeln!(s, "pub(crate) const ENTRY_HEADER_VERSION: u32 = {};", model.header_version);
    let _ = writeln!(s, "/// Number of entries (one per variant).");
    let _ = writeln!(s, "pub(crate) const ENTRY_COUNT: usize = {};\n", model.variants.len());
    let _ = writeln!(s, "/// One field per variant: its implementation and prologue, or `None` (unsupported).");
    let _ = writeln!(s, "pub(crate) struct Table {{");
    for v in &model.variants {
        let params = v.params.iter().map(|(_, t)| ty(t)).collect::<Vec<_>>().join(", ");
        let sep = if params.is_empty() { "" } else { ", " };
        let _ =
            writeln!(s, "    pub(crate) {}: Option<Imp<unsafe fn(&'static World{sep}{params}) -> CUresult>>,", v.ident);
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
        let sep = if args.is_empty() { "" } else { ", " };
        let _ = writeln!(s, "pub(crate) unsafe extern \"C\" fn {id}<const W: usize>({params}) -> CUresult {{");
        let _ = writeln!(s, "    let w = World::at::<W>();");
        let _ = writeln!(s, "    match const {{ crate::table::TABLE.{id} }} {{");
        let _ = writeln!(s, "        Some(imp) => match crate::entry::enter(w, cudrv::call::{id}, imp.gate) {{");
        let _ = writeln!(s, "            Ok(()) => (imp.f)(w{sep}{args}),");
        let _ = writeln!(s, "            Err(status) => status,\n        }},");
        let _ = writeln!(s, "        None => crate::entry::unsupported(w, cudrv::call::{id}),\n    }}\n}}");
    }
    let _ =
        writeln!(s, "\n/// The entry point of variant `index` of `cudrv::table::VARIANTS` in the world of slot `W`,");
    let _ = writeln!(s, "/// null if there is none.");
    let _ = writeln!(s, "pub(crate) fn entry<const W: usize>(index: usize) -> *mut c_void {{\n    match index {{");
    for (i, v) in model.variants.iter().enumerate() {
        let _ = writeln!(s, "        {i} => {}::<W> as *mut c_void,", v.ident);
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
