//! Runs of steps compiled to machine code (feature `native`, on by default): where two or
//! more unguarded instructions of the fused forms follow one another (integer moves,
//! arithmetic, logic, shifts by a constant and `setp`; f32 add/sub/mul/fma rounded to
//! nearest; `cvta`; moves of `%tid`, `%ctaid`, `%ntid`, `%nctaid`; scalar parameter and
//! shared loads; scalar global loads and stores), [`fuse`] marks them, and once a whole
//! warp has reached them often enough Cranelift translates them into one function over a
//! warp's register rows, lane after lane (two lanes at a time in SSE registers where the
//! run touches no memory and the host's backend lowers every operation of the run for
//! them), with each value kept in a machine register from one instruction to the next
//! instead of going through its row. A converged whole warp with room for the whole run
//! (`exec.rs`'s `run_links`) calls it in place of the run's steps.
//!
//! The instructions fused are exactly those for which `compiled.rs` makes a step of the
//! same arm (`Pure::of` mirrors its conditions), and each computes the bits that step
//! computes; none reads another lane's registers, and none can fault once the run's
//! accesses are known to be inside shared memory, the parameters and the memory's windows
//! ([`crate::Windows`]), aligned, for every lane (checked before a turn; a run's access
//! never has a base register the run writes). Running the run lane after lane instead of
//! instruction after instruction then gives the same registers, and the same memory where
//! no lane's store meets another lane's access of another instruction
//! ([`global_distances`] checks that too: else the steps run). `tests/native.rs`, the
//! instruction suite, the corpus and `tests/executors.rs` hold it to the interpreter.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, Type, UserFuncName, Value};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Module as _};

use crate::alu::{cvta_window, int_comparison, mask_of, IntOrder};
use crate::float::{FOp, Rnd};
use crate::lanes::{GlobalAccess, LaunchView, Link, NativeFn, NativeRun, NativeSlot, MAX_GLOBALS, WARP};
use crate::module::{Base, BoolOp, Func, Inst, MulMode, Negated, Op, Opd, Sp, Sreg, K};
use crate::windows::FPARAM_TAG;

/// The JIT module that owns a run's code.
struct Code(Mutex<Option<JITModule>>);

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.0.get_mut().ok().and_then(Option::take) {
            // SAFETY: the `NativeRun` holding this code is being dropped with its only
            // pointer into it, so nothing is left to call it.
            unsafe { m.free_memory() };
        }
    }
}

/// A source of a fused instruction.
#[derive(Clone, Copy, Debug)]
enum Src {
    Reg(u32),
    Imm(u64),
}

/// What a fused instruction computes (the bits `compiled.rs`'s step of the same arm
/// computes; `m` is the result's mask).
#[derive(Clone, Copy, Debug)]
enum Calc {
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
struct Pure {
    /// None for a store.
    d: Option<u32>,
    calc: Calc,
}

impl Pure {
    /// `inst` as a fused instruction, if `compiled.rs` gives it a step of one of the arms
    /// fused here (the same conditions, in the same order).
    fn of(inst: &Inst) -> Option<Pure> {
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
        Some(Pure { d: Some(*d), calc })
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
        Some(Pure { d: None, calc: Calc::StGlobal { base: *base, off: *off as u64, n: n as u8, value } })
    }

    /// The global access it makes: its base register, offset, bytes and whether it stores.
    fn global(&self) -> Option<GlobalAccess> {
        match self.calc {
            Calc::LdGlobal { base, off, n, .. } => Some(GlobalAccess { base, off, n, store: false }),
            Calc::StGlobal { base, off, n, .. } => Some(GlobalAccess { base, off, n, store: true }),
            _ => None,
        }
    }

    /// The base register of a load or store whose address is checked before the run.
    fn checked_base(&self) -> Option<u32> {
        match self.calc {
            Calc::LdShared { base, .. } | Calc::LdGlobal { base, .. } | Calc::StGlobal { base, .. } => Some(base),
            _ => None,
        }
    }

