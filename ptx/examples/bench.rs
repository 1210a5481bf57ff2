//! Executed thread-instructions per second on SAXPY, a 512³ shared-memory-tiled SGEMM and a
//! vector add over 16M elements (the corpus's NVRTC PTX), and a loop of integer arithmetic
//! (1024 threads, `LOOP_ITERATIONS` turns of 7 instructions), on 1 host thread and on all
//! of them.
//!
//!     cargo run --release -p cudrv-ptx --example bench [-- N_SAXPY SGEMM_N N_VECTOR_ADD LOOP_ITERATIONS]
use std::time::Instant;

use cudrv_ptx::{HostMemory, Module};

fn corpus(name: &str) -> Module {
    let path = format!("{}/corpus/{name}/kernel.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Module::load(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// 1024 threads (4 blocks of 256), each turning an LCG `iters` times with a shift and a
/// xor of its index mixed in (7 instructions a turn), then storing it.
const LOOP: &str = ".version 9.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 iters)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [iters];
    mov.u32 %r2, %tid.x;
    mov.u32 %r7, %ctaid.x;
    mad.lo.u32 %r2, %r7, 256, %r2;
    mov.u32 %r3, %r2;
    mov.u32 %r4, 0;
$LOOP:
    mad.lo.u32 %r3, %r3, 1664525, 1013904223;
    xor.b32 %r5, %r3, %r2;
    shr.u32 %r6, %r5, 3;
    add.u32 %r3, %r3, %r6;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r1;
    @%p1 bra $LOOP;
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
";

fn floats(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345) | 1;
    (0..n)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((x >> 8) as f32 / 16_777_216.0 * 2.0 - 1.0).to_le_bytes()
        })
        .collect()
}

/// This process's CPU time (user + system) in seconds, from /proc (Linux; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn report(what: &str, threads: usize, instr: u64, secs: f64, cpu: f64) {
    let rate = instr as f64 / secs;
    println!(
        "{what:<22} {threads} thread(s): {instr:>11} thread-instr, {secs:6.3} s wall = {rate:9.3e}/s; {cpu:6.2} s CPU = {:9.3e}/s per CPU-second",
        instr as f64 / cpu.max(0.01)
    );
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let n_saxpy = args.first().copied().unwrap_or(1 << 22);
    let n = args.get(1).copied().unwrap_or(512);
    let n_vadd = args.get(2).copied().unwrap_or(1 << 24);
    let iters = args.get(3).copied().unwrap_or(100_000);
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut counts: Vec<usize> = vec![1, all];
    counts.dedup();

    let saxpy = corpus("saxpy");
    let mut mem = HostMemory::new();
    let x = mem.alloc_from(&floats(n_saxpy, 1));
    let y = mem.alloc_from(&floats(n_saxpy, 2));
    for &t in &counts {
        let blocks = (n_saxpy as u32).div_ceil(256);
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let st = saxpy
            .launch_on(
                "saxpy",
                [blocks, 1, 1],
                [256, 1, 1],
                0,
                &[&2.0f32.to_le_bytes(), &x.to_le_bytes(), &y.to_le_bytes(), &(n_saxpy as i32).to_le_bytes()],
                &mem,
                t,
            )
            .expect("saxpy");
        let secs = start.elapsed().as_secs_f64();
        report(&format!("saxpy n={n_saxpy}"), t, st.thread_instructions, secs, cpu_seconds() - cpu0);
    }

    let mm = corpus("matmul_tiled");
    let a = mem.alloc_from(&floats(n * n, 3));
    let b = mem.alloc_from(&floats(n * n, 4));
    let c = mem.alloc(n * n * 4);
    for &t in &counts {
        let g = (n as u32).div_ceil(16);
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let st = mm
            .launch_on(
                "matmul_tiled",
                [g, g, 1],
                [16, 16, 1],
                0,
                &[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes(), &(n as i32).to_le_bytes()],
                &mem,
                t,
            )
            .expect("sgemm");
        let secs = start.elapsed().as_secs_f64();
        report(&format!("tiled sgemm {n}^3"), t, st.thread_instructions, secs, cpu_seconds() - cpu0);
    }

    let vadd = corpus("vector_add");
    let a = mem.alloc_from(&floats(n_vadd, 5));
    let b = mem.alloc_from(&floats(n_vadd, 6));
    let c = mem.alloc(n_vadd * 4);
    for &t in &counts {
        let blocks = (n_vadd as u32).div_ceil(256);
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let st = vadd
            .launch_on(
                "vector_add",
                [blocks, 1, 1],
                [256, 1, 1],
                0,
                &[&a.to_le_bytes(), &b.to_le_bytes(), &c.to_le_bytes(), &(n_vadd as i32).to_le_bytes()],
                &mem,
                t,
            )
            .expect("vector_add");
        let secs = start.elapsed().as_secs_f64();
        report(&format!("vector_add n={n_vadd}"), t, st.thread_instructions, secs, cpu_seconds() - cpu0);
    }

    let spin = Module::load(LOOP).expect("loop kernel");
    let out = mem.alloc(1024 * 4);
    for &t in &counts {
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let st = spin
            .launch_on("spin", [4, 1, 1], [256, 1, 1], 0, &[&out.to_le_bytes(), &(iters as u32).to_le_bytes()], &mem, t)
            .expect("loop");
        let secs = start.elapsed().as_secs_f64();
        report(&format!("loop {iters} turns"), t, st.thread_instructions, secs, cpu_seconds() - cpu0);
    }
}
