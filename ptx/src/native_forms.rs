//! The instructions a run of machine code is made of (`native.rs`): each fused form
//! ([`Calc`]) mirrors the step `compiled.rs` makes of the same instruction ([`Pure::of`]
//! holds the same conditions, in the same order), and a [`Run`] is a run of them with what
//! its code stores.

use std::collections::BTreeSet;

use crate::alu::{cvta_window, int_comparison, mask_of, IntOrder};
use crate::float::{FOp, Rnd};
use crate::lanes::{Checked, WARP};
use crate::module::{Base, BoolOp, Inst, MulMode, Negated, Op, Opd, Sp, Sreg, K};
use crate::windows::FPARAM_TAG;

/// A source of a fused instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Src {
    Reg(u32),
    Imm(u64),
}

/// What a fused instruction computes (the bits `compiled.rs`'s step of the same arm
/// computes; `m` is the result's mask).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Calc {
    Mov {
        a: Src,
        m: u64,
    },
    Add {
        a: Src,
        b: Src,
        m: u64,
    },
    Sub {
        a: Src,
        b: Src,
        m: u64,
    },
    MulLo {
        a: Src,
        b: Src,
        m: u64,
    },
    MulWide {
        a: Src,
        b: Src,
        bits: u32,
        signed: bool,
    },
    MadLo {
        a: Src,
        b: Src,
        c: Src,
        m: u64,
    },
    MadWide {
        a: Src,
        b: Src,
        c: Src,
        bits: u32,
        signed: bool,
        m: u64,
    },
    And {
        a: Src,
        b: Src,
        m: u64,
    },
    Or {
        a: Src,
        b: Src,
        m: u64,
    },
    Xor {
        a: Src,
        b: Src,
        m: u64,
    },
    ShlImm {
        a: Src,
        n: u8,
        m: u64,
    },
    ShrImm {
        a: Src,
        n: u8,
        bits: u32,
        signed: bool,
        m: u64,
    },
    Setp {
        a: Src,
        b: Src,
        bits: u32,
        signed: bool,
        order: IntOrder,
    },
    /// f32 add, sub or mul rounded to nearest, a NaN made canonical (`alu::f32_rn`).
    F32 {
        op: FOp,
        a: Src,
        b: Src,
    },
    /// `fma.rn.f32`, a NaN made canonical (`lanes::fma_f32`).
    Fma32 {
        a: Src,
        b: Src,
        c: Src,
    },
    /// A scalar shared load of `n` bytes at register `base` plus `off`, sign-extended from
    /// `bits` when `signed` (`alu::loaded`). Its address is checked for every lane before
    /// the turn starts (`build`), so its base is never written earlier in the run.
    LdShared {
        base: u32,
        off: u64,
        n: u8,
        bits: u32,
        signed: bool,
    },
    /// A scalar global load of `n` bytes at register `base` plus `off`, as
    /// [`Calc::LdShared`]: every lane's address is checked before the code runs (inside one
    /// allocation of the memory's [`Windows`](crate::Windows), aligned), and the code reads
    /// the host bytes there.
    LdGlobal {
        base: u32,
        off: u64,
        n: u8,
        bits: u32,
        signed: bool,
    },
    /// A scalar global store of the low `n` bytes of `value` at register `base` plus `off`
    /// (no destination), checked as [`Calc::LdGlobal`] is; its bytes meet no other global
    /// access of the run (checked too), so that lane after lane stores what instruction
    /// after instruction would.
    StGlobal {
        base: u32,
        off: u64,
        n: u8,
        value: Src,
    },
    /// `cvta` (`alu::cvta`): `a` moved by `window` (none: `a` itself), masked.
    Cvta {
        a: Src,
        window: u64,
        to: bool,
        m: u64,
    },
    /// `mov` of `%tid` dimension `k` (below 3): each lane's own.
    Tid {
        k: u8,
        m: u64,
    },
    /// `mov` of a launch-wide special register: `LaunchView::dims[i]`, or `default` past
    /// the third dimension.
    Dim {
        i: Option<u8>,
        default: u32,
        m: u64,
    },
    /// A scalar `ld.param` of the kernel's parameters at `addr` (checked against their
    /// length before the code runs).
    LdParam {
        addr: u64,
        n: u8,
        bits: u32,
        signed: bool,
    },
}