    /// The registers it reads.
    fn sources(&self) -> impl Iterator<Item = u32> {
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

/// How many times a whole warp reaches a run before the run is compiled (a run reached
/// fewer times costs less as steps than its compilation, about 0.1 ms): 256, or what
/// `CUDRV_PTX_NATIVE` says (read once): `0` compiles none (the steps alone, to compare),
/// `eager` each at its first reach (what the tests use to hold the code to the interpreter).
fn threshold() -> Option<u32> {
    static HOT: OnceLock<Option<u32>> = OnceLock::new();
    *HOT.get_or_init(|| match std::env::var("CUDRV_PTX_NATIVE").as_deref() {
        Ok("0") => None,
        Ok("eager") => Some(0),
        _ => Some(256),
    })
}

/// Replaces, in `links`, the first link of each run of two or more fusable steps of `f`
/// with a slot that compiles the run once it is hot ([`threshold`]; the steps after it
/// stay, for a warp that enters the run midway). A run the code generator refuses stays
/// as steps; so does every run on a CPU `cranelift_native` does not know.
pub(crate) fn fuse(f: &Func, links: &mut [Link]) {
    let Some(hot) = threshold() else { return };
    // A branch's target starts a run (a loop's body is entered there each turn).
    let targets: BTreeSet<usize> = f
        .code
        .iter()
        .filter(|inst| matches!(inst.op, Op::Bra))
        .filter_map(|inst| match inst.ops.first() {
            Some(Opd::Label(l)) => Some(*l as usize),
            _ => None,
        })
        .collect();
    let mut runs: Vec<(usize, Vec<Pure>)> = Vec::new();
    let mut current: Vec<Pure> = Vec::new();
    for (pc, inst) in f.code.iter().enumerate() {
        if targets.contains(&pc) && current.len() >= 2 {
            runs.push((pc - current.len(), std::mem::take(&mut current)));
        }
        if targets.contains(&pc) {
            current.clear();
        }
        let fusable = matches!(links.get(pc), Some(Link::Step(_))).then(|| Pure::of(inst)).flatten();
        // A load whose address the run computes starts a run of its own (a run's addresses
        // are checked before it starts).
        // So does a global access past the most a run checks.
        let base = fusable.as_ref().and_then(Pure::checked_base);
        let globals = current.iter().filter(|p| p.global().is_some()).count();
        let full = fusable.as_ref().is_some_and(|p| p.global().is_some()) && globals >= MAX_GLOBALS;
        if let Some(base) = base {
            if full || current.iter().any(|p| p.d == Some(base)) {
                if current.len() >= 2 {
                    runs.push((pc - current.len(), std::mem::take(&mut current)));
                }
                current.clear();
            }
        }
        match fusable {
            Some(p) => current.push(p),
            None => {
                if current.len() >= 2 {
                    runs.push((pc - current.len(), std::mem::take(&mut current)));
                }
                current.clear();
            }
        }
    }
    if current.len() >= 2 {
        runs.push((f.code.len() - current.len(), current));
    }
    // Where each register is named (read or written, guards included): a register a run
    // writes that nothing outside the run names, and that the run does not read before
    // writing it, is not stored (it is the run's temporary).
    let mut named: HashMap<u32, Vec<usize>> = HashMap::new();
    for (pc, inst) in f.code.iter().enumerate() {
        let guard = inst.guard.map(|(p, _)| p);
        for r in inst.ops.iter().flat_map(registers).chain(guard) {
            named.entry(r).or_default().push(pc);
        }
    }
    for (start, pures) in runs {
        // A branch right after the run back to its start: the run is a loop's body, which
        // the code turns while the whole warp takes the branch.
        let end = start + pures.len();
        let back = match links.get(end) {
            Some(Link::Branch { guard, target }) if *target as usize == start => Some(*guard),
            _ => None,
        };
        let mut written = BTreeSet::new();
        let mut keep = BTreeSet::new();
        for p in &pures {
            keep.extend(p.sources().filter(|r| !written.contains(r)));
            written.extend(p.d);
        }
        keep.retain(|r| written.contains(r));
        for &d in &written {
            if named.get(&d).is_some_and(|pcs| pcs.iter().any(|pc| !(start..end).contains(pc))) {
                keep.insert(d);
            }
        }
        let run = Run { pures, back, keep };
        if let Some(link) = links.get_mut(start) {
            let Link::Step(step) = link else { continue };
            let len = run.pures.len() as u32;
            let loops = run.back.is_some();
            let memory = run.pures.iter().any(|p| p.checked_base().is_some());
            let make = Box::new(move || compile(&run));
            *link = Link::Native(Arc::new(NativeSlot::new(step.clone(), len, loops, memory, hot, make)));
        }
    }
}

/// Each of `run`'s global accesses' distance from device to host addresses (in the run's
/// order; what its code's last argument points to), for the warp whose registers are
/// `regs`. `None`, and the steps take the run (faulting where the interpreter does), unless
/// `memory` gives windows, every lane's bytes of every access lie inside one window,
/// aligned to their size, and no lane's store meets another lane's access of another
/// instruction ([`lanes_meet`]): then running the run lane after lane reads and writes what
/// instruction after instruction would. The accesses' base registers are not written by the
/// run, so what holds for its first turn holds for all.
#[inline]
pub(crate) fn global_distances(
    run: &NativeRun,
    regs: &[u64],
    memory: &dyn crate::GlobalMemory,
) -> Option<[u64; MAX_GLOBALS]> {
    let mut out = [0u64; MAX_GLOBALS];
    if run.globals.is_empty() {
        return Some(out);
    }
    let windows = memory.windows()?;
    let mut spans = [(0u64, 0u64); MAX_GLOBALS];
    for ((g, distance), span) in run.globals.iter().zip(&mut out).zip(&mut spans) {
        let lanes = crate::lanes::row(regs, g.base)?;
        let (lo, hi, bits) = lanes.iter().fold((u64::MAX, 0u64, 0u64), |(lo, hi, bits), &r| {
            let a = r.wrapping_add(g.off);
            (lo.min(a), hi.max(a), bits | a)
        });
        let n = u64::from(g.n);
        if bits & (n - 1) != 0 {
            return None;
        }
        let end = hi.checked_add(n)?;
        let host = windows.window(lo, end - lo)?;
        *distance = (host.as_ptr() as u64).wrapping_sub(lo);
        *span = (lo, end);
    }
    let accesses = run.globals.iter().zip(spans);
    for (i, (a, (lo, end))) in accesses.clone().enumerate() {
        for (b, (l, e)) in accesses.clone().skip(i + 1) {
            if (a.store || b.store) && lo < e && l < end && lanes_meet(regs, a, b) {
                return None;
            }
        }
    }
    Some(out)
}

/// Whether some lane's access `a` and another lane's access `b` (two instructions of a
/// run, their spans met) may touch a common byte: unless both are at one base register
/// whose lanes step by one stride `s` (lane `i` at `r + i * s`), whose lanes' accesses are
/// then `k * s` apart for `k` from 1 to 31, yes.
fn lanes_meet(regs: &[u64], a: &GlobalAccess, b: &GlobalAccess) -> bool {
    let Some(lanes) = crate::lanes::row(regs, a.base).filter(|_| a.base == b.base) else { return true };
    let s = lanes[1].wrapping_sub(lanes[0]) as i64;
    if lanes.iter().zip(lanes.iter().skip(1)).any(|(x, y)| y.wrapping_sub(*x) as i64 != s) {
        return true;
    }
    // Lane i's `a` at x + a.off, lane j's `b` at x + (j - i) * s + b.off: they meet when
    // (j - i) * s lies strictly between d - a.n and d + b.n.
    let d = i128::from(b.off as i64) - i128::from(a.off as i64);
    let (low, high) = (d - i128::from(a.n), d + i128::from(b.n));
    let s = i128::from(s);
    (1..WARP as i128).flat_map(|k| [k * s, -k * s]).any(|x| low < x && x < high)
}

/// A run of fused instructions, and the guard of the branch after it when that branch goes
/// back to its start (`Some(None)`: an unconditional one).
struct Run {
    pures: Vec<Pure>,
    back: Option<Option<(u32, bool)>>,
    /// The registers the run writes that are stored to their rows (the others are read by
    /// no instruction but the run's own, after the run writes them).
    keep: BTreeSet<u32>,
}

/// The registers an operand names.
fn registers(o: &Opd) -> Vec<u32> {
    match o {
        Opd::Reg(r) | Opd::NotReg(r) | Opd::Addr(Base::Reg(r), _) | Opd::SymAddr(Base::Reg(r), _) => vec![*r],
        Opd::Vector(v) | Opd::List(v) => v.iter().flat_map(registers).collect(),
        _ => Vec::new(),
    }
}

/// One past the highest row a run touches, in values.
fn min_regs(run: &Run) -> usize {
    let guard = run.back.flatten().map(|(p, _)| p);
    let top = run.pures.iter().flat_map(|p| p.sources().chain(p.d)).chain(guard).max().unwrap_or(0);
    (top as usize + 1) * WARP
}

/// The host's code generator, made once (`None`: Cranelift does not support this CPU).
fn isa() -> Option<OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        flags.set("is_pic", "false").ok()?;
        flags.set("enable_verifier", "false").ok()?;
        cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()
    })
    .clone()
}

