//! The video instructions (PTX ISA, "Video Instructions"): the scalar `vadd`, `vsub`,
//! `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vmad` and `vset`, and the SIMD `vadd2/4`,
//! `vsub2/4`, `vavrg2/4`, `vabsdiff2/4`, `vmin2/4`, `vmax2/4` and `vset2/4`.
//!
//! [`Video::decode`] reads an instruction's opcode and modifiers, [`Video::operand`] its
//! operands' selectors (`a.b1`, `d.h0`, `a.h32`, `b.b7654`, `d.b10`) and negations (`-c`,
//! vmad), and [`Video::eval`] computes one lane's result from its three 32-bit sources, as
//! the ISA's pseudocode does, except where an H100 (driver 580, the instruction suite's
//! recording `tests/data/instruction-suite-gpu.txt`) computes otherwise; the recording
//! decides:
//!
//! - scalar: each source is a byte, half-word or the word of its register, sign- or
//!   zero-extended by its own type (`.s32`/`.u32`); the operation is exact (no wrap), but
//!   `vshl`'s result is truncated to 34 bits; `.sat` clamps to the destination type's range
//!   (of the destination's byte or half-word when a merge selector is given, else of 32
//!   bits), except that an unsigned 32-bit one only raises negative results to 0 (but for
//!   `vshl`); then `.add` adds `c` (extended by the destination type), `.min`/`.max` compare
//!   with it as [`Scalar::min_max`] says, or the low byte/half-word is merged into `c` at
//!   the destination selector (0 with `.sat` into `.h1`); the low 32 bits are the result.
//!   `vset` compares (0 or 1, unsigned, no `.sat`); `vshl`/`vshr` take the shift amount
//!   unsigned, `.clamp` at 32 or `.wrap` modulo 32. `vmad` is (a*b)+c with the product's
//!   or `c`'s negation as its one's complement plus one and `.po` adding one, each source
//!   read as signed 32 bits once selected and extended; `.shr7`/`.shr15` shift the 64-bit
//!   sum as the final result's signedness says and `.sat` clamps to its range
//!   ([`Mad::eval`]).
//! - SIMD: two half-words or four bytes per source, each picked by the selector from the
//!   eight bytes (four half-words) of `{b, a}` and extended by its operand's type; the
//!   operation per element is exact, `vavrg` rounds as the ISA says (`(s+1)>>1` for a sum
//!   `s >= 0`, half up; `s>>1` otherwise, down); `.sat` clamps each element to
//!   the destination type's 16- or 8-bit range. Without `.add` the elements named by the
//!   mask are written (truncated) and the others are `c`'s; with `.add` the masked elements
//!   (their full signed values) are added to `c`.

use crate::parse::Operand;

/// The type of an operand: it says how a selected part is extended to 33 bits, and the
/// destination's says the range `.sat` clamps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VType {
    /// `.u32`: zero-extended.
    U32,
    /// `.s32`: sign-extended.
    S32,
}

/// The part of a 32-bit register a scalar video instruction reads (`asel`, `bsel`) or
/// writes (`dsel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// No selector: the whole word.
    Word,
    /// `.b0` .. `.b3`: a byte.
    B0,
    B1,
    B2,
    B3,
    /// `.h0`, `.h1`: a half-word.
    H0,
    H1,
}

impl Part {
    fn parse(s: &str) -> Option<Part> {
        Some(match s {
            "b0" => Part::B0,
            "b1" => Part::B1,
            "b2" => Part::B2,
            "b3" => Part::B3,
            "h0" => Part::H0,
            "h1" => Part::H1,
            _ => return None,
        })
    }

    /// The part's position (bit shift) and width in bits.
    fn field(self) -> (u32, u32) {
        match self {
            Part::Word => (0, 32),
            Part::B0 => (0, 8),
            Part::B1 => (8, 8),
            Part::B2 => (16, 8),
            Part::B3 => (24, 8),
            Part::H0 => (0, 16),
            Part::H1 => (16, 16),
        }
    }
}

/// The comparison of `vset`, `vset2` and `vset4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl VCmp {
    fn parse(s: &str) -> Option<VCmp> {
        Some(match s {
            "eq" => VCmp::Eq,
            "ne" => VCmp::Ne,
            "lt" => VCmp::Lt,
            "le" => VCmp::Le,
            "gt" => VCmp::Gt,
            "ge" => VCmp::Ge,
            _ => return None,
        })
    }

    fn test(self, a: i64, b: i64) -> bool {
        match self {
            VCmp::Eq => a == b,
            VCmp::Ne => a != b,
            VCmp::Lt => a < b,
            VCmp::Le => a <= b,
            VCmp::Gt => a > b,
            VCmp::Ge => a >= b,
        }
    }
}

