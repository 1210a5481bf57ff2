//! Runs of steps compiled to machine code (feature `native`, on by default): where two or
//! more unguarded instructions of the fused forms follow one another (integer moves,
//! arithmetic, logic, shifts by a constant and `setp`; f32 add/sub/mul/fma rounded to
//! nearest; `cvta`; moves of `%tid`, `%ctaid`, `%ntid`, `%nctaid`; scalar parameter and
//! shared loads; scalar global loads and stores), [`fuse`] marks them, and once a whole
//! warp has reached them often enough Cranelift translates them into one function over a
//! warp's register rows, lane after lane (two lanes at a time in SSE registers where the
//! run touches no memory and the host's backend lowers every operation of the run for
//! them), with each value kept in a machine register from one instruction to the next
//! instead of going through its row. A converged whole warp with room for the whole run
//! (`exec.rs`'s `run_links`) calls it in place of the run's steps.
//!
//! The instructions fused are exactly those for which `compiled.rs` makes a step of the
//! same arm (`native_forms.rs`: `Pure::of` mirrors its conditions), and each computes the
//! bits that step computes (`native_emit.rs`); none reads another lane's registers, and none
//! can fault once the run's accesses are known to be inside shared memory, the parameters
//! and the memory's windows ([`crate::Windows`]), aligned, for every lane (checked before a
//! turn: `native_check.rs`, with the addresses of accesses at bases the run computes worked
//! out first by a second function of the run's, which leaves out its loads and stores; a
//! run ends before an access whose base comes from a load of it). Running the run lane
//! after lane instead of instruction after instruction then gives the same registers, and
//! the same memory where no lane's store meets another lane's access of another
//! instruction (checked too: else the steps run). `tests/native.rs`, the instruction
//! suite, the corpus and `tests/executors.rs` hold it to the interpreter.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use cranelift_codegen::ir::{types, AbiParam, Type, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Module as _};

use crate::lanes::{AddressFn, Checked, Link, NativeFn, NativeRun, NativeSlot, MAX_CHECKED};
use crate::module::{Func, Op, Opd};
use crate::native_emit::{build, build_addresses};
use crate::native_forms::{loaded, min_regs, registers, Pure, Run};

/// The JIT module that owns a run's code.
struct Code(Mutex<Option<JITModule>>);

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.0.get_mut().ok().and_then(Option::take) {
            // SAFETY: the `NativeRun` holding this code is being dropped with its only
            // pointer into it, so nothing is left to call it.
            unsafe { m.free_memory() };
        }
    }
}

/// How many times a whole warp reaches a run before the run is compiled (a run reached
/// fewer times costs less as steps than its compilation, about 0.1 ms): 256, or what
/// `CUDRV_PTX_NATIVE` says (read once): `0` compiles none (the steps alone, to compare),
/// `eager` each at its first reach (what the tests use to hold the code to the interpreter).
fn threshold() -> Option<u32> {
    static HOT: OnceLock<Option<u32>> = OnceLock::new();
    *HOT.get_or_init(|| match std::env::var("CUDRV_PTX_NATIVE").as_deref() {
        Ok("0") => None,
        Ok("eager") => Some(0),
        _ => Some(256),
    })
}

/// Replaces, in `links`, the first link of each run of two or more fusable steps of `f`
/// with a slot that compiles the run once it is hot ([`threshold`]; the steps after it
/// stay, for a warp that enters the run midway). A run the code generator refuses stays
/// as steps; so does every run on a CPU `cranelift_native` does not know.
pub(crate) fn fuse(f: &Func, links: &mut [Link]) {
    let Some(hot) = threshold() else { return };
    // A branch's target starts a run (a loop's body is entered there each turn).
    let targets: BTreeSet<usize> = f
        .code
        .iter()
        .filter(|inst| matches!(inst.op, Op::Bra))
        .filter_map(|inst| match inst.ops.first() {
            Some(Opd::Label(l)) => Some(*l as usize),
            _ => None,
        })
        .collect();
    let mut runs: Vec<(usize, Vec<Pure>)> = Vec::new();
    let mut current: Vec<Pure> = Vec::new();
    for (pc, inst) in f.code.iter().enumerate() {
        if targets.contains(&pc) && current.len() >= 2 {
            runs.push((pc - current.len(), std::mem::take(&mut current)));
        }
        if targets.contains(&pc) {
            current.clear();
        }
        let mut fusable = matches!(links.get(pc), Some(Link::Step(_))).then(|| Pure::of(inst)).flatten();
        // An access whose base the run computes from what it loaded starts a run of its own
        // (a run's addresses are computed and checked before it starts); so does a checked
        // access past the most a run checks.
        if let Some(p) = fusable.as_mut() {
            if let Some((base, _)) = p.access() {
                p.computed = current.iter().any(|q| q.d == Some(base));
                let full =
                    p.checked().is_some() && current.iter().filter(|q| q.checked().is_some()).count() >= MAX_CHECKED;
                if full || loaded(&current).contains(&base) {
                    if current.len() >= 2 {
                        runs.push((pc - current.len(), std::mem::take(&mut current)));
                    }
                    current.clear();
                    p.computed = false;
                }
            }
        }
        match fusable {
            Some(p) => current.push(p),
            None => {
                if current.len() >= 2 {
                    runs.push((pc - current.len(), std::mem::take(&mut current)));
                }
                current.clear();
            }
        }
    }
    if current.len() >= 2 {
        runs.push((f.code.len() - current.len(), current));
    }
    // Where each register is named (read or written, guards included): a register a run
    // writes that nothing outside the run names, and that the run does not read before
    // writing it, is not stored (it is the run's temporary).
    let mut named: HashMap<u32, Vec<usize>> = HashMap::new();
    for (pc, inst) in f.code.iter().enumerate() {
        let guard = inst.guard.map(|(p, _)| p);
        for r in inst.ops.iter().flat_map(registers).chain(guard) {
            named.entry(r).or_default().push(pc);
        }
    }
    for (start, pures) in runs {
        // A branch right after the run back to its start: the run is a loop's body, which
        // the code turns while the whole warp takes the branch.
        let end = start + pures.len();
        let back = match links.get(end) {
            Some(Link::Branch { guard, target }) if *target as usize == start => Some(*guard),
            _ => None,
        };
        let mut written = BTreeSet::new();
        let mut keep = BTreeSet::new();
        for p in &pures {
            keep.extend(p.sources().filter(|r| !written.contains(r)));
            written.extend(p.d);
        }
        keep.retain(|r| written.contains(r));
        for &d in &written {
            if named.get(&d).is_some_and(|pcs| pcs.iter().any(|pc| !(start..end).contains(pc))) {
                keep.insert(d);
            }
        }
        let run = Run { pures, back, keep };
        if let Some(link) = links.get_mut(start) {
            let Link::Step(step) = link else { continue };
            let len = run.pures.len() as u32;
            let loops = run.back.is_some();
            let memory = run.pures.iter().any(|p| p.access().is_some());
            let make = Box::new(move || compile(&run));
            *link = Link::Native(Arc::new(NativeSlot::new(step.clone(), len, loops, memory, hot, make)));
        }
    }
}

