//! Stream attributes: `cuStreamGetAttribute`/`cuStreamSetAttribute` for the attributes a
//! stream has (priority, synchronisation policy, access policy window, memory sync
//! domain and its map); the launch-only ones answer CUDA_ERROR_INVALID_VALUE. The
//! default streams report the defaults; a setting on one is checked and accepted, as on
//! the H200, but not kept (conformance `stream_attr.*`).

use cudrv::sys::*;

use crate::ctx_query::{GREATEST_PRIORITY, LEAST_PRIORITY};
use crate::entry::{from_ptr, non_null, status, write};
use crate::model::stream::{is_default, Attributes};
use crate::run::lock::lock;
use crate::stream;
use crate::world::World;

type Id = CUstreamAttrID;

/// The attributes and priority of `s`, a stream in a usable context.
fn current(w: &World, s: CUstream) -> Result<(Attributes, i32), CUresult> {
    let p = stream::properties(w, s)?;
    p.ctx.usable()?;
    if is_default(p.id) {
        return Ok((Attributes::DEFAULT, 0));
    }
    let streams = lock(&w.streams);
    let st = streams.get(p.id)?;
    Ok((st.attrs, st.priority))
}

fn get(w: &World, s: CUstream, id: Id, out: *mut CUstreamAttrValue) -> Result<(), CUresult> {
    non_null(out)?;
    let (a, priority) = current(w, s)?;
    let mut v = CUstreamAttrValue::default();
    match id {
        Id::CU_LAUNCH_ATTRIBUTE_PRIORITY => v.priority = priority,
        Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY => v.syncPolicy = CUsynchronizationPolicy(a.sync_policy),
        Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW => {
            let (base, bytes, ratio, hit, miss) = a.window;
            v.accessPolicyWindow = CUaccessPolicyWindow {
                base_ptr: base as usize as *mut std::ffi::c_void,
                num_bytes: bytes,
                hitRatio: ratio,
                hitProp: CUaccessProperty(hit),
                missProp: CUaccessProperty(miss),
            };
        }
        Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN => v.memSyncDomain = CUlaunchMemSyncDomain(a.mem_sync_domain),
        Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP => {
            v.memSyncDomainMap =
                CUlaunchMemSyncDomainMap { default_: a.mem_sync_domain_map.0, remote: a.mem_sync_domain_map.1 };
        }
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
    write(out, v)
}

pub(crate) unsafe fn cu_stream_get_attribute(w: &World, s: CUstream, id: Id, out: *mut CUstreamAttrValue) -> CUresult {
    status(get(w, s, id, out))
}

/// The access property `p`, if it is one (normal, streaming, persisting).
fn property(p: CUaccessProperty) -> Result<u32, CUresult> {
    match p.0 {
        0..=2 => Ok(p.0),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

fn set(w: &World, s: CUstream, id: Id, value: *const CUstreamAttrValue) -> Result<(), CUresult> {
    non_null(value)?;
    let p = stream::properties(w, s)?;
    p.ctx.usable()?;
    // SAFETY: a non-null pointer to the caller's value; each member read below is plain data.
    let v = unsafe { *value };
    let mut streams = lock(&w.streams);
    let default = is_default(from_ptr(s));
    let (mut a, mut priority) = if default {
        (Attributes::DEFAULT, 0)
    } else {
        let st = streams.get(p.id)?;
        (st.attrs, st.priority)
    };
    // SAFETY (each union read): the member of `id`; plain data, any bits valid.
    match id {
        Id::CU_LAUNCH_ATTRIBUTE_PRIORITY => priority = unsafe { v.priority }.clamp(GREATEST_PRIORITY, LEAST_PRIORITY),
        Id::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY => {
            // SAFETY: as above.
            let policy = unsafe { v.syncPolicy }.0;
            if !(1..=4).contains(&policy) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            a.sync_policy = policy;
        }
        Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW => {
            // SAFETY: as above.
            let win = unsafe { v.accessPolicyWindow };
            if !(0.0..=1.0).contains(&win.hitRatio) {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            let (hit, miss) = (property(win.hitProp)?, property(win.missProp)?);
            a.window = (win.base_ptr as usize as u64, win.num_bytes, win.hitRatio, hit, miss);
        }
        Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN => {
            // SAFETY: as above.
            let d = unsafe { v.memSyncDomain }.0;
            if d > 1 {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            a.mem_sync_domain = d;
        }
        Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP => {
            // SAFETY: as above.
            let m = unsafe { v.memSyncDomainMap };
            a.mem_sync_domain_map = (m.default_, m.remote);
        }
        _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
    if !default {
        let st = streams.get_mut(p.id)?;
        st.attrs = a;
        st.priority = priority;
    }
    Ok(())
}

pub(crate) unsafe fn cu_stream_set_attribute(
    w: &World,
    s: CUstream,
    id: Id,
    value: *const CUstreamAttrValue,
) -> CUresult {
    status(set(w, s, id, value))
}

/// `cuStreamCopyAttributes`: `dst` takes the attributes of `src` (the priority too); both
/// in one usable context (streams of two contexts: CUDA_ERROR_INVALID_VALUE, as on the
/// H200, `stream_copy_attributes.other_context`). A default stream reads as the
/// defaults, and as a destination accepts them without keeping them (as a setting).
fn copy(w: &World, dst: CUstream, src: CUstream) -> Result<(), CUresult> {
    let (from, to) = (stream::properties(w, src)?, stream::properties(w, dst)?);
    if from.ctx.handle != to.ctx.handle {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let (a, priority) = current(w, src)?;
    to.ctx.usable()?;
    if is_default(to.id) {
        return Ok(());
    }
    let mut streams = lock(&w.streams);
    let st = streams.get_mut(to.id)?;
    st.attrs = a;
    st.priority = priority;
    Ok(())
}

pub(crate) unsafe fn cu_stream_copy_attributes(w: &World, dst: CUstream, src: CUstream) -> CUresult {
    status(copy(w, dst, src))
}
