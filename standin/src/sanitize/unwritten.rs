//! Device memory allocated and never written since (by a copy, memset, kernel or free):
//! what the `init` check reports a read of. Disjoint ranges by start.

use std::collections::BTreeMap;

#[derive(Default)]
pub(crate) struct Unwritten {
    ranges: BTreeMap<u64, u64>,
}

impl Unwritten {
    /// `[start, end)` is allocated, none of it written.
    pub(crate) fn add(&mut self, start: u64, end: u64) {
        self.remove(start, end);
        if start < end {
            self.ranges.insert(start, end);
        }
    }

    /// `[start, end)` is written (or no longer of interest).
    pub(crate) fn remove(&mut self, start: u64, end: u64) {
        let mut cut = Vec::new();
        if let Some((&s, &e)) = self.ranges.range(..start).next_back() {
            if e > start {
                cut.push((s, e));
            }
        }
        cut.extend(self.ranges.range(start..end).map(|(&s, &e)| (s, e)));
        for (s, e) in cut {
            self.ranges.remove(&s);
            if s < start {
                self.ranges.insert(s, start);
            }
            if e > end {
                self.ranges.insert(end, e);
            }
        }
    }

    /// The parts of `[start, end)` never written.
    pub(crate) fn hits(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if let Some((_, &e)) = self.ranges.range(..start).next_back() {
            if e > start {
                out.push((start, e.min(end)));
            }
        }
        out.extend(self.ranges.range(start..end).map(|(&s, &e)| (s, e.min(end))));
        out
    }

    /// Forgets everything (a writer whose footprint is unknown ran).
    pub(crate) fn clear(&mut self) {
        self.ranges.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_cut_the_unwritten_ranges_and_reads_find_what_is_left() {
        let mut u = Unwritten::default();
        u.add(100, 200);
        u.add(300, 400);
        u.remove(150, 160);
        assert_eq!(u.hits(0, 1000), [(100, 150), (160, 200), (300, 400)]);
        assert_eq!(u.hits(120, 170), [(120, 150), (160, 170)]);
        u.remove(0, 350);
        assert_eq!(u.hits(0, 1000), [(350, 400)]);
        u.clear();
        assert!(u.hits(0, 1000).is_empty());
    }
}
