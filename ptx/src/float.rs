//! Floating point with PTX's rounding modes, exactly.
//!
//! Every f32/f16/bf16 result is computed as an f64 value `x` (round to nearest) together with
//! the sign of the exact error `v - x` (from error-free transformations: TwoSum, FMA
//! residuals), then rounded to the target format by integer arithmetic on the bits
//! ([`round_to`]). f64 results in a directed mode adjust the round-to-nearest result by
//! one ulp in the direction the error's sign demands ([`directed_f64`]).

/// A rounding mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    /// To nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward minus infinity.
    Rm,
    /// Toward plus infinity.
    Rp,
}

/// A floating point format narrower than f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    /// binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// binary32.
    F32,
}

impl Fmt {
    fn ebits(self) -> u32 {
        match self {
            Fmt::F16 => 5,
            Fmt::Bf16 | Fmt::F32 => 8,
        }
    }
    fn mbits(self) -> u32 {
        match self {
            Fmt::F16 => 10,
            Fmt::Bf16 => 7,
            Fmt::F32 => 23,
        }
    }
    /// The canonical NaN PTX produces.
    pub fn nan(self) -> u64 {
        match self {
            Fmt::F16 | Fmt::Bf16 => 0x7fff,
            Fmt::F32 => 0x7fff_ffff,
        }
    }
    /// The value of the bits `b` in this format, exactly, as f64.
    pub fn to_f64(self, b: u64) -> f64 {
        match self {
            Fmt::F32 => f64::from(f32::from_bits(b as u32)),
            Fmt::Bf16 => f64::from(f32::from_bits(((b as u32) & 0xffff) << 16)),
            Fmt::F16 => {
                let b = b & 0xffff;
                let s = if b & 0x8000 != 0 { -1.0 } else { 1.0 };
                let e = ((b >> 10) & 0x1f) as i32;
                let m = (b & 0x3ff) as f64;
                if e == 0x1f {
                    if m == 0.0 {
                        s * f64::INFINITY
                    } else {
                        f64::NAN
                    }
                } else if e == 0 {
                    s * m * 2f64.powi(-24)
                } else {
                    s * (1024.0 + m) * 2f64.powi(e - 25)
                }
            }
        }
    }
    pub(crate) fn sign_bit(self) -> u64 {
        1 << (self.ebits() + self.mbits())
    }
    /// Whether `b` is a subnormal of this format.
    pub fn is_subnormal(self, b: u64) -> bool {
        let exp = (b >> self.mbits()) & ((1 << self.ebits()) - 1);
        exp == 0 && b & ((1 << self.mbits()) - 1) != 0
    }
    /// `b` with subnormals flushed to zero of the same sign.
    pub fn ftz(self, b: u64) -> u64 {
        if self.is_subnormal(b) {
            b & self.sign_bit()
        } else {
            b
        }
    }
}

/// The exact sum `a + b` as `(s, e)`: `s` rounded to nearest, `s + e` exact (TwoSum).
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

