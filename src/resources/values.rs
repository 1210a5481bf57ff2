//! Plain values the driver takes and gives back that several families share: function
//! attributes and cache preferences, parameter places, and the L2 access policy of
//! streams and launches. The safe layer's bottom floor (DESIGN.md): it imports no
//! resource.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::error::CudaError;
use crate::sys::{
    CUaccessPolicyWindow, CUaccessProperty, CUdeviceptr, CUfunc_cache, CUfunction_attribute, CUlaunchMemSyncDomain,
};

/// Writes a value enum's `raw` and `from_raw` (inside its `impl`) from one table of
/// `Variant => CONSTANT` rows, so the two directions cannot disagree. `raw:` adds arms for
/// variants the table does not list (ones that carry a value); `from_raw:` ends the
/// reverse match (a value the table does not name: a default, or `Other`). An enum the
/// driver only reports has only `from_raw`: `fn from_raw(CUxxx) -> Enum;` and the same
/// table.
macro_rules! raw_mapping {
    (
        $(#[$raw_doc:meta])* $raw_vis:vis fn raw -> $raw:ty;
        $(#[$from_doc:meta])* $from_vis:vis fn from_raw -> $ty:ident;
        { $($variant:ident => $value:path),+ $(,)? }
        $(raw: { $($raw_pat:pat => $raw_out:expr),+ $(,)? })?
        from_raw: { $($from_pat:pat => $from_out:expr),+ $(,)? }
    ) => {
        $(#[$raw_doc])*
        $raw_vis fn raw(self) -> $raw {
            match self {
                $($ty::$variant => $value,)+
                $($($raw_pat => $raw_out,)+)?
            }
        }

        $crate::resources::values::raw_mapping! {
            $(#[$from_doc])* $from_vis fn from_raw($raw) -> $ty;
            { $($variant => $value),+ }
            from_raw: { $($from_pat => $from_out),+ }
        }
    };
    (
        $(#[$from_doc:meta])* $from_vis:vis fn from_raw($raw:ty) -> $ty:ident;
        { $($variant:ident => $value:path),+ $(,)? }
        from_raw: { $($from_pat:pat => $from_out:expr),+ $(,)? }
    ) => {
        $(#[$from_doc])*
        $from_vis fn from_raw(raw: $raw) -> $ty {
            match raw {
                $($value => $ty::$variant,)+
                $($from_pat => $from_out,)+
            }
        }
    };
}
pub(crate) use raw_mapping;

/// `len`, `is_empty` and `size_bytes` (inside an `impl`) of memory holding values of `$t`,
/// counted by `$len`: `value_count!(T, self => self.len)`. One definition for every kind
/// of memory, so they cannot read differently.
macro_rules! value_count {
    ($t:ty, $this:ident => $len:expr) => {
        /// The number of values.
        pub fn len(&$this) -> usize {
            $len
        }

        /// Whether it holds no values.
        pub fn is_empty(&$this) -> bool {
            $this.len() == 0
        }

        /// Its size in bytes.
        pub fn size_bytes(&$this) -> usize {
            $this.len().saturating_mul(std::mem::size_of::<$t>())
        }
    };
}
pub(crate) use value_count;

/// An attribute of a function or kernel (`CUfunction_attribute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FunctionAttribute {
    /// The most threads per block a launch may have (read-only; depends on the function's
    /// resources and the device).
    MaxThreadsPerBlock,
    /// Statically allocated shared memory per block, in bytes (read-only).
    SharedSizeBytes,
    /// User-allocated constant memory, in bytes (read-only).
    ConstSizeBytes,
    /// Local memory per thread, in bytes (read-only).
    LocalSizeBytes,
    /// Registers per thread (read-only).
    NumRegs,
    /// The PTX virtual architecture it was compiled for, as `major * 10 + minor` (read-only).
    PtxVersion,
    /// The binary architecture it was compiled for, as `major * 10 + minor` (read-only).
    BinaryVersion,
    /// Whether it was compiled with `-Xptxas --dlcm=ca` (read-only).
    CacheModeCa,
    /// The most dynamic shared memory per block a launch may ask for, in bytes
    /// (settable: above 48 KiB a kernel must opt in).
    MaxDynamicSharedSizeBytes,
    /// The preferred shared-memory carveout, in percent of the maximum (settable; -1 is
    /// no preference).
    PreferredSharedMemoryCarveout,
    /// Whether a launch must give a cluster size (read-only; compute capability 9.0+).
    ClusterSizeMustBeSet,
    /// The cluster width it was compiled for, 0 if none (settable before the first launch).
    RequiredClusterWidth,
    /// The cluster height it was compiled for, 0 if none (settable before the first launch).
    RequiredClusterHeight,
    /// The cluster depth it was compiled for, 0 if none (settable before the first launch).
    RequiredClusterDepth,
    /// Whether it may be launched with a non-portable cluster size (settable).
    NonPortableClusterSizeAllowed,
    /// The cluster scheduling policy preference (`CUclusterSchedulingPolicy`, settable).
    ClusterSchedulingPolicyPreference,
    /// Any other attribute, by its raw value (newer than this enum, or unknown: the
    /// driver answers `CUDA_ERROR_INVALID_VALUE` for an attribute it does not know).
    Raw(CUfunction_attribute),
}

impl FunctionAttribute {
    /// The driver's value.
    #[inline]
    pub fn raw(self) -> CUfunction_attribute {
        type A = CUfunction_attribute;
        match self {
            FunctionAttribute::MaxThreadsPerBlock => A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            FunctionAttribute::SharedSizeBytes => A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            FunctionAttribute::ConstSizeBytes => A::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
            FunctionAttribute::LocalSizeBytes => A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
            FunctionAttribute::NumRegs => A::CU_FUNC_ATTRIBUTE_NUM_REGS,
            FunctionAttribute::PtxVersion => A::CU_FUNC_ATTRIBUTE_PTX_VERSION,
            FunctionAttribute::BinaryVersion => A::CU_FUNC_ATTRIBUTE_BINARY_VERSION,
            FunctionAttribute::CacheModeCa => A::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA,
            FunctionAttribute::MaxDynamicSharedSizeBytes => A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            FunctionAttribute::PreferredSharedMemoryCarveout => A::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            FunctionAttribute::ClusterSizeMustBeSet => A::CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET,
            FunctionAttribute::RequiredClusterWidth => A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH,
            FunctionAttribute::RequiredClusterHeight => A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
            FunctionAttribute::RequiredClusterDepth => A::CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH,
            FunctionAttribute::NonPortableClusterSizeAllowed => A::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            FunctionAttribute::ClusterSchedulingPolicyPreference => {
                A::CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
            }
            FunctionAttribute::Raw(raw) => raw,
        }
    }

    /// Its place among the attributes the driver never changes for a loaded function (it
    /// refuses to set them), which [`Fixed`] remembers; `None` for the settable ones.
    #[inline]
    fn fixed_slot(self) -> Option<usize> {
        match self {
            FunctionAttribute::MaxThreadsPerBlock => Some(0),
            FunctionAttribute::SharedSizeBytes => Some(1),
            FunctionAttribute::ConstSizeBytes => Some(2),
            FunctionAttribute::LocalSizeBytes => Some(3),
            FunctionAttribute::NumRegs => Some(4),
            FunctionAttribute::PtxVersion => Some(5),
            FunctionAttribute::BinaryVersion => Some(6),
            FunctionAttribute::CacheModeCa => Some(7),
            _ => None,
        }
    }
}

/// The read-only attributes of one function handle, once the driver has answered them.
pub(crate) struct Fixed([AtomicI64; 8]);

/// A slot of [`Fixed`] not asked yet (every answer is a C `int`).
const NOT_ASKED: i64 = i64::MIN;

impl Fixed {
    pub(crate) fn new() -> Fixed {
        Fixed(std::array::from_fn(|_| AtomicI64::new(NOT_ASKED)))
    }

    /// The value of `attribute`: remembered if it is read-only and was answered before,
    /// else `ask()`'s (remembered if read-only and `Ok`; an error is not).
    #[inline]
    pub(crate) fn get(
        &self,
        attribute: FunctionAttribute,
        ask: impl FnOnce() -> Result<i32, CudaError>,
    ) -> Result<i32, CudaError> {
        let Some(slot) = attribute.fixed_slot().and_then(|i| self.0.get(i)) else { return ask() };
        // Relaxed: the value is a plain integer, the same whichever thread stored it.
        match slot.load(Ordering::Relaxed) {
            NOT_ASKED => {
                let v = ask()?;
                slot.store(i64::from(v), Ordering::Relaxed);
                Ok(v)
            }
            v => Ok(i32::try_from(v).unwrap_or(i32::MAX)),
        }
    }
}

/// The attributes of a function (or of a kernel on one device), read together by
/// [`Function::attributes`](crate::Function::attributes) and [`Kernel::attributes`](crate::Kernel::attributes). Sizes are in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionAttributes {
    /// The most threads per block a launch may have.
    pub max_threads_per_block: u32,
    /// Statically allocated shared memory per block.
    pub shared_size_bytes: usize,
    /// User-allocated constant memory.
    pub const_size_bytes: usize,
    /// Local memory per thread.
    pub local_size_bytes: usize,
    /// Registers per thread.
    pub num_regs: u32,
    /// PTX virtual architecture (major, minor), e.g. (9, 0).
    pub ptx_version: (u32, u32),
    /// Binary architecture (major, minor).
    pub binary_version: (u32, u32),
    /// The most dynamic shared memory per block a launch may ask for.
    pub max_dynamic_shared_size_bytes: usize,
    /// The preferred shared-memory carveout in percent, `None` if there is no preference (-1).
    pub preferred_shared_memory_carveout: Option<u32>,
}

/// A function's cache preference (`CUfunc_cache`): how on-chip memory is split between
/// L1 cache and shared memory, where the device lets it be chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheConfig {
    /// No preference.
    PreferNone,
    /// Larger shared memory, smaller L1.
    PreferShared,
    /// Larger L1, smaller shared memory.
    PreferL1,
    /// Equal L1 and shared memory.
    PreferEqual,
}

impl CacheConfig {
    raw_mapping! {
        /// The driver's value.
        pub fn raw -> CUfunc_cache;
        /// From the driver's value (an unknown one reads as `PreferNone`).
        pub(crate) fn from_raw -> CacheConfig;
        {
            PreferNone => CUfunc_cache::CU_FUNC_CACHE_PREFER_NONE,
            PreferShared => CUfunc_cache::CU_FUNC_CACHE_PREFER_SHARED,
            PreferL1 => CUfunc_cache::CU_FUNC_CACHE_PREFER_L1,
            PreferEqual => CUfunc_cache::CU_FUNC_CACHE_PREFER_EQUAL,
        }
        from_raw: { _ => CacheConfig::PreferNone }
    }
}

/// Where one kernel parameter lies in the parameter buffer, as the driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ParamInfo {
    /// Its offset in the parameter buffer, in bytes.
    pub offset: usize,
    /// Its size, in bytes.
    pub size: usize,
}

/// How the L2 cache treats accesses in an access policy window (`CUaccessProperty`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccessProperty {
    /// Normal.
    Normal,
    /// Streaming: less likely to persist in the cache.
    Streaming,
    /// Persisting: more likely to stay in the cache's set-aside part.
    Persisting,
}

impl AccessProperty {
    raw_mapping! {
        /// The driver's value.
        pub(crate) fn raw -> CUaccessProperty;
        /// From the driver's value (an unknown one reads as `Normal`).
        pub(crate) fn from_raw -> AccessProperty;
        {
            Normal => CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
            Streaming => CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            Persisting => CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
        }
        from_raw: { _ => AccessProperty::Normal }
    }
}

/// The memory synchronisation domain of a launch (`CUlaunchMemSyncDomain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemSyncDomain {
    /// The default domain.
    Default,
    /// The remote domain (for kernels that talk to other devices).
    Remote,
}

