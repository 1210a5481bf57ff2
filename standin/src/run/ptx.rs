//! Kernels of PTX run by the PTX executor (`cudrv-ptx`) on the world's device memory.
//!
//! The executor runs the blocks of a launch in parallel on the host's cores. Each access
//! it makes to global memory comes here: the live allocation containing the address is
//! found through the world's memory (once per allocation and host thread: the allocations
//! a launch has touched stay alive until it ends; a warp's accesses look it up again only
//! where a lane leaves the previous lane's allocation), and the whole access must lie
//! inside it, else the launch fails with CUDA_ERROR_ILLEGAL_ADDRESS. Loads, stores and
//! atomics of 1, 2, 4 and 8 bytes are single atomic accesses of the host (relaxed; atomics
//! are read-modify-write loops), so blocks running at once on several host threads see
//! each other's writes as a GPU's blocks do.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use cudrv::sys::CUresult;
use cudrv_ptx::{BadAddress, Fault, GlobalMemory, Observer};

use crate::run::backing::Backing;
use crate::run::footprint::Footprint;
use crate::run::kernels::Memory;
use crate::run::recorded::Recorded;

/// One launch of a PTX kernel, its parameters already read.
pub(crate) struct PtxLaunch<'a> {
    /// The loaded module.
    pub(crate) module: &'a cudrv_ptx::Module,
    /// The kernel's name.
    pub(crate) kernel: &'a str,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub(crate) shared: u32,
    /// The value of each parameter.
    pub(crate) params: &'a [Vec<u8>],
    /// The device address of each of the module's globals.
    pub(crate) globals: &'a [u64],
    /// The context's per-thread stack size (`CU_LIMIT_STACK_SIZE`).
    pub(crate) stack: u64,
}

/// The status a launch fails with for `fault`, and whether it leaves the context
/// sticky-failed: an illegal or misaligned address, `trap` (CUDA_ERROR_LAUNCH_FAILED, as
/// the H200 answers a trapping kernel), a failed device-side assert (CUDA_ERROR_ASSERT), a
/// barrier that the block's threads never all reach (CUDA_ERROR_LAUNCH_FAILED: the GPU
/// hangs there; the executor stops instead), calls nested too deep
/// (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) are sticky; an invalid launch
/// (CUDA_ERROR_INVALID_VALUE) is not.
pub(crate) fn status_of(fault: &Fault) -> (CUresult, bool) {
    match fault {
        Fault::IllegalAddress { .. } => (CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, true),
        Fault::MisalignedAddress { .. } => (CUresult::CUDA_ERROR_MISALIGNED_ADDRESS, true),
        Fault::Trap { .. } => (CUresult::CUDA_ERROR_LAUNCH_FAILED, true),
        Fault::Assert { .. } => (CUresult::CUDA_ERROR_ASSERT, true),
        Fault::BarrierDeadlock { .. } => (CUresult::CUDA_ERROR_LAUNCH_FAILED, true),
        Fault::StackOverflow { .. } => (CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, true),
        Fault::InvalidLaunch(_) => (CUresult::CUDA_ERROR_INVALID_VALUE, false),
        // A fault a later executor adds: the launch failed.
        #[allow(unreachable_patterns)]
        _ => (CUresult::CUDA_ERROR_LAUNCH_FAILED, true),
    }
}

/// Runs the launch over its grid on the host's cores; the executor's fault if it fails.
pub(crate) fn run(memory: Memory<'_>, launch: &PtxLaunch<'_>) -> Result<(), Fault> {
    run_with(memory, launch, None, None)
}

