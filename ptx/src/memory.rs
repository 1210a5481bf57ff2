//! What the executor asks of its embedder: device memory ([`GlobalMemory`]), and what a
//! launch can fail with ([`Fault`]). [`HostMemory`] is a simple implementation for tests.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Host pointers into device memory, for the executor's machine code
/// ([`GlobalMemory::windows`]).
///
/// # Safety
/// A pointer [`Windows::window`] gives must stay valid for reads and writes of the `len`
/// bytes it was asked for until the launch that asked ends, and while the launch runs other
/// host threads may touch those bytes only with atomic accesses (as the executor's own
/// steps do), so that the machine code's aligned loads and stores of 1, 2, 4 or 8 bytes
/// race with nothing but accesses as indivisible as they are.
pub unsafe trait Windows: Sync {
    /// The host address of device address `addr`, when the `len` bytes from `addr` lie
    /// inside one live allocation; `None` otherwise (the accesses are then taken step by
    /// step, which finds the first bad lane).
    fn window(&self, addr: u64, len: u64) -> Option<std::ptr::NonNull<u8>>;
}

/// An access outside every live allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadAddress {
    /// The first address of the access.
    pub addr: u64,
}

/// The device memory a launch reads and writes: the embedder's allocations (and the module
/// globals it placed in them). Implementations must be usable from several threads at once
/// (blocks run in parallel).
pub trait GlobalMemory: Sync {
    /// Reads `out.len()` bytes at `addr`; `Err` if any byte is outside a live allocation.
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress>;
    /// Writes `data` at `addr`; `Err` (writing nothing) if any byte is outside a live
    /// allocation.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress>;
    /// Atomically replaces the `size`-byte (4 or 8, or 2) little-endian value `old` at
    /// `addr` by `op(old)` and returns `old`; no other `atomic` on an overlapping address
    /// runs between the read and the write.
    fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress>;
    /// A warp's load: for each set bit `lane` of `mask`, in lane order, reads the `size`
    /// bytes (1, 2, 4 or 8) at `addrs[lane]` into `out[lane]` (little-endian,
    /// zero-extended). `Err` at the first lane outside a live allocation (the lanes before
    /// it have been read). The default calls [`GlobalMemory::read`] lane by lane;
    /// implementations may do better (one look-up for lanes in the same allocation).
    fn read_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, out: &mut [u64; 32]) -> Result<(), BadAddress> {
        for (lane, (&addr, o)) in addrs.iter().zip(out.iter_mut()).enumerate() {
            if mask & (1 << lane) != 0 {
                let mut b = [0u8; 8];
                self.read(addr, b.get_mut(..size.min(8)).unwrap_or(&mut []))?;
                *o = u64::from_le_bytes(b);
            }
        }
        Ok(())
    }
    /// A warp's store: for each set bit `lane` of `mask`, in lane order, writes the low
    /// `size` bytes (1, 2, 4 or 8) of `data[lane]` at `addrs[lane]`. `Err` at the first lane
    /// outside a live allocation (the lanes before it have been written). The default calls
    /// [`GlobalMemory::write`] lane by lane.
    fn write_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, data: &[u64; 32]) -> Result<(), BadAddress> {
        for (lane, (&addr, v)) in addrs.iter().zip(data).enumerate() {
            if mask & (1 << lane) != 0 {
                self.write(addr, v.to_le_bytes().get(..size.min(8)).unwrap_or(&[]))?;
            }
        }
        Ok(())
    }
    /// Direct access to the memory for the executor's machine code (feature `native`):
    /// where it is `Some`, a compiled run that loads or stores global memory reads and
    /// writes the host bytes [`Windows::window`] gives instead of calling
    /// [`GlobalMemory::read_lanes`] and [`GlobalMemory::write_lanes`]. The default gives
    /// none (such runs are taken step by step).
    fn windows(&self) -> Option<&dyn Windows> {
        None
    }
    /// The texture or surface state a texture instruction's 64-bit handle stands for
    /// (`tex`, `tld4`, `txq`, `suld`, `sust`, `suq`); `None` for a handle that is no
    /// texture or surface (the instruction faults with [`Fault::IllegalAddress`]). The
    /// default knows none.
    fn texture(&self, handle: u64) -> Option<crate::texture_desc::Texture> {
        let _ = handle;
        None
    }
    /// The per-thread stack size of the launch (a context's `CU_LIMIT_STACK_SIZE`; the
    /// default is the H200's, 1024 bytes). A thread's local memory, the kernel's frame and
    /// its calls' frames, may grow to the larger of this and what the kernel's call graph
    /// needs without recursion (as a driver sizes the stack at launch), at most
    /// [`MAX_LOCAL_PER_THREAD`](crate::MAX_LOCAL_PER_THREAD); a call past it fails the
    /// launch with [`Fault::StackOverflow`].
    fn stack_limit(&self) -> u64 {
        1024
    }
    /// Receives the text a kernel's `printf` (vprintf) produces, one call's output at a
    /// time. The default writes it to standard output.
    fn printf(&self, text: &str) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// Why a launch failed. The stand-in maps each to the CUDA error the real driver gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A load, store or atomic outside every live allocation or outside shared/local memory
    /// (CUDA_ERROR_ILLEGAL_ADDRESS).
    IllegalAddress {
        /// The address accessed.
        addr: u64,
        /// The PTX line of the instruction.
        line: u32,
    },
    /// An access not aligned to its size (CUDA_ERROR_MISALIGNED_ADDRESS).
    MisalignedAddress {
        /// The address accessed.
        addr: u64,
        /// The PTX line of the instruction.
        line: u32,
    },
    /// `trap` was executed (CUDA_ERROR_ILLEGAL_INSTRUCTION).
    Trap {
        /// The PTX line of the instruction.
        line: u32,
    },
    /// A device-side `assert` failed (`__assertfail`; CUDA_ERROR_ASSERT).
    Assert {
        /// The message (the asserted expression).
        message: String,
        /// The source file.
        file: String,
        /// The source line.
        source_line: u32,
        /// The function.
        function: String,
    },
    /// Threads wait at a barrier that the other threads of the block never reach (the GPU
    /// hangs; the executor stops: a deliberate difference).
    BarrierDeadlock {
        /// The block.
        block: [u32; 3],
    },
    /// Calls nested deeper than the executor allows (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    /// or a stack overflow on the GPU).
    StackOverflow {
        /// The PTX line of the call.
        line: u32,
    },
    /// The launch needed more warp instructions than the module's limit
    /// ([`Module::set_instruction_limit`](crate::Module::set_instruction_limit); no GPU
    /// has one: CUDA_ERROR_LAUNCH_TIMEOUT is the closest, a display watchdog's).
    InstructionLimit {
        /// The limit.
        limit: u64,
    },
    /// The launch itself is invalid: unknown kernel, wrong parameters, bad dimensions
    /// (CUDA_ERROR_INVALID_VALUE).
    InvalidLaunch(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::IllegalAddress { addr, line } => write!(f, "illegal address {addr:#x} (PTX line {line})"),
            Fault::MisalignedAddress { addr, line } => write!(f, "misaligned address {addr:#x} (PTX line {line})"),
            Fault::Trap { line } => write!(f, "trap (PTX line {line})"),
            Fault::Assert { message, file, source_line, function } => {
                write!(f, "{file}:{source_line}: {function}: Assertion `{message}` failed.")
            }
            Fault::BarrierDeadlock { block } => {
                write!(f, "block {block:?}: threads wait at a barrier the others never reach")
            }
            Fault::StackOverflow { line } => write!(f, "call stack overflow (PTX line {line})"),
            Fault::InstructionLimit { limit } => write!(f, "the launch needs more than {limit} warp instructions"),
            Fault::InvalidLaunch(s) => write!(f, "invalid launch: {s}"),
        }
    }
}