impl MemSyncDomain {
    raw_mapping! {
        /// The driver's value.
        pub(crate) fn raw -> CUlaunchMemSyncDomain;
        /// From the driver's value (an unknown one reads as `Default`).
        pub(crate) fn from_raw -> MemSyncDomain;
        {
            Default => CUlaunchMemSyncDomain::CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT,
            Remote => CUlaunchMemSyncDomain::CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE,
        }
        from_raw: { _ => MemSyncDomain::Default }
    }
}

/// An L2 access policy window (`CUaccessPolicyWindow`): a stream's
/// ([`StreamAttribute::AccessPolicyWindow`](crate::StreamAttribute)) or a launch's
/// ([`LaunchAttribute::AccessPolicyWindow`](crate::LaunchAttribute)). `bytes` 0: none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccessPolicyWindow {
    /// The window's start (a device address).
    pub base: CUdeviceptr,
    /// Its length in bytes.
    pub bytes: usize,
    /// The share of accesses (0.0 to 1.0) that get `hit`; the rest get `miss`.
    pub hit_ratio: f32,
    /// The property of the `hit_ratio` share.
    pub hit: AccessProperty,
    /// The property of the rest.
    pub miss: AccessProperty,
}

impl AccessPolicyWindow {
    /// The driver's value.
    pub(crate) fn raw(&self) -> CUaccessPolicyWindow {
        CUaccessPolicyWindow {
            base_ptr: self.base as usize as *mut std::ffi::c_void,
            num_bytes: self.bytes,
            hitRatio: self.hit_ratio,
            hitProp: self.hit.raw(),
            missProp: self.miss.raw(),
        }
    }

    /// From the driver's value.
    pub(crate) fn from_raw(w: &CUaccessPolicyWindow) -> AccessPolicyWindow {
        AccessPolicyWindow {
            base: w.base_ptr as usize as CUdeviceptr,
            bytes: w.num_bytes,
            hit_ratio: w.hitRatio,
            hit: AccessProperty::from_raw(w.hitProp),
            miss: AccessProperty::from_raw(w.missProp),
        }
    }
}
