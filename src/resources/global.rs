//! Module and library globals (`__device__`, `__constant__` and `__managed__` variables):
//! `cuModuleGetGlobal`, `cuLibraryGetGlobal` and `cuLibraryGetManaged`, as typed device
//! memory that keeps its module or library loaded.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;

use crate::error::{Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::library::Library;
use crate::resources::memory::{DeviceBuffer, DeviceRepr};
use crate::resources::module::{c_name, named, Module};
use crate::resources::values::value_count;
use crate::resources::view::{host_copies, DeviceSlice, DeviceView};
use crate::sys::CUdeviceptr;

/// What keeps a global's memory alive: the module or library that holds it.
#[derive(Clone)]
enum Holder {
    Module(Module),
    Library(Library),
}

/// A global variable of a loaded [`Module`] or [`Library`]: `len` values of `T` at a
/// device address, in a context. It keeps its module (or library) loaded, so the address
/// stays valid as long as any clone lives. Made by [`Module::global`],
/// [`Library::global`] and [`Library::managed_global`].
///
/// It is device memory like a [`DeviceBuffer`]: it can be copied to and from the host
/// (synchronously, or ordered on a stream through a [`PinnedBuffer`](crate::PinnedBuffer)) and passed to a
/// kernel as its address (`launch.arg(&global)`). `__constant__` data is written from
/// the host the same way; kernels only read it.
pub struct Global<T> {
    address: CUdeviceptr,
    len: usize,
    /// The global's bytes as device memory nothing frees: its copies are a view's.
    values: DeviceBuffer<T>,
    context: Context,
    managed: bool,
    holder: Holder,
    _values: PhantomData<T>,
}

impl<T> Clone for Global<T> {
    fn clone(&self) -> Global<T> {
        Global {
            address: self.address,
            len: self.len,
            values: self.values.clone(),
            context: self.context.clone(),
            managed: self.managed,
            holder: self.holder.clone(),
            _values: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Global<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Global({:#x}, {} x {} bytes)", self.address, self.len, size_of::<T>())
    }
}

/// How a global is looked up.
#[derive(Clone, Copy)]
enum Lookup {
    Module,
    Library,
    Managed,
}

impl Lookup {
    fn what(self) -> &'static str {
        match self {
            Lookup::Module => "Module::global",
            Lookup::Library => "Library::global",
            Lookup::Managed => "Library::managed_global",
        }
    }
}

/// Whether the driver says `address` is managed memory (`CU_POINTER_ATTRIBUTE_IS_MANAGED`);
/// a driver that cannot say: not managed.
fn is_managed_memory(context: &Context, address: CUdeviceptr) -> bool {
    let mut managed: std::ffi::c_uint = 0;
    let attr = crate::sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED;
    let pc = context.driver().pc();
    // SAFETY: IS_MANAGED writes an unsigned int, which `managed` is; `address` is a live
    // global of a module the caller holds.
    let asked = unsafe { pc.cuPointerGetAttribute((&mut managed as *mut std::ffi::c_uint).cast(), attr, address) };
    asked.is_ok() && managed != 0
}

/// `bytes` as a number of `T`, or an error naming the symbol and both sizes.
fn len_of<T>(lookup: Lookup, name: &CStr, bytes: usize) -> Result<usize, InvalidArgument> {
    let size = size_of::<T>();
    if size == 0 || bytes % size != 0 {
        let why = format!(
            "the global {:?} is {bytes} bytes, not a whole number of {} values of {size} bytes",
            name.to_string_lossy(),
            std::any::type_name::<T>()
        );
        return Err(InvalidArgument::new(lookup.what(), why));
    }
    Ok(bytes / size)
}

impl<T: DeviceRepr> Global<T> {
    fn find(context: &Context, holder: Holder, lookup: Lookup, name: &str) -> Result<Global<T>, Error> {
        let name = c_name(lookup.what(), name)?;
        let t = context.driver().typed();
        let (address, bytes): (CUdeviceptr, usize) = context
            .run_raw(|| match (&holder, lookup) {
                (Holder::Module(m), _) => t.cuModuleGetGlobal(m.live(), &name),
                (Holder::Library(l), Lookup::Managed) => t.cuLibraryGetManaged(l.live(), &name),
                (Holder::Library(l), _) => t.cuLibraryGetGlobal(l.live(), &name),
            })
            .map_err(|e| named(e, "global", &name))?;
        let len = len_of::<T>(lookup, &name, bytes)?;
        // A module's `__managed__` variable is found like any global: the driver says
        // whether its memory is managed.
        let managed = matches!(lookup, Lookup::Managed) || (bytes > 0 && is_managed_memory(context, address));
        // SAFETY: the module or library (`holder`, which the global keeps) keeps its `len`
        // values at `address` in `context` loaded while any clone of the global lives.
        let values = unsafe { DeviceBuffer::borrowed(context, address, len) };
        Ok(Global { address, len, values, context: context.clone(), managed, holder, _values: PhantomData })
    }
}

impl Module {
    /// The global variable `name` of this module (`cuModuleGetGlobal`; `__device__` or
    /// `__constant__`), as `len` values of `T`. A name with a NUL byte is refused before
    /// any driver call; a name the module does not have is the driver's
    /// `CUDA_ERROR_NOT_FOUND` with a note naming it; a global whose size is not a whole
    /// number of `T` is an [`InvalidArgument`] naming the symbol and both sizes (the
    /// lookup changed nothing). The global keeps the module loaded.
    pub fn global<T: DeviceRepr>(&self, name: &str) -> Result<Global<T>, Error> {
        Global::find(self.context(), Holder::Module(self.clone()), Lookup::Module, name)
    }
}

impl Library {
    /// The global variable `name` of this library as loaded in `context`
    /// (`cuLibraryGetGlobal`, with `context` current: each context has its own copy), as
    /// values of `T`. Errors as [`Module::global`]. The global keeps the library loaded.
    pub fn global<T: DeviceRepr>(&self, context: &Context, name: &str) -> Result<Global<T>, Error> {
        Global::find(context, Holder::Library(self.clone()), Lookup::Library, name)
    }

    /// The managed (`__managed__`) variable `name` of this library (`cuLibraryGetManaged`),
    /// as values of `T`; `context` is the context its copies run in. Errors as
    /// [`Module::global`].
    pub fn managed_global<T: DeviceRepr>(&self, context: &Context, name: &str) -> Result<Global<T>, Error> {
        Global::find(context, Holder::Library(self.clone()), Lookup::Managed, name)
    }
}

/// Checks that `n` values fit in a global of `len`.
fn check_fits(what: &'static str, n: usize, len: usize) -> Result<(), InvalidArgument> {
    if n > len {
        return Err(InvalidArgument::new(what, format!("{n} values do not fit in a global of {len}")));
    }
    Ok(())
}

impl<T> Global<T> {
    /// The device address.
    #[inline(always)]
    pub fn as_raw(&self) -> CUdeviceptr {
        self.address
    }

    value_count!(T, self => self.len);

    /// The context its copies run in (the module's, or the one the library's global was
    /// looked up in).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Whether it is a managed variable (`__managed__`: [`Library::managed_global`], or a
    /// module's found by [`Module::global`], which the driver reports as managed memory).
    /// Its values are read and written from the host like any global's, with
    /// [`Global::to_vec`] and [`Global::copy_from_host`] (which wait for nothing: finish
    /// the kernels that use it first).
    ///
    /// ```
    /// # cudrv_standin::install().unwrap();
    /// let ctx = cudrv::init()?.device(0)?.primary_context()?;
    /// let ptx = ".version 9.0\n.target sm_90\n.address_size 64\n\
    ///            .global .attribute(.managed) .align 4 .u32 counter;\n\
    ///            .visible .entry k() { ret; }";
    /// let module = cudrv::Module::from_ptx(&ctx, ptx)?;
    /// let counter = module.global::<u32>("counter")?;
    /// assert!(counter.is_managed());
    /// counter.copy_from_host(&[7])?;
    /// assert_eq!(counter.to_vec()?, [7]);
    /// # Ok::<(), cudrv::Error>(())
    /// ```
    pub fn is_managed(&self) -> bool {
        self.managed
    }

    /// The module that holds it, if it is a module's.
    pub fn module(&self) -> Option<&Module> {
        match &self.holder {
            Holder::Module(m) => Some(m),
            Holder::Library(_) => None,
        }
    }

    /// The library that holds it, if it is a library's.
    pub fn library(&self) -> Option<&Library> {
        match &self.holder {
            Holder::Library(l) => Some(l),
            Holder::Module(_) => None,
        }
    }
}

impl<T: DeviceRepr> Global<T> {
    /// The whole global as a view: its copies are a view's, checked and tracked as a
    /// buffer's are.
    fn view(&self) -> DeviceView<'_, T> {
        self.values.as_view()
    }

    host_copies!(Global, "global", view);

    /// Copies `src` to the start of the global (`cuMemcpyDtoD`, synchronous with respect
    /// to the host). A longer source is refused before any driver call.
    pub fn copy_from_device(&self, src: &DeviceBuffer<T>) -> Result<(), Error> {
        self.view().write_from_device("Global::copy_from_device", src.as_view())
    }

    /// Copies the start of the global into `dst` (`cuMemcpyDtoD`). A destination longer
    /// than the global is refused before any driver call.
    pub fn copy_to_device(&self, dst: &DeviceBuffer<T>) -> Result<(), Error> {
        check_fits("Global::copy_to_device", dst.len(), self.len)?;
        dst.as_view().write_from_device("Global::copy_to_device", self.view().slice(..dst.len())?)
    }
}

// SAFETY: the parameter is the device address, a field of the global: stable while it is
// borrowed by the launch.
unsafe impl<T> KernelArg for Global<T> {
    fn param(&self) -> *mut c_void {
        (&self.address as *const CUdeviceptr).cast_mut().cast()
    }
}
