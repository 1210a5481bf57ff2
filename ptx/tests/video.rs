//! The video instructions (PTX ISA, "Video Instructions"), scalar and SIMD, with expected
//! values worked out by hand from the ISA's definitions, except where the GPU computes
//! otherwise: the instruction suite's H100 recording (tests/data/instruction-suite-gpu.txt)
//! and probes run on an H100 decide, and the cases they corrected say so.
//!
//! Every case runs `inst` with a = %r1, b = %r2, c = %r3 and d = %r4. Notation in the
//! comments: e0..e3 are the elements of a SIMD result (e0 the low one); "sat" names the
//! range a result is clamped to.

use cudrv_ptx::{HostMemory, Module};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// One instruction with its inputs and the result the ISA gives.
struct Case {
    inst: &'static str,
    a: u32,
    b: u32,
    c: u32,
    want: u32,
}

const fn case(inst: &'static str, a: u32, b: u32, c: u32, want: u32) -> Case {
    Case { inst, a, b, c, want }
}

/// The PTX of a kernel `k(.param .u64 out)` running `body` with registers %r<64> (b32) and
/// %rd<8> (b64) declared and %rd0 = out.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<64>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd0, [out];\n{body}\nret;\n}}\n"
    )
}

/// Runs the cases in one kernel of one thread and checks each result.
fn check(cases: &[Case]) {
    let mut body = String::new();
    for (k, c) in cases.iter().enumerate() {
        body += &format!(
            "mov.u32 %r1, {}; mov.u32 %r2, {}; mov.u32 %r3, {}; mov.u32 %r4, 0x5a5a5a5a;\n{};\nst.global.u32 [%rd0+{}], %r4;\n",
            c.a,
            c.b,
            c.c,
            c.inst,
            4 * k
        );
    }
    let ptx = kernel(&body);
    let m = Module::load(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let mut mem = HostMemory::new();
    let out = mem.alloc(4 * cases.len());
    m.launch("k", [1, 1, 1], [1, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let bytes = mem.bytes(out, 4 * cases.len()).unwrap();
    let got: Vec<u32> = bytes.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    let wrong: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|(c, g)| c.want != **g)
        .map(|(c, g)| {
            format!("{} (a {:#x}, b {:#x}, c {:#x}): got {g:#010x}, want {:#010x}", c.inst, c.a, c.b, c.c, c.want)
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn scalar_arithmetic_signedness_and_saturation() {
    check(&[
        // 0xffffffff + 2 = 2^32 + 1 exactly; the low 32 bits.
        case("vadd.u32.u32.u32 %r4, %r1, %r2", 0xffff_ffff, 2, 0, 1),
        // An unsigned .sat only raises negative results to 0: 2^32 + 1 keeps its low 32 bits
        // (the ISA says U32_MAX; the GPU recording decides).
        case("vadd.u32.u32.u32.sat %r4, %r1, %r2", 0xffff_ffff, 2, 0, 1),
        // |-1 - 4294967295| = 2^32: 0 likewise.
        case("vabsdiff.u32.s32.u32.sat %r4, %r1, %r2", 0xffff_ffff, 0xffff_ffff, 0, 0),
        // 2^31 clamps to S32_MAX; -2^31 - 1 to S32_MIN.
        case("vadd.s32.s32.s32.sat %r4, %r1, %r2", 0x7fff_ffff, 1, 0, 0x7fff_ffff),
        case("vadd.s32.s32.s32.sat %r4, %r1, %r2", 0x8000_0000, 0xffff_ffff, 0, 0x8000_0000),
        case("vadd.s32.s32.s32 %r4, %r1, %r2", 0x8000_0000, 0xffff_ffff, 0, 0x7fff_ffff),
        // a is .u32 (4294967295), b .s32 (-1): 4294967294 clamps to S32_MAX.
        case("vadd.s32.u32.s32.sat %r4, %r1, %r2", 0xffff_ffff, 0xffff_ffff, 0, 0x7fff_ffff),
        // 5 + (-16) = -11: clamped to U32_MIN.
        case("vadd.u32.s32.s32.sat %r4, %r1, %r2", 5, 0xffff_fff0, 0, 0),
        case("vsub.u32.u32.u32 %r4, %r1, %r2", 1, 2, 0, 0xffff_ffff),
        case("vsub.u32.u32.u32.sat %r4, %r1, %r2", 1, 2, 0, 0),
        // 0 - 4294967295 = -(2^32 - 1): S32_MIN.
        case("vsub.s32.u32.u32.sat %r4, %r1, %r2", 0, 0xffff_ffff, 0, 0x8000_0000),
        case("vabsdiff.u32.u32.u32 %r4, %r1, %r2", 3, 10, 0, 7),
        // |-2^31 - (2^31 - 1)| = 2^32 - 1: fits U32, exceeds S32.
        case("vabsdiff.u32.s32.s32.sat %r4, %r1, %r2", 0x8000_0000, 0x7fff_ffff, 0, 0xffff_ffff),
        case("vabsdiff.s32.s32.s32.sat %r4, %r1, %r2", 0x8000_0000, 0x7fff_ffff, 0, 0x7fff_ffff),
        case("vabsdiff.s32.s32.s32 %r4, %r1, %r2", 0x8000_0000, 0x7fff_ffff, 0, 0xffff_ffff),
        case("vmin.s32.s32.s32 %r4, %r1, %r2", 0xffff_ffff, 1, 0, 0xffff_ffff),
        case("vmin.u32.u32.u32 %r4, %r1, %r2", 0xffff_ffff, 1, 0, 1),
        // a .s32 is -1, b .u32 is 0: the maximum is 0 (as two u32 it would be 0xffffffff).
        case("vmax.u32.s32.u32 %r4, %r1, %r2", 0xffff_ffff, 0, 0, 0),
        // min(-1, 3) = -1, clamped to U32_MIN.
        case("vmin.u32.s32.u32.sat %r4, %r1, %r2", 0xffff_ffff, 3, 0, 0),
        case("vmax.s32.s32.s32 %r4, %r1, %r2", 0xffff_ffff, 1, 0, 1),
        // An immediate source.
        case("vadd.u32.u32.u32 %r4, %r1, 5", 10, 0, 0, 15),
    ]);
}

#[test]
fn scalar_source_selectors() {
    check(&[
        // a.b1 = 0x33, b.h1 = 0xabcd, both zero-extended.
        case("vadd.u32.u32.u32 %r4, %r1.b1, %r2.h1", 0x1122_3344, 0xabcd_0001, 0, 0xac00),
        // a.b3 = 0x80 = -128, b.h0 = 0xffff = -1: -129.
        case("vadd.s32.s32.s32 %r4, %r1.b3, %r2.h0", 0x8000_0000, 0x0000_ffff, 0, 0xffff_ff7f),
        // a.b2 = 0xff as .u32 is 255, b.b0 = 0xff as .s32 is -1: 256.
        case("vsub.s32.u32.s32 %r4, %r1.b2, %r2.b0", 0x00ff_0000, 0x0000_00ff, 0, 0x100),
        // a.h1 = 0x8000 = -32768, b.h0 = 0x7fff.
        case("vmax.s32.s32.s32 %r4, %r1.h1, %r2.h0", 0x8000_1234, 0x0000_7fff, 0, 0x7fff),
        case("vmin.s32.s32.s32 %r4, %r1.h1, %r2.h0", 0x8000_1234, 0x0000_7fff, 0, 0xffff_8000),
        case("vabsdiff.u32.u32.u32 %r4, %r1.b0, %r2.b3", 0x0000_0010, 0xf000_0000, 0, 0xe0),
    ]);
}

#[test]
fn scalar_destination_merge() {
    check(&[
        // 300 saturates to the unsigned byte 255, merged into byte 1 of c (an H100 agrees).
        case("vadd.u32.u32.u32.sat %r4.b1, %r1, %r2, %r3", 200, 100, 0x1122_3344, 0x1122_ff44),
        // Without .sat the low byte of 300 = 0x12c.
        case("vadd.u32.u32.u32 %r4.b1, %r1, %r2, %r3", 200, 100, 0x1122_3344, 0x1122_2c44),
        // Saturated into half-word 1, the GPU leaves 0 there, whatever the result (the ISA
        // says the saturated half-word; the GPU recording decides): -65536 (S16_MIN by the
        // ISA), 1 (a.b2 = 0 minus b.b1 = -1), -128.
        case("vsub.s32.s32.s32.sat %r4.h1, %r1, %r2, %r3", 0, 0x0001_0000, 0x1122_3344, 0x0000_3344),
        case("vsub.u32.s32.s32.sat %r4.h1, %r1.b2, %r2.b1, %r3", 0, 0x7fff_ffff, 0x1122_3344, 0x0000_3344),
        case("vsub.s32.s32.s32.sat %r4.h1, %r1.b0, %r2.b0, %r3", 0x80, 0, 0x1122_3344, 0x0000_3344),
        // |16 - 240| = 224 saturates to S8_MAX = 0x7f, in byte 3.
        case("vabsdiff.s32.u32.u32.sat %r4.b3, %r1.b0, %r2.b0, %r3", 0x10, 0xf0, 0xffff_ffff, 0x7fff_ffff),
        // min(-2, 5) = -2 saturates to U16_MIN = 0.
        case("vmin.u32.s32.s32.sat %r4.h0, %r1, %r2, %r3", 0xffff_fffe, 5, 0xaaaa_aaaa, 0xaaaa_0000),
        case("vadd.s32.s32.s32 %r4.b2, %r1, %r2, %r3", 0x7f, 0x7f, 0, 0x00fe_0000),
        case("vmax.u32.u32.u32 %r4.b0, %r1, %r2, %r3", 0x0102, 0x0304, 0xffff_ffff, 0xffff_ff04),
        // The source operand c is the destination too.
        case("vadd.u32.u32.u32 %r4.h1, %r1, %r2, %r4", 1, 2, 0, 0x0003_5a5a),
    ]);
}

#[test]
fn scalar_secondary_operations() {
    check(&[
        case("vadd.u32.u32.u32.add %r4, %r1, %r2, %r3", 1, 2, 3, 6),
        // 0x1fffffffe is not saturated (an unsigned .sat only raises negatives, as the GPU
        // recording shows for .sat alone), then + 5 wraps to 3.
        case("vadd.u32.u32.u32.sat.add %r4, %r1, %r2, %r3", 0xffff_ffff, 0xffff_ffff, 5, 3),
        // Saturated to S32_MAX first, then + 5 wraps (no second saturation).
        case("vadd.s32.s32.s32.sat.add %r4, %r1, %r2, %r3", 0x7fff_ffff, 1, 5, 0x8000_0004),
        // max(-4, -16) = -4.
        case("vsub.s32.s32.s32.max %r4, %r1, %r2, %r3", 1, 5, 0xffff_fff0, 0xffff_fffc),
        // Unsigned dtype: c is zero-extended (4294967280) and the comparison unsigned, the
        // negative intermediate -4 ranking above every c (the GPU recording decides).
        case("vsub.u32.u32.u32.max %r4, %r1, %r2, %r3", 1, 5, 0xffff_fff0, 0xffff_fffc),
        case("vsub.u32.u32.u32.min %r4, %r1, %r2, %r3", 1, 5, 0xffff_fff0, 0xffff_fff0),
        case("vsub.u32.u32.u32.min %r4, %r1, %r2, %r3", 1, 5, 7, 7),
        // vadd's and vsub's intermediate counts as its low 32 bits read as signed: 2^31 is
        // S32_MIN, below c = 0 (signed dtype) and above c = 0xffffffff (unsigned dtype).
        case("vadd.s32.s32.s32.min %r4, %r1, %r2, %r3", 0x7fff_ffff, 1, 0, 0x8000_0000),
        case("vadd.u32.u32.u32.max %r4, %r1, %r2, %r3", 0x7fff_ffff, 1, 0xffff_ffff, 0x8000_0000),
        // 2^32 + 1 counts as 1.
        case("vadd.u32.u32.u32.min %r4, %r1, %r2, %r3", 0xffff_ffff, 2, 7, 1),
        // vmax's intermediate is its value: 4294967295 (a .u32) above c = 7 (signed dtype).
        case("vmax.s32.u32.s32.min %r4, %r1, %r2, %r3", 0xffff_ffff, 0, 7, 7),
        // vmin's -1 (a .s32) ranks above every c with an unsigned dtype.
        case("vmin.u32.s32.u32.max %r4, %r1, %r2, %r3", 0xffff_ffff, 0, 0xffff_fff0, 0xffff_ffff),
        // min(a.b0 = -16, b.b1 = 5) = -16; min(-16, c = -256) = -256.
        case("vmin.s32.s32.s32.min %r4, %r1.b0, %r2.b1, %r3", 0xf0, 0x0500, 0xffff_ff00, 0xffff_ff00),
        case("vabsdiff.u32.u32.u32.add %r4, %r1, %r2, %r3", 10, 3, 100, 107),
        case("vmax.s32.s32.s32.sat.min %r4, %r1, %r2, %r3", 0x7fff_ffff, 0, 100, 100),
        // Signed dtype: c = 0xffffffff is -1, so a - b = 2 is the maximum.
        case("vsub.s32.u32.u32.max %r4, %r1, %r2, %r3", 3, 1, 0xffff_ffff, 2),
        // Unsigned dtype: c = 0xffffffff is 4294967295 and wins.
        case("vsub.u32.u32.u32.max %r4, %r1, %r2, %r3", 3, 1, 0xffff_ffff, 0xffff_ffff),
    ]);
}

#[test]
fn scalar_shifts() {
    check(&[
        // .clamp: 40 shifts by 32; 1 << 32 has zero low bits.
        case("vshl.u32.u32.u32.clamp %r4, %r1, %r2", 1, 40, 0, 0),
        // .wrap: 40 & 31 = 8.
        case("vshl.u32.u32.u32.wrap %r4, %r1, %r2", 1, 40, 0, 256),
        // 2^32 saturates to U32_MAX.
        case("vshl.u32.u32.u32.clamp.sat %r4, %r1, %r2", 1, 40, 0, 0xffff_ffff),
        // 0xffffffff << 4 = 0xffffffff0 is truncated to 34 bits: 0x3fffffff0 is negative,
        // saturated to 0 (the GPU recording decides); 2 << 32 = 2^33 likewise.
        case("vshl.u32.u32.u32.clamp.sat %r4, %r1, %r2", 0xffff_ffff, 4, 0, 0),
        case("vshl.u32.u32.u32.clamp.sat %r4, %r1, %r2", 2, 32, 0, 0),
        // 0x7fffffff << 1 fits 34 bits and U32.
        case("vshl.u32.u32.u32.clamp.sat %r4, %r1, %r2", 0x7fff_ffff, 1, 0, 0xffff_fffe),
        // 3 << 31 = 0x180000000 is positive in 34 bits: S32_MAX; 2 << 32 is negative.
        case("vshl.s32.s32.u32.clamp.sat %r4, %r1, %r2", 3, 31, 0, 0x7fff_ffff),
        case("vshl.s32.s32.u32.clamp.sat %r4, %r1, %r2", 2, 32, 0, 0x8000_0000),
        // -1 << 32 = -2^32: S32_MIN saturated, 0 in the low bits.
        case("vshl.s32.s32.u32.clamp.sat %r4, %r1, %r2", 0xffff_ffff, 33, 0, 0x8000_0000),
        case("vshl.s32.s32.u32.clamp %r4, %r1, %r2", 0xffff_ffff, 33, 0, 0),
        // A signed a shifts right arithmetically: -2^31 >> 32 = -1.
        case("vshr.s32.s32.u32.clamp %r4, %r1, %r2", 0x8000_0000, 100, 0, 0xffff_ffff),
        case("vshr.u32.u32.u32.clamp %r4, %r1, %r2", 0x8000_0000, 100, 0, 0),
        // An unsigned a shifts logically: 2^31 >> (33 & 31).
        case("vshr.s32.u32.u32.wrap %r4, %r1, %r2", 0x8000_0000, 33, 0, 0x4000_0000),
        // a.h1 = 0xff00 = -256, b.b0 = 4: -16.
        case("vshr.s32.s32.u32.wrap %r4, %r1.h1, %r2.b0", 0xff00_0000, 0x0000_0104, 0, 0xffff_fff0),
        // b.h1 = 31.
        case("vshr.u32.u32.u32.clamp %r4, %r1, %r2.h1", 0x8000_0000, 0x001f_0000, 0, 1),
        case("vshl.u32.u32.u32.wrap.add %r4, %r1, %r2, %r3", 3, 4, 2, 50),
        // 0x100 << 8 = 0x10000 saturates to U16_MAX in half-word 0.
        case("vshl.u32.u32.u32.clamp.sat %r4.h0, %r1, %r2, %r3", 0x100, 8, 0x1234_5678, 0x1234_ffff),
        // The amount is .u32: 0xffffffff is 4294967295, clamped to 32.
        case("vshr.s32.s32.u32.clamp %r4, %r1, %r2", 0x1234_5678, 0xffff_ffff, 0, 0),
    ]);
}

#[test]
fn scalar_compare() {
    check(&[
        case("vset.u32.u32.lt %r4, %r1, %r2", 1, 2, 0, 1),
        case("vset.s32.s32.lt %r4, %r1, %r2", 0xffff_ffff, 0, 0, 1),
        case("vset.u32.u32.lt %r4, %r1, %r2", 0xffff_ffff, 0, 0, 0),
        // -1 > 4294967295 is false; 4294967295 > -1 is true.
        case("vset.s32.u32.gt %r4, %r1, %r2", 0xffff_ffff, 0xffff_ffff, 0, 0),
        case("vset.u32.s32.gt %r4, %r1, %r2", 0xffff_ffff, 0xffff_ffff, 0, 1),
        case("vset.u32.u32.ne %r4, %r1.b0, %r2.b1", 0x12, 0x1200, 0, 0),
        case("vset.u32.u32.eq %r4, %r1.b0, %r2.b1", 0x12, 0x1200, 0, 1),
        case("vset.s32.s32.ge %r4, %r1.h0, %r2.b0", 0xffff, 0xff, 0, 1),
        case("vset.s32.s32.le %r4, %r1, %r2", 5, 3, 0, 0),
        case("vset.s32.s32.ge.add %r4, %r1, %r2, %r3", 5, 5, 41, 42),
        // The comparison's result and c are unsigned: max(0, 4294967295).
        case("vset.s32.s32.le.max %r4, %r1, %r2, %r3", 5, 3, 0xffff_ffff, 0xffff_ffff),
        case("vset.s32.s32.le.min %r4, %r1, %r2, %r3", 3, 5, 7, 1),
        case("vset.u32.u32.eq %r4.b2, %r1, %r2, %r3", 7, 7, 0xffff_ffff, 0xff01_ffff),
        // a.h1 = 5 > b.h0 = 3: 1 into half-word 1.
        case("vset.u32.u32.gt %r4.h1, %r1.h1, %r2.h0, %r3", 0x0005_0000, 3, 0xabcd_abcd, 0x0001_abcd),
    ]);
}

#[test]
fn scalar_multiply_add() {
    check(&[
        case("vmad.u32.u32.u32 %r4, %r1, %r2, %r3", 3, 4, 5, 17),
        // a.h1 = 2, b.b0 = 7.
        case("vmad.u32.u32.u32 %r4, %r1.h1, %r2.b0, %r3", 0x0002_0000, 0x0107, 1, 15),
        case("vmad.s32.s32.s32 %r4, %r1, %r2, %r3", 0xffff_fffe, 3, 1, 0xffff_fffb),
        // -(3*4) + 20: ~12 + 20 + 1 = 8.
        case("vmad.s32.u32.u32 %r4, -%r1, %r2, %r3", 3, 4, 20, 8),
        case("vmad.s32.u32.u32 %r4, %r1, -%r2, %r3", 3, 4, 20, 8),
        // 3*4 - 20: 12 + sext(~20) + 1 = -8.
        case("vmad.s32.u32.u32 %r4, %r1, %r2, -%r3", 3, 4, 20, 0xffff_fff8),
        // Both factors negated: the product is not.
        case("vmad.s32.s32.s32 %r4, -%r1, -%r2, %r3", 3, 4, 5, 17),
        // .po: a*b + c + 1.
        case("vmad.u32.u32.u32.po %r4, %r1, %r2, %r3", 3, 4, 5, 18),
        // (1000*1000 + 72) >> 7 = 1000072 >> 7 = 7813.
        case("vmad.u32.u32.u32.shr7 %r4, %r1, %r2, %r3", 1000, 1000, 72, 7813),
        // Whole-word sources are read as signed, .u32 or not (the ISA says otherwise; the GPU
        // recording decides): 0xffffffff^2 is (-1)^2 = 1, >> 15 is 0.
        case("vmad.u32.u32.u32.shr15 %r4, %r1, %r2, %r3", 0xffff_ffff, 0xffff_ffff, 0, 0),
        case("vmad.u32.u32.u32.shr15.sat %r4, %r1, %r2, %r3", 0xffff_ffff, 0xffff_ffff, 0, 0),
        // 1 * -2^31 >> 7 = -2^24; c is read as signed too: -1 >> 7 = -1.
        case("vmad.u32.u32.u32.shr7 %r4, %r1, %r2, %r3", 1, 0x8000_0000, 0, 0xff00_0000),
        case("vmad.u32.u32.u32.shr7 %r4, %r1, %r2, %r3", 0, 0, 0xffff_ffff, 0xffff_ffff),
        // A negative sum saturates unsigned to 0, but scaled (the unsigned final result is
        // shifted logically) it is a huge number: U32_MAX.
        case("vmad.u32.u32.u32.sat %r4, %r1, %r2, %r3", 0, 0, 0x8000_0000, 0),
        case("vmad.u32.u32.u32.shr15.sat %r4, %r1, %r2, %r3", 0, 0, 0x8000_0000, 0xffff_ffff),
        // A signed final result is shifted arithmetically: -2^31 >> 15 = -65536.
        case("vmad.s32.u32.s32.shr15.sat %r4, %r1, %r2, %r3", 0, 0, 0x8000_0000, 0xffff_0000),
        // The final result is signed (a is .s32) whatever dtype says: -1640531527 >> 15
        // rounded down, within S32 (an H100 agrees).
        case("vmad.u32.s32.u32.shr15.sat %r4, %r1.h0, %r2, %r3", 0x0101_0101, 0, 0x9e37_79b9, 0xffff_3c6e),
        // A zero-extended half-word stays positive: 0xffff * 0xffff.
        case("vmad.u32.u32.u32 %r4, %r1.h0, %r2.h0, %r3", 0xffff, 0xffff, 0, 0xfffe_0001),
        // 2^32 - 2 saturates to S32_MAX (the final result is signed: the types are).
        case("vmad.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x7fff_ffff, 2, 0, 0x7fff_ffff),
        // The same with unsigned types and a .s32 dtype: the result is unsigned (dtype does
        // not count), 2^32 - 2 fits.
        case("vmad.s32.u32.u32.sat %r4, %r1, %r2, %r3", 0x7fff_ffff, 2, 0, 0xffff_fffe),
        // -3 * 16384 = -49152; >> 15 is -1.5 rounded down: -2.
        case("vmad.s32.s32.s32.shr15 %r4, %r1, %r2, %r3", 0xffff_fffd, 0x4000, 0, 0xffff_fffe),
        // 0*0 - 1: negating c makes the final result signed, -1 within S32.
        case("vmad.s32.u32.u32.sat %r4, %r1, %r2, -%r3", 0, 0, 1, 0xffff_ffff),
        // (1*127 + 0 + 1) >> 7 = 1: the rounding .po gives.
        case("vmad.u32.u32.u32.po.shr7 %r4, %r1, %r2, %r3", 1, 127, 0, 1),
        // -(2*3) + 0 saturated: -6, signed.
        case("vmad.u32.u32.u32.sat %r4, -%r1, %r2, %r3", 2, 3, 0, 0xffff_fffa),
    ]);
}

#[test]
fn simd_half_words() {
    check(&[
        // e0: 0xffff + 3 = 0x10002 truncated; e1: 1 + 2.
        case("vadd2.u32.u32.u32 %r4, %r1, %r2, %r3", 0x0001_ffff, 0x0002_0003, 0, 0x0003_0002),
        case("vadd2.u32.u32.u32.sat %r4, %r1, %r2, %r3", 0x0001_ffff, 0x0002_0003, 0, 0x0003_ffff),
        // e0: -32768 + -1 -> S16_MIN; e1: 32767 + 1 -> S16_MAX.
        case("vadd2.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x7fff_8000, 0x0001_ffff, 0, 0x7fff_8000),
        case("vadd2.s32.s32.s32 %r4, %r1, %r2, %r3", 0x7fff_8000, 0x0001_ffff, 0, 0x8000_7fff),
        // e0: 1 - 2 = -1 -> 0; e1: 5 - 3.
        case("vsub2.u32.u32.u32.sat %r4, %r1, %r2, %r3", 0x0005_0001, 0x0003_0002, 0, 0x0002_0000),
        case("vsub2.s32.s32.s32 %r4, %r1, %r2, %r3", 0x0005_0001, 0x0003_0002, 0, 0x0002_ffff),
        // e0: (1 + 2 + 1) >> 1 = 2; e1: (65535 + 65535 + 1) >> 1 = 65535.
        case("vavrg2.u32.u32.u32 %r4, %r1, %r2, %r3", 0xffff_0001, 0xffff_0002, 0, 0xffff_0002),
        // e0: (3 + 1) >> 1 = 2; e1: -3 >> 1 = -2 (a negative sum is not incremented).
        case("vavrg2.s32.s32.s32 %r4, %r1, %r2, %r3", 0xfffd_0003, 0, 0, 0xfffe_0002),
        // e0: -1 >> 1 = -1; e1: (1 + 1) >> 1 = 1.
        case("vavrg2.s32.s32.s32 %r4, %r1, %r2, %r3", 0x0001_ffff, 0, 0, 0x0001_ffff),
        // The same half-words unsigned: e0 (65535 + 1) >> 1 = 32768.
        case("vavrg2.u32.u32.u32 %r4, %r1, %r2, %r3", 0x0001_ffff, 0, 0, 0x0001_8000),
        case("vabsdiff2.u32.u32.u32 %r4, %r1, %r2, %r3", 0x0001_0010, 0x0010_0001, 0, 0x000f_000f),
        // |32767 - -32768| = 65535 -> S16_MAX in both.
        case("vabsdiff2.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x8000_7fff, 0x7fff_8000, 0, 0x7fff_7fff),
        case("vabsdiff2.s32.s32.s32 %r4, %r1, %r2, %r3", 0x8000_7fff, 0x7fff_8000, 0, 0xffff_ffff),
        case("vmin2.s32.s32.s32 %r4, %r1, %r2, %r3", 0xffff_0001, 0x0001_ffff, 0, 0xffff_ffff),
        case("vmin2.u32.u32.u32 %r4, %r1, %r2, %r3", 0xffff_0001, 0x0001_ffff, 0, 0x0001_0001),
        case("vmax2.s32.s32.s32 %r4, %r1, %r2, %r3", 0xffff_0001, 0x0001_ffff, 0, 0x0001_0001),
        // e1: max(-1, -2) = -1 -> U16_MIN.
        case("vmax2.u32.s32.s32.sat %r4, %r1, %r2, %r3", 0xffff_0001, 0xfffe_0002, 0, 0x0000_0002),
        // a .u32, b .s32: e0 max(0xffff = 65535, 0xffff = -1) = 65535.
        case("vmax2.u32.u32.s32 %r4, %r1, %r2, %r3", 0x0000_ffff, 0x0000_ffff, 0, 0x0000_ffff),
        case("vmin2.u32.u32.s32 %r4, %r1, %r2, %r3", 0x0000_ffff, 0x0000_ffff, 0, 0x0000_ffff),
        // min(65535, -1) = -1 saturated unsigned: 0.
        case("vmin2.u32.u32.s32.sat %r4, %r1, %r2, %r3", 0x0000_ffff, 0x0000_ffff, 0, 0),
    ]);
}

#[test]
fn simd_half_word_masks_selectors_and_accumulate() {
    check(&[
        // Mask .h1: e1 = 3, e0 is c's.
        case("vadd2.u32.u32.u32 %r4.h1, %r1, %r2, %r3", 0x0001_0001, 0x0002_0002, 0xaaaa_bbbb, 0x0003_bbbb),
        case("vadd2.u32.u32.u32 %r4.h0, %r1, %r2, %r3", 0x0001_0001, 0x0002_0002, 0xaaaa_bbbb, 0xaaaa_0003),
        case("vadd2.u32.u32.u32 %r4.h10, %r1, %r2, %r3", 0x0001_0001, 0x0002_0002, 0xaaaa_bbbb, 0x0003_0003),
        // .h01: e1 = half-word 0 (1), e0 = half-word 1 (2); .h23: e1 = hw 2 (0x10), e0 =
        // hw 3 (0x20), half-words 2 and 3 being b's.
        case("vadd2.u32.u32.u32 %r4, %r1.h01, %r2.h23, %r3", 0x0002_0001, 0x0020_0010, 0, 0x0011_0022),
        // The selectors swap a and b: b - a per element.
        case("vsub2.s32.s32.s32 %r4, %r1.h32, %r2.h10, %r3", 0x0001_0005, 0x0003_0002, 0, 0x0002_fffd),
        // One half-word twice: max(5, 7) in both.
        case("vmax2.u32.u32.u32 %r4, %r1.h00, %r2.h33, %r3", 0x1111_0005, 0x0007_2222, 0, 0x0007_0007),
        // .add: 5 + 15 + 100.
        case("vabsdiff2.u32.u32.u32.add %r4, %r1, %r2, %r3", 0x0010_0003, 0x0001_0008, 100, 120),
        // -2 + -4 + 10.
        case("vsub2.s32.s32.s32.add %r4, %r1, %r2, %r3", 0x0001_0001, 0x0005_0003, 10, 4),
        // The accumulated elements are the signed intermediates even for .u32: -1 + -1 + 10.
        case("vsub2.u32.u32.u32.add %r4, %r1, %r2, %r3", 0, 0x0001_0001, 10, 8),
        // Only e1 (3) is added.
        case("vadd2.u32.u32.u32.add %r4.h1, %r1, %r2, %r3", 0x0001_0100, 0x0002_0200, 1000, 1003),
        // min(5, -5) + min(-1, 1) = -6.
        case("vmin2.s32.s32.s32.add %r4, %r1, %r2, %r3", 0xffff_0005, 0x0001_fffb, 0, 0xffff_fffa),
        // The sum wraps in 32 bits: 0xffffffff + 65535 + 65535.
        case("vadd2.u32.u32.u32.add %r4, %r1, %r2, %r3", 0xffff_ffff, 0, 0xffff_ffff, 0x0001_fffd),
        case("vavrg2.u32.u32.u32.add %r4, %r1, %r2, %r3", 0x0003_0001, 0x0000_0000, 7, 10),
    ]);
}

#[test]
fn simd_bytes() {
    check(&[
        // e0: 0x80 + 0x80 = 0x100 -> 0; e1: 0x7f + 1 = 0x80; e2: 0xff + 1 -> 0; e3: 2.
        case("vadd4.u32.u32.u32 %r4, %r1, %r2, %r3", 0x01ff_7f80, 0x0101_0180, 0, 0x0200_8000),
        case("vadd4.u32.u32.u32.sat %r4, %r1, %r2, %r3", 0x01ff_7f80, 0x0101_0180, 0, 0x02ff_80ff),
        // e0: -128 + -128 -> -128; e1: 127 + 1 -> 127; e2: -1 + 1 = 0; e3: 2.
        case("vadd4.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x01ff_7f80, 0x0101_0180, 0, 0x0200_7f80),
        // a: 5, 0, 127, -128; b: 6, 5, -1, 1: -1, -5, 128 -> 127, -129 -> -128.
        case("vsub4.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x807f_0005, 0x01ff_0506, 0, 0x807f_fbff),
        // Unsigned: -1 -> 0, -5 -> 0, 127 - 255 -> 0, 128 - 1 = 127.
        case("vsub4.u32.u32.u32.sat %r4, %r1, %r2, %r3", 0x807f_0005, 0x01ff_0506, 0, 0x7f00_0000),
        case("vsub4.s32.s32.s32 %r4, %r1, %r2, %r3", 0x807f_0005, 0x01ff_0506, 0, 0x7f80_fbff),
        // (1+2+1)>>1 = 2, (3+1+1)>>1 = 2, (0+1+1)>>1 = 1, (255+255+1)>>1 = 255.
        case("vavrg4.u32.u32.u32 %r4, %r1, %r2, %r3", 0xff00_0301, 0xff01_0102, 0, 0xff01_0202),
        // 3 -> (3+1)>>1 = 2; -2 >> 1 = -1; -1 >> 1 = -1; -3 >> 1 = -2.
        case("vavrg4.s32.s32.s32 %r4, %r1, %r2, %r3", 0xfdff_fe03, 0, 0, 0xfeff_ff02),
        case("vabsdiff4.u32.u32.u32 %r4, %r1, %r2, %r3", 0x00ff_1005, 0xff00_0510, 0, 0xffff_0b0b),
        // e2: |127 - -128| = 255 -> 127; e3: |-128 - 127| = 255 -> 127.
        case("vabsdiff4.s32.s32.s32.sat %r4, %r1, %r2, %r3", 0x807f_0000, 0x7f80_0000, 0, 0x7f7f_0000),
        case("vabsdiff4.s32.s32.s32 %r4, %r1, %r2, %r3", 0x807f_0000, 0x7f80_0000, 0, 0xffff_0000),
        // a: 127, -1, -128, 1; b: 2, 1, -1, -128.
        case("vmin4.s32.s32.s32 %r4, %r1, %r2, %r3", 0x0180_ff7f, 0x80ff_0102, 0, 0x8080_ff02),
        case("vmax4.s32.s32.s32 %r4, %r1, %r2, %r3", 0x0180_ff7f, 0x80ff_0102, 0, 0x01ff_017f),
        case("vmax4.u32.u32.u32 %r4, %r1, %r2, %r3", 0x0180_ff7f, 0x80ff_0102, 0, 0x80ff_ff7f),
        case("vmin4.u32.u32.u32 %r4, %r1, %r2, %r3", 0x0180_ff7f, 0x80ff_0102, 0, 0x0180_0102),
        // Mixed: a .s32, b .u32; e0 min(-1, 255) = -1, sat unsigned -> 0; e1 min(1, 2) = 1.
        case("vmin4.u32.s32.u32.sat %r4, %r1, %r2, %r3", 0x0000_01ff, 0x0000_02ff, 0, 0x0000_0100),
    ]);
}

#[test]
fn simd_byte_masks_selectors_and_accumulate() {
    check(&[
        // Mask .b31: e1 and e3 = 2; e0, e2 are c's.
        case("vadd4.u32.u32.u32 %r4.b31, %r1, %r2, %r3", 0x0101_0101, 0x0101_0101, 0xaabb_ccdd, 0x02bb_02dd),
        case("vadd4.u32.u32.u32 %r4.b0, %r1, %r2, %r3", 0x0101_0101, 0x0101_0101, 0xaabb_ccdd, 0xaabb_cc02),
        case("vadd4.u32.u32.u32 %r4.b3210, %r1, %r2, %r3", 0x0101_0101, 0x0101_0101, 0xaabb_ccdd, 0x0202_0202),
        // .b0123 reverses a's bytes (e3 = byte 0); .b4444 is b's byte 0 (0x10) for all.
        case("vadd4.u32.u32.u32 %r4, %r1.b0123, %r2.b4444, %r3", 0x0403_0201, 0x10, 0, 0x1112_1314),
        // a takes b's bytes, b takes a's: 0x10 - 4, 0x10 - 3, ...
        case("vsub4.s32.u32.u32 %r4, %r1.b7654, %r2.b3210, %r3", 0x0102_0304, 0x1010_1010, 0, 0x0f0e_0d0c),
        // Accumulate over e1, e0: min(5, 3) + min(5, 4) + 100.
        case("vmin4.s32.u32.u32.add %r4.b10, %r1, %r2, %r3", 0x0505_0505, 0x0102_0304, 100, 107),
        // Four times -1 (0 - 1).
        case("vsub4.s32.s32.s32.add %r4, %r1, %r2, %r3", 0, 0x0101_0101, 10, 6),
        // Four times 0 - 255 = -255 (signed intermediates, unsigned types): 2000 - 1020.
        case("vsub4.u32.u32.u32.add %r4, %r1, %r2, %r3", 0, 0xffff_ffff, 2000, 980),
        // The sum of absolute differences: 11 + 11 + 255 + 255 + 1000.
        case("vabsdiff4.u32.u32.u32.add %r4, %r1, %r2, %r3", 0x00ff_1005, 0xff00_0510, 1000, 1532),
        // Signed bytes: |0 - -1| * 4.
        case("vabsdiff4.s32.s32.s32.add %r4, %r1, %r2, %r3", 0, 0xffff_ffff, 0, 4),
        // e1: (3 + 1) >> 1 = 2; e2: -5 >> 1 = -3 (rounded down); 2 - 3 = -1.
        case("vavrg4.s32.s32.s32.add %r4.b21, %r1, %r2, %r3", 0x00fb_0300, 0, 0, 0xffff_ffff),
        case("vmax4.u32.u32.u32.add %r4, %r1, %r2, %r3", 0xffff_ffff, 0, 0, 1020),
    ]);
}

#[test]
fn simd_compare() {
    check(&[
        // e0: 65535 < 1 no; e1: 1 < 2.
        case("vset2.u32.u32.lt %r4, %r1, %r2, %r3", 0x0001_ffff, 0x0002_0001, 0, 0x0001_0000),
        // e0: -1 < 1.
        case("vset2.s32.s32.lt %r4, %r1, %r2, %r3", 0x0001_ffff, 0x0002_0001, 0, 0x0001_0001),
        // e0: 0 >= 0; e1: -1 >= 0 no.
        case("vset2.s32.u32.ge %r4, %r1, %r2, %r3", 0xffff_0000, 0, 0, 0x0000_0001),
        case("vset2.u32.u32.ge %r4, %r1, %r2, %r3", 0xffff_0000, 0, 0, 0x0001_0001),
        case("vset2.u32.u32.eq.add %r4, %r1, %r2, %r3", 0x0005_0005, 0x0005_0005, 40, 42),
        // e0: 1 != 2 is 1 but not written; e1: 0 != 0 is 0.
        case("vset2.u32.u32.ne %r4.h1, %r1, %r2, %r3", 1, 2, 0xaaaa_bbbb, 0x0000_bbbb),
        case("vset2.u32.u32.ne %r4.h0, %r1, %r2, %r3", 1, 2, 0xaaaa_bbbb, 0xaaaa_0001),
        // a.h22 = b's half-word 0 twice (7); b.h01: e1 = 3, e0 = 7.
        case("vset2.u32.u32.gt %r4, %r1.h22, %r2.h01, %r3", 0x0007_0003, 0x0000_0007, 0, 0x0001_0000),
        case("vset4.u32.u32.eq %r4, %r1, %r2, %r3", 0x1122_3344, 0x1100_3300, 0, 0x0100_0100),
        // a: 1, 127, -1, -128 > 0.
        case("vset4.s32.s32.gt %r4, %r1, %r2, %r3", 0x80ff_7f01, 0, 0, 0x0000_0101),
        case("vset4.u32.u32.gt %r4, %r1, %r2, %r3", 0x80ff_7f01, 0, 0, 0x0101_0101),
        case("vset4.u32.u32.le.add %r4, %r1, %r2, %r3", 0x0102_0304, 0x0303_0303, 0, 3),
        // b signed: 1, -1, 1, -1; 0 < b: 1, 0, 1, 0; e3, e2 written, e1, e0 c's.
        case("vset4.u32.s32.lt %r4.b32, %r1, %r2, %r3", 0, 0xff01_ff01, 0xaabb_ccdd, 0x0001_ccdd),
        // a.b0000 = 7 everywhere, b.b3210 = a's bytes 7, 3, 7, 7 (e0 first).
        case("vset4.u32.u32.eq %r4, %r1.b0000, %r2.b3210, %r3", 0x0707_0307, 0, 0, 0x0101_0001),
        // ne: e0 1, e1 1, e2 0 (2 = 2), e3 1; e3, e1, e0 summed: 3 + 5.
        case("vset4.s32.s32.ne.add %r4.b310, %r1, %r2, %r3", 0x0102_0304, 0x0002_0000, 5, 8),
    ]);
}

#[test]
fn per_lane_sum_of_absolute_differences() {
    // Lane t: a = t in every byte, b = 16 in every byte: 4 * |t - 16|.
    let body = "mov.u32 %r1, %tid.x; mul.lo.u32 %r1, %r1, 0x01010101; mov.u32 %r2, 0x10101010; mov.u32 %r3, 0;\n\
                vabsdiff4.u32.u32.u32.add %r4, %r1, %r2, %r3;\n\
                mov.u32 %r5, %tid.x; mul.wide.u32 %rd1, %r5, 4; add.s64 %rd2, %rd0, %rd1; st.global.u32 [%rd2], %r4;";
    let m = Module::load(&kernel(body)).unwrap();
    let mut mem = HostMemory::new();
    let out = mem.alloc(128);
    m.launch("k", [1, 1, 1], [32, 1, 1], 0, &[&out.to_le_bytes()], &mem).unwrap();
    let got: Vec<u32> =
        mem.bytes(out, 128).unwrap().chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
    let want: Vec<u32> = (0..32u32).map(|t| 4 * t.abs_diff(16)).collect();
    assert_eq!(got, want);
}

#[test]
fn forms_outside_the_isa_are_refused() {
    for inst in [
        // .sat cannot go with the .add accumulate.
        "vadd4.u32.u32.u32.sat.add %r4, %r1, %r2, %r3",
        // SIMD secondary operations are .add only.
        "vadd2.u32.u32.u32.min %r4, %r1, %r2, %r3",
        // vset needs a comparison and takes no .sat.
        "vset.u32.u32 %r4, %r1, %r2",
        "vset.u32.u32.lt.sat %r4, %r1, %r2",
        "vset4.u32.u32.u32.lt %r4, %r1, %r2, %r3",
        // Shifts need a mode, and an unsigned amount.
        "vshl.u32.u32.u32 %r4, %r1, %r2",
        "vshr.u32.u32.s32.wrap %r4, %r1, %r2",
        // A secondary operation needs c and no destination selector.
        "vadd.u32.u32.u32.add %r4, %r1, %r2",
        "vadd.u32.u32.u32.add %r4.h0, %r1, %r2, %r3",
        // SIMD needs c.
        "vadd2.u32.u32.u32 %r4, %r1, %r2",
        // Selectors of the wrong kind or size.
        "vadd2.u32.u32.u32 %r4, %r1.b10, %r2, %r3",
        "vadd2.u32.u32.u32 %r4, %r1.h4, %r2, %r3",
        "vadd4.u32.u32.u32 %r4, %r1.b321, %r2, %r3",
        "vadd4.u32.u32.u32 %r4, %r1.b8000, %r2, %r3",
        "vadd4.u32.u32.u32 %r4.b4, %r1, %r2, %r3",
        "vadd.u32.u32.u32 %r4, %r1.h2, %r2",
        "vadd.u32.u32.u32 %r4, %r1.b10, %r2",
        // Negation is vmad's, not with .po, not of both the product and c.
        "vadd.u32.u32.u32 %r4, -%r1, %r2",
        "vmad.u32.u32.u32.po %r4, -%r1, %r2, %r3",
        "vmad.s32.s32.s32 %r4, -%r1, %r2, -%r3",
        // Types are .u32 and .s32, three of them (vset: two).
        "vadd.u32.u32.b32 %r4, %r1, %r2",
        "vadd.u32.u32 %r4, %r1, %r2",
        "vmad.u32.u32.u32.add %r4, %r1, %r2, %r3",
    ] {
        let ptx = kernel(&format!("{inst};"));
        let e = Module::load(&ptx).map(|_| ()).unwrap_err();
        assert_eq!(e.line, 9, "{inst}: {e}");
    }
}

/// The elements of `a` and `b` (`w` bits each, signed or not) through `f`, packed again
/// (each result truncated to `w` bits).
fn per_element(a: u32, b: u32, w: u32, signed: bool, f: impl Fn(i64, i64) -> i64) -> u32 {
    let ext = |x: u32, i: u32| {
        let v = (x >> (i * w)) & ((1u32 << w) - 1);
        if signed && v >> (w - 1) == 1 {
            i64::from(v) - (1i64 << w)
        } else {
            i64::from(v)
        }
    };
    (0..32 / w).fold(0u32, |acc, i| acc | ((f(ext(a, i), ext(b, i)) as u32) & ((1u32 << w) - 1)) << (i * w))
}

/// The sum over the elements of `f`.
fn sum_elements(a: u32, b: u32, w: u32, signed: bool, f: impl Fn(i64, i64) -> i64) -> u32 {
    (0..32 / w).map(|i| per_element(a, b, w, signed, &f) >> (i * w) & ((1u32 << w) - 1)).sum()
}

#[test]
fn the_forms_of_cudas_simd_intrinsics_match_their_definitions() {
    // The PTX CUDA's SIMD intrinsics (__vaddss4, __vcmpgtu2, __vsadu4, ...) are written with
    // (c = 0), against the intrinsics' definitions per element (CUDA Math API, "SIMD
    // Intrinsics"), over edge and pseudo-random inputs.
    type Def = Box<dyn Fn(u32, u32) -> u32>;
    let sat = |lo: i64, hi: i64| move |v: i64| v.clamp(lo, hi);
    let avgs = |x: i64, y: i64| (x + y + i64::from(x + y >= 0)) >> 1;
    let forms: Vec<(&'static str, Def)> = vec![
        ("vadd2.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, |x, y| x + y))),
        (
            "vadd2.s32.s32.s32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 16, true, |x, y| sat(-32768, 32767)(x + y))),
        ),
        (
            "vadd2.u32.u32.u32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 16, false, |x, y| sat(0, 65535)(x + y))),
        ),
        ("vsub2.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, |x, y| x - y))),
        (
            "vsub2.s32.s32.s32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 16, true, |x, y| sat(-32768, 32767)(x - y))),
        ),
        (
            "vsub2.u32.u32.u32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 16, false, |x, y| sat(0, 65535)(x - y))),
        ),
        ("vavrg2.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(move |a, b| per_element(a, b, 16, true, avgs))),
        (
            "vavrg2.u32.u32.u32 %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 16, false, |x, y| (x + y + 1) / 2)),
        ),
        (
            "vabsdiff2.u32.u32.u32 %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 16, false, |x, y| (x - y).abs())),
        ),
        (
            "vabsdiff2.s32.s32.s32 %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 16, true, |x, y| (x - y).abs())),
        ),
        (
            "vabsdiff2.s32.s32.s32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 16, true, |x, y| sat(-32768, 32767)((x - y).abs()))),
        ),
        ("vmax2.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, true, i64::max))),
        ("vmax2.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, i64::max))),
        ("vmin2.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, true, i64::min))),
        ("vmin2.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, i64::min))),
        (
            "vset2.u32.u32.eq %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 16, false, |x, y| i64::from(x == y))),
        ),
        (
            "vset2.u32.u32.ne %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 16, false, |x, y| i64::from(x != y))),
        ),
        ("vset2.s32.s32.ge %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, true, |x, y| i64::from(x >= y)))),
        ("vset2.u32.u32.gt %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, |x, y| i64::from(x > y)))),
        ("vset2.s32.s32.le %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, true, |x, y| i64::from(x <= y)))),
        ("vset2.u32.u32.lt %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 16, false, |x, y| i64::from(x < y)))),
        (
            "vabsdiff2.u32.u32.u32.add %r4, %r1, %r2, %r3",
            Box::new(|a, b| sum_elements(a, b, 16, false, |x, y| (x - y).abs())),
        ),
        (
            "vabsdiff2.s32.s32.s32.add %r4, %r1, %r2, %r3",
            Box::new(|a, b| sum_elements(a, b, 16, true, |x, y| (x - y).abs())),
        ),
        ("vadd4.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| x + y))),
        // __vaddss4 writes .sat before the types.
        (
            "vadd4.sat.s32.s32.s32 %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 8, true, |x, y| sat(-128, 127)(x + y))),
        ),
        (
            "vadd4.u32.u32.u32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 8, false, |x, y| sat(0, 255)(x + y))),
        ),
        ("vsub4.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| x - y))),
        (
            "vsub4.s32.s32.s32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 8, true, |x, y| sat(-128, 127)(x - y))),
        ),
        (
            "vsub4.u32.u32.u32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 8, false, |x, y| sat(0, 255)(x - y))),
        ),
        ("vavrg4.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(move |a, b| per_element(a, b, 8, true, avgs))),
        ("vavrg4.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| (x + y + 1) / 2))),
        (
            "vabsdiff4.u32.u32.u32 %r4, %r1, %r2, %r3",
            Box::new(|a, b| per_element(a, b, 8, false, |x, y| (x - y).abs())),
        ),
        ("vabsdiff4.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, true, |x, y| (x - y).abs()))),
        (
            "vabsdiff4.s32.s32.s32.sat %r4, %r1, %r2, %r3",
            Box::new(move |a, b| per_element(a, b, 8, true, |x, y| sat(-128, 127)((x - y).abs()))),
        ),
        ("vmax4.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, true, i64::max))),
        ("vmax4.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, i64::max))),
        ("vmin4.s32.s32.s32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, true, i64::min))),
        ("vmin4.u32.u32.u32 %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, i64::min))),
        ("vset4.u32.u32.eq %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| i64::from(x == y)))),
        ("vset4.u32.u32.ne %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| i64::from(x != y)))),
        ("vset4.s32.s32.gt %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, true, |x, y| i64::from(x > y)))),
        ("vset4.u32.u32.ge %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| i64::from(x >= y)))),
        ("vset4.s32.s32.lt %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, true, |x, y| i64::from(x < y)))),
        ("vset4.u32.u32.le %r4, %r1, %r2, %r3", Box::new(|a, b| per_element(a, b, 8, false, |x, y| i64::from(x <= y)))),
        (
            "vabsdiff4.u32.u32.u32.add %r4, %r1, %r2, %r3",
            Box::new(|a, b| sum_elements(a, b, 8, false, |x, y| (x - y).abs())),
        ),
        (
            "vabsdiff4.s32.s32.s32.add %r4, %r1, %r2, %r3",
            Box::new(|a, b| sum_elements(a, b, 8, true, |x, y| (x - y).abs())),
        ),
    ];
    let mut inputs: Vec<(u32, u32)> = Vec::new();
    let edges = [0, 0xffff_ffff, 0x8080_8080, 0x7f7f_7f7f, 0x8000_8000, 0x7fff_7fff, 0x0001_0001, 0xff00_ff00];
    for &a in &edges {
        for &b in &edges {
            inputs.push((a, b));
        }
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..16 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        inputs.push(((x >> 32) as u32, x as u32));
    }
    let cases: Vec<Case> =
        forms.iter().flat_map(|(inst, def)| inputs.iter().map(move |&(a, b)| case(inst, a, b, 0, def(a, b)))).collect();
    check(&cases);
}
