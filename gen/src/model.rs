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
    /// How the first argument is shown in a report.
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
    /// first: the default one and later ones with an identical signature.
    pub candidates: Vec<usize>,
    /// The same for the per-thread default stream variants.
    pub per_thread_candidates: Vec<usize>,
    /// Whether cuda.h declares a prototype for it (else the newest variant is the default).
    pub declared: bool,
    pub first_arg: ArgKind,
}

/// How a report shows a call's first argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    Pointer,
    Hex,
    Int,
    Enum,
    Opaque,
}

pub struct Model {
    pub header_version: u32,
    pub variants: Vec<Variant>,
    pub names: Vec<Name>,
}

struct Types {
    aliases: HashMap<String, Type>,
    enums: HashSet<String>,
}

impl Model {
    pub fn build(file: &syn::File) -> Result<Model, String> {
        let mut types = Types { aliases: HashMap::new(), enums: HashSet::new() };
        let mut header_version = None;
        let mut declared: HashMap<String, Vec<(String, Type)>> = HashMap::new();
        for item in &file.items {
            match item {
                Item::Type(t) => {
                    types.aliases.insert(t.ident.to_string(), (*t.ty).clone());
                }
                Item::Struct(s) if is_newtype(s) => {
                    types.enums.insert(s.ident.to_string());
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
            let first_arg = types.arg_kind(params.first().map(|p| &p.1));
            variants.push(Variant { ident: rest.to_string(), symbol, version, per_thread, params, canon, first_arg });
        }
        variants.sort_by(|a, b| (&a.symbol, a.version, a.per_thread).cmp(&(&b.symbol, b.version, b.per_thread)));

        let mut by_symbol: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, v) in variants.iter().enumerate() {
            by_symbol.entry(&v.symbol).or_default().push(i);
        }
        let mut names = Vec::new();
        for (symbol, idx) in &by_symbol {
            names.push(build_name(symbol, idx, &variants, &declared, &types)?);
        }
        let all: HashSet<&str> = names.iter().map(|n| n.name.as_str()).collect();
        if let Some(v) = variants.iter().find(|v| all.contains(v.ident.as_str())) {
            return Err(format!("variant {} collides with a function name", v.ident));
        }
        Ok(Model { header_version, variants, names })
    }
}

fn build_name(
    symbol: &str,
    idx: &[usize],
    variants: &[Variant],
    declared: &HashMap<String, Vec<(String, Type)>>,
    types: &Types,
) -> Result<Name, String> {
    let newest_first = |per_thread: bool, canon: &str| -> Vec<usize> {
        let mut v: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| variants.get(i).is_some_and(|v| v.per_thread == per_thread && v.canon == canon))
            .collect();
        v.sort_by_key(|&i| std::cmp::Reverse(variants.get(i).map_or(0, |v| v.version)));
        v
    };
    let prototype = declared_prototype(symbol, declared);
    let (params, canon, declared_ok) = match prototype {
        Some(p) if !newest_first(false, &types.signature(p)).is_empty() => (p.clone(), types.signature(p), true),
        _ => {
            // No usable prototype: the newest non-per-thread variant is the default.
            let newest = idx
                .iter()
                .filter_map(|&i| variants.get(i))
                .filter(|v| !v.per_thread)
                .max_by_key(|v| v.version)
                .or_else(|| idx.iter().filter_map(|&i| variants.get(i)).max_by_key(|v| v.version))
                .ok_or_else(|| format!("{symbol}: no variants"))?;
            (newest.params.clone(), newest.canon.clone(), false)
        }
    };
    let mut candidates = newest_first(false, &canon);
    let per_thread_candidates = newest_first(true, &canon);
    if candidates.is_empty() {
        candidates = per_thread_candidates.clone();
    }
    let typed_as = *candidates.first().ok_or_else(|| format!("{symbol}: no candidate"))?;
    let first_arg = types.arg_kind(params.first().map(|p| &p.1));
    Ok(Name {
        name: symbol.to_string(),
        params,
        typed_as,
        candidates,
        per_thread_candidates,
        declared: declared_ok,
        first_arg,
    })
}

/// cuda.h's prototype for `symbol`: the declaration of that exact name, else of the
/// highest `symbol_vK` (cuda.h maps `#define cuMemAlloc cuMemAlloc_v2`).
fn declared_prototype<'a>(
    symbol: &str,
    declared: &'a HashMap<String, Vec<(String, Type)>>,
) -> Option<&'a Vec<(String, Type)>> {
    if let Some(p) = declared.get(symbol) {
        return Some(p);
    }
    (2..10).rev().find_map(|k| declared.get(&format!("{symbol}_v{k}")))
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

fn is_newtype(s: &syn::ItemStruct) -> bool {
    let transparent =
        s.attrs.iter().any(|a| a.path().is_ident("repr") && a.to_token_stream().to_string().contains("transparent"));
    transparent && matches!(&s.fields, syn::Fields::Unnamed(f) if f.unnamed.len() == 1)
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

fn params_of<'a>(inputs: impl Iterator<Item = &'a FnArg>) -> Result<Vec<(String, Type)>, String> {
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

    fn arg_kind(&self, ty: Option<&Type>) -> ArgKind {
        let Some(ty) = ty else { return ArgKind::Opaque };
        let c = self.canon(ty, 0);
        if c.starts_with('*') {
            ArgKind::Pointer
        } else if matches!(c.as_str(), "u64" | "usize") {
            ArgKind::Hex
        } else if matches!(c.as_str(), "i8" | "u8" | "i16" | "u16" | "i32" | "u32" | "i64" | "isize") {
            ArgKind::Int
        } else if self.enums.contains(&c) {
            ArgKind::Enum
        } else {
            ArgKind::Opaque
        }
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
