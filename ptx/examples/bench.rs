//! The two executors side by side, in one process: executed thread-instructions per second
//! of the interpreter and of the compiled executor on SAXPY, a 512³ shared-memory-tiled
//! SGEMM and a vector add over 16M elements (the corpus's NVRTC PTX), and a loop of integer
//! arithmetic (1024 threads, `LOOP_ITERATIONS` turns of 7 instructions), on 1 host thread and
//! on all of them; each kernel's first launch through a freshly loaded module is also timed
//! end to end (load, translation, launch). Then what translation costs: per corpus kernel
//! and per 100k lines of PTX, its time and the memory its steps hold.
//!
//!     cargo run --release -p cudrv-ptx --example bench [-- N_SAXPY SGEMM_N N_VECTOR_ADD LOOP_ITERATIONS]
//!
//! (`taskset -c 0,1` before it: the figures on 1 and 2 cores.)
use std::time::Instant;

use cudrv_ptx::{Executor, HostMemory, LaunchStats, Module};

/// The kernel corpus: `CUDRV_PTX_CORPUS` (for a binary run elsewhere than it was built),
/// else this crate's `corpus/`.
fn corpus_dir() -> String {
    std::env::var("CUDRV_PTX_CORPUS").unwrap_or_else(|_| format!("{}/corpus", env!("CARGO_MANIFEST_DIR")))
}

fn corpus_text(name: &str) -> String {
    let path = format!("{}/{name}/kernel.ptx", corpus_dir());
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
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

fn report(what: &str, executor: &str, threads: usize, instr: u64, secs: f64, cpu: f64) -> f64 {
    let rate = instr as f64 / cpu.max(0.001);
    println!(
        "{what:<22} {executor:<11} {threads} thread(s): {instr:>11} thread-instr, {secs:7.3} s wall = {:9.3e}/s; {cpu:7.2} s CPU = {rate:9.3e}/s per CPU-second",
        instr as f64 / secs
    );
    rate
}

/// One kernel's launch, as the benchmark repeats it.
struct Case<'a> {
    name: String,
    text: &'a str,
    kernel: &'a str,
    grid: [u32; 3],
    block: [u32; 3],
    params: Vec<Vec<u8>>,
}

const EXECUTORS: [(Executor, &str); 2] = [(Executor::Interpreter, "interpreter"), (Executor::Compiled, "compiled")];

impl Case<'_> {
    fn launch(&self, module: &Module, mem: &HostMemory, threads: usize) -> LaunchStats {
        let params: Vec<&[u8]> = self.params.iter().map(|p| p.as_slice()).collect();
        module
            .launch_on(self.kernel, self.grid, self.block, 0, &params, mem, threads)
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }

    /// Each executor: the first launch on all threads through a fresh module, end to end
    /// (load, translation, launch); then the launch again on 1 thread and on all of them.
    /// Prints the compiled executor's ratio to the interpreter's per CPU-second.
    fn run(&self, mem: &HostMemory, counts: &[usize]) {
        let all = counts.last().copied().unwrap_or(1);
        let mut rates = Vec::new();
        let mut firsts = Vec::new();
        // PTX_BENCH_ONLY=interpreter|compiled: one of them (to profile it alone).
        let only = std::env::var("PTX_BENCH_ONLY").ok();
        for (executor, label) in EXECUTORS {
            if only.as_deref().is_some_and(|o| o != label) {
                continue;
            }
            let start = Instant::now();
            let mut module = Module::load(self.text).unwrap_or_else(|e| panic!("{}: {e}", self.name));
            module.set_executor(executor);
            self.launch(&module, mem, all);
            let first = start.elapsed().as_secs_f64();
            println!(
                "{:<22} {label:<11} first launch end to end (load, translation, {all} threads): {first:7.3} s",
                self.name
            );
            firsts.push(first);
            for &t in counts {
                let (start, cpu0) = (Instant::now(), cpu_seconds());
                let st = self.launch(&module, mem, t);
                let secs = start.elapsed().as_secs_f64();
                rates.push(report(&self.name, label, t, st.thread_instructions, secs, cpu_seconds() - cpu0));
            }
        }
        let n = counts.len();
        let ratios: Vec<String> = (0..n)
            .map(|i| format!("{:.2}x", rates.get(n + i).copied().unwrap_or(0.0) / rates.get(i).copied().unwrap_or(1.0)))
            .collect();
        println!(
            "{:<22} compiled / interpreter: {} per CPU-second ({:?} threads), end to end {:.2}x",
            self.name,
            ratios.join(" "),
            counts,
            firsts.first().copied().unwrap_or(0.0) / firsts.get(1).copied().unwrap_or(1.0)
        );
    }
}