/// `run` compiled (two lanes at a time where the backend takes every operation for them,
/// else one), or `None` if the code generator refuses it.
fn compile(run: &Run) -> Option<NativeRun> {
    let isa = isa()?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()));
    let (id, bytes) = [types::I64X2, types::I64].into_iter().find_map(|ty| define(&mut module, run, ty))?;
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: `p` is the entry of a finalized function compiled with the signature
    // `fn(i64, i64, i64, i64, i64, i64) -> i64` in the host's default calling convention, which
    // is `extern "C"` taking pointers and u64s as `NativeFn` declares; the module that holds
    // it goes into the run with it.
    let code = unsafe { std::mem::transmute::<*const u8, NativeFn>(p) };
    let globals = run.pures.iter().filter_map(Pure::global).collect();
    Some(NativeRun { code, min_regs: min_regs(run), bytes, globals, _owner: Box::new(Code(Mutex::new(Some(module)))) })
}

/// Defines `run` in `module` over lanes of type `ty`: its function's id and code size.
fn define(module: &mut JITModule, run: &Run, ty: Type) -> Option<(FuncId, usize)> {
    let mut ctx = module.make_context();
    for _ in 0..6 {
        ctx.func.signature.params.push(AbiParam::new(types::I64));
    }
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut fctx = FunctionBuilderContext::new();
    let mut builder = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    build(&mut builder, run, ty)?;
    builder.finalize(module.target_config());
    let id = module.declare_anonymous_function(&ctx.func.signature).ok()?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    // A backend that cannot lower an operation for this type may panic instead of
    // answering an error: either way the run stays as steps.
    let defined =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| module.define_function(id, &mut ctx).is_ok()));
    let bytes = ctx.compiled_code().map_or(0, |c| c.code_info().total_size as usize);
    module.clear_context(&mut ctx);
    matches!(defined, Ok(true)).then_some((id, bytes))
}