impl std::error::Error for Fault {}

/// The first address of a whole warp's 4-byte accesses (`mask` all lanes, `size` 4) when
/// they are 32 consecutive aligned words, the usual coalesced access: a
/// [`GlobalMemory::read_lanes`] or [`GlobalMemory::write_lanes`] can then check one 128-byte
/// range instead of 32 addresses. `None` for any other access.
#[inline]
pub fn consecutive_words(addrs: &[u64; 32], mask: u32, size: usize) -> Option<u64> {
    let first = addrs[0];
    if mask != u32::MAX || size != 4 || first % 4 != 0 {
        return None;
    }
    let consecutive = addrs.iter().zip(0u64..).fold(true, |ok, (&a, i)| ok & (a == first.wrapping_add(4 * i)));
    consecutive.then_some(first)
}

struct Alloc {
    base: u64,
    size: usize,
    /// The bytes, four to a word (little-endian), so that an aligned access of 4 bytes is
    /// one atomic load or store and one of 8 bytes two.
    words: Box<[AtomicU32]>,
}

impl Alloc {
    /// Each word the `n` bytes at byte offset `off` touch: its index, the first byte's
    /// position in it, the number of bytes in it, and their position in the access.
    #[inline]
    fn pieces(off: usize, n: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
        let mut done = 0;
        std::iter::from_fn(move || {
            if done >= n {
                return None;
            }
            let at = off + done;
            let (word, first) = (at / 4, at % 4);
            let len = (4 - first).min(n - done);
            let piece = (word, first, len, done);
            done += len;
            Some(piece)
        })
    }

