//! The compiling executor's translation: an instruction becomes a [`Step`], a closure
//! specialised at a kernel's first launch for its operation, types and operands (the
//! native code rustc made for each specialisation, chosen once instead of decoded at each
//! run), that updates a warp's register rows (and, for scalar loads and stores of shared
//! and global memory, the memory) for the lanes of a mask. An instruction with no step
//! (generic, local and vector accesses, atomics, control, warp, texture and the rarer
//! arithmetic forms) is interpreted (`exec.rs`): the executor falls back one instruction
//! at a time, on the same registers.
//!
//! Each step computes through the lane functions of `alu.rs` (or `lanes::fma_f32`) that the
//! interpreter runs for the same form, so both give the same bits; the instruction suite
//! and the kernel corpus run through both (`tests/suite/run.rs`, `tests/corpus.rs`,
//! `tests/executors.rs`).

use std::cell::Cell;

use crate::alu::{
    cvta, cvta_window, f32_rn, in_order, int_comparison, int_keys, loaded, mask_of, mul_wide, sext, shl, shr, IntOrder,
};
use crate::float::{FOp, Rnd};
use crate::lanes::{at, fma_f32, fma_f32_cells, lanes, row, row_mut, Link, Step, StepContext, StepFn, Steps, WARP};
use crate::memory::Fault;
use crate::module::{Base, BoolOp, Func, Inst, MulMode, Negated, Op, Opd, Sp, Sreg, K};
use crate::windows::FPARAM_TAG;

/// `f`'s instructions translated (each with a step or none).
pub(crate) fn compile(f: &Func) -> Steps {
    let by_pc: Vec<Option<Step>> = f
        .code
        .iter()
        .map(|inst| {
            if let Some(run) = shared_access(inst).or_else(|| global_access(inst)) {
                Some(Step { run, memory: true })
            } else {
                arithmetic(inst).or_else(|| launch_value(inst)).map(|run| Step { run, memory: false })
            }
        })
        .collect();
    let links = (0u32..)
        .zip(f.code.iter().zip(&by_pc))
        .map(|(pc, (inst, step))| match (step, inst.guard) {
            (Some(step), None) => Link::Step(step.clone()),
            _ if matches!(inst.op, Op::Bra) => Link::Branch {
                guard: inst.guard,
                target: match inst.ops.first() {
                    Some(Opd::Label(l)) => *l,
                    _ => pc + 1,
                },
            },
            _ => Link::Stop,
        })
        .collect();
    #[cfg(feature = "native")]
    let links = {
        let mut links: Vec<Link> = links;
        crate::native::fuse(f, &mut links);
        links
    };
    Steps { by_pc, links }
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

fn unary_with<A: Lanes>(d: u32, a: A, f: impl Fn(u64) -> u64 + Send + Sync + 'static) -> StepFn {
    std::sync::Arc::new(move |regs: &mut [u64], _: &mut StepContext<'_>, mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        if let Some(x) = a.get(regs) {
            put(regs, d, mask, |l| f(A::lane(x, l)));
        }
        Ok(())
    })
}

fn binary_with<A: Lanes, B: Lanes>(d: u32, a: A, b: B, f: impl Fn(u64, u64) -> u64 + Send + Sync + 'static) -> StepFn {
    std::sync::Arc::new(move |regs: &mut [u64], _: &mut StepContext<'_>, mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        if let (Some(x), Some(y)) = (a.get(regs), b.get(regs)) {
            put(regs, d, mask, |l| f(A::lane(x, l), B::lane(y, l)));
        }
        Ok(())
    })
}

fn ternary_with<A: Lanes, B: Lanes, C: Lanes>(
    d: u32,
    a: A,
    b: B,
    c: C,
    f: impl Fn(u64, u64, u64) -> u64 + Send + Sync + 'static,
) -> StepFn {
    std::sync::Arc::new(move |regs: &mut [u64], _: &mut StepContext<'_>, mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        if let (Some(x), Some(y), Some(z)) = (a.get(regs), b.get(regs), c.get(regs)) {
            put(regs, d, mask, |l| f(A::lane(x, l), B::lane(y, l), C::lane(z, l)));
        }
        Ok(())
    })
}

