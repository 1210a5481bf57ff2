//! A warp's lanes: the set bits of an active mask, a register's row of 32 values, and the
//! loops that apply one instruction to every active lane (shared-memory accesses, `fma.f32`
//! on the host's FMA unit when it has one).

use std::cell::Cell;

use crate::memory::{Fault, GlobalMemory};

/// Threads in a warp.
pub(crate) const WARP: usize = 32;

/// Each set bit of `m`, as a lane index.
#[inline]
pub(crate) fn lanes(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros();
            m &= m - 1;
            Some(l as usize)
        }
    })
}

#[inline]
pub(crate) fn rget(regs: &[u64], r: u32, lane: usize) -> u64 {
    regs.get(r as usize * WARP + lane).copied().unwrap_or(0)
}

#[inline]
pub(crate) fn rset(regs: &mut [u64], r: u32, lane: usize, v: u64) {
    if let Some(x) = regs.get_mut(r as usize * WARP + lane) {
        *x = v;
    }
}

/// Register `r`'s values in every lane (`None` for a register outside the frame).
#[inline(always)]
pub(crate) fn row(regs: &[u64], r: u32) -> Option<&[u64; WARP]> {
    let at = r as usize * WARP;
    regs.get(at..at + WARP).and_then(|s| s.try_into().ok())
}

/// Register `r`'s values in every lane, to write.
#[inline(always)]
pub(crate) fn row_mut(regs: &mut [u64], r: u32) -> Option<&mut [u64; WARP]> {
    let at = r as usize * WARP;
    regs.get_mut(at..at + WARP).and_then(|s| s.try_into().ok())
}

/// Writes `f(lane)` into `dst` for each lane of `mask`: every lane in one straight loop
/// when all are active (the common case, which the compiler can vectorise).
#[inline(always)]
pub(crate) fn each_lane(dst: &mut [u64; WARP], mask: u32, mut f: impl FnMut(usize) -> u64) {
    if mask == u32::MAX {
        for (lane, d) in dst.iter_mut().enumerate() {
            *d = f(lane);
        }
    } else {
        for lane in lanes(mask) {
            if let Some(d) = dst.get_mut(lane) {
                *d = f(lane);
            }
        }
    }
}

/// Lane `lane` of `v` (`lane` is below [`WARP`]).
#[inline(always)]
pub(crate) fn at(v: &[u64; WARP], lane: usize) -> u64 {
    v.get(lane).copied().unwrap_or(0)
}

/// Loads the `N`-byte little-endian value at shared offset `addrs[lane]` into `out[lane]`
/// for each lane of `mask`, in lane order; `Err(lane)` at the first lane whose bytes are
/// not all inside `shared`.
#[inline(always)]
pub(crate) fn shared_load<const N: usize>(
    shared: &[u8],
    addrs: &[u64; WARP],
    mask: u32,
    out: &mut [u64; WARP],
) -> Result<(), usize> {
    for lane in lanes(mask) {
        let a = at(addrs, lane) as usize;
        let cell: &[u8; N] = shared.get(a..a.wrapping_add(N)).and_then(|c| c.try_into().ok()).ok_or(lane)?;
        let mut b = [0u8; 8];
        if let Some(d) = b.get_mut(..N) {
            d.copy_from_slice(cell);
        }
        if let Some(o) = out.get_mut(lane) {
            *o = u64::from_le_bytes(b);
        }
    }
    Ok(())
}

/// Stores the low `N` bytes of `data[lane]` at shared offset `addrs[lane]` for each lane of
/// `mask`, in lane order; `Err(lane)` at the first lane whose bytes are not all inside
/// `shared` (the lanes before it have stored).
#[inline(always)]
pub(crate) fn shared_store<const N: usize>(
    shared: &mut [u8],
    addrs: &[u64; WARP],
    mask: u32,
    data: &[u64; WARP],
) -> Result<(), usize> {
    for lane in lanes(mask) {
        let a = at(addrs, lane) as usize;
        let cell: &mut [u8; N] = shared.get_mut(a..a.wrapping_add(N)).and_then(|c| c.try_into().ok()).ok_or(lane)?;
        let v = at(data, lane).to_le_bytes();
        if let Some(s) = v.get(..N) {
            cell.copy_from_slice(s);
        }
    }
    Ok(())
}

