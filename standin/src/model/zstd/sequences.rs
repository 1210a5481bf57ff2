//! The sequences section of a compressed block (RFC 8878 3.1.1.3.2) and its execution
//! (3.1.1.4 and 3.1.1.5): literal copies, matches and repeat offsets.

use super::bits::Backward;
use super::fse;
use super::ZstdErrorKind::{self, Corrupt, Truncated};

/// Literal length codes 0..=35: baseline and extra bits.
const LL_CODES: [(u32, u8); 36] = [
    (0, 0),
    (1, 0),
    (2, 0),
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 0),
    (12, 0),
    (13, 0),
    (14, 0),
    (15, 0),
    (16, 1),
    (18, 1),
    (20, 1),
    (22, 1),
    (24, 2),
    (28, 2),
    (32, 3),
    (40, 3),
    (48, 4),
    (64, 6),
    (128, 7),
    (256, 8),
    (512, 9),
    (1024, 10),
    (2048, 11),
    (4096, 12),
    (8192, 13),
    (16384, 14),
    (32768, 15),
    (65536, 16),
];

/// Match length codes 0..=52: baseline and extra bits.
const ML_CODES: [(u32, u8); 53] = [
    (3, 0),
    (4, 0),
    (5, 0),
    (6, 0),
    (7, 0),
    (8, 0),
    (9, 0),
    (10, 0),
    (11, 0),
    (12, 0),
    (13, 0),
    (14, 0),
    (15, 0),
    (16, 0),
    (17, 0),
    (18, 0),
    (19, 0),
    (20, 0),
    (21, 0),
    (22, 0),
    (23, 0),
    (24, 0),
    (25, 0),
    (26, 0),
    (27, 0),
    (28, 0),
    (29, 0),
    (30, 0),
    (31, 0),
    (32, 0),
    (33, 0),
    (34, 0),
    (35, 1),
    (37, 1),
    (39, 1),
    (41, 1),
    (43, 2),
    (47, 2),
    (51, 3),
    (59, 3),
    (67, 4),
    (83, 4),
    (99, 5),
    (131, 7),
    (259, 8),
    (515, 9),
    (1027, 10),
    (2051, 11),
    (4099, 12),
    (8195, 13),
    (16387, 14),
    (32771, 15),
    (65539, 16),
];

/// The largest offset code: offsets of up to 31 bits.
const MAX_OF_CODE: u8 = 31;

/// What a frame's sequences sections carry from one block to the next: the last table
/// of each kind (for the repeat mode) and the repeat offsets.
pub(super) struct State {
    ll: Option<fse::Table>,
    of: Option<fse::Table>,
    ml: Option<fse::Table>,
    reps: [u64; 3],
}

impl State {
    /// The state at the start of a frame.
    pub(super) fn new() -> Self {
        Self { ll: None, of: None, ml: None, reps: [1, 4, 8] }
    }
}

/// Where the decoded sequences write: the output, where the current frame starts in it,
/// the frame's window size, the output limit and the most bytes one block may produce.
pub(super) struct Sink<'a> {
    pub(super) out: &'a mut Vec<u8>,
    pub(super) frame_start: usize,
    pub(super) window: u64,
    pub(super) limit: usize,
    pub(super) block_max: usize,
}

