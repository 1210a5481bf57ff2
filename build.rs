//! Uses the committed bindings in `src/generated/` unless the `bindgen` feature is on; then
//! regenerates them into OUT_DIR from the headers in CUDRV_CUDA_INCLUDE (or
//! CUDA_HOME/include, CUDA_PATH/include, /usr/local/cuda/include).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cudrv_regenerated)");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    regenerate();
}

#[cfg(feature = "bindgen")]
fn regenerate() {
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
            println!(
                "cargo:warning=cudrv: bindings regenerated from {} (CUDA_VERSION {}, {} variants)",
                include.display(),
                m.header_version,
                m.variants.len()
            );
        }
        Err(e) => {
            println!("cargo:warning=cudrv: cannot regenerate bindings from {}: {e}", include.display());
            std::process::exit(1);
        }
    }
}
