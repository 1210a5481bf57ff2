//! Memory pools (`cuMemPoolCreate`), their stream-ordered allocations, their attributes
//! (`cuMemPoolGetAttribute`/`SetAttribute`: release threshold, reserved and used memory,
//! reuse policies) and trimming (`cuMemPoolTrimTo`), and the sharing of a pool with
//! another process through a POSIX file descriptor.

use std::ffi::{c_int, c_void};

use crate::device::Device;
use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::flags::ShareableHandleTypes;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::sys::{
    CUmemAccessDesc, CUmemAccess_flags, CUmemAllocationHandleType, CUmemAllocationType, CUmemLocation,
    CUmemLocationType, CUmemPoolProps, CUmemPool_attribute, CUmemoryPool,
};

kind!(
    /// The memory pool kind: owned by its context, destroyed in it.
    PoolKind: CUmemoryPool = "MemoryPool", owner Context, in its context, release cuMemPoolDestroy
);

/// A memory pool. Clones share it; the last one destroys it (if owned) in its
/// context. Allocations from it keep it alive.
#[derive(Clone)]
pub struct MemoryPool(pub(crate) Handle<PoolKind>);
handle_type!(MemoryPool: PoolKind => CUmemoryPool, adopt: &Context, "a memory pool");

/// The location of `device`'s memory.
fn device_location(device: i32) -> CUmemLocation {
    let mut location = CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, ..Default::default() };
    location.__bindgen_anon_1.id = device;
    location
}

