//! Launch attributes as a typed list ([`LaunchAttribute`], [`Launch::attribute`]), passed
//! through `cuLaunchKernelEx`, with the driver version each needs checked before the
//! launch.

use crate::error::InvalidArgument;
use crate::resources::event::Event;
use crate::resources::launch::Launch;
use crate::sys::{CUaccessProperty, CUdeviceptr, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchMemSyncDomain};

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
    /// The driver's value.
    pub(crate) fn raw(self) -> CUaccessProperty {
        match self {
            AccessProperty::Normal => CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
            AccessProperty::Streaming => CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            AccessProperty::Persisting => CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
        }
    }

    /// From the driver's value (an unknown one reads as `Normal`).
    pub(crate) fn from_raw(raw: CUaccessProperty) -> AccessProperty {
        match raw {
            CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING => AccessProperty::Streaming,
            CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING => AccessProperty::Persisting,
            _ => AccessProperty::Normal,
        }
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
    /// The driver's value.
    pub(crate) fn raw(self) -> CUlaunchMemSyncDomain {
        match self {
            MemSyncDomain::Default => CUlaunchMemSyncDomain::CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT,
            MemSyncDomain::Remote => CUlaunchMemSyncDomain::CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE,
        }
    }

    /// From the driver's value (an unknown one reads as `Default`).
    pub(crate) fn from_raw(raw: CUlaunchMemSyncDomain) -> MemSyncDomain {
        match raw {
            CUlaunchMemSyncDomain::CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE => MemSyncDomain::Remote,
            _ => MemSyncDomain::Default,
        }
    }
}

/// A launch attribute (`CUlaunchAttribute`), for [`Launch::attribute`]. Each needs the
/// driver version [`LaunchAttribute::needs`] says (and `cuLaunchKernelEx`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum LaunchAttribute {
    /// Thread-block clusters of these dimensions (compute capability 9.0+).
    ClusterDimension(u32, u32, u32),
    /// A cooperative launch: all blocks resident at once, so they may synchronise.
    Cooperative(bool),
    /// Programmatic dependent launch: this kernel may start before the previous kernel
    /// in the stream has finished (it waits with `cudaGridDependencySynchronize`).
    ProgrammaticStreamSerialization(bool),
    /// The launch's priority in its stream's context (see the context's stream priority
    /// range).
    Priority(i32),
    /// Preferred cluster dimensions, a multiple of the cluster dimensions (driver 12.8+).
    PreferredClusterDimension(u32, u32, u32),
    /// The memory synchronisation domain (driver 12.0+).
    MemSyncDomain(MemSyncDomain),
    /// An L2 access policy window over `bytes` from `base`.
    AccessPolicyWindow {
        /// The window's start (a device address).
        base: CUdeviceptr,
        /// Its length in bytes.
        bytes: usize,
        /// The share of accesses (0.0 to 1.0) that get `hit`; the rest get `miss`.
        hit_ratio: f32,
        /// The property of the `hit_ratio` share.
        hit: AccessProperty,
        /// The property of the rest.
        miss: AccessProperty,
    },
}

impl LaunchAttribute {
    /// The driver version it needs (as `cuDriverGetVersion` gives it: 12000 for 12.0),
    /// from the `cuda.h` that introduced it; `cuLaunchKernelEx` itself is gated too.
    pub fn needs(&self) -> u32 {
        match self {
            LaunchAttribute::PreferredClusterDimension(..) => 12080,
            LaunchAttribute::MemSyncDomain(_) => 12000,
            LaunchAttribute::ClusterDimension(..)
            | LaunchAttribute::Cooperative(_)
            | LaunchAttribute::ProgrammaticStreamSerialization(_)
            | LaunchAttribute::Priority(_)
            | LaunchAttribute::AccessPolicyWindow { .. } => 11080,
        }
    }

