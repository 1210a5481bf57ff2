//! The approximate instructions (`.approx`, `div.full`) as the H200 computes them: ptxas's
//! instruction sequences around the special function unit (SFU), written out exactly, with
//! the unit itself modelled as the exact function rounded to nearest.
//!
//! The sequences are read from the SASS ptxas 13.0 emits (recorded in
//! `docs/gpu-runs/h100/approx-sass-2026-12-06.txt`): `sin`/`cos` feed the unit
//! `x * (1/2pi)` rounded toward zero (the unit works in revolutions); the non-`.ftz` forms
//! scale subnormal operands by 2^24 (and `rcp`, `div.full` operands above 2^126 by 1/4) and
//! undo it after the unit; `ex2` below -126 squares the unit's result for x/2; `div.approx`
//! and `div.full` multiply by the unit's reciprocal. The unit flushes subnormal inputs and
//! outputs. Where the unit's own result differs from the exact function rounded to nearest
//! (its approximation error), these models differ from the GPU: the counts of differing
//! inputs and the largest difference, measured over every f32 input on the GPU, are in
//! `docs/gpu-runs/h100/approx-2026-12-06.txt` and DESIGN.md. f64 `rcp.approx.ftz` and
//! `rsqrt.approx.ftz` are the unit's 64-bit forms, which read the operand's high word and
//! write the result's high word.

use crate::float::{round_to, Fmt, Rnd};

/// An approximate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// 1/x
    Rcp,
    /// sqrt(x)
    Sqrt,
    /// 1/sqrt(x)
    Rsqrt,
    /// 2^x
    Ex2,
    /// log2(x)
    Lg2,
    /// sin(x)
    Sin,
    /// cos(x)
    Cos,
    /// tanh(x)
    Tanh,
}

const MIN_NORMAL: f32 = f32::MIN_POSITIVE;
const TWO_24: f32 = 16_777_216.0;
/// 2^126: above it, 1/x is subnormal.
const TWO_126: f32 = 8.507_059e37;
/// The steps of a revolution `sin`'s unit resolves (2^25, measured).
const SIN_STEPS: f64 = 33_554_432.0;
/// 1/(2 pi) as ptxas writes it (0x3e22f983).
const INV_TWO_PI: u32 = 0x3e22_f983;

fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `a * b` in f32, rounded toward zero.
fn mul_rz(a: f32, b: f32) -> f32 {
    let exact = f64::from(a) * f64::from(b); // exact: 48 bits of product
    if exact == 0.0 || !exact.is_finite() {
        return a * b;
    }
    f32::from_bits(round_to(exact, 0, Rnd::Rz, Fmt::F32) as u32)
}

/// The special function unit: `f` of the flushed input, rounded to nearest f32, a
/// subnormal result flushed (`Tanh` keeps subnormals: tanh(x) is x there); `Sin` and `Cos`
/// take their argument in revolutions (a zero result keeps the argument's sign).
pub fn unit(f: Func, x: f32) -> f32 {
    if f == Func::Tanh {
        return if x.is_nan() { f32::from_bits(0x7fff_ffff) } else { f64::from(x).tanh() as f32 };
    }
    let v = f64::from(flush(x));
    let r = match f {
        Func::Sin | Func::Cos => {
            if !v.is_finite() {
                f64::NAN
            } else {
                let frac = (v - v.trunc()).copysign(v);
                if f == Func::Sin {
                    // The fraction of a revolution truncated to 25 bits: of the widths tried
                    // over every f32 input on the GPU (19 to 30, and none), the closest.
                    let q = (frac.abs() * SIN_STEPS).trunc() / SIN_STEPS;
                    (std::f64::consts::TAU * q.copysign(frac)).sin()
                } else {
                    (std::f64::consts::TAU * frac).cos()
                }
            }
        }
        _ => f64(f, v),
    };
    if r.is_nan() {
        return f32::from_bits(0x7fff_ffff);
    }
    flush(r as f32)
}

