//! Only benchmarks live here (`cargo bench -p cudrv-bench`); this library holds what they
//! share: timing, medians and the `--rounds` argument.

use std::time::{Duration, Instant};

/// One timed operation.
pub type Op<'a> = Box<dyn FnMut() + 'a>;

/// Nanoseconds per call of `op`, over `n` calls after `n / 10` to warm up. With `batch`,
/// `op` is timed in batches of that many calls and `settle` runs, untimed, after each
/// batch (launches and copies: so that the queue never fills and the driver's own cost is
/// timed, not the GPU's).
pub fn time(op: &mut Op<'_>, n: u32, batch: u32, settle: &mut dyn FnMut()) -> f64 {
    for _ in 0..n / 10 {
        op();
    }
    settle();
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < n {
        let k = batch.min(n - done);
        let t = Instant::now();
        for _ in 0..k {
            op();
        }
        total += t.elapsed();
        settle();
        done += k;
    }
    total.as_nanos() as f64 / f64::from(n)
}

/// The median of `v` (sorts it); NaN for no values.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The `--rounds N` argument, else `default`.
pub fn rounds(default: usize) -> usize {
    std::env::args().skip_while(|a| a != "--rounds").nth(1).and_then(|v| v.parse().ok()).unwrap_or(default)
}
