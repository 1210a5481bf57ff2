//! What a kernel argument is ([`KernelArg`]): a value whose parameter points to its bytes,
//! and, for cudrv's device memory, the allocation a launch records a use of. Every value
//! of plain data is one; each kind of device memory implements it where it is declared.

use std::ffi::c_void;

use crate::resources::context::Context;
use crate::resources::memory::DeviceRepr;

pub(crate) mod sealed {
    use crate::resources::handle::Handle;
    use crate::resources::memory::DeviceMemory;

    /// The allocation a kernel argument is part of (`KernelArg::memory_use`): a launch
    /// records its use on the launch's stream. Not nameable outside cudrv.
    pub struct ArgUse<'a>(pub(crate) &'a Handle<DeviceMemory>);

    impl std::fmt::Debug for ArgUse<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt_debug(f)
        }
    }
}

use sealed::ArgUse;

/// A value that can be passed to a kernel: its parameter points to it.
///
/// # Safety
/// `param` must return a pointer to the bytes the kernel parameter is read from, valid
/// while `self` is borrowed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel argument",
    label = "not plain data (`DeviceRepr`) nor a kind of device memory a launch takes",
    note = "device memory is passed as a view: `launch.arg(&x.as_view())` (`use cudrv::prelude::*`); \
            a `Mapping`'s bytes as values of `T`: `launch.arg(&mapping.as_view().cast::<T>()?)`"
)]
pub unsafe trait KernelArg {
    /// The pointer the driver reads the parameter from.
    fn param(&self) -> *mut c_void;

    /// For cudrv's device memory (buffers and views): the allocation, whose use on the
    /// launch's stream the launch records (docs/memory.md). `None` for other arguments.
    #[doc(hidden)]
    fn memory_use(&self) -> Option<ArgUse<'_>> {
        None
    }

    /// The parameter's size in bytes, checked against the kernel's parameter layout
    /// where the driver reports it; 0 (the default): not checked.
    fn param_size(&self) -> usize {
        0
    }

    /// The context whose memory the argument is, checked against the launch's; `None`
    /// (the default): not memory of a context.
    fn param_context(&self) -> Option<&Context> {
        None
    }
}

// SAFETY: the value itself is the parameter.
unsafe impl<T: DeviceRepr> KernelArg for T {
    fn param(&self) -> *mut c_void {
        (self as *const T).cast_mut().cast()
    }

    fn param_size(&self) -> usize {
        std::mem::size_of::<T>()
    }
}
