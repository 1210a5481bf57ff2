//! The checks a launch makes before calling the driver: the arguments against the
//! kernel's parameter layout (count and sizes), and that the function, the stream and
//! every buffer argument belong to one context (or a peer with access enabled through
//! cudrv).
//!
//! The layout is asked of the driver once per [`Function`]/[`Kernel`] handle (and its
//! clones), at its first launch, and kept in the handle; later launches make no driver
//! call for the checks. Driver 13.2+ says how many parameters there are
//! (`cuFuncGetParamCount`/`cuKernelGetParamCount`) and each one's place: the count and
//! every size are checked. Drivers 12.4 to 13.1 only answer per index
//! (`cuFuncGetParamInfo`/`cuKernelGetParamInfo`): cudrv asks for the indices the first
//! launch passes and no further, since the answer for an index past the last parameter is
//! an API error that compute-sanitizer reports; a later launch with more arguments asks
//! for the indices beyond. Then too many arguments are caught (the driver refuses an
//! index), and fewer arguments than the first launch passed, but a first launch with too
//! few is not. A driver without those entries, or one that does not
//! know a function's layout, leaves the launch unchecked.

use crate::error::{Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::function_part::Known;
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::resources::values::ParamInfo;
use crate::sys::{CUcontext, CUresult};

/// What a launch launches.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target<'a> {
    Function(&'a Function),
    Kernel(&'a Kernel),
}

impl Target<'_> {
    /// What is known of the parameter layout, asked of the driver on the first launch of
    /// this handle (which passes `args` arguments).
    fn layout(&self, context: &Context, args: usize) -> Option<&Known> {
        let cached = match self {
            Target::Function(f) => {
                f.0.owner().layout.get_or_init(|| Known::learn(|| f.param_count(), |i| f.param_info(i), args))
            }
            Target::Kernel(k) => {
                let ctx = context;
                k.0.owner().layout.get_or_init(|| Known::learn(|| k.param_count(ctx), |i| k.param_info(ctx, i), args))
            }
        };
        cached.as_ref()
    }

    /// What is known of the parameter layout, if it was asked already.
    #[inline]
    fn known(&self) -> Option<&Known> {
        let cell = match self {
            Target::Function(f) => &f.0.owner().layout,
            Target::Kernel(k) => &k.0.owner().layout,
        };
        cell.get().and_then(Option::as_ref)
    }

    /// The place of parameter `index`, asked of the driver now.
    fn param_info(&self, context: &Context, index: usize) -> Result<ParamInfo, Error> {
        match self {
            Target::Function(f) => f.param_info(index),
            Target::Kernel(k) => k.param_info(context, index),
        }
    }

    /// The kernel's name for an error (its raw handle if the driver cannot say).
    fn name(&self) -> String {
        let name = match self {
            Target::Function(f) => f.name(),
            Target::Kernel(k) => k.name(),
        };
        match name {
            Ok(n) => format!("kernel `{n}`"),
            Err(_) => format!("{self:?}"),
        }
    }

    /// The context a function belongs to (a kernel belongs to none: the driver resolves
    /// it for the stream's context).
    #[inline]
    fn context(&self) -> Option<CUcontext> {
        match self {
            Target::Function(f) => Some(f.module().context().as_raw()),
            Target::Kernel(_) => None,
        }
    }
}

/// The first argument of another context that the stream's cannot reach: its index and
/// context.
pub(crate) type Foreign = Option<(usize, CUcontext)>;

/// A launch to check: of `target` in `context` (a stream's, or a graph's for a kernel
/// node: `what` names the call) with arguments of these sizes (0: unknown), `foreign`
/// the first of them of a context the launch's cannot reach.
#[derive(Clone, Copy)]
pub(crate) struct Check<'a> {
    pub(crate) what: &'static str,
    pub(crate) target: Target<'a>,
    pub(crate) context: &'a Context,
    pub(crate) sizes: &'a [u32],
    pub(crate) foreign: Foreign,
}

/// Checks a launch. Inline where the answer is yes from what is known already (the layout
/// learnt, every size as it says); the rest is [`check_now`].
#[inline]
pub(crate) fn check(launch: Check<'_>) -> Result<(), InvalidArgument> {
    let Check { target, context, sizes, foreign, .. } = launch;
    if foreign.is_none() && target.context().is_none_or(|c| c == context.as_raw()) {
        if let Some(known) = target.known() {
            if known.params.len() == sizes.len() && known.params.iter().zip(sizes).all(|(p, &s)| fits(p, s)) {
                return Ok(());
            }
        }
    }
    check_now(launch)
}

/// Whether an argument of `size` bytes (0: unknown) fits the parameter `p`.
#[inline]
fn fits(p: &ParamInfo, size: u32) -> bool {
    size == 0 || p.size == size as usize
}

/// [`check`] in full.
#[inline(never)]
fn check_now(launch: Check<'_>) -> Result<(), InvalidArgument> {
    let Check { what, target, context, sizes, foreign } = launch;
    let own = context.as_raw();
    if let Some(ctx) = target.context().filter(|&c| c != own) {
        return Err(InvalidArgument::new(
            what,
            format!("{} belongs to context {ctx:?}, the stream to context {own:?}", target.name()),
        ));
    }
    if let Some((i, ctx)) = foreign {
        return Err(InvalidArgument::new(
            what,
            format!(
                "argument {i} of {} is memory of context {ctx:?}, which the stream's context {own:?} cannot reach \
                 (another context, without peer access enabled)",
                target.name()
            ),
        ));
    }
    let Some(known) = target.layout(context, sizes.len()) else {
        return Ok(());
    };
    let expected = known.params.len();
    if (known.complete && expected != sizes.len()) || sizes.len() < expected {
        let at_least = if known.complete { "" } else { "at least " };
        return Err(InvalidArgument::new(
            what,
            format!("{}: expected {at_least}{expected} parameters, got {}", target.name(), sizes.len()),
        ));
    }
    let size_differs = |i: usize, p: &ParamInfo, size: u32| {
        InvalidArgument::new(
            what,
            format!("{}: parameter {i} takes {} bytes, argument {i} has {size}", target.name(), p.size),
        )
    };
    for (i, (p, &size)) in known.params.iter().zip(sizes).enumerate() {
        if !fits(p, size) {
            return Err(size_differs(i, p, size));
        }
    }
    // More arguments than any launch passed before (layout known per index only): the
    // driver is asked for the indices beyond (never past this launch's arguments, so no
    // needless API error); one it refuses is an argument too many.
    for (i, &size) in sizes.iter().enumerate().skip(expected) {
        match target.param_info(context, i) {
            Ok(p) if !fits(&p, size) => return Err(size_differs(i, &p, size)),
            Ok(_) => {}
            Err(e) if e.answered(CUresult::CUDA_ERROR_INVALID_VALUE) => {
                return Err(InvalidArgument::new(
                    what,
                    format!("{}: expected {i} parameters, got {}", target.name(), sizes.len()),
                ));
            }
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}
