//! Texture and surface instructions (`tex`, `tld4`, `txq`, `suld.b`, `sust.b`, `suq`): the
//! state an embedder gives for a 64-bit handle ([`Texture`], through
//! [`GlobalMemory::texture`]) and the sampling the GPU does with it.
//!
//! Sampling follows the CUDA C++ Programming Guide's "Texture Fetching" appendix: point
//! filtering reads `T[floor(x)]`; linear filtering reads the 2 (4, 8) texels around
//! `x - 0.5` with weights in 9-bit fixed point (8 fractional bits, so 1.0 is exact); the
//! address mode of each dimension decides texel indices outside the texture (wrap and
//! mirror only with normalised coordinates, else clamp).

use crate::memory::GlobalMemory;
use crate::texture_desc::{Address, Format, Texture};

/// A normalised coordinate `u` scaled to an extent of `n` texels: the H200 takes `u` to 24
/// fractional bits (to nearest) first, so that `0.100390628 * 5` falls just below
/// `0.5 + 1/512` (texture probe, `wrap linear norm` lines).
fn denormalise(u: f32, n: u64) -> f32 {
    const SCALE: f64 = (1u64 << 24) as f64;
    ((f64::from(u) * SCALE).round() / SCALE * n as f64) as f32
}

/// `v` rounded to f16 precision, to nearest with ties away from zero: the H200 rounds a
/// filtered f16 texture's value so (texels -10 and -7 weighed 255 and 1 of 256 give
/// -9.98828125, halfway between f16 neighbours, and read -9.9921875).
fn to_f16_ties_away(v: f32) -> f32 {
    use crate::float::{from_f64, Fmt, Rnd};
    let x = f64::from(v);
    let nearest = Fmt::F16.to_f64(from_f64(x, Rnd::Rn, Fmt::F16));
    let toward_zero = Fmt::F16.to_f64(from_f64(x, Rnd::Rz, Fmt::F16));
    let away = Fmt::F16.to_f64(from_f64(x, if x < 0.0 { Rnd::Rm } else { Rnd::Rp }, Fmt::F16));
    // f32 and f16 values and their differences are exact in f64.
    let r = if toward_zero != away && x - toward_zero == away - x { away } else { nearest };
    r as f32
}

impl Texture {
    /// Bytes of one element.
    pub fn element_bytes(&self) -> u64 {
        self.format.bytes() * u64::from(self.channels.max(1))
    }

    /// Whether a read returns floats (float formats, or integer formats read normalised).
    pub fn reads_float(&self) -> bool {
        match self.format {
            Format::F16 | Format::F32 => true,
            Format::U32 | Format::S32 => false,
            _ => !self.read_as_integer,
        }
    }

    /// The OpenCL `cl_channel_type` `txq.channel_data_type` and `suq` answer.
    pub fn channel_data_type(&self) -> u32 {
        let norm = !self.read_as_integer;
        match self.format {
            Format::S8 if norm => 0x10D0,
            Format::S16 if norm => 0x10D1,
            Format::U8 if norm => 0x10D2,
            Format::U16 if norm => 0x10D3,
            Format::S8 => 0x10D7,
            Format::S16 => 0x10D8,
            Format::S32 => 0x10D9,
            Format::U8 => 0x10DA,
            Format::U16 => 0x10DB,
            Format::U32 => 0x10DC,
            Format::F16 => 0x10DD,
            Format::F32 => 0x10DE,
        }
    }

    /// The OpenCL `cl_channel_order` (`CL_R`, `CL_RG`, `CL_RGBA`).
    pub fn channel_order(&self) -> u32 {
        match self.channels {
            1 => 0x10B0,
            2 => 0x10B2,
            _ => 0x10B5,
        }
    }

    /// The device address of element `i` (x, y, z) of `layer`; indices inside the texture.
    fn element_address(&self, i: [u64; 3], layer: u64) -> u64 {
        let [x, y, z] = i;
        self.base
            .wrapping_add(layer.wrapping_add(z).wrapping_mul(self.slice))
            .wrapping_add(y.wrapping_mul(self.pitch))
            .wrapping_add(x.wrapping_mul(self.element_bytes()))
    }

