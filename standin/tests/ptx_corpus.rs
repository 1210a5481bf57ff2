//! Programs' own PTX on the stand-in: every case of the kernel corpus (`ptx/corpus/`, NVRTC
//! 13.0 PTX with deterministic inputs) runs through the stand-in's C entry points
//! (`cuModuleLoadData`, `cuMemAlloc`, `cuMemcpyHtoD`, `cuLaunchKernel`,
//! `cuStreamSynchronize`, `cuMemcpyDtoH`), and its outputs must equal the H200's recorded
//! ones byte for byte (the cases of `corpus/approximate.txt` within their documented
//! bound); and the load-time refusals, faults, globals and the override of a registered
//! host implementation.

mod common;

use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};

use common::{driver, launch_kernel, ok};
use cudrv::sys::{CUdeviceptr, CUfunction, CUjit_option, CUmodule, CUresult};
use cudrv::Driver;
use cudrv_standin::StandIn;

/// Device 0's primary context, made current.
fn context(d: &Driver) {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; then the context just retained.
    unsafe {
        ok(d.p().cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(d.p().cuCtxSetCurrent(ctx));
    }
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("ptx").join("corpus")
}

/// The corpus's input generator (ptx/corpus/README.md; `ptx/tests/corpus.rs` has the same).
fn generate(ty: &str, n: usize, gen: &[&str]) -> Vec<u8> {
    let size = elem_size(ty);
    let kind = gen.first().copied().unwrap_or("zero");
    let seed: u32 = gen.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let modulo: u32 = gen.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
    if x == 0 {
        x = 1;
    }
    let mut out = Vec::with_capacity(n * size);
    for i in 0..n {
        if matches!(kind, "rand" | "randmod") {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
        }
        let unit = f64::from(x >> 8) / 16_777_216.0 * 2.0 - 1.0;
        match (kind, ty) {
            ("zero", _) => out.extend(std::iter::repeat_n(0u8, size)),
            ("iota", _) => out.extend(&(i as u64).to_le_bytes()[..size]),
            ("rand", "f32") => out.extend((unit as f32).to_le_bytes()),
            ("rand", "f64") => out.extend(unit.to_le_bytes()),
            ("randmod", _) => out.extend(&u64::from(x % modulo).to_le_bytes()[..size]),
            _ => out.extend(&u64::from(x).to_le_bytes()[..size]),
        }
    }
    out
}

fn elem_size(ty: &str) -> usize {
    match ty {
        "u8" => 1,
        "u16" => 2,
        "f64" | "u64" => 8,
        _ => 4,
    }
}

fn scalar(ty: &str, v: &str) -> Vec<u8> {
    match ty {
        "f32" => v.parse::<f32>().unwrap().to_le_bytes().to_vec(),
        "f64" => v.parse::<f64>().unwrap().to_le_bytes().to_vec(),
        "i32" => v.parse::<i32>().unwrap().to_le_bytes().to_vec(),
        "u32" => v.parse::<u32>().unwrap().to_le_bytes().to_vec(),
        "u64" => v.parse::<u64>().unwrap().to_le_bytes().to_vec(),
        other => panic!("scalar type {other}"),
    }
}

struct Buf {
    name: String,
    ty: String,
    len: usize,
    out: bool,
    ptr: CUdeviceptr,
}

fn load_module(d: &Driver, text: &str) -> Result<CUmodule, CUresult> {
    let c = CString::new(text).unwrap();
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image and a valid out-pointer.
    match unsafe { d.p().cuModuleLoadData(&mut m, c.as_ptr().cast()) } {
        CUresult::CUDA_SUCCESS => Ok(m),
        e => Err(e),
    }
}

fn function(d: &Driver, m: CUmodule, name: &str) -> CUfunction {
    let name = CString::new(name).unwrap();
    let mut f = std::ptr::null_mut();
    // SAFETY: a live module, a NUL-terminated name.
    ok(unsafe { d.p().cuModuleGetFunction(&mut f, m, name.as_ptr()) });
    f
}

fn alloc(d: &Driver, bytes: &[u8]) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer; then a copy of `bytes` into the new allocation.
    unsafe {
        ok(d.p().cuMemAlloc(&mut p, bytes.len().max(1)));
        ok(d.p().cuMemcpyHtoD(p, bytes.as_ptr().cast(), bytes.len()));
    }
    p
}