fn sign_of(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Rounds the exact value `x + (a tiny amount of sign rest)` to `fmt` in mode `rnd`, where
/// `x` is f64 and `|rest| < ulp(x)/2` (`rest` is only a sign: -1, 0, 1).
pub fn round_to(x: f64, rest: i32, rnd: Rnd, fmt: Fmt) -> u64 {
    let (eb, mb) = (fmt.ebits(), fmt.mbits());
    let sign = if x.is_sign_negative() { fmt.sign_bit() } else { 0 };
    if x.is_nan() {
        return fmt.nan();
    }
    let inf = ((1u64 << eb) - 1) << mb;
    if x.is_infinite() {
        return sign | inf;
    }
    if x == 0.0 {
        // An exact zero (the callers never pass a non-zero rest with a zero x).
        return sign;
    }
    // Work on the magnitude: a rest below the magnitude becomes next_down(|x|) + sticky.
    let mut ax = x.abs();
    let mut sticky = rest != 0;
    let rest_mag = if x < 0.0 { -rest } else { rest };
    if rest_mag < 0 {
        ax = f64::from_bits(ax.to_bits() - 1);
    }
    let bits = ax.to_bits();
    let (m, e) = {
        let ef = (bits >> 52) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        if ef == 0 {
            (frac, -1074i64)
        } else {
            (frac | (1u64 << 52), ef - 1075)
        }
    };
    // |x| = m * 2^e. Target exponent of the last mantissa bit:
    let bias = (1i64 << (eb - 1)) - 1;
    let et_min = 1 - bias - mb as i64;
    let top = 63 - i64::from(m.leading_zeros()) + e; // floor(log2 |x|)
    let et = (top - mb as i64).max(et_min);
    let shift = et - e;
    let (mut q, rem, half) = if shift <= 0 {
        // More precision than needed cannot happen for these formats (x is f64): exact.
        (m << (-shift).min(63), 0u64, 1u64)
    } else if shift >= 64 {
        (0, 1, u64::MAX)
    } else {
        let s = shift as u32;
        (m >> s, m & ((1u64 << s) - 1), 1u64 << (s - 1))
    };
    if shift >= 64 {
        sticky = true;
    }
    let inexact = rem != 0 || sticky;
    let negative = sign != 0;
    let up = match rnd {
        Rnd::Rn => rem > half || (rem == half && (sticky || q & 1 == 1)),
        Rnd::Rz => false,
        Rnd::Rp => inexact && !negative,
        Rnd::Rm => inexact && negative,
    };
    if up {
        q += 1;
    }
    let enc = (((et - et_min) as u64) << mb) + q;
    if enc >= inf {
        let to_inf = match rnd {
            Rnd::Rn => true,
            Rnd::Rz => false,
            Rnd::Rp => !negative,
            Rnd::Rm => negative,
        };
        return sign | if to_inf { inf } else { inf - 1 };
    }
    sign | enc
}

fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// The f64 rounding in mode `rnd` of the exact `x + rest` (x rounded to nearest, `rest`
/// the sign of the error).
pub fn directed_f64(x: f64, rest: i32, rnd: Rnd) -> f64 {
    if rest == 0 || x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        // Overflowed to nearest: directed modes give the largest finite value instead.
        let toward_zero = match rnd {
            Rnd::Rn => false,
            Rnd::Rz => true,
            Rnd::Rp => x < 0.0,
            Rnd::Rm => x > 0.0,
        };
        return if toward_zero { x.signum() * f64::MAX } else { x };
    }
    match rnd {
        Rnd::Rn => x,
        Rnd::Rp => {
            if rest > 0 {
                next_up(x)
            } else {
                x
            }
        }
        Rnd::Rm => {
            if rest < 0 {
                next_down(x)
            } else {
                x
            }
        }
        Rnd::Rz => {
            if x > 0.0 && rest < 0 {
                next_down(x)
            } else if x < 0.0 && rest > 0 {
                next_up(x)
            } else {
                x
            }
        }
    }
}

/// Overflow of an f64 result: rounding to nearest may give infinity where a directed mode
/// gives the largest finite value; detect it from the operands being finite.
fn fix_overflow(x: f64, finite_inputs: bool, rnd: Rnd) -> f64 {
    if x.is_infinite() && finite_inputs {
        directed_f64(x, if x > 0.0 { 1 } else { -1 }, rnd)
    } else {
        x
    }
}

/// An exact value as (x, rest).
type Exact = (f64, i32);

/// A finite nonzero f64 as `m * 2^e` with `m` in [2^52, 2^53) (subnormals normalised).
fn split(x: f64) -> (u128, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = u128::from(bits & ((1u64 << 52) - 1));
    let (mut m, mut e) = if exp == 0 { (mant, -1074) } else { (mant | (1u128 << 52), exp - 1075) };
    while m != 0 && m < (1u128 << 52) {
        m <<= 1;
        e -= 1;
    }
    (m, e)
}