/// `lines` lines of PTX in one kernel: blocks of arithmetic, a compare, a branch to a
/// label and a store, as NVRTC lays out straight-line code.
fn long_kernel(lines: usize) -> String {
    let mut t = String::from(
        ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry long(.param .u64 out)\n{\n    .reg .pred %p<2>;\n    .reg .b32 %r<16>;\n    .reg .f32 %f<8>;\n    .reg .b64 %rd<4>;\n    ld.param.u64 %rd1, [out];\n    cvta.to.global.u64 %rd1, %rd1;\n    mov.u32 %r1, %tid.x;\n",
    );
    let mut n = 0;
    let mut label = 0;
    while n < lines {
        t.push_str("    add.s32 %r2, %r1, 7;\n    mad.lo.s32 %r3, %r2, %r1, 3;\n    xor.b32 %r4, %r3, %r2;\n    shr.u32 %r5, %r4, 2;\n    cvt.rn.f32.s32 %f1, %r5;\n    fma.rn.f32 %f2, %f1, 0f3F000000, %f1;\n    mul.wide.u32 %rd2, %r1, 4;\n    add.s64 %rd3, %rd1, %rd2;\n    st.global.f32 [%rd3], %f2;\n");
        t.push_str(&format!(
            "    setp.gt.u32 %p1, %r5, 100;\n    @%p1 bra $L{label};\n    add.s32 %r1, %r1, 1;\n$L{label}:\n"
        ));
        label += 1;
        n += 13;
    }
    t.push_str("    ret;\n}\n");
    t
}

/// Module load and translation of one text: milliseconds each, and what was translated.
fn translation(name: &str, text: &str) {
    let start = Instant::now();
    let module = Module::load(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let load = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    let st = module.compile();
    let compile = start.elapsed().as_secs_f64() * 1e3;
    println!(
        "translate {name:<26} {:>7} lines: load {load:8.3} ms, translation {compile:8.3} ms; {} of {} instructions as steps, {} bytes of steps ({:.0} per instruction); {} runs of {} instructions as machine code, {} bytes",
        text.lines().count(),
        st.translated,
        st.instructions,
        st.bytes,
        st.bytes as f64 / st.instructions.max(1) as f64,
        st.native_runs,
        st.native_instructions,
        st.native_bytes,
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

    let mut mem = HostMemory::new();
    let (saxpy, mm, vadd) = (corpus_text("saxpy"), corpus_text("matmul_tiled"), corpus_text("vector_add"));
    let le = |v: u64| v.to_le_bytes().to_vec();
    let x = mem.alloc_from(&floats(n_saxpy, 1));
    let y = mem.alloc_from(&floats(n_saxpy, 2));
    let a = mem.alloc_from(&floats(n * n, 3));
    let b = mem.alloc_from(&floats(n * n, 4));
    let c = mem.alloc(n * n * 4);
    let va = mem.alloc_from(&floats(n_vadd, 5));
    let vb = mem.alloc_from(&floats(n_vadd, 6));
    let vc = mem.alloc(n_vadd * 4);
    let out = mem.alloc(1024 * 4);
    let g = (n as u32).div_ceil(16);
    let cases = [
        Case {
            name: format!("saxpy n={n_saxpy}"),
            text: &saxpy,
            kernel: "saxpy",
            grid: [(n_saxpy as u32).div_ceil(256), 1, 1],
            block: [256, 1, 1],
            params: vec![2.0f32.to_le_bytes().to_vec(), le(x), le(y), (n_saxpy as i32).to_le_bytes().to_vec()],
        },
        Case {
            name: format!("tiled sgemm {n}^3"),
            text: &mm,
            kernel: "matmul_tiled",
            grid: [g, g, 1],
            block: [16, 16, 1],
            params: vec![le(a), le(b), le(c), (n as i32).to_le_bytes().to_vec()],
        },
        Case {
            name: format!("vector_add n={n_vadd}"),
            text: &vadd,
            kernel: "vector_add",
            grid: [(n_vadd as u32).div_ceil(256), 1, 1],
            block: [256, 1, 1],
            params: vec![le(va), le(vb), le(vc), (n_vadd as i32).to_le_bytes().to_vec()],
        },
        Case {
            name: format!("loop {iters} turns"),
            text: LOOP,
            kernel: "spin",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            params: vec![le(out), (iters as u32).to_le_bytes().to_vec()],
        },
    ];
    for case in &cases {
        case.run(&mem, &counts);
    }

    let dir = corpus_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().join("kernel.ptx").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in &names {
        translation(name, &corpus_text(name));
    }
    translation("generated (100k lines)", &long_kernel(100_000));
}
