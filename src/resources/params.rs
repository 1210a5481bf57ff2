//! The checks a launch makes before calling the driver: the arguments against the
//! kernel's parameter layout (count and sizes), and that the function, the stream and
//! every buffer argument belong to one context (or a peer with access enabled through
//! cudrv).
//!
//! The layout is asked of the driver once per [`Function`]/[`Kernel`] handle (and its
//! clones), at its first launch (`cuFuncGetParamInfo`/`cuKernelGetParamInfo`, driver
//! 12.4+), and kept in the handle; a driver without those entries, or one that does not
//! know a function's layout, leaves the layout unknown and the count and sizes
//! unchecked. Later launches make no driver call for the checks.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use crate::error::InvalidArgument;
use crate::resources::attributes::ParamInfo;
use crate::resources::context::Context;
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::sys::CUcontext;

/// The owner of a function or kernel handle: its module or library, and its parameter
/// layout once asked for (`None`: the driver does not say).
pub(crate) struct Part<P> {
    pub(crate) parent: P,
    layout: OnceLock<Option<Box<[ParamInfo]>>>,
}

impl<P> Part<P> {
    pub(crate) fn new(parent: P) -> Part<P> {
        Part { parent, layout: OnceLock::new() }
    }
}

/// What a launch launches.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target<'a> {
    Function(&'a Function),
    Kernel(&'a Kernel),
}

impl Target<'_> {
    /// The parameter layout, asked of the driver on the first launch of this handle.
    fn layout(&self, context: &Context) -> Option<&[ParamInfo]> {
        let cached = match self {
            Target::Function(f) => f.0.owner().layout.get_or_init(|| f.params().ok().map(Vec::into_boxed_slice)),
            Target::Kernel(k) => k.0.owner().layout.get_or_init(|| k.params(context).ok().map(Vec::into_boxed_slice)),
        };
        cached.as_deref()
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
    fn context(&self) -> Option<CUcontext> {
        match self {
            Target::Function(f) => Some(f.module().context().as_raw()),
            Target::Kernel(_) => None,
        }
    }
}

/// `(context, peer)` pairs where cudrv enabled the context's access to the peer's memory.
static PEERS: Mutex<BTreeSet<(usize, usize)>> = Mutex::new(BTreeSet::new());

/// Notes that `context` can (`on`) or can no longer reach `peer`'s memory.
pub(crate) fn note_peer_access(context: CUcontext, peer: CUcontext, on: bool) {
    let mut peers = PEERS.lock().unwrap_or_else(|e| e.into_inner());
    if on {
        peers.insert((context as usize, peer as usize));
    } else {
        peers.remove(&(context as usize, peer as usize));
    }
}

fn peer_access(context: CUcontext, peer: CUcontext) -> bool {
    PEERS.lock().unwrap_or_else(|e| e.into_inner()).contains(&(context as usize, peer as usize))
}

/// Whether an argument of context `arg` may be used by a launch in `context`: the same
/// context, or a peer whose memory it can reach (enabled through cudrv).
pub(crate) fn usable_in(context: &Context, arg: CUcontext) -> bool {
    let own = context.as_raw();
    arg == own || peer_access(own, arg)
}

/// The first argument of another context that the stream's cannot reach: its index and
/// context.
pub(crate) type Foreign = Option<(usize, CUcontext)>;

/// Checks a launch of `target` in `context` (a stream's, or a graph's for a kernel node:
/// `what` names the call) with arguments of these sizes (0: unknown).
pub(crate) fn check(
    what: &'static str,
    target: Target<'_>,
    context: &Context,
    sizes: &[u32],
    foreign: Foreign,
) -> Result<(), InvalidArgument> {
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
    let Some(layout) = target.layout(context) else {
        return Ok(());
    };
    if layout.len() != sizes.len() {
        return Err(InvalidArgument::new(
            what,
            format!("{}: expected {} parameters, got {}", target.name(), layout.len(), sizes.len()),
        ));
    }
    for (i, (p, &size)) in layout.iter().zip(sizes).enumerate() {
        if size != 0 && p.size != size as usize {
            return Err(InvalidArgument::new(
                what,
                format!("{}: parameter {i} takes {} bytes, argument {i} has {size}", target.name(), p.size),
            ));
        }
    }
    Ok(())
}
