//! Where the stand-in library (`libcudrv_standin.so`) is, for an installed runner as for
//! one built in a cargo workspace.

use std::path::{Path, PathBuf};

/// Environment variable naming the stand-in library.
pub const ENV_STANDIN_LIB: &str = "CUDRV_STANDIN_LIB";
/// The stand-in library's file name as cargo builds it.
const STANDIN_FILE: &str = "libcudrv_standin.so";

/// A non-empty environment variable.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The places looked at, in order, when neither the flag nor the environment names the
/// library: next to the executable (and in its `deps/`, or the folder above when it is
/// in `deps/` itself), then `$CARGO_TARGET_DIR/{debug,release}` (and their `deps/`), or,
/// without `CARGO_TARGET_DIR`, the same in the `target/` folder of the current folder or
/// its nearest parent that has one: where `cargo build`/`cargo test` puts it in a crate
/// that depends on cudrv-standin.
fn candidates(exe: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = exe.and_then(Path::parent) {
        out.push(dir.join(STANDIN_FILE));
        out.push(dir.join("deps").join(STANDIN_FILE));
        if dir.file_name().is_some_and(|n| n == "deps") {
            if let Some(up) = dir.parent() {
                out.push(up.join(STANDIN_FILE));
            }
        }
    }
    let target = env_path("CARGO_TARGET_DIR").or_else(|| {
        let cwd = std::env::current_dir().ok()?;
        cwd.ancestors().map(|d| d.join("target")).find(|t| t.is_dir())
    });
    if let Some(target) = target {
        for profile in ["debug", "release"] {
            out.push(target.join(profile).join(STANDIN_FILE));
            out.push(target.join(profile).join("deps").join(STANDIN_FILE));
        }
    }
    out
}

/// The stand-in library: `flag` (`--stand-in-lib`), else `CUDRV_STANDIN_LIB`, else the
/// first of [`candidates`] that exists, made absolute. Returns a one-line message naming
/// the missing file, or every place looked at and how to get the library.
pub fn find(flag: Option<&PathBuf>) -> Result<PathBuf, String> {
    let given = match flag {
        Some(p) => Some((p.clone(), "--stand-in-lib")),
        None => env_path(ENV_STANDIN_LIB).map(|p| (p, ENV_STANDIN_LIB)),
    };
    if let Some((path, source)) = given {
        if !path.is_file() {
            return Err(format!("{source} {}: no such file", path.display()));
        }
        return std::fs::canonicalize(&path).map_err(|e| format!("{source} {}: {e}", path.display()));
    }
    let exe = std::env::current_exe().ok();
    let list = candidates(exe.as_deref());
    match list.iter().find(|p| p.is_file()) {
        Some(p) => std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display())),
        None => Err(format!(
            "no stand-in library: looked for {}. `cargo install` does not install it: build it \
             (`cargo build -p cudrv-standin` in a cudrv checkout, or `cargo test` in a crate that \
             depends on cudrv-standin) and pass --stand-in-lib PATH or set {ENV_STANDIN_LIB}",
            list.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}
