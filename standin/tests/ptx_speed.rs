//! A measurement, not a test of CI's default runs (`#[ignore]`d): the corpus's `vector_add`
//! PTX over 16M floats through the stand-in's C entry points, the wall time of the launch
//! and its synchronisation printed. Run it in release:
//!
//! `cargo test --release -p cudrv-standin --test ptx_speed -- --ignored --nocapture`
//!
//! (`PTX_SPEED_N` sets the element count, `PTX_SPEED_RUNS` the number of launches.) The
//! outputs are checked, never the times.

mod common;

use std::ffi::{c_void, CString};
use std::path::Path;
use std::time::Instant;

use common::{driver, ok};
use cudrv::sys::CUdeviceptr;
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

#[test]
#[ignore = "a measurement: run it in release with --ignored --nocapture"]
fn vector_add_16m_through_the_c_entry_points() {
    let n = env("PTX_SPEED_N", 1 << 24);
    let runs = env("PTX_SPEED_RUNS", 3);
    let d = driver();
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; then the context just retained.
    unsafe {
        ok(d.p().cuDevicePrimaryCtxRetain(&mut ctx, 0));
        ok(d.p().cuCtxSetCurrent(ctx));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptx/corpus/vector_add/kernel.ptx");
    let text = CString::new(std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut m, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
    let name = CString::new("vector_add").unwrap();
    // SAFETY: a NUL-terminated image and name, valid out-pointers.
    unsafe {
        ok(d.p().cuModuleLoadData(&mut m, text.as_ptr().cast()));
        ok(d.p().cuModuleGetFunction(&mut f, m, name.as_ptr()));
    }
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (pa, pb, pc) = (alloc(&d, &bytes(&a)), alloc(&d, &bytes(&b)), alloc(&d, &vec![0; 4 * n]));
    let count = i32::try_from(n).unwrap();
    let params = [pa.to_le_bytes().to_vec(), pb.to_le_bytes().to_vec(), pc.to_le_bytes().to_vec()];
    let mut ptrs: Vec<*mut c_void> = params.iter().map(|p| p.as_ptr() as *mut c_void).collect();
    let mut count = count.to_le_bytes();
    ptrs.push(count.as_mut_ptr().cast());
    let blocks = u32::try_from(n.div_ceil(256)).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    for run in 0..runs {
        let start = Instant::now();
        // SAFETY: one pointer per parameter, each to its bytes, alive across the call; the
        // NULL stream.
        unsafe {
            ok(d.p().cuLaunchKernel(
                f,
                blocks,
                1,
                1,
                256,
                1,
                1,
                0,
                std::ptr::null_mut(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            ));
            ok(d.p().cuStreamSynchronize(std::ptr::null_mut()));
        }
        let s = start.elapsed().as_secs_f64();
        println!("vector_add n={n} run {run}: launch+sync {s:.3} s ({threads} host threads)");
    }
    let mut c = vec![0u8; 4 * n];
    // SAFETY: `4n` bytes of a live allocation into a buffer of `4n` bytes.
    ok(unsafe { d.p().cuMemcpyDtoH(c.as_mut_ptr().cast(), pc, c.len()) });
    for (i, got) in c.chunks_exact(4).enumerate() {
        let got = f32::from_le_bytes(got.try_into().unwrap());
        assert_eq!(got, a[i] + b[i], "element {i}");
    }
}