/// One fused instruction: its destination register and what it computes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pure {
    /// None for a store.
    pub(crate) d: Option<u32>,
    pub(crate) calc: Calc,
    /// A load or store whose base register the run writes before it (its addresses are
    /// computed before the run, [`AddressFn`](crate::lanes::AddressFn), and checked).
    pub(crate) computed: bool,
}

impl Pure {
    /// `inst` as a fused instruction, if `compiled.rs` gives it a step of one of the arms
    /// fused here (the same conditions, in the same order).
    pub(crate) fn of(inst: &Inst) -> Option<Pure> {
        if inst.guard.is_some() {
            return None;
        }
        let ops = &inst.ops;
        if let Some(store) = Pure::global_store(inst) {
            return Some(store);
        }
        let Some(Opd::Reg(d)) = ops.first() else { return None };
        let src = |k: usize| match ops.get(k)? {
            Opd::Reg(r) => Some(Src::Reg(*r)),
            Opd::Imm(v) => Some(Src::Imm(*v)),
            _ => None,
        };
        let ty = inst.ty;
        let bits = ty.bits;
        let m = mask_of(bits);
        let signed = ty.k == K::S;
        let int = matches!(ty.k, K::U | K::S | K::B);
        let plain = !inst.cc && !inst.sat;
        let f32_rn_plain = ty.k == K::F && bits == 32 && inst.rnd == Rnd::Rn && !inst.ftz && !inst.sat;
        let calc = match inst.op {
            // `compiled.rs` makes a shared-memory step of these before any arithmetic.
            Op::Ld if inst.sp == Sp::Shared && inst.vec == 1 && matches!(ty.bytes(), 1 | 2 | 4 | 8) => {
                match ops.get(1) {
                    Some(Opd::Addr(Base::Reg(base), off)) => {
                        Calc::LdShared { base: *base, off: *off as u64, n: ty.bytes() as u8, bits, signed }
                    }
                    _ => return None,
                }
            }
            Op::Ld if inst.sp == Sp::Param && inst.vec == 1 => match ops.get(1) {
                Some(Opd::Addr(Base::KParam(o), off)) => {
                    let addr = o.wrapping_add(*off as u64);
                    let n = ty.bytes().max(1);
                    if addr >= FPARAM_TAG || !matches!(n, 1 | 2 | 4 | 8) {
                        return None;
                    }
                    Calc::LdParam { addr, n: n as u8, bits, signed }
                }
                _ => return None,
            },
            // `compiled.rs`'s `Scalar::of` for the global space.
            Op::Ld if inst.sp == Sp::Global && inst.vec == 1 && matches!(ty.bytes().max(1), 1 | 2 | 4 | 8) => {
                match ops.get(1) {
                    Some(Opd::Addr(Base::Reg(base), off)) => {
                        Calc::LdGlobal { base: *base, off: *off as u64, n: ty.bytes().max(1) as u8, bits, signed }
                    }
                    _ => return None,
                }
            }
            Op::Ld | Op::St => return None,
            Op::Mov if matches!(ops.get(1), Some(Opd::Sreg(_))) => {
                let m = if ty.k == K::Pred { 1 } else { m };
                let dim = |base: u8, k: u8, default: u32| Calc::Dim { i: (k < 3).then_some(base + k), default, m };
                match ops.get(1) {
                    Some(Opd::Sreg(Sreg::Tid(k))) if *k < 3 => Calc::Tid { k: *k, m },
                    Some(Opd::Sreg(Sreg::Ctaid(k))) => dim(0, *k, 0),
                    Some(Opd::Sreg(Sreg::Ntid(k))) => dim(3, *k, 1),
                    Some(Opd::Sreg(Sreg::Nctaid(k))) => dim(6, *k, 1),
                    _ => return None,
                }
            }
            Op::Mov if matches!(ops.get(1), Some(Opd::Reg(_) | Opd::Imm(_))) => {
                Calc::Mov { a: src(1)?, m: if ty.k == K::Pred { 1 } else { m } }
            }
            Op::Add | Op::Sub | Op::Mul(_) if f32_rn_plain => {
                let op = match inst.op {
                    Op::Add => FOp::Add,
                    Op::Sub => FOp::Sub,
                    _ => FOp::Mul,
                };
                Calc::F32 { op, a: src(1)?, b: src(2)? }
            }
            Op::Fma | Op::Mad(_) if f32_rn_plain && inst.neg == Negated::Neither => {
                Calc::Fma32 { a: src(1)?, b: src(2)?, c: src(3)? }
            }
            Op::Cvta { to, sp } => Calc::Cvta { a: src(1)?, window: cvta_window(sp), to, m },
            Op::Add if int && plain => Calc::Add { a: src(1)?, b: src(2)?, m },
            Op::Sub if int && plain => Calc::Sub { a: src(1)?, b: src(2)?, m },
            Op::Mul(MulMode::Lo) if int => Calc::MulLo { a: src(1)?, b: src(2)?, m },
            Op::Mul(MulMode::Wide) if int => Calc::MulWide { a: src(1)?, b: src(2)?, bits, signed },
            Op::Mad(MulMode::Lo) if int && plain => Calc::MadLo { a: src(1)?, b: src(2)?, c: src(3)?, m },
            Op::Mad(MulMode::Wide) if int && plain => {
                Calc::MadWide { a: src(1)?, b: src(2)?, c: src(3)?, bits, signed, m: mask_of(bits * 2) }
            }
            Op::And | Op::Or | Op::Xor => {
                let m = if ty.k == K::Pred { 1 } else { m };
                let (a, b) = (src(1)?, src(2)?);
                match inst.op {
                    Op::And => Calc::And { a, b, m },
                    Op::Or => Calc::Or { a, b, m },
                    _ => Calc::Xor { a, b, m },
                }
            }
            Op::Shl if int => match src(2)? {
                Src::Imm(n) if n < u64::from(bits) => Calc::ShlImm { a: src(1)?, n: n as u8, m },
                _ => return None,
            },
            Op::Shr if int => match src(2)? {
                Src::Imm(n) if n < u64::from(bits) => Calc::ShrImm { a: src(1)?, n: n as u8, bits, signed, m },
                _ => return None,
            },
            Op::Setp if int && inst.bop == BoolOp::None => {
                let (signed, order) = int_comparison(ty, inst.cmp);
                Calc::Setp { a: src(1)?, b: src(2)?, bits: bits.max(1), signed, order }
            }
            _ => return None,
        };
        Some(Pure { d: Some(*d), calc, computed: false })
    }

