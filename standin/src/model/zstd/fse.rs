//! Finite State Entropy tables (RFC 8878 4.1.1): their description in a frame, the
//! predefined distributions of sequences, and the decoding table built from either.

use super::bits::{Backward, Forward};
use super::ZstdErrorKind::{self, Corrupt};

/// One state of a decoding table: the symbol it emits and how the next state is found
/// (`baseline` plus `nb_bits` bits of the stream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) symbol: u8,
    pub(super) nb_bits: u8,
    pub(super) baseline: u16,
}

/// A decoding table of `1 << log` states.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Table {
    log: u8,
    entries: Vec<Entry>,
}

/// Literal length codes: accuracy log 6, codes 0..=35 (RFC 8878 3.1.1.3.2.2.1).
pub(super) const LL_DEFAULT: (u8, &[i16]) = (
    6,
    &[4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1],
);
/// Match length codes: accuracy log 6, codes 0..=52.
pub(super) const ML_DEFAULT: (u8, &[i16]) = (
    6,
    &[
        1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
    ],
);
/// Offset codes: accuracy log 5, codes 0..=28.
pub(super) const OF_DEFAULT: (u8, &[i16]) =
    (5, &[1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1]);

impl Table {
    /// A table of one state that always emits `symbol` and reads no bits (RLE mode).
    pub(super) fn rle(symbol: u8) -> Self {
        Self { log: 0, entries: vec![Entry { symbol, nb_bits: 0, baseline: 0 }] }
    }

    /// Reads a table description from the start of `data` (at most `max_log` accuracy,
    /// symbols up to `max_symbol`): the table and the bytes the description took.
    /// Errors: a description that is truncated, exceeds the limits or does not add up.
    pub(super) fn read(data: &[u8], max_log: u8, max_symbol: u8) -> Result<(Self, usize), ZstdErrorKind> {
        let mut fr = Forward::new(data);
        let log = fr.read(4) as u32 + 5;
        if log > u32::from(max_log) {
            return Err(Corrupt("FSE accuracy log too large"));
        }
        let size = 1i32 << log;
        let mut remaining = size + 1;
        let mut threshold = size;
        let mut nb_bits = log + 1;
        let max_symbols = usize::from(max_symbol) + 1;
        let mut counts: Vec<i16> = Vec::with_capacity(max_symbols);
        while remaining > 1 {
            if counts.len() >= max_symbols {
                return Err(Corrupt("FSE description has too many symbols"));
            }
            // `threshold` is 1 << (nb_bits - 1) and `remaining` >= 2, so nb_bits >= 2.
            let max = 2 * threshold - 1 - remaining;
            let low = fr.peek(nb_bits - 1) as i32;
            let value = if low < max {
                fr.consume(nb_bits - 1);
                low
            } else {
                let full = fr.peek(nb_bits) as i32;
                fr.consume(nb_bits);
                if full >= threshold {
                    full - max
                } else {
                    full
                }
            };
            let count = value - 1;
            remaining -= count.abs();
            counts.push(count as i16);
            if count == 0 {
                loop {
                    let repeat = fr.read(2);
                    counts.extend(std::iter::repeat_n(0, repeat as usize));
                    if counts.len() > max_symbols {
                        return Err(Corrupt("FSE description has too many symbols"));
                    }
                    if repeat != 3 {
                        break;
                    }
                }
            }
            if remaining < 1 {
                return Err(Corrupt("FSE probabilities exceed the table"));
            }
            while remaining < threshold {
                nb_bits -= 1;
                threshold >>= 1;
            }
        }
        let used = fr.bytes_used();
        if used > data.len() {
            return Err(ZstdErrorKind::Truncated);
        }
        Ok((Self::build(log as u8, &counts)?, used))
    }

