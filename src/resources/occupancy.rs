//! Occupancy: how many blocks of a function fit on a multiprocessor
//! (`cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`), the block size that fits
//! most (`cuOccupancyMaxPotentialBlockSizeWithFlags`, with a Rust closure for the dynamic
//! shared memory a block size needs), the dynamic shared memory left per block
//! (`cuOccupancyAvailableDynamicSMemPerBlock`) and, for cluster launches, the clusters
//! that fit (`cuOccupancyMaxActiveClusters`, `cuOccupancyMaxPotentialClusterSize`).
//!
//! The driver calls the block-size callback (`size_t (*)(int blockSize)`) without any
//! user pointer, during the query, on the calling thread. cudrv's one trampoline finds
//! the closure in a list of the queries now running, by thread (innermost last), so a
//! query made inside another's closure finds its own; nothing is held locked while the
//! closure runs. A panic in the closure is caught: the driver gets 0 for that and every
//! later call, and the query returns an [`InvalidArgument`] with the panic's message.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use crate::error::{CudaError, Error, InvalidArgument};
use crate::report::panic_message;
use crate::resources::context::Context;
use crate::resources::flags::OccupancyFlags;
use crate::resources::launch::{Launch, LaunchConfig};
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::sys::{CUfunc_st, CUfunction};
use crate::typed::Live;

/// The block size that gives the most occupancy, and the grid that fills the device with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PotentialBlockSize {
    /// Threads per block.
    pub block_size: u32,
    /// The fewest blocks that reach the most occupancy over the whole device.
    pub min_grid_size: u32,
}

/// A closure for the dynamic shared memory a block size needs, while its query runs.
struct Query<'f> {
    f: &'f dyn Fn(u32) -> usize,
    panicked: RefCell<Option<String>>,
    calls: Cell<u32>,
}

/// The queries now running with a closure: (thread, address of its `Query`), innermost
/// last. A list keyed by thread, not thread-local state (DESIGN.md).
static QUERIES: Mutex<Vec<(ThreadId, usize)>> = Mutex::new(Vec::new());

fn queries() -> MutexGuard<'static, Vec<(ThreadId, usize)>> {
    QUERIES.lock().unwrap_or_else(|e| e.into_inner())
}

fn this_thread() -> Option<ThreadId> {
    catch_unwind(|| std::thread::current().id()).ok()
}

/// Lists a query for the calling thread until dropped (also on unwind).
struct Listed(ThreadId, usize);

impl Drop for Listed {
    fn drop(&mut self) {
        let mut now = queries();
        if let Some(at) = now.iter().rposition(|e| *e == (self.0, self.1)) {
            now.remove(at);
        }
    }
}

/// The callback the driver calls: finds the calling thread's innermost query and runs
/// its closure, catching a panic (then 0, for this and every later call).
unsafe extern "C" fn dynamic_smem_trampoline(block_size: c_int) -> usize {
    let Some(id) = this_thread() else { return 0 };
    // The lock is released at the end of this statement, before any user code runs.
    let found = queries().iter().rev().find(|(t, _)| *t == id).map(|(_, a)| *a);
    let Some(address) = found else { return 0 };
    // SAFETY: the address is of a `Query` on the stack of the query running on this
    // thread, listed only while that query's driver call runs (`Listed`).
    let query = unsafe { &*(address as *const Query<'static>) };
    if query.panicked.borrow().is_some() {
        return 0;
    }
    query.calls.set(query.calls.get().saturating_add(1));
    let block_size = u32::try_from(block_size).unwrap_or(0);
    match catch_unwind(AssertUnwindSafe(|| (query.f)(block_size))) {
        Ok(bytes) => bytes,
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            std::mem::forget(payload);
            *query.panicked.borrow_mut() = Some(message);
            0
        }
    }
}

#[inline(always)]
fn int(what: &'static str, name: &'static str, v: u32) -> Result<c_int, InvalidArgument> {
    match c_int::try_from(v) {
        Ok(i) => Ok(i),
        Err(_) => Err(too_large(what, name, v)),
    }
}

/// The error of [`int`], out of line (so that the check is inlined).
#[cold]
fn too_large(what: &'static str, name: &'static str, v: u32) -> InvalidArgument {
    InvalidArgument::new(what, format!("{name} {v} is larger than the driver's int"))
}

fn count(v: c_int) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// A function (or a kernel in a context) and the context its queries run in.
struct Target<'a> {
    raw: Live<'a, CUfunction>,
    context: &'a Context,
}

