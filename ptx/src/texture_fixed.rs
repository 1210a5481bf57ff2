//! Linear filtering of 8- and 16-bit formats read normalised, in the fixed point the
//! H200's texture unit uses, fitted to the texture probe's recording
//! (`scripts/probes/texture/probe.c`, `docs/gpu-runs/h200/texture-probe-2026-12-05.txt`):
//!
//! - each texel is widened to 16 bits: unsigned 8-bit `v * 257`, signed 8-bit exactly
//!   `v * 33025 / 128` (`v * 258.0078125`, its 7 fractional bits kept), 16-bit formats as
//!   they are (the border colour is first quantised to the format, as for a point read);
//!   the widened values are held in 1/128 ([`WIDEN_BITS`]);
//! - each dimension's weight has 8 fractional bits; each product of two or three
//!   dimensions' weights is rounded to 1/256 (ties up) and a corner weighs their
//!   multilinear (inclusion-exclusion) sum ([`corner_weight`], float formats too);
//! - the weighted sum is rounded once to an integer (ties up) and divided by 65535
//!   (unsigned) or 32767 (signed, clamped to -1).
//!
//! Float formats are filtered in f32 (`texture.rs`). Against the recording, this model
//! gives the H200's bits in every 1D, 2D and 3D probe line of u8, u16 and s16, and in all
//! but 3 s8 lines (`standin/tests/data/texture-probe-differences.txt`: `s8 border
//! linear` at y = 1.25195312, where the H200's sum is one unit below the rounded exact
//! one).

use crate::memory::GlobalMemory;
use crate::texture_desc::{Format, Texture};

/// The fractional bits of a widened value: signed 8-bit widening (`v * 33025 / 128`) is
/// kept exact and the weighted sum rounded once.
const WIDEN_BITS: u32 = 7;

/// Signed 8-bit widening: exactly `v * 33025 / 128`, in 1/128.
fn widen_s8(v: i64) -> i64 {
    v * 33025
}

impl Format {
    /// The divisor of the widened value (its 1.0), for the formats filtered in fixed
    /// point; `None` for the others.
    pub(crate) fn fixed_one(self) -> Option<i64> {
        match self {
            Format::U8 | Format::U16 => Some(65535),
            Format::S8 | Format::S16 => Some(32767),
            _ => None,
        }
    }

    /// A channel's raw bits (as `Texture::texel_raw` reads them) widened to 16 bits, in
    /// 1/128 ([`WIDEN_BITS`]).
    fn widen(self, raw: u32) -> i64 {
        match self {
            Format::U8 => (i64::from(raw & 0xff) * 257) << WIDEN_BITS,
            Format::S8 => widen_s8(i64::from(raw as u8 as i8)),
            Format::S16 => i64::from(raw as u16 as i16) << WIDEN_BITS,
            _ => i64::from(raw & 0xffff) << WIDEN_BITS,
        }
    }

    /// A border colour channel (already quantised to the format, as a float) widened, in
    /// 1/128.
    fn widen_float(self, f: f32) -> i64 {
        let q = |m: f32| (f64::from(f) * f64::from(m)).round() as i64;
        match self {
            Format::U8 => (q(255.0) * 257) << WIDEN_BITS,
            Format::S8 => widen_s8(q(127.0)),
            Format::S16 => q(32767.0) << WIDEN_BITS,
            _ => q(65535.0) << WIDEN_BITS,
        }
    }
}

/// The fractional bits of a corner weight ([`corner_weight`]).
pub(crate) const WEIGHT_BITS: u32 = 8;

/// The weight of the dimensions in `set` (bit `d`: dimension `d`) all taking their upper
/// texel: the product of their weights `a` (each of 256) rounded to 1/256, ties up (the
/// empty set weighs 256, one dimension its own weight).
fn weight_of_set(set: usize, a: [i64; 3]) -> i64 {
    let mut product = 1i64;
    let mut factors = 0u32;
    for (d, ad) in a.iter().enumerate() {
        if set >> d & 1 == 1 {
            product *= ad;
            factors += 1;
        }
    }
    match factors {
        0 => 256,
        n => {
            let shift = 8 * (n - 1);
            (product + (1i64 << shift >> 1)) >> shift
        }
    }
}

/// Corner `corner` (bit `d` set: the upper texel in dimension `d`) of linear filtering
/// from `i0` with weights `a` (of 256) per dimension: its weight in 1/256 and its texel
/// indices. The H200 weighs in the multilinear form (2D: `v00 + ax (v10 - v00) + ay (v01 -
/// v00) + ax ay (v11 - v10 - v01 + v00)`) with each product of weights rounded to 1/256
/// ([`weight_of_set`]), so a corner weighs the inclusion-exclusion sum of the rounded
/// products over the dimensions' sets that hold its upper dimensions: at ax = 128,
/// ay = 193 the weights are 32, 31, 96, 97 (the upper corner's 96.5 rounded up, the
/// others what is left of each dimension's weight), where rounding each corner's own
/// product (31.5, 31.5, 96.5, 96.5) could not give them. Float formats are weighed so too.
pub(crate) fn corner_weight(dims: usize, corner: usize, i0: [i64; 3], a: [i64; 3]) -> Option<(i64, [i64; 3])> {
    let mut i = i0;
    for (d, i) in i.iter_mut().enumerate().take(dims) {
        *i += i64::from(corner >> d & 1 == 1);
    }
    let mut w = 0i64;
    for set in 0..(1usize << dims) {
        if set & corner == corner {
            let sign = if (set.count_ones() - corner.count_ones()) % 2 == 0 { 1 } else { -1 };
            w += sign * weight_of_set(set, a);
        }
    }
    Some((w, i))
}

impl Texture {
    /// The texel at indices `i` of `layer`, widened (the border colour outside in border
    /// mode).
    fn fetch_widened(&self, mem: &dyn GlobalMemory, dims: usize, i: [i64; 3], layer: u64) -> Option<[i64; 4]> {
        match self.element_of(dims, i) {
            Some(e) => Some(self.texel_raw(mem, e, layer)?.map(|u| self.format.widen(u))),
            None => Some(self.border_value().map(|b| self.format.widen_float(f32::from_bits(b)))),
        }
    }

    /// Linear filtering in fixed point (the module's note) of the `2^dims` texels from
    /// `i0`, with weights `a` (of 256) per dimension: the four channels' f32 bits. The sum
    /// is in 1/(256 * 128) and rounded once, ties up.
    pub(crate) fn filter_fixed(
        &self,
        mem: &dyn GlobalMemory,
        dims: usize,
        i0: [i64; 3],
        a: [i64; 3],
        layer: u64,
    ) -> Option<[u32; 4]> {
        let one = self.format.fixed_one()?;
        let mut acc = [0i64; 4];
        for corner in 0..(1usize << dims) {
            let (w, i) = corner_weight(dims, corner, i0, a)?;
            let t = self.fetch_widened(mem, dims, i, layer)?;
            for (s, v) in acc.iter_mut().zip(t) {
                *s += w * v;
            }
        }
        let signed = one == 32767;
        let bits = WEIGHT_BITS + WIDEN_BITS;
        Some(acc.map(|s| {
            let r = (s + (1 << (bits - 1))).div_euclid(1 << bits);
            let f = (r as f64 / one as f64) as f32;
            if signed { f.max(-1.0) } else { f }.to_bits()
        }))
    }
}
