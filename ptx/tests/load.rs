//! Large PTX (`tests/gen`): a kernel of 100k labelled blocks, thousands of functions with
//! their call sequences, tens of thousands of registers, a long basic block. Each loads
//! (in time linear in its text: `examples/load.rs` measures it) and runs to the values
//! the host computes.

use cudrv_ptx::{HostMemory, Module};

mod gen;

fn words(mem: &HostMemory, at: u64, n: usize) -> Vec<u32> {
    let bytes = mem.bytes(at, n * 4).unwrap();
    bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs `walk` of [`gen::label_kernel`]`(n)` over `threads` threads for `steps` blocks each
/// and checks every thread's hash and count against the host's walk.
fn walk(m: &Module, n: u32, threads: u32, steps: u32) -> Vec<Vec<u32>> {
    let mut mem = HostMemory::new();
    let out = mem.alloc(threads as usize * 8);
    m.launch("walk", [1, 1, 1], [threads, 1, 1], 0, &[&out.to_le_bytes(), &steps.to_le_bytes()], &mem).unwrap();
    let got = words(&mem, out, threads as usize * 2);
    let mut paths = Vec::new();
    for tid in 0..threads {
        let (h, count, path) = gen::walk_expected(n, tid, steps);
        let at = tid as usize * 2;
        assert_eq!(got[at..at + 2], [h, count], "thread {tid} of the {n}-block walk");
        paths.push(path);
    }
    paths
}

#[test]
fn a_kernel_of_100k_labels_loads_and_its_branches_land() {
    let n = 100_000;
    let m = Module::load(&gen::label_kernel(n)).unwrap();
    let paths = walk(&m, n, 4, 40_000);
    // The walks went forward and backward, near and far, and reached the last blocks.
    let jumps: Vec<i64> = paths.iter().flat_map(|p| p.windows(2).map(|w| i64::from(w[1]) - i64::from(w[0]))).collect();
    assert!(jumps.iter().any(|&d| d < -50_000) && jumps.iter().any(|&d| d > 50_000));
    assert!(jumps.contains(&1) && jumps.contains(&100));
    assert!(paths.iter().flatten().any(|&k| k >= n - 100));
}

#[test]
fn small_label_kernels_walk_every_block() {
    for n in [1, 2, 3, 64, 1000] {
        let m = Module::load(&gen::label_kernel(n)).unwrap();
        let paths = walk(&m, n, 32, 4 * n);
        let mut seen = vec![false; n as usize];
        paths.iter().flatten().for_each(|&k| seen[k as usize] = true);
        assert!(seen.iter().filter(|&&s| s).count() * 2 > n as usize, "{n} blocks");
    }
}

#[test]
fn thousands_of_functions_and_call_sequences_load_and_run() {
    let n = 5000u32;
    let m = Module::load(&gen::many_functions(n)).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(4);
    m.launch("all", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let want = (0..n).fold(0u32, |x, i| x.wrapping_add(3 * i));
    assert_eq!(words(&mem, out, 1), [want]);
}

#[test]
fn a_long_basic_block_loads_and_runs() {
    let n = 20_000u32;
    let m = Module::load(&gen::long_block(n)).unwrap();
    let inputs: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    let mut mem = HostMemory::new();
    let bytes: Vec<u8> = inputs.iter().chain([0.0f32].iter()).flat_map(|v| v.to_le_bytes()).collect();
    let out = mem.alloc_from(&bytes);
    m.launch("sums", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let want = inputs.iter().fold(0.0f32, |s, &v| s + v);
    assert_eq!(words(&mem, out + 4 * u64::from(n), 1), [want.to_bits()]);
}
