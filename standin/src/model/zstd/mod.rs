//! Zstandard decompression (RFC 8878), for the PTX members nvcc 13 compresses in the
//! fatbins it builds: one or more frames, skippable frames, raw, RLE and compressed blocks
//! (Huffman literals, FSE-coded sequences, repeat offsets) and the XXH64 content checksum.
//! Dictionaries are not supported.
//!
//! The decoder keeps the whole output in memory (it is the window), allocates at most the
//! caller's limit plus one block's literals and a few small tables, and never panics: every
//! malformed input is an error naming the byte where the structure it broke starts.

// Until the fatbin reader calls it, only the tests do.

mod bits;
mod fse;
mod huffman;
mod literals;
mod sequences;
#[cfg(test)]
mod tests;
mod xxh64;

/// The magic number that starts a Zstandard frame.
const MAGIC: u32 = 0xFD2F_B528;
/// Skippable frames start with one of 0x184D2A50..=0x184D2A5F.
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The most bytes a block holds (RFC 8878 3.1.1.2.4).
const BLOCK_MAX: usize = 128 << 10;

/// What was wrong with an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ZstdErrorKind {
    /// The input ended inside a frame (or held no frame at all).
    #[error("truncated input")]
    Truncated,
    /// Neither a Zstandard nor a skippable frame starts here.
    #[error("unknown frame magic number {0:#010x}")]
    UnknownMagic(u32),
    /// The frame needs a dictionary, which this decoder does not support.
    #[error("frame needs dictionary {0}, and dictionaries are not supported")]
    Dictionary(u32),
    /// The output would exceed the caller's limit.
    #[error("output exceeds the limit")]
    LimitExceeded,
    /// The frame's content does not have the size its header declares.
    #[error("frame content size is {actual}, its header declares {declared}")]
    ContentSize {
        /// The size in the frame header.
        declared: u64,
        /// The size decoded.
        actual: u64,
    },
    /// The frame's content checksum does not match its content.
    #[error("content checksum {expected:#010x} does not match the content's {actual:#010x}")]
    Checksum {
        /// The checksum in the frame.
        expected: u32,
        /// The checksum of the decoded content.
        actual: u32,
    },
    /// Memory for the output could not be allocated.
    #[error("out of memory")]
    OutOfMemory,
    /// Invalid data: a reserved value, a malformed table or bitstream, a bad offset.
    #[error("corrupt data: {0}")]
    Corrupt(&'static str),
}

/// Why an input could not be decompressed, and the byte offset (in the input) where the
/// structure with the fault starts: a frame, its header, a block or a block's section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("zstd: {kind} at byte {offset}")]
pub(crate) struct ZstdError {
    /// What was wrong.
    pub(crate) kind: ZstdErrorKind,
    /// Where, in bytes from the start of the input.
    pub(crate) offset: usize,
}

/// Decompresses `input`: one or more Zstandard frames, with skippable frames anywhere
/// among them, into the concatenation of their contents.
///
/// Errors: an input that is empty, ends inside a frame, holds anything but frames, a frame
/// with a dictionary, corrupt data, a bad checksum or content size, or whose output
/// would exceed `limit` bytes (refused before allocating when a frame declares its size).
/// Nothing is returned of the frames decoded before the fault.
pub(crate) fn decompress(input: &[u8], limit: usize) -> Result<Vec<u8>, ZstdError> {
    if input.is_empty() {
        return Err(ZstdError { kind: ZstdErrorKind::Truncated, offset: 0 });
    }
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < input.len() {
        let at = |kind| ZstdError { kind, offset: pos };
        let magic = u32_at(input, pos).ok_or(at(ZstdErrorKind::Truncated))?;
        if magic == MAGIC {
            pos = frame(input, pos, &mut out, limit)?;
        } else if magic & !0xF == SKIPPABLE_MAGIC {
            let size = u32_at(input, pos + 4).ok_or(at(ZstdErrorKind::Truncated))? as usize;
            pos = (pos + 8).checked_add(size).filter(|&end| end <= input.len()).ok_or(at(ZstdErrorKind::Truncated))?;
        } else {
            return Err(at(ZstdErrorKind::UnknownMagic(magic)));
        }
    }
    Ok(out)
}

/// The little-endian number of `n` bytes at `pos`.
fn le_at(input: &[u8], pos: usize, n: usize) -> Option<u64> {
    let bytes = input.get(pos..pos.checked_add(n)?)?;
    Some(bytes.iter().rev().fold(0, |a, &b| a << 8 | u64::from(b)))
}

fn u32_at(input: &[u8], pos: usize) -> Option<u32> {
    le_at(input, pos, 4).map(|v| v as u32)
}

