//! User objects (`cuUserObjectCreate`): a Rust value whose destruction the driver defers
//! until the graphs that reference it are done with it.

use std::ffi::c_void;
use std::sync::Arc;

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::handle_arg;
use crate::resources::host_fn::run_user_code;
use crate::scope::cleanup_in_context;
use crate::sys::{CUuserObject, CUuserObject_flags};
use crate::Driver;

/// A user object. Clones share one driver reference, released by the last clone; the value
/// is dropped on a driver thread once no graph references it either. A panic in its drop
/// is caught and reported.
#[derive(Clone)]
pub struct UserObject(Arc<UserObjectInner>);

struct UserObjectInner {
    driver: &'static Driver,
    raw: CUuserObject,
    owned: bool,
}

// SAFETY: a CUuserObject is a driver handle usable from any thread; never dereferenced.
unsafe impl Send for UserObjectInner {}
// SAFETY: as above; immutable after construction.
unsafe impl Sync for UserObjectInner {}

/// The destructor the driver calls: drops the boxed value, catching a panic.
unsafe extern "C" fn destroy<T: Send + 'static>(data: *mut c_void) {
    run_user_code("user object destructor", Arg::Pointer(data as usize), || {
        // SAFETY: `data` is the Box<T> leaked by `UserObject::new`; the driver calls the
        // destructor once.
        drop(unsafe { Box::from_raw(data.cast::<T>()) });
    });
}

impl UserObject {
    /// Hands `value` to the driver as a user object. On error `value` is dropped here.
    pub fn new<T: Send + 'static>(driver: &'static Driver, value: T) -> Result<UserObject, CudaError> {
        let data = Box::into_raw(Box::new(value)).cast::<c_void>();
        let mut raw: CUuserObject = std::ptr::null_mut();
        let flags = CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.0;
        // SAFETY: valid out-pointer; `destroy::<T>` matches CUhostFn and owns `data`.
        let status = unsafe { driver.p().cuUserObjectCreate(&mut raw, data, Some(destroy::<T>), 1, flags) };
        if let Err(e) = CudaError::check(driver, "cuUserObjectCreate", status) {
            // SAFETY: the driver did not take `data`; it is still the Box from above.
            drop(unsafe { Box::from_raw(data.cast::<T>()) });
            return Err(e);
        }
        Ok(UserObject(Arc::new(UserObjectInner { driver, raw, owned: true })))
    }

    /// Adopts one reference to a user object: the last clone releases it.
    ///
    /// # Safety
    /// `raw` must be a live user object, and the caller must hand over one reference it
    /// holds.
    pub unsafe fn from_raw(driver: &'static Driver, raw: CUuserObject) -> UserObject {
        UserObject(Arc::new(UserObjectInner { driver, raw, owned: true }))
    }

    /// Uses a user object without taking a reference; cudrv never releases it.
    ///
    /// # Safety
    /// `raw` must stay live while this handle is used.
    pub unsafe fn borrowed(driver: &'static Driver, raw: CUuserObject) -> UserObject {
        UserObject(Arc::new(UserObjectInner { driver, raw, owned: false }))
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUuserObject {
        self.0.raw
    }

    /// The driver it was made with.
    pub fn driver(&self) -> &'static Driver {
        self.0.driver
    }
}

impl Drop for UserObjectInner {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (d, raw) = (self.driver, self.raw);
        // SAFETY: this handle owns one reference, released once here.
        let release = || unsafe { d.p().cuUserObjectRelease(raw, 1) };
        cleanup_in_context(d, None, "cuUserObjectRelease", handle_arg(raw), release, || {});
    }
}
