//! Hand-written PTX for each instruction group, with exact expected values.

use cudrv_ptx::{Fault, HostMemory, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` as kernel `k(.param .u64 out)` over `threads` threads in one block, with
/// registers %r<64> (b32), %rd<64> (b64), %f<64> (f32), %fd<64> (f64), %p<16>, %h<16>
/// (b16) declared and %rd0 = the output pointer; returns `words` u64 words of output.
fn run(body: &str, threads: u32, words: usize) -> Result<Vec<u64>, Fault> {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<64>;\n.reg .b64 %rd<64>;\n.reg .f32 %f<64>;\n.reg .f64 %fd<64>;\n.reg .pred %p<16>;\n.reg .b16 %h<16>;\nld.param.u64 %rd0, [out];\n{body}\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut mem = HostMemory::new();
    let out = mem.alloc(words * 8);
    m.launch("k", [1, 1, 1], [threads, 1, 1], 0, &[&out.to_le_bytes()], &mem)?;
    let bytes = mem.bytes(out, words * 8).unwrap();
    Ok(bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}

/// Stores each listed register (a b64 holding the result) at out[k].
fn store(regs: &[&str]) -> String {
    regs.iter().enumerate().map(|(k, r)| format!("st.global.u64 [%rd0+{}], {r};\n", k * 8)).collect()
}

#[test]
fn integer_arithmetic_carry_and_multiply() {
    let body = String::from(
        "mov.u32 %r1, 0xffffffff; mov.u32 %r2, 1; mov.u32 %r3, 5; mov.u32 %r4, 7;\n\
         add.cc.u32 %r5, %r1, %r2; addc.u32 %r6, %r3, %r4;\n\
         sub.cc.u32 %r7, %r2, %r1; subc.u32 %r8, %r3, %r4;\n\
         mul.hi.u32 %r9, %r1, %r1; mul.hi.s32 %r10, %r1, %r1;\n\
         mul.wide.s32 %rd1, %r1, %r3; mul.wide.u32 %rd2, %r1, %r3;\n\
         mad.lo.s32 %r11, %r3, %r4, %r2; div.s32 %r12, -7, 2; rem.s32 %r13, -7, 2;\n\
         div.u32 %r14, %r1, %r4; min.s32 %r15, %r1, %r2; max.u32 %r16, %r1, %r2;\n\
         abs.s32 %r17, -9; neg.s32 %r18, %r3; add.sat.s32 %r19, 0x7fffffff, 5;\n\
         cvt.u64.u32 %rd3, %r5; cvt.u64.u32 %rd4, %r6; cvt.u64.u32 %rd5, %r7; cvt.u64.u32 %rd6, %r8;\n\
         cvt.u64.u32 %rd7, %r9; cvt.u64.u32 %rd8, %r10; cvt.u64.u32 %rd9, %r11; cvt.s64.s32 %rd10, %r12;\n\
         cvt.s64.s32 %rd11, %r13; cvt.u64.u32 %rd12, %r14; cvt.s64.s32 %rd13, %r15; cvt.u64.u32 %rd14, %r16;\n\
         cvt.u64.u32 %rd15, %r17; cvt.s64.s32 %rd16, %r18; cvt.u64.u32 %rd17, %r19;\n",
    ) + &store(&[
        "%rd3", "%rd4", "%rd5", "%rd6", "%rd7", "%rd8", "%rd1", "%rd2", "%rd9", "%rd10", "%rd11", "%rd12", "%rd13",
        "%rd14", "%rd15", "%rd16", "%rd17",
    ]);
    let r = run(&body, 1, 17).unwrap();
    let want: [u64; 17] = [
        0,
        13,                            // 5 + 7 + carry
        2,                             // 1 - 0xffffffff
        (5u32.wrapping_sub(8)) as u64, // 5 - 7 - borrow
        0xffff_fffe,
        0, // (-1 * -1) >> 32
        (-5i64) as u64,
        0xffff_ffffu64 * 5,
        36,
        (-3i64) as u64,
        (-1i64) as u64,
        0xffff_ffff / 7,
        (-1i64) as u64,
        0xffff_ffff,
        9,
        (-5i64) as u64,
        0x7fff_ffff,
    ];
    assert_eq!(r, want);
}

#[test]
fn bit_instructions() {
    let body = String::from(
        "mov.u32 %r1, 0x12345678; mov.u32 %r2, 0x9abcdef0;\n\
         popc.b32 %r3, %r1; clz.b32 %r4, %r1; brev.b32 %r5, %r1; bfind.u32 %r6, %r1; bfind.s32 %r7, -1;\n\
         bfe.u32 %r8, %r1, 4, 8; bfe.s32 %r9, %r2, 28, 4; bfi.b32 %r10, 0xf, %r1, 8, 4;\n\
         prmt.b32 %r11, %r1, %r2, 0x5140; lop3.b32 %r12, %r1, %r2, 0xff00ff00, 0xe8;\n\
         shf.l.wrap.b32 %r13, %r1, %r2, 8; shf.r.clamp.b32 %r14, %r1, %r2, 40;\n\
         dp4a.s32.s32 %r15, 0x01ff0203, 0x0402ff01, 10; sad.u32 %r16, 3, 10, 100;\n\
         shr.s32 %r17, %r2, 4; shl.b32 %r18, %r1, 33; not.b32 %r19, %r1; bfind.shiftamt.u32 %r20, %r1;\n",
    );
    let regs: Vec<String> = (3..=20).map(|i| format!("%r{i}")).collect();
    let mut b = body;
    for (k, r) in regs.iter().enumerate() {
        b += &format!("cvt.u64.u32 %rd{}, {r};\n", k + 1);
    }
    let names: Vec<String> = (1..=regs.len()).map(|i| format!("%rd{i}")).collect();
    b += &store(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let r = run(&b, 1, regs.len()).unwrap();
    let x: u32 = 0x1234_5678;
    let y: u32 = 0x9abc_def0;
    let lop = |a: u32, b: u32, c: u32| (a & b) | (a & c) | (b & c); // 0xe8 = majority
    let want: Vec<u64> = vec![
        u64::from(x.count_ones()),
        u64::from(x.leading_zeros()),
        u64::from(x.reverse_bits()),
        28,
        0xffff_ffff,
        0x67,
        u64::from(0xffff_fff9u32),
        u64::from((x & !0xf00) | 0xf00),
        u64::from(0xde56_f078u32), // selectors 0,4,1,5: a0 b0 a1 b1 (low byte first)
        u64::from(lop(x, y, 0xff00_ff00)),
        u64::from(((u64::from(y) << 32 | u64::from(x)) << 8 >> 32) as u32),
        u64::from(y), // clamp: shift 32 gives the high word
        13,           // 3*1 + 2*(-1) + (-1)*2 + 1*4 + 10
        107,
        u64::from(((y as i32) >> 4) as u32),
        0,
        u64::from(!x),
        3,
    ];
    assert_eq!(r, want);
}

#[test]
fn f32_directed_rounding_is_exact() {
    // 1 + 2^-30: below half an ulp of 1.0f.
    let body = String::from(
        "mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f30800000;\n\
         add.rn.f32 %f3, %f1, %f2; add.rp.f32 %f4, %f1, %f2; add.rm.f32 %f5, %f1, %f2; add.rz.f32 %f6, %f1, %f2;\n\
         sub.rm.f32 %f7, %f1, %f2; sub.rz.f32 %f8, %f1, %f2;\n\
         mov.f32 %f9, 0f40400000; div.rn.f32 %f10, %f1, %f9; div.rz.f32 %f11, %f1, %f9; div.rp.f32 %f12, %f1, %f9;\n\
         mov.f32 %f13, 0f40000000; sqrt.rn.f32 %f14, %f13; sqrt.rp.f32 %f15, %f13; sqrt.rm.f32 %f16, %f13;\n\
         mul.rp.f32 %f17, %f10, %f9; fma.rn.f32 %f18, %f10, %f9, 0fBF800000; rcp.rn.f32 %f19, %f9;\n\
         mov.f32 %f20, 0f7F7FFFFF; add.rz.f32 %f21, %f20, %f20; add.rn.f32 %f22, %f20, %f20; mul.rm.f32 %f23, %f20, 0fC0000000;\n",
    );
    let mut b = body;
    let n = 23 - 2;
    for i in 0..n {
        b += &format!("mov.b32 %r{}, %f{}; cvt.u64.u32 %rd{}, %r{};\n", i + 1, i + 3, i + 1, i + 1);
    }
    let names: Vec<String> = (1..=n).map(|i| format!("%rd{i}")).collect();
    b += &store(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let r = run(&b, 1, n).unwrap();
    // %f3..%f23 in order (%f9, %f13 and %f20 are inputs).
    let want: Vec<u32> = vec![
        0x3f80_0000,
        0x3f80_0001,
        0x3f80_0000,
        0x3f80_0000,
        0x3f7f_ffff,
        0x3f7f_ffff,
        0x4040_0000,
        0x3eaa_aaab,
        0x3eaa_aaaa,
        0x3eaa_aaab,
        0x4000_0000,
        0x3fb5_04f3,
        0x3fb5_04f4,
        0x3fb5_04f3,
        0x3f80_0001, // 0x3eaaaaab * 3 = 1.0000000298 -> up
        0x3300_0000, // fma: the exact residual 2^-25
        0x3eaa_aaab,
        0x7f7f_ffff,
        0x7f7f_ffff, // max + max toward zero
        0x7f80_0000,
        0xff80_0000,
    ];
    let got: Vec<u32> = r.iter().map(|v| *v as u32).collect();
    assert_eq!(got, want);
}

#[test]
fn f64_directed_rounding_is_exact() {
    let body = String::from(
        "mov.f64 %fd1, 0d3FF0000000000000; mov.f64 %fd2, 0d3C30000000000000;\n\
         add.rn.f64 %fd3, %fd1, %fd2; add.rp.f64 %fd4, %fd1, %fd2; sub.rm.f64 %fd5, %fd1, %fd2;\n\
         mov.f64 %fd6, 0d4008000000000000; div.rz.f64 %fd7, %fd1, %fd6; div.rp.f64 %fd8, %fd1, %fd6;\n\
         sqrt.rm.f64 %fd9, 0d4000000000000000; sqrt.rp.f64 %fd10, 0d4000000000000000; fma.rp.f64 %fd11, %fd7, %fd6, %fd2;\n\
         mul.rz.f64 %fd12, %fd8, %fd6;\n",
    );
    let mut b = body;
    for i in 3..=12 {
        b += &format!("mov.b64 %rd{i}, %fd{i};\n");
    }
    let names: Vec<String> = (3..=12).map(|i| format!("%rd{i}")).collect();
    b += &store(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let r = run(&b, 1, 10).unwrap();
    // %fd3..%fd12 in order (%fd6 is the input 3.0).
    let third = 1.0f64 / 3.0; // 0x3fd5555555555555, below 1/3
    let s2 = 2f64.sqrt(); // above the true root when its square exceeds 2
    let above = s2.mul_add(s2, -2.0) > 0.0;
    let (s2_rm, s2_rp) = if above { (s2.to_bits() - 1, s2.to_bits()) } else { (s2.to_bits(), s2.to_bits() + 1) };
    assert_eq!(r[0], 1.0f64.to_bits());
    assert_eq!(r[1], 1.0f64.to_bits() + 1);
    assert_eq!(r[2], 1.0f64.to_bits() - 1);
    assert_eq!(r[4], third.to_bits());
    assert_eq!(r[5], third.to_bits() + 1);
    assert_eq!(r[6], s2_rm);
    assert_eq!(r[7], s2_rp);
    // third*3 = 1 - 2^-54 exactly; + 2^-60 rounds up to 1.0
    assert_eq!(r[8], 1.0f64.to_bits());
    // (third+ulp)*3 = 1 + 2^-53 exactly; toward zero: 1.0
    assert_eq!(r[9], 1.0f64.to_bits());
}

#[test]
fn conversions_round_and_saturate() {
    let body = String::from(
        "cvt.rni.s32.f32 %r1, 0f40200000; cvt.rni.s32.f32 %r2, 0fC0200000; cvt.rzi.s32.f32 %r3, 0fC0300000;\n\
         cvt.rmi.s32.f32 %r4, 0fC0300000; cvt.rpi.s32.f32 %r5, 0f40300000; cvt.rzi.s32.f32 %r6, 0f7F800000;\n\
         cvt.rzi.u32.f32 %r7, 0fBF800000; cvt.rzi.s32.f32 %r8, 0f7FC00000; cvt.sat.u8.s32 %r9, 300;\n\
         cvt.rn.f16.f32 %h1, 0f477FF000; cvt.rz.f16.f32 %h2, 0f477FF000; cvt.rn.f16.f32 %h3, 0f33800001;\n\
         cvt.rn.bf16.f32 %h4, 0f3F808000; cvt.rn.bf16.f32 %h5, 0f3F818000; cvt.f32.f16 %f1, 0x3555;\n\
         cvt.rz.f32.u64 %f2, 0xffffffffffffffff; cvt.rn.f32.u64 %f3, 0xffffffffffffffff; cvt.sat.f32.f32 %f4, 0f40000000;\n\
         cvt.rn.f32.f64 %f5, 0d3FD5555555555555; cvt.rp.f32.f64 %f6, 0d3FD5555555555555; cvt.s8.s32 %r10, 0x1ff;\n\
         cvt.u32.u16 %r11, %h1; cvt.u32.u16 %r12, %h2; cvt.u32.u16 %r13, %h3; cvt.u32.u16 %r14, %h4; cvt.u32.u16 %r15, %h5;\n\
         mov.b32 %r16, %f1; mov.b32 %r17, %f2; mov.b32 %r18, %f3; mov.b32 %r19, %f4; mov.b32 %r20, %f5; mov.b32 %r21, %f6;\n",
    );
    let mut b = body;
    for i in 1..=21 {
        b += &format!("cvt.u64.u32 %rd{i}, %r{i};\n");
    }
    let names: Vec<String> = (1..=21).map(|i| format!("%rd{i}")).collect();
    b += &store(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let r: Vec<u32> = run(&b, 1, 21).unwrap().iter().map(|v| *v as u32).collect();
    let want: Vec<u32> = vec![
        2,
        (-2i32) as u32,
        (-2i32) as u32,
        (-3i32) as u32,
        3,
        0x7fff_ffff,
        0,
        0,
        255,
        (-1i32) as u32, // cvt.s8.s32 0x1ff -> -1 (sign-extended into the b32 register)
        0x7c00,         // 65520 rounds to inf
        0x7bff,
        0x0001,      // just above half the smallest subnormal -> rounds up
        0x3f80,      // 1.00390625 -> tie -> even 0x3f80
        0x3f82,      // 1.01171875 -> tie -> even 0x3f82
        0x3eaa_a000, // f16 0x3555 = 0.333251953125 exactly
        0x5f7f_ffff,
        0x5f80_0000,
        0x3f80_0000,
        0x3eaa_aaab,
        0x3eaa_aaab,
    ];
    assert_eq!(r, want);
}

#[test]
fn float_min_max_nan_and_testp() {
    let body = String::from(
        "mov.f32 %f1, 0f7FC00000; mov.f32 %f2, 0f3F800000; mov.f32 %f3, 0f80000000; mov.f32 %f4, 0f00000000;\n\
         min.f32 %f5, %f1, %f2; max.NaN.f32 %f6, %f1, %f2; min.f32 %f7, %f3, %f4; max.f32 %f8, %f3, %f4;\n\
         add.f32 %f9, %f1, %f2; copysign.f32 %f10, %f3, %f2; abs.f32 %f11, %f3; neg.f32 %f12, %f2;\n\
         testp.notanumber.f32 %p1, %f1; testp.subnormal.f32 %p2, 0f00000001; testp.normal.f32 %p3, 0f00000001;\n\
         selp.u32 %r13, 1, 0, %p1; selp.u32 %r14, 1, 0, %p2; selp.u32 %r15, 1, 0, %p3;\n\
         setp.lt.f32 %p4, %f1, %f2; setp.ltu.f32 %p5, %f1, %f2; selp.u32 %r16, 1, 0, %p4; selp.u32 %r17, 1, 0, %p5;\n\
         add.ftz.f32 %f18, 0f00000001, 0f00000001; mov.b32 %r18, %f18;\n",
    );
    let mut b = body;
    for i in 5..=12 {
        b += &format!("mov.b32 %r{i}, %f{i};\n");
    }
    for i in 5..=18 {
        b += &format!("cvt.u64.u32 %rd{i}, %r{i};\n");
    }
    let names: Vec<String> = (5..=18).map(|i| format!("%rd{i}")).collect();
    b += &store(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let r: Vec<u32> = run(&b, 1, 14).unwrap().iter().map(|v| *v as u32).collect();
    assert_eq!(
        r,
        vec![0x3f80_0000, 0x7fff_ffff, 0x8000_0000, 0, 0x7fff_ffff, 0xbf80_0000, 0, 0xbf80_0000, 1, 1, 0, 0, 1, 0]
    );
}

#[test]
fn warp_shuffles_votes_and_divergence() {
    // Each of 32 lanes: out[lane] = shfl.bfly(lane*10, 1) | ballot(lane odd) << 32;
    // lanes < 8 then take a divergent path that counts its active mask.
    let body = "mov.u32 %r1, %laneid; mul.lo.u32 %r2, %r1, 10;\n\
        shfl.sync.bfly.b32 %r3|%p1, %r2, 1, 0x1f, 0xffffffff;\n\
        and.b32 %r4, %r1, 1; setp.ne.u32 %p2, %r4, 0; vote.sync.ballot.b32 %r5, %p2, 0xffffffff;\n\
        setp.lt.u32 %p3, %r1, 8; @!%p3 bra SKIP; activemask.b32 %r6; add.u32 %r3, %r3, %r6;\n\
        SKIP:\n\
        shfl.sync.up.b32 %r7, %r1, 3, 0, 0xffffffff; shfl.sync.down.b32 %r8, %r1, 3, 0x1f, 0xffffffff;\n\
        shfl.sync.idx.b32 %r9, %r1, 5, 0x181f, 0xffffffff;\n\
        match.any.sync.b32 %r10, %r4, 0xffffffff; redux.sync.add.u32 %r11, %r1, 0xffffffff; vote.sync.all.pred %p4, %p3, 0xffffffff;\n\
        selp.u32 %r12, 1, 0, %p4;\n\
        cvt.u64.u32 %rd1, %r3; cvt.u64.u32 %rd2, %r5; shl.b64 %rd2, %rd2, 32; or.b64 %rd1, %rd1, %rd2;\n\
        mul.wide.u32 %rd3, %r1, 48; add.s64 %rd4, %rd0, %rd3; st.global.u64 [%rd4], %rd1;\n\
        st.global.u32 [%rd4+8], %r7; st.global.u32 [%rd4+12], %r8; st.global.u32 [%rd4+16], %r9;\n\
        st.global.u32 [%rd4+20], %r10; st.global.u32 [%rd4+24], %r11; st.global.u32 [%rd4+28], %r12;\n";
    let r = run(body, 32, 32 * 6).unwrap();
    for lane in 0..32u64 {
        let w = &r[(lane * 6) as usize..(lane * 6 + 4) as usize];
        let lo = w[0] & 0xffff_ffff;
        let want_lo = (lane ^ 1) * 10 + if lane < 8 { 0xff } else { 0 };
        assert_eq!(lo, want_lo, "lane {lane}");
        assert_eq!(w[0] >> 32, 0xaaaa_aaaa);
        let up = w[1] & 0xffff_ffff;
        let down = w[1] >> 32;
        assert_eq!(up, if lane >= 3 { lane - 3 } else { lane });
        assert_eq!(down, if lane + 3 <= 31 { lane + 3 } else { lane });
        // idx with segment width 8 (c = 0x181f: segmask 0x18): lane 5 of each segment of 8
        let idx = w[2] & 0xffff_ffff;
        assert_eq!(idx, (lane & !7) | 5);
        let any = w[2] >> 32;
        assert_eq!(any, if lane & 1 == 1 { 0xaaaa_aaaa } else { 0x5555_5555 });
        assert_eq!(w[3] & 0xffff_ffff, (0..32).sum::<u64>());
        assert_eq!(w[3] >> 32, 0);
    }
}

#[test]
fn shared_memory_barrier_and_atomics() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.shared .align 4 .b8 s[512];\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, s;\nadd.u32 %r4, %r3, %r2;\n\
         st.shared.u32 [%r4], %r1;\nbar.sync 0;\nxor.b32 %r5, %r1, 127;\nshl.b32 %r6, %r5, 2;\nadd.u32 %r7, %r3, %r6;\nld.shared.u32 %r8, [%r7];\n\
         atom.shared.add.u32 %r9, [s+508], 1;\nbar.sync 0;\nld.shared.u32 %r10, [s+508];\nmul.wide.u32 %rd1, %r1, 8;\nadd.s64 %rd2, %rd0, %rd1;\n\
         st.global.v2.u32 [%rd2], {{%r8, %r10}};\natom.global.add.u32 %r11, [%rd0+1024], 2;\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(1028);
    m.launch("k", [1, 1, 1], [128, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let b = mem.bytes(out, 1028).unwrap();
    let w: Vec<u32> = b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    for t in 0..128u32 {
        // thread 127's value was overwritten by the atomic counter's slot (s+508 = s[127])
        let partner = t ^ 127;
        let want = if partner == 127 { w[(t * 2) as usize] } else { partner };
        assert_eq!(w[(t * 2) as usize], want);
        assert_eq!(w[(t * 2 + 1) as usize], 127 + 128);
    }
    assert_eq!(w[256], 256);
}

#[test]
fn faults_trap_address_barrier() {
    assert_eq!(run("trap;", 1, 1), Err(Fault::Trap { line: 13 }));
    let r = run("mov.u64 %rd1, 0x10; st.global.u32 [%rd1], 1;", 1, 1);
    assert!(matches!(r, Err(Fault::IllegalAddress { addr: 0x10, .. })), "{r:?}");
    let r = run("st.global.u32 [%rd0+2], 1;", 1, 1);
    assert!(matches!(r, Err(Fault::MisalignedAddress { .. })), "{r:?}");
    // Half the block waits at a barrier that expects 64 threads; the others never come.
    let r = run("bar.sync 0, 64;", 32, 1);
    assert_eq!(r, Err(Fault::BarrierDeadlock { block: [0, 0, 0] }));
    // Threads that exit do not hold the others at bar.sync.
    let r =
        run("mov.u32 %r1, %tid.x; setp.lt.u32 %p1, %r1, 16; @%p1 exit; bar.sync 0; st.global.u32 [%rd0], %r1;", 64, 1);
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn load_errors_name_line_and_instruction() {
    let ptx = format!("{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\nmov.u32 %r1, 1;\ncp.async.ca.shared.global [%r1], [%r2], 16;\n}}\n");
    let e = Module::load(&ptx).unwrap_err();
    assert_eq!((e.line, e.instruction.as_str()), (8, "cp.async.ca.shared.global"));
    let ptx = format!("{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\nmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {{%r1}}, {{%r1}}, {{%r1}}, {{%r1}};\n}}\n");
    let e = Module::load(&ptx).unwrap_err();
    assert_eq!(e.line, 7);
    assert!(e.instruction.starts_with("mma.sync"), "{e}");
    let ptx = format!("{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4>;\nadd.u32 %r1, %r9, 1;\n}}\n");
    let e = Module::load(&ptx).unwrap_err();
    assert_eq!((e.line, e.instruction.as_str()), (7, "add.u32"));
    assert!(e.to_string().contains("%r9"), "{e}");
}

#[test]
fn calls_with_parameters_and_recursion_and_local_memory() {
    let ptx = format!(
        "{HEADER}.func (.param .b32 r) fact(.param .b32 n)\n{{\n.local .align 4 .b8 buf[8];\n.reg .b32 %r<8>;\n.reg .pred %p<2>;\n.reg .b64 %rd<2>;\n\
         ld.param.u32 %r1, [n];\nmov.u64 %rd1, buf;\nst.local.u32 [%rd1], %r1;\nsetp.le.u32 %p1, %r1, 1;\n@%p1 bra BASE;\nsub.u32 %r2, %r1, 1;\n\
         {{\n.param .b32 a0;\n.param .b32 r0;\nst.param.b32 [a0], %r2;\ncall.uni (r0), fact, (a0);\nld.param.b32 %r3, [r0];\n}}\n\
         ld.local.u32 %r4, [%rd1];\nmul.lo.u32 %r5, %r3, %r4;\nst.param.b32 [r], %r5;\nret;\nBASE:\nst.param.b32 [r], 1;\nret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\nld.param.u64 %rd0, [out];\nmov.u32 %r1, %tid.x;\n\
         {{\n.param .b32 a0;\n.param .b32 r0;\nst.param.b32 [a0], %r1;\ncall.uni (r0), fact, (a0);\nld.param.b32 %r2, [r0];\n}}\n\
         mul.wide.u32 %rd1, %r1, 4;\nadd.s64 %rd2, %rd0, %rd1;\nst.global.u32 [%rd2], %r2;\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(13 * 4);
    m.launch("k", [1, 1, 1], [13, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let b = mem.bytes(out, 52).unwrap();
    let got: Vec<u32> = b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let want: Vec<u32> = (0..13u32).map(|n| (1..=n.max(1)).product()).collect();
    assert_eq!(got, want);
}

#[test]
fn blocks_run_in_parallel_with_global_atomics() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd0, [out];\n\
         atom.global.add.u32 %r1, [%rd0], 1;\nred.global.add.u64 [%rd0+8], 3;\natom.global.max.s32 %r2, [%rd0+16], %r1;\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(24);
    m.launch_on("k", [50, 2, 1], [64, 1, 1], 0, &[&out.to_le_bytes()], &mem, 4).unwrap();
    let b = mem.bytes(out, 24).unwrap();
    assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), 6400);
    assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 19200);
    assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 6399);
}

#[test]
fn plain_mul_add_contract_to_fma_as_ptxas_does() {
    // a = 1 + 2^-12, a*a = 1 + 2^-11 + 2^-24: rounding the product first loses 2^-24.
    let body = "mov.f32 %f1, 0f3F800800; mov.f32 %f2, 0fBF801000;\n\
        mul.f32 %f3, %f1, %f1; add.f32 %f4, %f3, %f2;\n\
        mul.rn.f32 %f5, %f1, %f1; add.f32 %f6, %f5, %f2;\n\
        mul.f32 %f7, %f1, %f1; sub.f32 %f8, %f2, %f7;\n\
        mov.b32 %r1, %f4; mov.b32 %r2, %f6; mov.b32 %r3, %f8;\n\
        cvt.u64.u32 %rd1, %r1; cvt.u64.u32 %rd2, %r2; cvt.u64.u32 %rd3, %r3;\n"
        .to_string()
        + &store(&["%rd1", "%rd2", "%rd3"]);
    let r: Vec<u32> = run(&body, 1, 3).unwrap().iter().map(|v| *v as u32).collect();
    let a = f32::from_bits(0x3f80_0800);
    let c = f32::from_bits(0xbf80_1000);
    assert_eq!(r[0], a.mul_add(a, c).to_bits());
    assert_eq!(r[0], 2f32.powi(-24).to_bits());
    assert_eq!(r[1], (a * a + c).to_bits());
    assert_eq!(r[1], 0);
    assert_eq!(r[2], (-a).mul_add(a, c).to_bits());
}

#[test]
fn assertfail_and_vprintf() {
    let ptx = format!(
        "{HEADER}.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n\
         .extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 cs);\n\
         .global .align 1 .b8 fmt[12] = {{108, 97, 110, 101, 32, 37, 117, 58, 37, 53, 100, 10}};\n\
         .global .align 1 .b8 msg[6] = {{120, 32, 62, 32, 48, 0}};\n\
         .global .align 1 .b8 file[5] = {{107, 46, 99, 117, 0}};\n\
         .visible .entry k(.param .u32 fail)\n{{\n.local .align 8 .b8 depot[8];\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\n\
         mov.u32 %r1, %tid.x;\nmov.u64 %rd1, depot;\nst.local.u32 [%rd1], %r1;\nmul.lo.s32 %r2, %r1, -7;\nst.local.u32 [%rd1+4], %r2;\n\
         cvta.local.u64 %rd2, %rd1;\nmov.u64 %rd3, fmt;\ncvta.global.u64 %rd4, %rd3;\n\
         {{\n.param .b64 p0;\n.param .b64 p1;\n.param .b32 r0;\nst.param.b64 [p0], %rd4;\nst.param.b64 [p1], %rd2;\ncall.uni (r0), vprintf, (p0, p1);\n}}\n\
         ld.param.u32 %r3, [fail];\nsetp.ne.u32 %p1, %r3, 0;\n@!%p1 bra DONE;\nmov.u64 %rd5, msg;\nmov.u64 %rd6, file;\n\
         {{\n.param .b64 a0;\n.param .b64 a1;\n.param .b32 a2;\n.param .b64 a3;\n.param .b64 a4;\n\
         st.param.b64 [a0], %rd5;\nst.param.b64 [a1], %rd6;\nst.param.b32 [a2], 42;\nst.param.b64 [a3], %rd6;\nst.param.b64 [a4], 1;\n\
         call.uni __assertfail, (a0, a1, a2, a3, a4);\n}}\nDONE:\nret;\n}}\n"
    );
    let mut m = Module::load(&ptx).unwrap();
    let mut mem = HostMemory::new();
    mem.capture_printf();
    let addrs: Vec<u64> = m.globals().iter().map(|g| mem.alloc(g.size as usize)).collect();
    for (i, a) in addrs.iter().enumerate() {
        let img = m.global_image(i, &addrs).unwrap();
        cudrv_ptx::GlobalMemory::write(&mem, *a, &img).unwrap();
    }
    m.bind_globals(&addrs).unwrap();
    m.launch("k", [1, 1, 1], [3, 1, 1], 0, &[&0u32.to_le_bytes()], &mem).unwrap();
    assert_eq!(mem.printed(), "lane 0:    0\nlane 1:   -7\nlane 2:  -14\n");
    let r = m.launch("k", [1, 1, 1], [1, 1, 1], 0, &[&1u32.to_le_bytes()], &mem);
    assert_eq!(
        r,
        Err(Fault::Assert { message: "x > 0".into(), file: "k.cu".into(), source_line: 42, function: "k.cu".into() })
    );
}

#[test]
fn module_is_shared_between_threads_and_reports_kernels() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Module>();
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 a, .param .u32 b, .param .align 8 .b8 s[24])\n{{\n.local .align 4 .b8 d[12];\n.shared .align 4 .b8 sh[100];\n.reg .b32 %r<5>;\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap();
    assert_eq!(m.kernels(), ["k"]);
    assert_eq!(m.version(), (8, 0));
    assert_eq!(m.targets(), ["sm_90"]);
    let info = m.kernel_info("k").unwrap();
    let layout: Vec<(u64, u64, u64)> = info.params.iter().map(|p| (p.offset, p.size, p.align)).collect();
    assert_eq!(layout, [(0, 8, 8), (8, 4, 4), (16, 24, 8)]);
    assert_eq!((info.static_shared_bytes, info.local_bytes, info.registers), (100, 12, 5));
    assert!(m.kernel_info("nope").is_none());
}

#[test]
fn nvcc_debug_and_cache_qualifiers_parse() {
    let ptx = format!(
        "{HEADER}.file 1 \"/tmp/k.cu\", 1700000000, 321\n.visible .entry k(.param .u64 out)\n.maxntid 128, 1, 1\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
         $L__func_begin0:\n.loc 1 3 0\nld.param.u64 %rd1, [out];\n.loc 1 4 5, function_name $L__info_string0, inlined_at 1 3 1\n\
         ld.global.L1::no_allocate.u32 %r1, [%rd1];\nadd.s32 %r2, %r1, 1;\nst.global.L1::no_allocate.u32 [%rd1], %r2;\n\
         ld.global.nc.L2::128B.u32 %r3, [%rd1];\nst.global.u32 [%rd1+4], %r3;\nret;\n$L__func_end0:\n}}\n\
         .section .debug_abbrev\n{{\n.b8 17\n.b8 1\n}}\n"
    );
    let m = Module::load(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let mut mem = HostMemory::new();
    let out = mem.alloc_from(&[41, 0, 0, 0, 0, 0, 0, 0]);
    m.launch("k", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    assert_eq!(mem.bytes(out, 8).unwrap(), [42, 0, 0, 0, 42, 0, 0, 0]);
}

#[test]
fn prmt_modes() {
    // a = bytes 0..3 = 10 11 12 13, b = bytes 4..7 = 14 15 16 17
    let modes = ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"];
    let mut body = String::from("mov.u32 %r1, 0x13121110; mov.u32 %r2, 0x17161514;\n");
    let mut k = 0;
    for m in modes {
        for s in 0..4 {
            body += &format!(
                "prmt.b32.{m} %r3, %r1, %r2, {s}; cvt.u64.u32 %rd1, %r3; st.global.u64 [%rd0+{}], %rd1;\n",
                k * 8
            );
            k += 1;
        }
    }
    let r: Vec<u32> = run(&body, 1, 24).unwrap().iter().map(|v| *v as u32).collect();
    let pick = |sel: [u32; 4]| sel.iter().enumerate().fold(0u32, |acc, (k, b)| acc | ((0x10 + b) << (8 * k)));
    let mut want = Vec::new();
    for s in 0..4u32 {
        want.push(pick([s, (s + 1) % 8, (s + 2) % 8, (s + 3) % 8]));
    }
    for s in 0..4u32 {
        want.push(pick([s, (s + 7) % 8, (s + 6) % 8, (s + 5) % 8]));
    }
    for s in 0..4u32 {
        want.push(pick([s; 4]));
    }
    for s in 0..4u32 {
        want.push(pick([0, 1, 2, 3].map(|k: u32| k.max(s))));
    }
    for s in 0..4u32 {
        want.push(pick([0, 1, 2, 3].map(|k: u32| k.min(s))));
    }
    for s in 0..4u32 {
        let h = (s & 1) * 2;
        want.push(pick([h, h + 1, h, h + 1]));
    }
    assert_eq!(r, want);
}

#[test]
fn oversized_declarations_are_refused_not_allocated() {
    let big_shared = format!("{HEADER}.shared .align 4 .b8 s[1000000];\n.visible .entry k()\n{{\nret;\n}}\n");
    assert!(Module::load(&big_shared).unwrap_err().message.contains("shared"));
    let big_local = format!("{HEADER}.visible .entry k()\n{{\n.local .b8 l[4000000000];\nret;\n}}\n");
    assert!(Module::load(&big_local).unwrap_err().message.contains("local"));
    let big_regs = format!("{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<4000000000>;\nret;\n}}\n");
    assert!(Module::load(&big_regs).unwrap_err().message.contains("registers"));
    let overflow = format!("{HEADER}.shared .b8 s[18446744073709551615][16];\n.visible .entry k()\n{{\nret;\n}}\n");
    assert!(Module::load(&overflow).is_err());
    // A large global without initialiser costs nothing to load.
    let big_global = format!("{HEADER}.global .align 8 .b8 g[4000000000000];\n.visible .entry k()\n{{\nret;\n}}\n");
    let m = Module::load(&big_global).unwrap();
    assert_eq!((m.globals()[0].size, m.globals()[0].init.len()), (4_000_000_000_000, 0));
}

#[test]
fn hostile_text_gives_errors_not_crashes() {
    let deep = format!("{HEADER}.global .b32 g[1] = {};\n", "{".repeat(100000));
    assert!(Module::load(&deep).is_err());
    let deep_op = format!("{HEADER}.visible .entry k()\n{{\nmov.u32 {}%r1;\n}}\n", "{".repeat(100000));
    assert!(Module::load(&deep_op).is_err());
    for text in ["", ".version", ".version 8.0\n.visible .entry", ".version 8.0\n.entry k(", "\u{0}\u{1}{}}}"] {
        assert!(Module::load(text).is_err(), "{text:?}");
    }
    let ok = format!("{HEADER}.visible .entry k()\n{{\nret;\n}}\n");
    let m = Module::load(&ok).unwrap();
    let mem = HostMemory::new();
    let r = m.launch("k", [1, 1, 1], [1, 1, 1], 1 << 30, &[], &mem);
    assert!(matches!(r, Err(Fault::InvalidLaunch(_))), "{r:?}");
    assert!(matches!(m.launch("k", [1, 1, 1], [1025, 1, 1], 0, &[], &mem), Err(Fault::InvalidLaunch(_))));
    assert!(matches!(m.launch("nope", [1, 1, 1], [1, 1, 1], 0, &[], &mem), Err(Fault::InvalidLaunch(_))));
}

#[test]
fn unimplemented_modifiers_are_refused() {
    for inst in [
        "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;",
        "max.relu.f32 %f1, %f2, %f3;",
        "setp.eq.f16x2 %p1|%p2, %r1, %r2;",
        "vabsdiff4.u32.u32.u32.sat.add %r1, %r2, %r3, %r4;",
        "sust.p.2d.v4.b32.trap [%rd1, {%r1, %r2}], {%r3, %r4, %r5, %r6};",
        "tex.2dms.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1, %r2, %r3, %r4}];",
    ] {
        let ptx = format!(
            "{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<8>;\n.reg .b16 %h<4>;\n.reg .f32 %f<8>;\n.reg .pred %p<4>;\n.reg .b64 %rd<4>;\n{inst}\nret;\n}}\n"
        );
        let e = Module::load(&ptx).unwrap_err();
        assert_eq!(e.line, 11, "{inst}: {e}");
    }
}

#[test]
fn named_barriers_with_counts_producer_consumer() {
    // Warp 0 produces into shared memory and arrives at barrier 1 (64 threads: itself and
    // warp 1), then waits at barrier 2 for warp 1's answer; warp 1 waits at barrier 1,
    // reads, answers and arrives at barrier 2.
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.shared .align 4 .b8 s[512];\n.reg .b32 %r<12>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, s;\nadd.u32 %r4, %r3, %r2;\nsetp.lt.u32 %p1, %r1, 32;\n\
         @!%p1 bra CONSUMER;\nmul.lo.u32 %r5, %r1, 3;\nst.shared.u32 [%r4], %r5;\nbar.arrive 1, 64;\nbar.sync 2, 64;\nld.shared.u32 %r6, [%r4+256];\n\
         mul.wide.u32 %rd1, %r1, 4;\nadd.s64 %rd2, %rd0, %rd1;\nst.global.u32 [%rd2], %r6;\nret;\n\
         CONSUMER:\nbar.sync 1, 64;\nld.shared.u32 %r7, [%r4+-128];\nadd.u32 %r8, %r7, 1;\nst.shared.u32 [%r4+128], %r8;\nbar.arrive 2, 64;\nret;\n}}\n"
    );
    let m = Module::load(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let mut mem = HostMemory::new();
    let out = mem.alloc(128);
    m.launch("k", [1, 1, 1], [64, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let b = mem.bytes(out, 128).unwrap();
    let got: Vec<u32> = b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let want: Vec<u32> = (0..32).map(|t| t * 3 + 1).collect();
    assert_eq!(got, want);
}

#[test]
fn declarations_in_nested_blocks_are_scoped_and_shadow_outer_ones() {
    // The run helper declares %r<64>, %rd<64>, %p<16> in the body; each `{ }` below
    // declares its own, as NVRTC does around inline asm and call sequences.
    let body = String::from(
        "mov.u32 %r1, 1; mov.u32 %r5, 5;\n\
         {\n\
           .reg .b32 %r1;\n\
           .reg .b32 %r<3>;\n\
           .reg .pred %p1;\n\
           mov.u32 %r1, 2;\n\
           mov.u32 %r2, 20;\n\
           add.u32 %r5, %r5, %r1;\n\
           setp.eq.u32 %p1, %r1, 2;\n\
           @%p1 st.global.u32 [%rd0], %r1;\n\
           {\n\
             .reg .b32 %r1;\n\
             mov.u32 %r1, 3;\n\
             st.global.u32 [%rd0+4], %r1;\n\
           }\n\
           st.global.u32 [%rd0+8], %r1;\n\
           mov.u32 %r9, 9;\n\
         }\n\
         st.global.u32 [%rd0+12], %r1;\n\
         st.global.u32 [%rd0+16], %r5;\n\
         st.global.u32 [%rd0+20], %r2;\n\
         { .reg .b64 %t; mov.u64 %t, 0x100000007; st.global.u64 [%rd0+24], %t; }\n\
         { .reg .b32 %t; .reg .b32 %u; mov.u32 %t, 11; mov.u32 %u, 12; add.u32 %t, %t, %u; st.global.u32 [%rd0+32], %t; }\n\
         st.global.u32 [%rd0+36], %r9;\n",
    );
    let r = run(&body, 1, 5).unwrap();
    let pairs: Vec<(u32, u32)> = r.iter().map(|w| (*w as u32, (*w >> 32) as u32)).collect();
    assert_eq!(
        pairs,
        [
            (2, 3),  // the block's %r1; the inner block's %r1
            (2, 1),  // the block's %r1 again; the body's %r1, untouched
            (7, 0),  // %r5 = 5 + the block's %r1 (the block's %r<3> stops at %r2); %r2 of the body never written
            (7, 1),  // the first sibling's b64 %t
            (23, 9), // the second sibling's b32 %t; the body's %r9, first named inside a closed block
        ]
    );
}

#[test]
fn a_name_declared_in_a_block_is_unknown_after_it() {
    let ptx = format!("{HEADER}.visible .entry k()\n{{\n{{\n.reg .b32 %inner;\nmov.u32 %inner, 1;\n}}\nmov.u32 %inner, 2;\nret;\n}}\n");
    let e = Module::load(&ptx).unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (10, "unknown name %inner"), "{e}");
    // .param and .local too: a call sequence's parameters end with its block.
    let ptx = format!(
        "{HEADER}.visible .entry k()\n{{\n.reg .b32 %r<2>;\n{{\n.param .b32 p0;\nst.param.b32 [p0], 1;\n}}\nld.param.b32 %r1, [p0];\nret;\n}}\n"
    );
    let e = Module::load(&ptx).unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (11, "unknown address base p0"), "{e}");
}

#[test]
fn nested_blocks_with_locals_and_loops_run() {
    // Sibling blocks with .local arrays of the same name and a loop over a register of
    // the block: each block's values are its own.
    let body = String::from(
        "mov.u32 %r1, 0;\n\
         {\n\
           .local .align 4 .b8 buf[16];\n\
           .reg .b32 %i;\n\
           .reg .pred %q;\n\
           .reg .b64 %a;\n\
           mov.u64 %a, buf;\n\
           mov.u32 %i, 0;\n\
         $Lloop:\n\
           st.local.u32 [%a], %i;\n\
           add.u64 %a, %a, 4;\n\
           add.u32 %i, %i, 1;\n\
           setp.lt.u32 %q, %i, 4;\n\
           @%q bra $Lloop;\n\
           mov.u64 %a, buf;\n\
           ld.local.u32 %r1, [%a+12];\n\
         }\n\
         {\n\
           .local .align 4 .b8 buf[8];\n\
           .reg .b64 %a;\n\
           mov.u64 %a, buf;\n\
           st.local.u32 [%a+4], 40;\n\
           ld.local.u32 %r2, [%a+4];\n\
         }\n\
         add.u32 %r3, %r1, %r2;\n\
         st.global.u32 [%rd0], %r3;\n",
    );
    assert_eq!(run(&body, 32, 1).unwrap(), [43]);
}
