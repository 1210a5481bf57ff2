//! Running the texture and surface instructions: each lane's handle is looked up through
//! [`GlobalMemory::texture`](crate::GlobalMemory::texture) and its texels read through
//! the embedder's memory (`texture.rs` does the sampling).

use super::{Block, Flow, Warp, WarpSnap};
use crate::lanes::{at, lanes, row_mut, WARP};
use crate::memory::Fault;
use crate::module::{Inst, Op, Opd, K};
use crate::texture_desc::Texture;

impl Block<'_, '_> {
    /// The handle and coordinate operands of `[handle, {c...}]`.
    fn tex_operand(inst: &Inst, k: usize) -> Option<(&Opd, &[Opd])> {
        match inst.ops.get(k)? {
            Opd::List(v) => match (v.first()?, v.get(1)?) {
                (h, Opd::Vector(c)) => Some((h, c)),
                (h, c) => Some((h, std::slice::from_ref(c))),
            },
            // txq/suq: `[handle]`.
            h => Some((h, &[])),
        }
    }

    /// The values of `ops` (missing ones 0) in the lanes of `mask`.
    fn values<const N: usize>(&self, w: &Warp, ops: &[Opd], mask: u32) -> [[u64; WARP]; N] {
        let snap = WarpSnap { id: w.id, clock: w.clock };
        let mut out = [[0u64; WARP]; N];
        if let Some(f) = w.frames.last() {
            for (o, op) in out.iter_mut().zip(ops) {
                *o = self.gather(&snap, f, op, mask);
            }
        }
        out
    }

    /// Writes lane values `v[k]` to the `k`-th register of destination operand 0.
    fn write_dests(w: &mut Warp, inst: &Inst, mask: u32, v: &[[u64; WARP]]) {
        let regs: Vec<u32> = match inst.ops.first() {
            Some(Opd::Reg(r)) => vec![*r],
            Some(Opd::Vector(d)) => d.iter().map(|o| if let Opd::Reg(r) = o { *r } else { u32::MAX }).collect(),
            _ => Vec::new(),
        };
        let Some(f) = w.frames.last_mut() else { return };
        for (r, vals) in regs.iter().zip(v) {
            if let Some(row) = row_mut(&mut f.regs, *r) {
                for lane in lanes(mask) {
                    if let Some(x) = row.get_mut(lane) {
                        *x = at(vals, lane);
                    }
                }
            }
        }
    }

    /// The texture state of `handle`; a handle the embedder does not know faults.
    fn texture_of(&self, handle: u64, line: u32) -> Result<Texture, Fault> {
        self.l.mem.texture(handle).ok_or(Fault::IllegalAddress { addr: handle, line })
    }

