//! Page-locked host memory (`cuMemAllocHost`/`cuMemFreeHost`).

use std::ffi::c_void;
use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::context::Context;
use crate::resources::handle_arg;
use crate::scope::{cleanup_in_context, create_in_context, Undo};

/// Pinned host memory. Clones share it; the last one frees it in its context.
#[derive(Clone)]
pub struct PinnedBuffer(Arc<PinnedInner>);

struct PinnedInner {
    context: Context,
    ptr: *mut c_void,
    len: usize,
    owned: bool,
}

// SAFETY: the memory is plain host memory owned by this handle; access goes through
// unsafe accessors whose callers take care of aliasing.
unsafe impl Send for PinnedInner {}
// SAFETY: as above.
unsafe impl Sync for PinnedInner {}

impl PinnedBuffer {
    /// Allocates `len` bytes of page-locked host memory in `context`. On error nothing is
    /// allocated.
    pub fn alloc(context: &Context, len: usize) -> Result<PinnedBuffer, CudaError> {
        let d = context.driver();
        let create = || {
            let mut ptr: *mut c_void = std::ptr::null_mut();
            // SAFETY: `ptr` is a valid out-pointer.
            CudaError::check(d, "cuMemAllocHost", unsafe { d.p().cuMemAllocHost(&mut ptr, len) })?;
            Ok(ptr)
        };
        let undo = Undo {
            call: "cuMemFreeHost",
            arg: |p: &*mut c_void| handle_arg(*p),
            // SAFETY: the memory was just allocated and is used by nothing else.
            run: |p: &*mut c_void| unsafe { d.p().cuMemFreeHost(*p) },
        };
        let ptr = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(PinnedBuffer(Arc::new(PinnedInner { context: context.clone(), ptr, len, owned: true })))
    }

    /// Adopts memory from `cuMemAllocHost`: the last clone frees it.
    ///
    /// # Safety
    /// `ptr` must be a live `cuMemAllocHost` allocation of `len` bytes that nothing else frees.
    pub unsafe fn from_raw(context: &Context, ptr: *mut c_void, len: usize) -> PinnedBuffer {
        PinnedBuffer(Arc::new(PinnedInner { context: context.clone(), ptr, len, owned: true }))
    }

    /// Uses pinned memory someone else owns; cudrv never frees it.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid while this handle is used.
    pub unsafe fn borrowed(context: &Context, ptr: *mut c_void, len: usize) -> PinnedBuffer {
        PinnedBuffer(Arc::new(PinnedInner { context: context.clone(), ptr, len, owned: false }))
    }

    /// The host address.
    pub fn as_raw(&self) -> *mut c_void {
        self.0.ptr
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The bytes.
    ///
    /// # Safety
    /// No one may write them (the GPU included) while the slice is used.
    pub unsafe fn as_slice(&self) -> &[u8] {
        // SAFETY: the allocation is live and `len` long; the caller excludes writers.
        unsafe { std::slice::from_raw_parts(self.0.ptr.cast::<u8>(), self.0.len) }
    }

    /// The bytes, for writing.
    ///
    /// # Safety
    /// No one else may read or write them (the GPU and other clones included) while the
    /// slice is used.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice(&self) -> &mut [u8] {
        // SAFETY: as above; the caller guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.0.ptr.cast::<u8>(), self.0.len) }
    }
}

impl Drop for PinnedInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, ptr) = (self.context.driver(), self.ptr);
        // SAFETY: we own the memory and this is its last handle.
        let free = || unsafe { d.p().cuMemFreeHost(ptr) };
        cleanup_in_context(d, Some(self.context.as_raw()), "cuMemFreeHost", handle_arg(ptr), free, || {});
    }
}