    /// `inst` as a fused global store: a scalar `st.global` of a register or an immediate
    /// at `[register+offset]` (`compiled.rs`'s `Scalar::of`), unguarded.
    fn global_store(inst: &Inst) -> Option<Pure> {
        let n = inst.ty.bytes().max(1);
        if inst.op != Op::St || inst.sp != Sp::Global || inst.vec != 1 || !matches!(n, 1 | 2 | 4 | 8) {
            return None;
        }
        let Some(Opd::Addr(Base::Reg(base), off)) = inst.ops.first() else { return None };
        let value = match inst.ops.get(1)? {
            Opd::Reg(r) => Src::Reg(*r),
            Opd::Imm(v) => Src::Imm(*v),
            _ => return None,
        };
        let calc = Calc::StGlobal { base: *base, off: *off as u64, n: n as u8, value };
        Some(Pure { d: None, calc, computed: false })
    }

    /// The access whose every lane's address is checked before the code runs: a global
    /// one, or a shared load whose base the run computes (one at a base the run does not
    /// write is checked by the code itself).
    pub(crate) fn checked(&self) -> Option<Checked> {
        match self.calc {
            Calc::LdGlobal { n, .. } => Some(Checked { n, store: false, global: true }),
            Calc::StGlobal { n, .. } => Some(Checked { n, store: true, global: true }),
            Calc::LdShared { n, .. } if self.computed => Some(Checked { n, store: false, global: false }),
            _ => None,
        }
    }

