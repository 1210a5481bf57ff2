//! The typed calls (`src/generated/typed.rs`): for every entry point whose arguments are
//! opaque handles, plain values and single out- or in-values, a safe method that takes
//! each handle as a `Live` (a handle its holder keeps alive), each in-value as a
//! reference, and returns the out-values. The rest keep only the raw forms.
//!
//! What makes a call safe is decided from cuda.h alone:
//! - a handle (a typedef of a pointer to an opaque struct, or an integer `...Object` or
//!   `...Handle` typedef such as `CUtexObject`) becomes `Live<'_, H>`;
//! - a plain value (integers, enums, `CUdevice`, structs of those) stays a value; a device
//!   pointer does not (the driver would use the memory it names), nor does a function or
//!   host pointer;
//! - `T *p` is an out-value when cuda.h documents `p` as returned (`\param[out]`, or its
//!   `\param` line says "Returned"/"Returns"/"Output"/"to store") and `T` is not
//!   `void`/`char`; another `T *p` of plain data is read and written (`&mut T`);
//! - `const T *p` is an in-value when `T` is plain data (no pointer or handle in it);
//!   `const char *` is a string, taken as `&CStr`;
//! - `const CUxxx *xs` with a count `numXs` is a slice of `Live` handles;
//! - `CUxxx *phXxx` (a pointer to a handle named `ph...`) is an out-value too, as is
//!   `T *pXxx` of a query (`cu...Get...`);
//! - a function with a count parameter (`num...`, `nb...`, `count`; unless it is the
//!   function's one pointer) or a pointer documented as an array or list is left out: its pointers are arrays, not single values;
//! - a call that ends a handle's life (`...Destroy`, `...Unload`, `...Release`, `...Free`,
//!   `...Unregister`, `...Deregister`, `...Detach`, `...Reset`) is left out: that the
//!   handle is live is every other call's precondition, so ending it keeps one; so is a
//!   launch (`...Launch...`), whose precondition is that the memory the work uses is.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

use syn::{Fields, Item, Type};

use crate::emit::{banner, ty};
use crate::model::Model;

/// cuda.h's `\param` documentation: function -> parameter -> (marked `[out]`, text).
pub struct Docs(HashMap<String, HashMap<String, (bool, String)>>);

impl Docs {
    /// Reads every documented prototype of `include/cuda.h`.
    pub fn read(include: &Path) -> Result<Docs, String> {
        let path = include.join("cuda.h");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = HashMap::new();
        let mut block: Vec<&str> = Vec::new();
        let mut in_block = false;
        let mut since_block = usize::MAX;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("/**") {
                in_block = true;
                block.clear();
            }
            if in_block {
                block.push(t);
                if t.ends_with("*/") {
                    in_block = false;
                    since_block = 0;
                }
                continue;
            }
            since_block = since_block.saturating_add(1);
            if let Some(rest) = t.split("CUDAAPI ").nth(1) {
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if since_block <= 4 && name.starts_with("cu") {
                    out.entry(name).or_insert_with(|| params_of(&block));
                }
            }
        }
        Ok(Docs(out))
    }
}

/// The `\param` lines of one comment block.
fn params_of(block: &[&str]) -> HashMap<String, (bool, String)> {
    let mut out = HashMap::new();
    let mut current: Option<(String, bool, String)> = None;
    let mut flush = |c: &mut Option<(String, bool, String)>| {
        if let Some((n, o, d)) = c.take() {
            out.insert(n, (o, d));
        }
    };
    for raw in block {
        let t = raw.trim_start_matches('*').trim();
        if let Some(rest) = t.strip_prefix("\\param") {
            flush(&mut current);
            let (marked_out, rest) = match rest.strip_prefix('[') {
                Some(r) => {
                    let (dir, r) = r.split_once(']').unwrap_or(("", r));
                    (dir.contains("out") && !dir.contains("in"), r)
                }
                None => (false, rest),
            };
            let rest = rest.trim();
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let desc = rest[name.len()..].trim().trim_start_matches('-').trim().to_string();
            current = Some((name, marked_out, desc));
        } else {
            // Only a `\param` line's own text counts: what follows may be anything.
            flush(&mut current);
        }
    }
    flush(&mut current);
    out
}

/// What bindgen's output says of each type name.
struct Types {
    aliases: HashMap<String, Type>,
    /// Struct and union fields.
    fields: HashMap<String, Vec<Type>>,
    opaque: HashSet<String>,
}