/// Emits `run`: turns of a loop over the rows' lanes (`ty`'s lanes at a time), each
/// loading the registers the run reads before writing, computing, and storing every
/// register it writes. A run that is a loop's body turns again while the branch back holds
/// in every lane, at most `max_turns` times (the function's second argument); the function
/// answers how many turns it made (the branch after the last is left to the caller).
/// `None` where a value is out of the code's reach.
fn build(b: &mut FunctionBuilder<'_>, run: &Run, ty: Type) -> Option<()> {
    let entry = b.create_block();
    let turn = b.create_block();
    let body = b.create_block();
    let after = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(turn, types::I64);
    for t in [types::I64, ty, types::I64] {
        b.append_block_param(body, t);
    }
    b.append_block_param(after, ty);
    b.append_block_param(after, types::I64);
    b.append_block_param(exit, types::I64);

    b.switch_to_block(entry);
    let (regs, max_turns, shared, shared_len, view, globals) = match b.block_params(entry) {
        [r, m, s, l, v, g] => (*r, *m, *s, *l, *v, *g),
        _ => return None,
    };
    // What the launch must hold for the run: every parameter it loads inside the
    // parameters, and a `%tid` for every lane; else nothing runs (the steps fault or read
    // as the interpreter does).
    let at = |field: usize| i32::try_from(field).ok();
    let kparams = b.ins().load(types::I64, FLAGS, view, at(std::mem::offset_of!(LaunchView, kparams))?);
    let tids = b.ins().load(types::I64, FLAGS, view, at(std::mem::offset_of!(LaunchView, tids))?);
    let mut fine = b.ins().iconst(types::I8, 1);
    for p in &run.pures {
        let need = match p.calc {
            Calc::LdParam { addr, n, .. } => Some((std::mem::offset_of!(LaunchView, kparams_len), addr + u64::from(n))),
            Calc::Tid { .. } => Some((std::mem::offset_of!(LaunchView, tids_len), WARP as u64)),
            _ => None,
        };
        if let Some((field, least)) = need {
            let len = b.ins().load(types::I64, FLAGS, view, at(field)?);
            let enough = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, len, least as i64);
            fine = b.ins().band(fine, enough);
        }
    }
    let one = b.ins().iconst(types::I64, 1);
    let none = b.ins().iconst(types::I64, 0);
    b.ins().brif(fine, turn, &[one.into()], exit, &[none.into()]);

    // A turn: every lane, then whether the branch back held in all of them.
    b.switch_to_block(turn);
    let t = *b.block_params(turn).first()?;
    let zero = b.ins().iconst(types::I64, 0);
    let all = konst(b, ty, 1);
    let loads: Vec<(u32, u64, u8)> = run
        .pures
        .iter()
        .filter_map(|p| match p.calc {
            Calc::LdShared { base, off, n, .. } => Some((base, off, n)),
            _ => None,
        })
        .collect();
    if loads.is_empty() {
        b.ins().jump(body, &[zero.into(), all.into(), t.into()]);
    } else {
        // Every lane's every load inside shared memory, or no turn: the turns made so far
        // are answered, and the steps (which fault where the interpreter does) take over.
        let check = b.create_block();
        let checked = b.create_block();
        b.append_block_param(check, types::I64);
        b.append_block_param(check, types::I8);
        b.append_block_param(checked, types::I8);
        let ok = b.ins().iconst(types::I8, 1);
        b.ins().jump(check, &[zero.into(), ok.into()]);
        b.switch_to_block(check);
        let (coff, mut ok) = match b.block_params(check) {
            [o, k] => (*o, *k),
            _ => return None,
        };
        let cbase = b.ins().iadd(regs, coff);
        // Loads at one base and small offsets are checked at once: `base + end <= len` for
        // the furthest end holds for each (without wrapping) exactly when it holds for all.
        let mut ends: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
        let mut each = Vec::new();
        for (base, off, n) in loads {
            if off < 1 << 32 {
                let end = ends.entry(base).or_default();
                *end = (*end).max(off + u64::from(n));
            } else {
                each.push((base, off, u64::from(n)));
            }
        }
        for (base, off, n) in ends.into_iter().map(|(base, end)| (base, 0, end)).chain(each) {
            let a = b.ins().load(types::I64, FLAGS, cbase, row_offset(base)?);
            let a = b.ins().iadd_imm_s(a, off as i64);
            // a + n <= len, without wrapping: a <= len - n and n <= len.
            let room = b.ins().iadd_imm_s(shared_len, (n as i64).wrapping_neg());
            let fits = b.ins().icmp(IntCC::UnsignedLessThanOrEqual, a, room);
            let big = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, shared_len, n as i64);
            let fits = b.ins().band(fits, big);
            ok = b.ins().band(ok, fits);
        }
        let cnext = b.ins().iadd_imm_s(coff, 8);
        let more = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, cnext, (WARP * 8) as i64);
        b.ins().brif(more, check, &[cnext.into(), ok.into()], checked, &[ok.into()]);
        b.switch_to_block(checked);
        let ok = *b.block_params(checked).first()?;
        let done = b.ins().iadd_imm_s(t, -1);
        b.ins().brif(ok, body, &[zero.into(), all.into(), t.into()], exit, &[done.into()]);
    }

    b.switch_to_block(body);
    let (off, held, t) = match b.block_params(body) {
        [o, h, t] => (*o, *h, *t),
        _ => return None,
    };
    let mut e = Emit {
        ty,
        base: b.ins().iadd(regs, off),
        off,
        shared,
        view,
        kparams,
        tids,
        globals,
        next_global: 0,
        values: HashMap::new(),
        known: HashMap::new(),
        floats: HashMap::new(),
    };
    let mut written = BTreeSet::new();
    for p in &run.pures {
        let v = e.calc(b, p.calc)?;
        if let Some(d) = p.d {
            e.values.insert(d, v);
            written.insert(d);
        }
    }
    // The guard of the branch back in each lane (1: it goes back).
    let held = match run.back {
        Some(Some((p, neg))) => {
            let v = e.get(b, Src::Reg(p))?;
            let one = konst(b, ty, 1);
            let bit = b.ins().band(v, one);
            let bit = if neg { b.ins().bxor(bit, one) } else { bit };
            b.ins().band(held, bit)
        }
        _ => held,
    };
    for d in written.intersection(&run.keep) {
        let v = *e.values.get(d)?;
        b.ins().store(FLAGS, v, e.base, row_offset(*d)?);
    }
    let next = b.ins().iadd_imm_s(off, i64::from(ty.bytes()));
    let more = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, (WARP * 8) as i64);
    b.ins().brif(more, body, &[next.into(), held.into(), t.into()], after, &[held.into(), t.into()]);

    // After a turn: again if the run is a loop's body, the branch back held in every lane
    // and turns are left.
    b.switch_to_block(after);
    let (held, t) = match b.block_params(after) {
        [h, t] => (*h, *t),
        _ => return None,
    };
    if run.back.is_some() {
        let held = if ty.is_vector() {
            let l0 = b.ins().extractlane(held, 0);
            let l1 = b.ins().extractlane(held, 1);
            b.ins().band(l0, l1)
        } else {
            held
        };
        let again = b.ins().icmp_imm_u(IntCC::NotEqual, held, 0);
        let left = b.ins().icmp(IntCC::UnsignedLessThan, t, max_turns);
        let again = b.ins().band(again, left);
        let t1 = b.ins().iadd_imm_s(t, 1);
        b.ins().brif(again, turn, &[t1.into()], exit, &[t.into()]);
    } else {
        b.ins().jump(exit, &[t.into()]);
    }

    b.switch_to_block(exit);
    let t = *b.block_params(exit).first()?;
    b.ins().return_(&[t]);
    b.seal_all_blocks();
    Some(())
}