    /// Its name, for errors.
    fn name(&self) -> &'static str {
        match self {
            LaunchAttribute::ClusterDimension(..) => "ClusterDimension",
            LaunchAttribute::Cooperative(_) => "Cooperative",
            LaunchAttribute::ProgrammaticStreamSerialization(_) => "ProgrammaticStreamSerialization",
            LaunchAttribute::Priority(_) => "Priority",
            LaunchAttribute::PreferredClusterDimension(..) => "PreferredClusterDimension",
            LaunchAttribute::MemSyncDomain(_) => "MemSyncDomain",
            LaunchAttribute::AccessPolicyWindow { .. } => "AccessPolicyWindow",
        }
    }

    /// The raw attribute.
    pub(crate) fn raw(&self) -> CUlaunchAttribute {
        type Id = CUlaunchAttributeID;
        let mut a = CUlaunchAttribute::default();
        match *self {
            LaunchAttribute::ClusterDimension(x, y, z) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
                a.value.clusterDim.x = x;
                a.value.clusterDim.y = y;
                a.value.clusterDim.z = z;
            }
            LaunchAttribute::Cooperative(on) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
                a.value.cooperative = i32::from(on);
            }
            LaunchAttribute::ProgrammaticStreamSerialization(on) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
                a.value.programmaticStreamSerializationAllowed = i32::from(on);
            }
            LaunchAttribute::Priority(p) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_PRIORITY;
                a.value.priority = p;
            }
            LaunchAttribute::PreferredClusterDimension(x, y, z) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
                a.value.preferredClusterDim.x = x;
                a.value.preferredClusterDim.y = y;
                a.value.preferredClusterDim.z = z;
            }
            LaunchAttribute::MemSyncDomain(d) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
                a.value.memSyncDomain = d.raw();
            }
            LaunchAttribute::AccessPolicyWindow { base, bytes, hit_ratio, hit, miss } => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
                a.value.accessPolicyWindow.base_ptr = base as usize as *mut std::ffi::c_void;
                a.value.accessPolicyWindow.num_bytes = bytes;
                a.value.accessPolicyWindow.hitRatio = hit_ratio;
                a.value.accessPolicyWindow.hitProp = hit.raw();
                a.value.accessPolicyWindow.missProp = miss.raw();
            }
        }
        a
    }
}

/// InvalidArgument if the driver `version` is older than attribute `name` `needs`.
pub(crate) fn check_version(name: &str, needs: u32, version: u32) -> Result<(), InvalidArgument> {
    if version < needs {
        let v = |n: u32| format!("{}.{}", n / 1000, n % 1000 / 10);
        return Err(InvalidArgument::new(
            "Launch::launch",
            format!("launch attribute {name} needs driver {}; this driver is {}", v(needs), v(version)),
        ));
    }
    Ok(())
}

/// The raw `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT` for `event`.
pub(crate) fn programmatic_event(event: &Event, trigger_at_block_start: bool) -> CUlaunchAttribute {
    let mut a =
        CUlaunchAttribute { id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, ..Default::default() };
    a.value.programmaticEvent.event = event.as_raw();
    a.value.programmaticEvent.flags = 0;
    a.value.programmaticEvent.triggerAtBlockStart = i32::from(trigger_at_block_start);
    a
}

impl<'a> Launch<'a> {
    /// Adds a launch attribute: the launch goes through `cuLaunchKernelEx`. An attribute
    /// the driver is too old for makes the launch an [`crate::Error::InvalidArgument`]
    /// naming the version it needs, before any driver call.
    pub fn attribute(&mut self, attr: LaunchAttribute) -> &mut Launch<'a> {
        self.push_attribute(attr.raw(), attr.needs(), attr.name());
        self
    }

    /// Programmatic dependent launch: `event` is recorded when every block of this kernel
    /// has triggered (or, with `trigger_at_block_start`, started), so a kernel waiting on
    /// it may start early (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT`, driver 11.8+). The
    /// event stays borrowed until the builder is dropped.
    pub fn programmatic_event(&mut self, event: &'a Event, trigger_at_block_start: bool) -> &mut Launch<'a> {
        self.push_attribute(programmatic_event(event, trigger_at_block_start), 11080, "ProgrammaticEvent");
        self
    }
}
