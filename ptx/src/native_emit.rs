//! A run's machine code, emitted through Cranelift's function builder: the run over a
//! warp's register rows lane after lane (two lanes at a time where it can), turned again
//! while a loop's branch back holds in every lane ([`build`]), and the addresses its checked
//! accesses will have ([`build_addresses`]).

use std::collections::{BTreeSet, HashMap};

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

use crate::alu::{mask_of, IntOrder};
use crate::float::FOp;
use crate::lanes::{LaunchView, WARP};
use crate::native_forms::{Calc, Run, Src};

/// Emits `run`: turns of a loop over the rows' lanes (`ty`'s lanes at a time), each
/// loading the registers the run reads before writing, computing, and storing every
/// register it writes. A run that is a loop's body turns again while the branch back holds
/// in every lane, at most `max_turns` times (the function's second argument); the function
/// answers how many turns it made (the branch after the last is left to the caller).
/// `None` where a value is out of the code's reach.
pub(crate) fn build(b: &mut FunctionBuilder<'_>, run: &Run, ty: Type) -> Option<()> {
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
    let (kparams, tids, fine) = launch_values(b, run, view)?;
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
            Calc::LdShared { base, off, n, .. } if !p.computed => Some((base, off, n)),
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

/// The launch's parameters and `%tid`s (the addresses of their first bytes), and whether it
/// holds what `run` reads of them: every parameter it loads inside the parameters, and a
/// `%tid` for every lane (else nothing runs: the steps fault or read as the interpreter
/// does).
fn launch_values(b: &mut FunctionBuilder<'_>, run: &Run, view: Value) -> Option<(Value, Value, Value)> {
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
    Some((kparams, tids, fine))
}

/// Emits `run`'s [`AddressFn`](crate::lanes::AddressFn): lane after lane, its instructions but loads and stores
/// (which no address depends on: `fuse` ends a run before an access whose base comes from
/// a load of it), each checked access's address written to the output instead.
pub(crate) fn build_addresses(b: &mut FunctionBuilder<'_>, run: &Run) -> Option<()> {
    let entry = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(body, types::I64);
    b.append_block_param(exit, types::I64);
    b.switch_to_block(entry);
    let (regs, view, out) = match b.block_params(entry) {
        [r, v, o] => (*r, *v, *o),
        _ => return None,
    };
    let (kparams, tids, fine) = launch_values(b, run, view)?;
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().brif(fine, body, &[zero.into()], exit, &[zero.into()]);

    b.switch_to_block(body);
    let off = *b.block_params(body).first()?;
    let mut e = Emit {
        ty: types::I64,
        base: b.ins().iadd(regs, off),
        off,
        shared: zero,
        view,
        kparams,
        tids,
        globals: zero,
        next_global: 0,
        values: HashMap::new(),
        known: HashMap::new(),
        floats: HashMap::new(),
    };
    let lane_out = b.ins().iadd(out, off);
    let mut k = 0i32;
    for p in &run.pures {
        if let (Some(_), Some((base, off))) = (p.checked(), p.access()) {
            let a = e.get(b, Src::Reg(base))?;
            let a = b.ins().iadd_imm_s(a, off as i64);
            b.ins().store(FLAGS, a, lane_out, k.checked_mul((WARP * 8) as i32)?);
            k += 1;
        }
        if p.access().is_some() {
            continue;
        }
        let v = e.calc(b, p.calc)?;
        if let Some(d) = p.d {
            e.values.insert(d, v);
        }
    }
    let next = b.ins().iadd_imm_s(off, 8);
    let more = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, next, (WARP * 8) as i64);
    let one = b.ins().iconst(types::I64, 1);
    b.ins().brif(more, body, &[next.into()], exit, &[one.into()]);
    b.switch_to_block(exit);
    let r = *b.block_params(exit).first()?;
    b.ins().return_(&[r]);
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