    /// The decoding table of a distribution of `1 << log` (at most 9) states (-1: a
    /// "less than one" probability). Errors: counts that do not add up to the table size.
    pub(super) fn build(log: u8, counts: &[i16]) -> Result<Self, ZstdErrorKind> {
        const BAD: ZstdErrorKind = Corrupt("FSE distribution does not fill its table");
        if log > 9 || counts.len() > 256 {
            return Err(BAD);
        }
        let size = 1usize << log;
        let mut entries = vec![Entry::default(); size];
        let mut next = vec![0u32; counts.len()];
        // Cells above `high` hold the "less than one" symbols, from the top down.
        let mut high = size as i64 - 1;
        let mut total = 0usize;
        for (s, (&c, n)) in counts.iter().zip(next.iter_mut()).enumerate() {
            if c == -1 {
                let cell = usize::try_from(high).ok().and_then(|h| entries.get_mut(h)).ok_or(BAD)?;
                cell.symbol = s as u8;
                high -= 1;
                *n = 1;
                total += 1;
            } else if c < -1 {
                return Err(BAD);
            } else {
                *n = c as u32;
                total += c as usize;
            }
        }
        if total != size {
            return Err(BAD);
        }
        let mask = size - 1;
        let step = (size >> 1) + (size >> 3) + 3;
        let mut pos = 0usize;
        for (s, &c) in counts.iter().enumerate() {
            for _ in 0..c.max(0) {
                entries.get_mut(pos).ok_or(BAD)?.symbol = s as u8;
                // `step` is odd, so the walk visits every cell within `size` steps; the
                // counts fill exactly the cells up to `high`, which is >= 0 here.
                loop {
                    pos = (pos + step) & mask;
                    if pos as i64 <= high {
                        break;
                    }
                }
            }
        }
        if pos != 0 {
            return Err(BAD);
        }
        for e in &mut entries {
            let n = next.get_mut(usize::from(e.symbol)).ok_or(BAD)?;
            let x = *n;
            *n += 1;
            // x is in count..2*count, so its highest bit is at most `log`.
            let highbit = 31 - x.leading_zeros();
            let nb = u32::from(log).checked_sub(highbit).ok_or(BAD)?;
            let baseline = (x << nb).checked_sub(size as u32).ok_or(BAD)?;
            e.nb_bits = nb as u8;
            e.baseline = u16::try_from(baseline).map_err(|_| BAD)?;
        }
        Ok(Self { log, entries })
    }

    /// The accuracy log: the bits of an initial state.
    pub(super) fn log(&self) -> u32 {
        u32::from(self.log)
    }

    /// The entry of `state`. Errors: a state outside the table.
    pub(super) fn entry(&self, state: usize) -> Result<Entry, ZstdErrorKind> {
        self.entries.get(state).copied().ok_or(Corrupt("FSE state outside its table"))
    }

    /// The state after `state`, reading its bits from `br`.
    pub(super) fn next(&self, state: usize, br: &mut Backward<'_>) -> Result<usize, ZstdErrorKind> {
        let e = self.entry(state)?;
        Ok(usize::from(e.baseline) + br.read(u32::from(e.nb_bits)) as usize)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn predefined_distributions_fill_their_tables() {
        for (log, counts) in [LL_DEFAULT, ML_DEFAULT, OF_DEFAULT] {
            let t = Table::build(log, counts).unwrap();
            assert_eq!(t.entries.len(), 1 << log);
        }
        // RFC 8878 Appendix A: the first states of the literal length table.
        let ll = Table::build(LL_DEFAULT.0, LL_DEFAULT.1).unwrap();
        assert_eq!(ll.entries[0], Entry { symbol: 0, nb_bits: 4, baseline: 0 });
        assert_eq!(ll.entries[1], Entry { symbol: 0, nb_bits: 4, baseline: 16 });
        assert_eq!(ll.entries[2], Entry { symbol: 1, nb_bits: 5, baseline: 32 });
        assert_eq!(ll.entries[63], Entry { symbol: 32, nb_bits: 6, baseline: 0 });
    }

    #[test]
    fn bad_distributions_are_refused() {
        assert!(Table::build(5, &[1, 1]).is_err());
        assert!(Table::build(2, &[5]).is_err());
        assert!(Table::build(2, &[-2, 6]).is_err());
        assert!(Table::build(10, &[1024]).is_err());
        // Accuracy log 5 + 15 is over every limit.
        assert!(Table::read(&[0x0f, 0, 0], 9, 35).is_err());
        assert!(Table::read(&[], 9, 35).is_err());
    }
}