/// The f64 nearest in mode `rnd` to `sign * (m + sticky) * 2^e`, where `sticky` means a
/// nonzero fraction below the last bit of `m` (`m` nonzero). Exact for results in the
/// subnormal range, where stepping one ulp from the round-to-nearest result is not.
fn round_exact(negative: bool, m: u128, e: i32, sticky: bool, rnd: Rnd) -> f64 {
    let top = 127 - m.leading_zeros() as i32 + e; // exponent of the leading bit
    if top > 1023 {
        // Overflow: infinity where the mode rounds away from zero, else the largest finite.
        let away = match rnd {
            Rnd::Rn => true,
            Rnd::Rz => false,
            Rnd::Rp => !negative,
            Rnd::Rm => negative,
        };
        let v = if away { f64::INFINITY } else { f64::MAX };
        return if negative { -v } else { v };
    }
    let quantum = (top - 52).max(-1074);
    let shift = quantum - e;
    // The kept bits, and where the dropped ones lie against half a quantum.
    let (q, inexact, above_half, at_half) = if shift <= 0 {
        (m << (-shift).min(74), sticky, false, false)
    } else if shift > 127 {
        (0, true, false, false)
    } else {
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        (m >> shift, rem != 0 || sticky, rem > half || (rem == half && sticky), rem == half && !sticky)
    };
    let up = match rnd {
        Rnd::Rn => above_half || (at_half && q & 1 == 1),
        Rnd::Rz => false,
        Rnd::Rp => inexact && !negative,
        Rnd::Rm => inexact && negative,
    };
    let q = q + u128::from(up);
    let p2 = if quantum >= -1022 {
        f64::from_bits(((quantum + 1023).clamp(1, 2046) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (quantum + 1074).clamp(0, 51))
    };
    let v = q as f64 * p2;
    if negative {
        -v
    } else {
        v
    }
}

/// `a * b + c` in a directed mode, exactly, in integers (see [`exact_mul_div`]); `None` for
/// zeros, infinities, NaNs and an exact zero sum.
fn exact_fma(a: f64, b: f64, c: f64, rnd: Rnd) -> Option<f64> {
    if !a.is_finite() || !b.is_finite() || !c.is_finite() || a == 0.0 || b == 0.0 {
        return None;
    }
    let ((ma, ea), (mb, eb)) = (split(a), split(b));
    let (p, ep, pneg) = (ma * mb, ea + eb, (a < 0.0) != (b < 0.0));
    if c == 0.0 {
        return Some(round_exact(pneg, p, ep, false, rnd));
    }
    let (mc, ec) = split(c);
    let cneg = c < 0.0;
    // Align both terms at exponent e; a term shifted right leaves its dropped bits as sticky.
    let align = |m: u128, from: i32, to: i32| -> (u128, bool) {
        if from >= to {
            (m << (from - to), false)
        } else {
            let k = (to - from).min(127);
            let dropped = if k >= 127 { m } else { m & ((1u128 << k) - 1) };
            (if k >= 127 { 0 } else { m >> k }, dropped != 0)
        }
    };
    // p has at most 106 bits, c 53: keep the larger term's top at bit 126 at most.
    let e = if ep >= ec { ep - (ep - ec).min(20) } else { ec - (ec - ep).min(73) };
    let (pm, ps) = align(p, ep, e);
    let (cm, cs) = align(mc, ec, e);
    let sticky = ps || cs;
    if pneg == cneg {
        return Some(round_exact(pneg, pm + cm, e, sticky, rnd));
    }
    // Opposite signs: the larger minus the smaller; a sticky fraction belongs to the smaller
    // (only one term is ever shifted right), so borrow one from the kept difference.
    let (big, small, neg, small_sticky) =
        if pm > cm || (pm == cm && cs) { (pm, cm, pneg, cs) } else { (cm, pm, cneg, ps) };
    let diff = big - small;
    if diff == 0 {
        return None;
    }
    Some(if small_sticky { round_exact(neg, diff - 1, e, true, rnd) } else { round_exact(neg, diff, e, sticky, rnd) })
}

/// `a * b` or `a / b` in a directed mode, exactly, in integers (the residuals of
/// `mul_exact`/`div_exact` underflow for results or operands near the subnormal range);
/// `None` for zeros, infinities and NaNs.
fn exact_mul_div(op: FOp, a: f64, b: f64, rnd: Rnd) -> Option<f64> {
    if !a.is_finite() || !b.is_finite() || a == 0.0 || b == 0.0 {
        return None;
    }
    let negative = (a < 0.0) != (b < 0.0);
    let ((ma, ea), (mb, eb)) = (split(a), split(b));
    Some(match op {
        FOp::Mul => round_exact(negative, ma * mb, ea + eb, false, rnd),
        _ => {
            let n = ma << 74;
            let (q, r) = (n / mb, n % mb);
            round_exact(negative, q, ea - eb - 74, r != 0, rnd)
        }
    })
}

fn add_exact(a: f64, b: f64) -> Exact {
    let (s, e) = two_sum(a, b);
    if s.is_infinite() || s.is_nan() {
        return (s, 0);
    }
    (s, sign_of(e))
}

fn mul_exact(a: f64, b: f64) -> Exact {
    let p = a * b;
    if !p.is_finite() {
        return (p, 0);
    }
    let e = a.mul_add(b, -p);
    // Underflow: the residual is not exact below the subnormal range; the sign still is
    // when the product is not itself tiny.
    (p, sign_of(e))
}

fn fma_exact(a: f64, b: f64, c: f64) -> Exact {
    let r = a.mul_add(b, c);
    if !r.is_finite() {
        return (r, 0);
    }
    // v - r = (ph + pl + c) - r: sum the three terms with error-free transformations.
    let ph = a * b;
    if !ph.is_finite() {
        return (r, 0);
    }
    let pl = a.mul_add(b, -ph);
    let (s1, e1) = two_sum(ph, c);
    let (d, e2) = two_sum(s1, -r);
    let (t, e3) = two_sum(d, e1);
    let (u, e4) = two_sum(t, pl);
    let tail = e2 + e3 + e4;
    let rest = if u != 0.0 { sign_of(u) } else { sign_of(tail) };
    (r, rest)
}

fn div_exact(a: f64, b: f64) -> Exact {
    let q = a / b;
    if b.is_infinite() {
        return (q, 0); // x / inf is an exact zero
    }
    if !q.is_finite() || q == 0.0 && a != 0.0 {
        return (q, if q == 0.0 { sign_of(a) * sign_of(b) } else { 0 });
    }
    let r = (-q).mul_add(b, a); // a - q*b, exact
    (q, sign_of(r) * sign_of(b))
}

fn sqrt_exact(a: f64) -> Exact {
    let r = a.sqrt();
    if !r.is_finite() || r == 0.0 {
        return (r, 0);
    }
    let res = (-r).mul_add(r, a);
    (r, sign_of(res))
}

/// A binary operation of PTX's floating point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FOp {
    /// a + b
    Add,
    /// a - b
    Sub,
    /// a * b
    Mul,
    /// a / b
    Div,
}