fn read(d: &Driver, p: CUdeviceptr, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    // SAFETY: `len` bytes of a live allocation into a buffer of `len` bytes.
    ok(unsafe { d.p().cuMemcpyDtoH(v.as_mut_ptr().cast(), p, len) });
    v
}

/// Launches with each parameter's bytes; the launch's status and the synchronisation's.
fn launch(d: &Driver, f: CUfunction, grid: [u32; 3], block: [u32; 3], smem: u32, params: &[Vec<u8>]) -> CUresult {
    let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
    let r = launch_kernel(d, f, grid, block, smem, std::ptr::null_mut(), &mut ptrs);
    if r != CUresult::CUDA_SUCCESS {
        return r;
    }
    // SAFETY: the NULL stream.
    unsafe { d.p().cuStreamSynchronize(std::ptr::null_mut()) }
}

/// Runs case `name` on `d` (a context current): its buffers (name, type, output or not,
/// bytes after the launch) and the launch's status.
fn run_case(d: &Driver, name: &str) -> (Vec<(Buf, Vec<u8>)>, CUresult) {
    let dir = corpus().join(name);
    let text = std::fs::read_to_string(dir.join("kernel.ptx")).unwrap();
    let m = load_module(d, &text).unwrap_or_else(|e| panic!("{name}: cuModuleLoadData: {e:?}"));
    let spec = std::fs::read_to_string(dir.join("case.txt")).unwrap();
    let (mut kernel, mut grid, mut block, mut smem) = (String::new(), [1; 3], [1; 3], 0);
    let mut bufs = Vec::new();
    let mut params = Vec::new();
    for line in spec.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let dims = |w: &[&str]| [w[1].parse().unwrap(), w[2].parse().unwrap(), w[3].parse().unwrap()];
        match w.first().copied() {
            Some("kernel") => kernel = w[1].to_string(),
            Some("grid") => grid = dims(&w),
            Some("block") => block = dims(&w),
            Some("smem") => smem = w[1].parse().unwrap(),
            Some("scalar") => params.push(scalar(w[1], w[2])),
            Some("bytes") => {
                let hex: String = w[2..].concat();
                params.push(
                    (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect(),
                );
            }
            Some("buf") => {
                let out = w.last() == Some(&"out");
                let end = if out { w.len() - 1 } else { w.len() };
                let data = generate(w[2], w[3].parse().unwrap(), &w[4..end]);
                let ptr = alloc(d, &data);
                params.push(ptr.to_le_bytes().to_vec());
                bufs.push(Buf { name: w[1].to_string(), ty: w[2].to_string(), len: data.len(), out, ptr });
            }
            _ => {}
        }
    }
    let f = function(d, m, &kernel);
    let status = launch(d, f, grid, block, smem, &params);
    let outputs = bufs
        .into_iter()
        .map(|b| {
            let bytes = read(d, b.ptr, b.len);
            (b, bytes)
        })
        .collect();
    (outputs, status)
}

/// The approximate cases and their f32 relative bound's exponent (`rel=2^-N`, else 16).
fn approximate() -> Vec<(String, i32)> {
    std::fs::read_to_string(corpus().join("approximate.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with(' ') && !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap().to_string();
            let rel = w.find_map(|t| t.strip_prefix("rel=2^-")).and_then(|n| n.parse().ok()).unwrap_or(16);
            (name, -rel)
        })
        .collect()
}