/// As [`run`], with the bytes the kernel's plain loads and stores touched (sanitized
/// launches: `run/recorded.rs`; when `record` is false, none), each block's accesses
/// shown to `observer` (`sanitize/kernel.rs`).
pub(crate) fn run_recorded(
    memory: Memory<'_>,
    launch: &PtxLaunch<'_>,
    record: bool,
    observer: &dyn Observer,
) -> (Result<(), Fault>, Footprint) {
    let fp = Mutex::new(Footprint::default());
    let r = run_with(memory, launch, Some(&fp).filter(|_| record), Some(observer));
    (r, fp.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn run_with(
    memory: Memory<'_>,
    launch: &PtxLaunch<'_>,
    record: Option<&Mutex<Footprint>>,
    observer: Option<&dyn Observer>,
) -> Result<(), Fault> {
    let checked = Device { lookup: memory, id: next_launch(), stack: launch.stack };
    let recorded;
    let device: &dyn GlobalMemory = match record {
        Some(fp) => {
            recorded = Recorded { inner: &checked, fp };
            &recorded
        }
        None => &checked,
    };
    let params: Vec<&[u8]> = launch.params.iter().map(Vec::as_slice).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let r = launch.module.launch_observed(
        launch.kernel,
        launch.grid,
        launch.block,
        launch.shared,
        &params,
        launch.globals,
        device,
        threads,
        observer,
    );
    // The calling thread may run blocks itself: it forgets this launch's allocations.
    forget();
    r.map(drop)
}

/// A number for each launch (0 is none).
fn next_launch() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// An allocation a launch has touched: its start, end and memory.
type Seen = (u64, u64, Arc<Backing>);

thread_local! {
    /// The launch this host thread runs blocks of, and the allocations it touched (the
    /// last one touched first).
    static SEEN: RefCell<(u64, Vec<Seen>)> = const { RefCell::new((0, Vec::new())) };
}

fn forget() {
    let _ = SEEN.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            *s = (0, Vec::new());
        }
    });
}

/// The world's device memory as the executor sees it.
struct Device<'m> {
    lookup: Memory<'m>,
    id: u64,
    /// The launch's per-thread stack size.
    stack: u64,
}

impl Device<'_> {
    /// Runs `f` with this host thread's allocations of this launch (those of an earlier
    /// launch forgotten first); `bad` if the thread's record is unavailable.
    #[inline]
    fn with_seen<R>(
        &self,
        bad: BadAddress,
        f: impl FnOnce(&mut Vec<Seen>) -> Result<R, BadAddress>,
    ) -> Result<R, BadAddress> {
        SEEN.try_with(|s| {
            let mut s = s.try_borrow_mut().map_err(|_| bad)?;
            if s.0 != self.id {
                *s = (self.id, Vec::new());
            }
            f(&mut s.1)
        })
        .map_err(|_| bad)?
    }

    /// The live allocation containing `addr` (its start, end and first byte), from `seen`
    /// or else the world's memory (then kept in `seen`); moved to the front of `seen`.
    #[inline]
    fn find(&self, seen: &mut Vec<Seen>, addr: u64) -> Result<Hit, BadAddress> {
        let bad = BadAddress { addr };
        let hit = seen.iter().position(|&(start, stop, _)| start <= addr && addr < stop);
        let i = match hit {
            Some(i) => i,
            None => {
                let (start, size, backing) = (self.lookup)(addr).map_err(|_| bad)?;
                let stop = start.checked_add(size as u64).ok_or(bad)?;
                seen.push((start, stop, backing));
                seen.len() - 1
            }
        };
        if i != 0 {
            seen.swap(0, i);
        }
        let (start, stop, backing) = seen.first().ok_or(bad)?;
        Ok(Hit { start: *start, stop: *stop, base: backing.as_ptr() })
    }

    /// A host pointer to the `len` bytes at `addr`, inside one live allocation, valid until
    /// the launch ends.
    #[inline]
    fn at(&self, addr: u64, len: usize) -> Result<*mut u8, BadAddress> {
        let bad = BadAddress { addr };
        let end = addr.checked_add(len as u64).ok_or(bad)?;
        self.with_seen(bad, |seen| self.find(seen, addr)?.at(addr, end))
    }

    /// A whole warp's 4-byte accesses of 32 consecutive aligned words inside one live
    /// allocation: the host pointer to the first. `None` for any other access, taken lane
    /// by lane (which finds the first bad lane).
    #[inline]
    fn run_of_words(&self, addrs: &[u64; 32], mask: u32, size: usize) -> Option<*mut u8> {
        self.at(cudrv_ptx::consecutive_words(addrs, mask, size)?, 128).ok()
    }

    /// Each set bit `lane` of `mask` in lane order: the host pointer to the `size` bytes
    /// at `addrs[lane]` checked as [`Device::at`] checks it (the allocation looked up again
    /// only when a lane leaves the previous lane's), given to `each` with the lane. `Err`
    /// at the first lane outside a live allocation, the lanes before it done.
    #[inline]
    fn each_lane(
        &self,
        addrs: &[u64; 32],
        mask: u32,
        size: usize,
        mut each: impl FnMut(usize, u64, *mut u8),
    ) -> Result<(), BadAddress> {
        let Some(&first) = addrs.get(mask.trailing_zeros() as usize) else { return Ok(()) };
        self.with_seen(BadAddress { addr: first }, |seen| {
            let mut last: Option<Hit> = None;
            for (lane, &addr) in addrs.iter().enumerate() {
                if mask & (1 << lane) == 0 {
                    continue;
                }
                let bad = BadAddress { addr };
                let end = addr.checked_add(size as u64).ok_or(bad)?;
                let hit = match last {
                    Some(h) if h.start <= addr && addr < h.stop => h,
                    _ => {
                        let h = self.find(seen, addr)?;
                        last = Some(h);
                        h
                    }
                };
                each(lane, addr, hit.at(addr, end)?);
            }
            Ok(())
        })
    }
}