    /// The raw bits of the four channels of the element at `i` of `layer` (absent channels
    /// 0).
    pub(crate) fn texel_raw(&self, mem: &dyn GlobalMemory, i: [u64; 3], layer: u64) -> Option<[u32; 4]> {
        let cb = self.format.bytes() as usize;
        let n = usize::from(self.channels.clamp(1, 4));
        let mut raw = [0u8; 16];
        mem.read(self.element_address(i, layer), raw.get_mut(..cb * n)?).ok()?;
        let mut out = [0u32; 4];
        for (c, o) in out.iter_mut().enumerate().take(n) {
            let mut w = [0u8; 4];
            w.get_mut(..cb)?.copy_from_slice(raw.get(c * cb..(c + 1) * cb)?);
            *o = u32::from_le_bytes(w);
        }
        Some(out)
    }

    /// The four channels of the element at `i` of `layer`, as 32-bit values the read mode
    /// gives (floats' bit patterns, or integers); absent channels 0 (alpha too: the H200
    /// returns (v, 0, 0, 0) for a 1-channel texture).
    fn texel(&self, mem: &dyn GlobalMemory, i: [u64; 3], layer: u64) -> Option<[u32; 4]> {
        let n = usize::from(self.channels.clamp(1, 4));
        let float = self.reads_float();
        let mut out = self.texel_raw(mem, i, layer)?;
        for o in out.iter_mut().take(n) {
            let u = *o;
            *o = match (self.format, float) {
                (Format::F32, _) => u,
                (Format::F16, _) => (crate::float::Fmt::F16.to_f64(u64::from(u)) as f32).to_bits(),
                (Format::U8, true) => (u as f32 / 255.0).to_bits(),
                (Format::U16, true) => (u as f32 / 65535.0).to_bits(),
                (Format::S8, true) => ((u as u8 as i8) as f32 / 127.0).max(-1.0).to_bits(),
                (Format::S16, true) => ((u as u16 as i16) as f32 / 32767.0).max(-1.0).to_bits(),
                (Format::S8, false) => (u as u8 as i8) as i32 as u32,
                (Format::S16, false) => (u as u16 as i16) as i32 as u32,
                _ => u,
            };
        }
        Some(out)
    }

    /// The element index for texel index `i` in dimension `d` under its address mode;
    /// `None` outside in border mode.
    fn index(&self, d: usize, i: i64) -> Option<u64> {
        let n = i64::try_from(self.extent.get(d).copied().unwrap_or(1).max(1)).unwrap_or(i64::MAX);
        let mode = self.address.get(d).copied().unwrap_or_default();
        let at = match mode {
            Address::Wrap if self.normalized => i.rem_euclid(n),
            Address::Mirror if self.normalized => {
                let m = i.rem_euclid(2 * n);
                if m < n {
                    m
                } else {
                    2 * n - 1 - m
                }
            }
            Address::Border if !(0..n).contains(&i) => return None,
            _ => i.clamp(0, n - 1),
        };
        u64::try_from(at).ok()
    }

    /// The texel at indices `i` (per dimension, before addressing) of `layer`: the border
    /// colour outside in border mode.
    fn fetch(&self, mem: &dyn GlobalMemory, dims: usize, i: [i64; 3], layer: u64) -> Option<[u32; 4]> {
        match self.element_of(dims, i) {
            Some(e) => self.texel(mem, e, layer),
            None => Some(self.border_value()),
        }
    }

    /// The element of texel indices `i` (the first `dims`, before addressing); `None`
    /// outside the texture in border mode.
    pub(crate) fn element_of(&self, dims: usize, i: [i64; 3]) -> Option<[u64; 3]> {
        let mut e = [0u64; 3];
        for (d, (e, i)) in e.iter_mut().zip(i).enumerate().take(dims) {
            *e = self.index(d, i)?;
        }
        Some(e)
    }

