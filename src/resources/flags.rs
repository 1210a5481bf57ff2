//! Typed flags: [`StreamFlags`], [`EventFlags`], [`ContextFlags`], [`HostAllocFlags`],
//! [`OccupancyFlags`], [`HostRegisterFlags`], [`ShareableHandleTypes`], [`ArrayFlags`] and
//! [`InstantiateFlags`]. Each is the
//! driver's bit set with a named constant per bit of the pinned `cuda.h`, combined with
//! `|`. Raw bits are still accepted (every function taking flags takes `impl Into<XFlags>`,
//! and `u32` converts), and are passed to the driver as they are: a bit the driver does not
//! know is refused by the driver, not by cudrv.

use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use crate::sys::{
    CUctx_flags, CUevent_flags, CUgraphInstantiate_flags, CUmemAllocationHandleType, CUoccupancy_flags, CUstream_flags,
    CUDA_ARRAY3D_CUBEMAP, CUDA_ARRAY3D_LAYERED, CUDA_ARRAY3D_SURFACE_LDST, CUDA_ARRAY3D_TEXTURE_GATHER,
    CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_WRITECOMBINED,
};

/// Declares a flag set over `u32` (or the type after its name, `Name: u64 { .. }`): the
/// named constants, `bits`, `from_bits_retain`, `contains`, `|`, `From<u32>` and a `Debug`
/// that names the known bits. A set of one C enum's values names the enum once: `Name of
/// CUenum { FLAG = CU_CONSTANT, .. }` is `Name { FLAG = CUenum::CU_CONSTANT.0, .. }`.
macro_rules! flag_set {
    ($(#[$doc:meta])* $name:ident of $cty:ident { $($(#[$cdoc:meta])* $flag:ident = $c:ident,)* }) => {
        flag_set!($(#[$doc])* $name { $($(#[$cdoc])* $flag = $cty::$c.0,)* });
    };
    ($(#[$doc:meta])* $name:ident { $($body:tt)* }) => {
        flag_set!($(#[$doc])* $name: u32 { $($body)* });
    };
    ($(#[$doc:meta])* $name:ident: $repr:ty { $($(#[$cdoc:meta])* $flag:ident = $bits:expr,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name($repr);

        impl $name {
            $($(#[$cdoc])* pub const $flag: $name = $name($bits);)*

            /// The raw bits, as the driver takes them.
            #[inline(always)]
            pub const fn bits(self) -> $repr {
                self.0
            }

            /// The flags with exactly these bits, known or not (the driver judges them).
            #[inline(always)]
            pub const fn from_bits_retain(bits: $repr) -> $name {
                $name(bits)
            }

            /// Whether every bit of `other` is set.
            #[inline(always)]
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }

            /// Each named flag with its bits (zero-valued names included).
            const NAMED: &'static [(&'static str, u64)] = &[$((stringify!($flag), $bits as u64)),*];
        }

        impl From<$repr> for $name {
            #[inline(always)]
            fn from(bits: $repr) -> $name {
                $name(bits)
            }
        }

        impl From<$name> for $repr {
            #[inline(always)]
            fn from(flags: $name) -> $repr {
                flags.0
            }
        }

        impl BitOr for $name {
            type Output = $name;
            #[inline(always)]
            fn bitor(self, other: $name) -> $name {
                $name(self.0 | other.0)
            }
        }

        impl BitOrAssign for $name {
            #[inline(always)]
            fn bitor_assign(&mut self, other: $name) {
                self.0 |= other.0;
            }
        }

        impl fmt::Debug for $name {
            /// `StreamFlags(NON_BLOCKING)`, `EventFlags(DISABLE_TIMING | 0x100)`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}(", stringify!($name))?;
                write_bits(f, u64::from(self.0), $name::NAMED)?;
                f.write_str(")")
            }
        }
    };
}

/// Writes the names of the non-zero named flags set in `bits`, then any unknown rest in
/// hex; the zero-valued name when nothing is set.
fn write_bits(f: &mut fmt::Formatter<'_>, bits: u64, named: &[(&str, u64)]) -> fmt::Result {
    let mut rest = bits;
    let mut first = true;
    for (name, value) in named.iter().filter(|(_, v)| *v != 0 && bits & v == *v) {
        if rest & value == 0 {
            continue;
        }
        f.write_str(if first { "" } else { " | " })?;
        f.write_str(name)?;
        rest &= !value;
        first = false;
    }
    match (first, rest) {
        (true, 0) => f.write_str(named.iter().find(|(_, v)| *v == 0).map_or("0", |(n, _)| n)),
        (_, 0) => Ok(()),
        (true, r) => write!(f, "{r:#x}"),
        (false, r) => write!(f, " | {r:#x}"),
    }
}

flag_set!(
    /// How a stream is created (`cuStreamCreate`'s `CU_STREAM_*` flags).
    StreamFlags of CUstream_flags {
        /// The stream synchronises with the legacy default (NULL) stream.
        DEFAULT = CU_STREAM_DEFAULT,
        /// The stream does not synchronise with the legacy default stream.
        NON_BLOCKING = CU_STREAM_NON_BLOCKING,
    }
);

flag_set!(
    /// How an event is created (`cuEventCreate`'s `CU_EVENT_*` flags).
    EventFlags of CUevent_flags {
        /// An event that records timing, waited for by spinning.
        DEFAULT = CU_EVENT_DEFAULT,
        /// `synchronize` blocks the thread instead of spinning.
        BLOCKING_SYNC = CU_EVENT_BLOCKING_SYNC,
        /// No timing data: cheaper to record and wait for.
        DISABLE_TIMING = CU_EVENT_DISABLE_TIMING,
        /// Shareable with other processes (needs `DISABLE_TIMING`).
        INTERPROCESS = CU_EVENT_INTERPROCESS,
    }
);

flag_set!(
    /// How a context is created (`cuCtxCreate`'s `CU_CTX_*` flags).
    ContextFlags of CUctx_flags {
        /// The driver picks how a waiting thread waits.
        SCHED_AUTO = CU_CTX_SCHED_AUTO,
        /// A waiting thread spins.
        SCHED_SPIN = CU_CTX_SCHED_SPIN,
        /// A waiting thread yields.
        SCHED_YIELD = CU_CTX_SCHED_YIELD,
        /// A waiting thread blocks.
        SCHED_BLOCKING_SYNC = CU_CTX_SCHED_BLOCKING_SYNC,
        /// Mapped pinned host allocations are allowed (a primary context reports it; a
        /// created context reports exactly the flags it was created with).
        MAP_HOST = CU_CTX_MAP_HOST,
        /// Local memory is not shrunk after a kernel that needed more.
        LMEM_RESIZE_TO_MAX = CU_CTX_LMEM_RESIZE_TO_MAX,
        /// GPU core dumps on exceptions for this context.
        COREDUMP_ENABLE = CU_CTX_COREDUMP_ENABLE,
        /// GPU core dumps on a user trigger for this context.
        USER_COREDUMP_ENABLE = CU_CTX_USER_COREDUMP_ENABLE,
        /// Synchronous memory operations are always synchronous.
        SYNC_MEMOPS = CU_CTX_SYNC_MEMOPS,
    }
);

flag_set!(
    /// How page-locked host memory is allocated (`cuMemHostAlloc`'s `CU_MEMHOSTALLOC_*`).
    HostAllocFlags {
        /// No flag (the driver reports `DEVICEMAP` for such memory all the same).
        NONE = 0,
        /// Pinned for every context.
        PORTABLE = CU_MEMHOSTALLOC_PORTABLE,
        /// Mapped into the device's address space.
        DEVICEMAP = CU_MEMHOSTALLOC_DEVICEMAP,
        /// Write-combined: fast for the device to read, slow for the host to read.
        WRITECOMBINED = CU_MEMHOSTALLOC_WRITECOMBINED,
    }
);

flag_set!(
    /// How an occupancy query counts (`cuOccupancy*WithFlags`' `CU_OCCUPANCY_*` flags).
    OccupancyFlags of CUoccupancy_flags {
        /// The default: the function's preferred cache configuration is used.
        DEFAULT = CU_OCCUPANCY_DEFAULT,
        /// The device's own cache split, ignoring the function's preference (a global
        /// caching override may not be in effect).
        DISABLE_CACHING_OVERRIDE = CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE,
    }
);

flag_set!(
    /// How host memory is registered (`cuMemHostRegister`'s `CU_MEMHOSTREGISTER_*` flags,
    /// [`crate::HostRegistration::new`]).
    HostRegisterFlags {
        /// None: pinned for the context it is registered in.
        NONE = 0,
        /// Pinned for every context.
        PORTABLE = crate::sys::CU_MEMHOSTREGISTER_PORTABLE,
        /// Mapped into the device's address space
        /// ([`crate::HostRegistration::device_pointer`]).
        DEVICEMAP = crate::sys::CU_MEMHOSTREGISTER_DEVICEMAP,
        /// The memory is I/O memory (a device's registers or memory mapped into the
        /// process), for peer-to-peer transfers.
        IOMEMORY = crate::sys::CU_MEMHOSTREGISTER_IOMEMORY,
        /// The device only reads it.
        READ_ONLY = crate::sys::CU_MEMHOSTREGISTER_READ_ONLY,
    }
);

flag_set!(
    /// The shareable handle types a physical allocation can be exported as
    /// (`CU_MEM_HANDLE_TYPE_*`, [`crate::PhysicalMemory::new`]).
    ShareableHandleTypes of CUmemAllocationHandleType {
        /// None: the allocation is not exportable.
        NONE = CU_MEM_HANDLE_TYPE_NONE,
        /// A POSIX file descriptor (Linux), passed between processes over a Unix socket.
        POSIX_FD = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        /// A fabric handle (multi-node NVLink; needs an IMEX channel where the driver has it).
        FABRIC = CU_MEM_HANDLE_TYPE_FABRIC,
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine_and_show_their_names() {
        let f = EventFlags::DISABLE_TIMING | EventFlags::INTERPROCESS;
        assert_eq!(f.bits(), 6);
        assert!(f.contains(EventFlags::INTERPROCESS));
        assert!(!f.contains(EventFlags::BLOCKING_SYNC));
        assert_eq!(format!("{f:?}"), "EventFlags(DISABLE_TIMING | INTERPROCESS)");
        assert_eq!(format!("{:?}", StreamFlags::DEFAULT), "StreamFlags(DEFAULT)");
        assert_eq!(format!("{:?}", StreamFlags::from(0x101)), "StreamFlags(NON_BLOCKING | 0x100)");
        assert_eq!(format!("{:?}", HostAllocFlags::from_bits_retain(0x40)), "HostAllocFlags(0x40)");
        let mut c = ContextFlags::SCHED_BLOCKING_SYNC;
        c |= ContextFlags::MAP_HOST;
        assert_eq!(u32::from(c), 12);
    }
}

flag_set!(
    /// How a CUDA array is created (`cuArray3DCreate`'s `CUDA_ARRAY3D_*` flags).
    ArrayFlags {
        /// No flag: a plain 1D, 2D or 3D array.
        NONE = 0,
        /// A layered array: its depth is the number of layers of 1D or 2D arrays.
        LAYERED = CUDA_ARRAY3D_LAYERED,
        /// Surface objects may read and write it (`SurfaceObject`).
        SURFACE_LDST = CUDA_ARRAY3D_SURFACE_LDST,
        /// A cubemap: six square faces (depth 6, or a multiple of 6 when layered).
        CUBEMAP = CUDA_ARRAY3D_CUBEMAP,
        /// Texture gather may read it (2D arrays only).
        TEXTURE_GATHER = CUDA_ARRAY3D_TEXTURE_GATHER,
    }
);

flag_set!(
    /// How a graph is instantiated (`CUgraphInstantiate_flags`, for
    /// [`Graph::instantiate_with`](crate::Graph::instantiate_with)).
    InstantiateFlags: u64 {
        /// No flag.
        NONE = 0,
        /// Memory allocated by the graph's allocation nodes and not freed in it is freed
        /// before each launch (11.4+).
        AUTO_FREE_ON_LAUNCH = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64,
        /// Upload the graph as it is instantiated, on its context's legacy default stream
        /// (12.0+: a driver takes it only through `cuGraphInstantiateWithParams`, which
        /// `instantiate_with` then calls).
        UPLOAD = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD.0 as u64,
        /// The graph may be launched from the device (12.0+).
        DEVICE_LAUNCH = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64,
        /// Kernel nodes run with their priority attribute (11.7+).
        USE_NODE_PRIORITY = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64,
    }
);
