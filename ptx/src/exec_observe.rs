//! The executor's side of [`Observer`](crate::Observer): turning a warp instruction's
//! lanes into observed accesses, and `bar.warp.sync`, `membar` and `fence` into events.
//! Only called when the launch has an observer.

use crate::lanes::{at, lanes, WARP};
use crate::module::{Inst, Sp};
use crate::observe::{AccessKind, BlockObserver, Event, Space, WarpAccess};
use crate::windows::resolve;

/// Whether `inst` (a load or store) is strong: `.volatile`, `.relaxed`, `.acquire`,
/// `.release` (it then counts as an atomic: no race).
fn strong(inst: &Inst) -> bool {
    inst.name.split('.').any(|p| matches!(p, "volatile" | "relaxed" | "acquire" | "release"))
}

/// The space and address an access of space `sp` at `addr` observes as; None for local,
/// parameter and constant memory.
fn space(sp: Sp, addr: u64) -> Option<(Space, u64)> {
    match resolve(sp, addr) {
        (Sp::Shared, a) => Some((Space::Shared, a)),
        (Sp::Global | Sp::Generic, a) => Some((Space::Global, a)),
        _ => None,
    }
}

/// Shows `o` the accesses of `mask`'s lanes of warp `warp` at `addrs` (`size` bytes each):
/// one [`WarpAccess`] per space the lanes resolve to.
#[allow(clippy::too_many_arguments)]
fn each(
    o: &mut dyn BlockObserver,
    inst: &Inst,
    kind: AccessKind,
    sp: Sp,
    addrs: &[u64; WARP],
    mask: u32,
    size: usize,
    warp: u32,
) {
    let mut shared = ([0u64; WARP], 0u32);
    let mut global = ([0u64; WARP], 0u32);
    for lane in lanes(mask) {
        let (to, addr) = match space(sp, at(addrs, lane)) {
            Some((Space::Shared, a)) => (&mut shared, a),
            Some((Space::Global, a)) => (&mut global, a),
            None => continue,
        };
        if let Some(x) = to.0.get_mut(lane) {
            *x = addr;
            to.1 |= 1 << lane;
        }
    }
    for (space, (addrs, mask)) in [(Space::Shared, &shared), (Space::Global, &global)] {
        if *mask != 0 {
            o.warp_access(&WarpAccess {
                space,
                kind,
                addrs,
                mask: *mask,
                size: size as u32,
                first_thread: warp * WARP as u32,
                line: inst.line,
            });
        }
    }
}

/// A load's or store's lanes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn observe_lanes(
    o: &mut dyn BlockObserver,
    inst: &Inst,
    load: bool,
    sp: Sp,
    addrs: &[u64; WARP],
    mask: u32,
    size: usize,
    warp: u32,
) {
    let kind = if strong(inst) {
        AccessKind::Atomic
    } else if load {
        AccessKind::Read
    } else {
        AccessKind::Write
    };
    each(o, inst, kind, sp, addrs, mask, size, warp);
}

/// An atomic's lanes.
pub(crate) fn observe_atomics(
    o: &mut dyn BlockObserver,
    inst: &Inst,
    sp: Sp,
    addrs: &[u64; WARP],
    mask: u32,
    size: usize,
    warp: u32,
) {
    each(o, inst, AccessKind::Atomic, sp, addrs, mask, size, warp);
}

/// An instruction the executor does nothing for: `bar.warp.sync`, `membar` and `fence`
/// are ordering points.
pub(crate) fn observe_nop(o: &mut dyn BlockObserver, inst: &Inst, warp: u32, mask: u32) {
    if inst.name.starts_with("bar.warp") {
        o.event(Event::WarpSync { warp });
    } else if inst.name.starts_with("membar") || inst.name.starts_with("fence") {
        for lane in lanes(mask) {
            o.event(Event::Fence { thread: warp * WARP as u32 + lane as u32 });
        }
    }
}