impl Types {
    fn of(file: &syn::File) -> Types {
        let mut t = Types { aliases: HashMap::new(), fields: HashMap::new(), opaque: HashSet::new() };
        let add_fields = |name: String, fields: &Fields| {
            let tys: Vec<Type> = fields.iter().map(|f| f.ty.clone()).collect();
            (name, tys)
        };
        for item in &file.items {
            match item {
                Item::Type(a) => {
                    t.aliases.insert(a.ident.to_string(), (*a.ty).clone());
                }
                Item::Use(u) => {
                    if let Some((from, to)) = use_rename(&u.tree) {
                        if let Ok(ty) = syn::parse_str::<Type>(&from) {
                            t.aliases.insert(to, ty);
                        }
                    }
                }
                Item::Struct(s) => {
                    let (n, tys) = add_fields(s.ident.to_string(), &s.fields);
                    if tys.len() == 1 && s.fields.iter().any(|f| f.ident.as_ref().is_some_and(|i| i == "_unused")) {
                        t.opaque.insert(n);
                    } else {
                        t.fields.insert(n, tys);
                    }
                }
                Item::Union(u) => {
                    let tys = u.fields.named.iter().map(|f| f.ty.clone()).collect();
                    t.fields.insert(u.ident.to_string(), tys);
                }
                _ => {}
            }
        }
        t
    }

    /// The names the alias chain of `ty` passes through, and where it ends.
    fn chain<'a>(&'a self, mut ty: &'a Type) -> (Vec<String>, &'a Type) {
        let mut names = Vec::new();
        for _ in 0..32 {
            let Some(id) = last_ident(ty) else { break };
            let Some(target) = self.aliases.get(&id) else { break };
            names.push(id);
            ty = target;
        }
        (names, ty)
    }

    /// A typedef of a pointer to an opaque struct.
    fn is_handle(&self, ty: &Type) -> bool {
        let (_, end) = self.chain(ty);
        match end {
            Type::Ptr(p) => last_ident(&p.elem).is_some_and(|s| self.opaque.contains(&s)),
            _ => false,
        }
    }

    /// An integer (a typedef of one) that names something the driver would use as it is:
    /// a device pointer, a texture or surface object, an allocation or other `...Handle`.
    fn names_something(&self, ty: &Type) -> bool {
        self.integer_named(ty, &["ptr", "Object", "Handle"])
    }

    /// An integer handle of the driver's (`CUtexObject`, `CUsurfObject`,
    /// `CUmemGenericAllocationHandle`): a typedef of an integer named `...Object` or
    /// `...Handle`, taken as `Live` like a pointer handle.
    fn is_integer_handle(&self, ty: &Type) -> bool {
        self.integer_named(ty, &["Object", "Handle"])
    }

    /// A typedef of an integer whose alias chain passes through a name (its `_vN` aside)
    /// ending in one of `endings`.
    fn integer_named(&self, ty: &Type, endings: &[&str]) -> bool {
        let (mut names, end) = self.chain(ty);
        if !last_ident(end).is_some_and(|s| is_primitive(&s)) {
            return false;
        }
        names.extend(last_ident(ty));
        names.iter().any(|n| {
            let base = n.split("_v").next().unwrap_or(n);
            endings.iter().any(|e| base.ends_with(e))
        })
    }

    /// Plain data: no pointer, handle or function in it.
    fn is_plain(&self, ty: &Type, depth: u32) -> bool {
        if depth > 32 {
            return false;
        }
        match ty {
            Type::Array(a) => self.is_plain(&a.elem, depth + 1),
            Type::Path(p) => {
                let Some(last) = p.path.segments.last() else { return false };
                let id = last.ident.to_string();
                if !last.arguments.is_empty() {
                    // `Option<fn>`, `__BindgenBitfieldUnit<..>`, `PhantomData<..>`.
                    return id == "__BindgenBitfieldUnit" || id == "PhantomData" || id == "__IncompleteArrayField";
                }
                if is_primitive(&id) {
                    return true;
                }
                if self.names_something(ty) {
                    return false;
                }
                if let Some(target) = self.aliases.get(&id) {
                    return self.is_plain(target, depth + 1);
                }
                match self.fields.get(&id) {
                    Some(fields) => fields.iter().all(|f| self.is_plain(f, depth + 1)),
                    None => false,
                }
            }
            _ => false,
        }
    }

    fn is_c_char(&self, ty: &Type) -> bool {
        let (_, end) = self.chain(ty);
        last_ident(end).is_some_and(|s| s == "c_char")
    }

    fn is_void_or_char(&self, ty: &Type) -> bool {
        let (_, end) = self.chain(ty);
        last_ident(end).is_some_and(|s| matches!(s.as_str(), "c_void" | "c_char" | "c_schar" | "c_uchar"))
    }
}

fn use_rename(tree: &syn::UseTree) -> Option<(String, String)> {
    match tree {
        syn::UseTree::Path(p) => use_rename(&p.tree),
        syn::UseTree::Rename(r) => Some((r.ident.to_string(), r.rename.to_string())),
        _ => None,
    }
}