    /// The border colour as the read mode returns it (H200): only the texture's channels
    /// (the others 0); 32-bit formats return the colour's bit patterns unconverted; 8- and
    /// 16-bit formats read as integers return 0; read normalised, the colour is first
    /// clamped and quantised to the format (nearest, ties toward -infinity).
    pub(crate) fn border_value(&self) -> [u32; 4] {
        let n = usize::from(self.channels.clamp(1, 4));
        let float = self.reads_float();
        let quant = |f: f32, m: f32, lo: f32| {
            let f = if f.is_nan() { 0.0 } else { f.clamp(lo, 1.0) };
            let q = (f64::from(f) * f64::from(m) - 0.5).ceil() as f32;
            ((q / m).max(-1.0) + 0.0).to_bits()
        };
        let mut out = [0u32; 4];
        for (o, b) in out.iter_mut().zip(self.border).take(n) {
            let f = f32::from_bits(b);
            *o = match (self.format, float) {
                (Format::U32 | Format::S32 | Format::F32 | Format::F16, _) => b,
                (_, false) => 0,
                (Format::U8, true) => quant(f, 255.0, 0.0),
                (Format::U16, true) => quant(f, 65535.0, 0.0),
                (Format::S8, true) => quant(f, 127.0, -1.0),
                (Format::S16, true) => quant(f, 32767.0, -1.0),
            };
        }
        out
    }

    /// The layer a layered read's integer layer selects (as unsigned, clamped to the
    /// layers).
    fn layer(&self, l: u64) -> u64 {
        if self.layers == 0 {
            0
        } else {
            // The H200 reads the layer as unsigned: -1 selects the last layer.
            u64::from(l as u32).min(self.layers - 1)
        }
    }

    /// `tex` with float coordinates `c` (the first `dims`), in `layer`: the four result
    /// channels as 32-bit patterns; `None` if a texel read fails.
    pub(crate) fn sample(&self, mem: &dyn GlobalMemory, dims: usize, c: [f32; 3], layer: u64) -> Option<[u32; 4]> {
        let layer = self.layer(layer);
        let mut x = [0f32; 3];
        for d in 0..dims {
            let v = *c.get(d)?;
            *x.get_mut(d)? = if self.normalized { denormalise(v, self.extent.get(d).copied().unwrap_or(1)) } else { v };
        }
        if !self.linear || !self.reads_float() {
            let i = x.map(|v| v.floor() as i64);
            return self.fetch(mem, dims, i, layer);
        }
        // Linear: the 2^dims texels around x - 0.5, weights in 1.8 fixed point.
        let mut i0 = [0i64; 3];
        let mut a8 = [0i64; 3];
        for d in 0..dims {
            let xb = *x.get(d)? - 0.5;
            let f = xb.floor();
            *i0.get_mut(d)? = f as i64;
            *a8.get_mut(d)? = ((xb - f) * 256.0).round() as i64;
        }
        let border_1d = dims == 1 && self.address.get(1) == Some(&Address::Border);
        if border_1d {
            // Filtered as 2D at y = 0 (below), the H200 keeps 7 bits of the x weight, the
            // odd 1/256 rounded up (x - 0.5 = 1/512 weighs 2/256; 125.44/256 weighs 126).
            if let Some(a) = a8.first_mut() {
                *a = (*a + 1) / 2 * 2;
            }
        }
        if self.format.fixed_one().is_some() {
            // A 1D texture in border mode is filtered as 2D at y = 0 (below): half the
            // weight on row -1, the border colour.
            if border_1d {
                return self.filter_fixed(mem, 2, [i0[0], -1, 0], [a8[0], 128, 0], layer);
            }
            return self.filter_fixed(mem, dims, i0, a8, layer);
        }
        let mut acc = [0f32; 4];
        for corner in 0..(1usize << dims) {
            let (w, i) = crate::texture_fixed::corner_weight(dims, corner, i0, a8)?;
            let w = (w as f64 / f64::from(1u32 << crate::texture_fixed::WEIGHT_BITS)) as f32;
            let t = self.fetch(mem, dims, i, layer)?;
            for (s, v) in acc.iter_mut().zip(t) {
                *s += w * f32::from_bits(v);
            }
        }
        if border_1d {
            // The H200 filters a 1D texture as 2D at y = 0: half the weight goes to row
            // -1, which in border mode is the border colour.
            for (s, b) in acc.iter_mut().zip(self.border_value()) {
                *s = 0.5 * *s + 0.5 * f32::from_bits(b);
            }
        }
        if self.format == Format::F16 {
            // The H200 filters f16 textures to f16 precision.
            for v in acc.iter_mut() {
                *v = to_f16_ties_away(*v);
            }
        }
        Some(acc.map(f32::to_bits))
    }

