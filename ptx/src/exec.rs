//! The executor: blocks in parallel on the host's threads, each block's warps run in
//! lockstep over an active mask, divergence by per-lane program counters with min-PC
//! scheduling.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::alu::{compare_int, cvta, cvta_window, f32_rn, loaded, mask_of, mul_wide, sext, shl, shr};
use crate::approx;
use crate::compiled;
use crate::exec_observe::{observe_atomics, observe_lanes, observe_nop};
use crate::float::{self, FOp, Fmt, Rnd};
use crate::lanes::{
    at, each_lane, fma_f32, lanes, rget, row, row_mut, rset, shared_load, shared_store, Link, StepContext, WARP,
};
use crate::memory::{Fault, GlobalMemory};
use crate::observe::{BlockObserver, Event, Observer};
use crate::windows::{resolve, FPARAM_TAG};

#[path = "exec_texture.rs"]
mod texture;
use crate::module::{
    AtomOp, BarRed, Base, BfindMode, BoolOp, Builtin, Cmp, Executor, Func, Funnel, FunnelAmount, FunnelDir, Half, Inst,
    MatchMode, Module, MulMode, Negated, Op, Opd, PrmtMode, ReduxOp, ShflMode, Sp, Sreg, TestpKind, Ty, VoteMode, K,
};

const MAX_FRAMES: usize = 4096;
/// The most local memory one thread may have (the H200's limit: 512 KiB per thread).
pub const MAX_LOCAL_PER_THREAD: u64 = 512 * 1024;

/// The bytes of local memory a thread running `f` needs for its frame and the frames of
/// the calls it can make without recursion (a callee already on the path counts 0: its
/// depth is the stack limit's business), each frame at 16-byte alignment, as the executor
/// lays them out. A depth-first walk with a stack of its own: a chain of 100k calls must
/// not exhaust the host thread's stack.
fn static_local(funcs: &[Func], f: usize) -> u64 {
    /// A function being walked: the next operand to look at, the deepest callee so far.
    struct Visit {
        f: usize,
        inst: usize,
        op: usize,
        deepest: u64,
    }
    let mut memo: Vec<Option<u64>> = vec![None; funcs.len()];
    let mut on_path = vec![false; funcs.len()];
    if let Some(p) = on_path.get_mut(f) {
        *p = true;
    }
    let mut stack = vec![Visit { f, inst: 0, op: 0, deepest: 0 }];
    let mut need = 0;
    while let Some(top) = stack.last_mut() {
        let code: &[_] = funcs.get(top.f).map_or(&[], |g| g.code.as_slice());
        let mut callee = None;
        while let Some(inst) = code.get(top.inst) {
            let Some(o) = inst.ops.get(top.op) else {
                (top.inst, top.op) = (top.inst + 1, 0);
                continue;
            };
            top.op += 1;
            if let Opd::Func(c) = o {
                let c = *c as usize;
                if !on_path.get(c).copied().unwrap_or(true) {
                    match memo.get(c).copied().flatten() {
                        Some(v) => top.deepest = top.deepest.max(v),
                        None => {
                            callee = Some(c);
                            break;
                        }
                    }
                }
            }
        }
        if let Some(c) = callee {
            if let Some(p) = on_path.get_mut(c) {
                *p = true;
            }
            stack.push(Visit { f: c, inst: 0, op: 0, deepest: 0 });
            continue;
        }
        let Some(done) = stack.pop() else { break };
        if let Some(p) = on_path.get_mut(done.f) {
            *p = false;
        }
        let local = funcs.get(done.f).map_or(0, |g| g.local_size);
        need = local.div_ceil(16).saturating_mul(16).saturating_add(done.deepest);
        if let Some(m) = memo.get_mut(done.f) {
            *m = Some(need);
        }
        if let Some(parent) = stack.last_mut() {
            parent.deepest = parent.deepest.max(need);
        }
    }
    need
}
/// Dynamic shared memory a launch may ask for (the H200's opt-in maximum per block).
const MAX_DYNAMIC_SHARED: u32 = 227 * 1024;
/// The number of SMs `%nsmid` reports (the H200's).
const NSM: u64 = 132;
/// The rate `%clock` and `%clock64` count at, in kHz: the H200's
/// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, which the stand-in reports.
const CLOCK_RATE_KHZ: u128 = 1_980_000;

/// The host's monotonic clock when the process first read a kernel timer, and the Unix
/// time then in nanoseconds: every launch's timers count from the same origin.
static TIMER_ORIGIN: LazyLock<(Instant, u64)> = LazyLock::new(|| {
    let epoch_ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    (Instant::now(), u64::try_from(epoch_ns).unwrap_or(u64::MAX))
});

/// Nanoseconds of host time since [`TIMER_ORIGIN`] (monotonic).
fn host_ns() -> u128 {
    TIMER_ORIGIN.0.elapsed().as_nanos()
}

/// `%globaltimer`: nanoseconds, the Unix time at [`TIMER_ORIGIN`] advanced by the host's
/// monotonic clock (never goes back, whatever the wall clock does).
fn global_timer() -> u64 {
    u64::try_from(host_ns()).map_or(u64::MAX, |ns| TIMER_ORIGIN.1.saturating_add(ns))
}

/// `%clock64` of a warp that issued `issued` instructions: host time since
/// [`TIMER_ORIGIN`] in cycles of [`CLOCK_RATE_KHZ`], plus one cycle per instruction, so
/// that a loop waiting for N cycles waits about N cycles of host time and two reads by
/// one warp always differ.
fn clock64(issued: u64) -> u64 {
    let cycles = host_ns() * CLOCK_RATE_KHZ / 1_000_000;
    u64::try_from(cycles).unwrap_or(u64::MAX).wrapping_add(issued)
}

static GRID_ID: AtomicU64 = AtomicU64::new(1);

struct Frame {
    func: u32,
    regs: Vec<u64>,
    pc: [u32; WARP],
    /// All live lanes are at `upc` (then `pc` may be stale).
    conv: bool,
    upc: u32,
    mask: u32,
    returned: u32,
    params: Vec<u8>,
    psize: usize,
    local_base: u64,
    /// The caller's call instruction (for return values).
    call_pc: u32,
}

#[derive(Default)]
struct Warp {
    id: u32,
    exited: u32,
    waiting: u32,
    wait_bar: [u8; WARP],
    red_dst: Option<(u32, BarRed)>,
    carry: u32,
    frames: Vec<Frame>,
    local: Vec<Vec<u8>>,
    local_top: u64,
    clock: u64,
}

impl Warp {
    fn done(&self) -> bool {
        self.frames.is_empty()
    }
}

struct Launch<'a> {
    m: &'a Module,
    /// The device address of each module global.
    globals: &'a [u64],
    kernel: &'a Func,
    /// The kernel's index in the module's functions.
    kernel_index: u32,
    grid: [u32; 3],
    block: [u32; 3],
    dyn_smem: u32,
    kparams: Vec<u8>,
    mem: &'a dyn GlobalMemory,
    grid_id: u64,
    /// %tid of each thread of a block, by linear index.
    tids: Vec<[u32; 3]>,
    /// The most warp instructions the launch may issue (`u64::MAX`: no limit).
    limit: u64,
    /// Warp instructions the launch's blocks have issued so far (each block adds its own
    /// after each turn of a warp; only under a limit: with none nothing reads it).
    spent: AtomicU64,
    /// The most local memory (bytes) a thread's frames may take ([`GlobalMemory::stack_limit`]).
    local_limit: u64,
    /// The embedder's observer of accesses and barriers (a sanitizer), if any.
    obs: Option<&'a dyn Observer>,
}

#[derive(Clone, Copy, Default)]
struct BarState {
    arrived: u32,
    expected: u32,
    popc: u32,
    and: bool,
    or: bool,
}

struct Block<'l, 'a> {
    l: &'l Launch<'a>,
    ctaid: [u32; 3],
    sm: u32,
    shared: Vec<u8>,
    bars: [BarState; 16],
    nthreads: u32,
    /// Finished frames, whose allocations new frames reuse.
    spare: Vec<Frame>,
    /// Thread-instructions executed (lanes issued, guard false included).
    executed: u64,
    issued: u64,
    /// The part of `issued` added to the launch's `spent` already.
    counted: u64,
    /// The block's observer (when the launch has one).
    obs: Option<Box<dyn BlockObserver + 'l>>,
}

/// What [`Module::compile`] made of a module's functions for the compiled executor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileStats {
    /// Instructions in the module's functions.
    pub instructions: usize,
    /// Of them, those translated into steps (the interpreter runs the others).
    pub translated: usize,
    /// Host memory the steps hold: each step's code and captured operands, its reference
    /// count and its slot (the allocator's rounding aside).
    pub bytes: usize,
    /// Runs of instructions compiled to machine code (feature `native`; a launch compiles
    /// a run once a whole warp has reached it 256 times, this call all of them now).
    pub native_runs: usize,
    /// Instructions in those runs.
    pub native_instructions: usize,
    /// Their machine code, in bytes (each run's code also takes a page of its own).
    pub native_bytes: usize,
}

/// What a launch executed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Instructions issued by warps (one per warp and instruction).
    pub warp_instructions: u64,
    /// Instructions executed by threads (one per thread and instruction).
    pub thread_instructions: u64,
}

enum Flow {
    /// Every lane of the mask goes to the next instruction.
    Next,
    /// The instruction set the program counters of its lanes itself.
    Jumped,
}

impl Module {
    /// Translates every function for the compiled executor now, as its first launch would
    /// otherwise do (once per function: a later call or launch reuses the steps), compiles
    /// every run of machine code (which a launch does only for runs it reaches often), and
    /// says how much was translated and what it holds. It changes no result: the executor
    /// chosen ([`Module::set_executor`]) still decides what runs.
    pub fn compile(&self) -> CompileStats {
        let mut stats = CompileStats::default();
        for func in &self.funcs {
            let steps = func.steps.get_or_init(|| compiled::compile(func));
            stats.instructions += steps.by_pc.len();
            stats.bytes += steps.by_pc.capacity() * std::mem::size_of::<Option<crate::lanes::Step>>()
                + steps.links.capacity() * std::mem::size_of::<crate::lanes::Link>();
            for step in steps.by_pc.iter().flatten() {
                stats.translated += 1;
                // The closure's captures plus the two reference counts of its `Arc`.
                stats.bytes += std::mem::size_of_val(&*step.run) + 2 * std::mem::size_of::<usize>();
            }
            #[cfg(feature = "native")]
            for link in &steps.links {
                if let crate::lanes::Link::Native(slot) = link {
                    if let Some(run) = slot.compiled() {
                        stats.native_runs += 1;
                        stats.native_instructions += slot.len as usize;
                        stats.native_bytes += run.bytes;
                    }
                }
            }
        }
        stats
    }

    /// Runs kernel `kernel` over `grid` blocks of `block` threads with `dynamic_smem` bytes
    /// of dynamic shared memory. `params` holds each parameter's bytes (as `cuLaunchKernel`
    /// takes them). Blocks run in parallel on the host's cores; the call returns when all
    /// have finished or the first fault (the other blocks stop at their next instruction;
    /// memory they wrote stays written, as on the GPU).
    pub fn launch(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_smem: u32,
        params: &[&[u8]],
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.launch_on(kernel, grid, block, dynamic_smem, params, memory, threads).map(|_| ())
    }

    /// [`Module::launch`] on at most `threads` host threads; what it executed.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_on(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_smem: u32,
        params: &[&[u8]],
        memory: &dyn GlobalMemory,
        threads: usize,
    ) -> Result<LaunchStats, Fault> {
        self.launch_with(kernel, grid, block, dynamic_smem, params, &self.global_addrs, memory, threads)
    }

    /// [`Module::launch_on`] with the module globals at `globals` (one address per
    /// [`Module::globals`] entry, in order) instead of those given to
    /// [`Module::bind_globals`]: one loaded module can serve several embedder modules,
    /// each with globals of its own. [`Fault::InvalidLaunch`] if the count differs.
    #[allow(clippy::too_many_arguments)]
    pub fn launch_with(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_smem: u32,
        params: &[&[u8]],
        globals: &[u64],
        memory: &dyn GlobalMemory,
        threads: usize,
    ) -> Result<LaunchStats, Fault> {
        self.launch_observed(kernel, grid, block, dynamic_smem, params, globals, memory, threads, None)
    }

    /// [`Module::launch_with`], each block's shared and global accesses and barriers shown
    /// to `observer` ([`Observer`]).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_observed(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_smem: u32,
        params: &[&[u8]],
        globals: &[u64],
        memory: &dyn GlobalMemory,
        threads: usize,
        observer: Option<&dyn Observer>,
    ) -> Result<LaunchStats, Fault> {
        if globals.len() != self.decls.globals.len() {
            return Err(Fault::InvalidLaunch(format!(
                "{} global addresses for {} globals",
                globals.len(),
                self.decls.globals.len()
            )));
        }
        let f = self
            .funcs
            .iter()
            .find(|f| f.is_entry && f.name == kernel)
            .ok_or_else(|| Fault::InvalidLaunch(format!("no kernel {kernel}")))?;
        if params.len() != f.params.len() {
            return Err(Fault::InvalidLaunch(format!(
                "{kernel} takes {} parameters, {} given",
                f.params.len(),
                params.len()
            )));
        }
        let nthreads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
        if dynamic_smem > MAX_DYNAMIC_SHARED {
            return Err(Fault::InvalidLaunch(format!("{dynamic_smem} bytes of dynamic shared memory")));
        }
        if nthreads == 0 || nthreads > 1024 || grid.contains(&0) {
            return Err(Fault::InvalidLaunch(format!("grid {grid:?} block {block:?}")));
        }
        let size = f.params.last().map_or(0, |&(o, s)| o + s) as usize;
        let mut kparams = vec![0u8; size];
        for (&(off, sz), p) in f.params.iter().zip(params) {
            if p.len() as u64 != sz {
                return Err(Fault::InvalidLaunch(format!(
                    "parameter at offset {off}: {} bytes, {sz} expected",
                    p.len()
                )));
            }
            if let Some(d) = kparams.get_mut(off as usize..(off + sz) as usize) {
                d.copy_from_slice(p);
            }
        }
        // The stack: what the call graph needs without recursion, or the embedder's limit.
        let kidx = self.funcs.iter().position(|g| std::ptr::eq(g, f)).unwrap_or(0);
        let local_limit = static_local(&self.funcs, kidx).max(memory.stack_limit());
        if f.local_size > MAX_LOCAL_PER_THREAD {
            return Err(Fault::StackOverflow { line: 0 });
        }
        let l = Launch {
            m: self,
            globals,
            kernel: f,
            kernel_index: kidx as u32,
            grid,
            block,
            dyn_smem: dynamic_smem,
            kparams,
            mem: memory,
            grid_id: GRID_ID.fetch_add(1, Ordering::Relaxed),
            tids: (0..nthreads as u32)
                .map(|t| [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])])
                .collect(),
            limit: self.instruction_limit.unwrap_or(u64::MAX),
            spent: AtomicU64::new(0),
            local_limit: local_limit.min(MAX_LOCAL_PER_THREAD),
            obs: observer,
        };
        let nblocks = u64::from(grid[0]) * u64::from(grid[1]) * u64::from(grid[2]);
        let next = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let fault: Mutex<Option<Fault>> = Mutex::new(None);
        let workers = threads.max(1).min(nblocks.min(1 << 16) as usize);
        let sm_counter = AtomicUsize::new(0);
        let warp_instr = AtomicU64::new(0);
        let thread_instr = AtomicU64::new(0);
        let work = || {
            let sm = sm_counter.fetch_add(1, Ordering::Relaxed) as u32;
            let mut spare = Spare::default();
            loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= nblocks {
                    break;
                }
                let gx = u64::from(grid[0]);
                let gy = u64::from(grid[1]);
                let ctaid = [(b % gx) as u32, ((b / gx) % gy) as u32, (b / (gx * gy)) as u32];
                match run_block(&l, ctaid, sm, &stop, &mut spare) {
                    Ok(st) => {
                        warp_instr.fetch_add(st.warp_instructions, Ordering::Relaxed);
                        thread_instr.fetch_add(st.thread_instructions, Ordering::Relaxed);
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        if let Ok(mut f) = fault.lock() {
                            f.get_or_insert(e);
                        }
                        break;
                    }
                }
            }
        };
        if workers <= 1 {
            work();
        } else {
            std::thread::scope(|s| {
                for _ in 0..workers {
                    s.spawn(work);
                }
            });
        }
        match fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(LaunchStats {
                warp_instructions: warp_instr.into_inner(),
                thread_instructions: thread_instr.into_inner(),
            }),
        }
    }
}

