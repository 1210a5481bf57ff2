//! Kernels of PTX run by the PTX executor (`cudrv-ptx`) on the world's device memory.
//!
//! The executor runs the blocks of a launch in parallel on the host's cores. Each access
//! it makes to global memory comes here: the live allocation containing the address is
//! found through the world's memory (once per allocation and host thread: the allocations
//! a launch has touched stay alive until it ends), and the whole access must lie inside
//! it, else the launch fails with CUDA_ERROR_ILLEGAL_ADDRESS. Loads, stores and atomics of
//! 1, 2, 4 and 8 bytes are single atomic accesses of the host (relaxed; atomics are
//! read-modify-write loops), so blocks running at once on several host threads see each
//! other's writes as a GPU's blocks do.

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
    /// A host pointer to the `len` bytes at `addr`, inside one live allocation, valid until
    /// the launch ends.
    #[inline]
    fn at(&self, addr: u64, len: usize) -> Result<*mut u8, BadAddress> {
        let bad = BadAddress { addr };
        let end = addr.checked_add(len as u64).ok_or(bad)?;
        SEEN.try_with(|s| {
            let mut s = s.try_borrow_mut().map_err(|_| bad)?;
            if s.0 != self.id {
                *s = (self.id, Vec::new());
            }
            let seen = &mut s.1;
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
            if end > *stop {
                return Err(bad);
            }
            // SAFETY: start <= addr and end <= stop: inside the allocation, which `seen`
            // keeps alive while the launch runs.
            Ok(unsafe { backing.as_ptr().add((addr - start) as usize) })
        })
        .map_err(|_| bad)?
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
                1 => out.copy_from_slice(&[AtomicU8::from_ptr(p).load(Ordering::Relaxed)]),
                2 if addr % 2 == 0 => {
                    out.copy_from_slice(&AtomicU16::from_ptr(p.cast()).load(Ordering::Relaxed).to_le_bytes())
                }
                4 if addr % 4 == 0 => {
                    out.copy_from_slice(&AtomicU32::from_ptr(p.cast()).load(Ordering::Relaxed).to_le_bytes())
                }
                8 if addr % 8 == 0 => {
                    out.copy_from_slice(&AtomicU64::from_ptr(p.cast()).load(Ordering::Relaxed).to_le_bytes())
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
        let word = |n: usize| {
            let mut b = [0u8; 8];
            for (d, s) in b.iter_mut().zip(data).take(n) {
                *d = *s;
            }
            u64::from_le_bytes(b)
        };
        // SAFETY: as in `read`, the other way.
        unsafe {
            match data.len() {
                1 => AtomicU8::from_ptr(p).store(word(1) as u8, Ordering::Relaxed),
                2 if addr % 2 == 0 => AtomicU16::from_ptr(p.cast()).store(word(2) as u16, Ordering::Relaxed),
                4 if addr % 4 == 0 => AtomicU32::from_ptr(p.cast()).store(word(4) as u32, Ordering::Relaxed),
                8 if addr % 8 == 0 => AtomicU64::from_ptr(p.cast()).store(word(8), Ordering::Relaxed),
                n => {
                    for (i, d) in data.iter().enumerate().take(n) {
                        AtomicU8::from_ptr(p.add(i)).store(*d, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(())
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