/// How the code reaches the rows: never trapping, not assumed aligned beyond 8 bytes.
const FLAGS: MemFlagsData = MemFlagsData::new().with_notrap();

/// How a vector is seen as another of the same bits (lane 0 the lowest bytes).
const LANES: MemFlagsData = MemFlagsData::new().with_endianness(cranelift_codegen::ir::Endianness::Little);

/// Where register `r`'s row starts in the frame, in bytes.
fn row_offset(r: u32) -> Option<i32> {
    i32::try_from(u64::from(r) * (WARP as u64) * 8).ok()
}

/// One turn's values as they are emitted: each register's latest value, and for values
/// known to have only some bits set, those bits (so that a mask they already satisfy is
/// not applied again).
struct Emit {
    ty: Type,
    /// The turn's lanes' place in the rows.
    base: Value,
    /// The turn's lanes' place in a row, in bytes (8 per lane).
    off: Value,
    /// The block's shared memory.
    shared: Value,
    /// The launch's values (`LaunchView`), its parameters and its lanes' `%tid`s.
    view: Value,
    kparams: Value,
    tids: Value,
    /// Each global access's distance from device to host addresses (`NativeFn`'s last
    /// argument), in the run's order; the next access's index.
    globals: Value,
    next_global: i32,
    values: HashMap<u32, Value>,
    known: HashMap<Value, u64>,
    /// For values that are f32 bits, the f32 itself (a float result before its NaN is made
    /// canonical: as an operand it gives the same result, NaN or not).
    floats: HashMap<Value, Value>,
}

impl Emit {
    /// A source's value: an immediate, a register's latest value, or its row's lanes.
    fn get(&mut self, b: &mut FunctionBuilder<'_>, s: Src) -> Option<Value> {
        Some(match s {
            Src::Imm(v) => self.konst(b, v),
            Src::Reg(r) => match self.values.get(&r) {
                Some(v) => *v,
                None => {
                    let v = b.ins().load(self.ty, FLAGS, self.base, row_offset(r)?);
                    self.values.insert(r, v);
                    v
                }
            },
        })
    }

    fn konst(&mut self, b: &mut FunctionBuilder<'_>, v: u64) -> Value {
        let k = konst(b, self.ty, v);
        self.known.insert(k, v);
        k
    }

    /// `x & m`, or `x` where its known bits are inside `m`.
    fn masked(&mut self, b: &mut FunctionBuilder<'_>, x: Value, m: u64) -> Value {
        if m == u64::MAX || self.known.get(&x).is_some_and(|k| k & !m == 0) {
            return x;
        }
        let k = konst(b, self.ty, m);
        let r = b.ins().band(x, k);
        self.known.insert(r, m);
        r
    }