/// `pResDesc`: `p` and a capital.
fn is_p_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next() == Some('p') && c.next().is_some_and(|x| x.is_ascii_uppercase())
}

fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn is_primitive(id: &str) -> bool {
    matches!(
        id,
        "c_char"
            | "c_schar"
            | "c_uchar"
            | "c_short"
            | "c_ushort"
            | "c_int"
            | "c_uint"
            | "c_long"
            | "c_ulong"
            | "c_longlong"
            | "c_ulonglong"
            | "c_float"
            | "c_double"
            | "i8"
            | "u8"
            | "i16"
            | "u16"
            | "i32"
            | "u32"
            | "i64"
            | "u64"
            | "f32"
            | "f64"
            | "usize"
            | "isize"
    )
}

/// How one parameter is passed in the typed form.
enum Use {
    Value(Type),
    Live(Type),
    In(Type),
    /// `T *p` of plain data that cuda.h does not document as returned: read and written.
    InOut(Type),
    /// `const CUxxx *xs` with its count: `&[Live<'_, CUxxx>]`.
    Slice(Type),
    /// The count of the slice named.
    Len(String),
    /// `const char *`: a NUL-terminated string, taken as `&CStr`.
    Str,
    Out(Type),
}

/// The typed form's parameters, or `None` where the function keeps only its raw forms.
fn classify(
    types: &Types,
    function: &str,
    docs: Option<&HashMap<String, (bool, String)>>,
    params: &[(String, Type)],
) -> Option<Vec<Use>> {
    let docs = docs?;
    const ENDS_OR_RUNS: [&str; 9] =
        ["Destroy", "Unload", "Release", "Free", "Unregister", "Deregister", "Detach", "Reset", "Launch"];
    if ENDS_OR_RUNS.iter().any(|w| function.contains(w)) {
        return None;
    }
    let counted = |n: &str| {
        let lower = n.to_ascii_lowercase();
        n.starts_with("num") || n.starts_with("nb") || lower == "count" || lower.starts_with("count")
    };
    // A count measures an array: unless it is itself the function's one pointer (an
    // out-value such as `int *numBlocks`), some other pointer may be that array.
    let pointers = params.iter().filter(|(_, t)| matches!(t, Type::Ptr(_))).count();
    // `const CUxxx *xs, size_t numXs`: a slice of live handles.
    let slice_of = |count: &str| -> Option<String> {
        let rest = count.strip_prefix("num")?;
        let mut c = rest.chars();
        let first = c.next()?.to_ascii_lowercase();
        let name = format!("{first}{}", c.as_str());
        params
            .iter()
            .any(|(n, t)| *n == name && matches!(t, Type::Ptr(p) if p.mutability.is_none() && types.is_handle(&p.elem)))
            .then_some(name)
    };
    let measures = |(n, t): &(String, Type)| {
        counted(n)
            && !(matches!(t, Type::Ptr(_)) && pointers == 1)
            && (matches!(t, Type::Ptr(_)) || slice_of(n).is_none())
    };
    if params.iter().any(measures) {
        return None;
    }
    let sliced: Vec<(String, String)> = params
        .iter()
        .filter(|(_, t)| !matches!(t, Type::Ptr(_)))
        .filter_map(|(n, _)| slice_of(n).map(|s| (s, n.clone())))
        .collect();
    let mut uses = Vec::new();
    for (name, t) in params {
        if let Some((slice, _)) = sliced.iter().find(|(_, count)| count == name) {
            uses.push(Use::Len(slice.clone()));
            continue;
        }
        if sliced.iter().any(|(slice, _)| slice == name) {
            let Type::Ptr(p) = t else { return None };
            uses.push(Use::Slice((*p.elem).clone()));
            continue;
        }
        // bindgen writes C keywords with a trailing underscore (`type_`).
        let (marked_out, desc) = docs.get(name.trim_end_matches('_'))?;
        let many = ["array of", "Array of", "arrays", "list of"].iter().any(|w| desc.contains(w));
        let u = match t {
            Type::Ptr(_) if many => return None,
            Type::Ptr(p) if p.mutability.is_none() && types.is_c_char(&p.elem) => Use::Str,
            Type::Ptr(p) if types.is_void_or_char(&p.elem) => return None,
            Type::Ptr(p) if p.mutability.is_some() => {
                let said = [
                    "Returned",
                    "Returns",
                    "return",
                    "Output",
                    "output",
                    "to store",
                    "Retrieved",
                    "in which",
                    "user allocated",
                ]
                .iter()
                .any(|w| desc.contains(w));
                // `CUxxx *phXxx`: cuda.h's name for a returned handle; in a `cu...Get...`
                // query, `T *pXxx` is what it returns.
                let handle_out = name.starts_with("ph") && types.is_handle(&p.elem);
                let queried = function.contains("Get") && is_p_name(name);
                if *marked_out || said || handle_out || queried {
                    Use::Out((*p.elem).clone())
                } else if types.is_plain(&p.elem, 0) {
                    // Read and written (`CUstreamCaptureMode *mode`: swapped).
                    Use::InOut((*p.elem).clone())
                } else {
                    return None;
                }
            }
            Type::Ptr(p) if types.is_plain(&p.elem, 0) => Use::In((*p.elem).clone()),
            Type::Ptr(_) => return None,
            _ if types.is_handle(t) || types.is_integer_handle(t) => Use::Live(t.clone()),
            _ if types.names_something(t) => return None,
            _ if types.is_plain(t, 0) => Use::Value(t.clone()),
            _ => return None,
        };
        uses.push(u);
    }
    Some(uses)
}