/// Decodes the sequences `section` (the rest of a block) and executes them over
/// `literals`, appending the block's output to `sink.out`.
/// Errors: an invalid or truncated section, or a block that would exceed the limits;
/// `sink.out` then holds part of the block's output.
pub(super) fn execute(
    section: &[u8],
    state: &mut State,
    literals: &[u8],
    sink: &mut Sink<'_>,
) -> Result<(), ZstdErrorKind> {
    let byte = |i: usize| section.get(i).copied().map(usize::from).ok_or(Truncated);
    let b0 = byte(0)?;
    let (count, header) = match b0 {
        0..128 => (b0, 1),
        128..255 => (((b0 - 128) << 8) + byte(1)?, 2),
        _ => (byte(1)? + (byte(2)? << 8) + 0x7f00, 3),
    };
    if count == 0 {
        if section.len() != 1 {
            return Err(Corrupt("data after an empty sequences section"));
        }
        return copy_out(sink, literals, 0);
    }
    let modes = byte(header)?;
    if modes & 3 != 0 {
        return Err(Corrupt("reserved bits set in the symbol compression modes"));
    }
    let mut pos = header + 1;
    let rest = |pos: usize| section.get(pos..).ok_or(Truncated);
    pos += table(rest(pos)?, (modes >> 6) & 3, &mut state.ll, fse::LL_DEFAULT, 9, 35)?;
    pos += table(rest(pos)?, (modes >> 4) & 3, &mut state.of, fse::OF_DEFAULT, 8, MAX_OF_CODE)?;
    pos += table(rest(pos)?, (modes >> 2) & 3, &mut state.ml, fse::ML_DEFAULT, 9, 52)?;
    let (Some(ll), Some(of), Some(ml)) = (&state.ll, &state.of, &state.ml) else {
        return Err(Corrupt("sequence table missing"));
    };
    let mut br = Backward::new(rest(pos)?).ok_or(Corrupt("sequences bitstream has no end marker"))?;
    let mut ll_state = br.read(ll.log()) as usize;
    let mut of_state = br.read(of.log()) as usize;
    let mut ml_state = br.read(ml.log()) as usize;
    let mut lit_pos = 0usize;
    let block_start = sink.out.len();
    for i in 0..count {
        let of_code = of.entry(of_state)?.symbol;
        let (ll_base, ll_bits) = *LL_CODES.get(usize::from(ll.entry(ll_state)?.symbol)).ok_or(Corrupt("bad code"))?;
        let (ml_base, ml_bits) = *ML_CODES.get(usize::from(ml.entry(ml_state)?.symbol)).ok_or(Corrupt("bad code"))?;
        if of_code > MAX_OF_CODE {
            return Err(Corrupt("offset code too large"));
        }
        let offset_value = (1u64 << of_code) + br.read(u32::from(of_code));
        let match_len = ml_base as usize + br.read(u32::from(ml_bits)) as usize;
        let lit_len = ll_base as usize + br.read(u32::from(ll_bits)) as usize;
        let offset = resolve_offset(&mut state.reps, offset_value, lit_len)?;
        if i + 1 < count {
            ll_state = ll.next(ll_state, &mut br)?;
            ml_state = ml.next(ml_state, &mut br)?;
            of_state = of.next(of_state, &mut br)?;
        }
        let lits = lit_pos
            .checked_add(lit_len)
            .and_then(|end| literals.get(lit_pos..end))
            .ok_or(Corrupt("literal length exceeds the literals"))?;
        lit_pos += lit_len;
        grow(sink, block_start, lit_len + match_len)?;
        sink.out.extend_from_slice(lits);
        copy_match(sink, offset, match_len)?;
    }
    if br.bits_left() != 0 {
        return Err(Corrupt("sequences bitstream size does not match its sequences"));
    }
    copy_out(sink, literals.get(lit_pos..).unwrap_or(&[]), block_start)
}

/// Reads the table of one kind in `mode` from the start of `data` into `slot` (kept for
/// the repeat mode): the bytes its description took.
fn table(
    data: &[u8],
    mode: usize,
    slot: &mut Option<fse::Table>,
    default: (u8, &[i16]),
    max_log: u8,
    max_symbol: u8,
) -> Result<usize, ZstdErrorKind> {
    match mode {
        0 => {
            *slot = Some(fse::Table::build(default.0, default.1)?);
            Ok(0)
        }
        1 => {
            let symbol = *data.first().ok_or(Truncated)?;
            if symbol > max_symbol {
                return Err(Corrupt("RLE sequence code too large"));
            }
            *slot = Some(fse::Table::rle(symbol));
            Ok(1)
        }
        2 => {
            let (t, used) = fse::Table::read(data, max_log, max_symbol)?;
            *slot = Some(t);
            Ok(used)
        }
        _ => match slot {
            Some(_) => Ok(0),
            None => Err(Corrupt("repeated sequence table without a previous one")),
        },
    }
}

