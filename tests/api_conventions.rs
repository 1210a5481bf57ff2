//! The safe layer's API conventions (DESIGN.md, "API conventions"), where a test can check
//! them: a public function of the safe layer (`src/resources/`, `src/device.rs`,
//! `src/scope.rs`) returns the one public error type (`cudrv::Error`) and takes typed
//! owners, no raw `CU*` handle. Exempt: deprecated functions, and the raw layer's
//! interop, the `unsafe` functions over raw handles (`from_raw`, `borrowed`,
//! `cudrv::with_context`), which return its `CudaError`. The functions that do not yet
//! follow are listed in `tests/data/api-deviations.txt`; the test fails when one is added, and
//! when a listed one is fixed or gone (remove its line): the list only shrinks.

use std::collections::BTreeSet;
use std::path::Path;

/// A public function's signature: from `pub fn` (or `pub unsafe fn`, `pub const fn`) to its
/// body's opening brace or a `;`, on one line; deprecated functions left out.
fn signatures(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["pub fn ", "pub unsafe fn ", "pub const fn "] {
        for (i, _) in code.match_indices(start) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| !c.is_whitespace()) {
                continue;
            }
            // Its attributes: the lines above it up to the previous item.
            let above = &code[..i];
            let attrs_from = above.rfind(['}', ';', '{']).map_or(0, |j| j + 1);
            if above[attrs_from..].contains("#[deprecated") {
                continue;
            }
            let rest = &code[i..];
            let end = rest.find(['{', ';']).unwrap_or(rest.len());
            out.push(rest[..end].split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// The function's name in a signature.
fn name_of(signature: &str) -> &str {
    let after = signature.split(" fn ").nth(1).unwrap_or_default();
    after.split(['(', '<']).next().unwrap_or_default()
}

/// The raw handle types a safe signature should not take.
const RAW_HANDLES: &[&str] = &[
    "CUdevice",
    "CUcontext",
    "CUstream",
    "CUevent",
    "CUmodule",
    "CUfunction",
    "CUlibrary",
    "CUkernel",
    "CUgraph",
    "CUmemoryPool",
];

/// Each deviation: `returns-CudaError file fn`, `raw-handle file fn`.
fn deviations() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root.join("device.rs"), root.join("scope.rs")];
    let mut dirs = vec![root.join("resources")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/resources") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    for path in files {
        let file = path.strip_prefix(&root).expect("under root").with_extension("");
        let file = file.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&path).expect("read");
        let code: String = text
            .lines()
            .map(|l| match l.find("//") {
                Some(i) => &l[..i],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        for sig in signatures(&code) {
            let name = name_of(&sig);
            let (params, returns) = match sig.rfind("->") {
                Some(i) => (&sig[..i], &sig[i..]),
                None => (sig.as_str(), ""),
            };
            let raw = RAW_HANDLES.iter().any(|h| {
                params
                    .match_indices(h)
                    .any(|(i, _)| !params[i + h.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
            });
            if raw && sig.starts_with("pub unsafe fn ") {
                continue; // the raw layer's interop
            }
            if returns.contains("CudaError") {
                out.insert(format!("returns-CudaError {file} {name}"));
            }
            if raw {
                out.insert(format!("raw-handle {file} {name}"));
            }
        }
    }
    out
}

#[test]
fn the_safe_layer_follows_its_conventions_or_lists_the_exceptions() {
    let listed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/api-deviations.txt");
    let listed_text = std::fs::read_to_string(&listed_path).expect("tests/data/api-deviations.txt");
    let listed: BTreeSet<String> =
        listed_text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect();
    let found = deviations();
    let new: Vec<_> = found.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&found).collect();
    assert!(
        new.is_empty(),
        "public functions of the safe layer that break the API conventions (DESIGN.md): {new:#?}\n\
         return cudrv::Error, take &Device/&Context/&Stream rather than raw handles or a driver"
    );
    assert!(stale.is_empty(), "fixed or gone, remove from tests/data/api-deviations.txt: {stale:#?}");
}

#[test]
fn signatures_are_read() {
    let code = "impl X {\n    pub fn a(&self,\n        d: CUdevice) -> Result<u32, CudaError> {\n    }\n    pub(crate) fn b() {}\n    #[deprecated]\n    pub fn old() {}\n    pub unsafe fn from_raw(r: CUstream) -> X;\n}";
    let sigs = signatures(code);
    assert_eq!(
        sigs,
        ["pub fn a(&self, d: CUdevice) -> Result<u32, CudaError>", "pub unsafe fn from_raw(r: CUstream) -> X"]
    );
    assert_eq!(name_of(&sigs[0]), "a");
    assert_eq!(name_of(&sigs[1]), "from_raw");
}
