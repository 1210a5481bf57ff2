//! Context-independent libraries (`cuLibraryLoadData`, CUDA 12.0+) and their kernels.

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use crate::error::CudaError;
use crate::resources::handle_arg;
use crate::resources::module::{self, c_name, LaunchConfig};
use crate::resources::stream::Stream;
use crate::scope::cleanup_in_context;
use crate::sys::{CUfunction, CUkernel, CUlibrary};
use crate::Driver;

/// A loaded library. Clones share it; the last one unloads it (if owned). Kernels from it
/// keep it alive.
#[derive(Clone)]
pub struct Library(Arc<LibraryInner>);

struct LibraryInner {
    driver: &'static Driver,
    raw: CUlibrary,
    owned: bool,
}

// SAFETY: a CUlibrary is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for LibraryInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for LibraryInner {}

/// A kernel of a [`Library`]; keeps the library alive.
#[derive(Clone)]
pub struct Kernel {
    library: Library,
    raw: CUkernel,
}

// SAFETY: a CUkernel is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl Library {
    /// Loads NUL-terminated PTX (or other text the driver accepts). Needs no current
    /// context. On error nothing is loaded.
    pub fn load_ptx(driver: &'static Driver, ptx: &CStr) -> Result<Library, CudaError> {
        // SAFETY: a CStr is NUL-terminated, so the driver reads no further than its end.
        unsafe { Library::load_data(driver, ptx.to_bytes_with_nul()) }
    }

    /// Loads `image` (a cubin, fatbin or NUL-terminated PTX). Needs no current context.
    /// On error nothing is loaded.
    ///
    /// # Safety
    /// The driver reads the image by its own headers, not by the slice's length: `image`
    /// must be a complete cubin or fatbin, or text that ends with a NUL byte.
    pub unsafe fn load_data(driver: &'static Driver, image: &[u8]) -> Result<Library, CudaError> {
        let mut raw: CUlibrary = std::ptr::null_mut();
        // SAFETY: valid out-pointer and image; no options.
        let status = unsafe {
            driver.p().cuLibraryLoadData(
                &mut raw,
                image.as_ptr().cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            )
        };
        CudaError::check(driver, "cuLibraryLoadData", status)?;
        Ok(Library(Arc::new(LibraryInner { driver, raw, owned: true })))
    }

    /// Adopts a library: the last clone unloads it.
    ///
    /// # Safety
    /// `raw` must be a live library that nothing else unloads.
    pub unsafe fn from_raw(driver: &'static Driver, raw: CUlibrary) -> Library {
        Library(Arc::new(LibraryInner { driver, raw, owned: true }))
    }

    /// Uses a library someone else owns; cudrv never unloads it.
    ///
    /// # Safety
    /// `raw` must stay loaded while this handle and its kernels are used.
    pub unsafe fn borrowed(driver: &'static Driver, raw: CUlibrary) -> Library {
        Library(Arc::new(LibraryInner { driver, raw, owned: false }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUlibrary {
        self.0.raw
    }

    /// The kernel called `name` (`cuLibraryGetKernel`).
    pub fn kernel(&self, name: &str) -> Result<Kernel, CudaError> {
        let d = self.0.driver;
        let name = c_name(d, "cuLibraryGetKernel", name)?;
        let mut raw: CUkernel = std::ptr::null_mut();
        // SAFETY: valid out-pointer and C string; the library is live.
        let status = unsafe { d.p().cuLibraryGetKernel(&mut raw, self.0.raw, name.as_ptr()) };
        CudaError::check(d, "cuLibraryGetKernel", status)?;
        Ok(Kernel { library: self.clone(), raw })
    }
}

impl Kernel {
    /// The raw handle.
    pub fn as_raw(&self) -> CUkernel {
        self.raw
    }

    /// The library it belongs to.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Launches it on `stream` (`cuLaunchKernel` with the kernel handle, which the driver
    /// resolves for the stream's context).
    ///
    /// # Safety
    /// `params` must point to arguments matching the kernel's parameters.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        config: &LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        // SAFETY: forwarded from the caller; a CUkernel may be passed as a CUfunction.
        unsafe { module::launch(stream, self.raw.cast::<crate::sys::CUfunc_st>() as CUfunction, config, params) }
    }
}

impl Drop for LibraryInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.driver, self.raw);
        // SAFETY: we own the library; its kernels hold clones, so none is left.
        let unload = || unsafe { d.p().cuLibraryUnload(raw) };
        cleanup_in_context(d, None, "cuLibraryUnload", handle_arg(raw), unload, || {});
    }
}