/// `fma.rn.f32` (no `.ftz`/`.sat`) in each lane of `mask`: `a * b + c` rounded once, a NaN
/// result canonical (0x7fffffff) as the GPU gives it.
#[inline]
pub(crate) fn fma_f32(a: &[u64; WARP], b: &[u64; WARP], c: &[u64; WARP], mask: u32, dst: &mut [u64; WARP]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `fma_f32_hw` needs only the FMA instructions, which this CPU has
            // (checked just now).
            unsafe { fma_f32_hw(a, b, c, mask, dst) };
            return;
        }
    }
    fma_f32_lanes(a, b, c, mask, dst);
}

/// [`fma_f32`] compiled for CPUs with FMA: `mul_add` becomes one instruction (the same
/// correctly rounded result as the library's software `fmaf`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_f32_hw(a: &[u64; WARP], b: &[u64; WARP], c: &[u64; WARP], mask: u32, dst: &mut [u64; WARP]) {
    fma_f32_lanes(a, b, c, mask, dst);
}

#[inline(always)]
fn fma_f32_lanes(a: &[u64; WARP], b: &[u64; WARP], c: &[u64; WARP], mask: u32, dst: &mut [u64; WARP]) {
    each_lane(dst, mask, |lane| fma_f32_lane(at(a, lane), at(b, lane), at(c, lane)));
}

/// One lane of [`fma_f32`].
#[inline(always)]
fn fma_f32_lane(a: u64, b: u64, c: u64) -> u64 {
    let r = f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32));
    if r.is_nan() {
        0x7fff_ffff
    } else {
        u64::from(r.to_bits())
    }
}

/// [`fma_f32`] for a whole warp over register rows read and written in place (cells: the
/// destination may be a source; each lane is read before it is written).
#[inline]
pub(crate) fn fma_f32_cells(
    a: &[Cell<u64>; WARP],
    b: &[Cell<u64>; WARP],
    c: &[Cell<u64>; WARP],
    dst: &[Cell<u64>; WARP],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: `fma_f32_cells_hw` needs only the FMA instructions, which this CPU has
            // (checked just now).
            unsafe { fma_f32_cells_hw(a, b, c, dst) };
            return;
        }
    }
    fma_f32_cells_lanes(a, b, c, dst);
}

/// [`fma_f32_cells`] compiled for CPUs with FMA, as [`fma_f32_hw`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_f32_cells_hw(
    a: &[Cell<u64>; WARP],
    b: &[Cell<u64>; WARP],
    c: &[Cell<u64>; WARP],
    dst: &[Cell<u64>; WARP],
) {
    fma_f32_cells_lanes(a, b, c, dst);
}

#[inline(always)]
fn fma_f32_cells_lanes(a: &[Cell<u64>; WARP], b: &[Cell<u64>; WARP], c: &[Cell<u64>; WARP], dst: &[Cell<u64>; WARP]) {
    for (((d, x), y), z) in dst.iter().zip(a).zip(b).zip(c) {
        d.set(fma_f32_lane(x.get(), y.get(), z.get()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FMA-unit path and the portable one agree bit for bit, special values included,
    /// and leave inactive lanes alone.
    #[test]
    fn fma_f32_matches_portable() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.5,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0 + f32::EPSILON,
            0.1,
            3.0e38,
        ];
        let pick = |i: usize| u64::from(specials.get(i % specials.len()).copied().unwrap_or(0.0).to_bits());
        for round in 0..specials.len() {
            let a: [u64; WARP] = std::array::from_fn(|l| pick(l + round));
            let b: [u64; WARP] = std::array::from_fn(|l| pick(l * 3 + round));
            let c: [u64; WARP] = std::array::from_fn(|l| pick(l * 7 + 1 + round));
            for mask in [u32::MAX, 0x5555_5555] {
                let (mut fast, mut slow) = ([9u64; WARP], [9u64; WARP]);
                fma_f32(&a, &b, &c, mask, &mut fast);
                fma_f32_lanes(&a, &b, &c, mask, &mut slow);
                assert_eq!(fast, slow);
                if mask == u32::MAX {
                    // In place, the destination one of the sources (here `c`).
                    let mut cells = c;
                    let row = Cell::from_mut(&mut cells);
                    let row: &[Cell<u64>; WARP] = row.as_array_of_cells();
                    let (ca, cb) = (a.map(Cell::new), b.map(Cell::new));
                    fma_f32_cells(&ca, &cb, row, row);
                    assert_eq!(cells, slow);
                }
                for (lane, v) in slow.iter().enumerate() {
                    let x = f32::from_bits(at(&a, lane) as u32)
                        .mul_add(f32::from_bits(at(&b, lane) as u32), f32::from_bits(at(&c, lane) as u32));
                    let want = if mask & (1 << lane) == 0 {
                        9
                    } else if x.is_nan() {
                        0x7fff_ffff
                    } else {
                        u64::from(x.to_bits())
                    };
                    assert_eq!(*v, want);
                }
            }
        }
    }
}

/// One instruction compiled for a warp (`compiled.rs`): `run` updates the register rows
/// (`regs`, a frame's) and memory for the lanes of `mask`, or answers the fault the
/// interpreter would.
#[derive(Clone)]
pub(crate) struct Step {
    pub(crate) run: StepFn,
    /// It accesses memory (an observer, when the launch has one, is shown the accesses the
    /// interpreter makes: such a step is interpreted under one).
    pub(crate) memory: bool,
}

/// What a step may read and write besides the registers: the block's and the launch's.
pub(crate) struct StepContext<'m> {
    /// The block's shared memory.
    pub(crate) shared: &'m mut [u8],
    /// The launch's device memory.
    pub(crate) global: &'m dyn GlobalMemory,
    /// The kernel's parameter buffer.
    pub(crate) kparams: &'m [u8],
    /// `%tid` of the warp's lanes (from lane 0; shorter for a partial last warp).
    pub(crate) tids: &'m [[u32; 3]],
    /// `%ctaid`, `%ntid`, `%nctaid`.
    pub(crate) ctaid: [u32; 3],
    pub(crate) ntid: [u32; 3],
    pub(crate) nctaid: [u32; 3],
}

