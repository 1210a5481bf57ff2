//! Uses the committed bindings in `src/generated/` unless the `bindgen` feature is on; then
//! regenerates them into OUT_DIR from the headers in CUDRV_CUDA_INCLUDE (or
//! CUDA_HOME/include, CUDA_PATH/include, /usr/local/cuda/include).

/// The first header with `cuLibrary*` (CUDA 12.0): `Library`/`Kernel` need it.
const LIBRARY_API: u32 = 12000;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cudrv_regenerated)");
    println!("cargo::rustc-check-cfg=cfg(cudrv_library_api)");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    let header = regenerate();
    #[cfg(not(feature = "bindgen"))]
    let header = committed_header_version();
    if header >= LIBRARY_API {
        println!("cargo:rustc-cfg=cudrv_library_api");
    }
}

/// The `HEADER_VERSION` the committed table was generated from.
#[cfg(not(feature = "bindgen"))]
fn committed_header_version() -> u32 {
    println!("cargo:rerun-if-changed=src/generated/table.rs");
    let table = std::fs::read_to_string("src/generated/table.rs").unwrap_or_default();
    let version = table
        .lines()
        .find_map(|l| l.strip_prefix("pub const HEADER_VERSION: u32 = "))
        .and_then(|v| v.trim_end_matches(';').parse().ok());
    match version {
        Some(v) => v,
        None => {
            println!("cargo:warning=cudrv: no HEADER_VERSION in src/generated/table.rs; run scripts/regenerate.sh");
            std::process::exit(1);
        }
    }
}

/// Regenerates into OUT_DIR and returns the header's CUDA_VERSION.
#[cfg(feature = "bindgen")]
fn regenerate() -> u32 {
    use std::path::PathBuf;
    for var in ["CUDRV_CUDA_INCLUDE", "CUDA_HOME", "CUDA_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let env = |name: &str| std::env::var_os(name).map(PathBuf::from);
    let include = env("CUDRV_CUDA_INCLUDE")
        .or_else(|| env("CUDA_HOME").map(|p| p.join("include")))
        .or_else(|| env("CUDA_PATH").map(|p| p.join("include")))
        .unwrap_or_else(|| PathBuf::from("/usr/local/cuda/include"));
    let out = env("OUT_DIR").unwrap_or_default();
    println!("cargo:rerun-if-changed={}", include.join("cuda.h").display());
    println!("cargo:rerun-if-changed={}", include.join("cudaTypedefs.h").display());
    let outputs = cudrv_gen::Outputs { cudrv: &out, standin: None };
    match cudrv_gen::generate(std::path::Path::new("wrapper.h"), &include, &outputs) {
        Ok(m) => {
            println!("cargo:rustc-cfg=cudrv_regenerated");
            let version = m.header_version;
            println!(
                "cargo:warning=cudrv: bindings regenerated from {} (CUDA_VERSION {}, {} variants)",
                include.display(),
                m.header_version,
                m.variants.len()
            );
            version
        }
        Err(e) => {
            println!("cargo:warning=cudrv: cannot regenerate bindings from {}: {e}", include.display());
            std::process::exit(1);
        }
    }
}
