//! User objects: a program's pointer and destructor with a reference count. When the count
//! reaches zero the destructor runs on the driver's thread, later, never under a stand-in
//! lock. Graphs and graph execs hold references (`graph.rs`, `graph_exec.rs`).

use std::ffi::{c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::user_object::UserObject;
use crate::run::lock::lock;
use crate::run::queue::HostCall;
use crate::world::World;

/// Adds `n` references to `h`.
pub(crate) fn retain(w: &World, h: u64, n: c_uint) -> Result<(), CUresult> {
    if n == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let mut objects = lock(&w.user_objects);
    let o = objects.get_mut(h)?;
    o.refs = o.refs.checked_add(n).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
    Ok(())
}

/// CUDA_ERROR_INVALID_VALUE unless `h` is live with at least `n` references.
pub(crate) fn has(w: &World, h: u64, n: c_uint) -> Result<(), CUresult> {
    if n == 0 || lock(&w.user_objects).get(h)?.refs < n {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    Ok(())
}

/// Drops `n` references to `h`; at zero the object is destroyed and its destructor
/// queued on the driver thread. An object destroyed before: CUDA_ERROR_INVALID_HANDLE and
/// a double destroy in the ledger.
pub(crate) fn release(w: &World, h: u64, n: c_uint) -> Result<(), CUresult> {
    if n == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let destroy = {
        let mut objects = lock(&w.user_objects);
        let o = match objects.get_mut(h) {
            Ok(o) => o,
            // Records a double destroy if it was destroyed.
            Err(_) => return objects.remove(h).map(drop),
        };
        o.refs = o.refs.checked_sub(n).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if o.refs > 0 {
            return Ok(());
        }
        objects.remove(h)?.destroy
    };
    // With no lock held. If no thread can be started the destructor is leaked.
    let _ = w.driver_thread.push(destroy.task());
    Ok(())
}

/// Releases each `(object, count)`.
pub(crate) fn release_all(w: &World, refs: impl IntoIterator<Item = (u64, c_uint)>) {
    for (h, n) in refs {
        // They were retained: releasing cannot fail.
        let _ = release(w, h, n);
    }
}

/// `cuUserObjectCreate`: flags must be CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.
pub(crate) unsafe fn cu_user_object_create(
    w: &World,
    out: *mut CUuserObject,
    ptr: *mut c_void,
    destroy: CUhostFn,
    initial: c_uint,
    flags: c_uint,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let destroy = HostCall::new(destroy, ptr).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if initial == 0 || flags != CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let h = lock(&w.user_objects).insert(UserObject { destroy, refs: initial });
        write(out, to_ptr(h))
    });
    status(r)
}

pub(crate) unsafe fn cu_user_object_retain(w: &World, object: CUuserObject, count: c_uint) -> CUresult {
    status(retain(w, from_ptr(object), count))
}

pub(crate) unsafe fn cu_user_object_release(w: &World, object: CUuserObject, count: c_uint) -> CUresult {
    status(release(w, from_ptr(object), count))
}