/// Whether `got` is within the documented bound of `want` (as `ptx/tests/corpus.rs`).
fn within_bound(ty: &str, want: &[u8], got: &[u8], rel: i32) -> bool {
    let close = |w: f64, g: f64, rel: f64, abs: f64| {
        (w.is_nan() && g.is_nan()) || w == g || (w - g).abs() <= abs.max(rel * w.abs())
    };
    want.len() == got.len()
        && match ty {
            "f32" => want.chunks(4).zip(got.chunks(4)).all(|(w, g)| {
                let (w, g) = (f32::from_le_bytes(w.try_into().unwrap()), f32::from_le_bytes(g.try_into().unwrap()));
                close(f64::from(w), f64::from(g), 2f64.powi(rel), 2f64.powi(-20))
            }),
            "f64" => want.chunks(8).zip(got.chunks(8)).all(|(w, g)| {
                let (w, g) = (f64::from_le_bytes(w.try_into().unwrap()), f64::from_le_bytes(g.try_into().unwrap()));
                close(w, g, 2f64.powi(-40), 2f64.powi(-60))
            }),
            _ => want == got,
        }
}

#[test]
fn the_whole_corpus_runs_through_the_c_entry_points_as_on_the_h200() {
    let d = driver();
    context(&d);
    let approx = approximate();
    let mut cases: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("kernel.ptx").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    assert!(cases.len() >= 25, "{cases:?}");
    let (mut compared, mut failures) = (0, Vec::new());
    for name in &cases {
        let (outputs, status) = run_case(&d, name);
        let dir = corpus().join(name).join("h200");
        let want_status = std::fs::read_to_string(dir.join("result.txt")).unwrap_or_default();
        if status != CUresult::CUDA_SUCCESS {
            failures.push(format!("{name}: launch {status:?} (the H200: {})", want_status.trim()));
            continue;
        }
        for (b, got) in outputs.iter().filter(|(b, _)| b.out) {
            let Ok(want) = std::fs::read(dir.join(format!("{}.bin", b.name))) else { continue };
            compared += 1;
            if name.ends_with("_probe") {
                continue;
            }
            let same = match approx.iter().find(|(n, _)| n == name) {
                Some((_, rel)) => within_bound(&b.ty, &want, got, *rel),
                None => want == *got,
            };
            if !same {
                failures.push(format!("{name}/{}: differs from the H200's output", b.name));
            }
        }
    }
    assert!(compared >= 25, "only {compared} outputs compared with recorded H200 outputs");
    assert!(failures.is_empty(), "{failures:#?}");
}

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// A kernel `k(u64 out)` whose body is `body`, with registers declared.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    )
}

/// Loads `text` with an error log buffer: the status and the log.
fn load_with_log(d: &Driver, text: &str) -> (CUresult, String) {
    let c = CString::new(text).unwrap();
    let mut log = vec![0u8; 4096];
    let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image; two options with their values; the buffer outlives
    // the call.
    let r =
        unsafe { d.p().cuModuleLoadDataEx(&mut m, c.as_ptr().cast(), 2, options.as_mut_ptr(), values.as_mut_ptr()) };
    let n = values[1] as usize;
    (r, String::from_utf8_lossy(&log[..n]).into_owned())
}

#[test]
fn unsupported_instructions_and_parse_errors_fail_with_invalid_ptx_and_a_log() {
    let d = driver();
    context(&d);
    // Line 10: an mma (tensor cores: not run by the executor).
    let mma = kernel(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1}, {%r1,%r2,%r3,%r4};",
    );
    let (r, log) = load_with_log(&d, &mma);
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_PTX);
    assert!(log.contains("line 10;") && log.contains("mma"), "{log}");
    let bogus = kernel("bogus_instruction;");
    let (r, log) = load_with_log(&d, &bogus);
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_PTX);
    assert!(log.contains("line 10; error   : Not a name of any known instruction: 'bogus_instruction'"), "{log}");
    let broken = kernel("add.u32 %r1, %r2;");
    let (r, log) = load_with_log(&d, &broken);
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_PTX);
    assert!(log.contains("line 10;"), "{log}");
}