/// The code of a [`Step`].
pub(crate) type StepFn =
    std::sync::Arc<dyn Fn(&mut [u64], &mut StepContext<'_>, u32) -> Result<(), Fault> + Send + Sync>;

/// A function's compiled steps, by instruction index (`None`: the interpreter runs it), and
/// what a converged warp's run of them (`exec.rs`'s `run_warp`) does at each index.
#[derive(Clone, Default)]
pub(crate) struct Steps {
    pub(crate) by_pc: Vec<Option<Step>>,
    pub(crate) links: Vec<Link>,
}

/// An instruction as a converged warp running steps back to back sees it, decided once at
/// translation so that the run reads one entry per instruction.
#[derive(Clone)]
pub(crate) enum Link {
    /// The run ends before it: no step, or a guard (the scheduler's loop runs it).
    Stop,
    /// An unguarded step, run for the whole warp.
    Step(Step),
    /// The first of a run of pure steps compiled to machine code (`native.rs`): the whole
    /// run for a whole warp with room for it, else `first` alone.
    #[cfg(feature = "native")]
    Native(std::sync::Arc<NativeSlot>),
    /// A branch: to `target` when its guard (none: always) holds in every lane, to the next
    /// instruction when in none; the run ends before it when the lanes part.
    Branch { guard: Option<(u32, bool)>, target: u32 },
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Steps({} of {} compiled)", self.by_pc.iter().filter(|s| s.is_some()).count(), self.by_pc.len())
    }
}

/// A run's machine code (`native.rs`): `code(regs, max_turns, shared, shared_len, launch,
/// globals)` runs the run over every lane of `regs` (a frame's rows, at least `min_regs`
/// values), reading the block's shared memory (`shared_len` bytes at `shared`) for its loads,
/// the launch's values (`launch`), and global memory at each lane's device address plus its
/// access's distance in `globals` (checked by the caller: [`Checked`]); a run that is a
/// loop's body turns again while the branch back holds in every lane, at most `max_turns`
/// times. It answers the turns it made: 0 when a load of the first turn would fall outside
/// shared memory or the parameters, or the warp has fewer than 32 `%tid`s (nothing done; a
/// turn's loads are checked before it starts, the launch's before the first).
#[cfg(feature = "native")]
pub(crate) type NativeFn = unsafe extern "C" fn(*mut u64, u64, *const u8, u64, *const LaunchView, *const u64) -> u64;

/// A run's code's addresses (`native.rs`): `addresses(regs, launch, out)` computes, lane
/// after lane from the warp's registers as the run starts, each lane's address of each of
/// the run's checked accesses ([`Checked`]) into `out` (32 values an access, in the run's
/// order), and answers 1; 0 when the launch lacks a parameter or `%tid` the run reads
/// (nothing written).
#[cfg(feature = "native")]
pub(crate) type AddressFn = unsafe extern "C" fn(*const u64, *const LaunchView, *mut u64) -> u64;

