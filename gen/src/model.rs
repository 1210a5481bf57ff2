//! The entry-point model derived from bindgen's output: variants, names and signatures.

use std::collections::{BTreeMap, HashMap, HashSet};

use quote::ToTokens;
use syn::{FnArg, ForeignItem, Item, Pat, ReturnType, Type};

/// One `PFN_<symbol>_v<version>[_ptds|_ptsz]` typedef.
#[derive(Clone, Debug)]
pub struct Variant {
    /// `cuMemAlloc_v3020`, `cuMemcpyAsync_v7000_ptsz`: the PFN name without `PFN_`.
    pub ident: String,
    /// The symbol requested from `cuGetProcAddress`: `cuMemAlloc`.
    pub symbol: String,
    /// The ABI version it is requested at.
    pub version: u32,
    /// `_ptds`/`_ptsz`: requested with the per-thread default stream flag.
    pub per_thread: bool,
    /// Parameters, named and typed as in the typedef.
    pub params: Vec<(String, Type)>,
    /// The signature with every type alias resolved, for comparison.
    pub canon: String,
    /// The argument a report names (kept under its historical field name).
    pub first_arg: ArgKind,
}

/// One distinct function name and what its unversioned form binds.
#[derive(Clone, Debug)]
pub struct Name {
    pub name: String,
    /// Parameters of the unversioned form (cuda.h's prototype where it has one).
    pub params: Vec<(String, Type)>,
    /// The variant whose typedef the unversioned form is typed with.
    pub typed_as: usize,
    /// Variants (indices into `Model::variants`) the unversioned form may bind, newest
    /// first: the variant cuda.h's macros select (the default), then older variants with
    /// an identical signature. Never a newer one.
    pub candidates: Vec<usize>,
    /// The same for the per-thread default stream variants, when cuda.h maps the name to
    /// a `_ptds`/`_ptsz` symbol with `CUDA_API_PER_THREAD_DEFAULT_STREAM` defined and
    /// cudaTypedefs.h has a typedef for it; empty otherwise (the name then binds
    /// `candidates` in both modes).
    pub per_thread_candidates: Vec<usize>,
    /// Whether cuda.h binds the name to one of its variants (else the newest variant is
    /// the default).
    pub declared: bool,
    /// What cuda.h's macros turn the name into (`cuMemAlloc` -> `cuMemAlloc_v2`).
    pub binds: String,
    /// The argument a report names.
    pub first_arg: ArgKind,
}

/// Which argument a `pw` report names, and how: the first opaque handle (a typedef of a
/// pointer to an opaque `CUxxx_st`), device pointer (`CUdeviceptr`) or device
/// (`CUdevice`, the ordinal) passed by value. Never an out-pointer or anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// No such argument: the report names none.
    None,
    /// The handle at this parameter index, shown as a pointer.
    Handle(usize),
    /// The device pointer at this index, shown in hex.
    DevicePtr(usize),
    /// The device ordinal at this index, shown in decimal.
    Device(usize),
}

/// What cuda.h's macros make of each name, as the C preprocessor sees it (read through
/// libclang by `crate::probe_cuda_h`).
pub struct CudaH {
    /// Name -> the identifier it expands to (`cuMemAlloc` -> `cuMemAlloc_v2`,
    /// `cuGraphInstantiate` -> `cuGraphInstantiateWithFlags`; itself if no macro).
    pub expands_to: HashMap<String, String>,
    /// The same with `CUDA_API_PER_THREAD_DEFAULT_STREAM` defined
    /// (`cuMemcpyHtoD` -> `cuMemcpyHtoD_v2_ptds`).
    pub expands_to_per_thread: HashMap<String, String>,
    /// Every function cuda.h declares with `__CUDA_API_VERSION_INTERNAL` defined, with its
    /// prototype: all the exported names, old ones and per-thread ones included
    /// (`cuMemAlloc`, `cuMemAlloc_v2`, `cuMemcpyHtoD_v2_ptds`).
    pub exported: HashMap<String, Vec<(String, Type)>>,
}

/// One exported name of the driver library and the variant it is.
#[derive(Clone, Debug)]
pub struct Export {
    /// The C symbol: `cuMemAlloc_v2`, `cuMemcpyHtoD_v2_ptds`.
    pub name: String,
    /// The variant (index into `Model::variants`) the real driver binds it to.
    pub variant: usize,
}

pub struct Model {
    pub header_version: u32,
    pub variants: Vec<Variant>,
    pub names: Vec<Name>,
    /// Every exported name cuda.h declares, sorted by name.
    pub exports: Vec<Export>,
}

