//! Global memory that records where a kernel reads and writes: the executor's memory of a
//! sanitized launch (`sanitize/`), wrapped around the checked memory of `run/ptx.rs`.
//! Atomics are not recorded (concurrent atomics are not races); texture reads neither.

use std::sync::Mutex;

use cudrv_ptx::{BadAddress, GlobalMemory};

use crate::run::footprint::Footprint;
use crate::run::lock::lock;

/// `inner`, with every plain load and store it does added to `fp`.
pub(crate) struct Recorded<'a> {
    pub(crate) inner: &'a dyn GlobalMemory,
    pub(crate) fp: &'a Mutex<Footprint>,
}

/// Adds each lane's `size` bytes of `mask`'s lanes of `addrs`.
fn lanes(into: &mut crate::run::footprint::Ranges, addrs: &[u64; 32], mask: u32, size: usize) {
    for (lane, &a) in addrs.iter().enumerate() {
        if mask & (1 << lane) != 0 {
            into.push(a, size as u64);
        }
    }
}

impl GlobalMemory for Recorded<'_> {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), BadAddress> {
        self.inner.read(addr, out)?;
        lock(self.fp).reads.push(addr, out.len() as u64);
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), BadAddress> {
        self.inner.write(addr, data)?;
        lock(self.fp).writes.push(addr, data.len() as u64);
        Ok(())
    }

    fn atomic(&self, addr: u64, size: usize, op: &mut dyn FnMut(u64) -> u64) -> Result<u64, BadAddress> {
        self.inner.atomic(addr, size, op)
    }

    fn read_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, out: &mut [u64; 32]) -> Result<(), BadAddress> {
        self.inner.read_lanes(addrs, mask, size, out)?;
        lanes(&mut lock(self.fp).reads, addrs, mask, size.min(8));
        Ok(())
    }

    fn write_lanes(&self, addrs: &[u64; 32], mask: u32, size: usize, data: &[u64; 32]) -> Result<(), BadAddress> {
        self.inner.write_lanes(addrs, mask, size, data)?;
        lanes(&mut lock(self.fp).writes, addrs, mask, size.min(8));
        Ok(())
    }

    fn texture(&self, handle: u64) -> Option<cudrv_ptx::Texture> {
        self.inner.texture(handle)
    }

    fn stack_limit(&self) -> u64 {
        self.inner.stack_limit()
    }

    fn printf(&self, text: &str) {
        self.inner.printf(text)
    }
}
