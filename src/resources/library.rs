//! Context-independent libraries (`cuLibraryLoadData`, CUDA 12.0+) and their kernels.

use crate::error::Error;
use crate::resources::function_part::Part;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::module::c_name;
use crate::sys::{CUkernel, CUlibrary};
use crate::Driver;

kind!(
    /// The library kind: owned by its driver, needs no context.
    LibraryKind: CUlibrary = "Library", owner &'static Driver, driver |o| o, context |_o| None,
    release cuLibraryUnload
);

/// A loaded library. Clones share it; the last one unloads it (if owned). Kernels
/// from it keep it alive.
#[derive(Clone)]
pub struct Library(pub(crate) Handle<LibraryKind>);
handle_type!(Library: LibraryKind => CUlibrary, adopt: &'static Driver, "a library");

kind!(
    /// The kernel kind: part of its library.
    KernelKind: CUkernel = "Kernel", part of Part<Library>, driver |o| o.driver, released with cuLibraryUnload
);

/// A kernel of a [`Library`]; keeps the library alive.
#[derive(Clone)]
pub struct Kernel(pub(crate) Handle<KernelKind>);
handle_type!(Kernel: KernelKind => CUkernel);

impl Library {
    /// Loads `image` (a cubin, fatbin or NUL-terminated PTX). Needs no current context.
    /// On error nothing is loaded.
    ///
    /// # Safety
    /// The driver reads the image by its own headers, not by the slice's length: `image`
    /// must be a complete cubin or fatbin, or text that ends with a NUL byte.
    pub unsafe fn load_data(driver: &'static Driver, image: &[u8]) -> Result<Library, Error> {
        let mut raw: CUlibrary = std::ptr::null_mut();
        let (options, values) = (std::ptr::null_mut(), std::ptr::null_mut());
        let (library_options, library_values) = (std::ptr::null_mut(), std::ptr::null_mut());
        let image = image.as_ptr().cast();
        // SAFETY: valid out-pointer and image; no options.
        unsafe {
            driver.pc().cuLibraryLoadData(&mut raw, image, options, values, 0, library_options, library_values, 0)
        }?;
        Ok(Library(Handle::new(driver, raw, Ownership::Owned)))
    }

    /// The driver it was loaded by.
    pub fn driver(&self) -> &'static Driver {
        self.0.driver()
    }

    /// The kernel called `name` (`cuLibraryGetKernel`). A name with a NUL byte is refused
    /// before any driver call.
    pub fn kernel(&self, name: &str) -> Result<Kernel, Error> {
        let name = c_name("Library::kernel", name)?;
        let raw = (self.driver().typed().cuLibraryGetKernel(self.live(), &name))
            .map_err(|e| crate::resources::module::named(e, "kernel", &name))?;
        Ok(Kernel(Handle::new(Part::new(self.clone(), self.driver()), raw, Ownership::Borrowed)))
    }
}

impl Kernel {
    /// The library it belongs to.
    pub fn library(&self) -> &Library {
        &self.0.owner().parent
    }
}