/// What a compiled step of warp `warp` of block `ctaid` may touch besides its registers.
#[inline(always)]
fn step_context<'m>(l: &'m Launch, ctaid: [u32; 3], shared: &'m mut [u8], warp: u32) -> StepContext<'m> {
    StepContext {
        shared,
        global: l.mem,
        kparams: &l.kparams,
        tids: l.tids.get(warp as usize * WARP..).unwrap_or(&[]),
        ctaid,
        ntid: l.block,
        nctaid: l.grid,
    }
}

/// Where branch `inst` at `pc` sends the lanes of `mask` when they all take it or all skip
/// it (its predicate read from `regs`); None when they part.
#[inline(always)]
fn whole_warp_branch(regs: &[u64], inst: &Inst, mask: u32, pc: u32) -> Option<u32> {
    let taken = match inst.guard {
        None => mask,
        Some((p, neg)) => guard_mask(regs, p, neg) & mask,
    };
    match (taken, inst.ops.first()) {
        (0, _) => Some(pc + 1),
        (t, _) if t != mask => None,
        (_, Some(Opd::Label(l))) => Some(*l),
        _ => Some(pc + 1),
    }
}

/// Sets the program counter of each lane of `mask` to `pc` (a whole warp in one store
/// loop that vectorises).
#[inline(always)]
fn set_pcs(pcs: &mut [u32; WARP], mask: u32, pc: u32) {
    if mask == u32::MAX {
        *pcs = [pc; WARP];
    } else {
        for lane in lanes(mask) {
            if let Some(x) = pcs.get_mut(lane) {
                *x = pc;
            }
        }
    }
}

/// The lanes in which predicate `p` (negated if `neg`) holds.
#[inline(always)]
fn guard_mask(regs: &[u64], p: u32, neg: bool) -> u32 {
    row(regs, p).map_or(0, |pv| (0..WARP).zip(pv).fold(0u32, |m, (lane, v)| m | u32::from((v & 1 != 0) != neg) << lane))
}

/// Runs the links (`Steps::links`) of a converged warp whose every lane (`mask`) runs, from
/// instruction `next`: steps and whole-warp branches, at most `room` of them, until one that
/// is not a link (or, when `observed`, a memory step) or a branch the lanes part at. How
/// many ran (a faulting step among them), where the warp is (at the faulting step if one
/// faulted), and the fault. Apart from the scheduler's loop so that its tight loop is
/// compiled on its own.
#[inline(never)]
fn run_links(
    links: &[Link],
    regs: &mut [u64],
    ctx: &mut StepContext<'_>,
    mask: u32,
    mut next: u32,
    room: u64,
    observed: bool,
) -> (u64, u32, Result<(), Fault>) {
    let mut ran = 0u64;
    while ran < room {
        match links.get(next as usize) {
            #[cfg(feature = "native")]
            Some(Link::Native(slot)) if !(slot.memory && observed) => {
                // Turns that fit in the room: each the run and (but the last) the branch back.
                let (len, back) = (u64::from(slot.len), u64::from(slot.loops));
                let turns = (room - ran + back) / (len + back);
                let whole = mask == u32::MAX && turns >= 1;
                let run = whole.then(|| slot.code()).flatten().filter(|run| regs.len() >= run.min_regs);
                // The launch's values and the accesses' distances, for a compiled run only.
                let ready = run.and_then(|run| {
                    let launch = crate::lanes::LaunchView::of(ctx);
                    crate::native_check::checked_distances(run, regs, ctx, &launch).map(|g| (run, launch, g))
                });
                let made = match ready {
                    Some((run, launch, globals)) => {
                        // A run that computes an address turns once: its addresses are
                        // checked again before the next turn.
                        let turns = if run.computed { 1 } else { turns };
                        let (shared, shared_len) = (ctx.shared.as_ptr(), ctx.shared.len() as u64);
                        // SAFETY: the code reads and writes rows below `run.min_regs` values
                        // of the frame, which has that many (checked just now), reads shared
                        // memory inside the block's slice (each load's address checked
                        // against its length before a turn), the launch's `%tid`s and
                        // parameters inside the slices `launch` describes (their lengths
                        // checked before the first turn), and global memory inside the
                        // windows `checked_distances` found for every lane's access (at the
                        // addresses it computed for this turn, the only one when the run
                        // computes them), nothing else.
                        let g = globals.as_ptr();
                        unsafe { (run.code)(regs.as_mut_ptr(), turns, shared, shared_len, &launch, g) }.min(turns)
                    }
                    None => 0,
                };
                if made > 0 {
                    ran += made * len + (made - 1) * back;
                    next += slot.len;
                } else {
                    ran += 1;
                    if let Err(e) = (slot.first.run)(regs, ctx, mask) {
                        return (ran, next, Err(e));
                    }
                    next += 1;
                }
            }
            Some(Link::Step(step)) if !(step.memory && observed) => {
                ran += 1;
                if let Err(e) = (step.run)(regs, ctx, mask) {
                    return (ran, next, Err(e));
                }
                next += 1;
            }
            Some(Link::Branch { guard, target }) => {
                let taken = match *guard {
                    None => mask,
                    Some((p, neg)) => guard_mask(regs, p, neg) & mask,
                };
                next = if taken == 0 {
                    next + 1
                } else if taken == mask {
                    *target
                } else {
                    break;
                };
                ran += 1;
            }
            _ => break,
        }
    }
    (ran, next, Ok(()))
}

/// Whether the link at `pc` is a run of machine code that `run_links` takes (under an
/// observer, not one that touches memory: its steps run, and the observer sees them).
#[inline]
fn links_native(links: &[Link], pc: u32, observed: bool) -> bool {
    #[cfg(feature = "native")]
    {
        matches!(links.get(pc as usize), Some(Link::Native(slot)) if !(slot.memory && observed))
    }
    #[cfg(not(feature = "native"))]
    {
        let _ = (links, pc, observed);
        false
    }
}

/// A zeroed frame for `f`, reusing the allocations of a finished frame from `spare` if any.
fn new_frame(spare: &mut Vec<Frame>, f: &Func, fidx: u32, mask: u32, local_base: u64, call_pc: u32) -> Frame {
    let psize = f.param_size as usize;
    let (mut regs, mut params) = spare.pop().map_or_else(Default::default, |fr| (fr.regs, fr.params));
    regs.clear();
    regs.resize(f.nregs as usize * WARP, 0);
    params.clear();
    params.resize(psize * WARP, 0);
    Frame { func: fidx, regs, pc: [0; WARP], conv: true, upc: 0, mask, returned: 0, params, psize, local_base, call_pc }
}

/// What a host thread keeps from one block to the next: allocations only (every block
/// starts from zeroed registers and memory).
#[derive(Default)]
struct Spare {
    warps: Vec<Warp>,
    frames: Vec<Frame>,
    shared: Vec<u8>,
}

fn run_block(l: &Launch, ctaid: [u32; 3], sm: u32, stop: &AtomicBool, spare: &mut Spare) -> Result<LaunchStats, Fault> {
    let nthreads = l.block[0] * l.block[1] * l.block[2];
    let nwarps = nthreads.div_ceil(WARP as u32);
    let kidx = l.kernel_index;
    let mut warps = std::mem::take(&mut spare.warps);
    warps.resize_with(nwarps as usize, Warp::default);
    for (w, warp) in (0u32..).zip(warps.iter_mut()) {
        // The warp's threads below the block's count.
        let mask = match nthreads.saturating_sub(w * WARP as u32) {
            n if n >= WARP as u32 => u32::MAX,
            n => (1u32 << n) - 1,
        };
        let mut frames = std::mem::take(&mut warp.frames);
        spare.frames.append(&mut frames);
        let mut local = std::mem::take(&mut warp.local);
        *warp = Warp { id: w, frames, ..Warp::default() };
        let size = l.kernel.local_size;
        local.resize_with(WARP, Vec::new);
        for (lane, v) in local.iter_mut().enumerate() {
            v.clear();
            if size != 0 && mask & (1 << lane) != 0 {
                v.resize(size as usize, 0);
            }
        }
        warp.local = local;
        warp.local_top = size;
        warp.frames.push(new_frame(&mut spare.frames, l.kernel, kidx, mask, 0, 0));
    }
    let shared_size = (l.m.dyn_shared_offset as usize + l.dyn_smem as usize).max(l.m.shared_size as usize);
    let mut shared = std::mem::take(&mut spare.shared);
    shared.clear();
    shared.resize(shared_size, 0);
    let mut b = Block {
        l,
        ctaid,
        sm,
        shared,
        bars: [BarState::default(); 16],
        nthreads,
        spare: std::mem::take(&mut spare.frames),
        executed: 0,
        issued: 0,
        counted: 0,
        obs: l.obs.map(|o| o.block(ctaid)),
    };
    let result = b.run(&mut warps, stop);
    if let Some(o) = b.obs.as_deref_mut() {
        o.finish();
    }
    spare.warps = warps;
    spare.frames = b.spare;
    spare.shared = b.shared;
    result
}

impl Block<'_, '_> {
    /// Runs the block's warps until all have finished (or the launch stops).
    fn run(&mut self, warps: &mut [Warp], stop: &AtomicBool) -> Result<LaunchStats, Fault> {
        loop {
            let mut progress = false;
            let mut all_done = true;
            for i in 0..warps.len() {
                let Some(warp) = warps.get_mut(i) else { break };
                if warp.done() {
                    continue;
                }
                all_done = false;
                let ran = self.run_warp(warp);
                // Only a launch with a limit shares its count: an atomic add after every
                // turn of every warp is a cache line the threads would otherwise pass back
                // and forth (vector_add's warps run a few hundred thread-instructions a turn).
                if self.l.limit != u64::MAX {
                    self.l.spent.fetch_add(self.issued - self.counted, Ordering::Relaxed);
                    self.counted = self.issued;
                }
                if ran? {
                    progress = true;
                }
                // A barrier with a thread count (bar.sync a, b / bar.arrive) opens as soon as
                // its count is in, not only when nothing else can run.
                if self.bars.iter().any(|st| st.expected != 0 && st.arrived >= st.expected) {
                    self.release(warps);
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(self.stats());
                }
            }
            if all_done {
                return Ok(self.stats());
            }
            if !progress && !self.release(warps) {
                return Err(Fault::BarrierDeadlock { block: self.ctaid });
            }
        }
    }

    fn stats(&self) -> LaunchStats {
        LaunchStats { warp_instructions: self.issued, thread_instructions: self.executed }
    }

    /// Releases every barrier whose expected arrivals are in (or that all live threads
    /// wait at); whether any was.
    fn release(&mut self, warps: &mut [Warp]) -> bool {
        let live: u32 = warps.iter().map(|w| w.frames.first().map_or(0, |f| (f.mask & !w.exited).count_ones())).sum();
        let mut released = false;
        for id in 0..16u8 {
            let Some(st) = self.bars.get(id as usize).copied() else { continue };
            if st.arrived == 0 {
                continue;
            }
            let expected = if st.expected == 0 { live } else { st.expected };
            if st.arrived < expected {
                continue;
            }
            released = true;
            if let Some(o) = self.obs.as_deref_mut() {
                o.event(Event::Barrier);
            }
            for w in warps.iter_mut() {
                let mut m = 0u32;
                for lane in lanes(w.waiting) {
                    if w.wait_bar.get(lane).copied() == Some(id) {
                        m |= 1 << lane;
                    }
                }
                if m == 0 {
                    continue;
                }
                w.waiting &= !m;
                if let Some((dst, kind)) = w.red_dst.take() {
                    if let Some(f) = w.frames.last_mut() {
                        for lane in lanes(m) {
                            let v = match kind {
                                BarRed::Popc => u64::from(st.popc),
                                BarRed::And => u64::from(st.and),
                                BarRed::Or => u64::from(st.or),
                            };
                            rset(&mut f.regs, dst, lane, v);
                        }
                    }
                }
            }
            if let Some(s) = self.bars.get_mut(id as usize) {
                *s = BarState::default();
            }
        }
        released
    }

