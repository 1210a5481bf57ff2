//! The generic address space's windows: where shared, local and parameter memory appear
//! in generic addresses, and which space a generic address falls in.

use crate::module::Sp;

/// Param-space addresses at and above this are the current frame's parameter block (below
/// it, the kernel's parameter buffer).
pub(crate) const FPARAM_TAG: u64 = 1 << 32;

/// The generic-address window of shared memory: a shared address `a` is `SHARED_WINDOW + a`
/// in generic form. Global addresses must lie outside the three windows.
pub const SHARED_WINDOW: u64 = 0xfe00_0000_0000_0000;
/// The generic-address window of local memory.
pub const LOCAL_WINDOW: u64 = 0xfd00_0000_0000_0000;
/// The generic-address window of the kernel's parameters.
pub const PARAM_WINDOW: u64 = 0xfc00_0000_0000_0000;
const WINDOW_SIZE: u64 = 1 << 40;

/// The space and in-space address of `addr` given the instruction's space.
pub(crate) fn resolve(sp: Sp, addr: u64) -> (Sp, u64) {
    match sp {
        Sp::Generic => {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Sp::Shared, addr - SHARED_WINDOW)
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Sp::Local, addr - LOCAL_WINDOW)
            } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Sp::Param, addr - PARAM_WINDOW)
            } else {
                (Sp::Generic, addr)
            }
        }
        other => (other, addr),
    }
}
