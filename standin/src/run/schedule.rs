//! The sanitizer's adversarial schedule (`CUDRV_STANDIN_SANITIZE=schedule=SEED`): device
//! work is never done at once on the calling thread; each piece waits on its stream's
//! driver thread for a delay drawn from the seed, its stream's place in its context and
//! its position in the stream, so that independent streams' work completes in orders
//! that vary with the seed and a host that reads results without synchronising sees them
//! late. Process-wide, as the variable is.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Whether a schedule is on, and its seed.
static ON: AtomicBool = AtomicBool::new(false);
static SEED: AtomicU64 = AtomicU64::new(0);

/// Turns the schedule on with `seed` (once announced on stderr, so that a failing run
/// names the seed that made it fail).
pub(crate) fn set(seed: u64) {
    SEED.store(seed, Ordering::Relaxed);
    if !ON.swap(true, Ordering::AcqRel) {
        eprintln!("cudrv-standin sanitizer: adversarial schedule, seed {seed}");
    }
}

/// Whether the schedule is on.
#[inline]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// SplitMix64's step: a well-mixed function of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The delay of the work at `position` of the stream at `place` in its context: 2 to 9
/// milliseconds.
pub(crate) fn delay(place: usize, position: u64) -> Duration {
    let r = mix(SEED.load(Ordering::Relaxed) ^ mix(place as u64) ^ mix(position.wrapping_mul(0x1000_0001)));
    Duration::from_micros(2000 + r % 8000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_depend_on_the_place_and_position_and_stay_in_range() {
        let all: Vec<Duration> = (0..4).flat_map(|p| (0..50).map(move |i| delay(p, i))).collect();
        assert!(all.iter().all(|d| (2000..10_000).contains(&d.as_micros())));
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert!(distinct.len() > 150);
    }
}