    /// Runs `w` until it waits at a barrier or finishes; whether it executed anything.
    fn run_warp(&mut self, w: &mut Warp) -> Result<bool, Fault> {
        let m: &Module = self.l.m;
        let mut progress = false;
        let mut budget: u32 = 1 << 20;
        // What the launch's limit leaves (the block's own instructions are counted in
        // `spent` after each turn of a warp).
        let mut left = self.l.limit.saturating_sub(self.l.spent.load(Ordering::Relaxed));
        loop {
            let Some(frame) = w.frames.last_mut() else { return Ok(progress) };
            let live = frame.mask & !frame.returned & !w.exited;
            let runnable = live & !w.waiting;
            if runnable == 0 {
                if live != 0 {
                    return Ok(progress);
                }
                self.pop_frame(w)?;
                progress = true;
                continue;
            }
            budget = budget.saturating_sub(1);
            if budget == 0 {
                return Ok(true);
            }
            // Converged: every live lane is at `upc` (the per-lane array is stale).
            let (pc, mask) = if frame.conv && runnable == live {
                (frame.upc, live)
            } else {
                if frame.conv {
                    set_pcs(&mut frame.pc, frame.mask, frame.upc);
                    frame.conv = false;
                }
                let mut pc = u32::MAX;
                let mut mask = 0u32;
                for lane in lanes(runnable) {
                    let p = frame.pc.get(lane).copied().unwrap_or(u32::MAX);
                    if p < pc {
                        pc = p;
                        mask = 1 << lane;
                    } else if p == pc {
                        mask |= 1 << lane;
                    }
                }
                if mask == live {
                    frame.conv = true;
                    frame.upc = pc;
                }
                (pc, mask)
            };
            let Some(func) = m.funcs.get(frame.func as usize) else { return Ok(progress) };
            // The compiling executor's steps of the function (compiled at its first run).
            let steps = match m.executor {
                Executor::Compiled => Some(func.steps.get_or_init(|| compiled::compile(func))),
                Executor::Interpreter => None,
            };
            let Some(inst) = func.code.get(pc as usize) else {
                // Past the end (cannot happen: every body ends with ret/exit).
                w.exited |= mask;
                continue;
            };
            if left == 0 {
                return Err(Fault::InstructionLimit { limit: self.l.limit });
            }
            left -= 1;
            progress = true;
            w.clock += 1;
            self.executed += u64::from(mask.count_ones());
            self.issued += 1;
            // A branch that a converged warp takes (or skips) as a whole keeps it converged.
            if matches!(inst.op, Op::Bra) && frame.conv {
                if let Some(to) = whole_warp_branch(&frame.regs, inst, mask, pc) {
                    frame.upc = to;
                    continue;
                }
            }
            let control = matches!(inst.op, Op::Bra | Op::Exit | Op::Ret | Op::Call | Op::Bar { .. } | Op::Trap);
            if control && frame.conv {
                // Control instructions set per-lane program counters.
                set_pcs(&mut frame.pc, frame.mask, pc);
                frame.conv = false;
            }
            let mut exec = mask;
            if let Some((p, neg)) = inst.guard {
                exec = 0;
                if let Some(pv) = row(&frame.regs, p) {
                    for (lane, v) in pv.iter().enumerate() {
                        exec |= u32::from((v & 1 != 0) != neg) << lane;
                    }
                }
                exec &= mask;
                if !frame.conv {
                    let skip = mask & !exec;
                    for lane in lanes(skip) {
                        if let Some(x) = frame.pc.get_mut(lane) {
                            *x = pc + 1;
                        }
                    }
                }
                if exec == 0 {
                    if frame.conv {
                        frame.upc = pc + 1;
                    }
                    continue;
                }
            }
            let observed = self.obs.is_some();
            let flow = match steps
                .and_then(|s| s.by_pc.get(pc as usize))
                .and_then(Option::as_ref)
                .filter(|s| !(s.memory && observed))
            {
                Some(step) => {
                    let Some(frame) = w.frames.last_mut() else { return Ok(progress) };
                    let mut ctx = step_context(self.l, self.ctaid, &mut self.shared, w.id);
                    let links = steps.map_or(&[][..], |s| s.links.as_slice());
                    // A converged whole warp at the start of a run of machine code (after a
                    // barrier, say) runs it from here: the run begins with this instruction,
                    // counted above already, so the run's count includes it once.
                    let native_here = frame.conv && exec == mask && links_native(links, pc, observed);
                    if !native_here {
                        (step.run)(&mut frame.regs, &mut ctx, exec)?;
                    }
                    if !frame.conv || exec != mask {
                        Flow::Next
                    } else {
                        // Converged, every lane running: the instructions after it that have
                        // steps and no guard, and the branches the whole warp takes or skips,
                        // run back to back (`Steps::links`), each counted as the loop above
                        // counts it: at most as many as the limit and the turn's budget
                        // leave, and a step that faults counted, as it is counted before it
                        // runs there. The counts are added once the run ends.
                        let room = left.min(u64::from(budget.saturating_sub(1)));
                        let (from, room) = if native_here { (pc, room + 1) } else { (pc + 1, room) };
                        let (ran, next, r) = run_links(links, &mut frame.regs, &mut ctx, mask, from, room, observed);
                        // This instruction's count is in `ran` too when the run began with it.
                        let ran = if native_here { ran.saturating_sub(1) } else { ran };
                        // `ran` is at most `budget - 1`, a u32.
                        budget -= ran as u32;
                        left -= ran;
                        w.clock += ran;
                        self.executed += u64::from(mask.count_ones()) * ran;
                        self.issued += ran;
                        // At the faulting step, if one faulted.
                        frame.upc = next;
                        r?;
                        continue;
                    }
                }
                None => self.exec(w, inst, exec, pc)?,
            };
            match flow {
                Flow::Next => {
                    if let Some(frame) = w.frames.last_mut() {
                        if frame.conv {
                            frame.upc = pc + 1;
                        } else {
                            for lane in lanes(exec) {
                                if let Some(x) = frame.pc.get_mut(lane) {
                                    *x = pc + 1;
                                }
                            }
                        }
                    }
                }
                Flow::Jumped => {}
            }
        }
    }

    /// Pops the warp's innermost frame (its lanes have all returned), handing return values
    /// to the caller; the frame's allocations go to the spares.
    fn pop_frame(&mut self, w: &mut Warp) -> Result<(), Fault> {
        let Some(frame) = w.frames.pop() else { return Ok(()) };
        let r = self.unwind(w, &frame);
        self.spare.push(frame);
        r
    }

