//! Gives the cdylib the soname of the driver it stands in for, `libcuda.so.1`, so that a
//! program linked against it (`-lcuda`, with a `libcuda.so` link name) asks for
//! `libcuda.so.1` at run time, as one linked against the real driver does.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
