//! Linear filtering of 8- and 16-bit formats read normalised, in the fixed point the
//! H200's texture unit uses, fitted to the texture probe's recording
//! (`scripts/probes/texture/probe.c`, `docs/gpu-runs/h200/texture-probe-2026-12-05.txt`):
//!
//! - each texel is widened to 16 bits: unsigned 8-bit `v * 257`, signed 8-bit
//!   `v * 258.0078125` rounded to even, 16-bit formats as they are (the border colour is
//!   first quantised to the format, as for a point read);
//! - each corner's weight is the product of the per-dimension weights (8 fractional bits)
//!   rounded to 1/512, ties to even ([`corner_weight`], float formats too);
//! - the weighted sum is rounded to an integer (ties up) and divided by 65535 (unsigned)
//!   or 32767 (signed, clamped to -1).
//!
//! Float formats are filtered in f32 (`texture.rs`). Against the recording, this model
//! gives the H200's bits in 126 of 128 clamp-mode probe lines of each of u8, u16 and s16,
//! and 109 of 128 of s8 (the rest 1-2 units of the 16-bit intermediate away).

use crate::memory::GlobalMemory;
use crate::texture_desc::{Format, Texture};

/// Signed 8-bit widening: `v * 33025 / 128` rounded to even.
fn widen_s8(v: i64) -> i64 {
    round_even(v * 33025, 7)
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

    /// A channel's raw bits (as `Texture::texel_raw` reads them) widened to 16 bits.
    fn widen(self, raw: u32) -> i64 {
        match self {
            Format::U8 => i64::from(raw & 0xff) * 257,
            Format::S8 => widen_s8(i64::from(raw as u8 as i8)),
            Format::S16 => i64::from(raw as u16 as i16),
            _ => i64::from(raw & 0xffff),
        }
    }

    /// A border colour channel (already quantised to the format, as a float) widened.
    fn widen_float(self, f: f32) -> i64 {
        let q = |m: f32| (f64::from(f) * f64::from(m)).round() as i64;
        match self {
            Format::U8 => q(255.0) * 257,
            Format::S8 => widen_s8(q(127.0)),
            Format::S16 => q(32767.0),
            _ => q(65535.0),
        }
    }
}

/// `a / 2^shift` rounded to the nearest integer, ties to even.
fn round_even(a: i64, shift: u32) -> i64 {
    let (q, r, half) = (a >> shift, a & ((1 << shift) - 1), 1i64 << shift >> 1);
    match r.cmp(&half) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => q + (q & 1),
        std::cmp::Ordering::Less => q,
    }
}

/// The fractional bits of a corner weight ([`corner_weight`]) for `dims` dimensions.
pub(crate) fn weight_bits(dims: usize) -> u32 {
    if dims == 3 {
        24
    } else {
        9
    }
}

/// Corner `corner` (bit `d` set: the upper texel in dimension `d`) of linear filtering
/// from `i0` with weights `a` (of 256) per dimension: its weight in units of
/// `2^-weight_bits(dims)` and its texel indices. In 2D the product of the dimensions'
/// weights is rounded to 9 fractional bits, ties to even, as the H200 weighs every format;
/// 1D and 3D weights are exact (3D: the probe's few 3D lines do not show the rounding).
pub(crate) fn corner_weight(dims: usize, corner: usize, i0: [i64; 3], a: [i64; 3]) -> Option<(i64, [i64; 3])> {
    let (mut w, mut i) = (1i64, i0);
    for d in 0..dims {
        let hi = corner >> d & 1 == 1;
        let ad = *a.get(d)?;
        w *= if hi { ad } else { 256 - ad };
        *i.get_mut(d)? += i64::from(hi);
    }
    let w = match dims {
        1 => w * 2,
        2 => round_even(w, 7),
        _ => w,
    };
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
    /// `i0`, with weights `a` (of 256) per dimension: the four channels' f32 bits.
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
        let bits = weight_bits(dims);
        Some(acc.map(|s| {
            let r = (s + (1 << (bits - 1))).div_euclid(1 << bits);
            let f = (r as f64 / one as f64) as f32;
            if signed { f.max(-1.0) } else { f }.to_bits()
        }))
    }
}