#[test]
fn ptx_versions_and_targets_are_gated_as_each_driver_gates_them() {
    for (version, newest) in [(11030, "7.3"), (12040, "8.4"), (12060, "8.5"), (12090, "8.8"), (13000, "9.0")] {
        let d = StandIn::isolated(version).unwrap().load(Default::default()).unwrap();
        // SAFETY: plain call.
        ok(unsafe { d.p().cuInit(0) });
        context(&d);
        let (major, minor) = newest.split_once('.').unwrap();
        let at = |v: &str| kernel("").replace(".version 8.0", &format!(".version {v}")).replace("sm_90", "sm_80");
        assert_eq!(load_module(&d, &at(newest)).map(drop), Ok(()), "{version}: {newest}");
        let next = format!("{major}.{}", minor.parse::<u32>().unwrap() + 1);
        let (r, log) = load_with_log(&d, &at(&next));
        assert_eq!(r, CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "{version}: {next}");
        assert!(log.contains(&format!("Unsupported .version {next}; current version is '{newest}'")), "{log}");
        assert_eq!(load_module(&d, &at("9.9")).err(), Some(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION));
    }
    let d = driver();
    context(&d);
    for target in ["sm_100", "sm_100a", "sm_120"] {
        let (r, log) = load_with_log(&d, &kernel("").replace("sm_90", target));
        assert_eq!(r, CUresult::CUDA_ERROR_INVALID_PTX, "{target}");
        assert!(log.contains(".target"), "{log}");
    }
    assert!(load_module(&d, &kernel("").replace("sm_90", "sm_90a")).is_ok());
}

/// Launches `k(out)` of `text` over one block of `threads` on the NULL stream: the
/// launch's status, the synchronisation's, and the status of a later call in the same
/// context.
fn fault_of(text: &str, threads: u32) -> (CUresult, CUresult, CUresult) {
    let d = StandIn::isolated(13050).unwrap().load(Default::default()).unwrap();
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    context(&d);
    let m = load_module(&d, text).unwrap();
    let mut out = alloc(&d, &[0u8; 64]);
    let mut params = [(&raw mut out).cast::<c_void>()];
    let null = std::ptr::null_mut();
    // SAFETY: one parameter, a pointer to its value, alive across the call; plain calls.
    unsafe {
        let f = function(&d, m, "k");
        let launch = d.p().cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, null, params.as_mut_ptr(), null.cast());
        let sync = d.p().cuStreamSynchronize(null);
        let mut p = 0;
        (launch, sync, d.p().cuMemAlloc(&mut p, 16))
    }
}

#[test]
fn kernel_faults_succeed_at_launch_fail_the_synchronisation_with_the_gpus_status_and_stick() {
    use CUresult as R;
    let fault = |status| (R::CUDA_SUCCESS, status, status);
    let illegal = kernel("mov.u64 %rd2, 16;\nst.global.u32 [%rd2], 1;");
    assert_eq!(fault_of(&illegal, 1), fault(R::CUDA_ERROR_ILLEGAL_ADDRESS));
    let past_end = kernel("st.global.u32 [%rd1+64], 1;");
    assert_eq!(fault_of(&past_end, 1), fault(R::CUDA_ERROR_ILLEGAL_ADDRESS));
    let misaligned = kernel("st.global.u32 [%rd1+2], 1;");
    assert_eq!(fault_of(&misaligned, 1), fault(R::CUDA_ERROR_MISALIGNED_ADDRESS));
    // A trap: LAUNCH_FAILED, as the H200 answers it (issue 29).
    assert_eq!(fault_of(&kernel("trap;"), 1), fault(R::CUDA_ERROR_LAUNCH_FAILED));
    // The block's 32 threads wait at a barrier that expects 64 (the GPU hangs).
    let deadlock = kernel("bar.sync 0, 64;");
    assert_eq!(fault_of(&deadlock, 32), fault(R::CUDA_ERROR_LAUNCH_FAILED));
    let fine = kernel("st.global.u32 [%rd1+60], 7;");
    assert_eq!(fault_of(&fine, 32), (R::CUDA_SUCCESS, R::CUDA_SUCCESS, R::CUDA_SUCCESS));
}