/// `src/generated/typed.rs`: the typed method of every variant and name that has one.
pub fn typed(file: &syn::File, model: &Model, docs: &Docs) -> String {
    let types = Types::of(file);
    let mut s = banner(model, "typed calls: handles as `Live`, out-values returned");
    let _ = writeln!(s, "use crate::error::CudaError;\nuse crate::sys::*;\n\nimpl Typed {{");
    let mut count = 0;
    let all = model
        .variants
        .iter()
        .map(|v| (&v.ident, &v.symbol, &v.params))
        .chain(model.names.iter().map(|n| (&n.name, &n.name, &n.params)));
    for (name, symbol, params) in all {
        let Some(uses) = classify(&types, symbol, docs.0.get(symbol.as_str()), params) else {
            if std::env::var_os("CUDRV_GEN_WHY").is_some() {
                eprintln!("untyped {name}: {:?}", docs.0.get(symbol.as_str()));
            }
            continue;
        };
        count += 1;
        method(&mut s, name, params, &uses);
    }
    let _ = writeln!(
        s,
        "}}\n\n/// How many entry points have a typed form.\npub(crate) const TYPED_COUNT: usize = {count};"
    );
    s
}

fn method(s: &mut String, name: &str, params: &[(String, Type)], uses: &[Use]) {
    let mut args = Vec::new();
    let mut outs = Vec::new();
    let mut pass = Vec::new();
    for ((n, _), u) in params.iter().zip(uses) {
        match u {
            Use::Value(t) => {
                args.push(format!("{n}: {}", ty(t)));
                pass.push(n.clone());
            }
            Use::Live(t) => {
                args.push(format!("{n}: Live<'_, {}>", ty(t)));
                pass.push(format!("{n}.raw()"));
            }
            Use::In(t) => {
                args.push(format!("{n}: &{}", ty(t)));
                pass.push(n.clone());
            }
            Use::InOut(t) => {
                args.push(format!("{n}: &mut {}", ty(t)));
                pass.push(n.clone());
            }
            Use::Slice(t) => {
                args.push(format!("{n}: &[Live<'_, {}>]", ty(t)));
                pass.push(format!("{n}.as_ptr().cast::<{}>()", ty(t)));
            }
            Use::Len(of) => pass.push(format!("{of}.len()")),
            Use::Str => {
                args.push(format!("{n}: &::std::ffi::CStr"));
                pass.push(format!("{n}.as_ptr()"));
            }
            Use::Out(t) => {
                outs.push((n.clone(), ty(t)));
                pass.push(format!("&mut {n}"));
            }
        }
    }
    let ret = match outs.len() {
        0 => "()".to_string(),
        1 => outs[0].1.clone(),
        _ => format!("({})", outs.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(", ")),
    };
    let value = match outs.len() {
        0 => "()".to_string(),
        1 => outs[0].0.clone(),
        _ => format!("({})", outs.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")),
    };
    let _ = writeln!(s, "    #[doc = \"`{name}`: handles as `Live`, out-values returned.\"]");
    let _ = writeln!(s, "    #[inline(always)]");
    let _ = writeln!(s, "    pub(crate) fn {name}(&self, {}) -> Result<{ret}, CudaError> {{", args.join(", "));
    for (n, t) in &outs {
        let _ = writeln!(s, "        // SAFETY: every type of sys.rs is C data for which all-zero bytes are a value.");
        let _ = writeln!(s, "        let mut {n}: {t} = unsafe {{ ::std::mem::zeroed() }};");
    }
    let _ = writeln!(s, "        // SAFETY: each handle is live (`Live`); each pointer is to one value of its type, or to a slice whose length goes with it.");
    let _ = writeln!(s, "        unsafe {{ crate::pc::Pc(self.0).{name}({}) }}?;", pass.join(", "));
    let _ = writeln!(s, "        Ok({value})\n    }}");
}