/// A live allocation a launch has touched: its start and end addresses, and its first
/// byte (valid while the launch runs: this thread's `SEEN` keeps the allocation alive).
#[derive(Clone, Copy)]
struct Hit {
    start: u64,
    stop: u64,
    base: *mut u8,
}

impl Hit {
    /// The host pointer to `addr` if `addr..end` lies inside the allocation.
    #[inline]
    fn at(self, addr: u64, end: u64) -> Result<*mut u8, BadAddress> {
        if addr < self.start || end > self.stop {
            return Err(BadAddress { addr });
        }
        // SAFETY: start <= addr <= end <= stop: inside the allocation, which `SEEN` keeps
        // alive while the launch runs.
        Ok(unsafe { self.base.add((addr - self.start) as usize) })
    }
}

/// The `n` bytes (at most 8) at `p`, device address `addr`, little-endian, zero-extended:
/// one atomic load of the host where the access is 1, 2, 4 or 8 bytes aligned to its size,
/// else byte by byte.
///
/// # Safety
/// `p` points to `n` bytes of device memory that other host threads access only
/// atomically or byte-wise; the device memory's backing is 256-byte aligned, so `p` is
/// aligned as `addr` is to each size up to 8.
#[inline]
unsafe fn load(p: *mut u8, addr: u64, n: usize) -> u64 {
    // SAFETY: the caller's.
    unsafe {
        match n {
            1 => u64::from(AtomicU8::from_ptr(p).load(Ordering::Relaxed)),
            2 if addr % 2 == 0 => u64::from(AtomicU16::from_ptr(p.cast()).load(Ordering::Relaxed)),
            4 if addr % 4 == 0 => u64::from(AtomicU32::from_ptr(p.cast()).load(Ordering::Relaxed)),
            8 if addr % 8 == 0 => AtomicU64::from_ptr(p.cast()).load(Ordering::Relaxed),
            n => {
                let mut b = [0u8; 8];
                for (i, o) in b.iter_mut().enumerate().take(n) {
                    *o = AtomicU8::from_ptr(p.add(i)).load(Ordering::Relaxed);
                }
                u64::from_le_bytes(b)
            }
        }
    }
}