/// A step of one source, specialised for its kind.
fn unary(d: u32, a: Src, f: impl Fn(u64) -> u64 + Send + Sync + 'static) -> StepFn {
    match a {
        Src::Reg(r) => unary_with(d, RegLanes(r), f),
        Src::Imm(v) => unary_with(d, ImmLanes(v), f),
    }
}

/// A step of two sources, specialised for their kinds.
fn binary(d: u32, a: Src, b: Src, f: impl Fn(u64, u64) -> u64 + Send + Sync + 'static) -> StepFn {
    match (a, b) {
        (Src::Reg(a), Src::Reg(b)) => binary_with(d, RegLanes(a), RegLanes(b), f),
        (Src::Reg(a), Src::Imm(b)) => binary_with(d, RegLanes(a), ImmLanes(b), f),
        (Src::Imm(a), Src::Reg(b)) => binary_with(d, ImmLanes(a), RegLanes(b), f),
        (Src::Imm(a), Src::Imm(b)) => binary_with(d, ImmLanes(a), ImmLanes(b), f),
    }
}

/// A step of three sources, specialised for their kinds.
fn ternary(d: u32, a: Src, b: Src, c: Src, f: impl Fn(u64, u64, u64) -> u64 + Send + Sync + 'static) -> StepFn {
    use Src::{Imm, Reg};
    let (r, i) = (RegLanes, ImmLanes);
    match (a, b, c) {
        (Reg(a), Reg(b), Reg(c)) => ternary_with(d, r(a), r(b), r(c), f),
        (Reg(a), Reg(b), Imm(c)) => ternary_with(d, r(a), r(b), i(c), f),
        (Reg(a), Imm(b), Reg(c)) => ternary_with(d, r(a), i(b), r(c), f),
        (Reg(a), Imm(b), Imm(c)) => ternary_with(d, r(a), i(b), i(c), f),
        (Imm(a), Reg(b), Reg(c)) => ternary_with(d, i(a), r(b), r(c), f),
        (Imm(a), Reg(b), Imm(c)) => ternary_with(d, i(a), r(b), i(c), f),
        (Imm(a), Imm(b), Reg(c)) => ternary_with(d, i(a), i(b), r(c), f),
        (Imm(a), Imm(b), Imm(c)) => ternary_with(d, i(a), i(b), i(c), f),
    }
}

/// A scalar load or store of space `sp` at a register plus an offset, as a step sees it.
#[derive(Clone, Copy)]
struct Scalar {
    /// The loaded register; None for a store.
    dst: Option<u32>,
    /// The stored value; None for a load.
    value: Option<Src>,
    base: u32,
    off: u64,
    /// Bytes (1, 2, 4 or 8).
    es: usize,
    signed: bool,
    bits: u32,
    line: u32,
}

impl Scalar {
    /// `inst` if it is a scalar `ld` of space `sp` into a register, or `st` of a register or
    /// an immediate, at `[register+offset]`.
    fn of(inst: &Inst, sp: Sp) -> Option<Scalar> {
        let load = match inst.op {
            Op::Ld => true,
            Op::St => false,
            _ => return None,
        };
        let es = inst.ty.bytes().max(1);
        if inst.sp != sp || inst.vec != 1 || !matches!(es, 1 | 2 | 4 | 8) {
            return None;
        }
        let (data, addr) = if load { (inst.ops.first(), inst.ops.get(1)) } else { (inst.ops.get(1), inst.ops.first()) };
        let Some(Opd::Addr(Base::Reg(base), off)) = addr else { return None };
        let (dst, value) = match data {
            Some(Opd::Reg(d)) if load => (Some(*d), None),
            _ if load => return None,
            _ => (None, Some(Src::of(data)?)),
        };
        Some(Scalar {
            dst,
            value,
            base: *base,
            off: *off as u64,
            es,
            signed: inst.ty.k == K::S,
            bits: inst.ty.bits,
            line: inst.line,
        })
    }

    /// Each lane's address.
    fn addresses(&self, regs: &[u64]) -> [u64; WARP] {
        let mut a = row(regs, self.base).copied().unwrap_or([0; WARP]);
        for x in &mut a {
            *x = x.wrapping_add(self.off);
        }
        a
    }

    /// The stored value's lanes.
    fn data(&self, regs: &[u64]) -> [u64; WARP] {
        match self.value {
            Some(Src::Reg(r)) => row(regs, r).copied().unwrap_or([0; WARP]),
            Some(Src::Imm(v)) => [v; WARP],
            None => [0; WARP],
        }
    }

