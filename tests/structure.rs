//! The crate's module structure (DESIGN.md, "Module structure" and "The safe layer's
//! floors"): no file of `src/` is in an import cycle; the bottom layer names its modules by
//! module path; and each file of the safe layer (`src/resources/`) imports only files on
//! floors below its own.
//!
//! A file's imports are the `crate::` and `super::` paths in its code (comments aside, the
//! files it `include!`s counted with it), each resolved to the file that defines the item:
//! through the crate root's and the facades' (`mod.rs`) re-exports to where it is
//! declared. Methods are not imports: an `impl Stream` block in `event.rs` makes event.rs
//! depend on stream.rs, not the reverse.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The safe layer's floors, bottom first (paths under `src/resources/`, no `.rs`). A file
/// imports only files of lower floors; the files of one floor do not import each other.
const FLOORS: &[(&str, &[&str])] = &[
    ("values and flags", &["handle", "flags", "values", "fd_passing"]),
    ("contexts", &["context", "function_part"]),
    ("streams", &["stream", "peer"]),
    ("work on streams", &["event", "host_fn", "capture", "green"]),
    ("what stream work refers to", &["launch_attr", "user_object", "pool"]),
    ("device memory", &["memory"]),
    ("memory's uses", &["pinned", "kernel_arg", "host_register"]),
    ("views", &["view"]),
    ("memory kinds", &["managed", "pitched", "array", "vmm", "ipc"]),
    ("copies, textures, pointer queries", &["copy3d", "texture", "pointer_attr"]),
    ("modules", &["module"]),
    ("libraries", &["library"]),
    ("function queries, JIT, globals, argument checks", &["attributes", "jit", "global", "params"]),
    ("launches and linking", &["launch", "linker"]),
    ("occupancy", &["occupancy"]),
    ("graphs", &["graph/base"]),
    ("graph nodes", &["graph/conditional", "graph/edges", "graph/nodes", "graph/kernel_node"]),
    ("executable graphs", &["graph/exec"]),
];