    fn unwind(&mut self, w: &mut Warp, frame: &Frame) -> Result<(), Fault> {
        w.local_top = frame.local_base;
        let Some(caller) = w.frames.last_mut() else { return Ok(()) };
        let m = self.l.m;
        let callee = m.funcs.get(frame.func as usize);
        let cf = m.funcs.get(caller.func as usize);
        let call = cf.and_then(|f| f.code.get(frame.call_pc as usize));
        if let (Some(callee), Some(call)) = (callee, call) {
            // Return values: the list before the function operand.
            if let Some(Opd::List(rets)) = call.ops.first() {
                let back = frame.returned & !w.exited;
                for (k, r) in rets.iter().enumerate() {
                    let Some(&(off, size)) = callee.rets.get(k) else { continue };
                    for lane in lanes(back) {
                        let src = frame
                            .params
                            .get(lane * frame.psize + off as usize..lane * frame.psize + (off + size) as usize);
                        let Some(src) = src else { continue };
                        let mut buf = [0u8; 8];
                        let n = src.len().min(8);
                        if let (Some(d), Some(s)) = (buf.get_mut(..n), src.get(..n)) {
                            d.copy_from_slice(s);
                        }
                        match r {
                            Opd::SymAddr(Base::FParam(coff), _) => {
                                let at = lane * caller.psize + *coff as usize;
                                if let Some(d) = caller.params.get_mut(at..at + src.len()) {
                                    d.copy_from_slice(src);
                                }
                            }
                            Opd::Reg(reg) => rset(&mut caller.regs, *reg, lane, u64::from_le_bytes(buf)),
                            _ => {}
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[inline(never)]
    fn sreg(&self, w: &WarpSnap, s: Sreg, lane: usize) -> u64 {
        let l = self.l;
        let tid = self.l.tids.get(w.id as usize * WARP + lane).copied().unwrap_or([0; 3]);
        let lt = (1u64 << lane) - 1;
        match s {
            Sreg::Tid(d) => u64::from(tid.get(d as usize).copied().unwrap_or(0)),
            Sreg::Ntid(d) => u64::from(l.block.get(d as usize).copied().unwrap_or(1)),
            Sreg::Ctaid(d) => u64::from(self.ctaid.get(d as usize).copied().unwrap_or(0)),
            Sreg::Nctaid(d) => u64::from(l.grid.get(d as usize).copied().unwrap_or(1)),
            Sreg::Laneid => lane as u64,
            Sreg::Warpid => u64::from(w.id),
            Sreg::Nwarpid => 64,
            Sreg::Smid => u64::from(self.sm) % NSM,
            Sreg::Nsmid => NSM,
            Sreg::Gridid => l.grid_id,
            Sreg::Clock => clock64(w.clock) & 0xffff_ffff,
            Sreg::Clock64 => clock64(w.clock),
            Sreg::Globaltimer => global_timer(),
            Sreg::GlobaltimerLo => global_timer() & 0xffff_ffff,
            Sreg::GlobaltimerHi => global_timer() >> 32,
            Sreg::DynSmem => u64::from(l.dyn_smem),
            Sreg::TotalSmem => self.shared.len() as u64,
            Sreg::LanemaskEq => 1 << lane,
            Sreg::LanemaskLe => (lt << 1) | 1,
            Sreg::LanemaskLt => lt,
            Sreg::LanemaskGe => !lt & 0xffff_ffff,
            Sreg::LanemaskGt => !((lt << 1) | 1) & 0xffff_ffff,
            Sreg::Const(c) => c,
        }
    }

    fn base_value(&self, _w: &WarpSnap, frame: &Frame, b: Base, lane: usize) -> u64 {
        match b {
            Base::None => 0,
            Base::Reg(r) => rget(&frame.regs, r, lane),
            Base::Shared(o) => o,
            Base::Global(i) => self.l.globals.get(i as usize).copied().unwrap_or(0),
            Base::KParam(o) => o,
            Base::FParam(o) => FPARAM_TAG + o,
            Base::Local(o) => frame.local_base + o,
        }
    }

    #[inline(always)]
    fn val(&self, w: &WarpSnap, frame: &Frame, o: &Opd, lane: usize) -> u64 {
        match o {
            Opd::Reg(r) => rget(&frame.regs, *r, lane),
            Opd::Imm(v) => *v,
            Opd::Addr(Base::Reg(r), off) => rget(&frame.regs, *r, lane).wrapping_add(*off as u64),
            _ => self.val_slow(w, frame, o, lane),
        }
    }

    #[inline(never)]
    fn val_slow(&self, w: &WarpSnap, frame: &Frame, o: &Opd, lane: usize) -> u64 {
        match o {
            Opd::Reg(r) => rget(&frame.regs, *r, lane),
            Opd::Imm(v) => *v,
            Opd::NotReg(r) => u64::from(rget(&frame.regs, *r, lane) & 1 == 0),
            Opd::Sreg(s) => self.sreg(w, *s, lane),
            Opd::SymAddr(b, off) => self.base_value(w, frame, *b, lane).wrapping_add(*off as u64),
            Opd::Addr(b, off) => self.base_value(w, frame, *b, lane).wrapping_add(*off as u64),
            _ => 0,
        }
    }

    /// The values of operand `o` in the lanes of `mask` (the other lanes' are unspecified):
    /// a register's row copied at once, an immediate broadcast, anything else lane by lane.
    #[inline(always)]
    fn gather(&self, w: &WarpSnap, frame: &Frame, o: &Opd, mask: u32) -> [u64; WARP] {
        match o {
            Opd::Reg(r) => row(&frame.regs, *r).copied().unwrap_or([0; WARP]),
            Opd::Imm(v) => [*v; WARP],
            Opd::Sreg(Sreg::Tid(d)) => {
                let mut out = [0; WARP];
                let first = w.id as usize * WARP;
                for (x, t) in out.iter_mut().zip(self.l.tids.get(first..).unwrap_or(&[])) {
                    *x = u64::from(t.get(*d as usize).copied().unwrap_or(0));
                }
                out
            }
            // The same in every lane.
            Opd::Sreg(s @ (Sreg::Ntid(_) | Sreg::Ctaid(_) | Sreg::Nctaid(_))) => [self.sreg(w, *s, 0); WARP],
            Opd::Addr(Base::Reg(r), off) => {
                let mut out = row(&frame.regs, *r).copied().unwrap_or([0; WARP]);
                for x in &mut out {
                    *x = x.wrapping_add(*off as u64);
                }
                out
            }
            _ => {
                let mut out = [0; WARP];
                for lane in lanes(mask) {
                    if let Some(x) = out.get_mut(lane) {
                        *x = self.val_slow(w, frame, o, lane);
                    }
                }
                out
            }
        }
    }

    /// Reads `out.len()` bytes at `addr` of space `sp` for `lane`.
    #[inline]
    fn read(&self, w: &Warp, sp: Sp, addr: u64, lane: usize, out: &mut [u8], line: u32) -> Result<(), Fault> {
        let n = out.len();
        let bad = || Fault::IllegalAddress { addr, line };
        let (sp, a) = resolve(sp, addr);
        let src: &[u8] = match sp {
            Sp::Global | Sp::Const | Sp::Generic => {
                if n > 1 && addr % n.min(16) as u64 != 0 {
                    return Err(Fault::MisalignedAddress { addr, line });
                }
                return self.l.mem.read(addr, out).map_err(|_| bad());
            }
            Sp::Shared => self.shared.get(a as usize..(a as usize).saturating_add(n)).ok_or_else(bad)?,
            Sp::Local => {
                w.local.get(lane).and_then(|v| v.get(a as usize..(a as usize).saturating_add(n))).ok_or_else(bad)?
            }
            Sp::Param => {
                if a >= FPARAM_TAG {
                    let f = w.frames.last().ok_or_else(bad)?;
                    let at = (lane * f.psize).wrapping_add((a - FPARAM_TAG) as usize);
                    f.params.get(at..at.wrapping_add(n)).ok_or_else(bad)?
                } else {
                    self.l.kparams.get(a as usize..(a as usize).saturating_add(n)).ok_or_else(bad)?
                }
            }
        };
        out.copy_from_slice(src);
        Ok(())
    }

    fn write(&mut self, w: &mut Warp, sp: Sp, addr: u64, lane: usize, data: &[u8], line: u32) -> Result<(), Fault> {
        let n = data.len();
        let bad = || Fault::IllegalAddress { addr, line };
        let (sp, a) = resolve(sp, addr);
        let dst: &mut [u8] = match sp {
            Sp::Global | Sp::Const | Sp::Generic => {
                if n > 1 && addr % n.min(16) as u64 != 0 {
                    return Err(Fault::MisalignedAddress { addr, line });
                }
                return self.l.mem.write(addr, data).map_err(|_| bad());
            }
            Sp::Shared => self.shared.get_mut(a as usize..(a as usize).saturating_add(n)).ok_or_else(bad)?,
            Sp::Local => w
                .local
                .get_mut(lane)
                .and_then(|v| v.get_mut(a as usize..(a as usize).saturating_add(n)))
                .ok_or_else(bad)?,
            Sp::Param => {
                if a >= FPARAM_TAG {
                    let f = w.frames.last_mut().ok_or_else(bad)?;
                    let at = (lane * f.psize).wrapping_add((a - FPARAM_TAG) as usize);
                    f.params.get_mut(at..at.wrapping_add(n)).ok_or_else(bad)?
                } else {
                    return Err(bad());
                }
            }
        };
        dst.copy_from_slice(data);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        w: &mut Warp,
        sp: Sp,
        addr: u64,
        lane: usize,
        size: usize,
        line: u32,
        op: &mut dyn FnMut(u64) -> u64,
    ) -> Result<u64, Fault> {
        if addr % size as u64 != 0 {
            return Err(Fault::MisalignedAddress { addr, line });
        }
        let (rsp, _) = resolve(sp, addr);
        match rsp {
            Sp::Global | Sp::Const | Sp::Generic => {
                self.l.mem.atomic(addr, size, op).map_err(|_| Fault::IllegalAddress { addr, line })
            }
            _ => {
                let mut buf = [0u8; 8];
                let b = buf.get_mut(..size).ok_or(Fault::IllegalAddress { addr, line })?;
                self.read(w, sp, addr, lane, b, line)?;
                let old = u64::from_le_bytes(buf);
                let new = op(old).to_le_bytes();
                self.write(w, sp, addr, lane, new.get(..size).unwrap_or(&[]), line)?;
                Ok(old)
            }
        }
    }

    fn read_cstr(&self, w: &Warp, addr: u64, lane: usize) -> String {
        let mut out = Vec::new();
        let mut a = addr;
        while out.len() < 65536 {
            let mut b = [0u8; 1];
            if self.read(w, Sp::Generic, a, lane, &mut b, 0).is_err() || b[0] == 0 {
                break;
            }
            out.push(b[0]);
            a = a.wrapping_add(1);
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[allow(clippy::too_many_lines)]
    fn exec(&mut self, w: &mut Warp, inst: &Inst, mask: u32, pc: u32) -> Result<Flow, Fault> {
        let ty = inst.ty;
        let bits = ty.bits;
        let mk = mask_of(bits);
        let signed = ty.k == K::S;
        let ops = &inst.ops;
        let o = |k: usize| ops.get(k).unwrap_or(&Opd::Sink);
        let dst = match o(0) {
            Opd::Reg(r) => Some(*r),
            _ => None,
        };
        // `val` needs of the warp only what special registers read: a snapshot (a frame is
        // borrowed mutably from the warp while lanes execute).
        let snap = WarpSnap { id: w.id, clock: w.clock };
        macro_rules! frame {
            () => {
                match w.frames.last_mut() {
                    Some(f) => f,
                    None => return Ok(Flow::Next),
                }
            };
        }
        // A unary/binary/ternary ALU op over the lanes: operands gathered per warp, the
        // result written to the destination's row (nothing when the destination is `_`).
        macro_rules! alu {
            (|$a:ident| $e:expr) => {{
                let f = frame!();
                let va = self.gather(&snap, f, o(1), mask);
                if let Some(d) = dst.and_then(|d| row_mut(&mut f.regs, d)) {
                    each_lane(d, mask, |lane| {
                        let $a = at(&va, lane);
                        $e
                    });
                }
                return Ok(Flow::Next);
            }};
            (|$a:ident, $b:ident| $e:expr) => {{
                let f = frame!();
                let va = self.gather(&snap, f, o(1), mask);
                let vb = self.gather(&snap, f, o(2), mask);
                if let Some(d) = dst.and_then(|d| row_mut(&mut f.regs, d)) {
                    each_lane(d, mask, |lane| {
                        let $a = at(&va, lane);
                        let $b = at(&vb, lane);
                        $e
                    });
                }
                return Ok(Flow::Next);
            }};
            (|$a:ident, $b:ident, $c:ident| $e:expr) => {{
                let f = frame!();
                let va = self.gather(&snap, f, o(1), mask);
                let vb = self.gather(&snap, f, o(2), mask);
                let vc = self.gather(&snap, f, o(3), mask);
                if let Some(d) = dst.and_then(|d| row_mut(&mut f.regs, d)) {
                    each_lane(d, mask, |lane| {
                        let $a = at(&va, lane);
                        let $b = at(&vb, lane);
                        let $c = at(&vc, lane);
                        $e
                    });
                }
                return Ok(Flow::Next);
            }};
        }
        let rnd = inst.rnd;
        let ftz = inst.ftz;
        let sat = inst.sat;
        match inst.op {
            Op::Nop => {
                if let Some(o) = self.obs.as_deref_mut() {
                    observe_nop(o, inst, w.id, mask);
                }
                Ok(Flow::Next)
            }
            Op::Mov => {
                let f = frame!();
                match (o(0), o(1)) {
                    (Opd::Reg(d), Opd::Vector(parts)) => {
                        // pack
                        let n = parts.len().max(1) as u32;
                        let pb = bits / n;
                        for lane in lanes(mask) {
                            let mut v = 0u64;
                            for (k, p) in parts.iter().enumerate() {
                                v |= (self.val(&snap, f, p, lane) & mask_of(pb)) << (pb * k as u32);
                            }
                            rset(&mut f.regs, *d, lane, v);
                        }
                    }
                    (Opd::Vector(parts), src) => {
                        let n = parts.len().max(1) as u32;
                        let pb = bits / n;
                        for lane in lanes(mask) {
                            let v = self.val(&snap, f, src, lane);
                            for (k, p) in parts.iter().enumerate() {
                                if let Opd::Reg(r) = p {
                                    rset(&mut f.regs, *r, lane, (v >> (pb * k as u32)) & mask_of(pb));
                                }
                            }
                        }
                    }
                    (Opd::Reg(d), src) => {
                        let mkp = if ty.k == K::Pred { 1 } else { mk };
                        let v = self.gather(&snap, f, src, mask);
                        if let Some(d) = row_mut(&mut f.regs, *d) {
                            each_lane(d, mask, |lane| at(&v, lane) & mkp);
                        }
                    }
                    _ => {}
                }
                Ok(Flow::Next)
            }
            // f32 in round-to-nearest: the host's IEEE arithmetic, NaNs made canonical.
            Op::Add | Op::Sub | Op::Mul(_) if ty.k == K::F && bits == 32 && rnd == Rnd::Rn && !ftz && !sat => {
                let op = match inst.op {
                    Op::Add => FOp::Add,
                    Op::Sub => FOp::Sub,
                    _ => FOp::Mul,
                };
                alu!(|a, b| f32_rn(op, a, b))
            }
            Op::Add | Op::Sub if ty.is_float() => {
                let fop = if inst.op == Op::Add { FOp::Add } else { FOp::Sub };
                alu!(|a, b| fbin(ty, fop, a, b, rnd, ftz, sat))
            }
            Op::Mul(_) if ty.is_float() => alu!(|a, b| fbin(ty, FOp::Mul, a, b, rnd, ftz, sat)),
            Op::Div if ty.is_float() => {
                if inst.approx && ty.bits == 32 {
                    let full = inst.full;
                    alu!(|a, b| u64::from(approx::div_f32(a as u32, b as u32, full, ftz)))
                } else {
                    alu!(|a, b| fbin(ty, FOp::Div, a, b, rnd, ftz, sat))
                }
            }
            Op::Fma | Op::Mad(_)
                if ty.k == K::F && bits == 32 && rnd == Rnd::Rn && !ftz && !sat && inst.neg == Negated::Neither =>
            {
                let f = frame!();
                let va = self.gather(&snap, f, o(1), mask);
                let vb = self.gather(&snap, f, o(2), mask);
                let vc = self.gather(&snap, f, o(3), mask);
                if let Some(d) = dst.and_then(|d| row_mut(&mut f.regs, d)) {
                    fma_f32(&va, &vb, &vc, mask, d);
                }
                Ok(Flow::Next)
            }
            Op::Fma | Op::Mad(_) if ty.is_float() => {
                let sign = 1u64 << (bits.clamp(1, 64) - 1);
                let negated = |n: Negated| if inst.neg == n { sign } else { 0 };
                let (na, nc) = (negated(Negated::Factor), negated(Negated::Addend));
                alu!(|a, b, c| ffma(ty, a ^ na, b, c ^ nc, rnd, ftz, sat))
            }
            Op::Add => {
                if inst.cc {
                    return self.carry_op(w, inst, mask, false, false);
                }
                if sat && signed {
                    alu!(|a, b| (sext(a, 32).saturating_add(sext(b, 32)).clamp(i32::MIN as i64, i32::MAX as i64)
                        as u64)
                        & mk)
                }
                alu!(|a, b| a.wrapping_add(b) & mk)
            }
            Op::Sub => {
                if inst.cc {
                    return self.carry_op(w, inst, mask, true, false);
                }
                if sat && signed {
                    alu!(|a, b| (sext(a, 32).saturating_sub(sext(b, 32)).clamp(i32::MIN as i64, i32::MAX as i64)
                        as u64)
                        & mk)
                }
                alu!(|a, b| a.wrapping_sub(b) & mk)
            }
            Op::Addc => self.carry_op(w, inst, mask, false, true),
            Op::Subc => self.carry_op(w, inst, mask, true, true),
            Op::Mul(mode) => match mode {
                MulMode::Lo => alu!(|a, b| a.wrapping_mul(b) & mk),
                MulMode::Hi => alu!(|a, b| mul_hi(a, b, bits, signed)),
                MulMode::Wide => alu!(|a, b| mul_wide(a, b, bits, signed)),
            },
            Op::Mad(mode) => {
                if inst.cc {
                    return self.mad_cc(w, inst, mask, mode, false);
                }
                match mode {
                    MulMode::Lo => alu!(|a, b, c| a.wrapping_mul(b).wrapping_add(c) & mk),
                    MulMode::Hi => {
                        if sat {
                            alu!(|a, b, c| {
                                let p = (i128::from(sext(a, 32)) * i128::from(sext(b, 32))) >> 32;
                                ((p + i128::from(sext(c, 32))).clamp(i32::MIN as i128, i32::MAX as i128) as u64) & mk
                            })
                        }
                        alu!(|a, b, c| mul_hi(a, b, bits, signed).wrapping_add(c) & mk)
                    }
                    MulMode::Wide => alu!(|a, b, c| mul_wide(a, b, bits, signed).wrapping_add(c) & mask_of(bits * 2)),
                }
            }
            Op::Madc(mode) => self.mad_cc(w, inst, mask, mode, true),
            Op::Mul24(half) => {
                let hi = half == Half::Hi;
                alu!(|a, b| {
                    let (x, y) = if signed {
                        (sext(a, 24) as i128, sext(b, 24) as i128)
                    } else {
                        ((a & 0xff_ffff) as i128, (b & 0xff_ffff) as i128)
                    };
                    let p = (x * y) as u64;
                    if hi {
                        (p >> 16) & mk
                    } else {
                        p & mk
                    }
                })
            }
            Op::Mad24(half) => {
                let hi = half == Half::Hi;
                alu!(|a, b, c| {
                    let (x, y) = if signed {
                        (sext(a, 24) as i128, sext(b, 24) as i128)
                    } else {
                        ((a & 0xff_ffff) as i128, (b & 0xff_ffff) as i128)
                    };
                    let p = (x * y) as u64;
                    if sat && signed {
                        // mad24.hi.sat.s32: the product's bits 47..16 as an s32, plus c, clamped.
                        let t = i64::from((if hi { p >> 16 } else { p }) as u32 as i32);
                        let sum = t + i64::from(c as u32 as i32);
                        sat_s32(sum)
                    } else {
                        (if hi { p >> 16 } else { p }).wrapping_add(c) & mk
                    }
                })
            }
            Op::Div => alu!(|a, b| int_div(a, b, bits, signed, false)),
            Op::Rem => alu!(|a, b| int_div(a, b, bits, signed, true)),
            Op::Min | Op::Max if ty.is_float() => {
                let max = inst.op == Op::Max;
                let nan = inst.nan;
                alu!(|a, b| fminmax(ty, a, b, max, nan, ftz))
            }
            Op::Min | Op::Max => {
                let max = inst.op == Op::Max;
                alu!(|a, b| {
                    let r = if signed {
                        let (x, y) = (sext(a, bits), sext(b, bits));
                        (if max { x.max(y) } else { x.min(y) }) as u64
                    } else {
                        let (x, y) = (a & mk, b & mk);
                        if max {
                            x.max(y)
                        } else {
                            x.min(y)
                        }
                    };
                    r & mk
                })
            }
            Op::Abs if ty.is_float() => alu!(|a| fabs_neg(ty, a, false, ftz)),
            Op::Neg if ty.is_float() => alu!(|a| fabs_neg(ty, a, true, ftz)),
            Op::Abs => alu!(|a| (sext(a, bits).wrapping_abs() as u64) & mk),
            Op::Neg => alu!(|a| (sext(a, bits).wrapping_neg() as u64) & mk),
            Op::Shl => alu!(|a, b| shl(a, b, bits)),
            Op::Shr => alu!(|a, b| shr(a, b, bits, signed)),
            Op::Shf(Funnel { dir, amount }) => alu!(|a, b, c| {
                let n = match amount {
                    FunnelAmount::Clamp => (c & 0xffff_ffff).min(32),
                    FunnelAmount::Wrap => c & 31,
                };
                let v = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
                if dir == FunnelDir::Left {
                    ((v << n) >> 32) & 0xffff_ffff
                } else {
                    (v >> n) & 0xffff_ffff
                }
            }),
            Op::And if ty.k == K::Pred => alu!(|a, b| a & b & 1),
            Op::Or if ty.k == K::Pred => alu!(|a, b| (a | b) & 1),
            Op::Xor if ty.k == K::Pred => alu!(|a, b| (a ^ b) & 1),
            Op::Not if ty.k == K::Pred => alu!(|a| (!a) & 1),
            Op::And => alu!(|a, b| a & b & mk),
            Op::Or => alu!(|a, b| (a | b) & mk),
            Op::Xor => alu!(|a, b| (a ^ b) & mk),
            Op::Not => alu!(|a| !a & mk),
            Op::Cnot => alu!(|a| u64::from(a & mk == 0)),
            Op::Lop3 => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                for lane in lanes(mask) {
                    let a = self.val(&snap, f, o(1), lane);
                    let b = self.val(&snap, f, o(2), lane);
                    let c = self.val(&snap, f, o(3), lane);
                    let lut = self.val(&snap, f, o(4), lane) & 0xff;
                    let mut r = 0u64;
                    for i in 0..8 {
                        if lut >> i & 1 == 1 {
                            let ma = if i & 4 != 0 { a } else { !a };
                            let mb = if i & 2 != 0 { b } else { !b };
                            let mc = if i & 1 != 0 { c } else { !c };
                            r |= ma & mb & mc;
                        }
                    }
                    rset(&mut f.regs, d, lane, r & mk);
                }
                Ok(Flow::Next)
            }
            Op::Popc => alu!(|a| u64::from((a & mk).count_ones())),
            Op::Clz => alu!(|a| u64::from((a & mk).leading_zeros() - (64 - bits))),
            Op::Bfind(mode) => alu!(|a| {
                let v = if signed && sext(a, bits) < 0 { !a & mk } else { a & mk };
                if v == 0 {
                    0xffff_ffff
                } else {
                    let msb = 63 - u64::from(v.leading_zeros());
                    if mode == BfindMode::ShiftAmount {
                        u64::from(bits) - 1 - msb
                    } else {
                        msb
                    }
                }
            }),
            Op::Brev => alu!(|a| (a.reverse_bits() >> (64 - bits.clamp(1, 64))) & mk),
            Op::Bfe => alu!(|a, b, c| {
                // 32-bit: position and length are bits 7..0 of b and c; 64-bit: all 32 bits
                // (the instruction suite's recording: 0x80000001 is past the end, not 1).
                let field = |v: u64| if bits == 64 { (v & 0xffff_ffff).min(255) as u32 } else { (v & 0xff) as u32 };
                let (pos, len) = (field(b), field(c));
                let msb = if signed {
                    if len == 0 {
                        false
                    } else {
                        let p = (pos + len - 1).min(bits - 1);
                        a >> p & 1 == 1
                    }
                } else {
                    false
                };
                let mut r = 0u64;
                for i in 0..bits {
                    let bit = if i < len && pos + i < bits { a >> (pos + i) & 1 == 1 } else { msb };
                    if bit {
                        r |= 1 << i;
                    }
                }
                r & mk
            }),
            Op::Bfi => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                for lane in lanes(mask) {
                    let a = self.val(&snap, f, o(1), lane);
                    let b = self.val(&snap, f, o(2), lane);
                    let pos = (self.val(&snap, f, o(3), lane) & 0xff) as u32;
                    let len = (self.val(&snap, f, o(4), lane) & 0xff) as u32;
                    let mut r = b;
                    for i in 0..len {
                        if pos + i >= bits {
                            break;
                        }
                        r = (r & !(1 << (pos + i))) | ((a >> i & 1) << (pos + i));
                    }
                    rset(&mut f.regs, d, lane, r & mk);
                }
                Ok(Flow::Next)
            }
            Op::Prmt(mode) => alu!(|a, b, c| prmt(a, b, c, mode)),
            Op::Dp4a => {
                let us = ty.k != K::S;
                let ut = inst.ty2.k != K::S;
                alu!(|a, b, c| {
                    let mut acc = c as i64;
                    for i in 0..4 {
                        let x = (a >> (8 * i)) & 0xff;
                        let y = (b >> (8 * i)) & 0xff;
                        let x = if us { x as i64 } else { sext(x, 8) };
                        let y = if ut { y as i64 } else { sext(y, 8) };
                        acc = acc.wrapping_add(x * y);
                    }
                    (acc as u64) & 0xffff_ffff
                })
            }
            Op::Dp2a(half) => {
                let hi = half == Half::Hi;
                let us = ty.k != K::S;
                let ut = inst.ty2.k != K::S;
                alu!(|a, b, c| {
                    let mut acc = c as i64;
                    for i in 0..2 {
                        let x = (a >> (16 * i)) & 0xffff;
                        let y = (b >> (8 * (i + if hi { 2 } else { 0 }))) & 0xff;
                        let x = if us { x as i64 } else { sext(x, 16) };
                        let y = if ut { y as i64 } else { sext(y, 8) };
                        acc = acc.wrapping_add(x * y);
                    }
                    (acc as u64) & 0xffff_ffff
                })
            }
            Op::Video(v) => {
                if ops.len() > 3 {
                    alu!(|a, b, c| u64::from(v.eval(a as u32, b as u32, c as u32)))
                } else {
                    alu!(|a, b| u64::from(v.eval(a as u32, b as u32, 0)))
                }
            }
            Op::Sad => alu!(|a, b, c| {
                let diff = if signed { sext(a, bits).abs_diff(sext(b, bits)) } else { (a & mk).abs_diff(b & mk) };
                c.wrapping_add(diff) & mk
            }),
            Op::Setp => {
                let f = frame!();
                let (p, q) = dest_and_predicate(o(0));
                let va = self.gather(&snap, f, o(1), mask);
                let vb = self.gather(&snap, f, o(2), mask);
                let vc = if inst.bop != BoolOp::None { self.gather(&snap, f, o(3), mask) } else { [0; WARP] };
                let comb = |x: bool, c: u64| match inst.bop {
                    BoolOp::And => x && c & 1 == 1,
                    BoolOp::Or => x || c & 1 == 1,
                    BoolOp::Xor => x ^ (c & 1 == 1),
                    BoolOp::None => x,
                };
                // One comparison per lane: `t` and `!t` combined with `c` give both results.
                let mut t = [0u64; WARP];
                if ty.is_float() {
                    each_lane(&mut t, mask, |lane| u64::from(compare(ty, inst.cmp, at(&va, lane), at(&vb, lane), ftz)));
                } else {
                    let cmp = inst.cmp;
                    each_lane(&mut t, mask, |lane| u64::from(compare_int(ty, cmp, at(&va, lane), at(&vb, lane))));
                }
                if let Some(p) = row_mut(&mut f.regs, p) {
                    each_lane(p, mask, |lane| u64::from(comb(at(&t, lane) != 0, at(&vc, lane))));
                }
                if let Some(q) = q.and_then(|q| row_mut(&mut f.regs, q)) {
                    each_lane(q, mask, |lane| u64::from(comb(at(&t, lane) == 0, at(&vc, lane))));
                }
                Ok(Flow::Next)
            }
            Op::Set => {
                let cty = inst.ty2;
                let dty = ty;
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                for lane in lanes(mask) {
                    let a = self.val(&snap, f, o(1), lane);
                    let b = self.val(&snap, f, o(2), lane);
                    let mut t = compare(cty, inst.cmp, a, b, ftz);
                    if inst.bop != BoolOp::None {
                        let c = self.val(&snap, f, o(3), lane) & 1 == 1;
                        t = match inst.bop {
                            BoolOp::And => t && c,
                            BoolOp::Or => t || c,
                            BoolOp::Xor => t ^ c,
                            BoolOp::None => t,
                        };
                    }
                    let v = if dty.k == K::F {
                        if t {
                            u64::from(1.0f32.to_bits())
                        } else {
                            0
                        }
                    } else if t {
                        mask_of(dty.bits)
                    } else {
                        0
                    };
                    rset(&mut f.regs, d, lane, v);
                }
                Ok(Flow::Next)
            }
            Op::Selp => alu!(|a, b, c| if c & 1 == 1 { a } else { b }),
            Op::Slct => {
                let cty = inst.ty2;
                alu!(|a, b, c| {
                    let c = if ftz { Fmt::F32.ftz(c & 0xffff_ffff) } else { c };
                    let ge = if cty.k == K::F { f32::from_bits(c as u32) >= 0.0 } else { sext(c, 32) >= 0 };
                    if ge {
                        a
                    } else {
                        b
                    }
                })
            }
            Op::Cvt => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                let sty = inst.ty2;
                let irnd = inst.irnd;
                let has_rnd = inst.has_rnd;
                if (ty.k == K::F16x2 || ty.k == K::Bf16x2) && ops.len() >= 3 {
                    for lane in lanes(mask) {
                        let a = self.val(&snap, f, o(1), lane);
                        let b = self.val(&snap, f, o(2), lane);
                        let fmt = ty.fmt();
                        let hi = cvt_f(a, sty, fmt, rnd, sat);
                        let lo = cvt_f(b, sty, fmt, rnd, sat);
                        rset(&mut f.regs, d, lane, (hi << 16) | lo);
                    }
                    return Ok(Flow::Next);
                }
                for lane in lanes(mask) {
                    let a = self.val(&snap, f, o(1), lane);
                    rset(&mut f.regs, d, lane, cvt(a, ty, sty, rnd, irnd, has_rnd, ftz, sat));
                }
                Ok(Flow::Next)
            }
            Op::Cvta { to, sp } => {
                let window = cvta_window(sp);
                alu!(|a| cvta(a, window, to, mk))
            }
            Op::Isspacep(sp) => alu!(|a| {
                let (s, _) = resolve(Sp::Generic, a);
                u64::from(match sp {
                    Sp::Global | Sp::Const => s == Sp::Generic,
                    other => s == other,
                })
            }),
            Op::Sqrt | Op::Rcp | Op::Rsqrt | Op::Ex2 | Op::Lg2 | Op::Sin | Op::Cos | Op::Tanh => {
                let op = inst.op;
                let is_approx = inst.approx || !matches!(op, Op::Sqrt | Op::Rcp) || !inst.has_rnd;
                alu!(|a| unary_float(op, ty, a, rnd, ftz, is_approx))
            }
            Op::Copysign => alu!(|a, b| {
                let sb = 1u64 << (bits.clamp(1, 64) - 1);
                (b & !sb & mk) | (a & sb)
            }),
            Op::Testp(kind) => alu!(|a| {
                let v = float_value(ty, a);
                let fmt_sub = match ty.bits {
                    64 => f64::from_bits(a).is_subnormal(),
                    _ => ty.fmt().is_subnormal(a),
                };
                u64::from(match kind {
                    TestpKind::Finite => v.is_finite(),
                    TestpKind::Infinite => v.is_infinite(),
                    TestpKind::Number => !v.is_nan(),
                    TestpKind::NotANumber => v.is_nan(),
                    // The GPU counts zeros as normal (the instruction suite's recording).
                    TestpKind::Normal => v.is_finite() && !fmt_sub,
                    TestpKind::Subnormal => fmt_sub,
                })
            }),
            Op::Ld => self.ld_st(w, inst, mask, true),
            Op::Tex { .. } | Op::Tld4(_) | Op::TexQuery(_) | Op::Suld { .. } | Op::Sust { .. } => {
                self.texture_inst(w, inst, mask)
            }
            Op::St => self.ld_st(w, inst, mask, false),
            Op::Atom(a) => self.atom(w, inst, mask, a, true),
            Op::Red(a) => self.atom(w, inst, mask, a, false),
            Op::Bra => {
                let target = match o(0) {
                    Opd::Label(l) => *l,
                    _ => pc + 1,
                };
                let f = frame!();
                for lane in lanes(mask) {
                    if let Some(x) = f.pc.get_mut(lane) {
                        *x = target;
                    }
                }
                Ok(Flow::Jumped)
            }
            Op::Exit => {
                w.exited |= mask;
                Ok(Flow::Jumped)
            }
            Op::Ret => {
                let depth = w.frames.len();
                let f = frame!();
                if depth == 1 {
                    w.exited |= mask;
                } else {
                    f.returned |= mask;
                }
                Ok(Flow::Jumped)
            }
            Op::Trap => Err(Fault::Trap { line: inst.line }),
            Op::Call => self.call(w, inst, mask, pc),
            Op::Bar { arrive, red } => {
                let f = frame!();
                let lane0 = mask.trailing_zeros() as usize;
                let reduces = red.is_some();
                let id = (self.val(&snap, f, o(if reduces { 1 } else { 0 }), lane0) & 15) as u8;
                let count_op = if reduces {
                    if ops.len() >= 4 {
                        Some(o(2))
                    } else {
                        None
                    }
                } else {
                    ops.get(1)
                };
                let expected = count_op.map_or(0, |c| self.val(&snap, f, c, lane0) as u32);
                let _ = self.nthreads;
                let pred_op = ops.last().unwrap_or(&Opd::Sink);
                let mut preds = 0u32;
                if reduces {
                    for lane in lanes(mask) {
                        if self.val(&snap, f, pred_op, lane) & 1 == 1 {
                            preds |= 1 << lane;
                        }
                    }
                }
                let st = self.bars.get_mut(id as usize).ok_or(Fault::Trap { line: inst.line })?;
                st.arrived = st.arrived.saturating_add(mask.count_ones());
                if expected != 0 {
                    st.expected = expected;
                }
                if let Some(red) = red {
                    if st.arrived == mask.count_ones() {
                        st.and = true;
                    }
                    for lane in lanes(mask) {
                        let p = preds >> lane & 1 == 1;
                        st.popc += u32::from(p);
                        st.and &= p;
                        st.or |= p;
                    }
                    if let Opd::Reg(d) = o(0) {
                        w.red_dst = Some((*d, red));
                    }
                }
                for lane in lanes(mask) {
                    if let Some(x) = f.pc.get_mut(lane) {
                        *x = pc + 1;
                    }
                }
                if !arrive {
                    w.waiting |= mask;
                    for lane in lanes(mask) {
                        if let Some(x) = w.wait_bar.get_mut(lane) {
                            *x = id;
                        }
                    }
                }
                Ok(Flow::Jumped)
            }
            Op::Activemask => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                for lane in lanes(mask) {
                    rset(&mut f.regs, d, lane, u64::from(mask));
                }
                Ok(Flow::Next)
            }
            Op::Shfl(mode) => {
                let f = frame!();
                let (d, p) = dest_and_predicate(o(0));
                let mut out = [(0u64, false); WARP];
                for lane in lanes(mask) {
                    let bval = (self.val(&snap, f, o(2), lane) & 31) as i32;
                    let c = self.val(&snap, f, o(3), lane) as u32;
                    let cval = (c & 31) as i32;
                    let segmask = ((c >> 8) & 31) as i32;
                    let l = lane as i32;
                    let max_lane = (l & segmask) | (cval & !segmask);
                    let min_lane = l & segmask;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = l - bval;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = l + bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = l ^ bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let src = if pval { j as usize } else { lane };
                    let v = self.val(&snap, f, o(1), src);
                    if let Some(x) = out.get_mut(lane) {
                        *x = (v & 0xffff_ffff, pval);
                    }
                }
                for lane in lanes(mask) {
                    let (v, pv) = out.get(lane).copied().unwrap_or((0, false));
                    rset(&mut f.regs, d, lane, v);
                    if let Some(p) = p {
                        rset(&mut f.regs, p, lane, u64::from(pv));
                    }
                }
                Ok(Flow::Next)
            }
            Op::Vote(mode) => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                let lane0 = mask.trailing_zeros() as usize;
                let member = if ops.len() >= 3 { self.val(&snap, f, o(2), lane0) as u32 } else { mask };
                let group = mask & member;
                let mut ballot = 0u32;
                for lane in lanes(group) {
                    if self.val(&snap, f, o(1), lane) & 1 == 1 {
                        ballot |= 1 << lane;
                    }
                }
                let r = match mode {
                    VoteMode::All => u64::from(ballot == group),
                    VoteMode::Any => u64::from(ballot != 0),
                    VoteMode::Uni => u64::from(ballot == group || ballot == 0),
                    VoteMode::Ballot => u64::from(ballot),
                };
                for lane in lanes(mask) {
                    rset(&mut f.regs, d, lane, r);
                }
                Ok(Flow::Next)
            }
            Op::Match(mode) => {
                let all = mode == MatchMode::All;
                let f = frame!();
                let (d, p) = dest_and_predicate(o(0));
                let lane0 = mask.trailing_zeros() as usize;
                let member = self.val(&snap, f, o(2), lane0) as u32 & mask;
                let mut vals = [0u64; WARP];
                for lane in lanes(member) {
                    if let Some(x) = vals.get_mut(lane) {
                        *x = self.val(&snap, f, o(1), lane) & mk;
                    }
                }
                for lane in lanes(mask) {
                    let mine = vals.get(lane).copied().unwrap_or(0);
                    let mut same = 0u32;
                    for other in lanes(member) {
                        if vals.get(other).copied() == Some(mine) {
                            same |= 1 << other;
                        }
                    }
                    if all {
                        let ok = same == member;
                        rset(&mut f.regs, d, lane, if ok { u64::from(member) } else { 0 });
                        if let Some(p) = p {
                            rset(&mut f.regs, p, lane, u64::from(ok));
                        }
                    } else {
                        rset(&mut f.regs, d, lane, u64::from(same));
                    }
                }
                Ok(Flow::Next)
            }
            Op::Redux(kind) => {
                let f = frame!();
                let d = dst.unwrap_or(u32::MAX);
                let lane0 = mask.trailing_zeros() as usize;
                let member = self.val(&snap, f, o(2), lane0) as u32 & mask;
                let mut acc: Option<u64> = None;
                for lane in lanes(member) {
                    let v = self.val(&snap, f, o(1), lane) & 0xffff_ffff;
                    acc = Some(match acc {
                        None => v,
                        Some(a) => match kind {
                            ReduxOp::Add => a.wrapping_add(v) & 0xffff_ffff,
                            ReduxOp::Min | ReduxOp::Max => {
                                let pick_max = kind == ReduxOp::Max;
                                if signed {
                                    let (x, y) = (sext(a, 32), sext(v, 32));
                                    (if pick_max { x.max(y) } else { x.min(y) } as u64) & 0xffff_ffff
                                } else if pick_max {
                                    a.max(v)
                                } else {
                                    a.min(v)
                                }
                            }
                            ReduxOp::And => a & v,
                            ReduxOp::Or => a | v,
                            ReduxOp::Xor => a ^ v,
                        },
                    });
                }
                for lane in lanes(mask) {
                    rset(&mut f.regs, d, lane, acc.unwrap_or(0));
                }
                Ok(Flow::Next)
            }
            _ => Err(Fault::Trap { line: inst.line }),
        }
    }

    fn carry_op(&mut self, w: &mut Warp, inst: &Inst, mask: u32, sub: bool, use_carry: bool) -> Result<Flow, Fault> {
        let bits = inst.ty.bits;
        let mk = mask_of(bits);
        let snap = WarpSnap { id: w.id, clock: w.clock };
        let mut carry = w.carry;
        let Some(f) = w.frames.last_mut() else { return Ok(Flow::Next) };
        let d = match inst.ops.first() {
            Some(Opd::Reg(r)) => *r,
            _ => u32::MAX,
        };
        for lane in lanes(mask) {
            let a = u128::from(self.val(&snap, f, inst.ops.get(1).unwrap_or(&Opd::Sink), lane) & mk);
            let b = u128::from(self.val(&snap, f, inst.ops.get(2).unwrap_or(&Opd::Sink), lane) & mk);
            let cin = if use_carry { u128::from(carry >> lane & 1) } else { 0 };
            let (r, c) = if sub {
                let r = a.wrapping_sub(b).wrapping_sub(cin);
                (r, a < b + cin)
            } else {
                let r = a + b + cin;
                (r, (r >> bits) & 1 == 1)
            };
            rset(&mut f.regs, d, lane, (r as u64) & mk);
            if inst.cc {
                if c {
                    carry |= 1 << lane;
                } else {
                    carry &= !(1 << lane);
                }
            }
        }
        w.carry = carry;
        Ok(Flow::Next)
    }

    fn mad_cc(&mut self, w: &mut Warp, inst: &Inst, mask: u32, mode: MulMode, use_carry: bool) -> Result<Flow, Fault> {
        let bits = inst.ty.bits;
        let signed = inst.ty.k == K::S;
        let mk = mask_of(bits);
        let snap = WarpSnap { id: w.id, clock: w.clock };
        let mut carry = w.carry;
        let Some(f) = w.frames.last_mut() else { return Ok(Flow::Next) };
        let d = match inst.ops.first() {
            Some(Opd::Reg(r)) => *r,
            _ => u32::MAX,
        };
        for lane in lanes(mask) {
            let a = self.val(&snap, f, inst.ops.get(1).unwrap_or(&Opd::Sink), lane);
            let b = self.val(&snap, f, inst.ops.get(2).unwrap_or(&Opd::Sink), lane);
            let c = u128::from(self.val(&snap, f, inst.ops.get(3).unwrap_or(&Opd::Sink), lane) & mk);
            let p = u128::from(match mode {
                MulMode::Lo => a.wrapping_mul(b) & mk,
                MulMode::Hi => mul_hi(a, b, bits, signed),
                MulMode::Wide => mul_wide(a, b, bits, signed),
            });
            let cin = if use_carry { u128::from(carry >> lane & 1) } else { 0 };
            let r = p + c + cin;
            rset(&mut f.regs, d, lane, (r as u64) & mk);
            if inst.cc {
                if (r >> bits) & 1 == 1 {
                    carry |= 1 << lane;
                } else {
                    carry &= !(1 << lane);
                }
            }
        }
        w.carry = carry;
        Ok(Flow::Next)
    }

    fn ld_st(&mut self, w: &mut Warp, inst: &Inst, mask: u32, load: bool) -> Result<Flow, Fault> {
        let ty = inst.ty;
        let es = ty.bytes().max(1);
        let n = inst.vec as usize;
        let snap = WarpSnap { id: w.id, clock: w.clock };
        let (data_op, addr_op) =
            if load { (inst.ops.first(), inst.ops.get(1)) } else { (inst.ops.get(1), inst.ops.first()) };
        let (Some(data_op), Some(addr_op)) = (data_op, addr_op) else { return Ok(Flow::Next) };
        let total = es * n;
        if n == 1 && matches!(es, 1 | 2 | 4 | 8) {
            let signed = ty.k == K::S;
            let Some(f) = w.frames.last() else { return Ok(Flow::Next) };
            let dst = match data_op {
                Opd::Reg(r) if load => Some(*r),
                _ => None,
            };
            let fix = |v: u64| loaded(v, ty.bits, signed);
            let kparam = match addr_op {
                Opd::Addr(Base::KParam(o), off) if load && inst.sp == Sp::Param => {
                    Some(o.wrapping_add(*off as u64)).filter(|&a| a < FPARAM_TAG)
                }
                _ => None,
            };
            if let Some(addr) = kparam {
                let bad = || Fault::IllegalAddress { addr, line: inst.line };
                let a = usize::try_from(addr).map_err(|_| bad())?;
                let src = self.l.kparams.get(a..a.wrapping_add(es)).ok_or_else(bad)?;
                let mut b = [0u8; 8];
                if let Some(d) = b.get_mut(..es) {
                    d.copy_from_slice(src);
                }
                let v = fix(u64::from_le_bytes(b));
                if let Some(out) = dst.and_then(|d| w.frames.last_mut().and_then(|f| row_mut(&mut f.regs, d))) {
                    each_lane(out, mask, |_| v);
                }
                return Ok(Flow::Next);
            }
            let addrs = self.gather(&snap, f, addr_op, mask);
            let data = if load { [0; WARP] } else { self.gather(&snap, f, data_op, mask) };
            // Scalars in shared memory: straight to and from the block's bytes.
            if inst.sp == Sp::Shared {
                let Some(f) = w.frames.last_mut() else { return Ok(Flow::Next) };
                let sh = self.shared.as_mut_slice();
                let r = if load {
                    let mut out = [0u64; WARP];
                    let r = match es {
                        1 => shared_load::<1>(sh, &addrs, mask, &mut out),
                        2 => shared_load::<2>(sh, &addrs, mask, &mut out),
                        4 => shared_load::<4>(sh, &addrs, mask, &mut out),
                        _ => shared_load::<8>(sh, &addrs, mask, &mut out),
                    };
                    // The lanes before a bad one have loaded: as before, their values land.
                    let done = match r {
                        Ok(()) => mask,
                        Err(lane) => mask & ((1u32 << lane) - 1),
                    };
                    if let Some(d) = dst.and_then(|d| row_mut(&mut f.regs, d)) {
                        each_lane(d, done, |lane| fix(at(&out, lane)));
                    }
                    r
                } else {
                    match es {
                        1 => shared_store::<1>(sh, &addrs, mask, &data),
                        2 => shared_store::<2>(sh, &addrs, mask, &data),
                        4 => shared_store::<4>(sh, &addrs, mask, &data),
                        _ => shared_store::<8>(sh, &addrs, mask, &data),
                    }
                };
                if let (Some(o), Ok(())) = (self.obs.as_deref_mut(), r) {
                    observe_lanes(o, inst, load, inst.sp, &addrs, mask, es, w.id);
                }
                return match r {
                    Ok(()) => Ok(Flow::Next),
                    Err(lane) => Err(Fault::IllegalAddress { addr: at(&addrs, lane), line: inst.line }),
                };
            }
            // Global memory: the embedder's, every access checked, the warp's lanes in one
            // call. A misaligned lane faults after the lanes before it have run.
            if inst.sp == Sp::Global {
                let line = inst.line;
                let mut misaligned = None;
                for lane in lanes(mask) {
                    if at(&addrs, lane) % es as u64 != 0 {
                        misaligned = Some(lane);
                        break;
                    }
                }
                let before = misaligned.map_or(mask, |m| mask & ((1u32 << m) - 1));
                let mut vals = [0u64; WARP];
                let r = if load {
                    self.l.mem.read_lanes(&addrs, before, es, &mut vals)
                } else {
                    self.l.mem.write_lanes(&addrs, before, es, &data)
                };
                if let Err(b) = r {
                    return Err(Fault::IllegalAddress { addr: b.addr, line });
                }
                if let Some(o) = self.obs.as_deref_mut() {
                    observe_lanes(o, inst, load, inst.sp, &addrs, before, es, w.id);
                }
                if let Some(out) = dst.and_then(|d| w.frames.last_mut().and_then(|f| row_mut(&mut f.regs, d))) {
                    each_lane(out, before, |lane| fix(at(&vals, lane)));
                }
                if let Some(m) = misaligned {
                    return Err(Fault::MisalignedAddress { addr: at(&addrs, m), line });
                }
                return Ok(Flow::Next);
            }
            // Loads land in `vals` first: reading local or param memory borrows the warp.
            let mut vals = [0u64; WARP];
            for lane in lanes(mask) {
                let addr = at(&addrs, lane);
                let mut b = [0u8; 8];
                if load {
                    self.read(w, inst.sp, addr, lane, b.get_mut(..es).unwrap_or(&mut []), inst.line)?;
                    if let Some(x) = vals.get_mut(lane) {
                        *x = fix(u64::from_le_bytes(b));
                    }
                } else {
                    b = at(&data, lane).to_le_bytes();
                    self.write(w, inst.sp, addr, lane, b.get(..es).unwrap_or(&[]), inst.line)?;
                }
            }
            if let Some(o) = self.obs.as_deref_mut() {
                observe_lanes(o, inst, load, inst.sp, &addrs, mask, es, w.id);
            }
            if let Some(out) = dst.and_then(|d| w.frames.last_mut().and_then(|f| row_mut(&mut f.regs, d))) {
                for lane in lanes(mask) {
                    if let Some(x) = out.get_mut(lane) {
                        *x = at(&vals, lane);
                    }
                }
            }
            return Ok(Flow::Next);
        }
        let mut buf = [0u8; 64];
        let mut seen = [0u64; WARP];
        for lane in lanes(mask) {
            let Some(f) = w.frames.last() else { break };
            let addr = self.val(&snap, f, addr_op, lane);
            if let Some(x) = seen.get_mut(lane) {
                *x = addr;
            }
            let b = buf.get_mut(..total).ok_or(Fault::Trap { line: inst.line })?;
            if load {
                self.read(w, inst.sp, addr, lane, b, inst.line)?;
                let Some(f) = w.frames.last_mut() else { break };
                for k in 0..n {
                    let reg = match data_op {
                        Opd::Vector(v) => v.get(k),
                        other => Some(other),
                    };
                    if let Some(Opd::Reg(r)) = reg {
                        let mut e = [0u8; 8];
                        if let (Some(d), Some(s)) = (e.get_mut(..es.min(8)), b.get(k * es..k * es + es.min(8))) {
                            d.copy_from_slice(s);
                        }
                        let mut v = u64::from_le_bytes(e);
                        if ty.k == K::S {
                            v = sext(v, ty.bits) as u64;
                        }
                        rset(&mut f.regs, *r, lane, v);
                    }
                }
            } else {
                for k in 0..n {
                    let op = match data_op {
                        Opd::Vector(v) => v.get(k).unwrap_or(&Opd::Sink),
                        other => other,
                    };
                    let v = self.val(&snap, f, op, lane);
                    if let Some(d) = b.get_mut(k * es..k * es + es.min(8)) {
                        d.copy_from_slice(v.to_le_bytes().get(..es.min(8)).unwrap_or(&[]));
                    }
                }
                let data: [u8; 64] = buf;
                self.write(w, inst.sp, addr, lane, data.get(..total).unwrap_or(&[]), inst.line)?;
            }
        }
        if let Some(o) = self.obs.as_deref_mut() {
            observe_lanes(o, inst, load, inst.sp, &seen, mask, total, w.id);
        }
        Ok(Flow::Next)
    }

    fn atom(&mut self, w: &mut Warp, inst: &Inst, mask: u32, aop: AtomOp, ret: bool) -> Result<Flow, Fault> {
        let ty = inst.ty;
        let size = ty.bytes().max(1);
        let bits = ty.bits;
        let mk = mask_of(bits);
        let snap = WarpSnap { id: w.id, clock: w.clock };
        let base = usize::from(ret);
        let (Some(addr_op), Some(b_op)) = (inst.ops.get(base), inst.ops.get(base + 1)) else { return Ok(Flow::Next) };
        let c_op = inst.ops.get(base + 2);
        let mut seen = [0u64; WARP];
        for lane in lanes(mask) {
            let Some(f) = w.frames.last() else { break };
            let addr = self.val(&snap, f, addr_op, lane);
            if let Some(x) = seen.get_mut(lane) {
                *x = addr;
            }
            let b = self.val(&snap, f, b_op, lane) & mk;
            let c = c_op.map_or(0, |o| self.val(&snap, f, o, lane) & mk);
            let mut op = |old: u64| -> u64 {
                let old = old & mk;
                let r = match aop {
                    AtomOp::Add => {
                        if ty.is_float() {
                            atom_fadd(ty, old, b)
                        } else {
                            old.wrapping_add(b)
                        }
                    }
                    AtomOp::Min | AtomOp::Max => {
                        let max = aop == AtomOp::Max;
                        if ty.is_float() {
                            fminmax(ty, old, b, max, false, false)
                        } else if ty.k == K::S {
                            let (x, y) = (sext(old, bits), sext(b, bits));
                            (if max { x.max(y) } else { x.min(y) }) as u64
                        } else if max {
                            old.max(b)
                        } else {
                            old.min(b)
                        }
                    }
                    AtomOp::Inc => {
                        if old >= b {
                            0
                        } else {
                            old + 1
                        }
                    }
                    AtomOp::Dec => {
                        if old == 0 || old > b {
                            b
                        } else {
                            old - 1
                        }
                    }
                    AtomOp::And => old & b,
                    AtomOp::Or => old | b,
                    AtomOp::Xor => old ^ b,
                    AtomOp::Exch => b,
                    AtomOp::Cas => {
                        if old == b {
                            c
                        } else {
                            old
                        }
                    }
                };
                r & mk
            };
            let old = self.atomic(w, inst.sp, addr, lane, size, inst.line, &mut op)?;
            if ret {
                if let (Some(Opd::Reg(d)), Some(f)) = (inst.ops.first(), w.frames.last_mut()) {
                    let v = if ty.k == K::S { sext(old, bits) as u64 } else { old & mk };
                    rset(&mut f.regs, *d, lane, v);
                }
            }
        }
        if let Some(o) = self.obs.as_deref_mut() {
            observe_atomics(o, inst, inst.sp, &seen, mask, size, w.id);
        }
        Ok(Flow::Next)
    }

    fn call(&mut self, w: &mut Warp, inst: &Inst, mask: u32, pc: u32) -> Result<Flow, Fault> {
        let m = self.l.m;
        let fpos = inst.ops.iter().position(|o| matches!(o, Opd::Func(_))).unwrap_or(0);
        let Some(Opd::Func(fi)) = inst.ops.get(fpos) else { return Ok(Flow::Next) };
        let Some(callee) = m.funcs.get(*fi as usize) else { return Ok(Flow::Next) };
        let args: &[Opd] = match inst.ops.get(fpos + 1) {
            Some(Opd::List(a)) => a,
            _ => &[],
        };
        let snap = WarpSnap { id: w.id, clock: w.clock };
        // Argument bytes per lane from the caller.
        let arg_bytes = |this: &Self, f: &Frame, k: usize, lane: usize, size: usize| -> Vec<u8> {
            match args.get(k) {
                Some(Opd::SymAddr(Base::FParam(off), _)) => {
                    let at = lane * f.psize + *off as usize;
                    f.params.get(at..at + size).map(<[u8]>::to_vec).unwrap_or_else(|| vec![0; size])
                }
                Some(o) => {
                    let v = this.val(&snap, f, o, lane).to_le_bytes();
                    let mut out = v.to_vec();
                    out.resize(size, 0);
                    out
                }
                None => vec![0; size],
            }
        };
        if let Some(b) = callee.builtin {
            let Some(f) = w.frames.last() else { return Ok(Flow::Next) };
            match b {
                Builtin::Vprintf => {
                    let mut outs = Vec::new();
                    for lane in lanes(mask) {
                        let fmt_addr = u64::from_le_bytes(arg_bytes(self, f, 0, lane, 8).try_into().unwrap_or([0; 8]));
                        let args_addr = u64::from_le_bytes(arg_bytes(self, f, 1, lane, 8).try_into().unwrap_or([0; 8]));
                        let fmt = self.read_cstr(w, fmt_addr, lane);
                        let text = self.format(w, &fmt, args_addr, lane);
                        outs.push((lane, text));
                    }
                    for (_, t) in &outs {
                        self.l.mem.printf(t);
                    }
                    if let (Some(Opd::List(rets)), Some(f)) = (inst.ops.first(), w.frames.last_mut()) {
                        if let Some(Opd::SymAddr(Base::FParam(off), _)) = rets.first() {
                            for (lane, t) in &outs {
                                let at = lane * f.psize + *off as usize;
                                if let Some(d) = f.params.get_mut(at..at + 4) {
                                    d.copy_from_slice(&(t.len() as u32).to_le_bytes());
                                }
                            }
                        }
                    }
                }
                Builtin::AssertFail => {
                    let lane = mask.trailing_zeros() as usize;
                    let rd = |k: usize| u64::from_le_bytes(arg_bytes(self, f, k, lane, 8).try_into().unwrap_or([0; 8]));
                    let line_no = u32::from_le_bytes(arg_bytes(self, f, 2, lane, 4).try_into().unwrap_or([0; 4]));
                    return Err(Fault::Assert {
                        message: self.read_cstr(w, rd(0), lane),
                        file: self.read_cstr(w, rd(1), lane),
                        source_line: line_no,
                        function: self.read_cstr(w, rd(3), lane),
                    });
                }
            }
            return Ok(Flow::Next);
        }
        if callee.code.is_empty() {
            return Err(Fault::InvalidLaunch(format!("call to {} which has no body", callee.name)));
        }
        let local_base = w.local_top.div_ceil(16) * 16;
        if w.frames.len() >= MAX_FRAMES || local_base.saturating_add(callee.local_size) > self.l.local_limit {
            return Err(Fault::StackOverflow { line: inst.line });
        }
        let mut nf = new_frame(&mut self.spare, callee, *fi, mask, local_base, pc);
        {
            let Some(f) = w.frames.last() else { return Ok(Flow::Next) };
            for (k, &(off, size)) in callee.params.iter().enumerate() {
                for lane in lanes(mask) {
                    let bytes = arg_bytes(self, f, k, lane, size as usize);
                    let at = lane * nf.psize + off as usize;
                    if let Some(d) = nf.params.get_mut(at..at + size as usize) {
                        d.copy_from_slice(&bytes);
                    }
                }
            }
        }
        w.local_top = local_base + callee.local_size;
        let need = w.local_top as usize;
        for lane in lanes(mask) {
            if let Some(v) = w.local.get_mut(lane) {
                if v.len() < need {
                    v.resize(need, 0);
                }
            }
        }
        if let Some(f) = w.frames.last_mut() {
            for lane in lanes(mask) {
                if let Some(x) = f.pc.get_mut(lane) {
                    *x = pc + 1;
                }
            }
        }
        nf.mask = mask;
        w.frames.push(nf);
        Ok(Flow::Jumped)
    }

    /// printf formatting of `fmt` with arguments packed at `args` (vprintf's buffer).
    fn format(&self, w: &Warp, fmt: &str, args: u64, lane: usize) -> String {
        let mut out = String::new();
        let mut off = 0u64;
        let mut it = fmt.chars().peekable();
        let mut next_arg = |size: u64| -> u64 {
            off = off.div_ceil(size) * size;
            let mut b = [0u8; 8];
            let _ = self.read(
                w,
                Sp::Generic,
                args.wrapping_add(off),
                lane,
                b.get_mut(..size as usize).unwrap_or(&mut []),
                0,
            );
            off += size;
            u64::from_le_bytes(b)
        };
        while let Some(c) = it.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let mut spec = String::new();
            while let Some(&n) = it.peek() {
                if "-+ #0123456789.*".contains(n) {
                    spec.push(n);
                    it.next();
                } else {
                    break;
                }
            }
            let mut lenmod = String::new();
            while let Some(&n) = it.peek() {
                if "hlLqjzt".contains(n) {
                    lenmod.push(n);
                    it.next();
                } else {
                    break;
                }
            }
            let Some(conv) = it.next() else { break };
            let long = lenmod.contains('l') || lenmod.contains('j') || lenmod.contains('z') || lenmod.contains('q');
            let (flags, width, prec) = parse_spec(&spec);
            let body = match conv {
                '%' => "%".to_string(),
                'd' | 'i' => {
                    let v = next_arg(if long { 8 } else { 4 });
                    let v = if long { v as i64 } else { v as u32 as i32 as i64 };
                    let mut s = v.unsigned_abs().to_string();
                    if let Some(p) = prec {
                        while s.len() < p {
                            s.insert(0, '0');
                        }
                    }
                    if v < 0 {
                        s.insert(0, '-');
                    } else if flags.contains('+') {
                        s.insert(0, '+');
                    } else if flags.contains(' ') {
                        s.insert(0, ' ');
                    }
                    s
                }
                'u' | 'x' | 'X' | 'o' => {
                    let v = next_arg(if long { 8 } else { 4 });
                    let v = if long { v } else { v & 0xffff_ffff };
                    let mut s = match conv {
                        'u' => v.to_string(),
                        'x' => format!("{v:x}"),
                        'X' => format!("{v:X}"),
                        _ => format!("{v:o}"),
                    };
                    if let Some(p) = prec {
                        while s.len() < p {
                            s.insert(0, '0');
                        }
                    }
                    if flags.contains('#') && v != 0 {
                        s.insert_str(
                            0,
                            match conv {
                                'x' => "0x",
                                'X' => "0X",
                                'o' => "0",
                                _ => "",
                            },
                        );
                    }
                    s
                }
                'c' => char::from(next_arg(4) as u8).to_string(),
                's' => {
                    let p = next_arg(8);
                    let s = self.read_cstr(w, p, lane);
                    match prec {
                        Some(pr) => s.chars().take(pr).collect(),
                        None => s,
                    }
                }
                'p' => format!("0x{:x}", next_arg(8)),
                'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                    let v = f64::from_bits(next_arg(8));
                    let s = format_float(v, conv, prec.unwrap_or(6), &flags);
                    if v >= 0.0 && flags.contains('+') {
                        format!("+{s}")
                    } else if v >= 0.0 && flags.contains(' ') {
                        format!(" {s}")
                    } else {
                        s
                    }
                }
                other => format!("%{spec}{lenmod}{other}"),
            };
            let pad = width.saturating_sub(body.chars().count());
            if flags.contains('-') {
                out.push_str(&body);
                out.extend(std::iter::repeat_n(' ', pad));
            } else if flags.contains('0')
                && !matches!(conv, 's' | 'c' | '%')
                && prec.is_none_or(|_| matches!(conv, 'f' | 'e' | 'g' | 'F' | 'E' | 'G'))
            {
                let (sign, digits) =
                    if body.starts_with(['-', '+', ' ']) { body.split_at(1) } else { ("", body.as_str()) };
                out.push_str(sign);
                out.extend(std::iter::repeat_n('0', pad));
                out.push_str(digits);
            } else {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(&body);
            }
        }
        out
    }
}

fn parse_spec(spec: &str) -> (String, usize, Option<usize>) {
    let mut flags = String::new();
    let mut rest = spec;
    while let Some(c) = rest.chars().next() {
        if "-+ #0".contains(c) {
            flags.push(c);
            rest = rest.get(1..).unwrap_or("");
        } else {
            break;
        }
    }
    let (w, p) = match rest.split_once('.') {
        Some((w, p)) => (w, Some(p.parse().unwrap_or(0))),
        None => (rest, None),
    };
    (flags, w.parse::<usize>().unwrap_or(0).min(4096), p.map(|p: usize| p.min(4096)))
}

fn format_float(v: f64, conv: char, prec: usize, flags: &str) -> String {
    if v.is_nan() {
        return if conv.is_uppercase() { "NAN".into() } else { "nan".into() };
    }
    if v.is_infinite() {
        let s = if v < 0.0 { "-inf" } else { "inf" };
        return if conv.is_uppercase() { s.to_uppercase() } else { s.into() };
    }
    match conv {
        'f' | 'F' => format!("{v:.prec$}"),
        'e' | 'E' => {
            let s = c_exp(v, prec);
            if conv == 'E' {
                s.to_uppercase()
            } else {
                s
            }
        }
        'a' | 'A' => format!("{v:e}"),
        _ => {
            // %g: precision P (0 means 1); exponent X of %e form; P > X >= -4 uses %f.
            let p = if prec == 0 { 1 } else { prec };
            let x = if v == 0.0 {
                0
            } else {
                let s = c_exp(v, p - 1);
                s.rsplit_once('e').and_then(|(_, e)| e.parse::<i32>().ok()).unwrap_or(0)
            };
            let mut s = if (p as i32) > x && x >= -4 {
                let dec = (p as i32 - 1 - x).max(0) as usize;
                format!("{v:.dec$}")
            } else {
                c_exp(v, p - 1)
            };
            if !flags.contains('#') {
                // strip trailing zeros of the fraction
                let (mant, exp) = match s.find('e') {
                    Some(i) => (s.get(..i).unwrap_or("").to_string(), s.get(i..).unwrap_or("").to_string()),
                    None => (s.clone(), String::new()),
                };
                let mant = if mant.contains('.') {
                    mant.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    mant
                };
                s = mant + &exp;
            }
            if conv == 'G' {
                s.to_uppercase()
            } else {
                s
            }
        }
    }
}

/// `%.{prec}e` as C writes it (exponent with sign and at least two digits).
fn c_exp(v: f64, prec: usize) -> String {
    let s = format!("{v:.prec$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = if let Some(d) = e.strip_prefix('-') { ('-', d) } else { ('+', e) };
            let digits = if digits.len() < 2 { format!("0{digits}") } else { digits.to_string() };
            format!("{m}e{sign}{digits}")
        }
        None => s,
    }
}

