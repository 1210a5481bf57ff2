//! The compiling executor's translation: an instruction becomes a [`Step`], a closure
//! specialised at a kernel's first launch for its operation, types and operands (the
//! native code rustc made for each specialisation, chosen once instead of decoded at each
//! run), that updates a warp's register rows for the lanes of a mask. An instruction with
//! no step (memory, control, warp, texture and the rarer arithmetic forms) is interpreted
//! (`exec.rs`): the executor falls back one instruction at a time, on the same registers.
//!
//! Each step computes through the lane functions of `alu.rs` (or `lanes::fma_f32`) that the
//! interpreter runs for the same form, so both give the same bits; the instruction suite
//! and the kernel corpora run through both (`tests/executors.rs`).

use crate::alu::{f32_rn, in_order, int_comparison, int_keys, mask_of, mul_wide, sext, shl, shr, IntOrder};
use crate::float::Rnd;
use std::cell::Cell;

use crate::lanes::{fma_f32, lanes, row, row_mut, Step, Steps, WARP};
use crate::module::{BoolOp, Func, Inst, MulMode, Op, Opd, K};

/// `f`'s instructions translated (each with a step or none).
pub(crate) fn compile(f: &Func) -> Steps {
    Steps(f.code.iter().map(step).collect())
}

/// A source operand of a step: a register's row or an immediate.
#[derive(Clone, Copy)]
enum Src {
    Reg(u32),
    Imm(u64),
}

impl Src {
    fn of(o: Option<&Opd>) -> Option<Src> {
        match o? {
            Opd::Reg(r) => Some(Src::Reg(*r)),
            Opd::Imm(v) => Some(Src::Imm(*v)),
            _ => None,
        }
    }
}

/// A source as a step reads it, specialised: a register's row, read in place (the frame's
/// registers as cells: a lane's result depends on that lane's operands only, so a step
/// that writes a row it reads reads each lane before it writes it, as the interpreter's
/// copy would give), or an immediate.
trait Lanes: Copy + Send + Sync + 'static {
    type Ref<'r>: Copy;
    fn get(self, regs: &[Cell<u64>]) -> Option<Self::Ref<'_>>;
    fn lane(v: Self::Ref<'_>, l: usize) -> u64;
}

#[derive(Clone, Copy)]
struct RegLanes(u32);

impl Lanes for RegLanes {
    type Ref<'r> = &'r [Cell<u64>; WARP];
    #[inline(always)]
    fn get(self, regs: &[Cell<u64>]) -> Option<&[Cell<u64>; WARP]> {
        row_cells(regs, self.0)
    }
    #[inline(always)]
    fn lane(v: &[Cell<u64>; WARP], l: usize) -> u64 {
        v.get(l).map_or(0, Cell::get)
    }
}

#[derive(Clone, Copy)]
struct ImmLanes(u64);

impl Lanes for ImmLanes {
    type Ref<'r> = u64;
    #[inline(always)]
    fn get(self, _: &[Cell<u64>]) -> Option<u64> {
        Some(self.0)
    }
    #[inline(always)]
    fn lane(v: u64, _: usize) -> u64 {
        v
    }
}

/// Register `r`'s row of cells.
#[inline(always)]
fn row_cells(regs: &[Cell<u64>], r: u32) -> Option<&[Cell<u64>; WARP]> {
    let start = r as usize * WARP;
    regs.get(start..start + WARP)?.try_into().ok()
}

/// Sets the lanes of `mask` of register `d` to `f` of the lane index (a full mask in one
/// loop, which vectorises). A register outside the frame (a step is made only for
/// registers the function declares, so never) is left alone.
#[inline(always)]
fn put(regs: &[Cell<u64>], d: u32, mask: u32, f: impl Fn(usize) -> u64) {
    let Some(out) = row_cells(regs, d) else { return };
    if mask == u32::MAX {
        for (l, o) in out.iter().enumerate() {
            o.set(f(l));
        }
    } else {
        for l in lanes(mask) {
            if let Some(o) = out.get(l) {
                o.set(f(l));
            }
        }
    }
}

fn unary_with<A: Lanes>(d: u32, a: A, f: impl Fn(u64) -> u64 + Send + Sync + 'static) -> Step {
    std::sync::Arc::new(move |regs: &mut [u64], mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        let Some(x) = a.get(regs) else { return };
        put(regs, d, mask, |l| f(A::lane(x, l)));
    })
}

fn binary_with<A: Lanes, B: Lanes>(d: u32, a: A, b: B, f: impl Fn(u64, u64) -> u64 + Send + Sync + 'static) -> Step {
    std::sync::Arc::new(move |regs: &mut [u64], mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        let (Some(x), Some(y)) = (a.get(regs), b.get(regs)) else { return };
        put(regs, d, mask, |l| f(A::lane(x, l), B::lane(y, l)));
    })
}

