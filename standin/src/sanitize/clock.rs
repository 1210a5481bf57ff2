//! Vector clocks: what each agent (the host, each stream) knows of every agent's work.

/// For each agent (by index), the number of its operations known to have happened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clock(Vec<u64>);

impl Clock {
    /// The count of `agent`'s operations known (0 for none).
    pub(crate) fn get(&self, agent: usize) -> u64 {
        self.0.get(agent).copied().unwrap_or(0)
    }

    /// Counts one more operation of `agent`; returns its number.
    pub(crate) fn tick(&mut self, agent: usize) -> u64 {
        if self.0.len() <= agent {
            self.0.resize(agent + 1, 0);
        }
        match self.0.get_mut(agent) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => 0,
        }
    }

    /// Learns what `other` knows (the greater count of each agent).
    pub(crate) fn join(&mut self, other: &Clock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    /// Whether operation `tick` of `agent` is known (happened before what this clock
    /// describes).
    pub(crate) fn knows(&self, agent: usize, tick: u64) -> bool {
        self.get(agent) >= tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_knows_what_either_knew_and_nothing_more() {
        let (mut a, mut b) = (Clock::default(), Clock::default());
        assert_eq!(a.tick(1), 1);
        assert_eq!(a.tick(1), 2);
        assert_eq!(b.tick(3), 1);
        assert!(!a.knows(3, 1));
        a.join(&b);
        assert!(a.knows(3, 1) && a.knows(1, 2) && !a.knows(1, 3) && !a.knows(0, 1));
        assert!(!b.knows(1, 1));
    }
}