/// How `vshl`/`vshr` limit the shift amount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShiftMode {
    /// `.clamp`: amounts above 32 shift by 32.
    Clamp,
    /// `.wrap`: the amount modulo 32.
    Wrap,
}

/// The primary operation of a scalar video instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScalarOp {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    Shl(ShiftMode),
    Shr(ShiftMode),
    Set(VCmp),
}

/// What a scalar video instruction does with its intermediate result and `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Second {
    /// Nothing: the intermediate result's low 32 bits.
    Plain,
    /// `.add`: plus `c`.
    Add,
    /// `.min`: the lesser of it and `c` ([`Scalar::min_max`]).
    Min,
    /// `.max`: the greater of it and `c`.
    Max,
    /// `d.dsel`: its low byte or half-word put at that part of `c` (with `.sat` into
    /// `.h1`: 0, the GPU's way).
    Merge(Part),
}

/// A scalar video instruction: `vadd`, `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`,
/// `vset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scalar {
    pub(crate) op: ScalarOp,
    /// `vset`: `.u32` (its result is unsigned).
    pub(crate) dtype: VType,
    pub(crate) atype: VType,
    /// `vshl`/`vshr`: `.u32`.
    pub(crate) btype: VType,
    pub(crate) sat: bool,
    pub(crate) asel: Part,
    pub(crate) bsel: Part,
    pub(crate) second: Second,
}

/// The primary operation of a SIMD video instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SimdOp {
    Add,
    Sub,
    Avrg,
    Absdiff,
    Min,
    Max,
    Set(VCmp),
}

/// The elements of a SIMD video instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lanes {
    /// `vop2`: two half-words.
    Halves,
    /// `vop4`: four bytes.
    Bytes,
}

impl Lanes {
    /// The number of elements and their width in bits.
    fn shape(self) -> (usize, u32) {
        match self {
            Lanes::Halves => (2, 16),
            Lanes::Bytes => (4, 8),
        }
    }

    /// The selector's letter: `h` or `b`.
    fn letter(self) -> char {
        match self {
            Lanes::Halves => 'h',
            Lanes::Bytes => 'b',
        }
    }
}

/// A SIMD video instruction: `vadd2`, `vsub2`, `vavrg2`, `vabsdiff2`, `vmin2`, `vmax2`,
/// `vset2` and their four-byte forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Simd {
    pub(crate) op: SimdOp,
    pub(crate) lanes: Lanes,
    /// `vset2/4`: `.u32`.
    pub(crate) dtype: VType,
    pub(crate) atype: VType,
    pub(crate) btype: VType,
    pub(crate) sat: bool,
    /// `.add`: the masked elements are summed into `c`; otherwise merged with `c`'s.
    pub(crate) accumulate: bool,
    /// Bit `i`: element `i` is written (merge) or summed (`.add`); the destination's
    /// `.h10`/`.b3210`-style selector, all elements by default.
    pub(crate) mask: u8,
    /// For element `i`, the index of the half-word or byte of `{b, a}` (`a`'s are the low
    /// ones) it takes: the `.hxy`/`.bxyzw` selector of `a`, written highest element first.
    pub(crate) asel: [u8; 4],
    /// The same for `b`.
    pub(crate) bsel: [u8; 4],
}

/// `vmad`'s scaling of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scale {
    None,
    /// `.shr7`
    Shr7,
    /// `.shr15`
    Shr15,
}

/// `vmad`: (a*b) + c with optional negations, `.po`, scaling and saturation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mad {
    /// Written but not used: the final result's signedness decides the scaling and the
    /// saturation.
    pub(crate) dtype: VType,
    pub(crate) atype: VType,
    pub(crate) btype: VType,
    pub(crate) asel: Part,
    pub(crate) bsel: Part,
    pub(crate) neg_a: bool,
    pub(crate) neg_b: bool,
    pub(crate) neg_c: bool,
    /// `.po`: plus one.
    pub(crate) plus_one: bool,
    pub(crate) scale: Scale,
    pub(crate) sat: bool,
}

/// A decoded video instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Video {
    Scalar(Scalar),
    Simd(Simd),
    Mad(Mad),
}

/// The low `width` bits set.
fn low_mask(width: u32) -> u32 {
    u32::MAX.checked_shr(32 - width.min(32)).unwrap_or(0)
}

