//! The literals section of a compressed block (RFC 8878 3.1.1.3.1).

use super::huffman;
use super::ZstdErrorKind::{self, Corrupt, Truncated};

/// Decodes the literals section at the start of `block` into `out` (cleared first), with
/// `huff` the frame's last Huffman table (replaced by a new description, used by treeless
/// literals) and `max` the most literals a block may hold. Returns the section's size.
/// Errors: a truncated or invalid section; `out` then holds part of the literals.
pub(super) fn read(
    block: &[u8],
    huff: &mut Option<huffman::Table>,
    out: &mut Vec<u8>,
    max: usize,
) -> Result<usize, ZstdErrorKind> {
    out.clear();
    let byte = |i: usize| block.get(i).copied().map(usize::from).ok_or(Truncated);
    let b0 = byte(0)?;
    let kind = b0 & 3;
    let size_format = (b0 >> 2) & 3;
    if kind < 2 {
        // Raw or RLE: a regenerated size of 5, 12 or 20 bits.
        let (header, size) = match size_format {
            0 | 2 => (1, b0 >> 3),
            1 => (2, (b0 >> 4) + (byte(1)? << 4)),
            _ => (3, (b0 >> 4) + (byte(1)? << 4) + (byte(2)? << 12)),
        };
        if size > max {
            return Err(Corrupt("literals exceed the block size"));
        }
        if kind == 0 {
            out.extend_from_slice(block.get(header..header + size).ok_or(Truncated)?);
            return Ok(header + size);
        }
        out.resize(size, block.get(header).copied().ok_or(Truncated)?);
        return Ok(header + 1);
    }
    // Compressed or treeless: regenerated and compressed sizes of 10, 14 or 18 bits each.
    let (header, bits, streams) = match size_format {
        0 => (3, 10, 1),
        1 => (3, 10, 4),
        2 => (4, 14, 4),
        _ => (5, 18, 4),
    };
    let mut fields = 0u64;
    for i in 0..header {
        fields |= (byte(i)? as u64) << (8 * i);
    }
    let mask = (1u64 << bits) - 1;
    let regenerated = ((fields >> 4) & mask) as usize;
    let compressed = ((fields >> (4 + bits)) & mask) as usize;
    if regenerated > max {
        return Err(Corrupt("literals exceed the block size"));
    }
    let mut data = block.get(header..header + compressed).ok_or(Truncated)?;
    if kind == 2 {
        let (table, used) = huffman::Table::read(data)?;
        *huff = Some(table);
        data = data.get(used..).ok_or(Truncated)?;
    }
    let table = huff.as_ref().ok_or(Corrupt("treeless literals without a previous Huffman table"))?;
    out.reserve(regenerated);
    if streams == 1 {
        table.decode(data, regenerated, out)?;
    } else {
        let size = |i: usize| data.get(i..i + 2).map(|b| b.iter().rev().fold(0, |a, &x| a << 8 | usize::from(x)));
        let sizes = [size(0), size(2), size(4)];
        let [Some(s1), Some(s2), Some(s3)] = sizes else { return Err(Truncated) };
        let mut rest = data.get(6..).ok_or(Truncated)?;
        let segment = regenerated.div_ceil(4);
        let last = regenerated.checked_sub(3 * segment).ok_or(Corrupt("too few literals for four streams"))?;
        for (len, count) in [(s1, segment), (s2, segment), (s3, segment)] {
            let stream = rest.get(..len).ok_or(Truncated)?;
            rest = rest.get(len..).ok_or(Truncated)?;
            table.decode(stream, count, out)?;
        }
        table.decode(rest, last, out)?;
    }
    Ok(header + compressed)
}
