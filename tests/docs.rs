//! The documentation's promises that a build does not check by itself (issue 16): every
//! doctest runs (none is `no_run`), every user guide is reachable from rustdoc
//! (`cudrv::docs`), the README's links work on crates.io (absolute), every manifest names
//! the repository, and both crates warn on missing docs.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The user guides: `docs/*.md`.
fn guides() -> Vec<PathBuf> {
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    assert!(!guides.is_empty());
    guides
}

#[test]
fn no_doctest_is_no_run_or_ignored() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("standin/src"), &mut files);
    let mut texts: Vec<(PathBuf, String)> = files.into_iter().map(|p| (p.clone(), read(&p))).collect();
    for md in [root().join("README.md"), root().join("standin/README.md")].into_iter().chain(guides()) {
        texts.push((md.clone(), read(&md)));
    }
    let mut bad = Vec::new();
    for (path, text) in &texts {
        for (i, line) in text.lines().enumerate() {
            let fence = line.trim_start().trim_start_matches("//!").trim_start_matches("///").trim_start();
            if fence.starts_with("```") && (fence.contains("no_run") || fence.contains("ignore")) {
                bad.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "doctests that never run (run them on the stand-in instead):\n{}", bad.join("\n"));
}

#[test]
fn every_user_guide_is_a_module_of_cudrv_docs() {
    let docs_rs = read(&root().join("src/docs.rs"));
    for guide in guides() {
        let name = guide.file_name().unwrap().to_str().unwrap();
        let include = format!("include_str!(\"../docs/{name}\")");
        assert!(docs_rs.contains(&include), "src/docs.rs does not include docs/{name} ({include})");
    }
    assert!(read(&root().join("src/lib.rs")).contains("\npub mod docs;"));
}

#[test]
fn the_readme_links_are_absolute() {
    let readme = read(&root().join("README.md"));
    let mut relative = Vec::new();
    for (i, line) in readme.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let target = &rest[at + 2..];
            let end = target.find(')').unwrap_or(target.len());
            let url = &target[..end];
            if !(url.starts_with("https://") || url.starts_with("http://") || url.starts_with('#')) {
                relative.push(format!("README.md:{}: {url}", i + 1));
            }
            rest = &target[end..];
        }
    }
    assert!(relative.is_empty(), "relative links break on crates.io:\n{}", relative.join("\n"));
}

#[test]
fn every_manifest_names_the_repository() {
    let workspace = read(&root().join("Cargo.toml"));
    let package = workspace.split("\n[workspace.package]\n").nth(1).unwrap().split("\n[").next().unwrap();
    assert!(package.contains("\nrepository = \"https://github.com/cudrv/cudrv\""), "{package}");
    assert!(package.contains("\nhomepage = "), "{package}");
    let members = ["", "gen", "standin", "cudrv-info", "cudrv-matrix", "conformance", "bench"];
    for member in members {
        let manifest = read(&root().join(member).join("Cargo.toml"));
        let package = manifest.split("\n[package]\n").nth(1).or_else(|| manifest.strip_prefix("[package]\n")).unwrap();
        let package = package.split("\n[").next().unwrap();
        for key in ["repository.workspace = true", "homepage.workspace = true"] {
            assert!(package.contains(key), "{member}/Cargo.toml [package] lacks `{key}`");
        }
    }
}

#[test]
fn both_crates_warn_on_missing_docs() {
    for lib in ["src/lib.rs", "standin/src/lib.rs"] {
        let text = read(&root().join(lib));
        let attrs: String = text.lines().filter(|l| l.starts_with("#![")).collect();
        assert!(attrs.contains("missing_docs"), "{lib} does not set missing_docs");
    }
}