fn ternary_with<A: Lanes, B: Lanes, C: Lanes>(
    d: u32,
    a: A,
    b: B,
    c: C,
    f: impl Fn(u64, u64, u64) -> u64 + Send + Sync + 'static,
) -> Step {
    std::sync::Arc::new(move |regs: &mut [u64], mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        let (Some(x), Some(y), Some(z)) = (a.get(regs), b.get(regs), c.get(regs)) else { return };
        put(regs, d, mask, |l| f(A::lane(x, l), B::lane(y, l), C::lane(z, l)));
    })
}

/// A step of one source, specialised for its kind.
fn unary(d: u32, a: Src, f: impl Fn(u64) -> u64 + Send + Sync + 'static) -> Step {
    match a {
        Src::Reg(r) => unary_with(d, RegLanes(r), f),
        Src::Imm(v) => unary_with(d, ImmLanes(v), f),
    }
}

/// A step of two sources, specialised for their kinds.
fn binary(d: u32, a: Src, b: Src, f: impl Fn(u64, u64) -> u64 + Send + Sync + 'static) -> Step {
    match (a, b) {
        (Src::Reg(a), Src::Reg(b)) => binary_with(d, RegLanes(a), RegLanes(b), f),
        (Src::Reg(a), Src::Imm(b)) => binary_with(d, RegLanes(a), ImmLanes(b), f),
        (Src::Imm(a), Src::Reg(b)) => binary_with(d, ImmLanes(a), RegLanes(b), f),
        (Src::Imm(a), Src::Imm(b)) => binary_with(d, ImmLanes(a), ImmLanes(b), f),
    }
}

/// A step of three sources, specialised for the kinds that compilers emit (a register
/// first); any other mix reads its immediates as broadcast rows.
fn ternary(d: u32, a: Src, b: Src, c: Src, f: impl Fn(u64, u64, u64) -> u64 + Send + Sync + 'static) -> Step {
    match (a, b, c) {
        (Src::Reg(a), Src::Reg(b), Src::Reg(c)) => ternary_with(d, RegLanes(a), RegLanes(b), RegLanes(c), f),
        (Src::Reg(a), Src::Reg(b), Src::Imm(c)) => ternary_with(d, RegLanes(a), RegLanes(b), ImmLanes(c), f),
        (Src::Reg(a), Src::Imm(b), Src::Reg(c)) => ternary_with(d, RegLanes(a), ImmLanes(b), RegLanes(c), f),
        (Src::Reg(a), Src::Imm(b), Src::Imm(c)) => ternary_with(d, RegLanes(a), ImmLanes(b), ImmLanes(c), f),
        (a, b, c) => {
            let imm = |s: Src| match s {
                Src::Imm(v) => v,
                Src::Reg(_) => 0,
            };
            match (a, b, c) {
                (Src::Imm(_), Src::Reg(b), Src::Reg(c)) => {
                    let a = imm(a);
                    ternary_with(d, RegLanes(b), RegLanes(c), ImmLanes(0), move |y, z, _| f(a, y, z))
                }
                (Src::Imm(_), Src::Reg(b), Src::Imm(_)) => {
                    let (a, c) = (imm(a), imm(c));
                    unary_with(d, RegLanes(b), move |y| f(a, y, c))
                }
                (Src::Imm(_), Src::Imm(_), Src::Reg(c)) => {
                    let (a, b) = (imm(a), imm(b));
                    unary_with(d, RegLanes(c), move |z| f(a, b, z))
                }
                _ => {
                    let (a, b, c) = (imm(a), imm(b), imm(c));
                    unary_with(d, ImmLanes(0), move |_| f(a, b, c))
                }
            }
        }
    }
}

