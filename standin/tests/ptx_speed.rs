//! Measurements, not tests of CI's default runs (`#[ignore]`d): the corpus's PTX benchmarks
//! (`vector_add` over 16M floats, `saxpy` over 4M, the 512^3 tiled SGEMM: the kernels of
//! `ptx/examples/bench.rs`) through the stand-in's C entry points, the wall time of each
//! launch and its synchronisation printed. Run them in release:
//!
//! `cargo test --release -p cudrv-standin --test ptx_speed -- --ignored --nocapture --test-threads 1`
//!
//! (`PTX_SPEED_N` sets vector_add's element count, `PTX_SPEED_RUNS` the number of
//! launches.) With `CUDRV_STANDIN_SANITIZE=all` they give the sanitizer's cost on the same
//! kernels (docs/sanitizer.md). The outputs are checked, never the times.

mod common;

use std::ffi::{c_void, CString};
use std::path::Path;
use std::time::Instant;

use common::{driver, launch_kernel, ok};
use cudrv::sys::{CUdeviceptr, CUfunction};
use cudrv::Driver;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn alloc(d: &Driver, bytes: &[u8]) -> CUdeviceptr {
    let mut p = 0;
    // SAFETY: valid out-pointer; then a copy of `bytes` into the new allocation.
    unsafe {
        ok(d.p().cuMemAlloc(&mut p, bytes.len()));
        ok(d.p().cuMemcpyHtoD(p, bytes.as_ptr().cast(), bytes.len()));
    }
    p
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn floats(d: &Driver, p: CUdeviceptr, n: usize) -> Vec<f32> {
    let mut out = vec![0u8; 4 * n];
    // SAFETY: `4n` bytes of a live allocation into a buffer of `4n` bytes.
    ok(unsafe { d.p().cuMemcpyDtoH(out.as_mut_ptr().cast(), p, out.len()) });
    out.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// A driver with its primary context current, and the corpus kernel `name`.
fn corpus_kernel(name: &str) -> (Driver, CUfunction) {
    let d = driver();
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; then the context just retained.
    unsafe {
        ok(d.p().cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(d.p().cuCtxSetCurrent(ctx));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../ptx/corpus/{name}/kernel.ptx"));
    let text = CString::new(std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    let entry = CString::new(name).unwrap();
    // SAFETY: a NUL-terminated image and name, valid out-pointers.
    unsafe {
        ok(d.p().cuModuleLoadData(&mut m, text.as_ptr().cast()));
        ok(d.p().cuModuleGetFunction(&mut f, m, entry.as_ptr()));
    }
    (d, f)
}

/// Launches `f` `PTX_SPEED_RUNS` times on the NULL stream with `params` (each parameter's
/// bytes), printing each launch-and-synchronise time under `what`.
fn time_launches(d: &Driver, f: CUfunction, what: &str, grid: [u32; 3], block: [u32; 3], params: &[Vec<u8>]) {
    let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    for run in 0..env("PTX_SPEED_RUNS", 3) {
        let start = Instant::now();
        ok(launch_kernel(d, f, grid, block, 0, std::ptr::null_mut(), &mut ptrs));
        // SAFETY: the NULL stream.
        ok(unsafe { d.p().cuStreamSynchronize(std::ptr::null_mut()) });
        let s = start.elapsed().as_secs_f64();
        println!("{what} run {run}: launch+sync {s:.3} s ({threads} host threads)");
    }
}

#[test]
#[ignore = "a measurement: run it in release with --ignored --nocapture"]
fn vector_add_16m_through_the_c_entry_points() {
    let n = env("PTX_SPEED_N", 1 << 24);
    let (d, f) = corpus_kernel("vector_add");
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let (pa, pb, pc) = (alloc(&d, &bytes(&a)), alloc(&d, &bytes(&b)), alloc(&d, &vec![0; 4 * n]));
    let count = i32::try_from(n).unwrap();
    let params =
        [pa.to_le_bytes().to_vec(), pb.to_le_bytes().to_vec(), pc.to_le_bytes().to_vec(), count.to_le_bytes().to_vec()];
    let blocks = u32::try_from(n.div_ceil(256)).unwrap();
    time_launches(&d, f, &format!("vector_add n={n}"), [blocks, 1, 1], [256, 1, 1], &params);
    for (i, got) in floats(&d, pc, n).into_iter().enumerate() {
        assert_eq!(got, a[i] + b[i], "element {i}");
    }
}

#[test]
#[ignore = "a measurement: run it in release with --ignored --nocapture"]
fn saxpy_4m_through_the_c_entry_points() {
    let n = 1 << 22;
    let (d, f) = corpus_kernel("saxpy");
    let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 313) as f32).collect();
    let (px, py) = (alloc(&d, &bytes(&x)), alloc(&d, &bytes(&y)));
    let runs = env("PTX_SPEED_RUNS", 3);
    let params = [
        2.0f32.to_le_bytes().to_vec(),
        px.to_le_bytes().to_vec(),
        py.to_le_bytes().to_vec(),
        (n as i32).to_le_bytes().to_vec(),
    ];
    time_launches(&d, f, &format!("saxpy n={n}"), [u32::try_from(n / 256).unwrap(), 1, 1], [256, 1, 1], &params);
    // y = 2x + y, once per launch (one rounding each: fma).
    for (i, got) in floats(&d, py, n).into_iter().enumerate() {
        let want = (0..runs).fold(y[i], |acc, _| 2.0f32.mul_add(x[i], acc));
        assert_eq!(got, want, "element {i}");
    }
}

#[test]
#[ignore = "a measurement: run it in release with --ignored --nocapture"]
fn tiled_sgemm_512_through_the_c_entry_points() {
    let n = 512;
    let (d, f) = corpus_kernel("matmul_tiled");
    let a: Vec<f32> = (0..n * n).map(|i| (i % 17) as f32 * 0.125).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 11) as f32 - 5.0).collect();
    let (pa, pb, pc) = (alloc(&d, &bytes(&a)), alloc(&d, &bytes(&b)), alloc(&d, &vec![0; 4 * n * n]));
    let params = [
        pa.to_le_bytes().to_vec(),
        pb.to_le_bytes().to_vec(),
        pc.to_le_bytes().to_vec(),
        (n as i32).to_le_bytes().to_vec(),
    ];
    let g = u32::try_from(n / 16).unwrap();
    time_launches(&d, f, &format!("tiled sgemm {n}^3"), [g, g, 1], [16, 16, 1], &params);
    // Small integers and eighths: every partial sum is exact, whatever the order.
    let c = floats(&d, pc, n * n);
    for (row, col) in [(0, 0), (1, 7), (100, 200), (511, 511), (257, 3)] {
        let want: f32 = (0..n).map(|k| a[row * n + k] * b[k * n + col]).sum();
        assert_eq!(c[row * n + col], want, "C[{row}][{col}]");
    }
}