/// `a op b` in a narrow format: operands and result are bits.
pub fn bin_narrow(op: FOp, a: u64, b: u64, rnd: Rnd, fmt: Fmt) -> u64 {
    if rnd == Rnd::Rn && fmt == Fmt::F32 {
        // The host's f32 arithmetic is IEEE round-to-nearest: only NaNs differ (canonical).
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        let r = match op {
            FOp::Add => x + y,
            FOp::Sub => x - y,
            FOp::Mul => x * y,
            FOp::Div => x / y,
        };
        return if r.is_nan() { fmt.nan() } else { u64::from(r.to_bits()) };
    }
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    let (r, rest) = match op {
        FOp::Add => add_exact(x, y),
        FOp::Sub => add_exact(x, -y),
        FOp::Mul => mul_exact(x, y),
        FOp::Div => div_exact(x, y),
    };
    let r = if rest == 0 { rm_zero(r, rnd, op, x, y) } else { r };
    round_to(r, rest, rnd, fmt)
}

/// `a * b + c` in a narrow format, rounded once.
pub fn fma_narrow(a: u64, b: u64, c: u64, rnd: Rnd, fmt: Fmt) -> u64 {
    if rnd == Rnd::Rn && fmt == Fmt::F32 {
        let r = f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32));
        return if r.is_nan() { fmt.nan() } else { u64::from(r.to_bits()) };
    }
    let (x, y, z) = (fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c));
    let p = x * y; // exact for f32 and narrower
    let (r, rest) = if p.is_finite() { add_exact(p, z) } else { (p + z, 0) };
    let r = if rest == 0 { rm_zero(r, rnd, FOp::Add, p, z) } else { r };
    round_to(r, rest, rnd, fmt)
}

/// `sqrt(a)` in a narrow format.
pub fn sqrt_narrow(a: u64, rnd: Rnd, fmt: Fmt) -> u64 {
    let (r, rest) = sqrt_exact(fmt.to_f64(a));
    round_to(r, rest, rnd, fmt)
}

/// `a op b` in f64.
pub fn bin_f64(op: FOp, a: f64, b: f64, rnd: Rnd) -> f64 {
    let pick = if op == FOp::Div { NanPick::First } else { NanPick::Last };
    let r = bin_f64_value(op, a, b, rnd);
    if r.is_nan() {
        return nan64(&[a, b], pick);
    }
    rm_zero(r, rnd, op, a, b)
}

/// Round-toward-minus-infinity's zero: an exact zero sum of operands that are not both +0
/// is -0 (IEEE 754; the host's round-to-nearest arithmetic gave +0).
fn rm_zero(r: f64, rnd: Rnd, op: FOp, a: f64, b: f64) -> f64 {
    let b = if op == FOp::Sub { -b } else { b };
    let both_pos_zero = a == 0.0 && b == 0.0 && a.is_sign_positive() && b.is_sign_positive();
    if rnd == Rnd::Rm && r == 0.0 && matches!(op, FOp::Add | FOp::Sub) && !both_pos_zero {
        -0.0
    } else {
        r
    }
}