/// `width` bits of `x` from bit `shift`, sign- or zero-extended by `ty`.
fn extract(x: u64, shift: u32, width: u32, ty: VType) -> i64 {
    let raw = x.checked_shr(shift).unwrap_or(0) & u64::from(low_mask(width));
    match ty {
        VType::U32 => raw as i64,
        VType::S32 => {
            let up = 64 - width;
            ((raw << up) as i64) >> up
        }
    }
}

/// The ISA's `partSelectSignExtend`: a part of `x`, extended by `ty`.
fn part_select(x: u32, part: Part, ty: VType) -> i64 {
    let (shift, width) = part.field();
    extract(u64::from(x), shift, width, ty)
}

/// The low `width` bits of `v` read as a signed number.
fn sign_extend(v: i128, width: u32) -> i128 {
    let up = 128 - width;
    (v << up) >> up
}

/// `v` clamped to the range of a `width`-bit integer of type `ty`.
fn clamp(v: i128, width: u32, ty: VType) -> i128 {
    let (lo, hi) = match ty {
        VType::U32 => (0, (1i128 << width) - 1),
        VType::S32 => (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1),
    };
    v.clamp(lo, hi)
}

impl Scalar {
    /// The intermediate result before `.sat`: exact for `vadd`, `vsub`, `vabsdiff`, `vmin`,
    /// `vmax`, `vshr` and `vset`; `vshl`'s is its exact value truncated to 34 bits, two's
    /// complement (the GPU's `.sat` clamps `1 << 32` to U32_MAX but `2 << 32` to 0 and
    /// `0x7fffffff << 4` to 0).
    fn intermediate(&self, ta: i128, tb: i128) -> i128 {
        let amount = |mode: ShiftMode| -> u32 {
            // tb is unsigned (btype .u32), below 2^32.
            let tb = u32::try_from(tb).unwrap_or(u32::MAX);
            match mode {
                ShiftMode::Clamp => tb.min(32),
                ShiftMode::Wrap => tb & 0x1f,
            }
        };
        match self.op {
            ScalarOp::Add => ta + tb,
            ScalarOp::Sub => ta - tb,
            ScalarOp::Absdiff => (ta - tb).abs(),
            ScalarOp::Min => ta.min(tb),
            ScalarOp::Max => ta.max(tb),
            ScalarOp::Shl(mode) => sign_extend(ta << amount(mode), 34),
            ScalarOp::Shr(mode) => ta >> amount(mode),
            ScalarOp::Set(cmp) => i128::from(cmp.test(ta as i64, tb as i64)),
        }
    }

    /// `.sat` of the intermediate `tmp`, `width` bits wide (32, or the merged part's): it
    /// clamps to the destination type's range, except that an unsigned 32-bit result (but
    /// `vshl`'s) is only raised to 0 when negative and keeps its low bits above U32_MAX
    /// (the GPU gives `vadd.u32.u32.u32.sat(0xffffffff, 2)` = 1 and
    /// `vabsdiff.u32.s32.u32.sat(-1, 0xffffffff)` = 0; merged into a byte, 300 is 255).
    fn saturate(&self, tmp: i128, width: u32) -> i128 {
        match (self.dtype, self.op) {
            (VType::U32, ScalarOp::Shl(_)) | (VType::S32, _) => clamp(tmp, width, self.dtype),
            (VType::U32, _) if width == 32 => tmp.max(0),
            (VType::U32, _) => clamp(tmp, width, self.dtype),
        }
    }

    /// The lesser (`.min`) or greater (`.max`) of the intermediate `tmp` and `c`, as the GPU
    /// compares them: `vadd`'s and `vsub`'s intermediate counts as its low 32 bits read as
    /// signed, the others' as their value; `c` is extended by the destination type; with a
    /// signed destination the comparison is signed, with an unsigned one it is unsigned
    /// over 64-bit two's complement, a negative intermediate ranking above every `c`
    /// (`vadd.u32.u32.u32.min(0x80000000, 0, 0xffffffff)` = 0xffffffff,
    /// `vadd.s32.s32.s32.min(0x7fffffff, 1, 0)` = 0x80000000).
    fn min_max(&self, tmp: i128, c: u32, max: bool) -> i128 {
        let tmp = match self.op {
            ScalarOp::Add | ScalarOp::Sub => sign_extend(tmp, 32),
            _ => tmp,
        };
        let tc = i128::from(part_select(c, Part::Word, self.dtype));
        let key = |v: i128| -> i128 {
            match self.dtype {
                VType::S32 => v,
                VType::U32 => i128::from(v as u64),
            }
        };
        if (key(tmp) < key(tc)) == max {
            tc
        } else {
            tmp
        }
    }

    fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = i128::from(part_select(a, self.asel, self.atype));
        let tb = i128::from(part_select(b, self.bsel, self.btype));
        let tmp = self.intermediate(ta, tb);
        let tmp = if self.sat {
            let width = match self.second {
                Second::Merge(p) => p.field().1,
                _ => 32,
            };
            self.saturate(tmp, width)
        } else {
            tmp
        };
        let r = match self.second {
            Second::Plain => tmp,
            // c is extended by the destination type.
            Second::Add => tmp + i128::from(part_select(c, Part::Word, self.dtype)),
            Second::Min => self.min_max(tmp, c, false),
            Second::Max => self.min_max(tmp, c, true),
            Second::Merge(p) => {
                let (shift, width) = p.field();
                let m = low_mask(width) << shift;
                // A saturated result merged into half-word 1 leaves 0 there on the GPU, as if
                // its bits 16..31 were taken of the saturated half-word (`vsub.s32.s32.s32.sat
                // d.h1` of -128 or of 1 gives 0); bytes take the saturated byte, as the ISA
                // says.
                let part = if self.sat && p == Part::H1 { 0 } else { (tmp as u32) << shift };
                return (part & m) | (c & !m);
            }
        };
        r as u32
    }
}

impl Simd {
    fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let (n, width) = self.lanes.shape();
        let pool = u64::from(b) << 32 | u64::from(a);
        let m = low_mask(width);
        let mut merged = 0u32;
        let mut sum = 0i64;
        for (i, (&x, &y)) in self.asel.iter().zip(self.bsel.iter()).take(n).enumerate() {
            let va = extract(pool, u32::from(x) * width, width, self.atype);
            let vb = extract(pool, u32::from(y) * width, width, self.btype);
            let t = match self.op {
                SimdOp::Add => va + vb,
                SimdOp::Sub => va - vb,
                SimdOp::Avrg => {
                    let s = va + vb;
                    if s >= 0 {
                        (s + 1) >> 1
                    } else {
                        s >> 1
                    }
                }
                SimdOp::Absdiff => (va - vb).abs(),
                SimdOp::Min => va.min(vb),
                SimdOp::Max => va.max(vb),
                SimdOp::Set(cmp) => i64::from(cmp.test(va, vb)),
            };
            let t = if self.sat { clamp(i128::from(t), width, self.dtype) as i64 } else { t };
            let on = self.mask >> i & 1 == 1;
            let shift = i as u32 * width;
            if self.accumulate {
                if on {
                    sum += t;
                }
            } else {
                let field = if on { t as u32 } else { c >> shift };
                merged |= (field & m) << shift;
            }
        }
        if self.accumulate {
            c.wrapping_add(sum as u32)
        } else {
            merged
        }
    }
}

impl Mad {
    /// As the GPU computes it, which departs from the ISA's pseudocode in three ways. Each
    /// source is its selected part extended by its type to 32 bits and then read as a
    /// signed 32-bit number: a whole-word `.u32` source of 0x80000000 counts as -2^31
    /// (`vmad.u32.u32.u32.shr7(1, 0x80000000, 0)` = 0xff000000), a zero-extended byte or
    /// half-word stays positive; `c` (or `~c`) likewise. The scaling shifts the 64-bit sum
    /// arithmetically when the final result is signed, logically when it is unsigned (so a
    /// negative sum scaled is huge: `vmad.u32.u32.u32.shr15.sat(0, 0, -1)` = 0xffffffff).
    /// `.sat` clamps that 64-bit value, read as signed, to the final result's range (an
    /// unscaled negative sum saturates unsigned to 0). The final result is signed as the ISA
    /// says (a signed source or a negation), whatever the destination type: an H100 gives
    /// `vmad.u32.s32.u32.shr15.sat` negative results.
    fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = i128::from(part_select(a, self.asel, self.atype) as i32);
        let tb = i128::from(part_select(b, self.bsel, self.btype) as i32);
        let neg_product = self.neg_a ^ self.neg_b;
        let signed_final = self.atype == VType::S32 || self.btype == VType::S32 || neg_product || self.neg_c;
        let mut tmp = ta * tb;
        let mut c = c;
        let mut lsb = 0i128;
        if self.plus_one {
            lsb = 1;
        } else if neg_product {
            tmp = !tmp;
            lsb = 1;
        } else if self.neg_c {
            c = !c;
            lsb = 1;
        }
        let tmp = tmp.wrapping_add(i128::from(c as i32)).wrapping_add(lsb);
        let shift = match self.scale {
            Scale::None => 0,
            Scale::Shr7 => 7,
            Scale::Shr15 => 15,
        };
        // The low 64 bits, shifted as the final result's signedness says.
        let result = if signed_final { (tmp as i64) >> shift } else { ((tmp as u64) >> shift) as i64 };
        if !self.sat {
            return result as u32;
        }
        let ty = if signed_final { VType::S32 } else { VType::U32 };
        clamp(i128::from(result), 32, ty) as u32
    }
}