struct Types {
    aliases: HashMap<String, Type>,
    /// Structs bindgen emits as opaque (`struct CUctx_st { _unused: [u8; 0] }`).
    opaque: HashSet<String>,
}

/// The symbols of every `PFN_<symbol>_v<version>[_ptds|_ptsz]` typedef in bindgen's output.
pub fn pfn_symbols(file: &syn::File) -> Vec<String> {
    let mut out: Vec<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Type(t) => t.ident.to_string().strip_prefix("PFN_").and_then(split_pfn).map(|(s, _, _)| s),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

impl Model {
    pub fn build(file: &syn::File, cuda: &CudaH) -> Result<Model, String> {
        let mut types = Types { aliases: HashMap::new(), opaque: HashSet::new() };
        let mut header_version = None;
        let mut declared: HashMap<String, Vec<(String, Type)>> = HashMap::new();
        for item in &file.items {
            match item {
                Item::Type(t) => {
                    types.aliases.insert(t.ident.to_string(), (*t.ty).clone());
                }
                Item::Struct(s) if is_opaque(s) => {
                    types.opaque.insert(s.ident.to_string());
                }
                Item::Const(c) if c.ident == "CUDA_VERSION" => {
                    header_version = Some(lit_u32(&c.expr)?);
                }
                Item::ForeignMod(m) => {
                    for fi in &m.items {
                        if let ForeignItem::Fn(f) = fi {
                            declared.insert(f.sig.ident.to_string(), params_of(f.sig.inputs.iter())?);
                        }
                    }
                }
                _ => {}
            }
        }
        let header_version = header_version.ok_or("no CUDA_VERSION in cuda.h")?;

        let mut variants = Vec::new();
        for item in &file.items {
            let Item::Type(t) = item else { continue };
            let ident = t.ident.to_string();
            let Some(rest) = ident.strip_prefix("PFN_") else {
                continue;
            };
            let (symbol, version, per_thread) =
                split_pfn(rest).ok_or_else(|| format!("PFN typedef with an unexpected name: {ident}"))?;
            let params =
                pfn_params(&t.ty).ok_or_else(|| format!("{ident}: not a function typedef returning CUresult"))?;
            let canon = types.signature(&params);
            let first_arg = types.report_arg(&params);
            variants.push(Variant { ident: rest.to_string(), symbol, version, per_thread, params, canon, first_arg });
        }
        variants.sort_by(|a, b| (&a.symbol, a.version, a.per_thread).cmp(&(&b.symbol, b.version, b.per_thread)));

        let mut by_symbol: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, v) in variants.iter().enumerate() {
            by_symbol.entry(&v.symbol).or_default().push(i);
        }
        let cx = Ctx { variants: &variants, by_symbol: &by_symbol, declared: &declared, cuda, types: &types };
        let mut names = Vec::new();
        for (symbol, idx) in &by_symbol {
            names.push(build_name(symbol, idx, &cx)?);
        }
        let exports = build_exports(&cx)?;
        let all: HashSet<&str> = names.iter().map(|n| n.name.as_str()).collect();
        if let Some(v) = variants.iter().find(|v| all.contains(v.ident.as_str())) {
            return Err(format!("variant {} collides with a function name", v.ident));
        }
        Ok(Model { header_version, variants, names, exports })
    }
}

struct Ctx<'a> {
    variants: &'a [Variant],
    by_symbol: &'a BTreeMap<&'a str, Vec<usize>>,
    declared: &'a HashMap<String, Vec<(String, Type)>>,
    cuda: &'a CudaH,
    types: &'a Types,
}