    /// Writes the loaded `vals` of the lanes of `done` to the destination, as loaded.
    fn land(&self, regs: &mut [u64], done: u32, vals: &[u64; WARP]) {
        if let Some(out) = self.dst.and_then(|d| row_mut(regs, d)) {
            if done == u32::MAX {
                for (o, v) in out.iter_mut().zip(vals) {
                    *o = loaded(*v, self.bits, self.signed);
                }
                return;
            }
            for l in lanes(done) {
                if let (Some(o), Some(v)) = (out.get_mut(l), vals.get(l)) {
                    *o = loaded(*v, self.bits, self.signed);
                }
            }
        }
    }
}

/// A scalar `ld.global` into a register or `st.global` of a register or an immediate, at a
/// register plus an offset, as the interpreter does it: a misaligned lane faults after the
/// lanes before it have run, the warp's lanes go to the embedder's memory in one call.
fn global_access(inst: &Inst) -> Option<StepFn> {
    let s = Scalar::of(inst, Sp::Global)?;
    let (es, line) = (s.es, s.line);
    Some(std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
        let addrs = s.addresses(regs);
        // The misaligned lanes in one pass that vectorises (`es` is a power of two); the
        // first of them faults.
        let align = es as u64 - 1;
        let odd = (0..WARP).zip(&addrs).fold(0u32, |m, (l, &a)| m | u32::from(a & align != 0) << l) & mask;
        let misaligned = (odd != 0).then(|| odd.trailing_zeros() as usize);
        let before = misaligned.map_or(mask, |m| mask & ((1u32 << m) - 1));
        let mut vals = [0u64; WARP];
        let r = match s.dst {
            Some(_) => ctx.global.read_lanes(&addrs, before, es, &mut vals),
            None => ctx.global.write_lanes(&addrs, before, es, &s.data(regs)),
        };
        if let Err(b) = r {
            return Err(Fault::IllegalAddress { addr: b.addr, line });
        }
        s.land(regs, before, &vals);
        match misaligned {
            Some(m) => Err(Fault::MisalignedAddress { addr: addrs.get(m).copied().unwrap_or(0), line }),
            None => Ok(()),
        }
    }))
}

/// What a launch gives every lane alike or by its index: `mov` of `%tid`, `%ntid`, `%ctaid`,
/// `%nctaid`, and a scalar `ld.param` of the kernel's parameters.
fn launch_value(inst: &Inst) -> Option<StepFn> {
    let Some(Opd::Reg(d)) = inst.ops.first() else { return None };
    let d = *d;
    let ty = inst.ty;
    match (inst.op, inst.ops.get(1)?) {
        (Op::Mov, Opd::Sreg(s)) => {
            let mkp = if ty.k == K::Pred { 1 } else { mask_of(ty.bits) };
            // The launch's value of a uniform register: which of its vectors, which
            // dimension, and what a dimension past the third reads as.
            let uniform = |pick: fn(&StepContext<'_>) -> [u32; 3], k: u8, default: u32| -> StepFn {
                std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
                    let v = u64::from(pick(ctx).get(k as usize).copied().unwrap_or(default)) & mkp;
                    put(Cell::from_mut(regs).as_slice_of_cells(), d, mask, |_| v);
                    Ok(())
                })
            };
            match *s {
                Sreg::Tid(k) => {
                    Some(std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
                        let regs = Cell::from_mut(regs).as_slice_of_cells();
                        let tids = ctx.tids;
                        put(regs, d, mask, |l| {
                            tids.get(l).and_then(|t| t.get(k as usize)).map_or(0, |&v| u64::from(v)) & mkp
                        });
                        Ok(())
                    }))
                }
                Sreg::Ntid(k) => Some(uniform(|c| c.ntid, k, 1)),
                Sreg::Ctaid(k) => Some(uniform(|c| c.ctaid, k, 0)),
                Sreg::Nctaid(k) => Some(uniform(|c| c.nctaid, k, 1)),
                _ => None,
            }
        }
        (Op::Ld, Opd::Addr(Base::KParam(o), off)) if inst.sp == Sp::Param && inst.vec == 1 => {
            let es = ty.bytes().max(1);
            let addr = o.wrapping_add(*off as u64);
            if addr >= FPARAM_TAG || !matches!(es, 1 | 2 | 4 | 8) {
                return None;
            }
            let (signed, bits, line) = (ty.k == K::S, ty.bits, inst.line);
            Some(std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
                let bad = || Fault::IllegalAddress { addr, line };
                let a = usize::try_from(addr).map_err(|_| bad())?;
                let src = ctx.kparams.get(a..a.wrapping_add(es)).ok_or_else(bad)?;
                let mut b = [0u8; 8];
                if let Some(t) = b.get_mut(..es) {
                    t.copy_from_slice(src);
                }
                let v = loaded(u64::from_le_bytes(b), bits, signed);
                put(Cell::from_mut(regs).as_slice_of_cells(), d, mask, |_| v);
                Ok(())
            }))
        }
        _ => None,
    }
}