/// The modifiers of a video instruction, as written.
#[derive(Default)]
struct Mods {
    types: Vec<VType>,
    sat: bool,
    /// `.add`, `.min`, `.max`.
    second: Option<Second>,
    mode: Option<ShiftMode>,
    cmp: Option<VCmp>,
    plus_one: bool,
    scale: Option<Scale>,
}

impl Mods {
    fn parse(mods: &[&str]) -> Result<Mods, String> {
        let mut m = Mods::default();
        fn once<T>(slot: &mut Option<T>, v: T, what: &str) -> Result<(), String> {
            if slot.is_some() {
                return Err(format!("more than one {what}"));
            }
            *slot = Some(v);
            Ok(())
        }
        for s in mods {
            match *s {
                "u32" => m.types.push(VType::U32),
                "s32" => m.types.push(VType::S32),
                "sat" => m.sat = true,
                "po" => m.plus_one = true,
                "add" => once(&mut m.second, Second::Add, "secondary operation")?,
                "min" => once(&mut m.second, Second::Min, "secondary operation")?,
                "max" => once(&mut m.second, Second::Max, "secondary operation")?,
                "clamp" => once(&mut m.mode, ShiftMode::Clamp, "shift mode")?,
                "wrap" => once(&mut m.mode, ShiftMode::Wrap, "shift mode")?,
                "shr7" => once(&mut m.scale, Scale::Shr7, "scale")?,
                "shr15" => once(&mut m.scale, Scale::Shr15, "scale")?,
                _ => match VCmp::parse(s) {
                    Some(c) => once(&mut m.cmp, c, "comparison")?,
                    None => return Err(format!("the .{s} modifier is not one of a video instruction")),
                },
            }
        }
        Ok(m)
    }

    /// Refuses the modifiers the form does not take.
    fn only(&self, sat: bool, second: bool, mode: bool, cmp: bool, mad: bool) -> Result<(), String> {
        let bad = (self.sat && !sat)
            || (self.second.is_some() && !second)
            || (self.mode.is_some() && !mode)
            || (self.cmp.is_some() && !cmp)
            || ((self.plus_one || self.scale.is_some()) && !mad);
        if bad {
            return Err("a modifier this video instruction does not take".into());
        }
        Ok(())
    }

    /// The `n` operand types (`.u32`/`.s32`).
    fn types<const N: usize>(&self) -> Result<[VType; N], String> {
        <[VType; N]>::try_from(self.types.as_slice()).map_err(|_| format!("expected {N} types (.u32 or .s32)"))
    }
}

/// Digits of a selector after its letter (`h10` gives [1, 0]), each at most `max`.
fn digits(sel: &str, letter: char, max: u8) -> Option<Vec<u8>> {
    let rest = sel.strip_prefix(letter)?;
    let v: Vec<u8> = rest.bytes().map(|c| c.wrapping_sub(b'0')).collect();
    if v.is_empty() || v.iter().any(|&d| d > max) {
        return None;
    }
    Some(v)
}

