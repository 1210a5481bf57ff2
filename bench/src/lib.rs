//! Only benchmarks live here (`cargo bench -p cudrv-bench`); this library holds what they
//! share: timing, medians and the `--rounds` argument.
//!
//! The side-by-side cases are timed in short interleaved slices ([`interleaved`]): each op
//! runs a slice of calls in turn, the order rotating, many times over. A slow drift of the
//! machine (clock, other tenants) then reaches every op alike, and a ratio is taken
//! between slices that ran a few microseconds apart.

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
    slice(op, n, batch, settle)
}

/// [`time`] without the warm-up.
fn slice(op: &mut Op<'_>, n: u32, batch: u32, settle: &mut dyn FnMut()) -> f64 {
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
    total.as_nanos() as f64 / f64::from(n.max(1))
}

/// What [`interleaved`] measured: per op, the nanoseconds per call of each slice.
pub struct Slices(pub Vec<Vec<f64>>);

impl Slices {
    /// The median nanoseconds per call of op `i`.
    pub fn median(&self, i: usize) -> f64 {
        median(&mut self.0[i].clone())
    }

    /// The ratios op `i` / op `base` of slices taken in the same turn: their quartiles
    /// (25th, 50th, 75th percentile).
    pub fn ratio_quartiles(&self, i: usize, base: usize) -> [f64; 3] {
        let mut r: Vec<f64> = self.0[i].iter().zip(&self.0[base]).map(|(a, b)| a / b).collect();
        r.sort_by(f64::total_cmp);
        let at = |q: usize| r.get((r.len().saturating_sub(1)) * q / 4).copied().unwrap_or(f64::NAN);
        [at(1), at(2), at(3)]
    }
}

/// Times every op of `ops` in `turns` turns of `per_slice` calls each (in batches of
/// `batch`, `settle` after each, as [`time`]), the order rotating each turn, after one
/// warm-up slice each.
pub fn interleaved(ops: &mut [Op<'_>], per_slice: u32, turns: u32, batch: u32, settle: &mut dyn FnMut()) -> Slices {
    for op in ops.iter_mut() {
        slice(op, per_slice, batch, settle);
    }
    let n = ops.len();
    let mut out = vec![Vec::with_capacity(turns as usize); n];
    for turn in 0..turns as usize {
        for k in 0..n {
            let i = (k + turn) % n;
            out[i].push(slice(&mut ops[i], per_slice, batch, settle));
        }
    }
    Slices(out)
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
