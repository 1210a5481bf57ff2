//! Random command lines for the two CLIs, in-process: cudrv-info's whole run
//! (`cudrv_info::run_cli`: parsing, loading, the report) and cudrv-matrix's checks before
//! a run (`cudrv_matrix::check_cli`: parsing, `--version`, the version list; no cell is
//! run, no file read or written). The input's first byte picks the CLI; each argument is
//! a known flag, a known value or fuzzed bytes (not always UTF-8). A `--driver` other
//! than `stand-in` is replaced by a path that does not exist: no library of the machine
//! is loaded. An exit code is an answer; a panic or an abort is a finding.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use cudrv_fuzz::Input;
use libfuzzer_sys::fuzz_target;

const INFO_FLAGS: [&str; 12] = [
    "--driver",
    "--max-version",
    "--per-thread-default-stream",
    "--all",
    "--device",
    "--entry",
    "--state",
    "--json",
    "--help",
    "--version",
    "-h",
    "-V",
];

const MATRIX_FLAGS: [&str; 16] = [
    "--versions",
    "--stand-in",
    "--real",
    "--stand-in-lib",
    "--jobs",
    "-j",
    "--tail",
    "--timeout",
    "--json",
    "--junit",
    "--",
    "merge",
    "--version",
    "-V",
    "--help",
    "-h",
];

const VALUES: [&str; 24] = [
    "stand-in",
    "12.4",
    "13.5",
    "11.3",
    "12",
    "all",
    "12.0-13.0",
    "13.0-12.0",
    "11.8,12.4",
    "0",
    "1",
    "-1",
    "4294967296",
    "cuMemAlloc",
    "cuMemAlloc_v3020",
    "resolved,gated",
    "not-in-driver",
    "1e309",
    "nan",
    "0.5",
    "99.99",
    "12.7",
    "",
    "true",
];

/// One of `list`.
fn pick<'a>(input: &mut Input<'_>, list: &[&'a str]) -> &'a str {
    list.get(input.below(list.len())).copied().unwrap_or_default()
}

/// The next argument: a flag, a value, a flag with `=value`, or raw bytes.
fn argument(input: &mut Input<'_>, flags: &[&str]) -> OsString {
    match input.u8() % 4 {
        0 => pick(input, flags).into(),
        1 => pick(input, &VALUES).into(),
        2 => format!("{}={}", pick(input, flags), pick(input, &VALUES)).into(),
        _ => {
            let len = input.below(12);
            OsString::from_vec((0..len).map(|_| input.u8()).collect())
        }
    }
}

/// Replaces every `--driver` value but `stand-in` (and empty) by a path that does not exist.
fn no_libraries(args: &mut [OsString]) {
    const NONE: &str = "/nonexistent/cudrv-fuzz/libcuda.so.1";
    let mut value_next = false;
    for a in args.iter_mut() {
        if value_next && a != "stand-in" && !a.is_empty() {
            *a = NONE.into();
        } else if a.as_encoded_bytes().starts_with(b"--driver=") && a != "--driver=stand-in" && a != "--driver=" {
            *a = format!("--driver={NONE}").into();
        }
        value_next = a == "--driver";
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let matrix = input.u8() % 2 == 1;
    let (name, flags): (&str, &[&str]) =
        if matrix { ("cudrv-matrix", &MATRIX_FLAGS) } else { ("cudrv-info", &INFO_FLAGS) };
    let mut args = vec![OsString::from(name)];
    while !input.is_empty() && args.len() < 12 {
        args.push(argument(&mut input, flags));
    }
    if matrix {
        let _ = cudrv_matrix::check_cli(&args, 12040);
    } else {
        no_libraries(&mut args);
        let _ = cudrv_info::run_cli(&args, false);
    }
});