/// What `val` needs of the warp (special registers).
struct WarpSnap {
    id: u32,
    clock: u64,
}

fn mul_hi(a: u64, b: u64, bits: u32, signed: bool) -> u64 {
    let mk = mask_of(bits);
    if signed {
        let p = i128::from(sext(a, bits)) * i128::from(sext(b, bits));
        ((p >> bits) as u64) & mk
    } else {
        let p = u128::from(a & mk) * u128::from(b & mk);
        ((p >> bits) as u64) & mk
    }
}

/// The float addition of `atom.add`/`red.add`, as the GPU's recording shows: f32 flushes
/// subnormal operands and results (`add.rn.ftz.f32`); an f64 NaN operand is passed on as it
/// is, the added operand's first, not quieted; f16/bf16 (`.noftz`) round to nearest.
fn atom_fadd(ty: Ty, old: u64, b: u64) -> u64 {
    if ty.bits == 64 {
        for x in [b, old] {
            if f64::from_bits(x).is_nan() {
                return x;
            }
        }
    }
    let ftz = ty.bits == 32 && ty.k == K::F;
    fbin(ty, FOp::Add, old, b, Rnd::Rn, ftz, false)
}

/// An s32 sum clamped to the s32 range, as a 32-bit pattern.
fn sat_s32(v: i64) -> u64 {
    u64::from(v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32)
}