/// The bottom layer (DESIGN.md): these files name each other by module path, never through
/// a crate-root re-export, and import nothing of the safe layer.
const BOTTOM: &[&str] = &[
    "sys",
    "table",
    "call",
    "version",
    "availability",
    "loader",
    "error",
    "report",
    "gated_log",
    "driver",
    "p",
    "pc",
    "pw",
    "typed",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without its comments, with the files it `include!`s.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        if let Some(rest) = code.trim().strip_prefix("include!(\"") {
            let name = rest.split('"').next().unwrap_or_default();
            out.push_str(&code_of(&path.parent().unwrap_or(Path::new(".")).join(name)));
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The module path of each file (`resources/graph/mod.rs` -> `resources::graph`), the
/// generated files (included by others) aside.
fn modules() -> BTreeMap<Vec<String>, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).expect("src").map(|e| e.expect("entry").path()).collect();
        entries.sort();
        for path in entries {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            if path.is_dir() {
                if name != "generated" {
                    let mut p = prefix.to_vec();
                    p.push(name);
                    walk(&path, &p, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut p = prefix.to_vec();
                if name != "mod" && name != "lib" {
                    p.push(name);
                }
                out.insert(p, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &[], &mut out);
    out
}

/// The paths of a use tree starting at `text` (just after `crate::` or `super::`):
/// `a::b::{c, d::{e as f}}` gives `a::b::c` and `a::b::d::e`.
fn use_paths(text: &str) -> Vec<Vec<String>> {
    fn tree(s: &[u8], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        loop {
            while *i < s.len() && s[*i].is_ascii_whitespace() {
                *i += 1;
            }
            if *i < s.len() && s[*i] == b'{' {
                *i += 1;
                loop {
                    tree(s, i, &path, out);
                    while *i < s.len() && s[*i].is_ascii_whitespace() {
                        *i += 1;
                    }
                    match s.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *i < s.len() && s[*i].is_ascii_whitespace() {
                        *i += 1;
                    }
                    if s.get(*i) == Some(&b'}') {
                        *i += 1;
                        return;
                    }
                }
            }
            let start = *i;
            while *i < s.len() && (s[*i].is_ascii_alphanumeric() || s[*i] == b'_') {
                *i += 1;
            }
            if start == *i {
                break;
            }
            path.push(String::from_utf8_lossy(&s[start..*i]).into_owned());
            if s[*i..].starts_with(b"::") {
                *i += 2;
            } else {
                break;
            }
        }
        // An alias (`D as E`) names what `D` names.
        let rest = &s[*i..];
        let trimmed = rest.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(rest.len());
        if rest[trimmed..].starts_with(b"as ") {
            *i += trimmed + 3;
            while *i < s.len() && (s[*i].is_ascii_whitespace() || s[*i].is_ascii_alphanumeric() || s[*i] == b'_') {
                *i += 1;
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    tree(text.as_bytes(), &mut 0, &[], &mut out);
    out
}

/// Every absolute path the code names (`crate::x::Y`, `super::Z` from module `at`).
fn named_paths(code: &str, at: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        out.extend(use_paths(&code[i + "crate::".len()..]));
    }
    for (i, _) in code.match_indices("super::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut base = at.to_vec();
        let mut rest = &code[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        for p in use_paths(rest) {
            let mut full = base.clone();
            full.extend(p);
            out.push(full);
        }
    }
    out
}

/// The re-exports (`pub use`, `pub(crate) use`) of a facade: name -> absolute path.
fn reexports(code: &str, at: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for statement in code.split(';') {
        let s = statement.trim();
        let Some(body) = s.strip_prefix("pub use ").or_else(|| s.strip_prefix("pub(crate) use ")) else {
            continue;
        };
        for p in use_paths(body) {
            let (absolute, rest) = match p.first().map(String::as_str) {
                Some("crate") => (Vec::new(), &p[1..]),
                Some("self") => (at.to_vec(), &p[1..]),
                _ => (at.to_vec(), &p[..]),
            };
            let mut full = absolute;
            full.extend(rest.iter().cloned());
            if let Some(last) = full.last() {
                if !modules.contains_key(&full) {
                    out.insert(last.clone(), full.clone());
                }
            }
        }
    }
    out
}

struct Crate {
    modules: BTreeMap<Vec<String>, PathBuf>,
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    fn load() -> Crate {
        let modules = modules();
        let mut reexports = BTreeMap::new();
        for (m, path) in &modules {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name == "mod.rs" || name == "lib.rs" {
                reexports.insert(m.clone(), self::reexports(&code_of(path), m, &modules));
            }
        }
        Crate { modules, reexports }
    }

    /// The module whose file declares what `path` names.
    fn resolve(&self, path: &[String], depth: usize) -> Vec<String> {
        let mut at: Vec<String> = Vec::new();
        for (i, seg) in path.iter().enumerate() {
            if seg == "self" {
                continue;
            }
            let mut next = at.clone();
            next.push(seg.clone());
            if self.modules.contains_key(&next) {
                at = next;
                continue;
            }
            if let Some(target) = self.reexports.get(&at).and_then(|r| r.get(seg)) {
                if depth < 8 {
                    let mut full = target.clone();
                    full.extend(path[i + 1..].iter().cloned());
                    return self.resolve(&full, depth + 1);
                }
            }
            break;
        }
        at
    }

    /// Each file's imports: module -> modules it names (itself and the crate root aside;
    /// a `mod.rs` imports what it re-exports). The crate root imports nothing: it declares
    /// and re-exports the rest.
    fn imports(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut out = BTreeMap::new();
        for (m, path) in &self.modules {
            let mut to = BTreeSet::new();
            if !m.is_empty() {
                let mut named = named_paths(&code_of(path), m);
                named.extend(self.reexports.get(m).into_iter().flat_map(|r| r.values().cloned()));
                for p in named {
                    let target = self.resolve(&p, 0);
                    if &target != m && !target.is_empty() {
                        to.insert(target);
                    }
                }
            }
            out.insert(m.clone(), to);
        }
        out
    }
}

fn name(m: &[String]) -> String {
    m.join("::")
}

/// The safe layer's file for a module (`resources::graph::exec` -> `graph/exec`).
fn floor_file(m: &[String]) -> Option<String> {
    (m.first().map(String::as_str) == Some("resources") && m.len() > 1).then(|| m[1..].join("/"))
}

#[test]
fn no_file_of_src_is_in_an_import_cycle() {
    let imports = Crate::load().imports();
    // Tarjan's strongly connected components.
    struct State<'a> {
        imports: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a [String], (usize, usize)>,
        stack: Vec<&'a [String]>,
        on_stack: BTreeSet<&'a [String]>,
        next: usize,
        cycles: Vec<Vec<String>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a [String]) {
        s.index.insert(v, (s.next, s.next));
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let imports = s.imports;
        for w in imports.get(v).into_iter().flatten() {
            let w = w.as_slice();
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.index[w].1.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            } else if s.on_stack.contains(w) {
                let low = s.index[w].0.min(s.index[v].1);
                s.index.get_mut(v).expect("visited").1 = low;
            }
        }
        if s.index[v].0 == s.index[v].1 {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(name(w));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.cycles.push(component);
            }
        }
    }
    let mut s = State {
        imports: &imports,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        cycles: Vec::new(),
    };
    for v in imports.keys() {
        if !s.index.contains_key(v.as_slice()) {
            connect(&mut s, v);
        }
    }
    assert!(s.cycles.is_empty(), "files in import cycles: {:#?}", s.cycles);
    // The graph is real: the driver imports the loader, a stream its context.
    let has = |from: &str, to: &str| imports.iter().any(|(m, t)| name(m) == from && t.iter().any(|x| name(x) == to));
    assert!(has("driver", "loader") && has("resources::stream", "resources::context"), "{imports:#?}");
}

#[test]
fn each_file_of_the_safe_layer_imports_only_lower_floors() {
    let krate = Crate::load();
    let imports = krate.imports();
    let mut floor_of = BTreeMap::new();
    for (i, (_, files)) in FLOORS.iter().enumerate() {
        for f in *files {
            assert!(floor_of.insert(f.to_string(), i).is_none(), "{f} is on two floors");
        }
    }
    let mut problems = Vec::new();
    for (m, path) in &krate.modules {
        let Some(file) = floor_file(m) else { continue };
        if krate.reexports.contains_key(m) {
            continue; // a facade
        }
        let Some(&floor) = floor_of.get(&file) else {
            problems.push(format!("src/resources/{file}.rs ({}) is on no floor", path.display()));
            continue;
        };
        for to in &imports[m] {
            if let Some(other) = floor_file(to) {
                let their = floor_of.get(&other).copied().unwrap_or(usize::MAX);
                if their >= floor {
                    problems.push(format!(
                        "{file} (floor {floor}, {}) imports {other} (floor {their}{})",
                        FLOORS[floor].0,
                        FLOORS.get(their).map(|f| format!(", {}", f.0)).unwrap_or_default()
                    ));
                }
            }
        }
    }
    for f in floor_of.keys() {
        if !krate.modules.keys().any(|m| floor_file(m).as_deref() == Some(f.as_str())) {
            problems.push(format!("the floor plan names {f}, which is not a file"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_bottom_layer_names_modules_by_path_and_imports_no_safe_layer() {
    let krate = Crate::load();
    let imports = krate.imports();
    for b in BOTTOM {
        let m = vec![b.to_string()];
        let path = &krate.modules[&m];
        for p in named_paths(&code_of(path), &m) {
            let first = p.first().map(String::as_str).unwrap_or_default();
            assert!(
                first.starts_with(|c: char| c.is_lowercase()),
                "src/{b}.rs names `crate::{}`: the bottom layer names other modules by module path",
                p.join("::")
            );
        }
        for to in &imports[&m] {
            assert!(BOTTOM.contains(&name(to).as_str()), "src/{b}.rs imports {}: not of the bottom layer", name(to));
        }
    }
}

#[test]
fn use_trees_are_read() {
    let found = use_paths("resources::{a::B, c::{D as E, self}}, x");
    let names: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(names, ["resources::a::B", "resources::c::D", "resources::c::self"]);
    let named =
        named_paths("use super::keep; let x = crate::error::CudaError::x;", &["resources".into(), "graph".into()]);
    let named: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(named, ["error::CudaError::x", "resources::keep"]);
}