impl Target<'_> {
    /// Runs the query `op` with the target's context current ([`Context::run`]: one
    /// `cuCtxGetCurrent`, and a switch only if another context is current). Driver 580
    /// answers these three queries `CUDA_ERROR_INVALID_CONTEXT` with no context current
    /// (docs/driver-facts.md); trying first and retrying in the context would be faster
    /// where one is current, but the refused try is an API error that compute-sanitizer
    /// reports in the caller's program.
    #[inline(always)]
    fn run<T>(&self, op: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
        self.context.run_raw(op)
    }

    #[inline(always)]
    fn max_active_blocks(&self, block_size: u32, smem: usize, flags: OccupancyFlags) -> Result<u32, Error> {
        let what = "max_active_blocks_per_multiprocessor";
        let (t, b) = (self.context.driver().typed(), int(what, "block size", block_size)?);
        let blocks =
            self.run(|| t.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(self.raw, b, smem, flags.bits()))?;
        Ok(count(blocks))
    }

    fn potential_block_size(
        &self,
        smem: Option<&dyn Fn(u32) -> usize>,
        fixed: usize,
        limit: u32,
        flags: OccupancyFlags,
    ) -> Result<PotentialBlockSize, Error> {
        let what = "max_potential_block_size";
        let (pc, f, limit, flags) =
            (self.context.driver().pc(), self.raw.raw(), int(what, "block size limit", limit)?, flags.bits());
        let (mut grid, mut block): (c_int, c_int) = (0, 0);
        let Some(smem) = smem else {
            // SAFETY: a live function and valid out-pointers; no callback.
            self.run(|| unsafe {
                pc.cuOccupancyMaxPotentialBlockSizeWithFlags(&mut grid, &mut block, f, None, fixed, limit, flags)
            })?;
            return Ok(PotentialBlockSize { block_size: count(block), min_grid_size: count(grid) });
        };
        let id = this_thread()
            .ok_or_else(|| InvalidArgument::new(what, "the calling thread has no identity (it is being torn down)"))?;
        let query = Query { f: smem, panicked: RefCell::new(None), calls: Cell::new(0) };
        let address = &query as *const Query<'_> as usize;
        queries().push((id, address));
        let listed = Listed(id, address);
        let callback = Some(dynamic_smem_trampoline as unsafe extern "C" fn(c_int) -> usize);
        // SAFETY: a live function and valid out-pointers; the trampoline finds `query`,
        // listed until the call returns.
        let result = self.run(|| unsafe {
            pc.cuOccupancyMaxPotentialBlockSizeWithFlags(&mut grid, &mut block, f, callback, 0, limit, flags)
        });
        drop(listed);
        if let Some(message) = query.panicked.into_inner() {
            let why = format!("the dynamic shared memory closure panicked: {message}");
            return Err(InvalidArgument::new(what, why).into());
        }
        result?;
        Ok(PotentialBlockSize { block_size: count(block), min_grid_size: count(grid) })
    }

    fn available_dynamic_smem(&self, blocks: u32, block_size: u32) -> Result<usize, Error> {
        let what = "available_dynamic_shared_memory_per_block";
        let (pc, f) = (self.context.driver().pc(), self.raw.raw());
        let (n, b) = (int(what, "block count", blocks)?, int(what, "block size", block_size)?);
        let mut bytes = 0usize;
        // SAFETY: a live function and a valid out-pointer.
        self.run(|| unsafe { pc.cuOccupancyAvailableDynamicSMemPerBlock(&mut bytes, f, n, b) })?;
        Ok(bytes)
    }
}

