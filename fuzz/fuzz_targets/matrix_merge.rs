//! `cudrv-matrix merge` over fuzzed `--json` documents, in-process (`cudrv_matrix::run_cli`):
//! the input is up to three documents separated by `\n---\n`, written to files of a
//! folder of the target's own; the merged grid is written there too, as JUnit XML and
//! JSON, and as text to stdout. An exit code is an answer; a panic or an abort is a
//! finding.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// The folder of the documents and the results (one per process).
fn folder() -> &'static PathBuf {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("cudrv-fuzz-merge-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = folder();
    let mut args = vec!["cudrv-matrix".into(), "merge".into()];
    let text = String::from_utf8_lossy(data);
    for (i, doc) in text.split("\n---\n").take(3).enumerate() {
        let path = dir.join(format!("{i}.json"));
        if std::fs::write(&path, doc).is_err() {
            return;
        }
        args.push(path.into_os_string());
    }
    args.push("--junit".into());
    args.push(dir.join("merged.xml").into_os_string());
    args.push("--json".into());
    args.push(dir.join("merged.json").into_os_string());
    let _ = cudrv_matrix::run_cli(&args, false);
});
