//! Registration of the program's own host memory (`cuMemHostRegister`): a guard that
//! borrows the slice for as long as it is registered, so the memory can be neither freed
//! nor moved while the driver has it pinned, and unregisters it when dropped.

use std::ffi::c_void;
use std::marker::PhantomData;

use crate::error::Error;
use crate::resources::context::Context;
use crate::resources::flags::HostRegisterFlags;
use crate::resources::handle::{kind, Ownership, Unique};
use crate::resources::memory::DeviceRepr;
use crate::resources::values::value_count;
use crate::sys::CUdeviceptr;

kind!(
    /// The kind of a registration: unregistered in its context.
    Registration: *mut c_void = "HostRegistration", owner Context, in its context, release cuMemHostUnregister
);

/// The program's slice of `T`, registered with the driver (`cuMemHostRegister`): page-locked
/// and, with [`HostRegisterFlags::DEVICEMAP`], mapped into the device's address space
/// ([`HostRegistration::device_pointer`]). It borrows the slice mutably for its whole life,
/// so the memory cannot be freed, moved or touched except through it; dropping it
/// unregisters the memory (`cuMemHostUnregister`, in its context) and gives the slice back.
///
/// The host reads and writes the values through [`HostRegistration::as_slice`] and
/// [`HostRegistration::as_mut_slice`]. cudrv queues no device work on it: device work that
/// uses its device pointer (a kernel argument, an `unsafe` asynchronous copy) must be done
/// before the host touches those values or drops the guard (synchronise its stream).
///
/// A slice of no bytes registers nothing (no driver call).
pub struct HostRegistration<'a, T> {
    reg: Unique<Registration>,
    len: usize,
    _slice: PhantomData<&'a mut [T]>,
}

impl<T> std::fmt::Debug for HostRegistration<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.reg.fmt_debug(f)
    }
}

impl<'a, T: DeviceRepr> HostRegistration<'a, T> {
    /// Registers `values` in `context` with `flags` (a [`HostRegisterFlags`] or its raw
    /// bits). On error nothing is registered and the slice's borrow ends with the error.
    /// A real driver may refuse memory that is not page-aligned on some systems; Linux
    /// takes any address.
    pub fn new(
        context: &Context,
        values: &'a mut [T],
        flags: impl Into<HostRegisterFlags>,
    ) -> Result<HostRegistration<'a, T>, Error> {
        let (p, bytes) = (values.as_mut_ptr().cast::<c_void>(), size_of_val(values));
        let len = values.len();
        if bytes == 0 {
            let reg = Unique::new(context.clone(), p, Ownership::Borrowed);
            return Ok(HostRegistration { reg, len, _slice: PhantomData });
        }
        let flags = flags.into().bits();
        let pc = context.driver().pc();
        // SAFETY: `bytes` bytes at `p` are the program's, borrowed mutably by the guard for
        // as long as they are registered.
        let create = || unsafe { pc.cuMemHostRegister(p, bytes, flags) }.map(|()| p);
        let reg = Unique::create_in(context.clone(), context.as_raw(), create)?;
        Ok(HostRegistration { reg, len, _slice: PhantomData })
    }

    /// The values, read on the host.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the guard borrows the slice (`len` values at this address) mutably for
        // `'a`; this shared borrow of the guard keeps it so while it is used.
        unsafe { std::slice::from_raw_parts(self.reg.raw().cast::<T>(), self.len) }
    }

    /// The values, written on the host.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: the guard borrows the slice (`len` values at this address) mutably for
        // `'a`; this mutable borrow of the guard makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.reg.raw().cast::<T>(), self.len) }
    }

    value_count!(T, self => self.len);

    /// The context it is registered in.
    pub fn context(&self) -> &Context {
        self.reg.owner()
    }

    /// The device address of the registered memory (`cuMemHostGetDevicePointer`), for
    /// memory registered with [`HostRegisterFlags::DEVICEMAP`]; the driver refuses others.
    /// Null for a registration of no bytes.
    pub fn device_pointer(&self) -> Result<CUdeviceptr, Error> {
        if self.len == 0 || size_of::<T>() == 0 {
            return Ok(0);
        }
        let context = self.reg.owner();
        let mut d: CUdeviceptr = 0;
        let pc = context.driver().pc();
        // SAFETY: valid out-pointer; the memory is registered (held by the guard).
        context.run(|| unsafe { pc.cuMemHostGetDevicePointer(&mut d, self.reg.raw(), 0) })?;
        Ok(d)
    }
}
