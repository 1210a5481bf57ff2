//! User objects (`cuUserObjectCreate`): a Rust value whose destruction the driver defers
//! until the graphs that reference it are done with it.

use std::ffi::c_void;

use crate::error::Error;
use crate::report::Arg;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::host_fn::run_user_code;
use crate::sys::{CUuserObject, CUuserObject_flags};
use crate::Driver;

kind!(
    /// The user object kind: one driver reference, owned by its driver.
    UserObjectKind: CUuserObject = "UserObject", owner &'static Driver, driver |o| o, context |_o| None,
    release cuUserObjectRelease(1)
);

/// A user object. Clones share one driver reference, released by the last clone; the
/// value is dropped on a driver thread once no graph references it either. A panic in
/// its drop is caught and reported.
#[derive(Clone)]
pub struct UserObject(pub(crate) Handle<UserObjectKind>);
handle_type!(UserObject: UserObjectKind => CUuserObject, adopt: &'static Driver, "a user object (one reference to it)");

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
    pub fn new<T: Send + 'static>(driver: &'static Driver, value: T) -> Result<UserObject, Error> {
        let data = Box::into_raw(Box::new(value)).cast::<c_void>();
        let mut raw: CUuserObject = std::ptr::null_mut();
        let flags = CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC.0;
        // SAFETY: valid out-pointer; `destroy::<T>` matches CUhostFn and owns `data`.
        if let Err(e) = unsafe { driver.pc().cuUserObjectCreate(&mut raw, data, Some(destroy::<T>), 1, flags) } {
            // SAFETY: the driver did not take `data`; it is still the Box from above.
            drop(unsafe { Box::from_raw(data.cast::<T>()) });
            return Err(Error::from(e));
        }
        Ok(UserObject(Handle::new(driver, raw, Ownership::Owned)))
    }

    /// The driver it was made with.
    pub fn driver(&self) -> &'static Driver {
        self.0.driver()
    }
}
