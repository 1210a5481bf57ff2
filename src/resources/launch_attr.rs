//! Launch attributes as a typed list ([`LaunchAttribute`], [`Launch::attribute`]), passed
//! through `cuLaunchKernelEx`, with the driver version each needs checked before the
//! launch.

use crate::error::InvalidArgument;
use crate::resources::event::Event;
use crate::resources::values::{AccessPolicyWindow, MemSyncDomain};
use crate::sys::{CUlaunchAttribute, CUlaunchAttributeID};

/// A launch attribute (`CUlaunchAttribute`), for [`Launch::attribute`](crate::Launch::attribute). Each needs the
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
    /// An L2 access policy window.
    AccessPolicyWindow(AccessPolicyWindow),
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
            | LaunchAttribute::AccessPolicyWindow(_) => 11080,
        }
    }

    /// Its name, for errors.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            LaunchAttribute::ClusterDimension(..) => "ClusterDimension",
            LaunchAttribute::Cooperative(_) => "Cooperative",
            LaunchAttribute::ProgrammaticStreamSerialization(_) => "ProgrammaticStreamSerialization",
            LaunchAttribute::Priority(_) => "Priority",
            LaunchAttribute::PreferredClusterDimension(..) => "PreferredClusterDimension",
            LaunchAttribute::MemSyncDomain(_) => "MemSyncDomain",
            LaunchAttribute::AccessPolicyWindow(_) => "AccessPolicyWindow",
        }
    }

    /// The raw attribute.
    pub(crate) fn raw(&self) -> CUlaunchAttribute {
        type Id = CUlaunchAttributeID;
        let mut a = CUlaunchAttribute::default();
        match *self {
            LaunchAttribute::ClusterDimension(x, y, z) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
                (a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z) = (x, y, z);
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
                (a.value.preferredClusterDim.x, a.value.preferredClusterDim.y, a.value.preferredClusterDim.z) =
                    (x, y, z);
            }
            LaunchAttribute::MemSyncDomain(d) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
                a.value.memSyncDomain = d.raw();
            }
            LaunchAttribute::AccessPolicyWindow(w) => {
                a.id = Id::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
                a.value.accessPolicyWindow = w.raw();
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