    /// The base register and offset of a load or store.
    pub(crate) fn access(&self) -> Option<(u32, u64)> {
        match self.calc {
            Calc::LdShared { base, off, .. } | Calc::LdGlobal { base, off, .. } | Calc::StGlobal { base, off, .. } => {
                Some((base, off))
            }
            _ => None,
        }
    }

    /// Whether it loads from memory.
    fn loads(&self) -> bool {
        matches!(self.calc, Calc::LdShared { .. } | Calc::LdGlobal { .. })
    }

    /// The registers it reads.
    pub(crate) fn sources(&self) -> impl Iterator<Item = u32> {
        let (a, b, c) = match self.calc {
            Calc::Mov { a, .. } | Calc::ShlImm { a, .. } | Calc::ShrImm { a, .. } | Calc::Cvta { a, .. } => {
                (Some(a), None, None)
            }
            Calc::Tid { .. } | Calc::Dim { .. } | Calc::LdParam { .. } => (None, None, None),
            Calc::Add { a, b, .. }
            | Calc::Sub { a, b, .. }
            | Calc::MulLo { a, b, .. }
            | Calc::MulWide { a, b, .. }
            | Calc::And { a, b, .. }
            | Calc::Or { a, b, .. }
            | Calc::Xor { a, b, .. }
            | Calc::Setp { a, b, .. } => (Some(a), Some(b), None),
            Calc::F32 { a, b, .. } => (Some(a), Some(b), None),
            Calc::MadLo { a, b, c, .. } | Calc::MadWide { a, b, c, .. } | Calc::Fma32 { a, b, c } => {
                (Some(a), Some(b), Some(c))
            }
            Calc::LdShared { base, .. } | Calc::LdGlobal { base, .. } => (Some(Src::Reg(base)), None, None),
            Calc::StGlobal { base, value, .. } => (Some(Src::Reg(base)), Some(value), None),
        };
        [a, b, c].into_iter().flatten().filter_map(|s| match s {
            Src::Reg(r) => Some(r),
            Src::Imm(_) => None,
        })
    }
}

/// The registers whose values at the end of `run` come from a load of it (directly or
/// through the instructions after it).
pub(crate) fn loaded(run: &[Pure]) -> BTreeSet<u32> {
    let mut from_load = BTreeSet::new();
    for p in run {
        let Some(d) = p.d else { continue };
        if p.loads() || p.sources().any(|r| from_load.contains(&r)) {
            from_load.insert(d);
        } else {
            from_load.remove(&d);
        }
    }
    from_load
}

/// A run of fused instructions, and the guard of the branch after it when that branch goes
/// back to its start (`Some(None)`: an unconditional one).
pub(crate) struct Run {
    pub(crate) pures: Vec<Pure>,
    pub(crate) back: Option<Option<(u32, bool)>>,
    /// The registers the run writes that are stored to their rows (the others are read by
    /// no instruction but the run's own, after the run writes them).
    pub(crate) keep: BTreeSet<u32>,
}

/// The registers an operand names.
pub(crate) fn registers(o: &Opd) -> Vec<u32> {
    match o {
        Opd::Reg(r) | Opd::NotReg(r) | Opd::Addr(Base::Reg(r), _) | Opd::SymAddr(Base::Reg(r), _) => vec![*r],
        Opd::Vector(v) | Opd::List(v) => v.iter().flat_map(registers).collect(),
        _ => Vec::new(),
    }
}

/// One past the highest row a run touches, in values.
pub(crate) fn min_regs(run: &Run) -> usize {
    let guard = run.back.flatten().map(|(p, _)| p);
    let top = run.pures.iter().flat_map(|p| p.sources().chain(p.d)).chain(guard).max().unwrap_or(0);
    (top as usize + 1) * WARP
}
