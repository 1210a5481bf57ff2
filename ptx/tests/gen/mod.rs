//! Generators of large PTX texts, shaped like what NVRTC emits for big switches, unrolled
//! loops and many small functions: the load-time tests (`tests/load.rs`) and the load
//! benchmark (`examples/load.rs`) share them.
#![allow(dead_code)]

use std::fmt::Write;

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// The block a walk goes to from block `k` of `n` when its bit is 0 (forward, mostly the
/// next block) and when it is 1 (anywhere: backward or far forward).
fn successors(k: u32, n: u32) -> (u32, u32) {
    let a = if k % 8 == 7 { (k + 100) % n } else { (k + 1) % n };
    let b = ((u64::from(k) * 7919 + 13) % u64::from(n)) as u32;
    (a, b)
}

/// A kernel `walk(.param .u64 out, .param .u32 steps)` of `n` labelled blocks
/// `$L__BB0_k`. Each thread starts from block 0 with h = tid, and in block k does
/// h = h * 1664525 + k, counts the step, stops after `steps` steps, else branches on bit 16
/// of h (`@%p bra`, forward or backward). It stores h and the number of blocks it ran at
/// out[2 * tid], out[2 * tid + 1] (u32). [`walk_expected`] computes the same on the host.
pub fn label_kernel(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 260 + 1024);
    s.push_str(HEADER);
    s.push_str(
        ".visible .entry walk(\n\t.param .u64 walk_param_0,\n\t.param .u32 walk_param_1\n)\n{\n\
         \t.reg .pred %p<3>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<5>;\n\n\
         \tld.param.u64 %rd1, [walk_param_0];\n\tld.param.u32 %r4, [walk_param_1];\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, 0;\n\tbra.uni $L__BB0_0;\n",
    );
    for k in 0..n {
        let (a, b) = successors(k, n);
        let _ = write!(
            s,
            "$L__BB0_{k}:\n\tmad.lo.s32 %r1, %r1, 1664525, {k};\n\tadd.s32 %r2, %r2, 1;\n\
             \tsetp.ge.u32 %p1, %r2, %r4;\n\t@%p1 bra $L__BB0_done;\n\
             \tshr.u32 %r3, %r1, 16;\n\tand.b32 %r3, %r3, 1;\n\tsetp.eq.s32 %p2, %r3, 0;\n\
             \t@%p2 bra $L__BB0_{a};\n\tbra.uni $L__BB0_{b};\n"
        );
    }
    s.push_str(
        "$L__BB0_done:\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r5, %tid.x;\n\
         \tmul.wide.u32 %rd3, %r5, 8;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tst.global.u32 [%rd4], %r1;\n\tst.global.u32 [%rd4+4], %r2;\n\tret;\n}\n",
    );
    s
}

/// What thread `tid` of [`label_kernel`]`(n)` stores: (h, blocks run), and the blocks it
/// visited, in order.
pub fn walk_expected(n: u32, tid: u32, steps: u32) -> (u32, u32, Vec<u32>) {
    let (mut h, mut count, mut k) = (tid, 0u32, 0u32);
    let mut visited = Vec::new();
    loop {
        visited.push(k);
        h = h.wrapping_mul(1664525).wrapping_add(k);
        count += 1;
        if count >= steps {
            return (h, count, visited);
        }
        let (a, b) = successors(k, n);
        k = if (h >> 16) & 1 == 0 { a } else { b };
    }
}

/// A module of `n` functions `f_i(x)`, each a small loop with labels `$L__BB{i}_k` adding
/// i to x three times, and a kernel `all(.param .u64 out)` calling every one on a running
/// value (from 0) in its own `{ .param ...; call ... }` sequence, then storing it (u32).
/// The stored value is 3 * (0 + 1 + ... + n-1) modulo 2^32.
pub fn many_functions(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 700 + 1024);
    s.push_str(HEADER);
    for i in 0..n {
        let _ = write!(
            s,
            ".func  (.param .b32 func_retval0) f_{i}(\n\t.param .b32 f_{i}_param_0\n)\n{{\n\
             \t.reg .pred %p<2>;\n\t.reg .b32 %r<5>;\n\n\
             \tld.param.u32 %r1, [f_{i}_param_0];\n\tmov.u32 %r2, 0;\n\
             $L__BB{i}_1:\n\tadd.s32 %r1, %r1, {i};\n\tadd.s32 %r2, %r2, 1;\n\
             \tsetp.lt.u32 %p1, %r2, 3;\n\t@%p1 bra $L__BB{i}_1;\n\
             \tst.param.b32 [func_retval0], %r1;\n\tret;\n}}\n"
        );
    }
    s.push_str(
        ".visible .entry all(\n\t.param .u64 all_param_0\n)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [all_param_0];\n\tmov.u32 %r1, 0;\n",
    );
    for i in 0..n {
        let _ = write!(
            s,
            "\t{{ // callseq {i}, 0\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r1;\n\
             \t.param .b32 retval0;\n\tcall.uni (retval0), f_{i}, (param0);\n\
             \tld.param.b32 %r1, [retval0];\n\t}} // callseq {i}\n"
        );
    }
    s.push_str("\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n");
    s
}

