//! Generates cudrv's committed bindings from a CUDA header set.
//!
//! Input: `cuda.h` and `cudaTypedefs.h` (through cudrv's `wrapper.h`). Output:
//! - `sys.rs`: bindgen's types, enums, constants and `PFN_*` typedefs (no function
//!   declarations: cudrv never links the driver).
//! - `table.rs`: one `VariantSpec` per `PFN_<name>_v<version>[_ptds|_ptsz]` typedef and
//!   one `NameSpec` per distinct name, with the variants its unversioned form may bind.
//! - `p.rs` / `pw.rs` / `pc.rs`: a silent, a reporting and a checked wrapper for every
//!   variant and every name.
//! - `calls.rs`: one `Call` constant per variant and name, for errors and reports.
//! - `typed.rs`: a safe typed form of every entry point whose arguments are handles,
//!   plain values and single in- or out-values (see [`typed`]).
//! - the stand-in driver's `entries.rs`: one entry point with the exact C signature per
//!   variant, and the `Table` type that `standin/src/table.rs` fills.
//! - the stand-in driver's `exports.rs`: one exported C function per name cuda.h declares
//!   (`cuMemAlloc`, `cuMemAlloc_v2`, `cuMemcpyHtoD_v2_ptds`, ...), with its variant's
//!   signature, forwarding to what the stand-in answers for that variant.
//! - the stand-in driver's `interop.rs`: the names the driver exports outside cuda.h
//!   (profiler, GL, EGL, VDPAU, private), answering as the H200 was recorded to (see
//!   [`interop`]).
//!
//! Everything is derived from the headers; nothing here names a CUDA function.

mod emit;
mod entries;
mod interop;
mod model;
mod typed;

use std::fs;
use std::path::Path;

pub use interop::Facts;
pub use model::{ArgKind, CudaH, Export, Model, Name, Variant};

/// Where the generated files go.
pub struct Outputs<'a> {
    /// Folder for `sys.rs`, `table.rs`, `p.rs`, `pw.rs`, `pc.rs`, `calls.rs` (cudrv's `src/generated`).
    pub cudrv: &'a Path,
    /// Folder for the stand-in's `entries.rs` and `exports.rs`, if wanted.
    pub standin: Option<&'a Path>,
    /// With `standin`: the recorded facts its `interop.rs` (the names the driver exports
    /// outside cuda.h) is generated from, the interop headers being in the include folder.
    pub interop: Option<Facts<'a>>,
}

/// Runs bindgen on `wrapper` with `include` on the include path and returns its output.
/// With `internal`, `__CUDA_API_VERSION_INTERNAL` is defined: cudaTypedefs.h then also
/// declares the older versioned typedefs (`PFN_cuMemAlloc_v2000`, ...).
pub fn run_bindgen(wrapper: &Path, include: &Path, internal: bool) -> Result<String, String> {
    let mut builder =
        bindgen::Builder::default().header(wrapper.to_string_lossy()).clang_arg(format!("-I{}", include.display()));
    if internal {
        builder = builder.clang_arg("-D__CUDA_API_VERSION_INTERNAL");
    }
    let bindings = builder
        .allowlist_file(r".*[/\\]cuda\.h")
        .allowlist_file(r".*[/\\]cudaTypedefs\.h")
        .default_enum_style(bindgen::EnumVariation::NewType { is_bitfield: false, is_global: false })
        .derive_default(true)
        .derive_eq(true)
        .layout_tests(false)
        .generate_comments(false)
        .formatter(bindgen::Formatter::None)
        .generate()
        .map_err(|e| format!("bindgen failed on {}: {e}", wrapper.display()))?;
    Ok(bindings.to_string())
}

/// What cuda.h's macros turn each of `names` into, as the C preprocessor sees it, in
/// normal or per-thread mode (`CUDA_API_PER_THREAD_DEFAULT_STREAM` defined).
///
/// A probe translation unit includes `wrapper` and, for every name, expands
/// `PROBE(cuMemAlloc)` to `extern int __cudrv_probe_cuMemAlloc__cuMemAlloc_v2;`: the
/// first half pastes the name unexpanded, the second is the name after macro expansion.
/// bindgen (libclang) reports the variables; the names come back from theirs.
pub fn probe_cuda_h(
    wrapper: &Path,
    include: &Path,
    names: &[String],
    per_thread: bool,
) -> Result<std::collections::HashMap<String, String>, String> {
    const PREFIX: &str = "__cudrv_probe_";
    let wrapper = fs::canonicalize(wrapper).map_err(|e| format!("{}: {e}", wrapper.display()))?;
    let mut probe = format!(
        "#include \"{}\"\n\
         #define CUDRV_PROBE__(p, e) extern int p##__##e;\n\
         #define CUDRV_PROBE_(p, e) CUDRV_PROBE__(p, e)\n\
         #define CUDRV_PROBE(n) CUDRV_PROBE_({PREFIX}##n, n)\n",
        wrapper.display()
    );
    for n in names {
        probe.push_str(&format!("CUDRV_PROBE({n})\n"));
    }
    let mut builder = bindgen::Builder::default()
        .header_contents("cudrv_probe.h", &probe)
        .clang_arg(format!("-I{}", include.display()))
        .allowlist_var(format!("{PREFIX}.*"))
        .generate_comments(false)
        .layout_tests(false)
        .formatter(bindgen::Formatter::None);
    if per_thread {
        builder = builder.clang_arg("-DCUDA_API_PER_THREAD_DEFAULT_STREAM");
    }
    let raw = builder.generate().map_err(|e| format!("bindgen failed on the cuda.h probe: {e}"))?.to_string();
    let file = syn::parse_file(&raw).map_err(|e| format!("cannot parse the probe's bindgen output: {e}"))?;
    let mut out = std::collections::HashMap::new();
    for item in &file.items {
        let syn::Item::ForeignMod(m) = item else { continue };
        for fi in &m.items {
            let syn::ForeignItem::Static(s) = fi else { continue };
            let ident = s.ident.to_string();
            if let Some((name, expansion)) = ident.strip_prefix(PREFIX).and_then(|r| r.split_once("__")) {
                out.insert(name.to_string(), expansion.to_string());
            }
        }
    }
    if let Some(missing) = names.iter().find(|n| !out.contains_key(*n)) {
        return Err(format!("the cuda.h probe did not report `{missing}`"));
    }
    Ok(out)
}

