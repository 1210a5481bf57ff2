//! Host memory standing in for device or pinned memory: zeroed, aligned, and allocated
//! without aborting the process when the system refuses (a refusal is
//! CUDA_ERROR_OUT_OF_MEMORY).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Alignment of every allocation (a real driver aligns device memory to at least 256).
const ALIGN: usize = 256;

/// An owned, zeroed host buffer, or (`layout: None`) the program's own memory, registered
/// with `cuMemHostRegister`, which is never freed here.
pub(crate) struct Backing {
    ptr: NonNull<u8>,
    layout: Option<Layout>,
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
        Some(Backing { ptr, layout: Some(layout) })
    }

    /// The program's memory at `ptr` (registered host memory): used, never freed.
    pub(crate) fn program(ptr: NonNull<u8>) -> Backing {
        Backing { ptr, layout: None }
    }

    /// The first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: allocated by `zeroed` with this layout, freed once.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}
