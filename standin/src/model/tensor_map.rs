//! Tensor maps (TMA descriptors): the rules `cuda.h` (13.0) documents for each parameter of
//! `cuTensorMapEncodeTiled`, `cuTensorMapEncodeIm2col` and `cuTensorMapEncodeIm2colWide`,
//! as the H100's driver 580.159.04 applies them (recording 2026-12-05, conformance
//! `tensor_map.*`), and the stand-in's own encoding of the 128-byte `CUtensorMap`.
//!
//! The driver checks in two stages. First [`before_encoding`]: a rank of 1 to 5, and no
//! dimension, box dimension, element stride (the first too, though the documentation says
//! it is ignored), channel or pixel count of 0 (each is encoded minus one); a refusal there
//! leaves the map untouched. Then it writes the map, and only then checks the rest
//! ([`check`], [`not_on_sm90`]): a refusal there is CUDA_ERROR_INVALID_VALUE with the 128
//! bytes written all the same.
//!
//! Where the driver departs from the documentation: a NULL global address is accepted (it
//! is aligned); interleave 32B takes swizzle NONE as well as 32B; an im2col wide map is
//! encoded on compute capability 9.0 (documented for 10.0), with any swizzle.
//!
//! The encoding is the stand-in's (a magic word, the address, the parameters packed):
//! opaque to programs as the CUDA documentation makes it, and NOT the bytes the driver
//! writes (a kernel reading the map in PTX is not emulated). Every refusal is
//! CUDA_ERROR_INVALID_VALUE, the only argument error the documentation lists.
//!
//! The packed types `16U4_ALIGN8B`, `16U4_ALIGN16B`, `16U6_ALIGN16B` and the `128B_ATOM_*`
//! swizzles (compute capability 10.0) are checked as documented, then refused: the H100
//! refused `16U4_ALIGN8B` and `128B_ATOM_32B` in maps that are otherwise valid.

use cudrv::sys::*;

/// The first word of every map the stand-in writes: "cudrvTM" and the kind in the low byte.
const MAGIC: u64 = 0x6375_6472_7654_4d00;

/// What kind of map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tiled = 1,
    Im2col = 2,
    Im2colWide = 3,
}

/// The parameters every encoder shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Common {
    pub(crate) data_type: u32,
    pub(crate) rank: u32,
    pub(crate) address: u64,
    pub(crate) dims: [u64; 5],
    /// Strides of dimensions 1.. (the first `rank - 1`).
    pub(crate) strides: [u64; 4],
    pub(crate) element_strides: [u32; 5],
    pub(crate) interleave: u32,
    pub(crate) swizzle: u32,
    pub(crate) l2: u32,
    pub(crate) oob: u32,
}

/// What each kind adds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    Tiled { boxes: [u32; 5] },
    Im2col { lower: [i32; 3], upper: [i32; 3], channels: u32, pixels: u32 },
    Wide { lower: i32, upper: i32, channels: u32, pixels: u32, mode: u32 },
}

type R = Result<(), CUresult>;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

fn need(ok: bool) -> R {
    if ok {
        Ok(())
    } else {
        Err(INVALID)
    }
}

const T16U4_ALIGN8B: u32 = 13;
const T16U4_ALIGN16B: u32 = 14;
const T16U6_ALIGN16B: u32 = 15;
const INTERLEAVE_NONE: u32 = 0;
const INTERLEAVE_32B: u32 = 2;
const SWIZZLE_NONE: u32 = 0;
const SWIZZLE_32B: u32 = 1;
const SWIZZLE_64B: u32 = 2;
const SWIZZLE_128B: u32 = 3;
const SWIZZLE_128B_ATOM_32B: u32 = 4;
const SWIZZLE_128B_ATOM_64B: u32 = 6;

