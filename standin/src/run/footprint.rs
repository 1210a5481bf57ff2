//! The bytes one piece of device work read and wrote: the sanitizer's footprint of an
//! operation (`sanitize/`). Plain data: ranges of addresses, merged as they come; and
//! the footprint the calling thread collects while it does one sanitized operation
//! ([`collect`]), which the work it does adds to ([`note`]).

use std::cell::RefCell;

/// Address ranges `[start, end)`, kept few: a range that touches or overlaps the last one
/// pushed extends it, and the list is sorted and merged when it grows long.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ranges {
    v: Vec<(u64, u64)>,
}

/// How many ranges are kept before they are sorted and merged.
const COMPACT_AT: usize = 4096;

impl Ranges {
    /// Adds `[start, start + len)`; nothing for `len` 0.
    #[inline]
    pub(crate) fn push(&mut self, start: u64, len: u64) {
        let Some(end) = start.checked_add(len).filter(|_| len > 0) else { return };
        if let Some(last) = self.v.last_mut() {
            if start <= last.1 && end >= last.0 {
                *last = (last.0.min(start), last.1.max(end));
                return;
            }
        }
        self.v.push((start, end));
        if self.v.len() >= COMPACT_AT {
            self.compact();
        }
    }

    /// Adds every range of `other`.
    pub(crate) fn extend(&mut self, other: &Ranges) {
        for &(s, e) in &other.v {
            self.push(s, e - s);
        }
    }

    /// Sorts and merges the ranges.
    pub(crate) fn compact(&mut self) {
        self.v.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(self.v.len());
        for &(s, e) in &self.v {
            match out.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => out.push((s, e)),
            }
        }
        self.v = out;
    }

    /// The ranges, sorted and disjoint.
    pub(crate) fn sorted(mut self) -> Vec<(u64, u64)> {
        self.compact();
        self.v
    }
}

/// What one operation read and wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub(crate) reads: Ranges,
    pub(crate) writes: Ranges,
}

impl Footprint {
    /// Adds `other`'s ranges.
    pub(crate) fn extend(&mut self, other: &Footprint) {
        self.reads.extend(&other.reads);
        self.writes.extend(&other.writes);
    }
}

thread_local! {
    /// The footprint of the sanitized operation this thread is doing, if it is doing one.
    static OPEN: RefCell<Option<Footprint>> = const { RefCell::new(None) };
}

/// Runs `f` collecting what the work it does on this thread notes ([`note`]); returns its
/// result and the footprint.
pub(crate) fn collect<R>(f: impl FnOnce() -> R) -> (R, Footprint) {
    let before = OPEN.try_with(|o| o.borrow_mut().replace(Footprint::default())).ok().flatten();
    let r = f();
    let got = OPEN.try_with(|o| std::mem::replace(&mut *o.borrow_mut(), before)).ok().flatten();
    (r, got.unwrap_or_default())
}

/// Whether this thread is collecting a footprint (checked once per piece of work).
pub(crate) fn collecting() -> bool {
    OPEN.try_with(|o| o.borrow().is_some()).unwrap_or(false)
}

/// Adds `fp` to the footprint this thread collects, if it collects one.
pub(crate) fn note(fp: &Footprint) {
    let _ = OPEN.try_with(|o| {
        if let Some(open) = o.borrow_mut().as_mut() {
            open.extend(fp);
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn touching_and_overlapping_ranges_merge_and_others_stay_apart() {
        let mut r = Ranges::default();
        r.push(100, 4);
        r.push(104, 4);
        r.push(0, 8);
        r.push(4, 8);
        r.push(200, 0);
        r.push(50, 10);
        assert_eq!(r.sorted(), [(0, 12), (50, 60), (100, 108)]);
    }

    #[test]
    fn many_scattered_ranges_compact_as_they_come() {
        let mut r = Ranges::default();
        for i in 0..10_000u64 {
            r.push((i * 7919) % 10_000 * 2, 2);
        }
        assert_eq!(r.sorted(), [(0, 20_000)]);
    }
}
