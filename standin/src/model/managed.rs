//! Managed memory's own state: each managed allocation's stream attachment, the advice
//! given over its bytes (read mostly, preferred location, accessed by) and where its
//! bytes were last asked to be prefetched, as the range attributes report them
//! (`cuMemRangeGetAttribute`). The memory itself is in `model/memory.rs` (kind
//! `Managed`, at its host address).
//!
//! Advice and prefetches apply to byte ranges; an attribute over a range has a value only
//! if every byte of the range has the same one (else `CU_DEVICE_INVALID`), as the driver
//! answers for pages.

use std::collections::BTreeMap;

/// A location as the 8.0 entries name it: a device ordinal, or [`CPU`].
pub(crate) type Location = i32;

/// `CU_DEVICE_CPU`.
pub(crate) const CPU: Location = -1;
/// `CU_DEVICE_INVALID`.
pub(crate) const INVALID: Location = -2;

/// Values over byte ranges: non-overlapping `[start, end)` segments, by start.
#[derive(Debug, Default)]
pub(crate) struct Segments<V> {
    map: BTreeMap<u64, (u64, V)>,
}

impl<V: Copy + Eq> Segments<V> {
    /// Nothing set.
    pub(crate) const fn new() -> Segments<V> {
        Segments { map: BTreeMap::new() }
    }

    /// Sets `[start, end)` to `v` (`None`: clears it).
    pub(crate) fn set(&mut self, start: u64, end: u64, v: Option<V>) {
        let overlapping: Vec<u64> = self.map.range(..end).filter(|(_, &(e, _))| e > start).map(|(&s, _)| s).collect();
        for s in overlapping {
            let Some((e, old)) = self.map.remove(&s) else { continue };
            if s < start {
                self.map.insert(s, (start, old));
            }
            if e > end {
                self.map.insert(end, (e, old));
            }
        }
        if let Some(v) = v {
            self.map.insert(start, (end, v));
        }
    }

    /// The value every byte of `[start, end)` has; `None` if some byte has none or two
    /// bytes differ.
    pub(crate) fn uniform(&self, start: u64, end: u64) -> Option<V> {
        let mut at = start;
        let mut value = None;
        let first = self.map.range(..=start).next_back().map(|(&s, _)| s).unwrap_or(start);
        for (&s, &(e, v)) in self.map.range(first..end) {
            if e <= at {
                continue;
            }
            if s > at || value.is_some_and(|w| w != v) {
                return None;
            }
            value = Some(v);
            at = e;
            if at >= end {
                return value;
            }
        }
        None
    }
}

/// One managed allocation's state.
#[derive(Debug)]
pub(crate) struct Range {
    /// Its size in bytes.
    pub(crate) size: usize,
    /// Its attachment (`CU_MEM_ATTACH_*`) and, for a single-stream one, the stream.
    pub(crate) attach: (u32, u64),
    /// Bytes advised read mostly.
    pub(crate) read_mostly: Segments<()>,
    /// Bytes with a preferred location.
    pub(crate) preferred: Segments<Location>,
    /// Bytes advised accessed by each location.
    pub(crate) accessed_by: BTreeMap<Location, Segments<()>>,
    /// Where bytes were last asked to be prefetched.
    pub(crate) prefetched: Segments<Location>,
}

/// Every managed allocation's state, by address.
pub(crate) struct Managed {
    ranges: BTreeMap<u64, Range>,
}

impl Managed {
    /// No managed memory.
    pub(crate) const fn new() -> Managed {
        Managed { ranges: BTreeMap::new() }
    }

    /// Remembers a new allocation of `size` bytes at `address`, attached as `flags` (any
    /// earlier state at that address is forgotten).
    pub(crate) fn add(&mut self, address: u64, size: usize, flags: u32) {
        let range = Range {
            size,
            attach: (flags, 0),
            read_mostly: Segments::new(),
            preferred: Segments::new(),
            accessed_by: BTreeMap::new(),
            prefetched: Segments::new(),
        };
        self.ranges.insert(address, range);
    }

    /// Forgets the allocation at `address` (freed).
    pub(crate) fn remove(&mut self, address: u64) {
        self.ranges.remove(&address);
    }

    /// The allocation holding all of `[address, address + len)` (`len` > 0), with its
    /// start; `None` if no one allocation holds it.
    pub(crate) fn holding(&mut self, address: u64, len: usize) -> Option<(u64, &mut Range)> {
        let (&start, r) = self.ranges.range_mut(..=address).next_back()?;
        let end = address.checked_add(len as u64)?;
        (len > 0 && end <= start.saturating_add(r.size as u64)).then_some((start, r))
    }
}

impl Range {
    /// The locations advised to access every byte of `[start, end)`, devices in order,
    /// then the host.
    pub(crate) fn accessed_by(&self, start: u64, end: u64) -> Vec<Location> {
        let mut out: Vec<Location> = self
            .accessed_by
            .iter()
            .filter(|(_, s)| s.uniform(start, end).is_some())
            .map(|(&l, _)| l)
            .filter(|&l| l >= 0)
            .collect();
        if self.accessed_by.get(&CPU).is_some_and(|s| s.uniform(start, end).is_some()) {
            out.push(CPU);
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn a_value_counts_only_where_every_byte_has_it() {
        let mut s = Segments::new();
        s.set(0, 100, Some(1));
        assert_eq!(s.uniform(0, 100), Some(1));
        assert_eq!(s.uniform(10, 20), Some(1));
        assert_eq!(s.uniform(50, 150), None, "bytes past 100 have none");
        s.set(40, 60, Some(2));
        assert_eq!((s.uniform(0, 40), s.uniform(40, 60), s.uniform(30, 70)), (Some(1), Some(2), None));
        s.set(40, 60, Some(1));
        assert_eq!(s.uniform(0, 100), Some(1), "adjacent segments of one value are uniform");
        s.set(0, 10, None);
        assert_eq!((s.uniform(0, 100), s.uniform(10, 100)), (None, Some(1)));
    }

    #[test]
    fn a_range_must_lie_in_one_allocation() {
        let mut m = Managed::new();
        m.add(1000, 100, 1);
        assert_eq!(m.holding(1050, 50).map(|(s, _)| s), Some(1000));
        assert!(m.holding(1050, 51).is_none() && m.holding(999, 1).is_none() && m.holding(1000, 0).is_none());
    }
}
