//! Stream queries: `cuStreamGetFlags`/`cuStreamGetPriority` (what the stream was created
//! with, the priority clamped to the range `cuCtxGetStreamPriorityRange` reports; the
//! default streams answer flags 0 and priority 0: driver-facts.md, "Edge cases"),
//! `cuStreamGetId` (a stream's handle; 0 for a default stream) and `cuStreamGetDevice`.

use std::ffi::{c_int, c_uint, c_ulonglong};

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::stream::{self, Properties};
use crate::world::World;

/// The properties of `s`, whose context must be usable (flags, priority) or only alive
/// (id, device).
fn of(w: &World, s: CUstream, usable: bool) -> Result<Properties, CUresult> {
    let p = stream::properties(w, s)?;
    match usable {
        true => p.ctx.usable()?,
        false => p.ctx.alive()?,
    }
    Ok(p)
}

pub(crate) unsafe fn cu_stream_get_flags(w: &World, s: CUstream, flags: *mut c_uint) -> CUresult {
    status(non_null(flags).and_then(|()| write(flags, of(w, s, true)?.flags)))
}

pub(crate) unsafe fn cu_stream_get_priority(w: &World, s: CUstream, priority: *mut c_int) -> CUresult {
    status(non_null(priority).and_then(|()| write(priority, of(w, s, true)?.priority)))
}

pub(crate) unsafe fn cu_stream_get_id(w: &World, s: CUstream, id: *mut c_ulonglong) -> CUresult {
    status(non_null(id).and_then(|()| write(id, of(w, s, false)?.id)))
}

pub(crate) unsafe fn cu_stream_get_device(w: &World, s: CUstream, device: *mut CUdevice) -> CUresult {
    status(non_null(device).and_then(|()| write(device, of(w, s, false)?.ctx.device)))
}