impl Ctx<'_> {
    fn variant(&self, i: usize) -> Result<&Variant, String> {
        self.variants.get(i).ok_or_else(|| format!("variant index {i} out of range"))
    }

    /// The variants of `symbol` with this per-thread suffix (`""`, `"_ptds"`, `"_ptsz"`),
    /// oldest first.
    fn of_symbol(&self, symbol: &str, suffix: &str) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .by_symbol
            .get(symbol)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&i| {
                self.variants.get(i).is_some_and(|v| {
                    if suffix.is_empty() {
                        !v.per_thread
                    } else {
                        v.per_thread && v.ident.ends_with(suffix)
                    }
                })
            })
            .collect();
        v.sort_by_key(|&i| self.variants.get(i).map_or(0, |v| v.version));
        v
    }

    /// The variant an exported name stands for. cuda.h declares (with
    /// `__CUDA_API_VERSION_INTERNAL`) one exported name per ABI version of a symbol:
    /// `sym`, `sym_v2`, ..., `sym_vN`, for the N non-per-thread typedefs of
    /// cudaTypedefs.h, oldest first; `sym_vK` is the K-th oldest. `None` if `exported`
    /// is no symbol's; an error if cuda.h and cudaTypedefs.h disagree on how many
    /// versions the symbol has (then the K-th is not known).
    fn exported_variant(&self, exported: &str) -> Result<Option<usize>, String> {
        let (symbol, k) = if self.by_symbol.contains_key(exported) {
            (exported, 1)
        } else {
            match version_suffix(exported) {
                Some((s, k)) if self.by_symbol.contains_key(s) => (s, k),
                _ => return Ok(None),
            }
        };
        let versions = self.of_symbol(symbol, "");
        let mut names: Vec<usize> = self
            .cuda
            .exported
            .keys()
            .filter_map(|e| match version_suffix(e) {
                _ if e == symbol => Some(1),
                Some((s, k)) if s == symbol && !self.by_symbol.contains_key(e.as_str()) => Some(k),
                _ => None,
            })
            .collect();
        names.sort_unstable();
        if names != (1..=versions.len()).collect::<Vec<_>>() {
            return Err(format!(
                "{symbol}: cuda.h declares the exported names {names:?} (1 = unsuffixed, K = _vK) but \
                 cudaTypedefs.h has {} versions of it, so which version `{exported}` is cannot be told",
                versions.len()
            ));
        }
        Ok(k.checked_sub(1).and_then(|k| versions.get(k)).copied())
    }

    /// The per-thread twin of variant `d`: the oldest `suffix` (`_ptds`/`_ptsz`) variant of
    /// its symbol with its signature, no older than it and older than the symbol's next
    /// version.
    fn per_thread_twin(&self, d: &Variant, suffix: &str) -> Option<usize> {
        let next = self
            .of_symbol(&d.symbol, "")
            .into_iter()
            .filter_map(|i| self.variants.get(i).map(|v| v.version))
            .find(|&v| v > d.version)
            .unwrap_or(u32::MAX);
        self.of_symbol(&d.symbol, suffix).into_iter().find(|&i| {
            self.variants.get(i).is_some_and(|v| v.canon == d.canon && v.version >= d.version && v.version < next)
        })
    }
}

/// Every exported name cuda.h declares, each with the variant the driver binds it to:
/// `sym_vK` is the K-th oldest version of `sym` (`exported_variant`), and `X_ptds`/`X_ptsz`
/// the per-thread twin of `X`'s variant. An error if a name is none of these, or if its
/// prototype is not its variant's with every type alias resolved.
fn build_exports(cx: &Ctx<'_>) -> Result<Vec<Export>, String> {
    let mut exported: Vec<(&String, &Vec<(String, Type)>)> = cx.cuda.exported.iter().collect();
    exported.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = Vec::new();
    for (name, prototype) in exported {
        let (base, suffix) = match (name.strip_suffix("_ptds"), name.strip_suffix("_ptsz")) {
            (Some(b), _) => (b, "_ptds"),
            (_, Some(b)) => (b, "_ptsz"),
            _ => (name.as_str(), ""),
        };
        let unknown = || format!("cuda.h declares `{name}`, which is no version of a cudaTypedefs.h symbol");
        let base_variant = cx.exported_variant(base)?.ok_or_else(unknown)?;
        let variant = if suffix.is_empty() {
            base_variant
        } else {
            cx.per_thread_twin(cx.variant(base_variant)?, suffix).ok_or_else(unknown)?
        };
        let v = cx.variant(variant)?;
        if cx.types.signature(prototype) != v.canon {
            return Err(format!("`{name}`: cuda.h's prototype is not {}'s", v.ident));
        }
        out.push(Export { name: name.clone(), variant });
    }
    Ok(out)
}

/// `cuMemAlloc_v2` -> (`cuMemAlloc`, 2).
fn version_suffix(name: &str) -> Option<(&str, usize)> {
    let pos = name.rfind("_v")?;
    let k: usize = name.get(pos + 2..)?.parse().ok()?;
    Some((name.get(..pos)?, k))
}

