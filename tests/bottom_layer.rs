//! The bottom layer (the driver, its loading, errors, reports, the gated log, the
//! generated wrappers and the tables they use) has no import cycle: its files, with the
//! generated files they include, name each other only by module (`crate::error::X`, never
//! a crate-root re-export such as `crate::Driver`), and the graph of those references is
//! acyclic (issue 18, item 11).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The bottom layer's modules: each file under `src/` and the generated files it includes.
const LAYER: &[(&str, &[&str])] = &[
    ("sys", &["sys.rs", "generated/sys.rs"]),
    ("table", &["table.rs", "generated/table.rs"]),
    ("call", &["call.rs", "generated/calls.rs"]),
    ("version", &["version.rs"]),
    ("availability", &["availability.rs"]),
    ("loader", &["loader.rs"]),
    ("error", &["error.rs"]),
    ("report", &["report.rs"]),
    ("gated_log", &["gated_log.rs"]),
    ("driver", &["driver.rs"]),
    ("p", &["p.rs", "generated/p.rs"]),
    ("pc", &["pc.rs", "generated/pc.rs"]),
    ("pw", &["pw.rs", "generated/pw.rs"]),
];

/// The code of a file without its comments (line comments and doc comments).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::name` the code refers to (the first segment after `crate::`).
fn references(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{').collect();
        out.push(name);
        rest = after;
    }
    out
}

fn graph() -> BTreeMap<&'static str, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<&str> = LAYER.iter().map(|(m, _)| *m).collect();
    let mut edges = BTreeMap::new();
    for (module, files) in LAYER {
        let mut to = BTreeSet::new();
        for file in *files {
            for name in references(&code_of(&src.join(file))) {
                let first = name.chars().next().unwrap_or(' ');
                assert!(
                    first.is_lowercase() && !name.contains('{'),
                    "src/{file} refers to `crate::{name}`: the bottom layer names other modules by module path"
                );
                if name != *module && modules.contains(name.as_str()) {
                    to.insert(name);
                }
            }
        }
        edges.insert(*module, to);
    }
    edges
}

#[test]
fn bottom_layer_has_no_import_cycle() {
    let edges = graph();
    // Depth-first search; a module met again while still on the path closes a cycle.
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<&'static str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| *p == m) {
            panic!("import cycle: {} -> {m}", path[at..].join(" -> "));
        }
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            visit(next, edges, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        visit(m, &edges, &mut Vec::new(), &mut done);
    }
    // The test can fail: the driver does use the loader, errors and reports.
    assert!(edges["driver"].contains("loader") && edges["driver"].contains("error"), "{edges:?}");
}

#[test]
fn references_are_found() {
    let found = references("use crate::error::CudaError;\nlet x = crate::driver::global();");
    assert_eq!(found, ["error", "driver"]);
}
