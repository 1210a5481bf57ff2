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
use std::sync::Arc;

use cudrv::sys::CUresult;
use cudrv_ptx::{BadAddress, Fault, GlobalMemory};

use crate::run::backing::Backing;
use crate::run::kernels::Memory;

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
}

/// The status a launch fails with for `fault`, and whether it leaves the context
/// sticky-failed: an illegal or misaligned address, `trap`
/// (CUDA_ERROR_ILLEGAL_INSTRUCTION), a failed device-side assert (CUDA_ERROR_ASSERT), a
/// barrier that the block's threads never all reach (CUDA_ERROR_LAUNCH_FAILED: the GPU
/// hangs there; the executor stops instead), calls nested too deep
/// (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) are sticky; an invalid launch
/// (CUDA_ERROR_INVALID_VALUE) is not.
pub(crate) fn status_of(fault: &Fault) -> (CUresult, bool) {
    match fault {
        Fault::IllegalAddress { .. } => (CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, true),
        Fault::MisalignedAddress { .. } => (CUresult::CUDA_ERROR_MISALIGNED_ADDRESS, true),
        Fault::Trap { .. } => (CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION, true),
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
    let device = Device { lookup: memory, id: next_launch() };
    let params: Vec<&[u8]> = launch.params.iter().map(Vec::as_slice).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let r = launch.module.launch_with(
        launch.kernel,
        launch.grid,
        launch.block,
        launch.shared,
        &params,
        launch.globals,
        &device,
        threads,
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

impl GlobalMemory for Device<'_> {
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
