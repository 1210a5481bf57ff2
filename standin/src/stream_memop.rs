//! Stream memory operations: `cuStreamWriteValue32/64`, `cuStreamWaitValue32/64` and
//! `cuStreamBatchMemOp` (waits, writes, flushes, barriers and, from 13.0, atomic
//! reductions), in stream order (`model/stream.rs`).
//!
//! A write is device work: done at once on the calling thread when the stream is idle,
//! else queued. A wait is always queued on the stream's driver thread, never done on the
//! calling thread: it holds the stream's later work back until the memory satisfies its
//! condition (written by another stream, a kernel, or the host through mapped memory), as
//! on a GPU, without blocking the thread that queued it. A wait that never becomes true
//! holds its stream forever on a GPU (a synchronisation then never returns); on the
//! stand-in it gives up after [`WAIT_LIMIT`], leaving the context sticky-failed with
//! CUDA_ERROR_LAUNCH_TIMEOUT, so that a test that waits wrongly fails instead of hanging
//! (a deliberate difference, docs/stand-in.md).
//!
//! Checked when the call is made: the flags, the address (live device memory, or mapped
//! host memory; aligned to the value's size), and for a batch the count (at most 256) and
//! each operation: CUDA_ERROR_INVALID_VALUE. On a capturing stream the operations are
//! recorded as one batch memory operation node (`graph_memop.rs`), as the H100's driver
//! 580.159.04 records a `cuStreamWriteValue32` (recording 2026-12-05,
//! `stream_memop.write_in_capture`: one node).

use std::ffi::c_uint;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudrv::sys::*;

use crate::entry::status;
use crate::model::context::Context;
use crate::model::graph::{MemOpNode, Node};
use crate::run::lock::lock;
use crate::world::World;
use crate::{capture, stream};

/// How long a wait may hold its stream before it gives up.
pub(crate) const WAIT_LIMIT: Duration = Duration::from_secs(60);

/// The most operations one `cuStreamBatchMemOp` takes.
const MAX_BATCH: c_uint = 255;

/// `CU_STREAM_WAIT_VALUE_FLUSH`.
const WAIT_FLUSH: c_uint = CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_FLUSH.0;

/// A wait's condition (`CUstreamWaitValue_flags`, without FLUSH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    /// `(int)(*addr - value) >= 0` (cyclic).
    Geq,
    Eq,
    /// `(*addr & value) != 0`.
    And,
    /// `~(*addr | value) != 0`.
    Nor,
}

/// One memory operation, checked.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Waits until the value (`wide`: 64 bits) at `addr` satisfies `cond` against `value`.
    Wait { addr: u64, value: u64, wide: bool, cond: Cond },
    /// Writes `value` (`wide`: 64 bits) at `addr`.
    Write { addr: u64, value: u64, wide: bool },
    /// Adds, ands or ors `value` into the value at `addr`.
    Reduce { addr: u64, value: u64, wide: bool, op: Reduction },
    /// A flush or a barrier: nothing to do (host memory is coherent).
    Fence,
}

/// An atomic reduction (`CUstreamAtomicReductionOpType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reduction {
    Add,
    And,
    Or,
}