#[test]
fn module_globals_are_allocations_that_copies_and_kernels_share() {
    let d = driver();
    context(&d);
    // `k` adds coeffs[0..4] (a constant with an initialiser) into counter, and its first
    // thread stores the address `ptr` holds (that of `counter`).
    let text = format!(
        "{HEADER}.const .align 4 .u32 coeffs[4] = {{1, 2, 3, 4}};\n.global .align 4 .u32 counter;\n\
         .global .align 8 .u64 ptr = counter;\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\nld.const.u32 %r1, [coeffs];\nld.const.u32 %r2, [coeffs+12];\n\
         atom.global.add.u32 %r3, [counter], %r1;\natom.global.add.u32 %r3, [counter], %r2;\n\
         mov.u32 %r4, %tid.x;\nmov.u32 %r5, %ctaid.x;\nor.b32 %r6, %r4, %r5;\nsetp.eq.u32 %p1, %r6, 0;\n\
         ld.global.u64 %rd2, [ptr];\n@%p1 st.global.u64 [%rd1], %rd2;\nret;\n}}\n"
    );
    let m = load_module(&d, &text).unwrap();
    let global = |name: &str| {
        let (mut p, mut size) = (0, 0);
        let name = CString::new(name).unwrap();
        // SAFETY: valid out-pointers, a live module.
        ok(unsafe { d.p().cuModuleGetGlobal(&mut p, &mut size, m, name.as_ptr()) });
        assert!(p < 0xfc00_0000_0000_0000);
        (p, size)
    };
    let (coeffs, size) = global("coeffs");
    assert_eq!(size, 16);
    assert_eq!(read(&d, coeffs, 16), [1u32, 2, 3, 4].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    let five = 5u32.to_le_bytes();
    // SAFETY: 4 bytes into the 16 of `coeffs`.
    ok(unsafe { d.p().cuMemcpyHtoD(coeffs, five.as_ptr().cast(), 4) });
    let out = alloc(&d, &[0u8; 8]);
    let f = function(&d, m, "k");
    for _ in 0..2 {
        ok(launch(&d, f, [3, 1, 1], [32, 1, 1], 0, &[out.to_le_bytes().to_vec()]));
    }
    let (counter, _) = global("counter");
    // 2 launches of 96 threads, each adding 5 + 4.
    assert_eq!(read(&d, counter, 4), (2 * 96 * 9u32).to_le_bytes());
    assert_eq!(read(&d, out, 8), counter.to_le_bytes());
}

#[test]
fn a_registered_host_implementation_wins_over_the_ptx() {
    // The PTX stores 1; the host implementation registered under its name stores 2.
    let text = kernel("st.global.u32 [%rd1], 1;").replace(".entry k(", ".entry override_me(");
    cudrv_standin::register_kernel("override_me", &[cudrv_standin::Param::Ptr], |t| t.store(t.ptr(0)?, 0, 2u32));
    let d = driver();
    context(&d);
    let m = load_module(&d, &text).unwrap();
    let out = alloc(&d, &[0u8; 4]);
    ok(launch(&d, function(&d, m, "override_me"), [1, 1, 1], [1, 1, 1], 0, &[out.to_le_bytes().to_vec()]));
    assert_eq!(read(&d, out, 4), 2u32.to_le_bytes());
    // Unregistered, a module loaded from now on runs the PTX.
    assert!(cudrv_standin::unregister_kernel("override_me"));
    let m = load_module(&d, &text).unwrap();
    ok(launch(&d, function(&d, m, "override_me"), [1, 1, 1], [1, 1, 1], 0, &[out.to_le_bytes().to_vec()]));
    assert_eq!(read(&d, out, 4), 1u32.to_le_bytes());
}