fn int_div(a: u64, b: u64, bits: u32, signed: bool, rem: bool) -> u64 {
    let mk = mask_of(bits);
    if signed {
        let (x, y) = (sext(a, bits), sext(b, bits));
        if y == 0 {
            // The GPU's answer for division by zero: all ones, quotient and remainder alike
            // (the instruction suite's recording).
            return mk;
        }
        let r = if rem { x.wrapping_rem(y) } else { x.wrapping_div(y) };
        (r as u64) & mk
    } else {
        let (x, y) = (a & mk, b & mk);
        if y == 0 {
            return mk;
        }
        if rem {
            x % y
        } else {
            x / y
        }
    }
}

fn prmt(a: u64, b: u64, c: u64, mode: PrmtMode) -> u64 {
    let bytes = ((b & 0xffff_ffff) << 32) | (a & 0xffff_ffff);
    let byte = |i: u64| (bytes >> (8 * (i & 7))) & 0xff;
    let mut r = 0u64;
    match mode {
        PrmtMode::Select => {
            for k in 0..4 {
                let s = (c >> (4 * k)) & 0xf;
                let mut v = byte(s & 7);
                if s & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= v << (8 * k);
            }
        }
        _ => {
            let s = c & 3;
            let sels: [u64; 4] = match mode {
                PrmtMode::F4e => [s, (s + 1) & 7, (s + 2) & 7, (s + 3) & 7],
                PrmtMode::B4e => [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7],
                PrmtMode::Rc8 => [s, s, s, s],
                // ecl: edge clamp left, byte k takes max(k, s); ecr: min(k, s)
                PrmtMode::Ecl => [0, 1, 2, 3].map(|k: u64| k.max(s)),
                PrmtMode::Ecr => [0, 1, 2, 3].map(|k: u64| k.min(s)),
                PrmtMode::Rc16 | PrmtMode::Select => [(s & 1) * 2, (s & 1) * 2 + 1, (s & 1) * 2, (s & 1) * 2 + 1],
            };
            for (k, s) in sels.iter().enumerate() {
                r |= byte(*s) << (8 * k);
            }
        }
    }
    r
}

