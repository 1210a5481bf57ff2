//! Launches of PTX a fuzzer (or any embedder running untrusted PTX) feeds: an instruction
//! limit stops a kernel that never ends (`Module::set_instruction_limit`).

use cudrv_ptx::{Fault, HostMemory, Module};

/// A kernel that branches to itself forever.
const ENDLESS: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin()
{
$L_top:
    bra.uni $L_top;
}
";

/// A kernel that loops `n` times (a parameter) and ends.
const COUNTED: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry count(.param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
$L_top:
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra $L_top;
    ret;
}
";

#[test]
fn an_endless_kernel_stops_at_the_limit() {
    let mut m = Module::load(ENDLESS).unwrap();
    m.set_instruction_limit(Some(10_000));
    let mem = HostMemory::new();
    // Several blocks on several host threads: the limit is the launch's, all blocks together.
    let r = m.launch_on("spin", [4, 1, 1], [64, 1, 1], 0, &[], &mem, 4);
    assert_eq!(r, Err(Fault::InstructionLimit { limit: 10_000 }));
    assert_eq!(r.unwrap_err().to_string(), "the launch needs more than 10000 warp instructions");
}

#[test]
fn a_kernel_within_the_limit_runs_to_its_end() {
    let mut m = Module::load(COUNTED).unwrap();
    let mem = HostMemory::new();
    let n = 100u32.to_le_bytes();
    let stats = m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1).unwrap();
    assert!(stats.warp_instructions > 200, "{stats:?}");

    // Exactly what it needs: it ends; one instruction less: it stops.
    m.set_instruction_limit(Some(stats.warp_instructions));
    assert_eq!(m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1), Ok(stats));
    m.set_instruction_limit(Some(stats.warp_instructions - 1));
    assert_eq!(
        m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1),
        Err(Fault::InstructionLimit { limit: stats.warp_instructions - 1 })
    );

    // No limit again: it runs as before.
    m.set_instruction_limit(None);
    assert_eq!(m.launch_on("count", [2, 1, 1], [32, 1, 1], 0, &[&n], &mem, 1), Ok(stats));
}

/// A module whose kernel declares `decl` (a line of its body) and returns.
fn with_decl(decl: &str) -> String {
    format!(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n{decl}\n    ret;\n}}\n")
}

#[test]
fn numbers_that_do_not_fit_are_refused_with_their_line() {
    for (decl, what) in [
        ("    .reg .b64 %rd<4294967298>;", "count of registers 4294967298 out of range"),
        ("    .local .align 4294967296 .b8 a[16];", "alignment 4294967296 out of range"),
        ("    .local .align 3 .b8 a[16];", "alignment 3 is not a power of two"),
        ("    .local .align 8 .b8 a[18446744073709551617];", "array dimension 18446744073709551617 out of range"),
    ] {
        let err = Module::load(&with_decl(decl)).err().unwrap_or_else(|| panic!("{decl} was taken"));
        let text = err.to_string();
        assert!(text.contains(what) && text.contains("line 6"), "{decl}: {text}");
    }
    // What fits still loads.
    Module::load(&with_decl("    .reg .b64 %rd<1000>;\n    .local .align 16 .b8 a[4096];")).unwrap();
    let bad = ".version 8.0\n.target sm_90\n.address_size 48\n";
    assert!(Module::load(bad).unwrap_err().to_string().contains("address size 48 is not 32 or 64"));
}

/// A kernel calling `rec(n)`, which recurses `n` times, each frame with `frame` bytes of
/// local memory it writes.
fn recursion(frame: u32) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .func rec(.param .b32 n)\n{{\n.local .align 16 .b8 buf[{frame}];\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n.reg .b64 %rd<2>;\n\
         ld.param.u32 %r1, [n];\nmov.u64 %rd1, buf;\nst.local.u32 [%rd1], %r1;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra DONE;\nsub.u32 %r2, %r1, 1;\n\
         {{\n.param .b32 a0;\nst.param.b32 [a0], %r2;\ncall.uni rec, (a0);\n}}\nDONE:\nret;\n}}\n\
         .visible .entry k(.param .u32 depth)\n{{\n.reg .b32 %r<2>;\nld.param.u32 %r1, [depth];\n\
         {{\n.param .b32 a0;\nst.param.b32 [a0], %r1;\ncall.uni rec, (a0);\n}}\nret;\n}}\n"
    )
}

#[test]
fn recursion_past_the_stack_limit_fails_the_launch_without_exhausting_the_host() {
    // 64 KiB frames: the first call is what the call graph needs (the stack grows to it);
    // a second frame is past it: the GPU answers LAUNCH_OUT_OF_RESOURCES, the executor
    // faults with StackOverflow at the recursive call (line 19), having taken 64 KiB a thread.
    let m = Module::load(&recursion(65536)).unwrap();
    let mem = HostMemory::new();
    let run = |depth: u32| m.launch_on("k", [1, 1, 1], [32, 1, 1], 0, &[&depth.to_le_bytes()], &mem, 1);
    run(0).unwrap();
    assert_eq!(run(1), Err(Fault::StackOverflow { line: 19 }));
    assert_eq!(run(4000), Err(Fault::StackOverflow { line: 19 }));
    // 16-byte frames: 1024 bytes (the default stack) hold 64 of them.
    let m = Module::load(&recursion(16)).unwrap();
    let run = |depth: u32| m.launch_on("k", [1, 1, 1], [32, 1, 1], 0, &[&depth.to_le_bytes()], &mem, 1);
    run(63).unwrap();
    assert_eq!(run(64), Err(Fault::StackOverflow { line: 19 }));
}