impl Video {
    /// The instruction `opname` (a video row of `instructions::table!`) with modifiers `mods` (those after the
    /// opcode, types included), its selectors at their defaults.
    pub(crate) fn decode(opname: &str, mods: &[&str]) -> Result<Video, String> {
        let m = Mods::parse(mods)?;
        let simd = |op: SimdOp, lanes: Lanes| -> Result<Video, String> {
            let (dtype, atype, btype) = if let SimdOp::Set(_) = op {
                m.only(false, true, false, true, false)?;
                let [a, b] = m.types::<2>()?;
                (VType::U32, a, b)
            } else {
                m.only(true, true, false, false, false)?;
                let [d, a, b] = m.types::<3>()?;
                (d, a, b)
            };
            let accumulate = match m.second {
                None => false,
                Some(Second::Add) => true,
                Some(_) => return Err("SIMD video instructions take .add only".into()),
            };
            if accumulate && m.sat {
                return Err(".sat cannot be used with the .add accumulate".into());
            }
            let (mask, asel, bsel) = match lanes {
                Lanes::Halves => (0b11, [0, 1, 0, 0], [2, 3, 0, 0]),
                Lanes::Bytes => (0b1111, [0, 1, 2, 3], [4, 5, 6, 7]),
            };
            Ok(Video::Simd(Simd { op, lanes, dtype, atype, btype, sat: m.sat, accumulate, mask, asel, bsel }))
        };
        let scalar = |op: ScalarOp| -> Result<Video, String> {
            let (dtype, atype, btype) = match op {
                ScalarOp::Set(_) => {
                    m.only(false, true, false, true, false)?;
                    let [a, b] = m.types::<2>()?;
                    (VType::U32, a, b)
                }
                ScalarOp::Shl(_) | ScalarOp::Shr(_) => {
                    m.only(true, true, true, false, false)?;
                    let [d, a, b] = m.types::<3>()?;
                    if b != VType::U32 {
                        return Err("the shift amount's type is .u32".into());
                    }
                    (d, a, b)
                }
                _ => {
                    m.only(true, true, false, false, false)?;
                    let [d, a, b] = m.types::<3>()?;
                    (d, a, b)
                }
            };
            Ok(Video::Scalar(Scalar {
                op,
                dtype,
                atype,
                btype,
                sat: m.sat,
                asel: Part::Word,
                bsel: Part::Word,
                second: m.second.unwrap_or(Second::Plain),
            }))
        };
        let cmp = || m.cmp.ok_or_else(|| String::from("a comparison (.eq, .ne, .lt, .le, .gt, .ge) is needed"));
        let mode = || m.mode.ok_or_else(|| String::from("a shift mode (.clamp or .wrap) is needed"));
        match opname {
            "vadd" => scalar(ScalarOp::Add),
            "vsub" => scalar(ScalarOp::Sub),
            "vabsdiff" => scalar(ScalarOp::Absdiff),
            "vmin" => scalar(ScalarOp::Min),
            "vmax" => scalar(ScalarOp::Max),
            "vshl" => scalar(ScalarOp::Shl(mode()?)),
            "vshr" => scalar(ScalarOp::Shr(mode()?)),
            "vset" => scalar(ScalarOp::Set(cmp()?)),
            "vmad" => {
                m.only(true, false, false, false, true)?;
                let [dtype, atype, btype] = m.types::<3>()?;
                Ok(Video::Mad(Mad {
                    dtype,
                    atype,
                    btype,
                    asel: Part::Word,
                    bsel: Part::Word,
                    neg_a: false,
                    neg_b: false,
                    neg_c: false,
                    plus_one: m.plus_one,
                    scale: m.scale.unwrap_or(Scale::None),
                    sat: m.sat,
                }))
            }
            "vadd2" => simd(SimdOp::Add, Lanes::Halves),
            "vsub2" => simd(SimdOp::Sub, Lanes::Halves),
            "vavrg2" => simd(SimdOp::Avrg, Lanes::Halves),
            "vabsdiff2" => simd(SimdOp::Absdiff, Lanes::Halves),
            "vmin2" => simd(SimdOp::Min, Lanes::Halves),
            "vmax2" => simd(SimdOp::Max, Lanes::Halves),
            "vset2" => simd(SimdOp::Set(cmp()?), Lanes::Halves),
            "vadd4" => simd(SimdOp::Add, Lanes::Bytes),
            "vsub4" => simd(SimdOp::Sub, Lanes::Bytes),
            "vavrg4" => simd(SimdOp::Avrg, Lanes::Bytes),
            "vabsdiff4" => simd(SimdOp::Absdiff, Lanes::Bytes),
            "vmin4" => simd(SimdOp::Min, Lanes::Bytes),
            "vmax4" => simd(SimdOp::Max, Lanes::Bytes),
            "vset4" => simd(SimdOp::Set(cmp()?), Lanes::Bytes),
            _ => Err("not a video instruction".into()),
        }
    }

    /// Operand `k` (0 the destination, then a, b, c) as written, its selector and negation
    /// taken into `self`: returns the operand without them. `is_reg` says whether a name is a
    /// register (a selector follows a register's name: `%r1.h0`).
    pub(crate) fn operand(&mut self, k: usize, o: &Operand, is_reg: impl Fn(&str) -> bool) -> Result<Operand, String> {
        let name = match o {
            Operand::Neg(n) => {
                self.negate(k)?;
                n
            }
            Operand::Name(n) => n,
            _ => return Ok(o.clone()),
        };
        if !is_reg(name) {
            if let Some((reg, sel)) = name.split_once('.') {
                if is_reg(reg) {
                    self.select(k, sel)?;
                    return Ok(Operand::Name(reg.to_string()));
                }
            }
        }
        Ok(Operand::Name(name.clone()))
    }