/// A pool's attribute accessors (inside `impl MemoryPool`), one row each: `u64 name =
/// ATTR;` a 64-bit attribute's getter; `flag name, set_name = ATTR;` a reuse policy's
/// getter and its setter.
macro_rules! pool_attributes {
    ($($(#[$doc:meta])* $kind:ident $name:ident $(, $setter:ident)? = $attr:ident;)+) => {$(
        pool_attributes!(@row $kind [$(#[$doc])*] $name $(, $setter)? = $attr);
    )+};
    (@row u64 [$(#[$doc:meta])*] $name:ident = $attr:ident) => {
        $(#[$doc])*
        pub fn $name(&self) -> Result<u64, Error> {
            Ok(self.get_u64(CUmemPool_attribute::$attr)?)
        }
    };
    (@row flag [$(#[$doc:meta])*] $name:ident, $setter:ident = $attr:ident) => {
        $(#[$doc])*
        pub fn $name(&self) -> Result<bool, Error> {
            Ok(self.get_flag(CUmemPool_attribute::$attr)?)
        }

        #[doc = concat!("Sets [`MemoryPool::", stringify!($name), "`].")]
        pub fn $setter(&self, on: bool) -> Result<(), Error> {
            Ok(self.set_flag(CUmemPool_attribute::$attr, on)?)
        }
    };
}

impl MemoryPool {
    /// Creates a pool of device memory on `context`'s device whose allocations can be
    /// exported as `types` ([`ShareableHandleTypes::POSIX_FD`] for another process;
    /// [`ShareableHandleTypes::NONE`] for none). On error nothing is created.
    pub fn new(context: &Context, types: impl Into<ShareableHandleTypes>) -> Result<MemoryPool, Error> {
        let props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            handleTypes: CUmemAllocationHandleType(types.into().bits()),
            location: device_location(context.device().as_raw()),
            ..Default::default()
        };
        let pc = context.driver().pc();
        // SAFETY: valid out-pointer and properties.
        let create = |raw: &mut CUmemoryPool| unsafe { pc.cuMemPoolCreate(raw, &props) };
        Ok(Handle::create_out(context.clone(), context.as_raw(), create).map(MemoryPool)?)
    }

    /// The device's default pool (`cuDeviceGetDefaultMemPool`), which is never destroyed.
    pub fn device_default(context: &Context) -> Result<MemoryPool, Error> {
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        unsafe { context.driver().pc().cuDeviceGetDefaultMemPool(&mut raw, context.device().as_raw()) }?;
        Ok(MemoryPool(Handle::new(context.clone(), raw, Ownership::Borrowed)))
    }

    /// Opens a pool another process exported with [`MemoryPool::export_fd`]. The last clone
    /// destroys this process's view of it. On error nothing is imported.
    pub fn import_fd(context: &Context, fd: i32) -> Result<MemoryPool, Error> {
        let pc = context.driver().pc();
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let handle = fd as isize as *mut c_void;
        // SAFETY: for POSIX fds the handle argument is the fd itself, cast to a pointer.
        let create = |raw: &mut CUmemoryPool| unsafe { pc.cuMemPoolImportFromShareableHandle(raw, handle, kind, 0) };
        Ok(Handle::create_out(context.clone(), context.as_raw(), create).map(MemoryPool)?)
    }

    /// The context it was made in.
    pub fn context(&self) -> &Context {
        self.0.owner()
    }

    /// Lets `device` read (and, with `write`, write) the pool's memory
    /// (`cuMemPoolSetAccess`): for a pool imported on another device, or peers of its own.
    pub fn set_access(&self, device: &Device, write: bool) -> Result<(), Error> {
        let flags = if write {
            CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        } else {
            CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ
        };
        let desc = CUmemAccessDesc { location: device_location(device.as_raw()), flags };
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        // SAFETY: one valid descriptor; the pool is live.
        self.context().run(|| unsafe { pc.cuMemPoolSetAccess(raw, &desc, 1) })
    }

    /// A file descriptor another process can open the pool with
    /// (`cuMemPoolExportToShareableHandle`). The caller owns the descriptor.
    pub fn export_fd(&self) -> Result<i32, Error> {
        let pc = self.0.driver().pc();
        let mut fd: i32 = -1;
        let kind = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        // SAFETY: for POSIX fds the driver writes an int through the handle pointer.
        unsafe { pc.cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), self.as_raw(), kind, 0) }?;
        Ok(fd)
    }

    /// The bytes the pool keeps reserved when memory is freed back to it, before it
    /// releases memory to the system at the next synchronisation
    /// (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`; 0 by default: release everything).
    pub fn release_threshold(&self) -> Result<u64, Error> {
        Ok(self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?)
    }

    /// Sets the release threshold (see [`MemoryPool::release_threshold`]; `u64::MAX`
    /// keeps everything). On error it is unchanged.
    pub fn set_release_threshold(&self, bytes: u64) -> Result<(), Error> {
        Ok(self.set_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, bytes)?)
    }

    pool_attributes! {
        /// The bytes of device memory the pool holds now, in use or not
        /// (`CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`).
        u64 reserved_current = CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT;
        /// The most bytes the pool has held since it was made or the mark was reset
        /// (`CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH`).
        u64 reserved_high = CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH;
        /// The bytes of the pool's allocations in use now (`CU_MEMPOOL_ATTR_USED_MEM_CURRENT`).
        u64 used_current = CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        /// The most bytes in use since the pool was made or the mark was reset
        /// (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`).
        u64 used_high = CU_MEMPOOL_ATTR_USED_MEM_HIGH;
        /// Whether memory freed on one stream may be reused on another that waits for an
        /// event recorded after the free (`CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES`;
        /// on by default).
        flag reuse_follow_event_dependencies, set_reuse_follow_event_dependencies =
            CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES;
        /// Whether memory may be reused once its free is known to be done, with no
        /// dependency between the streams (`CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC`; on
        /// by default).
        flag reuse_allow_opportunistic, set_reuse_allow_opportunistic = CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC;
        /// Whether the driver may add a dependency on a free's stream to reuse its memory
        /// (`CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES`; on by default).
        flag reuse_allow_internal_dependencies, set_reuse_allow_internal_dependencies =
            CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
    }

    /// Resets the reserved high mark to the current reservation.
    pub fn reset_reserved_high(&self) -> Result<(), Error> {
        Ok(self.set_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0)?)
    }

    /// Resets the used high mark to the current use.
    pub fn reset_used_high(&self) -> Result<(), Error> {
        Ok(self.set_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0)?)
    }

    /// Releases memory the pool holds but does not use, keeping at least
    /// `min_bytes_to_keep` reserved (`cuMemPoolTrimTo`). Memory of live allocations is
    /// never released.
    pub fn trim_to(&self, min_bytes_to_keep: usize) -> Result<(), Error> {
        let t = self.0.driver().typed();
        self.context().run(|| t.cuMemPoolTrimTo(self.live(), min_bytes_to_keep))
    }

    /// A 64-bit attribute (`cuuint64_t`).
    fn get_u64(&self, attr: CUmemPool_attribute) -> Result<u64, CudaError> {
        self.attribute(attr, false, None)
    }

    fn set_u64(&self, attr: CUmemPool_attribute, value: u64) -> Result<(), CudaError> {
        self.attribute(attr, false, Some(value)).map(drop)
    }

    /// A reuse policy (an `int`, 0 or 1).
    fn get_flag(&self, attr: CUmemPool_attribute) -> Result<bool, CudaError> {
        Ok(self.attribute(attr, true, None)? != 0)
    }

    fn set_flag(&self, attr: CUmemPool_attribute, on: bool) -> Result<(), CudaError> {
        self.attribute(attr, true, Some(u64::from(on))).map(drop)
    }

    /// Reads attribute `attr` (`set: None`) or writes `set` to it, through an 8-byte slot:
    /// as wide as the widest pool attribute (`cuuint64_t`), so that no attribute the driver
    /// writes or reads can run past it, whatever `attr` is. An `int` attribute is the
    /// slot's first four bytes.
    fn attribute(&self, attr: CUmemPool_attribute, int: bool, set: Option<u64>) -> Result<u64, CudaError> {
        let (pc, raw) = (self.0.driver().pc(), self.as_raw());
        let mut slot = [0u8; 8];
        if let Some(v) = set {
            match int {
                true => slot[..4].copy_from_slice(&c_int::try_from(v).unwrap_or(c_int::MAX).to_ne_bytes()),
                false => slot = v.to_ne_bytes(),
            }
        }
        let at: *mut std::ffi::c_void = slot.as_mut_ptr().cast();
        // SAFETY: the pool is live (held); `at` is 8 writable bytes, which every pool
        // attribute fits.
        self.context().run_raw(|| unsafe {
            match set {
                None => pc.cuMemPoolGetAttribute(raw, attr, at),
                Some(_) => pc.cuMemPoolSetAttribute(raw, attr, at),
            }
        })?;
        Ok(match int {
            true => u64::from(u32::from_ne_bytes([slot[0], slot[1], slot[2], slot[3]])),
            false => u64::from_ne_bytes(slot),
        })
    }
}