fn bin_f64_value(op: FOp, a: f64, b: f64, rnd: Rnd) -> f64 {
    if rnd == Rnd::Rn {
        let r = match op {
            FOp::Add => a + b,
            FOp::Sub => a - b,
            FOp::Mul => a * b,
            FOp::Div => a / b,
        };
        return canon64(r);
    }
    if matches!(op, FOp::Mul | FOp::Div) {
        if let Some(r) = exact_mul_div(op, a, b, rnd) {
            return r;
        }
    }
    let (r, rest) = match op {
        FOp::Add => add_exact(a, b),
        FOp::Sub => add_exact(a, -b),
        FOp::Mul => mul_exact(a, b),
        FOp::Div => div_exact(a, b),
    };
    let finite = a.is_finite() && b.is_finite() && !(op == FOp::Div && b == 0.0);
    canon64(fix_overflow(directed_f64(r, rest, rnd), finite, rnd))
}

/// `a * b + c` in f64, rounded once.
pub fn fma_f64(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    let r = fma_f64_value(a, b, c, rnd);
    if r.is_nan() {
        // The GPU passes on b's NaN first, then c's, then a's.
        return nan64(&[b, c, a], NanPick::First);
    }
    // Round-down's exact zero (not a tiny result that rounded to zero) is -0; a * b keeps
    // the product's sign when it is zero.
    if rnd == Rnd::Rm && r == 0.0 {
        let exact_zero = if a == 0.0 || b == 0.0 { c == 0.0 } else { exact_fma(a, b, c, Rnd::Rn).is_none() };
        if exact_zero {
            return rm_zero(r, rnd, FOp::Add, a * b, c);
        }
    }
    r
}

fn fma_f64_value(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    if rnd == Rnd::Rn {
        return canon64(a.mul_add(b, c));
    }
    if let Some(r) = exact_fma(a, b, c, rnd) {
        return r;
    }
    let (r, rest) = fma_exact(a, b, c);
    let finite = a.is_finite() && b.is_finite() && c.is_finite();
    canon64(fix_overflow(directed_f64(r, rest, rnd), finite, rnd))
}

/// `sqrt(a)` in f64.
pub fn sqrt_f64(a: f64, rnd: Rnd) -> f64 {
    // A subnormal operand scaled by 2^106 (the root by 2^53, exactly): its residual is exact.
    let (r, rest) = if a.is_subnormal() {
        let (r, rest) = sqrt_exact(a * f64::from_bits(0x4690_0000_0000_0000));
        (r * f64::from_bits(0x3ca0_0000_0000_0000), rest)
    } else {
        sqrt_exact(a)
    };
    let r = directed_f64(r, rest, rnd);
    if r.is_nan() {
        return nan64(&[a], NanPick::First);
    }
    r
}

/// PTX's canonical f64 NaN.
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// The f64 NaN the GPU's f64 unit makes of an invalid operation (0 * inf, inf - inf,
/// sqrt(-1), 0 / 0): negative, quiet, no payload.
pub const DEFAULT_NAN64: u64 = 0xfff8_0000_0000_0000;

/// The quiet bit of an f64 NaN.
pub const QUIET64: u64 = 0x0008_0000_0000_0000;

/// Which NaN operand an f64 operation passes on when several are NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanPick {
    /// The first NaN operand (div, a software sequence on the GPU; fma with its operands
    /// given in the order b, c, a).
    First,
    /// The last NaN operand (add, sub, mul, min, max).
    Last,
}

/// The result of an f64 operation whose exact result is NaN, as the GPU's f64 unit gives
/// it (the instruction suite's recording): the picked NaN operand, quieted, sign and
/// payload kept; with no NaN operand (an invalid operation) [`DEFAULT_NAN64`].
pub fn nan64(ops: &[f64], pick: NanPick) -> f64 {
    let mut nans = ops.iter().filter(|x| x.is_nan());
    let chosen = match pick {
        NanPick::First => nans.next(),
        NanPick::Last => nans.next_back(),
    };
    f64::from_bits(chosen.map_or(DEFAULT_NAN64, |x| x.to_bits() | QUIET64))
}

fn canon64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(NAN64)
    } else {
        x
    }
}