    fn negate(&mut self, k: usize) -> Result<(), String> {
        let Video::Mad(m) = self else { return Err("only vmad's sources can be negated".into()) };
        if m.plus_one {
            return Err("vmad.po's sources cannot be negated".into());
        }
        match k {
            1 => m.neg_a = true,
            2 => m.neg_b = true,
            3 => m.neg_c = true,
            _ => return Err("only vmad's sources can be negated".into()),
        }
        if (m.neg_a ^ m.neg_b) && m.neg_c {
            return Err("vmad negates either the product or c, not both".into());
        }
        Ok(())
    }

    fn select(&mut self, k: usize, sel: &str) -> Result<(), String> {
        let bad = || format!("bad selector .{sel} for operand {}", k + 1);
        match self {
            Video::Scalar(s) => {
                let p = Part::parse(sel).ok_or_else(bad)?;
                match k {
                    0 if s.second == Second::Plain => s.second = Second::Merge(p),
                    0 => return Err("a destination selector cannot go with .add, .min or .max".into()),
                    1 => s.asel = p,
                    2 => s.bsel = p,
                    _ => return Err(bad()),
                }
            }
            Video::Mad(m) => {
                let p = Part::parse(sel).ok_or_else(bad)?;
                match k {
                    1 => m.asel = p,
                    2 => m.bsel = p,
                    _ => return Err(bad()),
                }
            }
            Video::Simd(s) => {
                let (n, _) = s.lanes.shape();
                let letter = s.lanes.letter();
                match k {
                    0 => {
                        // A mask: the elements written, e.g. .h1, .b310.
                        let d = digits(sel, letter, n as u8 - 1).ok_or_else(bad)?;
                        s.mask = d.iter().fold(0, |acc, &e| acc | 1 << e);
                    }
                    1 | 2 => {
                        // Highest element first: .h32 gives element 1 half-word 3.
                        let d = digits(sel, letter, 2 * n as u8 - 1).ok_or_else(bad)?;
                        if d.len() != n {
                            return Err(bad());
                        }
                        let mut v = [0u8; 4];
                        for (slot, &e) in v.iter_mut().zip(d.iter().rev()) {
                            *slot = e;
                        }
                        if k == 1 {
                            s.asel = v;
                        } else {
                            s.bsel = v;
                        }
                    }
                    _ => return Err(bad()),
                }
            }
        }
        Ok(())
    }

    /// Checks the number of operands (`c` is needed but by a plain scalar instruction).
    pub(crate) fn check(&self, operands: usize) -> Result<(), String> {
        let need_c = match self {
            Video::Scalar(s) => s.second != Second::Plain,
            Video::Simd(_) | Video::Mad(_) => true,
        };
        let ok = if need_c { operands == 4 } else { operands == 3 || operands == 4 };
        if ok {
            Ok(())
        } else {
            Err(format!("expected {} operands, found {operands}", if need_c { 4 } else { 3 }))
        }
    }