    /// `x`'s low `bits` bits sign-extended (`alu::sext`).
    fn sext(&mut self, b: &mut FunctionBuilder<'_>, x: Value, bits: u32) -> Value {
        if bits >= 64 || bits == 0 {
            return x;
        }
        let s = i64::from(64 - bits);
        let up = b.ins().ishl_imm_u(x, s);
        b.ins().sshr_imm_u(up, s)
    }

    /// The operands of a `bits`-bit operation: sign-extended when `signed`, else masked.
    fn widened(&mut self, b: &mut FunctionBuilder<'_>, x: Value, y: Value, bits: u32, signed: bool) -> (Value, Value) {
        if signed {
            (self.sext(b, x, bits), self.sext(b, y, bits))
        } else {
            (self.masked(b, x, mask_of(bits)), self.masked(b, y, mask_of(bits)))
        }
    }

    /// What `calc` computes, from its sources' values.
    fn calc(&mut self, b: &mut FunctionBuilder<'_>, calc: Calc) -> Option<Value> {
        Some(match calc {
            Calc::Mov { a, m } => {
                let a = self.get(b, a)?;
                self.masked(b, a, m)
            }
            Calc::Add { a, b: y, m } | Calc::Sub { a, b: y, m } | Calc::MulLo { a, b: y, m } => {
                let (x, y) = (self.get(b, a)?, self.get(b, y)?);
                let r = match calc {
                    Calc::Add { .. } => b.ins().iadd(x, y),
                    Calc::Sub { .. } => b.ins().isub(x, y),
                    _ => b.ins().imul(x, y),
                };
                self.masked(b, r, m)
            }
            Calc::And { a, b: y, m } | Calc::Or { a, b: y, m } | Calc::Xor { a, b: y, m } => {
                let (x, y) = (self.get(b, a)?, self.get(b, y)?);
                let r = match calc {
                    Calc::And { .. } => b.ins().band(x, y),
                    Calc::Or { .. } => b.ins().bor(x, y),
                    _ => b.ins().bxor(x, y),
                };
                // Bits set in neither operand (or, for and, in either) are clear.
                let (kx, ky) = (self.known_bits(x), self.known_bits(y));
                self.known.insert(r, if matches!(calc, Calc::And { .. }) { kx & ky } else { kx | ky });
                self.masked(b, r, m)
            }
            Calc::MulWide { a, b: y, bits, signed } => {
                let (x, y) = (self.get(b, a)?, self.get(b, y)?);
                let (x, y) = self.widened(b, x, y, bits, signed);
                b.ins().imul(x, y)
            }
            Calc::MadLo { a, b: y, c, m } => {
                let (x, y, z) = (self.get(b, a)?, self.get(b, y)?, self.get(b, c)?);
                let r = b.ins().imul(x, y);
                let r = b.ins().iadd(r, z);
                self.masked(b, r, m)
            }
            Calc::MadWide { a, b: y, c, bits, signed, m } => {
                let (x, y, z) = (self.get(b, a)?, self.get(b, y)?, self.get(b, c)?);
                let (x, y) = self.widened(b, x, y, bits, signed);
                let r = b.ins().imul(x, y);
                let r = b.ins().iadd(r, z);
                self.masked(b, r, m)
            }
            Calc::ShlImm { a, n, m } => {
                let x = self.get(b, a)?;
                let r = b.ins().ishl_imm_u(x, i64::from(n));
                self.masked(b, r, m)
            }
            Calc::ShrImm { a, n, bits, signed, m } => {
                let x = self.get(b, a)?;
                if signed {
                    let x = self.sext(b, x, bits);
                    let r = b.ins().sshr_imm_u(x, i64::from(n));
                    self.masked(b, r, m)
                } else {
                    let x = self.masked(b, x, mask_of(bits));
                    let r = b.ins().ushr_imm_u(x, i64::from(n));
                    self.known.insert(r, mask_of(bits) >> n);
                    self.masked(b, r, m)
                }
            }
            Calc::Setp { a, b: y, bits, signed, order } => {
                let (x, y) = (self.get(b, a)?, self.get(b, y)?);
                let r = self.setp(b, x, y, bits, signed, order);
                self.known.insert(r, 1);
                r
            }
            Calc::Cvta { a, window, to, m } => {
                let x = self.get(b, a)?;
                if window == 0 {
                    x
                } else {
                    let w = self.konst(b, window);
                    let r = if to { b.ins().isub(x, w) } else { b.ins().iadd(x, w) };
                    self.masked(b, r, m)
                }
            }
            Calc::Dim { i, default, m } => {
                let v = match i {
                    Some(i) => {
                        let field = std::mem::offset_of!(LaunchView, dims) + 4 * usize::from(i);
                        let v = b.ins().uload32(FLAGS, self.view, i32::try_from(field).ok()?);
                        self.splat(b, v)
                    }
                    None => self.konst(b, u64::from(default)),
                };
                self.masked(b, v, m)
            }
            Calc::LdParam { addr, n, bits, signed } => {
                // Inside the parameters: checked before the code runs.
                let p = b.ins().iadd_imm_s(self.kparams, addr as i64);
                let v = load_n(b, p, n);
                let v = if signed { self.sext(b, v, bits) } else { v };
                self.splat(b, v)
            }
            Calc::Tid { k, m } => {
                // `tids[lane][k]`: 12 bytes a lane, the first lane the row offset's eighth.
                let lane = b.ins().ushr_imm_u(self.off, 3);
                let at = b.ins().imul_imm_s(lane, 12);
                let p = b.ins().iadd(self.tids, at);
                let each: Vec<Value> =
                    (0..self.lanes()).map(|i| b.ins().uload32(FLAGS, p, i32::from(k) * 4 + 12 * i)).collect();
                let v = self.of_lanes(b, &each)?;
                self.known.insert(v, 0xffff_ffff);
                self.masked(b, v, m)
            }
            Calc::F32 { op, a, b: y } => {
                let (x, y) = (self.get(b, a)?, self.get(b, y)?);
                let (x, y) = (self.f32_of(b, x), self.f32_of(b, y));
                let r = match op {
                    FOp::Add => b.ins().fadd(x, y),
                    FOp::Sub => b.ins().fsub(x, y),
                    _ => b.ins().fmul(x, y),
                };
                self.f32_bits(b, r)
            }
            Calc::Fma32 { a, b: y, c } => {
                let (x, y, z) = (self.get(b, a)?, self.get(b, y)?, self.get(b, c)?);
                let (x, y, z) = (self.f32_of(b, x), self.f32_of(b, y), self.f32_of(b, z));
                let r = b.ins().fma(x, y, z);
                self.f32_bits(b, r)
            }
            // Memory lane by lane only (`None` for two lanes at a time: the run is compiled
            // again with one; lane by lane, the processor overlaps the lanes' loads, which
            // two lanes at a time would have to gather into one register first).
            Calc::LdGlobal { .. } | Calc::StGlobal { .. } | Calc::LdShared { .. } if self.ty.is_vector() => {
                return None
            }
            Calc::LdGlobal { base, off, n, bits, signed } => {
                // Checked before the code runs: each lane's `n` bytes lie in the window whose
                // distance to host addresses is the access's.
                let delta = self.global_distance(b)?;
                let p = self.address(b, base, off, delta)?;
                let v = load_n(b, p, n);
                self.loaded(b, v, p, n, bits, signed)
            }
            Calc::StGlobal { base, off, n, value } => {
                let delta = self.global_distance(b)?;
                let p = self.address(b, base, off, delta)?;
                let v = self.get(b, value)?;
                match n {
                    1 => b.ins().istore8(FLAGS, v, p, 0),
                    2 => b.ins().istore16(FLAGS, v, p, 0),
                    4 => b.ins().istore32(FLAGS, v, p, 0),
                    _ => b.ins().store(FLAGS, v, p, 0),
                };
                v
            }
            Calc::LdShared { base, off, n, bits, signed } => {
                // Checked before the turn: `shared + base + off` holds `n` bytes.
                let p = self.address(b, base, off, self.shared)?;
                let v = load_n(b, p, n);
                self.loaded(b, v, p, n, bits, signed)
            }
        })
    }