    /// `tex.cube`/`tex.acube` with direction `c` in cube `cube` (0 for `tex.cube`): the
    /// face of the direction's major axis (ties: z before y before x), the point on it as
    /// normalised 2D coordinates, sampled as layer `6 * cube + face` with clamping.
    pub(crate) fn sample_cube(&self, mem: &dyn GlobalMemory, c: [f32; 3], cube: u64) -> Option<[u32; 4]> {
        let [x, y, z] = c;
        let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
        // Ties go to the later axis (z before y before x), as the H200 picks.
        let (face, m, s, t) = if ax > ay && ax > az {
            if x >= 0.0 {
                (0, ax, -z, -y)
            } else {
                (1, ax, z, -y)
            }
        } else if ay > az {
            if y >= 0.0 {
                (2, ay, x, z)
            } else {
                (3, ay, x, -z)
            }
        } else if z >= 0.0 {
            (4, az, x, -y)
        } else {
            (5, az, -x, -y)
        };
        let u = (s / m + 1.0) * 0.5;
        let v = (t / m + 1.0) * 0.5;
        let face_tex = Texture { normalized: true, address: [Address::Clamp; 3], ..*self };
        // The cube index is clamped to the cubes first (as unsigned), then the face added.
        let cubes = (self.layers / 6).max(1);
        let cube = u64::from(cube as u32).min(cubes - 1);
        face_tex.sample(mem, 2, [u, v, 0.0], cube * 6 + face as u64)
    }

    /// `tex` with integer coordinates (`tex1Dfetch`): element `c` read with no filtering;
    /// outside the texture all channels read 0.
    pub(crate) fn fetch_int(&self, mem: &dyn GlobalMemory, dims: usize, c: [i32; 3], layer: u64) -> Option<[u32; 4]> {
        let mut e = [0u64; 3];
        for d in 0..dims {
            let v = i64::from(*c.get(d)?);
            let n = self.extent.get(d).copied().unwrap_or(1);
            match u64::try_from(v) {
                Ok(v) if v < n => *e.get_mut(d)? = v,
                _ => return Some([0; 4]),
            }
        }
        self.texel(mem, e, self.layer(layer))
    }

    /// `tld4.comp.2d`: channel `comp` of the 2x2 texels bilinear filtering would read
    /// around (x, y), in the order (i, j+1), (i+1, j+1), (i+1, j), (i, j).
    pub(crate) fn gather(&self, mem: &dyn GlobalMemory, comp: usize, c: [f32; 2]) -> Option<[u32; 4]> {
        let mut i0 = [0i64; 2];
        for d in 0..2 {
            let mut v = *c.get(d)?;
            if self.normalized {
                v = denormalise(v, self.extent.get(d).copied().unwrap_or(1));
            }
            *i0.get_mut(d)? = (v - 0.5).floor() as i64;
        }
        let [i, j] = i0;
        let mut out = [0u32; 4];
        for (o, (dx, dy)) in out.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
            let t = self.fetch(mem, 2, [i + dx, j + dy, 0], 0)?;
            *o = *t.get(comp)?;
        }
        Some(out)
    }

    /// `txq.query` / `suq.query`: the attribute's value; `None` for an unknown query.
    pub(crate) fn query(&self, q: Query) -> u32 {
        let ptx_mode = |m: Address| match m {
            Address::Wrap => 0,
            Address::Mirror => 1,
            Address::Clamp => 3,
            Address::Border => 4,
        };
        let dim = |d: usize| u32::try_from(self.extent.get(d).copied().unwrap_or(1)).unwrap_or(u32::MAX);
        match q {
            Query::Width => dim(0),
            Query::Height => dim(1),
            Query::Depth => {
                if self.layers > 0 {
                    u32::try_from(self.layers).unwrap_or(u32::MAX)
                } else {
                    dim(2)
                }
            }
            Query::ChannelDataType => self.channel_data_type(),
            Query::ChannelOrder => self.channel_order(),
            Query::NormalizedCoords => u32::from(self.normalized),
            Query::FilterMode => u32::from(self.linear),
            Query::AddrMode(d) => ptx_mode(self.address.get(usize::from(d)).copied().unwrap_or_default()),
            Query::MipmapLevels => self.levels.max(1),
            Query::Samples => 0,
        }
    }

    /// The byte address a surface access of `size` bytes at byte x `x`, rows/slices `yz`
    /// and `layer` reaches under `oob`; `Ok(None)` for an access dropped (`.zero`), `Err`
    /// for one that traps.
    pub(crate) fn surface_address(
        &self,
        dims: usize,
        x: i32,
        yz: [i32; 2],
        layer: Option<i32>,
        size: u64,
        oob: Oob,
    ) -> Result<Option<u64>, ()> {
        let row = self.extent.first().copied().unwrap_or(1) * self.element_bytes();
        let mut idx = [0u64; 3];
        let limits = [
            row.saturating_sub(size),
            self.extent.get(1).copied().unwrap_or(1) - 1,
            self.extent.get(2).copied().unwrap_or(1) - 1,
        ];
        let coords = [x, *yz.first().unwrap_or(&0), *yz.get(1).unwrap_or(&0)];
        for d in 0..dims {
            let v = i64::from(*coords.get(d).unwrap_or(&0));
            let hi = i64::try_from(*limits.get(d).unwrap_or(&0)).unwrap_or(i64::MAX);
            let v = if (0..=hi).contains(&v) {
                v
            } else {
                match oob {
                    Oob::Trap => return Err(()),
                    Oob::Zero => return Ok(None),
                    Oob::Clamp => v.clamp(0, hi),
                }
            };
            *idx.get_mut(d).unwrap_or(&mut 0) = v as u64;
        }
        let mut l = 0u64;
        if let Some(layer) = layer {
            let hi = i64::try_from(self.layers.max(1) - 1).unwrap_or(i64::MAX);
            // The layer is unsigned: -1 is past the last layer (clamp: the last).
            let v = i64::from(layer as u32);
            l = if (0..=hi).contains(&v) {
                v as u64
            } else {
                match oob {
                    Oob::Trap => return Err(()),
                    Oob::Zero => return Ok(None),
                    Oob::Clamp => v.clamp(0, hi) as u64,
                }
            };
        }
        let [bx, y, z] = idx;
        let bx = bx - bx % size.max(1);
        Ok(Some(
            self.base
                .wrapping_add(l.wrapping_add(z).wrapping_mul(self.slice))
                .wrapping_add(y.wrapping_mul(self.pitch))
                .wrapping_add(bx),
        ))
    }
}