/// The functions a bindgen output declares, with their parameters.
fn declared_functions(file: &syn::File) -> Result<std::collections::HashMap<String, Vec<(String, syn::Type)>>, String> {
    let mut out = std::collections::HashMap::new();
    for item in &file.items {
        if let syn::Item::ForeignMod(m) = item {
            for fi in &m.items {
                if let syn::ForeignItem::Fn(f) = fi {
                    out.insert(f.sig.ident.to_string(), model::params_of(f.sig.inputs.iter())?);
                }
            }
        }
    }
    Ok(out)
}

/// Generates every output file from the headers in `include`.
pub fn generate(wrapper: &Path, include: &Path, out: &Outputs<'_>) -> Result<Model, String> {
    let parse = |internal| -> Result<syn::File, String> {
        let raw = run_bindgen(wrapper, include, internal)?;
        syn::parse_file(&raw).map_err(|e| format!("cannot parse bindgen output: {e}"))
    };
    let mut file = parse(false)?;
    let internal = parse(true)?;
    let exported = declared_functions(&internal)?;
    merge_older_typedefs(&mut file, internal);
    let symbols = model::pfn_symbols(&file);
    let cuda = CudaH {
        expands_to: probe_cuda_h(wrapper, include, &symbols, false)?,
        expands_to_per_thread: probe_cuda_h(wrapper, include, &symbols, true)?,
        exported,
    };
    let model = Model::build(&file, &cuda)?;
    let files = emit::emit(&file, &model)?;
    let typed = typed::typed(&file, &model, &typed::Docs::read(include)?);
    fs::create_dir_all(out.cudrv).map_err(|e| format!("{}: {e}", out.cudrv.display()))?;
    let all = [
        ("sys.rs", &files.sys),
        ("table.rs", &files.table),
        ("p.rs", &files.p),
        ("pw.rs", &files.pw),
        ("pc.rs", &files.pc),
        ("calls.rs", &files.calls),
        ("typed.rs", &typed),
    ];
    for (name, text) in all {
        write(&out.cudrv.join(name), text)?;
    }
    if let Some(dir) = out.standin {
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write(&dir.join("entries.rs"), &entries::entries(&model))?;
        write(&dir.join("exports.rs"), &files.exports)?;
        if let Some(facts) = &out.interop {
            let cuda_exports = model.exports.iter().map(|e| e.name.clone()).collect();
            write(&dir.join("interop.rs"), &interop::generate(include, facts, &cuda_exports)?)?;
        }
    }
    Ok(model)
}

/// Adds what only the internal pass declares (the older `PFN_*` typedefs and the `_v1`
/// types they use) to the public pass, keeping the public pass's definitions of the rest.
fn merge_older_typedefs(public: &mut syn::File, internal: syn::File) {
    use std::collections::HashSet;
    use syn::Item;
    fn ident(item: &Item) -> Option<String> {
        match item {
            Item::Type(t) => Some(t.ident.to_string()),
            Item::Struct(s) => Some(s.ident.to_string()),
            Item::Union(u) => Some(u.ident.to_string()),
            Item::Const(c) => Some(c.ident.to_string()),
            _ => None,
        }
    }
    fn impl_target(item: &Item) -> Option<String> {
        match item {
            Item::Impl(i) => match &*i.self_ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            _ => None,
        }
    }
    let known: HashSet<String> = public.items.iter().filter_map(ident).collect();
    let mut added = HashSet::new();
    for item in &internal.items {
        if let Some(id) = ident(item) {
            if !known.contains(&id) {
                added.insert(id);
                public.items.push(item.clone());
            }
        }
    }
    for item in internal.items {
        if impl_target(&item).is_some_and(|t| added.contains(&t)) {
            public.items.push(item);
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    // Leave an unchanged file alone so that cargo does not rebuild for nothing.
    if fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