/// A scalar `ld.shared` into a register or `st.shared` of a register or an immediate, at a
/// register plus an offset, as the interpreter's `shared_load`/`shared_store` do it: lane by
/// lane in lane order, the lanes before a bad address done, the fault at the first bad one.
fn shared_access(inst: &Inst) -> Option<StepFn> {
    let s = Scalar::of(inst, Sp::Shared)?;
    Some(match (s.es, s.dst.is_some()) {
        (1, true) => shared_load_step::<1>(s),
        (2, true) => shared_load_step::<2>(s),
        (4, true) => shared_load_step::<4>(s),
        (_, true) => shared_load_step::<8>(s),
        (1, false) => shared_store_step::<1>(s),
        (2, false) => shared_store_step::<2>(s),
        (4, false) => shared_store_step::<4>(s),
        (_, false) => shared_store_step::<8>(s),
    })
}

/// The `N`-byte little-endian value of `c` (`N` bytes long; 1, 2, 4 or 8), zero-extended.
#[inline(always)]
fn le_value<const N: usize>(c: &[u8]) -> u64 {
    match N {
        1 => c.first().map_or(0, |&v| u64::from(v)),
        2 => c.try_into().map_or(0, |b| u64::from(u16::from_le_bytes(b))),
        4 => c.try_into().map_or(0, |b| u64::from(u32::from_le_bytes(b))),
        _ => c.try_into().map_or(0, u64::from_le_bytes),
    }
}

/// The `N`-byte little-endian value at shared offset `a`, if all its bytes are in `shared`.
#[inline(always)]
fn shared_value<const N: usize>(shared: &[u8], a: u64) -> Option<u64> {
    let a = usize::try_from(a).ok()?;
    Some(le_value::<N>(shared.get(a..a.checked_add(N)?)?))
}

/// Half a warp.
const HALF: usize = WARP / 2;

/// Loads half a warp's values when its lanes read one value or consecutive ones (the shapes
/// of a row, a broadcast, and of a 16-wide tile's half-warps) and all of them lie in
/// `shared`; false (nothing loaded) otherwise.
#[inline(always)]
fn shared_half<const N: usize>(shared: &[u8], addrs: &[u64; HALF], out: &mut [u64; HALF]) -> bool {
    let first = addrs.first().copied().unwrap_or(0);
    // Both shapes tested in one pass that vectorises.
    let (mut same, mut row) = (true, true);
    for (l, &a) in (0u64..).zip(addrs) {
        same &= a == first;
        row &= a == first.wrapping_add(l * N as u64);
    }
    if same {
        let Some(v) = shared_value::<N>(shared, first) else { return false };
        *out = [v; HALF];
        return true;
    }
    if !row {
        return false;
    }
    let Some(bytes) = usize::try_from(first).ok().and_then(|a| shared.get(a..a.checked_add(N * HALF)?)) else {
        return false;
    };
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(N)) {
        *o = le_value::<N>(c);
    }
    true
}