/// Makes room in `out` for `extra` more bytes, growing it at most to `limit`.
/// Errors: `LimitExceeded` past the limit, `OutOfMemory` when allocation fails.
fn reserve(out: &mut Vec<u8>, extra: usize, limit: usize) -> Result<(), ZstdErrorKind> {
    let need = out.len().checked_add(extra).filter(|&n| n <= limit).ok_or(ZstdErrorKind::LimitExceeded)?;
    if need > out.capacity() {
        let target = need.max(out.capacity().saturating_mul(2).min(limit));
        out.try_reserve_exact(target - out.len()).map_err(|_| ZstdErrorKind::OutOfMemory)?;
    }
    Ok(())
}

/// Decodes the frame at `start` (its magic number checked) into `out`: the offset after it.
fn frame(input: &[u8], start: usize, out: &mut Vec<u8>, limit: usize) -> Result<usize, ZstdError> {
    let err = |kind, offset| ZstdError { kind, offset };
    let truncated = |offset| err(ZstdErrorKind::Truncated, offset);
    let header = start + 4;
    let descriptor = *input.get(header).ok_or(truncated(header))?;
    if descriptor & 0x08 != 0 {
        return Err(err(ZstdErrorKind::Corrupt("reserved bit set in the frame header"), header));
    }
    let single_segment = descriptor & 0x20 != 0;
    let has_checksum = descriptor & 0x04 != 0;
    let mut pos = header + 1;
    let mut window = 0u64;
    if !single_segment {
        let w = *input.get(pos).ok_or(truncated(pos))?;
        let base = 1u64 << (10 + (w >> 3));
        window = base + (base / 8) * u64::from(w & 7);
        pos += 1;
    }
    let dict_len = match descriptor & 3 {
        0 => 0,
        1 => 1,
        2 => 2,
        _ => 4,
    };
    let dict = le_at(input, pos, dict_len).ok_or(truncated(pos))?;
    if dict != 0 {
        return Err(err(ZstdErrorKind::Dictionary(dict as u32), header));
    }
    pos += dict_len;
    let fcs_len = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut content_size = None;
    if fcs_len > 0 {
        let v = le_at(input, pos, fcs_len).ok_or(truncated(pos))?;
        let v = if fcs_len == 2 { v + 256 } else { v };
        if v > limit.saturating_sub(out.len()) as u64 {
            return Err(err(ZstdErrorKind::LimitExceeded, start));
        }
        out.try_reserve_exact(v as usize).map_err(|_| err(ZstdErrorKind::OutOfMemory, start))?;
        content_size = Some(v);
        pos += fcs_len;
    }
    if single_segment {
        window = content_size.unwrap_or(0);
    }
    let block_max = usize::try_from(window).unwrap_or(usize::MAX).min(BLOCK_MAX);
    let frame_start = out.len();
    let mut huff = None;
    let mut seq = sequences::State::new();
    let mut literals = Vec::new();
    loop {
        let block = pos;
        let h = le_at(input, pos, 3).ok_or(truncated(pos))? as usize;
        pos += 3;
        let (last, kind, size) = (h & 1 != 0, (h >> 1) & 3, h >> 3);
        let at = |kind| err(kind, block);
        if size > BLOCK_MAX {
            return Err(at(ZstdErrorKind::Corrupt("block larger than 128 KiB")));
        }
        match kind {
            0 => {
                if size > block_max {
                    return Err(at(ZstdErrorKind::Corrupt("block larger than the window")));
                }
                let data = input.get(pos..pos + size).ok_or(truncated(pos))?;
                reserve(out, size, limit).map_err(at)?;
                out.extend_from_slice(data);
                pos += size;
            }
            1 => {
                if size > block_max {
                    return Err(at(ZstdErrorKind::Corrupt("block larger than the window")));
                }
                let byte = *input.get(pos).ok_or(truncated(pos))?;
                reserve(out, size, limit).map_err(at)?;
                out.resize(out.len() + size, byte);
                pos += 1;
            }
            2 => {
                let data = input.get(pos..pos + size).ok_or(truncated(pos))?;
                let used = literals::read(data, &mut huff, &mut literals, block_max).map_err(|k| err(k, pos))?;
                let section = data.get(used..).ok_or(truncated(pos))?;
                let mut sink = sequences::Sink { out: &mut *out, frame_start, window, limit, block_max };
                sequences::execute(section, &mut seq, &literals, &mut sink).map_err(|k| err(k, pos + used))?;
                pos += size;
            }
            _ => return Err(at(ZstdErrorKind::Corrupt("reserved block type"))),
        }
        if last {
            break;
        }
    }
    let produced = out.get(frame_start..).unwrap_or(&[]);
    if let Some(declared) = content_size {
        if declared != produced.len() as u64 {
            return Err(err(ZstdErrorKind::ContentSize { declared, actual: produced.len() as u64 }, start));
        }
    }
    if has_checksum {
        let expected = u32_at(input, pos).ok_or(truncated(pos))?;
        let actual = xxh64::xxh64(produced) as u32;
        if expected != actual {
            return Err(err(ZstdErrorKind::Checksum { expected, actual }, pos));
        }
        pos += 4;
    }
    Ok(pos)
}