/// A `txq` or `suq` query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Query {
    Width,
    Height,
    Depth,
    ChannelDataType,
    ChannelOrder,
    NormalizedCoords,
    FilterMode,
    AddrMode(u8),
    MipmapLevels,
    Samples,
}

impl Query {
    /// The query a `txq`/`suq` modifier names.
    pub(crate) fn parse(m: &str) -> Option<Query> {
        Some(match m {
            "width" => Query::Width,
            "height" => Query::Height,
            "depth" => Query::Depth,
            "channel_data_type" => Query::ChannelDataType,
            "channel_order" => Query::ChannelOrder,
            "normalized_coords" => Query::NormalizedCoords,
            "filter_mode" => Query::FilterMode,
            "addr_mode_0" => Query::AddrMode(0),
            "addr_mode_1" => Query::AddrMode(1),
            "addr_mode_2" => Query::AddrMode(2),
            "num_mipmap_levels" => Query::MipmapLevels,
            "num_samples" => Query::Samples,
            _ => return None,
        })
    }
}

/// A surface access's out-of-range rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Oob {
    Trap,
    Clamp,
    Zero,
}

/// A texture instruction's geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Geom {
    D1,
    D2,
    D3,
    A1,
    A2,
    /// A cube map: a direction (x, y, z) picks a face (layer 0..5) and a point on it.
    Cube,
    /// A cube map array: {layer, x, y, z}.
    ACube,
}

impl Geom {
    pub(crate) fn parse(m: &str) -> Option<Geom> {
        Some(match m {
            "1d" => Geom::D1,
            "2d" => Geom::D2,
            "3d" => Geom::D3,
            "a1d" => Geom::A1,
            "a2d" => Geom::A2,
            "cube" => Geom::Cube,
            "acube" => Geom::ACube,
            _ => return None,
        })
    }
    /// Spatial dimensions.
    pub(crate) fn dims(self) -> usize {
        match self {
            Geom::D1 | Geom::A1 => 1,
            Geom::D2 | Geom::A2 => 2,
            Geom::D3 | Geom::Cube | Geom::ACube => 3,
        }
    }
    pub(crate) fn layered(self) -> bool {
        matches!(self, Geom::A1 | Geom::A2 | Geom::ACube)
    }
    pub(crate) fn cube(self) -> bool {
        matches!(self, Geom::Cube | Geom::ACube)
    }
}