/// `f.approx[.ftz].f32` of `x` (bits in, bits out).
pub fn f32(f: Func, x: u32, ftz: bool) -> u32 {
    let x = f32::from_bits(x);
    let r = if ftz { f32_ftz(f, flush(x)) } else { f32_full(f, x) };
    r.to_bits()
}

fn f32_ftz(f: Func, x: f32) -> f32 {
    match f {
        Func::Sin | Func::Cos => unit(f, mul_rz(x, f32::from_bits(INV_TWO_PI))),
        _ => unit(f, x),
    }
}

/// The non-`.ftz` sequences: subnormal operands scaled into the unit's range.
fn f32_full(f: Func, x: f32) -> f32 {
    let tiny = x.abs() < MIN_NORMAL;
    match f {
        Func::Sin | Func::Cos => unit(f, mul_rz(x, f32::from_bits(INV_TWO_PI))),
        Func::Tanh => unit(f, x),
        Func::Ex2 => {
            if x >= -126.0 || x.is_nan() {
                unit(f, x)
            } else {
                let h = unit(f, x * 0.5);
                h * h
            }
        }
        Func::Lg2 => {
            if tiny {
                unit(f, x * TWO_24) - 24.0
            } else {
                unit(f, x)
            }
        }
        Func::Rsqrt => {
            if tiny {
                unit(f, x * TWO_24) * 4096.0
            } else {
                unit(f, x)
            }
        }
        Func::Sqrt => {
            if tiny {
                unit(f, x * TWO_24) * (1.0 / 4096.0)
            } else {
                unit(f, x)
            }
        }
        Func::Rcp => {
            let scale = if x.abs() > TWO_126 {
                0.25
            } else if tiny {
                TWO_24
            } else {
                1.0
            };
            unit(f, x * scale) * scale
        }
    }
}

/// `div.approx[.ftz].f32` (`full` false) and `div.full[.ftz].f32` (`full` true): `a` times
/// the unit's reciprocal of `b`, both scaled by 2^24 when `b` is subnormal (not `.ftz`), and
/// for `div.full` by 1/4 when |b| passes 2^126.
pub fn div_f32(a: u32, b: u32, full: bool, ftz: bool) -> u32 {
    let (mut a, mut b) = (f32::from_bits(a), f32::from_bits(b));
    if ftz {
        a = flush(a);
        b = flush(b);
    }
    if full && b.abs() > TWO_126 {
        a *= 0.25;
        b *= 0.25;
    } else if !ftz && b.abs() < MIN_NORMAL {
        a *= TWO_24;
        b *= TWO_24;
    }
    let r = unit(Func::Rcp, b) * a;
    let r = if ftz { flush(r) } else { r };
    if r.is_nan() {
        0x7fff_ffff
    } else {
        r.to_bits()
    }
}

/// `f(x)` for an f64 operand in f64, rounded to nearest (`rsqrt.approx.f64`, and the f16 and
/// bf16 forms through f32).
pub fn f64(f: Func, v: f64) -> f64 {
    match f {
        Func::Rcp => 1.0 / v,
        Func::Sqrt => v.sqrt(),
        Func::Rsqrt => 1.0 / v.sqrt(),
        Func::Ex2 => v.exp2(),
        Func::Lg2 => {
            if v < 0.0 {
                f64::NAN
            } else {
                v.log2()
            }
        }
        Func::Sin => v.sin(),
        Func::Cos => v.cos(),
        Func::Tanh => v.tanh(),
    }
}