/// Writes the low `n` bytes (at most 8) of `v` at `p`, device address `addr`, as [`load`]
/// reads them.
///
/// # Safety
/// As for [`load`].
#[inline]
unsafe fn store(p: *mut u8, addr: u64, n: usize, v: u64) {
    // SAFETY: the caller's.
    unsafe {
        match n {
            1 => AtomicU8::from_ptr(p).store(v as u8, Ordering::Relaxed),
            2 if addr % 2 == 0 => AtomicU16::from_ptr(p.cast()).store(v as u16, Ordering::Relaxed),
            4 if addr % 4 == 0 => AtomicU32::from_ptr(p.cast()).store(v as u32, Ordering::Relaxed),
            8 if addr % 8 == 0 => AtomicU64::from_ptr(p.cast()).store(v, Ordering::Relaxed),
            n => {
                for (i, b) in v.to_le_bytes().iter().enumerate().take(n) {
                    AtomicU8::from_ptr(p.add(i)).store(*b, Ordering::Relaxed);
                }
            }
        }
    }
}

// SAFETY: `Device::at`'s pointer is into an allocation this host thread's `SEEN` keeps
// alive until the launch ends (the thread asking is the one running the code); while the
// launch runs, other host threads touch device memory only atomically or byte-wise, the
// precondition the steps' own `load` and `store` rely on.
unsafe impl cudrv_ptx::Windows for Device<'_> {
    fn window(&self, addr: u64, len: u64) -> Option<std::ptr::NonNull<u8>> {
        std::ptr::NonNull::new(self.at(addr, usize::try_from(len).ok()?).ok()?)
    }
}