impl Function {
    #[inline(always)]
    fn target(&self) -> Target<'_> {
        Target { raw: self.live(), context: self.module().context() }
    }

    /// How many blocks of `block_size` threads, each with `dynamic_smem_bytes` of dynamic
    /// shared memory, fit on one multiprocessor at once
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags`).
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: u32,
        dynamic_smem_bytes: usize,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<u32, Error> {
        self.target().max_active_blocks(block_size, dynamic_smem_bytes, flags.into())
    }

    /// The block size (at most `block_size_limit`, 0 for no limit) that gives the most
    /// occupancy when every block uses `dynamic_smem_bytes` of dynamic shared memory
    /// (`cuOccupancyMaxPotentialBlockSizeWithFlags`).
    pub fn max_potential_block_size(
        &self,
        dynamic_smem_bytes: usize,
        block_size_limit: u32,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<PotentialBlockSize, Error> {
        self.target().potential_block_size(None, dynamic_smem_bytes, block_size_limit, flags.into())
    }

    /// The same when a block's dynamic shared memory depends on its size: the driver calls
    /// `dynamic_smem(block_size)` for each size it considers, during this call and on this
    /// thread. The closure should only compute a size: it runs inside a driver call, so it
    /// must not call CUDA (another occupancy query from it finds its own closure, but the
    /// driver does not document calls from there). If it panics, the panic is caught, the
    /// driver is told 0 from then on, and the query returns an [`InvalidArgument`] with the
    /// panic's message.
    ///
    /// ```
    /// # cudrv_standin::install().unwrap();
    /// # let ctx = cudrv::init()?.device(0)?.primary_context()?;
    /// # let module = cudrv::Module::from_ptx(&ctx, include_str!("../../examples/kernels/scale_f32.ptx"))?;
    /// let f = module.function("scale_f32")?;
    /// // 4 bytes of shared memory per thread:
    /// match f.max_potential_block_size_with(|threads| threads as usize * 4, 0, 0) {
    ///     Ok(best) => assert!(best.block_size > 0),
    ///     // The stand-in has no occupancy calculator yet.
    ///     Err(e) => assert!(e.to_string().contains("cuOccupancyMaxPotentialBlockSize")),
    /// }
    /// # Ok::<(), cudrv::Error>(())
    /// ```
    pub fn max_potential_block_size_with(
        &self,
        dynamic_smem: impl Fn(u32) -> usize,
        block_size_limit: u32,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<PotentialBlockSize, Error> {
        self.target().potential_block_size(Some(&dynamic_smem), 0, block_size_limit, flags.into())
    }

    /// The dynamic shared memory each block can have when `blocks` blocks of `block_size`
    /// threads share a multiprocessor (`cuOccupancyAvailableDynamicSMemPerBlock`).
    pub fn available_dynamic_shared_memory_per_block(&self, blocks: u32, block_size: u32) -> Result<usize, Error> {
        self.target().available_dynamic_smem(blocks, block_size)
    }
}

impl Kernel {
    fn target<'a>(&'a self, context: &'a Context) -> Target<'a> {
        // SAFETY: the driver takes a kernel where it takes a function (cuda.h: "CUkernel
        // ... can be cast to CUfunction"), the same object, live while `self` is.
        let raw = unsafe { self.live().cast(|k| k.cast::<CUfunc_st>()) };
        Target { raw, context }
    }

    /// [`Function::max_active_blocks_per_multiprocessor`] for this kernel as loaded in
    /// `context` (the kernel handle passed as a function, with `context` current).
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        context: &Context,
        block_size: u32,
        dynamic_smem_bytes: usize,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<u32, Error> {
        self.target(context).max_active_blocks(block_size, dynamic_smem_bytes, flags.into())
    }

    /// [`Function::max_potential_block_size`] for this kernel in `context`.
    pub fn max_potential_block_size(
        &self,
        context: &Context,
        dynamic_smem_bytes: usize,
        block_size_limit: u32,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<PotentialBlockSize, Error> {
        self.target(context).potential_block_size(None, dynamic_smem_bytes, block_size_limit, flags.into())
    }

    /// [`Function::max_potential_block_size_with`] for this kernel in `context` (same
    /// rules for the closure).
    pub fn max_potential_block_size_with(
        &self,
        context: &Context,
        dynamic_smem: impl Fn(u32) -> usize,
        block_size_limit: u32,
        flags: impl Into<OccupancyFlags>,
    ) -> Result<PotentialBlockSize, Error> {
        self.target(context).potential_block_size(Some(&dynamic_smem), 0, block_size_limit, flags.into())
    }

    /// [`Function::available_dynamic_shared_memory_per_block`] for this kernel in `context`.
    pub fn available_dynamic_shared_memory_per_block(
        &self,
        context: &Context,
        blocks: u32,
        block_size: u32,
    ) -> Result<usize, Error> {
        self.target(context).available_dynamic_smem(blocks, block_size)
    }
}

impl Launch<'_> {
    /// How many clusters of this launch (its function, stream and cluster dimensions,
    /// [`Launch::cluster`]) with `config` can be resident on the device at once
    /// (`cuOccupancyMaxActiveClusters`, driver 11.7+; compute capability 9.0+).
    pub fn max_active_clusters(&self, config: LaunchConfig) -> Result<u32, Error> {
        self.cluster_query(config, false)
    }