    fn read(&self, off: usize, out: &mut [u8], order: Ordering) {
        if let (Ok(o), 0) = (<&mut [u8; 4]>::try_from(&mut *out), off % 4) {
            *o = self.words.get(off / 4).map_or(0, |w| w.load(order)).to_le_bytes();
            return;
        }
        for (word, first, len, pos) in Alloc::pieces(off, out.len()) {
            let w = self.words.get(word).map_or(0, |w| w.load(order)).to_le_bytes();
            if let (Some(d), Some(s)) = (out.get_mut(pos..pos + len), w.get(first..first + len)) {
                d.copy_from_slice(s);
            }
        }
    }

    /// Leaves the other bytes of a word it writes part of as they are, even when other
    /// threads write them.
    fn write(&self, off: usize, data: &[u8], order: Ordering) {
        if let (Ok(d), 0) = (<[u8; 4]>::try_from(data), off % 4) {
            if let Some(w) = self.words.get(off / 4) {
                w.store(u32::from_le_bytes(d), order);
            }
            return;
        }
        for (word, first, len, pos) in Alloc::pieces(off, data.len()) {
            let Some(w) = self.words.get(word) else { continue };
            let mut v = [0u8; 4];
            if let (Some(d), Some(s)) = (v.get_mut(first..first + len), data.get(pos..pos + len)) {
                d.copy_from_slice(s);
            }
            let v = u32::from_le_bytes(v);
            if len == 4 {
                w.store(v, order);
            } else {
                let m = (u32::MAX >> (32 - 8 * len)) << (8 * first);
                let _ = w.fetch_update(order, Ordering::Relaxed, |old| Some((old & !m) | v));
            }
        }
    }
}

/// Device memory in host memory, for tests and benchmarks: allocations at distinct
/// addresses, every access checked.
pub struct HostMemory {
    allocs: Vec<Alloc>,
    next: u64,
    atomics: Mutex<()>,
    printed: Mutex<Option<String>>,
}

impl Default for HostMemory {
    fn default() -> Self {
        HostMemory::new()
    }
}

impl fmt::Debug for HostMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostMemory").field("allocations", &self.allocs.len()).finish()
    }
}

impl HostMemory {
    /// No allocations; printf output goes to standard output.
    pub fn new() -> HostMemory {
        HostMemory { allocs: Vec::new(), next: 0x7_0000_0000, atomics: Mutex::new(()), printed: Mutex::new(None) }
    }

    /// Keeps printf output (see [`HostMemory::printed`]) instead of writing it out.
    pub fn capture_printf(&mut self) {
        if let Ok(mut p) = self.printed.lock() {
            *p = Some(String::new());
        }
    }

    /// The printf output captured so far.
    pub fn printed(&self) -> String {
        self.printed.lock().ok().and_then(|p| p.clone()).unwrap_or_default()
    }

    /// A new zeroed allocation of `size` bytes; its address (256-byte aligned).
    pub fn alloc(&mut self, size: usize) -> u64 {
        let base = self.next;
        let words: Box<[AtomicU32]> = (0..size.div_ceil(4)).map(|_| AtomicU32::new(0)).collect();
        self.allocs.push(Alloc { base, size, words });
        self.next = (base + size as u64 + 4096).div_ceil(256) * 256;
        base
    }