fn float_value(ty: Ty, a: u64) -> f64 {
    if ty.bits == 64 {
        f64::from_bits(a)
    } else {
        ty.fmt().to_f64(a)
    }
}

fn halves(ty: Ty) -> bool {
    matches!(ty.k, K::F16x2 | K::Bf16x2)
}

/// A float binary op of any float type (bits in, bits out).
fn fbin(ty: Ty, op: FOp, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    if halves(ty) {
        let f = ty.fmt();
        let lo = fbin1(f, 16, op, a & 0xffff, b & 0xffff, rnd, ftz, sat);
        let hi = fbin1(f, 16, op, (a >> 16) & 0xffff, (b >> 16) & 0xffff, rnd, ftz, sat);
        return (hi << 16) | lo;
    }
    fbin1(ty.fmt(), ty.bits, op, a, b, rnd, ftz, sat)
}

#[allow(clippy::too_many_arguments)]
fn fbin1(fmt: Fmt, bits: u32, op: FOp, a: u64, b: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    if bits == 64 {
        let r = float::bin_f64(op, f64::from_bits(a), f64::from_bits(b), rnd);
        return sat64(r, sat).to_bits();
    }
    let (a, b) = if ftz { (fmt.ftz(a), fmt.ftz(b)) } else { (a & mask_of(bits), b & mask_of(bits)) };
    let mut r = float::bin_narrow(op, a, b, rnd, fmt);
    if ftz {
        r = fmt.ftz(r);
        // div.ftz.f32 (a software sequence on the GPU) flushes a quotient that is below the
        // smallest normal before rounding, where rounding up would reach it.
        if op == FOp::Div && fmt == Fmt::F32 && (fmt.to_f64(a) / fmt.to_f64(b)).abs() < f64::from(f32::MIN_POSITIVE) {
            r &= fmt.sign_bit();
        }
    }
    sat_narrow(r, fmt, sat)
}

