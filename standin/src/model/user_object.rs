//! User objects (`cuUserObjectCreate`).

use std::ffi::c_uint;

use crate::run::queue::HostCall;

/// A user object.
pub(crate) struct UserObject {
    pub(crate) destroy: HostCall,
    pub(crate) refs: c_uint,
}
