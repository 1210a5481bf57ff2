//! Large PTX (`tests/gen`): a kernel of 100k labelled blocks, thousands of functions with
//! their call sequences, tens of thousands of registers, a long basic block. Each loads
//! (in time linear in its text: `examples/load.rs` measures it) and runs to the values
//! the host computes.

use cudrv_ptx::{Fault, HostMemory, Module};

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
fn a_chain_of_100k_calls_launches_without_exhausting_the_host_stack() {
    // What a launch works out of the call graph (the stack it needs) walks a chain of
    // 100k functions; running it is past the executor's 4096 frames: a fault, not a crash.
    let m = Module::load(&gen::call_chain(100_000)).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(4);
    let r = m.launch("chain", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem);
    assert!(matches!(r, Err(Fault::StackOverflow { .. })), "{r:?}");
    // 4000 deep runs to its end.
    let m = Module::load(&gen::call_chain(4000)).unwrap();
    m.launch("chain", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    assert_eq!(words(&mem, out, 1), [4000]);
}

#[test]
fn call_sequences_reuse_their_parameter_bytes() {
    // 100k call sequences, each with its `.param` pair in a `{ }` of its own: the frame
    // needs 8 bytes of them, not 800 KB (past the 512 KiB a frame may have).
    let n = 100_000u32;
    let m = Module::load(&gen::many_calls(n)).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(4);
    m.launch("calls", [1, 1, 1], [32, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    assert_eq!(words(&mem, out, 1), [n]);
}

#[test]
fn sibling_blocks_reuse_their_register_slots() {
    // 100k blocks `{ .reg .b32 %t; ... }` (NVRTC's inline asm): each block's %t is its
    // own, and a frame needs one slot for all of them, not 100k (past 65536).
    let n = 100_000;
    let mut body = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n\
         .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, 0;\n",
    );
    for i in 0..n {
        body.push_str(&format!("{{\n.reg .b32 %t;\nadd.u32 %t, %r1, {};\nmov.u32 %r1, %t;\n}}\n", i % 3));
    }
    body.push_str("st.global.u32 [%rd1], %r1;\nret;\n}\n");
    let m = Module::load(&body).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(4);
    m.launch("k", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    assert_eq!(words(&mem, out, 1), [(0..n).map(|i| i % 3).sum::<u32>()]);
}

#[test]
fn a_range_of_100k_registers_is_declared_and_what_is_named_gets_slots() {
    // %r<100000> declared, 60000 of them named: it loads and runs, and attributes report
    // what the PTX declares.
    let text = gen::many_registers(60_000).replace("%r<60000>", "%r<100000>");
    let m = Module::load(&text).unwrap();
    assert_eq!(m.kernel_info("chain").unwrap().registers, 100_000 + 3);
    let mut mem = HostMemory::new();
    let out = mem.alloc(4);
    m.launch("chain", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    assert_eq!(words(&mem, out, 1), [gen::chain_expected(60_000)]);
    // A frame of more than 65536 registers is refused, naming the instruction.
    let e = Module::load(&gen::many_registers(70_000)).unwrap_err();
    assert!(e.message.contains("more than 65536 registers") && e.instruction.starts_with("mad"), "{e}");
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
