//! Huffman coding of literals (RFC 8878 4.2): the tree description and the decoding of
//! one stream.

use super::bits::Backward;
use super::fse;
use super::ZstdErrorKind::{self, Corrupt, Truncated};

/// The longest code (RFC 8878 4.2.1).
const MAX_BITS: u32 = 11;

/// A decoding table indexed by the next `max_bits` bits of a stream: each entry is the
/// symbol whose code starts those bits and the code's length.
#[derive(Clone, Debug)]
pub(super) struct Table {
    max_bits: u32,
    entries: Vec<(u8, u8)>,
}

impl Table {
    /// Reads a Huffman tree description from the start of `data`: the table and the bytes
    /// the description took. Errors: a truncated or invalid description.
    pub(super) fn read(data: &[u8]) -> Result<(Self, usize), ZstdErrorKind> {
        let header = usize::from(*data.first().ok_or(Truncated)?);
        let (weights, used) = if header < 128 {
            let body = data.get(1..1 + header).ok_or(Truncated)?;
            (fse_weights(body)?, 1 + header)
        } else {
            let n = header - 127;
            let bytes = n.div_ceil(2);
            let body = data.get(1..1 + bytes).ok_or(Truncated)?;
            let weights = (0..n)
                .map(|i| {
                    let b = body.get(i / 2).copied().unwrap_or(0);
                    if i % 2 == 0 {
                        b >> 4
                    } else {
                        b & 15
                    }
                })
                .collect::<Vec<u8>>();
            (weights, 1 + bytes)
        };
        Ok((Self::from_weights(&weights)?, used))
    }

    /// The table of the given weights (the last symbol's weight is implied by the others).
    fn from_weights(weights: &[u8]) -> Result<Self, ZstdErrorKind> {
        if weights.len() > 255 {
            return Err(Corrupt("Huffman tree has too many symbols"));
        }
        let mut sum = 0u32;
        for &w in weights {
            if u32::from(w) > MAX_BITS {
                return Err(Corrupt("Huffman weight too large"));
            }
            if w > 0 {
                sum += 1 << (w - 1);
            }
        }
        if sum == 0 {
            return Err(Corrupt("Huffman weights are all zero"));
        }
        let max_bits = 32 - sum.leading_zeros();
        if max_bits > MAX_BITS {
            return Err(Corrupt("Huffman codes too long"));
        }
        let leftover = (1u32 << max_bits) - sum;
        if !leftover.is_power_of_two() {
            return Err(Corrupt("Huffman weights do not complete a tree"));
        }
        let last = leftover.trailing_zeros() as u8 + 1;
        let all = || weights.iter().copied().chain(std::iter::once(last)).enumerate();
        let mut entries = Vec::with_capacity(1 << max_bits);
        // Codes go to the lightest (longest) symbols first, by symbol value within a weight.
        for w in 1..=max_bits as u8 {
            for (symbol, sw) in all() {
                if sw == w {
                    let nb_bits = max_bits as u8 + 1 - w;
                    entries.extend(std::iter::repeat_n((symbol as u8, nb_bits), 1 << (w - 1)));
                }
            }
        }
        if entries.len() != 1 << max_bits {
            return Err(Corrupt("Huffman weights do not complete a tree"));
        }
        Ok(Self { max_bits, entries })
    }

    /// Decodes exactly `count` symbols of the stream `data` into `out`.
    /// Errors: a stream without its end marker, or one not consumed exactly.
    pub(super) fn decode(&self, data: &[u8], count: usize, out: &mut Vec<u8>) -> Result<(), ZstdErrorKind> {
        let mut br = Backward::new(data).ok_or(Corrupt("Huffman stream has no end marker"))?;
        for _ in 0..count {
            let index = br.peek(self.max_bits) as usize;
            let &(symbol, nb_bits) = self.entries.get(index).ok_or(Corrupt("Huffman code outside its table"))?;
            out.push(symbol);
            br.consume(u32::from(nb_bits));
        }
        if br.bits_left() != 0 {
            return Err(Corrupt("Huffman stream size does not match its symbols"));
        }
        Ok(())
    }
}

/// The weights of an FSE-compressed description (`data`: the table description and the
/// bitstream after it, which two interleaved states decode until it is exhausted).
fn fse_weights(data: &[u8]) -> Result<Vec<u8>, ZstdErrorKind> {
    let (table, used) = fse::Table::read(data, 6, 12)?;
    let mut br = Backward::new(data.get(used..).unwrap_or(&[])).ok_or(Corrupt("Huffman weights have no end marker"))?;
    let mut states = [br.read(table.log()) as usize, br.read(table.log()) as usize];
    let mut weights = Vec::new();
    // Each round decodes one symbol with one state; once the stream is exhausted the
    // other state gives the last symbol.
    for turn in 0..256usize {
        let (this, other) = (turn % 2, (turn + 1) % 2);
        let state = *states.get(this).ok_or(Corrupt("Huffman weights"))?;
        weights.push(table.entry(state)?.symbol);
        let next = table.next(state, &mut br)?;
        if let Some(s) = states.get_mut(this) {
            *s = next;
        }
        if br.bits_left() < 0 {
            let last = *states.get(other).ok_or(Corrupt("Huffman weights"))?;
            weights.push(table.entry(last)?.symbol);
            return Ok(weights);
        }
    }
    Err(Corrupt("Huffman tree has too many symbols"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn rfc_example_codes() {
        // RFC 8878 4.2.1.3: weights of 'A'..'E' as literal 0..4: 4 3 2 0 1, F implied 1.
        let t = Table::from_weights(&[4, 3, 2, 0, 1]).unwrap();
        assert_eq!(t.max_bits, 4);
        // E: 0000, F: 0001, C: 001x, B: 01xx, A: 1xxx.
        assert_eq!(t.entries[0], (4, 4));
        assert_eq!(t.entries[1], (5, 4));
        assert_eq!(t.entries[2], (2, 3));
        assert_eq!(t.entries[3], (2, 3));
        assert_eq!(t.entries[4], (1, 2));
        assert_eq!(t.entries[8], (0, 1));
        assert_eq!(t.entries[15], (0, 1));
        assert!(Table::from_weights(&[0, 0]).is_err());
        assert!(Table::from_weights(&[2, 2, 1]).is_err());
        assert!(Table::from_weights(&[12]).is_err());
    }
}