    /// A new allocation holding `data`.
    pub fn alloc_from(&mut self, data: &[u8]) -> u64 {
        let a = self.alloc(data.len());
        let _ = self.write(a, data);
        a
    }

    /// `len` bytes at `addr`, if inside one allocation.
    pub fn bytes(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        let mut v = vec![0; len];
        self.read(addr, &mut v).ok()?;
        Some(v)
    }

    /// [`HostMemory::find`], trying the allocation `near` (the previous lane's) first.
    #[inline]
    fn find_near<'m>(&'m self, near: Option<&'m Alloc>, addr: u64, len: usize) -> Option<(&'m Alloc, usize)> {
        if let Some(a) = near {
            let off = addr.wrapping_sub(a.base);
            if addr >= a.base && off <= a.size as u64 && a.size as u64 - off >= len as u64 {
                return Some((a, off as usize));
            }
        }
        self.find(addr, len)
    }

    /// A whole warp's aligned 4-byte accesses that all lie in one allocation, in any pattern
    /// (half-warp rows, broadcasts, strides): that allocation, found once from the lowest
    /// and highest address. `None` for any other access (taken lane by lane).
    #[inline]
    fn span_of_words(&self, addrs: &[u64; 32], mask: u32, size: usize) -> Option<&Alloc> {
        if mask != u32::MAX || size != 4 {
            return None;
        }
        let (lo, hi, odd) =
            addrs.iter().fold((u64::MAX, 0u64, 0u64), |(lo, hi, odd), &a| (lo.min(a), hi.max(a), odd | a));
        if odd % 4 != 0 {
            return None;
        }
        let (a, _) = self.find(lo, usize::try_from(hi - lo).ok()?.checked_add(4)?)?;
        Some(a)
    }

    /// The allocation holding the `len` bytes at `addr`, and `addr`'s offset in it.
    #[inline]
    fn find(&self, addr: u64, len: usize) -> Option<(&Alloc, usize)> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let off = usize::try_from(addr - a.base).ok()?;
        (off.checked_add(len)? <= a.size).then_some((a, off))
    }
}

impl GlobalMemory for HostMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        let (a, off) = self.find(addr, out.len()).ok_or(BadAddress { addr })?;
        a.read(off, out, Ordering::Relaxed);
        Ok(())
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        let (a, off) = self.find(addr, data.len()).ok_or(BadAddress { addr })?;
        a.write(off, data, Ordering::Relaxed);
        Ok(())
    }
    fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress> {
        let (a, off) = self.find(addr, size).ok_or(BadAddress { addr })?;
        let _guard = self.atomics.lock().unwrap_or_else(|e| e.into_inner());
        let mut old = [0u8; 8];
        a.read(off, old.get_mut(..size.min(8)).unwrap_or(&mut []), Ordering::SeqCst);
        let old = u64::from_le_bytes(old);
        let new = op(old).to_le_bytes();
        a.write(off, new.get(..size.min(8)).unwrap_or(&[]), Ordering::SeqCst);
        Ok(old)
    }
    fn read_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, out: &mut [u64; 32]) -> Result<(), BadAddress> {
        if let Some(a) = self.span_of_words(addrs, mask, size) {
            for (o, &addr) in out.iter_mut().zip(addrs) {
                let word = usize::try_from((addr - a.base) / 4).ok().and_then(|w| a.words.get(w));
                *o = word.map_or(0, |w| u64::from(w.load(Ordering::Relaxed)));
            }
            return Ok(());
        }
        let mut hit: Option<&Alloc> = None;
        for (lane, (&addr, o)) in addrs.iter().zip(out.iter_mut()).enumerate() {
            if mask & (1 << lane) == 0 {
                continue;
            }
            let (a, off) = self.find_near(hit, addr, size).ok_or(BadAddress { addr })?;
            hit = Some(a);
            let mut b = [0u8; 8];
            a.read(off, b.get_mut(..size.min(8)).unwrap_or(&mut []), Ordering::Relaxed);
            *o = u64::from_le_bytes(b);
        }
        Ok(())
    }
    fn write_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, data: &[u64; 32]) -> Result<(), BadAddress> {
        // In lane order: of two lanes storing to one word, the later one's value stays.
        if let Some(a) = self.span_of_words(addrs, mask, size) {
            for (v, &addr) in data.iter().zip(addrs) {
                if let Some(w) = usize::try_from((addr - a.base) / 4).ok().and_then(|w| a.words.get(w)) {
                    w.store(*v as u32, Ordering::Relaxed);
                }
            }
            return Ok(());
        }
        let mut hit: Option<&Alloc> = None;
        for (lane, (&addr, v)) in addrs.iter().zip(data).enumerate() {
            if mask & (1 << lane) == 0 {
                continue;
            }
            let (a, off) = self.find_near(hit, addr, size).ok_or(BadAddress { addr })?;
            hit = Some(a);
            a.write(off, v.to_le_bytes().get(..size.min(8)).unwrap_or(&[]), Ordering::Relaxed);
        }
        Ok(())
    }
    fn windows(&self) -> Option<&dyn Windows> {
        Some(self)
    }
    fn printf(&self, text: &str) {
        if let Ok(mut p) = self.printed.lock() {
            if let Some(s) = p.as_mut() {
                s.push_str(text);
                return;
            }
        }
        print!("{text}");
    }
}

