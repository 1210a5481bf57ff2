//! What is checked of a warp before a run's machine code (`native.rs`) takes it: every
//! lane's address of every access the run checks ([`Checked`](crate::lanes::Checked)) inside memory, aligned,
//! and no lane's store meeting another lane's access of another instruction, so that the
//! code, lane after lane, reads and writes what the steps, instruction after instruction,
//! would.

use crate::lanes::{LaunchView, NativeRun, MAX_CHECKED, WARP};

/// Each of `run`'s global accesses' distance from device to host addresses (in the run's
/// order; what its code's last argument points to), for the warp whose registers are
/// `regs`, in a launch `ctx` describes (`launch` its values). `None`, and the steps take the
/// run (faulting where the interpreter does), unless every lane's address of every checked
/// access ([`Checked`](crate::lanes::Checked)) holds: a global access's bytes inside one window of the memory,
/// aligned to their size, a shared load's inside shared memory, and no lane's store meeting
/// another lane's access of another instruction ([`lanes_meet`]): then running the run lane
/// after lane reads and writes what instruction after instruction would.
pub(crate) fn checked_distances(
    run: &NativeRun,
    regs: &[u64],
    ctx: &crate::lanes::StepContext<'_>,
    launch: &LaunchView,
) -> Option<[u64; MAX_CHECKED]> {
    let mut out = [0u64; MAX_CHECKED];
    let Some(addresses) = run.addresses else { return Some(out) };
    if regs.len() < run.min_regs {
        return None;
    }
    let mut at = [[0u64; WARP]; MAX_CHECKED];
    // SAFETY: the code reads rows below `run.min_regs` values of `regs` (checked just now),
    // the launch's parameters and `%tid`s inside the slices `launch` describes (their
    // lengths checked first), and writes 32 values for each of the run's checked accesses,
    // at most `MAX_CHECKED` (`fuse` splits longer runs), into `at`.
    if unsafe { addresses(regs.as_ptr(), launch, at.as_mut_ptr().cast()) } == 0 {
        return None;
    }
    let mut distances = out.iter_mut();
    // Each global access's first and last byte (none: `(0, 0)`).
    let mut spans = [(0u64, 0u64); MAX_CHECKED];
    for ((c, lanes), span) in run.checked.iter().zip(&at).zip(&mut spans) {
        let (lo, hi, bits) =
            lanes.iter().fold((u64::MAX, 0u64, 0u64), |(lo, hi, bits), &a| (lo.min(a), hi.max(a), bits | a));
        let n = u64::from(c.n);
        let end = hi.checked_add(n)?;
        if !c.global {
            if end > ctx.shared.len() as u64 {
                return None;
            }
            continue;
        }
        if bits & (n - 1) != 0 {
            return None;
        }
        let host = ctx.global.windows()?.window(lo, end - lo)?;
        *distances.next()? = (host.as_ptr() as u64).wrapping_sub(lo);
        *span = (lo, end);
    }
    let accesses = run.checked.iter().zip(&at).zip(spans);
    for (i, ((a, la), (lo, end))) in accesses.clone().enumerate() {
        for ((b, lb), (l, e)) in accesses.clone().skip(i + 1) {
            if (a.store || b.store) && lo < e && l < end && lanes_meet(la, a.n, lb, b.n) {
                return None;
            }
        }
    }
    Some(out)
}

/// Whether some lane's `n`-byte access at `a` and another lane's `m`-byte access at `b`
/// (two instructions' addresses, their spans met) may touch a common byte: unless both step
/// by one stride `s` from lane to lane (lane `i` at `a[0] + i * s`, and `b[0] + i * s`),
/// when their lanes' accesses are `b[0] - a[0] + k * s` apart for `k` from -31 to 31 but 0,
/// yes.
fn lanes_meet(a: &[u64; WARP], n: u8, b: &[u64; WARP], m: u8) -> bool {
    let s = a[1].wrapping_sub(a[0]);
    let steady = |x: &[u64; WARP]| x.iter().zip(x.iter().skip(1)).all(|(p, q)| q.wrapping_sub(*p) == s);
    if !steady(a) || !steady(b) {
        return true;
    }
    // Lane i's access of `a` at x, lane j's of `b` at x + d + (j - i) * s: they meet when
    // (j - i) * s lies strictly between -d - m and n - d.
    let (s, d) = (i128::from(s as i64), i128::from(b[0].wrapping_sub(a[0]) as i64));
    let (low, high) = (-d - i128::from(m), i128::from(n) - d);
    (1..WARP as i128).flat_map(|k| [k * s, -k * s]).any(|x| low < x && x < high)
}
