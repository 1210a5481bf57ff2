//! The compiling executor against the interpreter where they could part: the counts a
//! launch reports (a converged warp runs its compiled steps back to back, counted as the
//! scheduler counts them), the instruction limit falling inside such a run, a fault in a
//! compiled shared-memory access (the address, the line, the lanes before it done), and
//! diverged warps (steps over part of a warp). The instruction suite and the kernel corpus
//! compare the two on every form and case (`tests/suite/run.rs`, `tests/corpus.rs`).

use cudrv_ptx::{Executor, Fault, GlobalMemory, HostMemory, LaunchStats, Module};

/// `spin(out, n)`: each thread turns an LCG `n + tid % 7` times (the warp diverges when
/// threads leave the loop), then stores it. `shared(out, bad)`: each thread stores its
/// index in shared memory and reads back the word of `bad` when its index is 5 (out of the
/// array when `bad` is large), then stores what it read. `global(out, mode)`: each thread
/// loads `out[tid]` from one byte further when its index is 7 and `mode` is 0 (misaligned),
/// and stores its index to `out[tid]`, a gigabyte further when its index is 9 and `mode`
/// is 1 (outside the allocation).
const PTX: &str = ".version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<9>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    rem.u32 %r8, %r2, 7;
    add.u32 %r1, %r1, %r8;
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
.visible .entry shared(.param .u64 out, .param .u32 bad)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 s[128];
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [bad];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, s;
    shl.b32 %r4, %r2, 2;
    add.u32 %r5, %r3, %r4;
    st.shared.u32 [%r5], %r2;
    bar.sync 0;
    setp.eq.u32 %p1, %r2, 5;
    shl.b32 %r6, %r1, 2;
    add.u32 %r6, %r3, %r6;
    selp.b32 %r7, %r6, %r5, %p1;
    ld.shared.u32 %r7, [%r7+0];
    cvta.to.global.u64 %rd1, %rd1;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
    ret;
}
.visible .entry global(.param .u64 out, .param .u32 mode)
{
    .reg .pred %p<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [mode];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    setp.eq.u32 %p1, %r2, 7;
    setp.eq.u32 %p2, %r1, 0;
    and.pred %p1, %p1, %p2;
    selp.u64 %rd4, 1, 0, %p1;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.u32 %r3, [%rd5];
    setp.eq.u32 %p1, %r2, 9;
    setp.eq.u32 %p3, %r1, 1;
    and.pred %p1, %p1, %p3;
    selp.u64 %rd6, 1073741824, 0, %p1;
    add.s64 %rd7, %rd3, %rd6;
    add.u32 %r4, %r3, %r2;
    st.global.u32 [%rd7], %r4;
    ret;
}
";

/// `kernel` with `arg` over one block of 32 threads through `executor`, with `limit`: what
/// the launch answered and the 32 words it stored.
fn run(kernel: &str, arg: u32, executor: Executor, limit: Option<u64>) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    let mut m = Module::load(PTX).unwrap();
    m.set_executor(executor);
    m.set_instruction_limit(limit);
    let mut mem = HostMemory::new();
    let out = mem.alloc(128);
    mem.write(out, &[0xee; 128]).unwrap();
    let r = m.launch_on(kernel, [1, 1, 1], [32, 1, 1], 0, &[&out.to_le_bytes(), &arg.to_le_bytes()], &mem, 1);
    (r, mem.bytes(out, 128).unwrap())
}

fn both(kernel: &str, arg: u32, limit: Option<u64>) -> (Result<LaunchStats, Fault>, Vec<u8>) {
    let interpreted = run(kernel, arg, Executor::Interpreter, limit);
    let compiled = run(kernel, arg, Executor::Compiled, limit);
    assert_eq!(interpreted, compiled, "{kernel}({arg}), limit {limit:?}");
    compiled
}

#[test]
fn a_diverging_loop_counts_and_computes_alike() {
    let (r, out) = both("spin", 50, None);
    let stats = r.unwrap();
    // 7 + 7 turns' worth of lanes at least, every lane's word written.
    assert!(stats.thread_instructions > 32 * 50 * 7, "{stats:?}");
    assert!(out.chunks(4).all(|w| w != [0xee; 4]));
}

#[test]
fn the_instruction_limit_falls_at_the_same_instruction() {
    for limit in [1, 5, 9, 40, 41, 42, 100, 377] {
        let (r, _) = both("spin", 50, Some(limit));
        assert_eq!(r, Err(Fault::InstructionLimit { limit }));
    }
}

#[test]
fn a_fault_in_a_compiled_shared_load_names_the_same_address_and_line() {
    let (r, out) = both("shared", 3, None);
    r.unwrap();
    assert_eq!(&out[20..24], &3u32.to_le_bytes());
    let (r, _) = both("shared", 1 << 20, None);
    let line = PTX.lines().position(|l| l.contains("ld.shared.u32 %r7")).unwrap() as u32 + 1;
    assert!(matches!(r, Err(Fault::IllegalAddress { line: l, .. }) if l == line), "{r:?}");
}

#[test]
fn faults_in_compiled_global_accesses_are_the_interpreters() {
    let (r, out) = both("global", 2, None);
    r.unwrap();
    assert_eq!(&out[12..16], &(0xeeee_eeeeu32.wrapping_add(3)).to_le_bytes());
    let line = |text: &str| PTX.lines().position(|l| l.contains(text)).unwrap() as u32 + 1;
    let (r, _) = both("global", 0, None);
    assert!(matches!(r, Err(Fault::MisalignedAddress { line: l, .. }) if l == line("ld.global.u32 %r3")), "{r:?}");
    let (r, _) = both("global", 1, None);
    assert!(matches!(r, Err(Fault::IllegalAddress { line: l, .. }) if l == line("st.global.u32 [%rd7]")), "{r:?}");
}

/// `Module::compile` translates each function once and counts every instruction: the
/// three kernels' instruction lines (less declarations, labels and braces) and the return
/// each body is given at its end (a body that falls off its end returns), the
/// loop's arithmetic among those translated, the same figures on a second call (the
/// steps kept), and launches afterwards give what they gave before.
#[test]
fn compile_counts_every_instruction_once_and_changes_no_result() {
    let m = Module::load(PTX).unwrap();
    let instructions = PTX
        .lines()
        .map(str::trim)
        .filter(|l| {
            !(l.is_empty() || l.starts_with('.') || l.starts_with('{') || l.starts_with('}') || l.ends_with(':'))
        })
        .count();
    let first = m.compile();
    assert_eq!(first.instructions, instructions + 3, "{first:?}");
    assert!(first.translated > 40 && first.translated < first.instructions, "{first:?}");
    assert!(first.bytes >= first.translated * 16, "{first:?}");
    assert_eq!(m.compile(), first);
    let before = both("spin", 50, None);
    let mut compiled = Module::load(PTX).unwrap();
    compiled.set_executor(Executor::Compiled);
    compiled.compile();
    let mut mem = HostMemory::new();
    let out = mem.alloc(128);
    mem.write(out, &[0xee; 128]).unwrap();
    let r = compiled.launch_on("spin", [1, 1, 1], [32, 1, 1], 0, &[&out.to_le_bytes(), &50u32.to_le_bytes()], &mem, 1);
    assert_eq!((r, mem.bytes(out, 128).unwrap()), before);
}