// SAFETY: an allocation's words live as long as the `HostMemory`, which a launch borrows
// for its whole length (allocations are only added, through `&mut self`); its words are
// only ever accessed atomically.
unsafe impl Windows for HostMemory {
    fn window(&self, addr: u64, len: u64) -> Option<std::ptr::NonNull<u8>> {
        let (a, off) = self.find(addr, usize::try_from(len).ok()?)?;
        let words = std::ptr::NonNull::new(a.words.as_ptr().cast_mut())?;
        // SAFETY: `off + len <= a.size <= 4 * words.len()`: inside the words' allocation.
        Some(unsafe { words.cast::<u8>().add(off) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accesses of every size at every offset (within a word, across words, past the end)
    /// read back what was written and leave the neighbouring bytes alone.
    #[test]
    fn host_memory_bytes_round_trip() {
        let mut mem = HostMemory::new();
        let pattern: Vec<u8> = (0..40u8).collect();
        let base = mem.alloc_from(&pattern);
        for len in 1..=17usize {
            for off in 0..(40 - len) {
                let data: Vec<u8> = (0..len).map(|i| 0xa0 ^ (i as u8) ^ (off as u8)).collect();
                assert_eq!(mem.write(base + off as u64, &data), Ok(()));
                assert_eq!(mem.bytes(base + off as u64, len), Some(data.clone()));
                let mut expect = pattern.clone();
                if let Some(d) = expect.get_mut(off..off + len) {
                    d.copy_from_slice(&data);
                }
                assert_eq!(mem.bytes(base, 40), Some(expect));
                assert_eq!(mem.write(base, &pattern), Ok(()));
            }
            let end = base + 40 - len as u64 + 1;
            assert_eq!(mem.write(end, &vec![0; len]), Err(BadAddress { addr: end }));
            assert_eq!(mem.bytes(end, len), None);
        }
        assert_eq!(mem.atomic(base + 4, 4, &mut |v| v + 1), Ok(0x0706_0504));
        assert_eq!(mem.write(base + 4, &[4]), Ok(()));
        assert_eq!(mem.bytes(base + 3, 3), Some(vec![3, 4, 5]));
    }

    /// A whole warp's consecutive words (the one-look-up path) read and write what lane-by-lane
    /// accesses do; the same run ending past the allocation faults at its first lane outside,
    /// the lanes before it done.
    #[test]
    fn host_memory_consecutive_words() {
        let mut mem = HostMemory::new();
        let x = mem.alloc_from(&(0..=255u8).collect::<Vec<u8>>());
        let addrs: [u64; 32] = std::array::from_fn(|l| x + 64 + 4 * l as u64);
        let mut out = [0u64; 32];
        assert_eq!(mem.read_lanes(&addrs, u32::MAX, 4, &mut out), Ok(()));
        for (&a, &v) in addrs.iter().zip(&out) {
            assert_eq!(Some(v.to_le_bytes()[..4].to_vec()), mem.bytes(a, 4));
        }
        let data: [u64; 32] = std::array::from_fn(|l| 0x1_0000_0000 + 0x0101_0101 * l as u64);
        assert_eq!(mem.write_lanes(&addrs, u32::MAX, 4, &data), Ok(()));
        assert_eq!(mem.bytes(x + 64 + 4 * 3, 4), Some(vec![3, 3, 3, 3]));
        assert_eq!(mem.bytes(x + 60, 4), Some(vec![60, 61, 62, 63]));
        let late: [u64; 32] = std::array::from_fn(|l| x + 160 + 4 * l as u64);
        assert_eq!(mem.write_lanes(&late, u32::MAX, 4, &data), Err(BadAddress { addr: x + 256 }));
        assert_eq!(mem.bytes(x + 252, 4), Some(vec![23, 23, 23, 23]));
        let mut out = [7u64; 32];
        assert_eq!(mem.read_lanes(&late, u32::MAX, 4, &mut out), Err(BadAddress { addr: x + 256 }));
        assert_eq!((out.get(23), out.get(24)), (Some(&0x1717_1717), Some(&7)));
    }

    /// A whole warp's aligned words of one allocation in other shapes than a run (the
    /// one-look-up path): two half-warp rows, a broadcast, lanes storing to one word (the
    /// last lane's value stays); a span reaching past the allocation goes lane by lane and
    /// faults at its first lane outside.
    #[test]
    fn host_memory_span_of_words() {
        let mut mem = HostMemory::new();
        let x = mem.alloc_from(&(0..=255u8).collect::<Vec<u8>>());
        let word = |a: u64| {
            mem.bytes(a, 4).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(|b| u64::from(u32::from_le_bytes(b)))
        };
        let halves: [u64; 32] = std::array::from_fn(|l| x + 128 * (l as u64 / 16) + 4 * (l as u64 % 16));
        let broadcast = [x + 8; 32];
        for addrs in [halves, broadcast] {
            let mut out = [7u64; 32];
            assert_eq!(mem.read_lanes(&addrs, u32::MAX, 4, &mut out), Ok(()));
            for (&a, &v) in addrs.iter().zip(&out) {
                assert_eq!(Some(v), word(a));
            }
        }
        let data: [u64; 32] = std::array::from_fn(|l| 0x100 + l as u64);
        assert_eq!(mem.write_lanes(&broadcast, u32::MAX, 4, &data), Ok(()));
        assert_eq!(word(x + 8), Some(0x11f));
        let mut past = halves;
        past[20] = x + 256;
        let mut out = [7u64; 32];
        assert_eq!(mem.read_lanes(&past, u32::MAX, 4, &mut out), Err(BadAddress { addr: x + 256 }));
        assert_eq!(mem.write_lanes(&past, u32::MAX, 4, &data), Err(BadAddress { addr: x + 256 }));
        assert_eq!(word(x + 128 + 12), Some(0x113));
        assert_eq!(word(x + 128 + 20), Some(0x9796_9594));
    }

    /// A warp's accesses over two allocations match lane-by-lane ones; the first lane
    /// outside every allocation stops the warp there, the lanes before it done.
    #[test]
    fn host_memory_lanes() {
        let mut mem = HostMemory::new();
        let x = mem.alloc_from(&(0..64u8).collect::<Vec<u8>>());
        let y = mem.alloc_from(&(100..164u8).collect::<Vec<u8>>());
        let addrs: [u64; 32] = std::array::from_fn(|l| if l % 3 == 0 { y + 2 * l as u64 } else { x + 2 * l as u64 });
        let mut out = [7u64; 32];
        assert_eq!(mem.read_lanes(&addrs, 0xffff_fffe, 2, &mut out), Ok(()));
        for (lane, (&a, &v)) in addrs.iter().zip(&out).enumerate() {
            let want = if lane == 0 {
                Some(7)
            } else {
                mem.bytes(a, 2).and_then(|b| b.try_into().ok()).map(|b: [u8; 2]| u64::from(u16::from_le_bytes(b)))
            };
            assert_eq!(Some(v), want, "lane {lane}");
        }
        let data: [u64; 32] = std::array::from_fn(|l| 0xab00 + l as u64);
        let mut bad = addrs;
        if let Some(b) = bad.get_mut(5) {
            *b = x + 63;
        }
        assert_eq!(mem.write_lanes(&bad, u32::MAX, 2, &data), Err(BadAddress { addr: x + 63 }));
        assert_eq!(mem.bytes(x + 8, 2), Some(vec![4, 0xab]));
        assert_eq!(mem.bytes(y + 12, 2), Some(vec![112, 113]));
    }
}