impl GlobalMemory for Device<'_> {
    /// Compiled runs read and write the allocations' bytes directly.
    fn windows(&self) -> Option<&dyn cudrv_ptx::Windows> {
        Some(self)
    }

    /// The launching context's `CU_LIMIT_STACK_SIZE`.
    fn stack_limit(&self) -> u64 {
        self.stack
    }

    /// A texture or surface object's handle is the device address of its record
    /// (`run/texture.rs`): read through this launch's memory like any other access.
    fn texture(&self, handle: u64) -> Option<cudrv_ptx::Texture> {
        let mut record = [0u8; crate::run::texture::TEXELS_BYTES];
        self.read(handle, &mut record).ok()?;
        crate::run::texture::Texels::from_bytes(&record)?.to_ptx()
    }

    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        let p = self.at(addr, out.len())?;
        // SAFETY: `p` has `out.len()` bytes of device memory (checked), aligned to the
        // access's size where the access is one atomic of it (the executor checks
        // alignment; the backing is 256-byte aligned); other host threads access it only
        // atomically or byte-wise.
        unsafe {
            match out.len() {
                n @ 0..=8 => {
                    let v = load(p, addr, n).to_le_bytes();
                    for (o, b) in out.iter_mut().zip(v) {
                        *o = b;
                    }
                }
                16 if addr % 8 == 0 => {
                    let lo = AtomicU64::from_ptr(p.cast()).load(Ordering::Relaxed).to_le_bytes();
                    let hi = AtomicU64::from_ptr(p.add(8).cast()).load(Ordering::Relaxed).to_le_bytes();
                    let (a, b) = out.split_at_mut(8);
                    a.copy_from_slice(&lo);
                    b.copy_from_slice(&hi);
                }
                n => {
                    for (i, o) in out.iter_mut().enumerate().take(n) {
                        *o = AtomicU8::from_ptr(p.add(i)).load(Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        let p = self.at(addr, data.len())?;
        // SAFETY: as in `read`, the other way.
        unsafe {
            match data.len() {
                n @ 0..=8 => {
                    let mut b = [0u8; 8];
                    for (d, s) in b.iter_mut().zip(data) {
                        *d = *s;
                    }
                    store(p, addr, n, u64::from_le_bytes(b));
                }
                n => {
                    for (i, d) in data.iter().enumerate().take(n) {
                        AtomicU8::from_ptr(p.add(i)).store(*d, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(())
    }

    /// As the default (lane by lane through [`Device::read`], the same checks and the same
    /// first bad lane), the allocation looked up once for a run of lanes inside it.
    fn read_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, out: &mut [u64; 32]) -> Result<(), BadAddress> {
        if let Some(p) = self.run_of_words(addrs, mask, size) {
            for (i, o) in out.iter_mut().enumerate() {
                // SAFETY: `p` has 128 bytes of device memory, 4-byte aligned (checked).
                *o = u64::from(unsafe { AtomicU32::from_ptr(p.add(4 * i).cast()) }.load(Ordering::Relaxed));
            }
            return Ok(());
        }
        let n = size.min(8);
        self.each_lane(addrs, mask, n, |lane, addr, p| {
            if let Some(o) = out.get_mut(lane) {
                // SAFETY: `p` has `n` bytes of device memory (checked), as in `read`.
                *o = unsafe { load(p, addr, n) };
            }
        })
    }

    /// As the default (lane by lane through [`Device::write`]), the allocation looked up
    /// once for a run of lanes inside it.
    fn write_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, data: &[u64; 32]) -> Result<(), BadAddress> {
        if let Some(p) = self.run_of_words(addrs, mask, size) {
            for (i, &v) in data.iter().enumerate() {
                // SAFETY: as in `read_lanes`.
                unsafe { AtomicU32::from_ptr(p.add(4 * i).cast()) }.store(v as u32, Ordering::Relaxed);
            }
            return Ok(());
        }
        let n = size.min(8);
        self.each_lane(addrs, mask, n, |lane, addr, p| {
            if let Some(&v) = data.get(lane) {
                // SAFETY: `p` has `n` bytes of device memory (checked), as in `write`.
                unsafe { store(p, addr, n, v) };
            }
        })
    }

    fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress> {
        let p = self.at(addr, size)?;
        let bad = BadAddress { addr };
        if addr % size as u64 != 0 {
            return Err(bad);
        }
        // SAFETY: `p` has `size` bytes of device memory, aligned to `size` (checked).
        unsafe {
            match size {
                2 => {
                    let a = AtomicU16::from_ptr(p.cast());
                    let mut old = a.load(Ordering::SeqCst);
                    loop {
                        let new = op(u64::from(old)) as u16;
                        match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::SeqCst) {
                            Ok(v) => return Ok(u64::from(v)),
                            Err(v) => old = v,
                        }
                    }
                }
                4 => {
                    let a = AtomicU32::from_ptr(p.cast());
                    let mut old = a.load(Ordering::SeqCst);
                    loop {
                        let new = op(u64::from(old)) as u32;
                        match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::SeqCst) {
                            Ok(v) => return Ok(u64::from(v)),
                            Err(v) => old = v,
                        }
                    }
                }
                8 => {
                    let a = AtomicU64::from_ptr(p.cast());
                    let mut old = a.load(Ordering::SeqCst);
                    loop {
                        let new = op(old);
                        match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::SeqCst) {
                            Ok(v) => return Ok(v),
                            Err(v) => old = v,
                        }
                    }
                }
                _ => Err(bad),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)] // a test fails by panicking
mod tests {
    use super::*;

    /// Three allocations: 64 bytes at 0x1000, then (after a gap) 40 bytes at 0x1100 and
    /// 24 right after it, at 0x1128 (no gap between them).
    const ALLOCS: [(u64, usize); 3] = [(0x1000, 64), (0x1100, 40), (0x1128, 24)];

    struct World {
        backings: Vec<Arc<Backing>>,
    }

    impl World {
        fn new() -> World {
            World { backings: ALLOCS.iter().map(|&(_, size)| Arc::new(Backing::zeroed(size).unwrap())).collect() }
        }

        fn lookup(&self, addr: u64) -> Result<(u64, usize, Arc<Backing>), CUresult> {
            ALLOCS
                .iter()
                .zip(&self.backings)
                .find(|((start, size), _)| *start <= addr && addr < start + *size as u64)
                .map(|(&(start, size), b)| (start, size, Arc::clone(b)))
                .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)
        }

        /// Every allocation's bytes.
        fn bytes(&self) -> Vec<Vec<u8>> {
            ALLOCS
                .iter()
                .zip(&self.backings)
                // SAFETY: the whole allocation; no other thread uses it.
                .map(|(&(_, size), b)| unsafe { std::slice::from_raw_parts(b.as_ptr(), size) }.to_vec())
                .collect()
        }

        /// Fills every allocation with `seed`'s pattern.
        fn fill(&self, seed: u8) {
            for (&(_, size), b) in ALLOCS.iter().zip(&self.backings) {
                for i in 0..size {
                    // SAFETY: inside the allocation; no other thread uses it.
                    unsafe { *b.as_ptr().add(i) = seed.wrapping_mul(31).wrapping_add(i as u8) };
                }
            }
        }
    }

    /// The trait's default `read_lanes`/`write_lanes` (lane by lane) on a `Device`.
    struct LaneByLane<'a, 'm>(&'a Device<'m>);

    impl GlobalMemory for LaneByLane<'_, '_> {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
            self.0.read(addr, out)
        }
        fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
            self.0.write(addr, data)
        }
        fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress> {
            self.0.atomic(addr, size, op)
        }
    }

    /// Warps of addresses in the three allocations, the gap, past the ends, straddling the
    /// end of one allocation (into the gap or into the next one) and misaligned: each
    /// warp's load and store do what the lane-by-lane default does, including the first
    /// bad lane and the lanes before it (loaded, or stored).
    #[test]
    fn a_warps_accesses_match_lane_by_lane_ones() {
        let world = World::new();
        let lookup = |addr| world.lookup(addr);
        let device = Device { lookup: &lookup, id: next_launch(), stack: 1024 };
        let mut x = 0x2545_f491u32;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let (mut faults, mut straddles) = (0, 0);
        for round in 0..4000u32 {
            let size = [1usize, 2, 4, 8][(round % 4) as usize];
            let aligned = round % 5 != 0;
            let mask = if round % 3 == 0 { u32::MAX } else { next() | next() };
            // Mostly consecutive lanes of one allocation from a random start, some lanes
            // anywhere (another allocation, the gap, past an end).
            let (start, len) = ALLOCS[(next() % 3) as usize];
            let mut at = start + u64::from(next()) % (len as u64 + 8);
            let addrs: [u64; 32] = std::array::from_fn(|_| {
                let a = if next() % 8 == 0 { 0x0ff0 + u64::from(next() % 0x180) } else { at };
                at += size as u64;
                if aligned {
                    a / size as u64 * size as u64
                } else {
                    a
                }
            });
            let want_err = (0..32).filter(|l| mask & (1 << l) != 0).find(|&l| {
                let a = addrs[l];
                !ALLOCS.iter().any(|&(s, n)| s <= a && a + size as u64 <= s + n as u64)
            });
            if let Some(l) = want_err {
                faults += 1;
                straddles += usize::from(ALLOCS.iter().any(|&(s, n)| s <= addrs[l] && addrs[l] < s + n as u64));
            }
            world.fill(round as u8);
            let mut got = [u64::MAX; 32];
            let mut want = [u64::MAX; 32];
            let r = device.read_lanes(&addrs, mask, size, &mut got);
            assert_eq!(r, LaneByLane(&device).read_lanes(&addrs, mask, size, &mut want), "round {round}");
            assert_eq!(r.err(), want_err.map(|l| BadAddress { addr: addrs[l] }), "round {round}");
            assert_eq!(got, want, "round {round}");
            let data: [u64; 32] = std::array::from_fn(|_| u64::from(next()) << 32 | u64::from(next()));
            let w = device.write_lanes(&addrs, mask, size, &data);
            let after = world.bytes();
            world.fill(round as u8);
            assert_eq!(w, LaneByLane(&device).write_lanes(&addrs, mask, size, &data), "round {round}");
            assert_eq!(w, r, "round {round}");
            assert_eq!(after, world.bytes(), "round {round}");
        }
        // The rounds reached the cases they are for.
        assert!(faults > 500 && straddles > 100, "{faults} faults, {straddles} straddling an end");
        forget();
    }

    /// A warp whose lanes run past the end of an allocation: the load stops at the first
    /// lane outside it (the lanes before it loaded), the store too (the lanes before it
    /// stored, nothing after).
    #[test]
    fn a_warp_straddling_the_end_of_an_allocation_stops_at_its_first_lane_outside() {
        let world = World::new();
        let lookup = |addr| world.lookup(addr);
        let device = Device { lookup: &lookup, id: next_launch(), stack: 1024 };
        let (start, len) = ALLOCS[1];
        // Lanes 0 to 4 fill the 40 bytes; lane 5's 8 bytes straddle the end into the next
        // allocation, which the lanes after it are in.
        let addrs: [u64; 32] = std::array::from_fn(|l| match l {
            0..5 => start + 8 * l as u64,
            5 => start + len as u64 - 4,
            _ => ALLOCS[2].0 + 8 * (l as u64 - 6) % 24,
        });
        let data: [u64; 32] = std::array::from_fn(|l| 0x0101_0101_0101_0101 * (l as u64 + 1));
        let mut want = world.bytes();
        assert_eq!(device.write_lanes(&addrs, u32::MAX, 8, &data), Err(BadAddress { addr: start + 36 }));
        for l in 0..5 {
            want[1][8 * l..8 * l + 8].copy_from_slice(&data[l].to_le_bytes());
        }
        assert_eq!(world.bytes(), want);
        let mut out = [0u64; 32];
        assert_eq!(device.read_lanes(&addrs, u32::MAX, 8, &mut out), Err(BadAddress { addr: start + 36 }));
        assert_eq!(out[..5], data[..5]);
        assert_eq!(out[5..], [0u64; 27]);
        // Without lane 5, the warp runs on into the next allocation.
        assert_eq!(device.write_lanes(&addrs, !(1 << 5), 8, &data), Ok(()));
        assert_eq!(device.read_lanes(&addrs, !(1 << 5), 8, &mut out), Ok(()));
        assert_eq!(out[29], data[29]);
        forget();
    }

    /// Through the executor: 32 threads storing 4 bytes each into a 64-byte allocation
    /// fail the launch with an illegal address at thread 16's, after threads 0 to 15
    /// stored theirs.
    #[test]
    fn a_launch_whose_warp_runs_past_an_allocation_faults_at_the_first_lane_outside() {
        let text = ".version 8.0\n.target sm_90\n.address_size 64\n\
                    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
                    ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n\
                    add.s64 %rd3, %rd1, %rd2;\nadd.u32 %r2, %r1, 100;\nst.global.u32 [%rd3], %r2;\nret;\n}\n";
        let module = cudrv_ptx::Module::load(text).unwrap();
        let world = World::new();
        let lookup = |addr| world.lookup(addr);
        let (start, len) = ALLOCS[0];
        let params = [start.to_le_bytes().to_vec()];
        let launch = PtxLaunch {
            module: &module,
            kernel: "k",
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared: 0,
            params: &params,
            globals: &[],
            stack: 1024,
        };
        let fault = run(&lookup, &launch).unwrap_err();
        assert!(matches!(fault, Fault::IllegalAddress { addr, line: 13 } if addr == start + len as u64), "{fault:?}");
        assert_eq!(status_of(&fault), (CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, true));
        let want: Vec<u8> = (100..116u32).flat_map(u32::to_le_bytes).collect();
        assert_eq!(world.bytes()[0], want);
    }
}