    /// The largest cluster size this launch could use with `config`'s grid, block and
    /// shared memory (`cuOccupancyMaxPotentialClusterSize`, driver 11.7+): a portable
    /// size (at most 8) unless the function allows non-portable ones. The builder's
    /// cluster dimensions, if set, are passed too (a function compiled with required
    /// cluster dimensions answers those).
    pub fn max_potential_cluster_size(&self, config: LaunchConfig) -> Result<u32, Error> {
        self.cluster_query(config, true)
    }

    /// Runs a cluster query (the largest potential cluster size, or the most active
    /// clusters) with the launch's raw configuration for `config` (its cluster dimensions
    /// included) alive across the call, in the stream's context, named on error.
    fn cluster_query(&self, config: LaunchConfig, potential: bool) -> Result<u32, Error> {
        let (pc, f) = (self.stream().context().driver().pc(), self.function());
        let mut answer: c_int = 0;
        self.with_raw_config(config, |raw| {
            // SAFETY: a live function and stream (the builder holds both); `answer` is a
            // valid out-pointer and `raw` lives across the call.
            self.run_named(|| unsafe {
                match potential {
                    true => pc.cuOccupancyMaxPotentialClusterSize(&mut answer, f, raw),
                    false => pc.cuOccupancyMaxActiveClusters(&mut answer, f, raw),
                }
            })
        })?;
        Ok(count(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the driver does: call the callback, during the query, on the same thread.
    fn as_the_driver(sizes: &[c_int]) -> Vec<usize> {
        // SAFETY: the trampoline takes any int.
        sizes.iter().map(|s| unsafe { dynamic_smem_trampoline(*s) }).collect()
    }

    fn listed<T>(f: &dyn Fn(u32) -> usize, during: impl FnOnce(&Query<'_>) -> T) -> T {
        let id = this_thread().unwrap();
        let query = Query { f, panicked: RefCell::new(None), calls: Cell::new(0) };
        let address = &query as *const Query<'_> as usize;
        queries().push((id, address));
        let _listed = Listed(id, address);
        during(&query)
    }

    #[test]
    fn the_trampoline_runs_the_innermost_closure_of_this_thread() {
        assert_eq!(as_the_driver(&[32]), [0], "no query running: 0");
        let out = listed(&|b| b as usize * 4, |outer| {
            let inner = listed(&|b| b as usize + 1, |_| as_the_driver(&[32, 64]));
            (inner, as_the_driver(&[32, -1]), outer.calls.get())
        });
        assert_eq!(out, (vec![33, 65], vec![128, 0], 2));
        let me = this_thread().unwrap();
        assert!(!queries().iter().any(|(t, _)| *t == me), "a finished query stays listed");
        // Another thread sees none of this thread's queries.
        listed(&|_| 7, |_| {
            let other = std::thread::spawn(|| as_the_driver(&[32])).join().unwrap();
            assert_eq!(other, [0]);
        });
    }

    #[test]
    fn a_panicking_closure_is_caught_and_answers_zero_from_then_on() {
        let panicky = |b: u32| if b > 32 { panic!("too big: {b}") } else { 1 };
        let (sizes, message) = listed(&panicky, |q| (as_the_driver(&[32, 64, 16]), q.panicked.borrow().clone()));
        assert_eq!(sizes, [1, 0, 0]);
        assert_eq!(message.as_deref(), Some("too big: 64"));
    }
}