    /// Lanes a value of the code's type holds (1, or 2 at a time).
    fn lanes(&self) -> i32 {
        self.ty.lane_count() as i32
    }

    /// A value of the code's type from each lane's 64-bit scalar.
    fn of_lanes(&self, b: &mut FunctionBuilder<'_>, each: &[Value]) -> Option<Value> {
        let first = *each.first()?;
        if !self.ty.is_vector() {
            return Some(first);
        }
        let mut v = b.ins().scalar_to_vector(self.ty, first);
        for (i, &x) in (1u8..).zip(each.iter().skip(1)) {
            v = b.ins().insertlane(v, x, i);
        }
        Some(v)
    }

    /// The next global access's distance from device to host addresses (given before the
    /// code runs, in the run's order).
    fn global_distance(&mut self, b: &mut FunctionBuilder<'_>) -> Option<Value> {
        let delta = b.ins().load(types::I64, FLAGS, self.globals, self.next_global.checked_mul(8)?);
        self.next_global += 1;
        Some(delta)
    }

    /// A lane's host address of an access at register `base` plus `off`, moved by `delta`
    /// (a host address or a distance).
    fn address(&mut self, b: &mut FunctionBuilder<'_>, base: u32, off: u64, delta: Value) -> Option<Value> {
        let a = self.get(b, Src::Reg(base))?;
        let a = b.ins().iadd_imm_s(a, off as i64);
        Some(b.ins().iadd(a, delta))
    }

    /// The `n` bytes `v` loaded from `p` as a register holds them: sign-extended from
    /// `bits` when `signed` (`alu::loaded`), else as loaded.
    fn loaded(&mut self, b: &mut FunctionBuilder<'_>, v: Value, p: Value, n: u8, bits: u32, signed: bool) -> Value {
        if signed {
            return self.sext(b, v, bits);
        }
        self.known.insert(v, mask_of(u32::from(n) * 8));
        if n == 4 {
            // The same bytes as an f32, for a float instruction that reads them.
            let f = b.ins().load(types::F32, FLAGS, p, 0);
            self.floats.insert(v, f);
        }
        v
    }