fn sat64(r: f64, sat: bool) -> f64 {
    if !sat {
        return r;
    }
    if r.is_nan() {
        0.0
    } else {
        // -0 saturates to +0 (the instruction suite's recording).
        r.clamp(0.0, 1.0) + 0.0
    }
}

/// (exponent bits, mantissa bits) of a float type.
fn float_layout(ty: Ty) -> (u32, u32) {
    match (ty.bits, ty.fmt()) {
        (64, _) => (11, 52),
        (_, Fmt::F32) => (8, 23),
        (_, Fmt::F16) => (5, 10),
        (_, Fmt::Bf16) => (8, 7),
    }
}

/// A NaN converted between float types keeping its sign and the top of its payload, quiet:
/// what `cvt` does when f64 is one side (or bf16 to f32, or f32 to itself), as the GPU's
/// recording shows; the other conversions give the canonical NaN.
fn convert_nan(a: u64, sty: Ty, dty: Ty) -> u64 {
    let (se, sm) = float_layout(sty);
    let (de, dm) = float_layout(dty);
    let sign = (a >> (se + sm)) & 1;
    let mant = a & mask_of(sm);
    let mant = if dm >= sm { mant << (dm - sm) } else { mant >> (sm - dm) };
    (sign << (de + dm)) | (mask_of(de) << dm) | mant | (1u64 << (dm - 1))
}

fn sat_narrow(r: u64, fmt: Fmt, sat: bool) -> u64 {
    if !sat {
        return r;
    }
    let v = fmt.to_f64(r);
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= 1.0 {
        float::from_f64(1.0, Rnd::Rn, fmt)
    } else {
        r
    }
}

fn ffma(ty: Ty, a: u64, b: u64, c: u64, rnd: Rnd, ftz: bool, sat: bool) -> u64 {
    let one = |fmt: Fmt, bits: u32, a: u64, b: u64, c: u64| -> u64 {
        if bits == 64 {
            let r = float::fma_f64(f64::from_bits(a), f64::from_bits(b), f64::from_bits(c), rnd);
            return sat64(r, sat).to_bits();
        }
        let (a, b, c) = if ftz { (fmt.ftz(a), fmt.ftz(b), fmt.ftz(c)) } else { (a, b, c) };
        let mut r = float::fma_narrow(a, b, c, rnd, fmt);
        if ftz {
            r = fmt.ftz(r);
        }
        sat_narrow(r, fmt, sat)
    };
    if halves(ty) {
        let f = ty.fmt();
        let lo = one(f, 16, a & 0xffff, b & 0xffff, c & 0xffff);
        let hi = one(f, 16, (a >> 16) & 0xffff, (b >> 16) & 0xffff, (c >> 16) & 0xffff);
        return (hi << 16) | lo;
    }
    one(ty.fmt(), ty.bits, a & mask_of(ty.bits), b & mask_of(ty.bits), c & mask_of(ty.bits))
}

fn fminmax(ty: Ty, a: u64, b: u64, max: bool, nan: bool, ftz: bool) -> u64 {
    let one = |bits: u32, fmt: Fmt, a: u64, b: u64| -> u64 {
        let (x, y) = if bits == 64 {
            (f64::from_bits(a), f64::from_bits(b))
        } else {
            let (a2, b2) = if ftz { (fmt.ftz(a), fmt.ftz(b)) } else { (a, b) };
            (fmt.to_f64(a2), fmt.to_f64(b2))
        };
        let (a, b) = if ftz && bits != 64 { (fmt.ftz(a), fmt.ftz(b)) } else { (a, b) };
        if x.is_nan() || y.is_nan() {
            if bits == 64 && x.is_nan() && y.is_nan() {
                // f64: the second NaN, quieted (the instruction suite's recording).
                return b | float::QUIET64;
            }
            if nan || (x.is_nan() && y.is_nan()) {
                return fmt.nan();
            }
            return if x.is_nan() { b } else { a };
        }
        let pick_a = if x == y {
            // -0 < +0
            let a_neg = x.is_sign_negative();
            if max {
                !a_neg
            } else {
                a_neg
            }
        } else if max {
            x > y
        } else {
            x < y
        };
        if pick_a {
            a
        } else {
            b
        }
    };
    if halves(ty) {
        let f = ty.fmt();
        let lo = one(16, f, a & 0xffff, b & 0xffff);
        let hi = one(16, f, (a >> 16) & 0xffff, (b >> 16) & 0xffff);
        return (hi << 16) | lo;
    }
    one(ty.bits, ty.fmt(), a & mask_of(ty.bits), b & mask_of(ty.bits))
}

/// `abs`/`neg`: the sign bit, except for NaNs, as the GPU's recording shows: an f32, f16 or
/// bf16 NaN becomes the canonical NaN, an f64 NaN is quieted with its sign kept.
fn fabs_neg(ty: Ty, a: u64, neg: bool, ftz: bool) -> u64 {
    let one = |bits: u32, fmt: Fmt, a: u64| -> u64 {
        if bits == 64 {
            if f64::from_bits(a).is_nan() {
                return a | float::QUIET64;
            }
        } else if fmt.to_f64(a).is_nan() {
            return fmt.nan();
        }
        let a = if ftz && bits != 64 { fmt.ftz(a) } else { a };
        let sb = 1u64 << (bits.clamp(1, 64) - 1);
        if neg {
            a ^ sb
        } else {
            a & !sb
        }
    };
    if halves(ty) {
        let f = ty.fmt();
        return (one(16, f, (a >> 16) & 0xffff) << 16) | one(16, f, a & 0xffff);
    }
    one(ty.bits, ty.fmt(), a & mask_of(ty.bits))
}

#[inline]
fn compare(ty: Ty, cmp: Cmp, a: u64, b: u64, ftz: bool) -> bool {
    if ty.is_float() {
        let (x, y) = if ty.bits == 64 {
            (f64::from_bits(a), f64::from_bits(b))
        } else {
            let f = ty.fmt();
            let (a, b) = if ftz { (f.ftz(a), f.ftz(b)) } else { (a, b) };
            (f.to_f64(a), f.to_f64(b))
        };
        let un = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => !un && x == y,
            Cmp::Ne => !un && x != y,
            Cmp::Lt | Cmp::Lo => !un && x < y,
            Cmp::Le | Cmp::Ls => !un && x <= y,
            Cmp::Gt | Cmp::Hi => !un && x > y,
            Cmp::Ge | Cmp::Hs => !un && x >= y,
            Cmp::Equ => un || x == y,
            Cmp::Neu => un || x != y,
            Cmp::Ltu => un || x < y,
            Cmp::Leu => un || x <= y,
            Cmp::Gtu => un || x > y,
            Cmp::Geu => un || x >= y,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    compare_int(ty, cmp, a, b)
}

/// A float (of type `sty`, bits) converted to `fmt`.
fn cvt_f(a: u64, sty: Ty, fmt: Fmt, rnd: Rnd, sat: bool) -> u64 {
    let v = float_value(sty, a);
    sat_narrow(float::from_f64(v, rnd, fmt), fmt, sat)
}

#[allow(clippy::too_many_arguments)]
fn cvt(a: u64, dty: Ty, sty: Ty, rnd: Rnd, irnd: bool, has_rnd: bool, ftz: bool, sat: bool) -> u64 {
    let dfloat = dty.is_float();
    let sfloat = sty.is_float();
    let _ = has_rnd;
    match (dfloat, sfloat) {
        (false, false) => {
            // integer to integer: extend from the source, truncate (or saturate) to dest.
            let v: i128 = if sty.k == K::S { i128::from(sext(a, sty.bits)) } else { i128::from(a & mask_of(sty.bits)) };
            if sat {
                let (lo, hi) = if dty.k == K::S {
                    (-(1i128 << (dty.bits - 1)), (1i128 << (dty.bits - 1)) - 1)
                } else {
                    (0, (1i128 << dty.bits) - 1)
                };
                let r = (v.clamp(lo, hi) as u64) & mask_of(dty.bits);
                if dty.k == K::S {
                    sext(r, dty.bits) as u64
                } else {
                    r
                }
            } else if dty.k == K::S {
                sext(v as u64, dty.bits) as u64
            } else {
                (v as u64) & mask_of(dty.bits)
            }
        }
        (false, true) => {
            if float_value(sty, a).is_nan() {
                // NaN: 0 from a narrow float to a narrow integer, else the integer's lowest
                // signed pattern (the instruction suite's recording).
                if sty.bits < 64 && dty.bits < 64 {
                    return 0;
                }
                let low = 1u64 << (dty.bits - 1);
                return if dty.k == K::S { sext(low, dty.bits) as u64 } else { low };
            }
            let mut x = float_value(sty, if ftz && sty.bits == 32 { Fmt::F32.ftz(a) } else { a });
            if ftz && sty.bits == 64 && x.is_subnormal() {
                x = 0.0;
            }
            let r = if irnd { rnd } else { Rnd::Rz };
            let v = float::float_to_int(x, r, dty.bits, dty.k == K::S);
            if dty.k == K::S {
                sext(v, dty.bits) as u64
            } else {
                v
            }
        }
        (true, false) => {
            let v: i128 = if sty.k == K::S { i128::from(sext(a, sty.bits)) } else { i128::from(a & mask_of(sty.bits)) };
            if dty.bits == 64 {
                sat64(float::int_to_f64(v, rnd), sat).to_bits()
            } else {
                sat_narrow(float::int_to_narrow(v, rnd, dty.fmt()), dty.fmt(), sat)
            }
        }
        (true, true) => {
            let a = if ftz && sty.bits == 32 { Fmt::F32.ftz(a) } else { a & mask_of(sty.bits) };
            let x = float_value(sty, a);
            if x.is_nan() && !sat {
                let wide = dty.bits == 64 || sty.bits == 64;
                // f32 to itself and bf16 to f32 move the bits, signalling NaNs too.
                let moves =
                    !irnd && dty.bits == 32 && ((sty.bits == 32 && !ftz) || (sty.fmt() == Fmt::Bf16 && sty.bits == 16));
                if moves {
                    return if sty.bits == 32 { a } else { a << 16 };
                }
                let keeps = if irnd { dty.bits == 64 } else { wide && !(ftz && sty.bits == 32) };
                return if keeps {
                    convert_nan(a, sty, dty)
                } else if dty.bits == 64 {
                    // The source format's canonical NaN, widened.
                    convert_nan(sty.fmt().nan(), sty, dty)
                } else {
                    dty.fmt().nan()
                };
            }
            if irnd {
                // round to integral in the same format
                let r = float::round_integral(x, rnd);
                return if dty.bits == 64 {
                    sat64(r, sat).to_bits()
                } else {
                    let mut o = float::from_f64(r, Rnd::Rn, dty.fmt());
                    if ftz {
                        o = dty.fmt().ftz(o);
                    }
                    sat_narrow(o, dty.fmt(), sat)
                };
            }
            if dty.bits == 64 {
                let r = if x.is_nan() { f64::from_bits(float::NAN64) } else { x };
                sat64(r, sat).to_bits()
            } else {
                let mut o = float::from_f64(x, rnd, dty.fmt());
                if ftz {
                    o = dty.fmt().ftz(o);
                }
                sat_narrow(o, dty.fmt(), sat)
            }
        }
    }
}

fn unary_float(op: Op, ty: Ty, a: u64, rnd: Rnd, ftz: bool, is_approx: bool) -> u64 {
    let func = match op {
        Op::Sqrt => approx::Func::Sqrt,
        Op::Rcp => approx::Func::Rcp,
        Op::Rsqrt => approx::Func::Rsqrt,
        Op::Ex2 => approx::Func::Ex2,
        Op::Lg2 => approx::Func::Lg2,
        Op::Sin => approx::Func::Sin,
        Op::Cos => approx::Func::Cos,
        _ => approx::Func::Tanh,
    };
    if ty.bits == 64 {
        let x = f64::from_bits(a);
        let r = match (op, is_approx) {
            (Op::Sqrt, false) => float::sqrt_f64(x, rnd),
            (Op::Rcp, false) => float::bin_f64(FOp::Div, 1.0, x, rnd),
            (Op::Rcp | Op::Rsqrt, true) if ftz => return approx::f64_high_word(func, a),
            _ => approx::f64(func, x),
        };
        return if r.is_nan() { float::nan64(&[x], float::NanPick::First).to_bits() } else { r.to_bits() };
    }
    if halves(ty) || ty.bits == 16 {
        let f = ty.fmt();
        let one = |h: u64| match approx::half(func, f, h as u16) {
            Some(r) => u64::from(r),
            None => float::from_f64(approx::f64(func, f.to_f64(h)), Rnd::Rn, f),
        };
        if halves(ty) {
            return (one((a >> 16) & 0xffff) << 16) | one(a & 0xffff);
        }
        return one(a & 0xffff);
    }
    let f = Fmt::F32;
    let a32 = a & 0xffff_ffff;
    match (op, is_approx) {
        (Op::Sqrt, false) => {
            let x = if ftz { f.ftz(a32) } else { a32 };
            let r = float::sqrt_narrow(x, rnd, f);
            if ftz {
                f.ftz(r)
            } else {
                r
            }
        }
        (Op::Rcp, false) => {
            let x = if ftz { f.ftz(a32) } else { a32 };
            let r = float::bin_narrow(FOp::Div, u64::from(1.0f32.to_bits()), x, rnd, f);
            if ftz {
                f.ftz(r)
            } else {
                r
            }
        }
        _ => u64::from(approx::f32(func, a32 as u32, ftz)),
    }
}

/// The destination register of an instruction that may also write a predicate
/// (`shfl.sync`'s `d|p`, `match.sync`'s `d|p`; `setp`'s `p|q`): the register, and the predicate register
/// if there is one (`u32::MAX`: no register, which writes nothing).
fn dest_and_predicate(o: &Opd) -> (u32, Option<u32>) {
    match o {
        Opd::Reg(d) => (*d, None),
        Opd::Vector(v) => (
            match v.first() {
                Some(Opd::Reg(d)) => *d,
                _ => u32::MAX,
            },
            match v.get(1) {
                Some(Opd::Reg(q)) => Some(*q),
                _ => None,
            },
        ),
        _ => (u32::MAX, None),
    }
}