/// `ld.shared` of `N` bytes: a whole warp whose half-warps each read a row or one value in
/// two slices, any other in one pass over the lanes that reads each lane's address before
/// it writes that lane's destination (so a destination that is also the address register
/// reads as the interpreter's copy of the addresses gives).
fn shared_load_step<const N: usize>(s: Scalar) -> StepFn {
    let (off, bits, signed, line) = (s.off, s.bits, s.signed, s.line);
    let (base, dst) = (s.base, s.dst.unwrap_or(u32::MAX));
    std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
        let regs = Cell::from_mut(regs).as_slice_of_cells();
        let shared: &[u8] = ctx.shared;
        let base = row_cells(regs, base);
        let out = row_cells(regs, dst);
        if mask == u32::MAX {
            // (Separate loops per half: a chained iterator does not vectorise.)
            let (b_lo, b_hi) = base.map_or((&[][..], &[][..]), |b| b.split_at(HALF));
            let (mut lo, mut hi) = ([off; HALF], [off; HALF]);
            for (a, c) in lo.iter_mut().zip(b_lo) {
                *a = c.get().wrapping_add(off);
            }
            for (a, c) in hi.iter_mut().zip(b_hi) {
                *a = c.get().wrapping_add(off);
            }
            let (mut v_lo, mut v_hi) = ([0u64; HALF], [0u64; HALF]);
            if shared_half::<N>(shared, &lo, &mut v_lo) && shared_half::<N>(shared, &hi, &mut v_hi) {
                if let Some(out) = out {
                    let (o_lo, o_hi) = out.split_at(HALF);
                    for (o, &v) in o_lo.iter().zip(&v_lo) {
                        o.set(loaded(v, bits, signed));
                    }
                    for (o, &v) in o_hi.iter().zip(&v_hi) {
                        o.set(loaded(v, bits, signed));
                    }
                }
                return Ok(());
            }
        }
        for l in lanes(mask) {
            let a = base.map_or(0, |b| RegLanes::lane(b, l)).wrapping_add(off);
            let v = shared_value::<N>(shared, a).ok_or(Fault::IllegalAddress { addr: a, line })?;
            if let Some(o) = out.and_then(|o| o.get(l)) {
                o.set(loaded(v, bits, signed));
            }
        }
        Ok(())
    })
}

/// `st.shared` of `N` bytes, lane by lane in lane order.
fn shared_store_step<const N: usize>(s: Scalar) -> StepFn {
    let (off, line) = (s.off, s.line);
    std::sync::Arc::new(move |regs: &mut [u64], ctx: &mut StepContext<'_>, mask: u32| {
        let base = row(regs, s.base);
        let value = |l: usize| match s.value {
            Some(Src::Reg(r)) => row(regs, r).map_or(0, |v| at(v, l)),
            Some(Src::Imm(v)) => v,
            None => 0,
        };
        for l in lanes(mask) {
            let a = base.map_or(0, |b| at(b, l)).wrapping_add(off);
            let cell = usize::try_from(a)
                .ok()
                .and_then(|x| ctx.shared.get_mut(x..x.checked_add(N)?))
                .ok_or(Fault::IllegalAddress { addr: a, line })?;
            if let Some(v) = value(l).to_le_bytes().get(..N) {
                cell.copy_from_slice(v);
            }
        }
        Ok(())
    })
}

/// The step of an arithmetic `inst`, if it has one: its destination a register, its sources
/// registers or immediates, and a form below.
fn arithmetic(inst: &Inst) -> Option<StepFn> {
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
                Op::Add => FOp::Add,
                Op::Sub => FOp::Sub,
                _ => FOp::Mul,
            };
            binary(d, src(1)?, src(2)?, move |a, b| f32_rn(op, a, b))
        }
        Op::Fma | Op::Mad(_) if f32_rn_plain && inst.neg == Negated::Neither => {
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
            let all_regs = !(a.2 || b.2 || c.2);
            std::sync::Arc::new(move |regs: &mut [u64], _: &mut StepContext<'_>, mask: u32| {
                if mask == u32::MAX && all_regs {
                    // The usual form, a whole warp and three registers: in place, no copies.
                    let cells = Cell::from_mut(regs).as_slice_of_cells();
                    if let (Some(x), Some(y), Some(z), Some(out)) =
                        (row_cells(cells, a.0), row_cells(cells, b.0), row_cells(cells, c.0), row_cells(cells, d))
                    {
                        fma_f32_cells(x, y, z, out);
                        return Ok(());
                    }
                }
                let (x, y, z) = (load(a, regs), load(b, regs), load(c, regs));
                if let Some(out) = row_mut(regs, d) {
                    fma_f32(&x, &y, &z, mask, out);
                }
                Ok(())
            })
        }
        Op::Cvta { to, sp } => {
            let window = cvta_window(sp);
            unary(d, src(1)?, move |a| cvta(a, window, to, mk))
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
