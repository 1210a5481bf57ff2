//! `cudrv-gen --include DIR [--wrapper wrapper.h] [--out src/generated] [--standin-out standin/src/generated]`
//!
//! The stand-in's `interop.rs` is generated from the facts at the default paths below
//! (relative to the repository root, where scripts/regenerate.sh runs it).
//!
//! Regenerates cudrv's committed bindings from the headers in DIR. scripts/regenerate.sh
//! is the usual way to call it.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut include = None;
    let mut wrapper = PathBuf::from("wrapper.h");
    let mut out = PathBuf::from("src/generated");
    let mut standin = Some(PathBuf::from("standin/src/generated"));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().map(PathBuf::from);
        match a.as_str() {
            "--include" => include = value(),
            "--wrapper" => wrapper = value().unwrap_or(wrapper.clone()),
            "--out" => out = value().unwrap_or(out.clone()),
            "--standin-out" => standin = value(),
            "--no-standin" => standin = None,
            other => {
                eprintln!("cudrv-gen: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(include) = include else {
        eprintln!("cudrv-gen: --include DIR (a folder holding cuda.h and cudaTypedefs.h) is required");
        return ExitCode::from(2);
    };
    let facts = cudrv_gen::Facts {
        stubs: std::path::Path::new("gen/interop-stubs"),
        exports: std::path::Path::new("docs/gpu-runs/h200/libcuda-exports-580.159.04.txt"),
        answers: std::path::Path::new("docs/gpu-runs/h200/interop-exports-2026-12-03.txt"),
    };
    let outputs = cudrv_gen::Outputs { cudrv: &out, standin: standin.as_deref(), interop: Some(facts) };
    match cudrv_gen::generate(&wrapper, &include, &outputs) {
        Ok(m) => {
            let per_thread = m.variants.iter().filter(|v| v.per_thread).count();
            let undeclared: Vec<&str> = m.names.iter().filter(|n| !n.declared).map(|n| n.name.as_str()).collect();
            println!(
                "cudrv-gen: CUDA_VERSION {}: {} variants ({} per-thread), {} names; {} without a matching cuda.h prototype{}",
                m.header_version,
                m.variants.len(),
                per_thread,
                m.names.len(),
                undeclared.len(),
                if undeclared.is_empty() { String::new() } else { format!(": {}", undeclared.join(" ")) }
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cudrv-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