/// The unit's 64-bit forms, `rcp.approx.ftz.f64` and `rsqrt.approx.ftz.f64`: the operand's
/// high word only (a subnormal reads as zero), the result's high word (the low word zero,
/// the value truncated), a subnormal result flushed; a NaN result is `0x7fffffff00000000`.
pub fn f64_high_word(f: Func, x: u64) -> u64 {
    let hi = x & 0xffff_ffff_0000_0000;
    let v = f64::from_bits(hi);
    let v = if v.is_subnormal() { 0.0f64.copysign(v) } else { v };
    let r = f64(f, v);
    if r.is_nan() {
        return 0x7fff_ffff_0000_0000;
    }
    let r = if r.is_subnormal() { 0.0f64.copysign(r) } else { r };
    r.to_bits() & 0xffff_ffff_0000_0000
}

/// The functions of 16-bit operands the special function unit runs: `ex2.approx.f16`,
/// `tanh.approx.f16`, `ex2.approx.ftz.bf16`, `tanh.approx.bf16` (and their x2 forms, per
/// half), in the order of their exception tables.
const HALF_FORMS: [(Func, Fmt); 4] =
    [(Func::Ex2, Fmt::F16), (Func::Tanh, Fmt::F16), (Func::Ex2, Fmt::Bf16), (Func::Tanh, Fmt::Bf16)];

/// The inputs where the GPU's 16-bit `ex2`/`tanh` differ from [`half_model`], with the
/// GPU's outputs: four tables (in [`HALF_FORMS`] order), each a little-endian u32 count then
/// that many (input u16, output u16) pairs sorted by input. Written by `cargo run -p
/// cudrv-ptx --example half_exceptions` from the GPU's record of every input
/// (`docs/gpu-runs/h100/half-approx-2026-12-06.bin`); `tests/approx_half.rs` checks that
/// model and exceptions give that record exactly.
static HALF_EXCEPTIONS: &[u8] = include_bytes!("approx_half.bin");

/// The model of a 16-bit `ex2`/`tanh` before exceptions: `ex2.f16` the unit's f32 result
/// (rounded to nearest) rounded toward zero to f16, overflowing to infinity; `ex2.bf16` the
/// f32 result's high half; `tanh` the exact function rounded to nearest; a NaN the
/// canonical NaN.
pub fn half_model(f: Func, fmt: Fmt, x: u16) -> u16 {
    let v = fmt.to_f64(u64::from(x));
    if v.is_nan() {
        return 0x7fff;
    }
    match f {
        Func::Ex2 => {
            let r = v.exp2() as f32;
            if r.is_nan() {
                return 0x7fff;
            }
            if fmt == Fmt::Bf16 {
                return (r.to_bits() >> 16) as u16;
            }
            let b = round_to(f64::from(r), 0, Rnd::Rz, Fmt::F16) as u16;
            if f64::from(r).abs() > 65504.0 {
                (b & 0x8000) | 0x7c00
            } else {
                b
            }
        }
        _ => round_to(f64(f, v), 0, Rnd::Rn, fmt) as u16,
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The exception table of form `k` of [`HALF_FORMS`]: its (input, output) pairs' bytes.
fn half_exceptions(k: usize) -> &'static [u8] {
    let mut at = 0usize;
    for i in 0..=k {
        let count = u32_at(HALF_EXCEPTIONS, at).unwrap_or(0) as usize;
        if i == k {
            return HALF_EXCEPTIONS.get(at + 4..at + 4 + count * 4).unwrap_or(&[]);
        }
        at += 4 + count * 4;
    }
    &[]
}

/// `ex2.approx.f16`/`tanh.approx.f16`/`ex2.approx.ftz.bf16`/`tanh.approx.bf16` of one
/// 16-bit operand, as the GPU computes it for every input (model and exceptions); `None`
/// for another function or format.
pub fn half(f: Func, fmt: Fmt, x: u16) -> Option<u16> {
    let k = HALF_FORMS.iter().position(|&(g, h)| g == f && h == fmt)?;
    let pairs = half_exceptions(k);
    let (mut lo, mut hi) = (0usize, pairs.len() / 4);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match u16_at(pairs, mid * 4)?.cmp(&x) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return u16_at(pairs, mid * 4 + 2),
        }
    }
    Some(half_model(f, fmt, x))
}
