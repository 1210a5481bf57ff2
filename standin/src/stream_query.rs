//! Stream flags and priorities: what `cuStreamCreate`/`cuStreamCreateWithPriority` were
//! given (the priority clamped to the range `cuCtxGetStreamPriorityRange` reports), for
//! `cuStreamGetFlags`/`cuStreamGetPriority`. The default streams answer flags 0 and
//! priority 0 (driver-facts.md, "Edge cases").

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint};
use std::sync::Mutex;

use cudrv::sys::*;

use crate::ctx_query::{GREATEST_PRIORITY, LEAST_PRIORITY};
use crate::entry::{enter, from_ptr, lock, non_null, register, status, write};
use crate::stream;

/// Flags and priority of each live stream.
static PROPS: Mutex<BTreeMap<u64, (c_uint, c_int)>> = Mutex::new(BTreeMap::new());

/// Records a new stream's flags and priority (clamped to the valid range).
pub(crate) fn record(handle: u64, flags: c_uint, priority: c_int) {
    lock(&PROPS).insert(handle, (flags, priority.clamp(GREATEST_PRIORITY, LEAST_PRIORITY)));
}

/// Forgets a destroyed stream.
pub(crate) fn forget(handle: u64) {
    lock(&PROPS).remove(&handle);
}

/// The flags and priority of the live stream `s` (0 and 0 for a default stream).
fn props(s: CUstream) -> Result<(c_uint, c_int), CUresult> {
    stream::resolve(s)?;
    Ok(lock(&PROPS).get(&from_ptr(s)).copied().unwrap_or((0, 0)))
}

unsafe extern "C" fn cu_stream_get_flags(s: CUstream, flags: *mut c_uint) -> CUresult {
    enter!("cuStreamGetFlags");
    status(non_null(flags).and_then(|()| write(flags, props(s)?.0)))
}

unsafe extern "C" fn cu_stream_get_priority(s: CUstream, priority: *mut c_int) -> CUresult {
    enter!("cuStreamGetPriority");
    status(non_null(priority).and_then(|()| write(priority, props(s)?.1)))
}

register! {
    cuStreamGetFlags_v5050: PFN_cuStreamGetFlags_v5050 => cu_stream_get_flags,
    cuStreamGetFlags_v7000_ptsz: PFN_cuStreamGetFlags_v7000_ptsz => cu_stream_get_flags,
    cuStreamGetPriority_v5050: PFN_cuStreamGetPriority_v5050 => cu_stream_get_priority,
    cuStreamGetPriority_v7000_ptsz: PFN_cuStreamGetPriority_v7000_ptsz => cu_stream_get_priority,
}