    pub(super) fn texture_inst(&mut self, w: &mut Warp, inst: &Inst, mask: u32) -> Result<Flow, Fault> {
        let line = inst.line;
        let bad = |addr| Fault::IllegalAddress { addr, line };
        let (addr_k, data_k) = if matches!(inst.op, Op::Sust { .. }) { (0, 1) } else { (1, 0) };
        let Some((h, coords)) = Self::tex_operand(inst, addr_k) else { return Ok(Flow::Next) };
        let [handles] = self.values::<1>(w, std::slice::from_ref(h), mask);
        let c = self.values::<4>(w, coords, mask);
        let mem = self.l.mem;
        let mut out = [[0u64; WARP]; 4];
        match inst.op {
            Op::TexQuery(q) => {
                // txq/suq: the handle is operand 1 as `[h]`.
                let hv = match inst.ops.get(1) {
                    Some(o) => {
                        let [v] = self.values::<1>(w, std::slice::from_ref(o), mask);
                        v
                    }
                    None => handles,
                };
                for lane in lanes(mask) {
                    let t = self.texture_of(at(&hv, lane), line)?;
                    put(&mut out, 0, lane, u64::from(t.query(q)));
                }
            }
            Op::Tex { geom, .. } => {
                let float_coords = inst.ty2.k == K::F;
                for lane in lanes(mask) {
                    let t = self.texture_of(at(&handles, lane), line)?;
                    let v = |k: usize| c.get(k).map_or(0, |c| at(c, lane));
                    // Layered: {layer, x[, y, _]}.
                    let (layer, first) = if geom.layered() { (v(0), 1) } else { (0, 0) };
                    let dims = geom.dims();
                    let r = if geom.cube() {
                        let f = |k: usize| f32::from_bits(v(first + k) as u32);
                        t.sample_cube(mem, [f(0), f(1), f(2)], layer)
                    } else if float_coords {
                        let mut xs = [0f32; 3];
                        for (d, x) in xs.iter_mut().enumerate().take(dims) {
                            *x = f32::from_bits(v(first + d) as u32);
                        }
                        t.sample(mem, dims, xs, layer)
                    } else {
                        let mut xs = [0i32; 3];
                        for (d, x) in xs.iter_mut().enumerate().take(dims) {
                            *x = v(first + d) as u32 as i32;
                        }
                        t.fetch_int(mem, dims, xs, layer)
                    };
                    let r = r.ok_or_else(|| bad(t.base))?;
                    for (k, x) in r.into_iter().enumerate() {
                        put(&mut out, k, lane, u64::from(x));
                    }
                }
            }
            Op::Tld4(comp) => {
                for lane in lanes(mask) {
                    let t = self.texture_of(at(&handles, lane), line)?;
                    let f = |k: usize| f32::from_bits(c.get(k).map_or(0, |c| at(c, lane)) as u32);
                    let xy = [f(0), f(1)];
                    let r = t.gather(mem, comp.index(), xy).ok_or_else(|| bad(t.base))?;
                    for (k, x) in r.into_iter().enumerate() {
                        put(&mut out, k, lane, u64::from(x));
                    }
                }
            }
            Op::Suld { geom, oob } | Op::Sust { geom, oob } => {
                let load = matches!(inst.op, Op::Suld { .. });
                let es = inst.ty.bytes().max(1) as u64;
                let n = inst.vec.max(1) as usize;
                let data = if load {
                    [[0u64; WARP]; 4]
                } else {
                    match inst.ops.get(data_k) {
                        Some(Opd::Vector(d)) => self.values::<4>(w, d, mask),
                        Some(o) => {
                            let [v] = self.values::<1>(w, std::slice::from_ref(o), mask);
                            [v, [0; WARP], [0; WARP], [0; WARP]]
                        }
                        None => return Ok(Flow::Next),
                    }
                };
                for lane in lanes(mask) {
                    let t = self.texture_of(at(&handles, lane), line)?;
                    let v = |k: usize| c.get(k).map_or(0, |c| at(c, lane)) as u32 as i32;
                    let (layer, first) = if geom.layered() { (Some(v(0)), 1) } else { (None, 0) };
                    let size = es * n as u64;
                    // The H200: a byte x that is not a multiple of the access's element
                    // size faults (misaligned address), whatever the out-of-range mode.
                    if i64::from(v(first)).rem_euclid(es as i64) != 0 {
                        return Err(Fault::MisalignedAddress { addr: at(&handles, lane), line });
                    }
                    let a = t
                        .surface_address(geom.dims(), v(first), [v(first + 1), v(first + 2)], layer, size, oob)
                        .map_err(|()| Fault::IllegalAddress { addr: at(&handles, lane), line })?;
                    let Some(a) = a else { continue };
                    for k in 0..n {
                        let addr = a + k as u64 * es;
                        let mut b = [0u8; 8];
                        let bytes = b.get_mut(..es as usize).unwrap_or(&mut []);
                        if load {
                            mem.read(addr, bytes).map_err(|e| bad(e.addr))?;
                            put(&mut out, k, lane, u64::from_le_bytes(b));
                        } else {
                            let src = data.get(k).map_or(0, |d| at(d, lane)).to_le_bytes();
                            bytes.copy_from_slice(src.get(..es as usize).unwrap_or(&[]));
                            mem.write(addr, bytes).map_err(|e| bad(e.addr))?;
                        }
                    }
                }
                if !load {
                    return Ok(Flow::Next);
                }
            }
            _ => return Ok(Flow::Next),
        }
        Self::write_dests(w, inst, mask, &out);
        Ok(Flow::Next)
    }
}

/// Sets lane `lane` of row `k`.
fn put(out: &mut [[u64; WARP]; 4], k: usize, lane: usize, v: u64) {
    if let Some(x) = out.get_mut(k).and_then(|r| r.get_mut(lane)) {
        *x = v;
    }
}