/// Bytes of one element, in sixteenths of a byte (the packed types are 4 or 6 bits);
/// `None` for a value outside the enum.
fn element_sixteenths(t: u32) -> Option<u64> {
    Some(match t {
        0 => 16,
        1 | 6 | 9 => 32,
        2 | 3 | 7 | 10 | 11 | 12 => 64,
        4 | 5 | 8 => 128,
        T16U4_ALIGN8B | T16U4_ALIGN16B => 8,
        T16U6_ALIGN16B => 12,
        _ => return None,
    })
}

/// Whether `t` is a floating-point type (NaN out-of-bound fill allowed).
fn floating(t: u32) -> bool {
    matches!(t, 6..=12)
}

/// Whether `t` is one of the types packed 16 to a 16-byte unit with gaps.
fn packed16(t: u32) -> bool {
    t == T16U4_ALIGN16B || t == T16U6_ALIGN16B
}

/// Bytes of the inner dimension of `n` elements of type `t`.
fn inner_bytes(t: u32, n: u32) -> u64 {
    element_sixteenths(t).unwrap_or(16).saturating_mul(u64::from(n)) / 16
}

/// The swizzle span an inner dimension must fit (interleave NONE).
fn swizzle_span(s: u32) -> u64 {
    match s {
        SWIZZLE_32B => 32,
        SWIZZLE_64B => 64,
        _ => 128,
    }
}

/// The rules of the parameters every encoder shares; `inner`: the elements of the box's
/// inner dimension (boxDim[0], or channelsPerPixel).
fn check_common(c: &Common, inner: u32) -> R {
    let t = c.data_type;
    element_sixteenths(t).ok_or(INVALID)?;
    need(c.interleave <= 2 && c.swizzle <= 6 && c.l2 <= 3 && c.oob <= 1)?;
    need((1..=5).contains(&c.rank))?;
    need(c.interleave == INTERLEAVE_NONE || c.rank >= 3)?;
    let wide_address = c.interleave == INTERLEAVE_32B || packed16(t);
    // NULL is aligned: the driver encodes it (conformance tensor_map.tiled_address_null).
    need(c.address % if wide_address { 32 } else { 16 } == 0)?;
    let rank = c.rank as usize;
    for d in c.dims.iter().take(rank) {
        need((1..=1u64 << 32).contains(d))?;
    }
    let d0 = c.dims.first().copied().unwrap_or(0);
    need(!packed16(t) || d0 % 128 == 0)?;
    need(t != T16U4_ALIGN8B || d0 % 2 == 0)?;
    let stride_unit = if wide_address { 32 } else { 16 };
    for s in c.strides.iter().take(rank.saturating_sub(1)) {
        need(s % stride_unit == 0 && *s < 1u64 << 40)?;
    }
    // The first element stride is ignored when interleave is NONE.
    let skip = usize::from(c.interleave == INTERLEAVE_NONE);
    for e in c.element_strides.iter().take(rank).skip(skip) {
        need((1..=8).contains(e))?;
    }
    // The documentation asks swizzle 32B; the driver takes NONE too (conformance
    // tensor_map.tiled_interleave_32b_swizzle_none). 64B and 128B are not recorded.
    need(c.interleave != INTERLEAVE_32B || matches!(c.swizzle, SWIZZLE_NONE | SWIZZLE_32B))?;
    if c.interleave == INTERLEAVE_NONE && c.swizzle != SWIZZLE_NONE {
        need(inner_bytes(t, inner) <= swizzle_span(c.swizzle))?;
    }
    need(t != T16U6_ALIGN16B || c.interleave == INTERLEAVE_NONE)?;
    if t == T16U6_ALIGN16B {
        need(matches!(c.swizzle, SWIZZLE_NONE | SWIZZLE_128B | SWIZZLE_128B_ATOM_32B | SWIZZLE_128B_ATOM_64B))?;
    }
    if t == T16U4_ALIGN16B {
        need(matches!(c.swizzle, SWIZZLE_NONE | SWIZZLE_128B | SWIZZLE_128B_ATOM_32B))?;
    }
    need(c.oob == 0 || (floating(t)))?;
    Ok(())
}