fn build_name(symbol: &str, idx: &[usize], cx: &Ctx<'_>) -> Result<Name, String> {
    let binds = cx.cuda.expands_to.get(symbol).cloned().unwrap_or_else(|| symbol.to_string());
    let prototype = cx.declared.get(&binds);
    let default = match (prototype, cx.exported_variant(&binds)?) {
        (Some(p), Some(d)) => {
            let v = cx.variant(d)?;
            if cx.types.signature(p) != v.canon {
                return Err(format!(
                    "{symbol}: cuda.h maps it to `{binds}`, whose prototype is not {}'s: the rule that \
                     `_vK` is the K-th oldest version does not hold for this header",
                    v.ident
                ));
            }
            Some((d, p.clone()))
        }
        _ => None,
    };
    let declared = default.is_some();
    let (default, params) = match default {
        Some(d) => d,
        None => {
            // cuda.h binds the name to none of its variants: the newest non-per-thread
            // variant is the default.
            let newest = idx
                .iter()
                .copied()
                .filter(|&i| cx.variants.get(i).is_some_and(|v| !v.per_thread))
                .max_by_key(|&i| cx.variants.get(i).map_or(0, |v| v.version))
                .or_else(|| idx.iter().copied().max_by_key(|&i| cx.variants.get(i).map_or(0, |v| v.version)))
                .ok_or_else(|| format!("{symbol}: no variants"))?;
            (newest, cx.variant(newest)?.params.clone())
        }
    };
    let d = cx.variant(default)?;
    let same_or_older = |list: Vec<usize>, newest: u32| -> Vec<usize> {
        let mut v: Vec<usize> = list
            .into_iter()
            .filter(|&i| cx.variants.get(i).is_some_and(|v| v.canon == d.canon && v.version <= newest))
            .collect();
        v.reverse();
        v
    };
    let suffix = if d.per_thread { d.ident.get(d.ident.len().saturating_sub(5)..).unwrap_or("") } else { "" };
    let candidates = same_or_older(cx.of_symbol(&d.symbol, suffix), d.version);

    // Per-thread mode: cuda.h maps the name to `<binds>_ptds`/`<binds>_ptsz`, the per-thread
    // twin of the default: the oldest per-thread variant of that kind with the default's
    // signature, no older than the default and older than the next version.
    let mut per_thread_candidates = Vec::new();
    if declared {
        let pt = cx.cuda.expands_to_per_thread.get(symbol).map_or(binds.as_str(), String::as_str);
        if pt != binds {
            let (base, suffix) = match (pt.strip_suffix("_ptds"), pt.strip_suffix("_ptsz")) {
                (Some(b), _) => (b, "_ptds"),
                (_, Some(b)) => (b, "_ptsz"),
                _ => ("", ""),
            };
            if base != binds {
                return Err(format!(
                    "{symbol}: cuda.h maps it to `{binds}`, and to `{pt}` in per-thread mode, which is not its per-thread form"
                ));
            }
            if let Some(t) = cx.per_thread_twin(d, suffix) {
                per_thread_candidates = same_or_older(cx.of_symbol(&d.symbol, suffix), cx.variant(t)?.version);
            }
        }
    }
    let first_arg = cx.types.report_arg(&params);
    Ok(Name {
        name: symbol.to_string(),
        params,
        typed_as: default,
        candidates,
        per_thread_candidates,
        declared,
        binds,
        first_arg,
    })
}

/// `cuMemcpyAsync_v7000_ptsz` -> (`cuMemcpyAsync`, 7000, true).
fn split_pfn(rest: &str) -> Option<(String, u32, bool)> {
    let (body, per_thread) = match rest.strip_suffix("_ptds").or_else(|| rest.strip_suffix("_ptsz")) {
        Some(b) => (b, true),
        None => (rest, false),
    };
    let pos = body.rfind("_v")?;
    let symbol = body.get(..pos)?;
    let version = body.get(pos + 2..)?.parse().ok()?;
    Some((symbol.to_string(), version, per_thread))
}

/// `struct X { _unused: [u8; 0] }`: bindgen's form of a struct the header only declares.
fn is_opaque(s: &syn::ItemStruct) -> bool {
    match &s.fields {
        syn::Fields::Named(f) => {
            f.named.len() == 1 && f.named.iter().all(|f| f.ident.as_ref().is_some_and(|i| i == "_unused"))
        }
        _ => false,
    }
}

fn lit_u32(e: &syn::Expr) -> Result<u32, String> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse().map_err(|e| e.to_string()),
        _ => Err("CUDA_VERSION is not an integer".into()),
    }
}