impl Cond {
    /// The condition of wait flags (FLUSH allowed), or CUDA_ERROR_INVALID_VALUE.
    fn of(flags: c_uint) -> Result<Cond, CUresult> {
        match flags & !WAIT_FLUSH {
            0 => Ok(Cond::Geq),
            1 => Ok(Cond::Eq),
            2 => Ok(Cond::And),
            3 => Ok(Cond::Nor),
            _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    }

    /// Whether `now` satisfies it against `value`, both `wide` (64 bits) or 32 bits.
    fn holds(self, now: u64, value: u64, wide: bool) -> bool {
        let mask = if wide { u64::MAX } else { u64::from(u32::MAX) };
        let (now, value) = (now & mask, value & mask);
        match self {
            Cond::Geq if wide => (now.wrapping_sub(value) as i64) >= 0,
            Cond::Geq => (now.wrapping_sub(value) as u32 as i32) >= 0,
            Cond::Eq => now == value,
            Cond::And => now & value != 0,
            Cond::Nor => !(now | value) & mask != 0,
        }
    }
}

/// The size of a value: 8 bytes if `wide`, else 4.
fn size(wide: bool) -> usize {
    if wide {
        8
    } else {
        4
    }
}

/// CUDA_ERROR_INVALID_VALUE unless `addr` is aligned to the value and its bytes are live
/// memory a device address reaches.
fn check_addr(w: &World, addr: u64, wide: bool) -> Result<(), CUresult> {
    if addr % size(wide) as u64 != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    lock(&w.memory).check_device(addr, size(wide))
}

/// Reads the value at `addr`.
fn read(w: &World, addr: u64, wide: bool) -> Result<u64, CUresult> {
    let mut b = [0u8; 8];
    lock(&w.memory).copy_to_host(b.as_mut_ptr(), addr, size(wide))?;
    Ok(u64::from_le_bytes(b))
}

/// Writes `value` at `addr`.
fn write(w: &World, addr: u64, value: u64, wide: bool) -> Result<(), CUresult> {
    let b = value.to_le_bytes();
    lock(&w.memory).copy_to_device(addr, b.as_ptr(), size(wide))
}

/// Does `op` now (a wait: until it holds, or [`WAIT_LIMIT`] passes:
/// CUDA_ERROR_LAUNCH_TIMEOUT).
fn run(w: &World, op: Op) -> Result<(), CUresult> {
    match op {
        Op::Write { addr, value, wide } => write(w, addr, value, wide),
        Op::Reduce { addr, value, wide, op } => {
            // The whole read-modify-write under the memory lock: atomic to other work.
            let mut m = lock(&w.memory);
            let mut b = [0u8; 8];
            m.copy_to_host(b.as_mut_ptr(), addr, size(wide))?;
            let now = u64::from_le_bytes(b);
            let new = match op {
                Reduction::Add => now.wrapping_add(value),
                Reduction::And => now & value,
                Reduction::Or => now | value,
            };
            m.copy_to_device(addr, new.to_le_bytes().as_ptr(), size(wide))
        }
        Op::Fence => Ok(()),
        Op::Wait { addr, value, wide, cond } => {
            let start = Instant::now();
            let mut pause = Duration::from_micros(20);
            loop {
                if cond.holds(read(w, addr, wide)?, value, wide) {
                    return Ok(());
                }
                if start.elapsed() >= WAIT_LIMIT {
                    return Err(CUresult::CUDA_ERROR_LAUNCH_TIMEOUT);
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(1));
            }
        }
    }
}

/// Queues `ops` on `s` in stream order: on a capturing stream recorded as a batch memory
/// operation node of `raw` (the operations as the program gave them), else done at once
/// if they are writes only and the stream is idle, else queued on its driver thread (a
/// failure there leaves the context sticky-failed: a memory that went away
/// CUDA_ERROR_ILLEGAL_ADDRESS).
fn enqueue(w: &World, s: CUstream, ops: Vec<Op>, raw: Vec<CUstreamBatchMemOpParams>) -> Result<(), CUresult> {
    let t = stream::resolve(w, s)?;
    let node = Node::BatchMemOp(MemOpNode { ctx: t.ctx.handle, ops: raw, flags: 0 });
    if capture::record(w, s, node)?.is_none() {
        return Ok(());
    }
    // Queued work outlives the call: it holds the world by its slot.
    let w: &'static World = World::of(w.slot()).unwrap_or(World::at::<0>());
    // The sanitizer does not follow memory operations' values: their writes may be
    // anything, and a wait may be for any work issued before it.
    w.sanitizer.unknown_writes();
    if ops.iter().any(|op| matches!(op, Op::Wait { .. })) {
        w.sanitizer.wait_for_anything(&t, crate::entry::from_ptr(s));
    }
    if !ops.iter().any(|op| matches!(op, Op::Wait { .. })) {
        return t.submit(move || ops.iter().try_for_each(|&op| run(w, op))).map(drop);
    }
    let ctx: Arc<Context> = Arc::clone(&t.ctx);
    t.push(Box::new(move || {
        if let Err(e) = ops.iter().try_for_each(|&op| run(w, op)) {
            ctx.make_sticky(match e {
                CUresult::CUDA_ERROR_INVALID_VALUE => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
                e => e,
            });
        }
    }))
    .map(drop)
}

/// A wait as a batch operation (`cuStreamWaitValue*` recorded in a capture).
fn raw_wait(addr: CUdeviceptr, value: u64, flags: c_uint, wide: bool) -> CUstreamBatchMemOpParams {
    type T = CUstreamBatchMemOpType;
    let mut p = CUstreamBatchMemOpParams::default();
    p.waitValue.operation = if wide { T::CU_STREAM_MEM_OP_WAIT_VALUE_64 } else { T::CU_STREAM_MEM_OP_WAIT_VALUE_32 };
    p.waitValue.address = addr;
    p.waitValue.__bindgen_anon_1.value64 = value;
    p.waitValue.flags = flags;
    p
}

/// A write as a batch operation (`cuStreamWriteValue*` recorded in a capture).
fn raw_write(addr: CUdeviceptr, value: u64, flags: c_uint, wide: bool) -> CUstreamBatchMemOpParams {
    type T = CUstreamBatchMemOpType;
    let mut p = CUstreamBatchMemOpParams::default();
    p.writeValue.operation = if wide { T::CU_STREAM_MEM_OP_WRITE_VALUE_64 } else { T::CU_STREAM_MEM_OP_WRITE_VALUE_32 };
    p.writeValue.address = addr;
    p.writeValue.__bindgen_anon_1.value64 = value;
    p.writeValue.flags = flags;
    p
}

fn wait_op(w: &World, addr: CUdeviceptr, value: u64, flags: c_uint, wide: bool) -> Result<Op, CUresult> {
    let cond = Cond::of(flags)?;
    // The H200 does not flush remote writes before a wait (conformance stream_memop.*).
    if flags & WAIT_FLUSH != 0 {
        return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
    check_addr(w, addr, wide)?;
    Ok(Op::Wait { addr, value, wide, cond })
}

fn write_op(w: &World, addr: CUdeviceptr, value: u64, flags: c_uint, wide: bool) -> Result<Op, CUresult> {
    // The H200 refuses NO_MEMORY_BARRIER too (conformance stream_memop.*).
    if flags != 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    check_addr(w, addr, wide)?;
    Ok(Op::Write { addr, value, wide })
}

/// `cuStreamWaitValue32`: later work on `s` waits until the 32-bit value at `addr`
/// satisfies the condition of `flags` against `value`.
pub(crate) unsafe fn cu_stream_wait_value32(
    w: &World,
    s: CUstream,
    addr: CUdeviceptr,
    value: cuuint32_t,
    flags: c_uint,
) -> CUresult {
    let raw = raw_wait(addr, u64::from(value), flags, false);
    status(wait_op(w, addr, u64::from(value), flags, false).and_then(|op| enqueue(w, s, vec![op], vec![raw])))
}

/// `cuStreamWaitValue64`: as [`cu_stream_wait_value32`], of a 64-bit value.
pub(crate) unsafe fn cu_stream_wait_value64(
    w: &World,
    s: CUstream,
    addr: CUdeviceptr,
    value: cuuint64_t,
    flags: c_uint,
) -> CUresult {
    let raw = raw_wait(addr, value, flags, true);
    status(wait_op(w, addr, value, flags, true).and_then(|op| enqueue(w, s, vec![op], vec![raw])))
}

/// `cuStreamWriteValue32`: writes `value` at `addr` in stream order.
pub(crate) unsafe fn cu_stream_write_value32(
    w: &World,
    s: CUstream,
    addr: CUdeviceptr,
    value: cuuint32_t,
    flags: c_uint,
) -> CUresult {
    let raw = raw_write(addr, u64::from(value), flags, false);
    status(write_op(w, addr, u64::from(value), flags, false).and_then(|op| enqueue(w, s, vec![op], vec![raw])))
}

/// `cuStreamWriteValue64`: as [`cu_stream_write_value32`], of a 64-bit value.
pub(crate) unsafe fn cu_stream_write_value64(
    w: &World,
    s: CUstream,
    addr: CUdeviceptr,
    value: cuuint64_t,
    flags: c_uint,
) -> CUresult {
    let raw = raw_write(addr, value, flags, true);
    status(write_op(w, addr, value, flags, true).and_then(|op| enqueue(w, s, vec![op], vec![raw])))
}

/// One operation of a batch, checked.
fn batch_op(w: &World, p: &CUstreamBatchMemOpParams) -> Result<Op, CUresult> {
    type T = CUstreamBatchMemOpType;
    // SAFETY: every member starts with the operation; plain data.
    let operation = unsafe { p.operation };
    match operation {
        T::CU_STREAM_MEM_OP_WAIT_VALUE_32 | T::CU_STREAM_MEM_OP_WAIT_VALUE_64 => {
            // SAFETY: the member of a wait; plain data, any bits valid.
            let v = unsafe { p.waitValue };
            let wide = operation == T::CU_STREAM_MEM_OP_WAIT_VALUE_64;
            // SAFETY: the value member of its width (the low 32 bits of the 64-bit one).
            let value = unsafe { v.__bindgen_anon_1.value64 };
            wait_op(w, v.address, if wide { value } else { value & u64::from(u32::MAX) }, v.flags, wide)
        }
        T::CU_STREAM_MEM_OP_WRITE_VALUE_32 | T::CU_STREAM_MEM_OP_WRITE_VALUE_64 => {
            // SAFETY: the member of a write; plain data, any bits valid.
            let v = unsafe { p.writeValue };
            let wide = operation == T::CU_STREAM_MEM_OP_WRITE_VALUE_64;
            // SAFETY: as for a wait.
            let value = unsafe { v.__bindgen_anon_1.value64 };
            write_op(w, v.address, if wide { value } else { value & u64::from(u32::MAX) }, v.flags, wide)
        }
        T::CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES => {
            // SAFETY: the member of a flush; plain data.
            match unsafe { p.flushRemoteWrites }.flags {
                0 => Ok(Op::Fence),
                _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            }
        }
        T::CU_STREAM_MEM_OP_BARRIER => {
            // SAFETY: the member of a barrier; plain data.
            match unsafe { p.memoryBarrier }.flags {
                0 | 1 => Ok(Op::Fence),
                _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            }
        }
        T::CU_STREAM_MEM_OP_ATOMIC_REDUCTION => {
            // SAFETY: the member of a reduction; plain data.
            let r = unsafe { p.atomicReduction };
            type R = CUstreamAtomicReductionOpType;
            type D = CUstreamAtomicReductionDataType;
            let op = match r.reductionOp {
                R::CU_STREAM_ATOMIC_REDUCTION_OP_ADD => Reduction::Add,
                R::CU_STREAM_ATOMIC_REDUCTION_OP_AND => Reduction::And,
                R::CU_STREAM_ATOMIC_REDUCTION_OP_OR => Reduction::Or,
                _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            };
            let wide = match r.dataType {
                D::CU_STREAM_ATOMIC_REDUCTION_UNSIGNED_32 => false,
                D::CU_STREAM_ATOMIC_REDUCTION_UNSIGNED_64 => true,
                _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            };
            if r.flags != 0 {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            check_addr(w, r.address, wide)?;
            let value = if wide { r.value } else { r.value & u64::from(u32::MAX) };
            Ok(Op::Reduce { addr: r.address, value, wide, op })
        }
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

fn batch(
    w: &World,
    s: CUstream,
    count: c_uint,
    params: *mut CUstreamBatchMemOpParams,
    flags: c_uint,
) -> Result<(), CUresult> {
    if flags != 0 || count > MAX_BATCH || (count > 0 && params.is_null()) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let raw = if count == 0 {
        Vec::new()
    } else {
        // SAFETY: the program passes `count` operations at a non-null `params`.
        unsafe { std::slice::from_raw_parts(params, count as usize) }.to_vec()
    };
    let ops = raw.iter().map(|p| batch_op(w, p)).collect::<Result<Vec<Op>, CUresult>>()?;
    enqueue(w, s, ops, raw)
}

/// Checks the operations of a batch memory operation node (`graph_memop.rs`) as
/// `cuStreamBatchMemOp` checks its own.
pub(crate) fn check_params(w: &World, params: &[CUstreamBatchMemOpParams]) -> Result<(), CUresult> {
    params.iter().try_for_each(|p| batch_op(w, p).map(drop))
}

/// Runs the operations of a batch memory operation node in order, at its graph's launch
/// (checked again: the memory may have gone since).
pub(crate) fn run_params(w: &World, params: &[CUstreamBatchMemOpParams]) -> Result<(), CUresult> {
    params.iter().try_for_each(|p| run(w, batch_op(w, p)?))
}

/// The first ABI of the stream memory operations (8.0 and 9.0): CUDA_ERROR_NOT_SUPPORTED,
/// as a 13.0 driver answers it.
pub(crate) unsafe fn cu_stream_mem_op_v1<V>(
    _w: &World,
    _s: CUstream,
    _addr: CUdeviceptr,
    _v: V,
    _f: c_uint,
) -> CUresult {
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// The first ABI of `cuStreamBatchMemOp` (8.0): CUDA_ERROR_NOT_SUPPORTED, as a 13.0
/// driver answers it.
pub(crate) unsafe fn cu_stream_batch_mem_op_v1(
    _w: &World,
    _s: CUstream,
    _count: c_uint,
    _params: *mut CUstreamBatchMemOpParams,
    _flags: c_uint,
) -> CUresult {
    CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// `cuStreamBatchMemOp`: the `count` operations in order, as one piece of stream work (a
/// wait holds back the operations after it). Flags other than 0, more than 256
/// operations, or an operation that is none of the header's (or whose own flags are):
/// CUDA_ERROR_INVALID_VALUE, nothing queued.
pub(crate) unsafe fn cu_stream_batch_mem_op(
    w: &World,
    s: CUstream,
    count: c_uint,
    params: *mut CUstreamBatchMemOpParams,
    flags: c_uint,
) -> CUresult {
    status(batch(w, s, count, params, flags))
}

#[cfg(test)]
mod tests {
    use super::Cond;

    #[test]
    fn conditions_compare_as_the_header_says() {
        // GEQ is cyclic: 0 is "after" 0xFFFF_FFFF in 32 bits.
        assert!(Cond::Geq.holds(5, 5, false));
        assert!(!Cond::Geq.holds(4, 5, false));
        assert!(Cond::Geq.holds(0, 0xFFFF_FFFF, false));
        assert!(!Cond::Geq.holds(0xFFFF_FFFF, 0, false));
        assert!(Cond::Geq.holds(0, u64::MAX, true));
        // Only the low 32 bits count for a 32-bit wait.
        assert!(Cond::Eq.holds(0x1_0000_0007, 7, false));
        assert!(!Cond::Eq.holds(0x1_0000_0007, 7, true));
        assert!(Cond::And.holds(0b0110, 0b0100, false));
        assert!(!Cond::And.holds(0b0010, 0b0100, false));
        // NOR: some bit clear in both.
        assert!(Cond::Nor.holds(0, 0, false));
        assert!(!Cond::Nor.holds(0xFFFF_0000, 0x0000_FFFF, false));
        assert!(Cond::Nor.holds(0xFFFF_0000, 0x0000_FFFF, true));
    }

    #[test]
    fn a_wait_accepts_the_flush_flag_and_refuses_unknown_conditions() {
        assert_eq!(Cond::of(1 | super::WAIT_FLUSH), Ok(Cond::Eq));
        assert!(Cond::of(4).is_err());
        assert!(Cond::of(1 << 29).is_err());
    }
}