/// An f64 value rounded to a narrow format (cvt).
pub fn from_f64(x: f64, rnd: Rnd, fmt: Fmt) -> u64 {
    round_to(x, 0, rnd, fmt)
}

/// A signed or unsigned integer (as i128) converted to a narrow format.
pub fn int_to_narrow(v: i128, rnd: Rnd, fmt: Fmt) -> u64 {
    let x = v as f64;
    let back = if x.is_finite() && x.abs() < 1.7e38 { x as i128 } else { v };
    let rest = (v - back).signum() as i32;
    round_to(x, rest, rnd, fmt)
}

/// An integer converted to f64 in mode `rnd`.
pub fn int_to_f64(v: i128, rnd: Rnd) -> f64 {
    let x = v as f64;
    let rest = (v - x as i128).signum() as i32;
    directed_f64(x, rest, rnd)
}

/// Rounds `x` to an integral value (cvt's .rni/.rzi/.rmi/.rpi).
pub fn round_integral(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rn => x.round_ties_even(),
        Rnd::Rz => x.trunc(),
        Rnd::Rm => x.floor(),
        Rnd::Rp => x.ceil(),
    }
}

/// A float converted to an integer of `bits` bits, signed or not: rounded in mode `rnd`,
/// saturated to the type's range, NaN to 0 (as cvt does).
pub fn float_to_int(x: f64, rnd: Rnd, bits: u32, signed: bool) -> u64 {
    let bits = bits.clamp(1, 64);
    if x.is_nan() {
        return 0;
    }
    let r = round_integral(x, rnd);
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    if signed {
        let max = (1i128 << (bits - 1)) - 1;
        let min = -(1i128 << (bits - 1));
        let v = if r >= max as f64 {
            max
        } else if r <= min as f64 {
            min
        } else {
            r as i128
        };
        (v as u64) & mask
    } else {
        let max = (1u128 << bits) - 1;
        let v = if r <= 0.0 {
            0
        } else if r >= max as f64 {
            max
        } else {
            r as u128
        };
        (v as u64) & mask
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod exact_tests {
    use super::{exact_fma, exact_mul_div, FOp, Rnd};

    /// Pseudo-random f64 bit patterns spread over every exponent, subnormals included.
    fn values(n: usize) -> Vec<f64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                f64::from_bits(x)
            })
            .filter(|v| v.is_finite())
            .collect()
    }

    fn next_up(x: f64) -> f64 {
        super::next_up(x)
    }

    #[test]
    fn integer_rounding_to_nearest_is_the_hosts() {
        let v = values(3000);
        for w in v.windows(3) {
            let (a, b, c) = (w[0], w[1], w[2]);
            if let Some(r) = exact_mul_div(FOp::Mul, a, b, Rnd::Rn) {
                assert_eq!(r.to_bits(), (a * b).to_bits(), "{a:e} * {b:e}");
            }
            if let Some(r) = exact_mul_div(FOp::Div, a, b, Rnd::Rn) {
                assert_eq!(r.to_bits(), (a / b).to_bits(), "{a:e} / {b:e}");
            }
            // Products near c's size, so that the sum's cancellation is exercised.
            let c2 = -(a * b) * 0.75;
            for c in [c, c2, c2 * (1.0 + f64::EPSILON)] {
                if let Some(r) = exact_fma(a, b, c, Rnd::Rn) {
                    assert_eq!(r.to_bits(), a.mul_add(b, c).to_bits(), "fma({a:e}, {b:e}, {c:e})");
                }
            }
        }
    }

    #[test]
    fn directed_modes_bracket_the_nearest() {
        let v = values(3000);
        for w in v.windows(2) {
            let (a, b) = (w[0], w[1] * 1e-300);
            let (Some(rm), Some(rp), Some(rz), Some(rn)) = (
                exact_fma(a, b, 1e-310, Rnd::Rm),
                exact_fma(a, b, 1e-310, Rnd::Rp),
                exact_fma(a, b, 1e-310, Rnd::Rz),
                exact_fma(a, b, 1e-310, Rnd::Rn),
            ) else {
                continue;
            };
            assert!(rm <= rn && rn <= rp, "fma({a:e}, {b:e}): {rm:e} {rn:e} {rp:e}");
            assert!(rm == rp || next_up(rm) == rp, "fma({a:e}, {b:e}): {rm:e} {rp:e} more than an ulp apart");
            assert_eq!(rz, if rn < 0.0 { rp } else { rm }, "fma({a:e}, {b:e}) toward zero");
        }
    }
}
