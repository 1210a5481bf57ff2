//! Helpers shared by the fuzz targets: a reader that turns the fuzzer's bytes into choices.

/// Fuzz input read front to back; once it runs out every read gives zeros, so any input
/// decodes to something.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Input<'a> {
        Input { bytes }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&b, rest)) => {
                self.bytes = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `N` bytes (zeros past the end).
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.u8();
        }
        out
    }

    /// The next 4 bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// The next 8 bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// A value below `n` (0 when `n` is 0), from one byte.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            usize::from(self.u8()) % n
        }
    }

    /// A size: mostly small, sometimes a boundary value a driver must refuse or handle
    /// (0, `usize::MAX`, beyond any device's memory).
    pub fn size(&mut self, small: usize) -> usize {
        match self.u8() % 8 {
            0 => 0,
            1 => usize::MAX,
            2 => usize::MAX / 2 + 1,
            3 => 1 << 40,
            _ => self.u32() as usize % (small + 1),
        }
    }

    /// The rest of the input.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}
