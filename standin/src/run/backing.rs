//! Host memory standing in for device or pinned memory: zeroed, aligned, and allocated
//! without aborting the process when the system refuses (a refusal is
//! CUDA_ERROR_OUT_OF_MEMORY); or a file mapped shared (`mmap`), for memory that another
//! process may map too (virtual memory exported as a file descriptor).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::{c_int, c_void};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

// The C library's mapping calls (which the standard library links anyway; the stand-in
// depends on no `libc` crate). Linux, 64-bit: `off_t` is 64 bits.
unsafe extern "C" {
    fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: i64) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> c_int;
    fn sysconf(name: c_int) -> std::ffi::c_long;
}

/// `_SC_PAGESIZE` and `_SC_PHYS_PAGES` (Linux).
const SC_PAGESIZE: c_int = 30;
const SC_PHYS_PAGES: c_int = 85;

/// The host's physical memory in bytes (`usize::MAX` if the system does not say): more
/// cannot be page-locked, so a real driver refuses a larger pinned allocation.
pub(crate) fn physical_memory() -> usize {
    // SAFETY: sysconf only reads system settings.
    let (pages, page) = unsafe { (sysconf(SC_PHYS_PAGES), sysconf(SC_PAGESIZE)) };
    match (usize::try_from(pages), usize::try_from(page)) {
        (Ok(pages), Ok(page)) if pages > 0 && page > 0 => pages.saturating_mul(page),
        _ => usize::MAX,
    }
}

/// `PROT_READ | PROT_WRITE`.
const PROT_READ_WRITE: c_int = 0x3;
/// `MAP_SHARED`.
const MAP_SHARED: c_int = 0x1;

/// Alignment of every allocation (a real driver aligns device memory to at least 256).
const ALIGN: usize = 256;

/// An owned, zeroed host buffer, or (`layout: None`) the program's own memory, registered
/// with `cuMemHostRegister`, which is never freed here, or (`shared`) a file mapped shared.
pub(crate) struct Backing {
    ptr: NonNull<u8>,
    layout: Option<Layout>,
    /// A mapped file and the length mapped: unmapped when dropped.
    shared: Option<(File, usize)>,
    /// For a view ([`Backing::view`]): the memory it is part of, kept alive by it.
    _parent: Option<std::sync::Arc<Backing>>,
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
        Some(Backing { ptr, layout: Some(layout), shared: None, _parent: None })
    }

    /// The program's memory at `ptr` (registered host memory): used, never freed.
    pub(crate) fn program(ptr: NonNull<u8>) -> Backing {
        Backing { ptr, layout: None, shared: None, _parent: None }
    }

    /// The first `size` bytes of `file`, mapped shared: what one process writes there,
    /// another that maps the same file reads. `None` for size 0 or if the system refuses.
    pub(crate) fn shared(file: File, size: usize) -> Option<Backing> {
        if size == 0 {
            return None;
        }
        // SAFETY: a new mapping chosen by the system, of an open file's first `size` bytes.
        let p = unsafe { mmap(std::ptr::null_mut(), size, PROT_READ_WRITE, MAP_SHARED, file.as_raw_fd(), 0) };
        if p as isize == -1 {
            return None;
        }
        let ptr = NonNull::new(p.cast::<u8>())?;
        Some(Backing { ptr, layout: None, shared: Some((file, size)), _parent: None })
    }

    /// The bytes of `parent` from `offset` on (a buffer mapped onto imported external
    /// memory): the same memory, kept alive while the view lives. The caller keeps
    /// `offset` and the length it uses inside the parent; `None` only for a null address.
    pub(crate) fn view(parent: std::sync::Arc<Backing>, offset: usize) -> Option<Backing> {
        // The caller names an offset inside the parent (checked against its size there);
        // wrapping_add keeps this free of `unsafe`, and a pointer never read out of range.
        let ptr = NonNull::new(parent.as_ptr().wrapping_add(offset))?;
        Some(Backing { ptr, layout: None, shared: None, _parent: Some(parent) })
    }

    /// The file a shared backing maps.
    pub(crate) fn file(&self) -> Option<&File> {
        self.shared.as_ref().map(|(f, _)| f)
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
        if let Some((_, size)) = &self.shared {
            // SAFETY: mapped by `shared` with this length, unmapped once (the file closes
            // after).
            unsafe { munmap(self.ptr.as_ptr().cast(), *size) };
        }
    }
}