/// `Option<unsafe extern "C" fn(a: A, b: B) -> CUresult>` -> [(a, A), (b, B)].
fn pfn_params(ty: &Type) -> Option<Vec<(String, Type)>> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    let Some(syn::GenericArgument::Type(Type::BareFn(f))) = args.args.first() else {
        return None;
    };
    match &f.output {
        ReturnType::Type(_, t) if t.to_token_stream().to_string() == "CUresult" => {}
        _ => return None,
    }
    let mut out = Vec::new();
    for (i, a) in f.inputs.iter().enumerate() {
        let name = a.name.as_ref().map_or_else(|| format!("arg{}", i + 1), |(n, _)| n.to_string());
        out.push((name, a.ty.clone()));
    }
    Some(out)
}

pub(crate) fn params_of<'a>(inputs: impl Iterator<Item = &'a FnArg>) -> Result<Vec<(String, Type)>, String> {
    let mut out = Vec::new();
    for (i, a) in inputs.enumerate() {
        let FnArg::Typed(t) = a else {
            return Err("receiver in a C prototype".into());
        };
        let name = match &*t.pat {
            Pat::Ident(p) => p.ident.to_string(),
            _ => format!("arg{}", i + 1),
        };
        out.push((name, (*t.ty).clone()));
    }
    Ok(out)
}

impl Types {
    fn signature(&self, params: &[(String, Type)]) -> String {
        params.iter().map(|(_, t)| self.canon(t, 0)).collect::<Vec<_>>().join(", ")
    }

    /// The type with every alias resolved and C integer names made primitive.
    fn canon(&self, ty: &Type, depth: u32) -> String {
        if depth > 32 {
            return ty.to_token_stream().to_string();
        }
        match ty {
            Type::Ptr(p) => {
                let m = if p.mutability.is_some() { "*mut " } else { "*const " };
                format!("{m}{}", self.canon(&p.elem, depth + 1))
            }
            Type::Path(p) if p.qself.is_none() => {
                let Some(last) = p.path.segments.last() else {
                    return String::new();
                };
                let id = last.ident.to_string();
                if let Some(prim) = c_primitive(&id) {
                    return prim.to_string();
                }
                if last.arguments.is_empty() {
                    if let Some(target) = self.aliases.get(&id) {
                        return self.canon(target, depth + 1);
                    }
                }
                ty.to_token_stream().to_string()
            }
            _ => ty.to_token_stream().to_string(),
        }
    }

    /// The argument a report names: the first handle, device pointer or device passed by value.
    fn report_arg(&self, params: &[(String, Type)]) -> ArgKind {
        for (i, (_, ty)) in params.iter().enumerate() {
            let kind = self.by_value_kind(ty, i);
            if kind != ArgKind::None {
                return kind;
            }
        }
        ArgKind::None
    }

    /// `ty` as a by-value handle, device pointer or device: written as a typedef name
    /// whose alias chain names `CUdeviceptr`/`CUdevice` or ends in a pointer to an opaque
    /// struct. A pointer written as such (an out-pointer) is none of them.
    fn by_value_kind(&self, ty: &Type, index: usize) -> ArgKind {
        let mut ty = ty;
        for _ in 0..32 {
            let Type::Path(p) = ty else {
                break;
            };
            let Some(last) = p.path.segments.last() else {
                break;
            };
            let id = last.ident.to_string();
            let versioned = |base: &str| {
                id == base
                    || id
                        .strip_prefix(base)
                        .and_then(|r| r.strip_prefix("_v"))
                        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            };
            if versioned("CUdeviceptr") {
                return ArgKind::DevicePtr(index);
            }
            if versioned("CUdevice") {
                return ArgKind::Device(index);
            }
            let Some(target) = self.aliases.get(&id) else {
                break;
            };
            if let Type::Ptr(ptr) = target {
                if let Type::Path(inner) = &*ptr.elem {
                    if inner.path.segments.last().is_some_and(|s| self.opaque.contains(&s.ident.to_string())) {
                        return ArgKind::Handle(index);
                    }
                }
                break;
            }
            ty = target;
        }
        ArgKind::None
    }
}

fn c_primitive(id: &str) -> Option<&'static str> {
    Some(match id {
        "c_char" | "c_schar" | "i8" => "i8",
        "c_uchar" | "u8" => "u8",
        "c_short" | "i16" => "i16",
        "c_ushort" | "u16" => "u16",
        "c_int" | "i32" => "i32",
        "c_uint" | "u32" => "u32",
        "c_long" | "c_longlong" | "i64" => "i64",
        "c_ulong" | "c_ulonglong" | "u64" => "u64",
        "c_float" | "f32" => "f32",
        "c_double" | "f64" => "f64",
        "usize" => "usize",
        "isize" => "isize",
        "c_void" => "c_void",
        _ => return None,
    })
}
