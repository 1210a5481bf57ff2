//! Host memory standing in for device or pinned memory: zeroed, aligned, and allocated
//! without aborting the process when the system refuses (a refusal is
//! CUDA_ERROR_OUT_OF_MEMORY).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every allocation (a real driver aligns device memory to at least 256).
const ALIGN: usize = 256;

/// An owned, zeroed host buffer.
pub(crate) struct Backing {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a Backing is plain memory owned by the stand-in; every access to its bytes goes
// through raw pointers while the lock of the table holding it is held (memory.rs), or is
// the program's own use of pinned host memory.
unsafe impl Send for Backing {}
// SAFETY: as above; shared references give out only the raw pointer.
unsafe impl Sync for Backing {}

impl Backing {
    /// `size` zeroed bytes, or `None` for size 0 or when the system has no memory to give.
    pub(crate) fn zeroed(size: usize) -> Option<Backing> {
        if size == 0 {
            return None;
        }
        let layout = Layout::from_size_align(size, ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(Backing { ptr, layout })
    }

    /// The first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // SAFETY: allocated by `zeroed` with this layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) };
    }
}