    /// An f32 result as a register holds it: its bits zero-extended, a NaN canonical
    /// (0x7fffffff).
    fn f32_bits(&mut self, b: &mut FunctionBuilder<'_>, r: Value) -> Value {
        if self.ty.is_vector() {
            // Two lanes' f32s in the low halves of their 64 bits (the high halves' results
            // are dropped).
            let nan = b.ins().fcmp(FloatCC::Unordered, r, r);
            let bits = b.ins().bitcast(types::I32X4, LANES, r);
            let canonical = b.ins().iconst(types::I32, 0x7fff_ffff);
            let canonical = b.ins().splat(types::I32X4, canonical);
            let bits = b.ins().bitselect(nan, canonical, bits);
            let wide = b.ins().bitcast(self.ty, LANES, bits);
            let low = konst(b, self.ty, 0xffff_ffff);
            let v = b.ins().band(wide, low);
            self.known.insert(v, 0xffff_ffff);
            self.floats.insert(v, r);
            return v;
        }
        let nan = b.ins().fcmp(FloatCC::Unordered, r, r);
        let bits = b.ins().bitcast(types::I32, MemFlagsData::new(), r);
        let canonical = b.ins().iconst(types::I32, 0x7fff_ffff);
        let bits = b.ins().select(nan, canonical, bits);
        let v = b.ins().uextend(types::I64, bits);
        self.known.insert(v, 0xffff_ffff);
        self.floats.insert(v, r);
        v
    }

    /// A launch-wide value in every lane.
    fn splat(&mut self, b: &mut FunctionBuilder<'_>, v: Value) -> Value {
        if self.ty.is_vector() {
            b.ins().splat(self.ty, v)
        } else {
            v
        }
    }

    /// A value's low 32 bits as an f32.
    fn f32_of(&mut self, b: &mut FunctionBuilder<'_>, x: Value) -> Value {
        if let Some(f) = self.floats.get(&x) {
            return *f;
        }
        let f = if self.ty.is_vector() {
            // Lane i's f32 in the vector's lane 2i (its high half's lane is not used).
            b.ins().bitcast(types::F32X4, LANES, x)
        } else {
            let low = b.ins().ireduce(types::I32, x);
            b.ins().bitcast(types::F32, MemFlagsData::new(), low)
        };
        self.floats.insert(x, f);
        f
    }

    /// The bits `x` may have set.
    fn known_bits(&self, x: Value) -> u64 {
        self.known.get(&x).copied().unwrap_or(u64::MAX)
    }

    /// An integer `setp`: 1 where `x` and `y` (`bits`-bit integers, signed or not) stand in
    /// `order`, else 0 (`alu::int_keys`, `alu::in_order`).
    fn setp(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        x: Value,
        y: Value,
        bits: u32,
        signed: bool,
        order: IntOrder,
    ) -> Value {
        let cc = match (order, signed) {
            (IntOrder::Always, _) => return konst(b, self.ty, 1),
            (IntOrder::Never, _) => return konst(b, self.ty, 0),
            (IntOrder::Eq, _) => IntCC::Equal,
            (IntOrder::Ne, _) => IntCC::NotEqual,
            (IntOrder::Lt, true) => IntCC::SignedLessThan,
            (IntOrder::Le, true) => IntCC::SignedLessThanOrEqual,
            (IntOrder::Gt, true) => IntCC::SignedGreaterThan,
            (IntOrder::Ge, true) => IntCC::SignedGreaterThanOrEqual,
            (IntOrder::Lt, false) => IntCC::UnsignedLessThan,
            (IntOrder::Le, false) => IntCC::UnsignedLessThanOrEqual,
            (IntOrder::Gt, false) => IntCC::UnsignedGreaterThan,
            (IntOrder::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        };
        // Signed keys are the sign-extended values (their order, flipped into unsigned
        // order by `int_keys`, is the signed order); unsigned keys the masked ones.
        let (x, y) = self.widened(b, x, y, bits, signed);
        let c = b.ins().icmp(cc, x, y);
        if self.ty.is_vector() {
            // Every bit set where it holds: keep the lowest.
            let one = konst(b, self.ty, 1);
            b.ins().band(c, one)
        } else {
            b.ins().uextend(types::I64, c)
        }
    }
}

/// The `n` bytes (1, 2, 4 or 8) at `p`, zero-extended.
fn load_n(b: &mut FunctionBuilder<'_>, p: Value, n: u8) -> Value {
    match n {
        1 => b.ins().uload8(types::I64, FLAGS, p, 0),
        2 => b.ins().uload16(types::I64, FLAGS, p, 0),
        4 => b.ins().uload32(FLAGS, p, 0),
        _ => b.ins().load(types::I64, FLAGS, p, 0),
    }
}

/// The constant `v` in every lane.
fn konst(b: &mut FunctionBuilder<'_>, ty: Type, v: u64) -> Value {
    let s = b.ins().iconst(types::I64, v as i64);
    if ty.is_vector() {
        b.ins().splat(ty, s)
    } else {
        s
    }
}