/// The range of an im2col corner offset at `rank`.
fn corner_range(rank: u32) -> std::ops::RangeInclusive<i32> {
    match rank {
        3 => -32768..=32767,
        4 => -128..=127,
        _ => -16..=15,
    }
}

/// What the driver refuses before it writes the map: a rank outside 1..=5, or a zero
/// among the dimensions, box dimensions, element strides (all `rank` of them), channels and
/// pixels (not in mode W128, where they are ignored).
pub(crate) fn before_encoding(c: &Common, shape: &Shape) -> R {
    need((1..=5).contains(&c.rank))?;
    let rank = c.rank as usize;
    need(c.dims.iter().take(rank).all(|&d| d != 0))?;
    need(c.element_strides.iter().take(rank).all(|&e| e != 0))?;
    match *shape {
        Shape::Tiled { boxes } => need(boxes.iter().take(rank).all(|&b| b != 0)),
        Shape::Im2col { channels, pixels, .. } => need(channels != 0 && pixels != 0),
        Shape::Wide { channels, pixels, mode, .. } => need(channels != 0 && (pixels != 0 || mode == 1)),
    }
}

/// Every documented rule of `c` and `shape` (with the driver's departures: see the
/// module's note). The compute capability 10.0 features pass here; [`not_on_sm90`]
/// refuses them.
pub(crate) fn check(c: &Common, shape: &Shape) -> R {
    match *shape {
        Shape::Tiled { boxes } => {
            let [inner, ..] = boxes;
            check_common(c, inner)?;
            for b in boxes.iter().take(c.rank as usize) {
                need((1..=256).contains(b))?;
            }
            if c.interleave == INTERLEAVE_NONE {
                need(inner_bytes(c.data_type, inner) % 16 == 0)?;
            }
            need(!packed16(c.data_type) || inner == 128)
        }
        Shape::Im2col { lower, upper, channels, pixels } => {
            need((3..=5).contains(&c.rank))?;
            check_common(c, channels)?;
            let spatial = c.rank as usize - 2;
            let range = corner_range(c.rank);
            for j in 0..spatial {
                let (lo, up) = (lower.get(j).copied().unwrap_or(0), upper.get(j).copied().unwrap_or(0));
                need(range.contains(&lo) && range.contains(&up))?;
                // Corner j is of dimension rank - 2 - j ({D, H, W} against dims W, H, D).
                let dim = c.dims.get(spatial - j).copied().unwrap_or(1) as i64;
                need(dim + i64::from(up) - i64::from(lo) > 0)?;
            }
            need((1..=256).contains(&channels) && (!packed16(c.data_type) || channels == 128))?;
            need((1..=1024).contains(&pixels))
        }
        Shape::Wide { lower, upper, channels, pixels, mode } => {
            need((3..=5).contains(&c.rank))?;
            check_common(c, channels)?;
            need(mode <= 1)?;
            // The documented swizzles are 64B, 128B and 128B_ATOM_32B; the driver takes NONE
            // (conformance tensor_map.im2col_wide_swizzle_none): not checked.
            let range = -32768..=32767;
            need(range.contains(&lower) && range.contains(&upper))?;
            let width = c.dims.get(1).copied().unwrap_or(1) as i64;
            need(width + i64::from(upper) - i64::from(lower) > 0)?;
            need((1..=256).contains(&channels) && (!packed16(c.data_type) || channels == 128))?;
            // pixelsPerColumn is ignored in mode W128.
            need(mode == 1 || (1..=1024).contains(&pixels))
        }
    }
}

/// What compute capability 9.0 (H100, H200) cannot encode though the rules allow it: the
/// packed types and the 128B_ATOM swizzles (conformance tensor_map.tiled_type_16u4_align8b,
/// tensor_map.tiled_swizzle_128b_atom_32b). Im2col wide maps are encoded (conformance
/// tensor_map.im2col_wide_on_h200).
pub(crate) fn not_on_sm90(c: &Common) -> R {
    need(c.data_type < T16U4_ALIGN8B && c.swizzle < SWIZZLE_128B_ATOM_32B)
}

