//! The executor's files import each other without a cycle: every `crate::name` a file of
//! `src/` names (a module, or an item the crate root re-exports, counted as its module)
//! forms a graph with no cycle, so each file stands on the ones below it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn code_of(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The identifiers named right after `crate::`, braces included (`crate::{a, b::c}`).
fn references(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|p| p.trim().split("::").next().unwrap_or("").to_string()));
        } else {
            out.push(after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
        }
        rest = after;
    }
    out
}

#[test]
fn no_file_of_the_executor_is_in_an_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut texts = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            texts.insert(name, code_of(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    // Items the crate root re-exports: `pub use module::{A, B};` or `pub use module::A;`.
    let mut reexported = BTreeMap::new();
    for line in texts["lib"].lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = rest.trim_end_matches(';').split_once("::") else { continue };
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            reexported.insert(item.trim().to_string(), module.to_string());
        }
    }
    let graph: BTreeMap<&str, BTreeSet<String>> = texts
        .iter()
        .filter(|(name, _)| name.as_str() != "lib")
        .map(|(name, code)| {
            let deps = references(code)
                .into_iter()
                .filter_map(|r| if texts.contains_key(&r) { Some(r) } else { reexported.get(&r).cloned() })
                .filter(|d| d != name && d != "lib")
                .collect();
            (name.as_str(), deps)
        })
        .collect();
    fn reaches(graph: &BTreeMap<&str, BTreeSet<String>>, from: &str, to: &str, seen: &mut BTreeSet<String>) -> bool {
        graph
            .get(from)
            .into_iter()
            .flatten()
            .any(|d| d == to || (seen.insert(d.clone()) && reaches(graph, d, to, seen)))
    }
    let cyclic: Vec<&str> = graph.keys().copied().filter(|m| reaches(&graph, m, m, &mut BTreeSet::new())).collect();
    for (m, deps) in &graph {
        println!("{m} -> {}", deps.iter().cloned().collect::<Vec<_>>().join(", "));
    }
    assert!(cyclic.is_empty(), "files in import cycles: {cyclic:?}");
    assert!(graph.len() >= 10, "the graph has too few files to be the executor's: {graph:?}");
}
