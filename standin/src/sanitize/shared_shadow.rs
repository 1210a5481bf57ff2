//! The shadow of a block's shared memory for the `shared` check: each byte's [`Byte`]
//! state, kept once per aligned 4-byte word while the word's bytes agree (the usual case:
//! shared memory is mostly accessed a word or more at a time) and byte by byte once an
//! access has set them apart, until they agree again.

use std::num::NonZeroU32;

/// Shared-memory offsets past this are not checked (no block has that much: the H200's
/// limit is 227 KiB), so that the shadow stays bounded.
pub(super) const SHARED_LIMIT: u64 = 1 << 20;

/// One access, as a race report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct By {
    pub(super) thread: u32,
    /// The PTX line plus one ([`By::line`]): never zero, so that an `Option<By>` (three
    /// per shared byte in the shadow) takes no more room than a `By`.
    pub(super) line_plus_one: NonZeroU32,
    /// The block's barrier epoch at the access.
    pub(super) epoch: u32,
    /// The warp's `bar.warp.sync` epoch at the access.
    pub(super) wepoch: u32,
}

impl By {
    pub(super) fn new(thread: u32, line: u32, epoch: u32, wepoch: u32) -> By {
        let line_plus_one = NonZeroU32::new(line.saturating_add(1)).unwrap_or(NonZeroU32::MAX);
        By { thread, line_plus_one, epoch, wepoch }
    }

    pub(super) fn line(&self) -> u32 {
        self.line_plus_one.get() - 1
    }
}

/// A shared byte's last plain writer and up to two plain readers since.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Byte {
    pub(super) writer: Option<By>,
    pub(super) readers: [Option<By>; 2],
}

/// One aligned word: its bytes' common state, or (`split`) the index plus one of their
/// states in [`SharedShadow::split`].
#[derive(Clone, Copy, Default)]
struct Word {
    state: Byte,
    split: Option<NonZeroU32>,
}

// docs/sanitizer.md counts 52 bytes a word, 4 x 48 for a word set apart.
const _: () = assert!(std::mem::size_of::<Word>() == 52 && std::mem::size_of::<Byte>() == 48);

/// A block's shared-memory shadow (as far as the block touched; reused, emptied, by the
/// launch's next blocks).
#[derive(Default)]
pub(super) struct SharedShadow {
    words: Vec<Word>,
    split: Vec<[Byte; 4]>,
}

impl SharedShadow {
    /// Applies `step` (which updates a byte's state, given its offset, for the access) to the
    /// bytes `[start, end)` (`end` at most [`SHARED_LIMIT`]): once per whole word whose
    /// bytes agree, else once per byte.
    #[inline(always)]
    pub(super) fn access(&mut self, start: u64, end: u64, mut step: impl FnMut(&mut Byte, u64)) {
        let nwords = end.div_ceil(4) as usize;
        if nwords > self.words.len() {
            self.words.resize(nwords, Word::default());
        }
        let mut off = start;
        while off < end {
            let base = off & !3;
            let to = end.min(base + 4);
            let Some(word) = self.words.get_mut((off / 4) as usize) else { return };
            if word.split.is_none() && off == base && to == base + 4 {
                step(&mut word.state, off);
                off = to;
                continue;
            }
            let index = match word.split {
                Some(i) => i.get() as usize - 1,
                None => {
                    self.split.push([word.state; 4]);
                    word.split = NonZeroU32::new(self.split.len() as u32);
                    self.split.len() - 1
                }
            };
            let Some(bytes) = self.split.get_mut(index) else { return };
            for at in off..to {
                if let Some(b) = bytes.get_mut((at - base) as usize) {
                    step(b, at);
                }
            }
            // Agreeing again (a word written whole): one state (the split entry is left
            // unused until the shadow is cleared).
            let [first, rest @ ..] = bytes;
            if rest.iter().all(|b| b == first) {
                word.state = *first;
                word.split = None;
            }
            off = to;
        }
    }

    /// Forgets every state, keeping the allocations.
    pub(super) fn clear(&mut self) {
        self.words.clear();
        self.split.clear();
    }
}
