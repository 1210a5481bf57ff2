//! Stream queries: `cuStreamGetFlags`/`cuStreamGetPriority` (what the stream was created
//! with, the priority clamped to the range `cuCtxGetStreamPriorityRange` reports; the
//! default streams answer flags 0 and priority 0: driver-facts.md, "Edge cases"),
//! `cuStreamGetId` (a stream's handle; 0 for a default stream) and `cuStreamGetDevice`.

use std::ffi::{c_int, c_uint, c_ulonglong};

use cudrv::sys::*;

use crate::entry::{enter, non_null, register, status, write};
use crate::stream::{self, Properties};

/// The properties of `s`, whose context must be usable (flags, priority) or only alive
/// (id, device).
fn of(s: CUstream, usable: bool) -> Result<Properties, CUresult> {
    let p = stream::properties(s)?;
    match usable {
        true => p.ctx.usable()?,
        false => p.ctx.alive()?,
    }
    Ok(p)
}

unsafe extern "C" fn cu_stream_get_flags(s: CUstream, flags: *mut c_uint) -> CUresult {
    enter!("cuStreamGetFlags");
    status(non_null(flags).and_then(|()| write(flags, of(s, true)?.flags)))
}

unsafe extern "C" fn cu_stream_get_priority(s: CUstream, priority: *mut c_int) -> CUresult {
    enter!("cuStreamGetPriority");
    status(non_null(priority).and_then(|()| write(priority, of(s, true)?.priority)))
}

unsafe extern "C" fn cu_stream_get_id(s: CUstream, id: *mut c_ulonglong) -> CUresult {
    enter!("cuStreamGetId");
    status(non_null(id).and_then(|()| write(id, of(s, false)?.id)))
}

unsafe extern "C" fn cu_stream_get_device(s: CUstream, device: *mut CUdevice) -> CUresult {
    enter!("cuStreamGetDevice");
    status(non_null(device).and_then(|()| write(device, of(s, false)?.ctx.device)))
}

register! {
    cuStreamGetFlags_v5050: PFN_cuStreamGetFlags_v5050 => cu_stream_get_flags,
    cuStreamGetFlags_v7000_ptsz: PFN_cuStreamGetFlags_v7000_ptsz => cu_stream_get_flags,
    cuStreamGetPriority_v5050: PFN_cuStreamGetPriority_v5050 => cu_stream_get_priority,
    cuStreamGetPriority_v7000_ptsz: PFN_cuStreamGetPriority_v7000_ptsz => cu_stream_get_priority,
    cuStreamGetId_v12000: PFN_cuStreamGetId_v12000 => cu_stream_get_id,
    cuStreamGetId_v12000_ptsz: PFN_cuStreamGetId_v12000_ptsz => cu_stream_get_id,
    cuStreamGetDevice_v12080: PFN_cuStreamGetDevice_v12080 => cu_stream_get_device,
    cuStreamGetDevice_v12080_ptsz: PFN_cuStreamGetDevice_v12080_ptsz => cu_stream_get_device,
}