/// The offset of a sequence from its offset value (RFC 8878 3.1.1.5), updating the
/// repeat offsets. Errors: a repeat offset of 0.
fn resolve_offset(reps: &mut [u64; 3], offset_value: u64, lit_len: usize) -> Result<u64, ZstdErrorKind> {
    let [r0, r1, r2] = *reps;
    if offset_value > 3 {
        let offset = offset_value - 3;
        *reps = [offset, r0, r1];
        return Ok(offset);
    }
    let index = if lit_len == 0 { offset_value } else { offset_value - 1 };
    let offset = match index {
        0 => return Ok(r0),
        1 => r1,
        2 => r2,
        _ => r0.checked_sub(1).filter(|&o| o > 0).ok_or(Corrupt("repeat offset of 0"))?,
    };
    *reps = if index == 1 { [offset, r0, r2] } else { [offset, r0, r1] };
    Ok(offset)
}

/// Makes room for `extra` more bytes of the block that started at `block_start`.
/// Errors: a block larger than its maximum, or output beyond the limit.
fn grow(sink: &mut Sink<'_>, block_start: usize, extra: usize) -> Result<(), ZstdErrorKind> {
    let block_len = sink.out.len().saturating_sub(block_start).saturating_add(extra);
    if block_len > sink.block_max {
        return Err(Corrupt("block decompresses to more than its maximum size"));
    }
    super::reserve(sink.out, extra, sink.limit)
}

/// Appends `literals` (the rest of a block's literals).
fn copy_out(sink: &mut Sink<'_>, literals: &[u8], block_start: usize) -> Result<(), ZstdErrorKind> {
    grow(sink, block_start, literals.len())?;
    sink.out.extend_from_slice(literals);
    Ok(())
}

/// Appends `len` bytes copied from `offset` bytes back (room already made).
/// Errors: an offset of 0, before the frame's start or beyond its window.
fn copy_match(sink: &mut Sink<'_>, offset: u64, len: usize) -> Result<(), ZstdErrorKind> {
    let produced = sink.out.len().saturating_sub(sink.frame_start);
    if offset == 0 || offset > produced as u64 || offset > sink.window {
        return Err(Corrupt("match offset beyond the data decoded"));
    }
    // offset <= produced <= out.len(), so the source starts inside the output.
    let offset = offset as usize;
    let mut left = len;
    while left > 0 {
        let start = sink.out.len() - offset;
        // Copies at most `offset` bytes at a time: the source range is always written.
        let chunk = left.min(offset);
        let end = start + chunk;
        sink.out.extend_from_within(start..end);
        left -= chunk;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn repeat_offsets_follow_rfc_8878() {
        let mut reps = [10, 20, 30];
        assert_eq!(resolve_offset(&mut reps, 1, 5).unwrap(), 10);
        assert_eq!(reps, [10, 20, 30]);
        assert_eq!(resolve_offset(&mut reps, 2, 5).unwrap(), 20);
        assert_eq!(reps, [20, 10, 30]);
        assert_eq!(resolve_offset(&mut reps, 3, 5).unwrap(), 30);
        assert_eq!(reps, [30, 20, 10]);
        assert_eq!(resolve_offset(&mut reps, 1, 0).unwrap(), 20);
        assert_eq!(reps, [20, 30, 10]);
        assert_eq!(resolve_offset(&mut reps, 2, 0).unwrap(), 10);
        assert_eq!(reps, [10, 20, 30]);
        assert_eq!(resolve_offset(&mut reps, 3, 0).unwrap(), 9);
        assert_eq!(reps, [9, 10, 20]);
        assert_eq!(resolve_offset(&mut reps, 103, 0).unwrap(), 100);
        assert_eq!(reps, [100, 9, 10]);
        let mut one = [1, 4, 8];
        assert!(resolve_offset(&mut one, 3, 0).is_err());
    }
}
