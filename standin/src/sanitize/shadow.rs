//! The shadow of memory: for each byte range, the last operation that wrote it and the
//! operations that read it since (one per agent, its latest: an agent's operations are
//! ordered among themselves). An operation's accesses are checked against them with its
//! vector clock: an earlier access that its clock does not know, with one of the two a
//! write, is a conflict nothing orders.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::clock::Clock;
use super::Desc;

/// One operation's access, as the shadow remembers it.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    pub(crate) agent: usize,
    pub(crate) tick: u64,
    pub(crate) what: Arc<Desc>,
}

#[derive(Clone, Debug)]
struct Segment {
    end: u64,
    write: Option<Access>,
    reads: Vec<Access>,
}

/// A conflict found: the earlier access, whether it wrote, whether the new one writes, and
/// the bytes where they meet.
#[derive(Clone, Debug)]
pub(crate) struct Conflict {
    pub(crate) earlier: Access,
    pub(crate) earlier_writes: bool,
    pub(crate) later_writes: bool,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// Segments by start address, disjoint.
#[derive(Default)]
pub(crate) struct Shadow {
    segments: BTreeMap<u64, Segment>,
}

impl Shadow {
    /// Cuts the segment that contains `x` (not at its start) in two at `x`.
    fn split_at(&mut self, x: u64) {
        let Some((&start, seg)) = self.segments.range_mut(..x).next_back() else { return };
        if seg.end <= x {
            return;
        }
        let mut tail = seg.clone();
        seg.end = x;
        tail.end = tail.end.max(x);
        let _ = start;
        self.segments.insert(x, tail);
    }

    /// Checks and records `op`'s reads and writes (sorted, disjoint ranges); returns the
    /// conflicts with earlier accesses `clock` does not know.
    pub(crate) fn apply(
        &mut self,
        op: &Access,
        clock: &Clock,
        reads: &[(u64, u64)],
        writes: &[(u64, u64)],
    ) -> Vec<Conflict> {
        let mut found = Vec::new();
        let unknown = |a: &Access| a.agent != op.agent && !clock.knows(a.agent, a.tick);
        for &(s, e) in writes {
            self.split_at(s);
            self.split_at(e);
            let keys: Vec<u64> = self.segments.range(s..e).map(|(&k, _)| k).collect();
            for k in keys {
                let Some(seg) = self.segments.remove(&k) else { continue };
                let meet = |a: &Access, earlier_writes| Conflict {
                    earlier: a.clone(),
                    earlier_writes,
                    later_writes: true,
                    start: k,
                    end: seg.end,
                };
                found.extend(seg.write.iter().filter(|a| unknown(a)).map(|a| meet(a, true)));
                found.extend(seg.reads.iter().filter(|a| unknown(a)).map(|a| meet(a, false)));
            }
            self.segments.insert(s, Segment { end: e, write: Some(op.clone()), reads: Vec::new() });
        }
        for &(s, e) in reads {
            self.split_at(s);
            self.split_at(e);
            let mut cursor = s;
            let mut gaps = Vec::new();
            for (&k, seg) in self.segments.range_mut(s..e) {
                if k > cursor {
                    gaps.push((cursor, k));
                }
                cursor = seg.end;
                if let Some(w) = seg.write.as_ref().filter(|a| unknown(a)) {
                    found.push(Conflict {
                        earlier: w.clone(),
                        earlier_writes: true,
                        later_writes: false,
                        start: k,
                        end: seg.end,
                    });
                }
                if seg.write.as_ref().is_some_and(|w| Arc::ptr_eq(&w.what, &op.what)) {
                    continue;
                }
                seg.reads.retain(|a| a.agent != op.agent);
                seg.reads.push(op.clone());
            }
            if cursor < e {
                gaps.push((cursor, e));
            }
            for (gs, ge) in gaps {
                self.segments.insert(gs, Segment { end: ge, write: None, reads: vec![op.clone()] });
            }
        }
        found
    }

    /// Forgets what is known of `[start, end)` (memory freed, or allocated anew).
    pub(crate) fn forget(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.segments.range(start..end).map(|(&k, _)| k).collect();
        for k in keys {
            self.segments.remove(&k);
        }
    }

    /// The number of segments (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.segments.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    fn access(agent: usize, tick: u64) -> Access {
        Access {
            agent,
            tick,
            what: Arc::new(Desc {
                id: agent as u64 * 100 + tick,
                stream: String::new(),
                what: String::new(),
                issued: std::backtrace::Backtrace::disabled(),
            }),
        }
    }

    fn clock(known: &[(usize, u64)]) -> Clock {
        let mut c = Clock::default();
        for &(a, n) in known {
            for _ in 0..n {
                c.tick(a);
            }
        }
        c
    }

    #[test]
    fn an_unordered_read_after_a_write_conflicts_on_the_overlap_only() {
        let mut s = Shadow::default();
        assert!(s.apply(&access(1, 1), &clock(&[(1, 1)]), &[], &[(100, 200)]).is_empty());
        let c = s.apply(&access(2, 1), &clock(&[(2, 1)]), &[(150, 250)], &[]);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].start, c[0].end, c[0].earlier_writes, c[0].later_writes), (150, 200, true, false));
        // Ordered after both: nothing.
        let c = s.apply(&access(3, 1), &clock(&[(1, 1), (2, 1), (3, 1)]), &[], &[(0, 300)]);
        assert!(c.is_empty());
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn reads_never_conflict_with_reads_and_a_write_meets_every_unknown_read() {
        let mut s = Shadow::default();
        assert!(s.apply(&access(1, 1), &clock(&[(1, 1)]), &[(0, 10)], &[]).is_empty());
        assert!(s.apply(&access(2, 1), &clock(&[(2, 1)]), &[(0, 10)], &[]).is_empty());
        let c = s.apply(&access(3, 1), &clock(&[(3, 1), (1, 1)]), &[], &[(5, 6)]);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].earlier.agent, 2);
    }

    #[test]
    fn the_same_agents_accesses_are_ordered_and_forgotten_memory_is_clean() {
        let mut s = Shadow::default();
        assert!(s.apply(&access(1, 1), &clock(&[(1, 1)]), &[], &[(0, 8)]).is_empty());
        assert!(s.apply(&access(1, 2), &clock(&[(1, 2)]), &[(0, 8)], &[(0, 8)]).is_empty());
        s.forget(0, 8);
        assert!(s.apply(&access(2, 1), &clock(&[(2, 1)]), &[], &[(0, 8)]).is_empty());
    }
}