/// Packs up to eight bytes, lowest first.
fn bytes(v: impl IntoIterator<Item = u8>) -> u64 {
    v.into_iter().take(8).enumerate().fold(0, |q, (i, b)| q | u64::from(b) << (8 * i))
}

/// Packs up to four 16-bit values, lowest first.
fn halves(v: impl IntoIterator<Item = u16>) -> u64 {
    v.into_iter().take(4).enumerate().fold(0, |q, (i, h)| q | u64::from(h) << (16 * i))
}

/// The stand-in's 128 bytes for a map that passed [`before_encoding`] (written whether or
/// not it then passes [`check`], as the driver writes it).
pub(crate) fn encode(kind: Kind, c: &Common, shape: &Shape) -> [u64; 16] {
    // Dimensions minus one (each < 2^32), two to a word.
    let dim = |i: usize| c.dims.get(i).map_or(0, |d| d.saturating_sub(1));
    let dims = [0, 2, 4].map(|i| dim(i) | dim(i + 1) << 32);
    let (shape_words, extra) = match *shape {
        Shape::Tiled { boxes } => ([bytes(boxes.map(|b| b.saturating_sub(1) as u8)), 0, 0], 0),
        Shape::Im2col { lower, upper, channels, pixels } => (
            [
                halves(lower.map(|v| v as u16)),
                halves(upper.map(|v| v as u16)),
                u64::from(channels) | u64::from(pixels) << 32,
            ],
            0,
        ),
        Shape::Wide { lower, upper, channels, pixels, mode } => (
            [halves([lower as u16]), halves([upper as u16]), u64::from(channels) | u64::from(pixels) << 32],
            u64::from(mode),
        ),
    };
    let [d0, d1, d2] = dims;
    let [s0, s1, s2, s3] = c.strides;
    let [w0, w1, w2] = shape_words;
    [
        MAGIC | kind as u64,
        c.address,
        bytes([c.data_type, c.rank, c.interleave, c.swizzle, c.l2, c.oob].map(|v| v as u8)),
        d0,
        d1,
        d2,
        s0,
        s1,
        s2,
        s3,
        bytes(c.element_strides.map(|v| v as u8)),
        w0,
        w1,
        w2,
        extra,
        0,
    ]
}

/// Whether the 128 bytes are a map the stand-in wrote.
pub(crate) fn is_ours(q: &[u64; 16]) -> bool {
    let [head, ..] = *q;
    head & !0xff == MAGIC && (1..=3).contains(&(head & 0xff))
}