/// An access of a run whose every lane's address is checked before the run's code runs
/// (`native.rs`'s `checked_distances`): a global load or store (inside one window of the
/// memory, [`crate::Windows`], aligned, a store's bytes meeting no other lane's access of
/// another instruction; the code gets each global access's distance from device to host
/// addresses, in the run's order), or a shared load whose address the run computes (inside
/// the block's shared memory).
#[cfg(feature = "native")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checked {
    /// Bytes at each lane's address.
    pub(crate) n: u8,
    pub(crate) store: bool,
    pub(crate) global: bool,
}

/// The most checked accesses a run makes (a longer one is split).
#[cfg(feature = "native")]
pub(crate) const MAX_CHECKED: usize = 8;

/// What a run's code reads of the launch (its last argument): the warp's lanes' `%tid`
/// (`tids_len` of them), `%ctaid`, `%ntid` and `%nctaid` in `dims`, and the kernel's
/// parameter buffer (`kparams_len` bytes).
#[cfg(feature = "native")]
#[repr(C)]
pub(crate) struct LaunchView {
    pub(crate) tids: *const [u32; 3],
    pub(crate) tids_len: u64,
    pub(crate) dims: [u32; 9],
    pub(crate) kparams: *const u8,
    pub(crate) kparams_len: u64,
}

#[cfg(feature = "native")]
impl LaunchView {
    pub(crate) fn of(ctx: &StepContext<'_>) -> LaunchView {
        let [c, t, n] = [ctx.ctaid, ctx.ntid, ctx.nctaid];
        LaunchView {
            tids: ctx.tids.as_ptr(),
            tids_len: ctx.tids.len() as u64,
            dims: [c[0], c[1], c[2], t[0], t[1], t[2], n[0], n[1], n[2]],
            kparams: ctx.kparams.as_ptr(),
            kparams_len: ctx.kparams.len() as u64,
        }
    }
}

/// A run's compiled code ([`NativeFn`]) and what calling it needs.
#[cfg(feature = "native")]
pub(crate) struct NativeRun {
    pub(crate) code: NativeFn,
    /// The frame's length (in values) the code needs: one past the highest row it touches.
    pub(crate) min_regs: usize,
    /// The machine code's size.
    pub(crate) bytes: usize,
    /// Its checked accesses, in order, and the code computing their addresses (none when
    /// there are none).
    pub(crate) checked: Vec<Checked>,
    pub(crate) addresses: Option<AddressFn>,
    /// An access's base is computed by the run (which then turns once a call: its
    /// addresses are checked again before each turn).
    pub(crate) computed: bool,
    /// What owns the code's memory (freed with the run).
    pub(crate) _owner: Box<dyn Send + Sync>,
}

/// The first instruction of a run of pure steps that `native.rs` compiles once it is hot:
/// its step (what runs until then, and for a warp that cannot take the whole run), the
/// run's length, and its code once made.
#[cfg(feature = "native")]
pub(crate) struct NativeSlot {
    pub(crate) first: Step,
    /// Instructions in the run (each counted as its step would be).
    pub(crate) len: u32,
    /// The instruction after the run is a branch back to its start, which the code takes
    /// itself while the whole warp does.
    pub(crate) loops: bool,
    /// The run loads from shared memory (an observer is shown the interpreter's accesses:
    /// under one, the steps run).
    pub(crate) memory: bool,
    /// How many times a whole warp reaches the run before it is compiled.
    hot: u32,
    hits: std::sync::atomic::AtomicU32,
    code: std::sync::OnceLock<Option<NativeRun>>,
    make: Box<dyn Fn() -> Option<NativeRun> + Send + Sync>,
}

#[cfg(feature = "native")]
impl NativeSlot {
    pub(crate) fn new(
        first: Step,
        len: u32,
        loops: bool,
        memory: bool,
        hot: u32,
        make: Box<dyn Fn() -> Option<NativeRun> + Send + Sync>,
    ) -> NativeSlot {
        NativeSlot { first, len, loops, memory, hot, hits: Default::default(), code: Default::default(), make }
    }

    /// The run's code, compiled at the call after its `hot`th (`None` before, or if the
    /// code generator refused it).
    #[inline]
    pub(crate) fn code(&self) -> Option<&NativeRun> {
        if let Some(code) = self.code.get() {
            return code.as_ref();
        }
        if self.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < self.hot {
            return None;
        }
        self.compiled()
    }

    /// The run's code, compiled now if it was not yet.
    pub(crate) fn compiled(&self) -> Option<&NativeRun> {
        self.code.get_or_init(|| (self.make)()).as_ref()
    }
}