    /// One lane's result from its sources `a`, `b` and `c` (0 when absent).
    pub(crate) fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        match self {
            Video::Scalar(s) => s.eval(a, b, c),
            Video::Simd(s) => s.eval(a, b, c),
            Video::Mad(m) => m.eval(a, b, c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instruction written `name` (opcode and modifiers), with the selectors `sels`
    /// (operand index, selector).
    fn v(name: &str, sels: &[(usize, &str)]) -> Result<Video, String> {
        let mut parts = name.split('.');
        let op = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        let mut x = Video::decode(op, &mods)?;
        for (k, s) in sels {
            x.select(*k, s)?;
        }
        Ok(x)
    }

    #[test]
    fn part_select_extends_by_type() {
        assert_eq!(part_select(0x80ff_7f01, Part::B0, VType::S32), 1);
        assert_eq!(part_select(0x80ff_7f01, Part::B1, VType::S32), 0x7f);
        assert_eq!(part_select(0x80ff_7f01, Part::B2, VType::S32), -1);
        assert_eq!(part_select(0x80ff_7f01, Part::B2, VType::U32), 0xff);
        assert_eq!(part_select(0x80ff_7f01, Part::H1, VType::S32), -0x7f01);
        assert_eq!(part_select(0x80ff_7f01, Part::Word, VType::U32), 0x80ff_7f01);
        assert_eq!(part_select(0x80ff_7f01, Part::Word, VType::S32), -0x7f00_80ff);
    }

    #[test]
    fn scalar_is_exact_then_saturates_and_merges() -> Result<(), String> {
        // 0xffffffff + 1 is 2^32 exactly: an unsigned .sat only raises negatives, the low 32
        // bits are 0 (the GPU recording decides).
        assert_eq!(v("vadd.u32.u32.u32.sat", &[])?.eval(u32::MAX, 1, 0), 0);
        assert_eq!(v("vsub.u32.u32.u32.sat", &[])?.eval(1, 2, 0), 0);
        assert_eq!(v("vadd.u32.u32.u32", &[])?.eval(u32::MAX, 1, 0), 0);
        // Signed destination: 2^32 clamps to S32_MAX.
        assert_eq!(v("vadd.s32.u32.u32.sat", &[])?.eval(u32::MAX, 1, 0), 0x7fff_ffff);
        // Merge into byte 1 of c with an unsigned byte clamp: 300 -> 255.
        assert_eq!(v("vadd.u32.u32.u32.sat", &[(0, "b1")])?.eval(200, 100, 0x1122_3344), 0x1122_ff44);
        // Saturated into half-word 1 the GPU leaves 0 (an H100 decides).
        assert_eq!(v("vsub.s32.s32.s32.sat", &[(0, "h1")])?.eval(0, 1, 0x1122_3344), 0x0000_3344);
        // .min with c: c is extended by the destination type.
        assert_eq!(v("vsub.s32.s32.s32.min", &[])?.eval(1, 2, 0xffff_fffe), 0xffff_fffe);
        // Unsigned destination: the intermediate -1 ranks above every c (the GPU recording
        // decides).
        assert_eq!(v("vsub.u32.u32.u32.min", &[])?.eval(1, 2, 5), 5);
        assert_eq!(v("vsub.u32.u32.u32.max", &[])?.eval(1, 2, 5), 0xffff_ffff);
        // vadd's intermediate counts as its low 32 bits, signed: 2^31 is S32_MIN.
        assert_eq!(v("vadd.s32.s32.s32.min", &[])?.eval(0x7fff_ffff, 1, 0), 0x8000_0000);
        assert_eq!(v("vset.u32.u32.lt.add", &[])?.eval(1, 2, 41), 42);
        Ok(())
    }

    #[test]
    fn simd_selectors_pick_from_b_and_a() -> Result<(), String> {
        // vadd4 with a = .b7654 (b's bytes) and b = .b3210 (a's bytes): a+b either way.
        let x = v("vadd4.u32.u32.u32", &[(1, "b7654"), (2, "b3210")])?;
        assert_eq!(x.eval(0x0102_0304, 0x1010_1010, 0), 0x1112_1314);
        // Mask .b20: elements 1 and 3 come from c.
        let x = v("vadd4.u32.u32.u32", &[(0, "b20")])?;
        assert_eq!(x.eval(0x0102_0304, 0x1010_1010, 0xaabb_ccdd), 0xaa12_cc14);
        // -3 averaged with 0: the sum is negative, so -3 >> 1 = -2.
        assert_eq!(v("vavrg2.s32.s32.s32", &[])?.eval(0xffff_fffd, 0, 0), 0xffff_fffe);
        Ok(())
    }

    #[test]
    fn mad_follows_the_pseudocode_and_the_gpu() -> Result<(), String> {
        // (3*4) - 5 = 7: c = ~5 + 1.
        let mut x = v("vmad.s32.u32.u32", &[])?;
        x.negate(3)?;
        assert_eq!(x.eval(3, 4, 5), 7);
        assert_eq!(v("vmad.u32.u32.u32.po", &[])?.eval(3, 4, 5), 18);
        assert_eq!(v("vmad.u32.u32.u32.shr7", &[])?.eval(256, 256, 0), 512);
        assert_eq!(v("vmad.u32.u32.u32.sat", &[])?.eval(0x10000, 0x10000, 0), u32::MAX);
        // Whole-word sources and c are read as signed (the GPU recording decides): 1 *
        // -2^31 >> 7; 0 * 0 + -1 is negative (saturated to 0), scaled it is a huge unsigned
        // number (saturated to U32_MAX).
        assert_eq!(v("vmad.u32.u32.u32.shr7", &[])?.eval(1, 0x8000_0000, 0), 0xff00_0000);
        assert_eq!(v("vmad.u32.u32.u32.sat", &[])?.eval(0, 0, u32::MAX), 0);
        assert_eq!(v("vmad.u32.u32.u32.shr15.sat", &[])?.eval(0, 0, u32::MAX), u32::MAX);
        assert_eq!(v("vmad.s32.s32.s32.shr15.sat", &[])?.eval(0, 0, u32::MAX), u32::MAX);
        Ok(())
    }
}