/// A kernel `chain(.param .u64 out)` with `.reg .b32 %r<n>` and one basic block of n - 1
/// instructions, `%r{i} = %r{i-1} * 3 + i`, from %r0 = 1, and the last stored (u32).
pub fn many_registers(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 40 + 1024);
    s.push_str(HEADER);
    let _ = write!(
        s,
        ".visible .entry chain(\n\t.param .u64 chain_param_0\n)\n{{\n\t.reg .b32 %r<{n}>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [chain_param_0];\n\tmov.u32 %r0, 1;\n"
    );
    for i in 1..n {
        let _ = writeln!(s, "\tmad.lo.s32 %r{i}, %r{}, 3, {i};", i - 1);
    }
    let _ = write!(s, "\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r{};\n\tret;\n}}\n", n - 1);
    s
}

/// What [`many_registers`]`(n)` stores.
pub fn chain_expected(n: u32) -> u32 {
    (1..n).fold(1u32, |r, i| r.wrapping_mul(3).wrapping_add(i))
}

/// A kernel `sums(.param .u64 out)` with one basic block: n f32 loads, then n sums each
/// using one loaded value once (`add.f32`, the shape the mul+add contraction looks back
/// over), in a chain; the last sum is stored (f32 bits). `out` holds the n inputs first.
pub fn long_block(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 90 + 1024);
    s.push_str(HEADER);
    let _ = write!(
        s,
        ".visible .entry sums(\n\t.param .u64 sums_param_0\n)\n{{\n\t.reg .f32 %f<{}>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [sums_param_0];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.f32 %f0, 0f00000000;\n",
        2 * n + 1
    );
    for i in 0..n {
        let _ = writeln!(s, "\tld.global.f32 %f{}, [%rd2+{}];", i + 1, 4 * i);
    }
    for i in 0..n {
        let prev = if i == 0 { 0 } else { n + i };
        let _ = writeln!(s, "\tadd.f32 %f{}, %f{prev}, %f{};", n + i + 1, i + 1);
    }
    let _ = write!(s, "\tst.global.f32 [%rd2+{}], %f{};\n\tret;\n}}\n", 4 * n, 2 * n);
    s
}

/// A kernel `calls(.param .u64 out)` of n call sequences `{ .param param0; .param
/// retval0; call.uni (retval0), inc, (param0); }` to one function adding 1, from 0, the
/// result stored (u32): n modulo 2^32.
pub fn many_calls(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 200 + 1024);
    s.push_str(HEADER);
    s.push_str(
        ".func  (.param .b32 func_retval0) inc(\n\t.param .b32 inc_param_0\n)\n{\n\t.reg .b32 %r<3>;\n\n\
         \tld.param.u32 %r1, [inc_param_0];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [func_retval0], %r2;\n\tret;\n}\n\
         .visible .entry calls(\n\t.param .u64 calls_param_0\n)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [calls_param_0];\n\tmov.u32 %r1, 0;\n",
    );
    for i in 0..n {
        let _ = write!(
            s,
            "\t{{ // callseq {i}, 0\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r1;\n\
             \t.param .b32 retval0;\n\tcall.uni (retval0), inc, (param0);\n\
             \tld.param.b32 %r1, [retval0];\n\t}} // callseq {i}\n"
        );
    }
    s.push_str("\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n");
    s
}

/// A chain of n functions, `f_i` calling `f_{i+1}` (defined callee first), each adding 1
/// to a `.local` counter it passes on, and a kernel `chain(.param .u64 out)` calling
/// `f_0` with 0 and storing what comes back (u32): n.
pub fn call_chain(n: u32) -> String {
    let mut s = String::with_capacity(n as usize * 400 + 1024);
    s.push_str(HEADER);
    for i in (0..n).rev() {
        let _ = write!(
            s,
            ".func  (.param .b32 func_retval0) f_{i}(\n\t.param .b32 f_{i}_param_0\n)\n{{\n\
             \t.reg .b32 %r<3>;\n\n\tld.param.u32 %r1, [f_{i}_param_0];\n\tadd.s32 %r1, %r1, 1;\n"
        );
        if i + 1 < n {
            let _ = write!(
                s,
                "\t{{\n\t.param .b32 param0;\n\tst.param.b32 [param0], %r1;\n\t.param .b32 retval0;\n\
                 \tcall.uni (retval0), f_{}, (param0);\n\tld.param.b32 %r1, [retval0];\n\t}}\n",
                i + 1
            );
        }
        s.push_str("\tst.param.b32 [func_retval0], %r1;\n\tret;\n}\n");
    }
    s.push_str(
        ".visible .entry chain(\n\t.param .u64 chain_param_0\n)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<3>;\n\n\
         \tld.param.u64 %rd1, [chain_param_0];\n\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0], 0;\n\
         \t.param .b32 retval0;\n\tcall.uni (retval0), f_0, (param0);\n\tld.param.b32 %r1, [retval0];\n\t}\n\
         \tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n",
    );
    s
}