/// The alignment `cuTensorMapReplaceAddress` asks of a new address: 16 bytes, whatever the
/// map (conformance tensor_map.replace_interleave_32b_address_16: an interleave-32B map
/// takes an address that is 16-byte aligned only); NULL is refused
/// (tensor_map.replace_address_null).
pub(crate) const REPLACE_ALIGN: u64 = 16;

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn tiled() -> (Common, Shape) {
        let c = Common {
            data_type: 7,
            rank: 2,
            address: 0x7000_0000_0000,
            dims: [64, 64, 1, 1, 1],
            strides: [256, 0, 0, 0],
            element_strides: [1; 5],
            interleave: 0,
            swizzle: 0,
            l2: 0,
            oob: 0,
        };
        (c, Shape::Tiled { boxes: [32, 8, 1, 1, 1] })
    }

    #[test]
    fn a_plain_tiled_map_passes_and_encodes_its_address() {
        let (c, s) = tiled();
        assert_eq!(check(&c, &s), Ok(()));
        let q = encode(Kind::Tiled, &c, &s);
        assert_eq!(q[1], c.address);
        assert!(is_ours(&q));
        assert!(!is_ours(&[0; 16]));
    }

    #[test]
    fn each_rule_refuses() {
        let (c, s) = tiled();
        let bad: Vec<Common> = vec![
            Common { rank: 0, ..c },
            Common { rank: 6, ..c },
            Common { address: c.address + 8, ..c },
            Common { dims: [(1 << 32) + 1, 64, 1, 1, 1], ..c },
            Common { strides: [8, 0, 0, 0], ..c },
            Common { strides: [1 << 40, 0, 0, 0], ..c },
            Common { element_strides: [1, 9, 1, 1, 1], ..c },
            Common { data_type: 16, ..c },
            Common { oob: 1, data_type: 3, ..c },
            Common { swizzle: 1, ..c },
            Common { interleave: 1, ..c },
        ];
        for b in bad {
            assert_eq!(check(&b, &s), Err(INVALID), "{b:?}");
        }
        assert_eq!(check(&c, &Shape::Tiled { boxes: [257, 8, 1, 1, 1] }), Err(INVALID));
        assert_eq!(check(&c, &Shape::Tiled { boxes: [2, 8, 1, 1, 1] }), Err(INVALID));
        assert_eq!(check(&Common { swizzle: 3, ..c }, &s), Ok(()));
        // The driver takes a NULL address (recording 2026-12-05, tensor_map.tiled_address_null).
        assert_eq!(check(&Common { address: 0, ..c }, &s), Ok(()));
    }

    #[test]
    fn zeros_and_the_rank_are_refused_before_encoding() {
        // Recording 2026-12-05 (H100, 580.159.04): these leave the map untouched
        // (tensor_map.tiled_rank_0, tiled_dim_0, tiled_box_0, tiled_element_stride_0_*).
        let (c, s) = tiled();
        assert_eq!(before_encoding(&c, &s), Ok(()));
        let bad = [
            Common { rank: 0, ..c },
            Common { rank: 6, ..c },
            Common { dims: [64, 0, 1, 1, 1], ..c },
            Common { element_strides: [1, 0, 1, 1, 1], ..c },
            // The first element stride too, though the documentation says it is ignored.
            Common { element_strides: [0, 1, 1, 1, 1], ..c },
        ];
        for b in bad {
            assert_eq!(before_encoding(&b, &s), Err(INVALID), "{b:?}");
        }
        assert_eq!(before_encoding(&c, &Shape::Tiled { boxes: [32, 0, 1, 1, 1] }), Err(INVALID));
        // Dimensions past the rank are not read.
        assert_eq!(before_encoding(&c, &Shape::Tiled { boxes: [32, 8, 0, 0, 0] }), Ok(()));
        // What is refused after encoding passes here.
        assert_eq!(before_encoding(&Common { element_strides: [1, 9, 1, 1, 1], ..c }, &s), Ok(()));
        assert_eq!(before_encoding(&c, &Shape::Tiled { boxes: [32, 257, 1, 1, 1] }), Ok(()));
    }

    #[test]
    fn im2col_corners_follow_the_rank() {
        let c = Common { rank: 4, dims: [16, 8, 8, 2, 1], strides: [64, 512, 4096, 0], ..tiled().0 };
        let ok = Shape::Im2col { lower: [-1, -1, 0], upper: [-1, -1, 0], channels: 16, pixels: 64 };
        assert_eq!(check(&c, &ok), Ok(()));
        let wide = Shape::Im2col { lower: [-129, 0, 0], upper: [0, 0, 0], channels: 16, pixels: 64 };
        assert_eq!(check(&c, &wide), Err(INVALID));
        // Encoded on compute capability 9.0, with swizzle NONE (recording 2026-12-05,
        // tensor_map.im2col_wide_swizzle_none).
        let w = Shape::Wide { lower: -1, upper: -1, channels: 16, pixels: 64, mode: 0 };
        assert_eq!(check(&c, &w), Ok(()));
        assert_eq!(not_on_sm90(&c), Ok(()));
        assert_eq!(not_on_sm90(&Common { data_type: 13, ..c }), Err(INVALID));
    }
}
