//! Integer and f32 lane operations that both executors run: the interpreter
//! (`exec.rs`) and the compiled steps (`compiled.rs`) call these, so an instruction's
//! semantics are written once.

use crate::float::FOp;
use crate::module::{Cmp, Sp, Ty, K};
use crate::windows::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};

/// The low `bits` bits set.
#[inline]
pub(crate) fn mask_of(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `v`'s low `bits` bits, sign-extended.
#[inline]
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 || bits == 0 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

/// A loaded `bits`-bit value as its register holds it: sign-extended when `signed`.
#[inline(always)]
pub(crate) fn loaded(v: u64, bits: u32, signed: bool) -> u64 {
    if signed {
        sext(v, bits) as u64
    } else {
        v
    }
}

/// The full product of `a` and `b` as `bits`-bit integers (`mul.wide`).
#[inline]
pub(crate) fn mul_wide(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    if signed {
        (i128::from(sext(a, bits)) * i128::from(sext(b, bits))) as u64
    } else {
        let mk = mask_of(bits);
        (u128::from(a & mk) * u128::from(b & mk)) as u64
    }
}

/// What an integer comparison asks of the order of its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntOrder {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `num`: true for integers.
    Always,
    /// `nan`: false for integers.
    Never,
}

/// How `cmp` compares integers of type `ty`: whether as signed values (a signed type,
/// unless the comparison is one of the unsigned `lo`, `ls`, `hi`, `hs`), and the order it
/// asks for.
#[inline]
pub(crate) fn int_comparison(ty: Ty, cmp: Cmp) -> (bool, IntOrder) {
    let signed = ty.k == K::S && !matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
    let order = match cmp {
        Cmp::Eq | Cmp::Equ => IntOrder::Eq,
        Cmp::Ne | Cmp::Neu => IntOrder::Ne,
        Cmp::Lt | Cmp::Lo | Cmp::Ltu => IntOrder::Lt,
        Cmp::Le | Cmp::Ls | Cmp::Leu => IntOrder::Le,
        Cmp::Gt | Cmp::Hi | Cmp::Gtu => IntOrder::Gt,
        Cmp::Ge | Cmp::Hs | Cmp::Geu => IntOrder::Ge,
        Cmp::Num => IntOrder::Always,
        Cmp::Nan => IntOrder::Never,
    };
    (signed, order)
}

/// The values of `a` and `b` (`bits`-bit integers) in an order that compares as asked:
/// sign-extended and offset into unsigned order when `signed`, else masked.
#[inline(always)]
pub(crate) fn int_keys(a: u64, b: u64, bits: u32, signed: bool) -> (u64, u64) {
    if signed {
        let flip = |v: u64| (sext(v, bits) as u64) ^ (1 << 63);
        (flip(a), flip(b))
    } else {
        let mk = mask_of(bits);
        (a & mk, b & mk)
    }
}

/// Whether keys `x` and `y` ([`int_keys`]) stand in `order`.
#[inline(always)]
pub(crate) fn in_order(order: IntOrder, x: u64, y: u64) -> bool {
    match order {
        IntOrder::Eq => x == y,
        IntOrder::Ne => x != y,
        IntOrder::Lt => x < y,
        IntOrder::Le => x <= y,
        IntOrder::Gt => x > y,
        IntOrder::Ge => x >= y,
        IntOrder::Always => true,
        IntOrder::Never => false,
    }
}

/// `cmp` of `a` and `b` as integers of type `ty` (`setp`, `set`, `slct`).
#[inline]
pub(crate) fn compare_int(ty: Ty, cmp: Cmp, a: u64, b: u64) -> bool {
    let bits = ty.bits.max(1);
    let (signed, order) = int_comparison(ty, cmp);
    let (x, y) = int_keys(a, b, bits, signed);
    in_order(order, x, y)
}

/// `shl` of a `bits`-bit value: counts of `bits` or more give 0.
#[inline]
pub(crate) fn shl(a: u64, b: u64, bits: u32) -> u64 {
    let s = b & 0xffff_ffff;
    if s >= u64::from(bits) {
        0
    } else {
        (a << s) & mask_of(bits)
    }
}

/// `shr` of a `bits`-bit value: arithmetic when `signed` (counts past the width give the
/// sign), else logical (counts of `bits` or more give 0).
#[inline]
pub(crate) fn shr(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    let mk = mask_of(bits);
    let s = (b & 0xffff_ffff).min(u64::from(bits));
    if signed {
        let v = sext(a, bits);
        ((if s >= 64 { v >> 63 } else { v >> s.min(63) }) as u64) & mk
    } else if s >= u64::from(bits) {
        0
    } else {
        ((a & mk) >> s) & mk
    }
}

/// f32 `add`, `sub` or `mul` (`op`; any other is `mul`) rounded to nearest, no flushing:
/// the host's IEEE arithmetic, a NaN result made canonical.
#[inline]
pub(crate) fn f32_rn(op: FOp, a: u64, b: u64) -> u64 {
    let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
    let r = match op {
        FOp::Add => x + y,
        FOp::Sub => x - y,
        _ => x * y,
    };
    if r.is_nan() {
        0x7fff_ffff
    } else {
        u64::from(r.to_bits())
    }
}

/// The generic-address window of state space `sp` (`cvta`); 0 for global memory, whose
/// addresses are generic ones.
#[inline]
pub(crate) fn cvta_window(sp: Sp) -> u64 {
    match sp {
        Sp::Shared => SHARED_WINDOW,
        Sp::Local => LOCAL_WINDOW,
        Sp::Param => PARAM_WINDOW,
        _ => 0,
    }
}

/// `cvta` of `a` with the space's `window`: to the space's own addresses (`to`) or to
/// generic ones, as `mk`-wide values; unchanged for global memory.
#[inline(always)]
pub(crate) fn cvta(a: u64, window: u64, to: bool, mk: u64) -> u64 {
    if window == 0 {
        a
    } else if to {
        a.wrapping_sub(window) & mk
    } else {
        a.wrapping_add(window) & mk
    }
}
