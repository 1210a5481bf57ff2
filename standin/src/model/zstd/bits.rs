//! Bit readers: the forward little-endian stream of FSE table descriptions and the
//! backward streams of Huffman literals, Huffman weights and sequences (RFC 8878 4.1).
//!
//! Both read past the end of their data as zero bits and say so ([`Backward::bits_left`]
//! goes negative, [`Forward::bytes_used`] exceeds the data), so that a caller checks once
//! at the end instead of at every read.

/// The `n` bits (at most 56) of `data`, read as one little-endian number, that start at
/// bit `lo`; bits below 0 or past the end of `data` are zeros.
fn bits_at(data: &[u8], lo: i64, n: u32) -> u64 {
    let n = n.min(56);
    if n == 0 || lo.saturating_add(i64::from(n)) <= 0 {
        return 0;
    }
    // `shift` < n: the number of zero bits below the start of the stream.
    let (start, shift) = if lo < 0 { (0u64, lo.unsigned_abs()) } else { (lo.unsigned_abs(), 0) };
    let Ok(byte) = usize::try_from(start / 8) else {
        return 0;
    };
    let mut word = 0u64;
    for (i, b) in data.get(byte..).unwrap_or(&[]).iter().take(8).enumerate() {
        word |= u64::from(*b) << (8 * i);
    }
    // At least 56 meaningful bits remain after dropping the first `start % 8`.
    let value = (word >> (start % 8)) << shift;
    value & ((1u64 << n) - 1)
}

/// A backward bitstream: the last byte's highest set bit marks its end, and reading goes
/// from there toward bit 0 of the first byte.
pub(super) struct Backward<'a> {
    data: &'a [u8],
    bits_left: i64,
}

impl<'a> Backward<'a> {
    /// `None` when `data` is empty or its last byte is 0 (no end marker).
    pub(super) fn new(data: &'a [u8]) -> Option<Self> {
        let last = *data.last()?;
        if last == 0 {
            return None;
        }
        let total = i64::try_from(data.len()).ok()?.checked_mul(8)?;
        let padding = i64::from(last.leading_zeros()) + 1;
        Some(Self { data, bits_left: total - padding })
    }

    /// The next `n` (at most 56) bits without consuming them, first bit most significant;
    /// zeros past the start of the stream.
    pub(super) fn peek(&self, n: u32) -> u64 {
        bits_at(self.data, self.bits_left.saturating_sub(i64::from(n)), n)
    }

    /// Consumes `n` bits.
    pub(super) fn consume(&mut self, n: u32) {
        self.bits_left = self.bits_left.saturating_sub(i64::from(n));
    }

    /// Reads `n` (at most 56) bits.
    pub(super) fn read(&mut self, n: u32) -> u64 {
        let value = self.peek(n);
        self.consume(n);
        value
    }

    /// Bits not yet read; negative once reading went past the start of the stream.
    pub(super) fn bits_left(&self) -> i64 {
        self.bits_left
    }
}

/// A forward bitstream: bit 0 of the first byte first.
pub(super) struct Forward<'a> {
    data: &'a [u8],
    pos: i64,
}

impl<'a> Forward<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// The next `n` (at most 56) bits without consuming them; zeros past the end.
    pub(super) fn peek(&self, n: u32) -> u64 {
        bits_at(self.data, self.pos, n)
    }

    /// Consumes `n` bits.
    pub(super) fn consume(&mut self, n: u32) {
        self.pos = self.pos.saturating_add(i64::from(n));
    }

    /// Reads `n` (at most 56) bits.
    pub(super) fn read(&mut self, n: u32) -> u64 {
        let value = self.peek(n);
        self.consume(n);
        value
    }

    /// Whole bytes the bits read so far occupy (may exceed the data's length).
    pub(super) fn bytes_used(&self) -> usize {
        usize::try_from(self.pos.saturating_add(7) / 8).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn backward_reads_from_the_end_marker_down() {
        // 0b0000_0101 0b0000_0110: marker is bit 2 of the last byte; then bits 1,0 of it
        // (1,0), then the first byte from bit 7 down.
        let data = [0b1010_0101u8, 0b0000_0110];
        let mut br = Backward::new(&data).unwrap();
        assert_eq!(br.bits_left(), 10);
        assert_eq!(br.read(2), 0b10);
        assert_eq!(br.read(3), 0b101);
        assert_eq!(br.read(5), 0b00101);
        assert_eq!(br.bits_left(), 0);
        assert_eq!(br.read(3), 0);
        assert_eq!(br.bits_left(), -3);
        assert!(Backward::new(&[1, 0]).is_none());
        assert!(Backward::new(&[]).is_none());
    }

    #[test]
    fn forward_reads_little_endian() {
        let data = [0x34u8, 0x12];
        let mut fr = Forward::new(&data);
        assert_eq!(fr.read(4), 4);
        assert_eq!(fr.read(8), 0x23);
        assert_eq!(fr.bytes_used(), 2);
        assert_eq!(fr.read(8), 1);
        assert_eq!(fr.bytes_used(), 3);
    }
}