/// The host's code generator, made once (`None`: Cranelift does not support this CPU).
fn isa() -> Option<OwnedTargetIsa> {
    static ISA: OnceLock<Option<OwnedTargetIsa>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").ok()?;
        flags.set("is_pic", "false").ok()?;
        flags.set("enable_verifier", "false").ok()?;
        cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()
    })
    .clone()
}

/// `run` compiled (two lanes at a time where the backend takes every operation for them,
/// else one), or `None` if the code generator refuses it.
fn compile(run: &Run) -> Option<NativeRun> {
    let isa = isa()?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()));
    let (id, bytes) = [types::I64X2, types::I64].into_iter().find_map(|ty| define(&mut module, run, Built::Run(ty)))?;
    let checked: Vec<Checked> = run.pures.iter().filter_map(Pure::checked).collect();
    let addresses = match checked.is_empty() {
        true => None,
        false => Some(define(&mut module, run, Built::Addresses)?),
    };
    module.finalize_definitions().ok()?;
    let p = module.get_finalized_function(id);
    // SAFETY: `p` is the entry of a finalized function compiled with the signature
    // `fn(i64, i64, i64, i64, i64, i64) -> i64` in the host's default calling convention, which
    // is `extern "C"` taking pointers and u64s as `NativeFn` declares; the module that holds
    // it goes into the run with it.
    let code = unsafe { std::mem::transmute::<*const u8, NativeFn>(p) };
    let addresses = addresses.map(|(id, more)| {
        let p = module.get_finalized_function(id);
        // SAFETY: as for `code`, with the signature `fn(i64, i64, i64) -> i64` that
        // `AddressFn` declares.
        (unsafe { std::mem::transmute::<*const u8, AddressFn>(p) }, more)
    });
    let bytes = bytes + addresses.map_or(0, |(_, more)| more);
    Some(NativeRun {
        code,
        min_regs: min_regs(run),
        bytes,
        computed: run.pures.iter().any(|p| p.computed),
        checked,
        addresses: addresses.map(|(f, _)| f),
        _owner: Box::new(Code(Mutex::new(Some(module)))),
    })
}

/// Which of a run's functions [`define`] makes.
#[derive(Clone, Copy)]
enum Built {
    /// The run ([`NativeFn`]) over lanes of this type.
    Run(Type),
    /// Its checked accesses' addresses ([`AddressFn`]).
    Addresses,
}

/// Defines `what` of `run` in `module`: its function's id and code size.
fn define(module: &mut JITModule, run: &Run, what: Built) -> Option<(FuncId, usize)> {
    let mut ctx = module.make_context();
    let params = match what {
        Built::Run(_) => 6,
        Built::Addresses => 3,
    };
    for _ in 0..params {
        ctx.func.signature.params.push(AbiParam::new(types::I64));
    }
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut fctx = FunctionBuilderContext::new();
    let mut builder = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    match what {
        Built::Run(ty) => build(&mut builder, run, ty)?,
        Built::Addresses => build_addresses(&mut builder, run)?,
    }
    builder.finalize(module.target_config());
    let id = module.declare_anonymous_function(&ctx.func.signature).ok()?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    // A backend that cannot lower an operation for this type may panic instead of
    // answering an error: either way the run stays as steps.
    let defined =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| module.define_function(id, &mut ctx).is_ok()));
    let bytes = ctx.compiled_code().map_or(0, |c| c.code_info().total_size as usize);
    module.clear_context(&mut ctx);
    matches!(defined, Ok(true)).then_some((id, bytes))
}