/// The step of `inst`, if it has one: its destination a register, its sources registers or
/// immediates, and a form below.
fn step(inst: &Inst) -> Option<Step> {
    let ops = &inst.ops;
    let Some(Opd::Reg(d)) = ops.first() else { return None };
    let d = *d;
    let src = |k: usize| Src::of(ops.get(k));
    let ty = inst.ty;
    let bits = ty.bits;
    let mk = mask_of(bits);
    let signed = ty.k == K::S;
    let int = matches!(ty.k, K::U | K::S | K::B);
    let plain = !inst.cc && !inst.sat;
    let f32_rn_plain = ty.k == K::F && bits == 32 && inst.rnd == Rnd::Rn && !inst.ftz && !inst.sat;
    Some(match inst.op {
        Op::Mov if matches!(ops.get(1), Some(Opd::Reg(_) | Opd::Imm(_))) => {
            let mkp = if ty.k == K::Pred { 1 } else { mk };
            unary(d, src(1)?, move |a| a & mkp)
        }
        Op::Add | Op::Sub | Op::Mul(_) if f32_rn_plain => {
            let op = match inst.op {
                Op::Add => 0,
                Op::Sub => 1,
                _ => 2,
            };
            binary(d, src(1)?, src(2)?, move |a, b| f32_rn(op, a, b))
        }
        Op::Fma | Op::Mad(_) if f32_rn_plain && inst.neg == 0 => {
            let row_of = |s: Src| match s {
                Src::Reg(r) => (r, 0, false),
                Src::Imm(v) => (0, v, true),
            };
            let (a, b, c) = (row_of(src(1)?), row_of(src(2)?), row_of(src(3)?));
            let load = move |(r, v, imm): (u32, u64, bool), regs: &[u64]| {
                if imm {
                    [v; WARP]
                } else {
                    row(regs, r).copied().unwrap_or([0; WARP])
                }
            };
            std::sync::Arc::new(move |regs: &mut [u64], mask: u32| {
                let (x, y, z) = (load(a, regs), load(b, regs), load(c, regs));
                if let Some(out) = row_mut(regs, d) {
                    fma_f32(&x, &y, &z, mask, out);
                }
            })
        }
        // 32-bit forms in 32-bit arithmetic (the same bits as the 64-bit form masked, which
        // the interpreter computes; vectorised without 64-bit multiplies).
        Op::Add if int && plain && bits == 32 => {
            binary(d, src(1)?, src(2)?, |a, b| u64::from((a as u32).wrapping_add(b as u32)))
        }
        Op::Sub if int && plain && bits == 32 => {
            binary(d, src(1)?, src(2)?, |a, b| u64::from((a as u32).wrapping_sub(b as u32)))
        }
        Op::Mul(MulMode::Lo) if int && bits == 32 => {
            binary(d, src(1)?, src(2)?, |a, b| u64::from((a as u32).wrapping_mul(b as u32)))
        }
        Op::Mad(MulMode::Lo) if int && plain && bits == 32 => ternary(d, src(1)?, src(2)?, src(3)?, |a, b, c| {
            u64::from((a as u32).wrapping_mul(b as u32).wrapping_add(c as u32))
        }),
        Op::Add if int && plain => binary(d, src(1)?, src(2)?, move |a, b| a.wrapping_add(b) & mk),
        Op::Sub if int && plain => binary(d, src(1)?, src(2)?, move |a, b| a.wrapping_sub(b) & mk),
        Op::Mul(MulMode::Lo) if int => binary(d, src(1)?, src(2)?, move |a, b| a.wrapping_mul(b) & mk),
        Op::Mul(MulMode::Wide) if int => binary(d, src(1)?, src(2)?, move |a, b| mul_wide(a, b, bits, signed)),
        Op::Mad(MulMode::Lo) if int && plain => {
            ternary(d, src(1)?, src(2)?, src(3)?, move |a, b, c| a.wrapping_mul(b).wrapping_add(c) & mk)
        }
        Op::Mad(MulMode::Wide) if int && plain => {
            let mk2 = mask_of(bits * 2);
            ternary(d, src(1)?, src(2)?, src(3)?, move |a, b, c| mul_wide(a, b, bits, signed).wrapping_add(c) & mk2)
        }
        Op::And | Op::Or | Op::Xor => {
            let m = if ty.k == K::Pred { 1 } else { mk };
            match inst.op {
                Op::And => binary(d, src(1)?, src(2)?, move |a, b| a & b & m),
                Op::Or => binary(d, src(1)?, src(2)?, move |a, b| (a | b) & m),
                _ => binary(d, src(1)?, src(2)?, move |a, b| (a ^ b) & m),
            }
        }
        // A count given as an immediate below the width: the shift itself (what `shl` and
        // `shr` compute for such a count).
        Op::Shl if int => match src(2)? {
            Src::Imm(n) if n < u64::from(bits) => unary(d, src(1)?, move |a| (a << n) & mk),
            b => binary(d, src(1)?, b, move |a, b| shl(a, b, bits)),
        },
        Op::Shr if int => match src(2)? {
            Src::Imm(n) if n < u64::from(bits) && signed => {
                unary(d, src(1)?, move |a| ((sext(a, bits) >> n) as u64) & mk)
            }
            Src::Imm(n) if n < u64::from(bits) => unary(d, src(1)?, move |a| (a & mk) >> n),
            b => binary(d, src(1)?, b, move |a, b| shr(a, b, bits, signed)),
        },
        Op::Setp if int && inst.bop == BoolOp::None => {
            let (cmp_signed, order) = int_comparison(ty, inst.cmp);
            let bits = bits.max(1);
            let (a, b) = (src(1)?, src(2)?);
            macro_rules! by_order {
                ($($o:ident)*) => {
                    match order {
                        $(IntOrder::$o => binary(d, a, b, move |a, b| {
                            let (x, y) = int_keys(a, b, bits, cmp_signed);
                            u64::from(in_order(IntOrder::$o, x, y))
                        }),)*
                    }
                };
            }
            by_order!(Eq Ne Lt Le Gt Ge Always Never)
        }
        _ => return None,
    })
}
