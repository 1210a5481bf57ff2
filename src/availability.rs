//! What became of each table entry when the driver was loaded.

use std::fmt;

use crate::sys::CUresult;
use crate::version;

/// The state of one entry (a variant or an unversioned name) in a loaded [`crate::Driver`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Availability {
    /// Callable; bound at this ABI version (for a name: the version of the variant it binds).
    Resolved {
        /// The ABI version bound, in driver form (`3020`).
        version: u32,
    },
    /// The variant is newer than the driver (or than the version cap): it was not requested.
    NeedsDriver {
        /// The driver version the variant needs, in driver form (`13010`).
        version: u32,
    },
    /// Requested at its own version, and the driver did not provide it.
    NotInDriver(Missing),
    /// Not requested: a per-thread default stream variant while that option is off.
    NotRequested,
    /// No driver is loaded (the process-wide driver failed to load).
    NoDriver,
}

/// How the driver answered a request it did not satisfy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Missing {
    /// `CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`, or `CUDA_ERROR_NOT_FOUND` from the 11.x API.
    SymbolNotFound,
    /// `CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT`.
    VersionNotSufficient,
    /// `cuGetProcAddress` itself failed with this status.
    Status(CUresult),
    /// Success was reported but the pointer is null.
    NullPointer,
}

impl Availability {
    /// Whether a call through this entry reaches the driver.
    pub fn is_resolved(&self) -> bool {
        matches!(self, Availability::Resolved { .. })
    }
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Resolved { version: v } => write!(f, "resolved (ABI {v})"),
            Availability::NeedsDriver { version: v } => {
                write!(f, "needs driver {}", version::display(*v))
            }
            Availability::NotInDriver(Missing::SymbolNotFound) => f.write_str("not in this driver"),
            Availability::NotInDriver(Missing::VersionNotSufficient) => {
                f.write_str("not in this driver at this ABI version")
            }
            Availability::NotInDriver(Missing::Status(s)) => {
                write!(f, "not in this driver (cuGetProcAddress returned {})", s.0)
            }
            Availability::NotInDriver(Missing::NullPointer) => f.write_str("not in this driver (null pointer)"),
            Availability::NotRequested => {
                f.write_str("not requested (per-thread default stream variants need the per-thread option)")
            }
            Availability::NoDriver => f.write_str("no driver loaded"),
        }
    }
}

/// Whether an [`EntryInfo`] describes a variant or an unversioned name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryKind {
    /// A `PFN_<name>_v<version>` variant, requested at exactly that version.
    Variant {
        /// The symbol requested from `cuGetProcAddress` (`cuMemAlloc`, without the version).
        symbol: &'static str,
        /// The ABI version it is requested at, in driver form (`3020`).
        version: u32,
        /// Whether it is a per-thread default stream variant (`_ptds`/`_ptsz`, requested
        /// with flag 2).
        per_thread: bool,
    },
    /// An unversioned name, bound to the newest suitable resolved variant.
    Name {
        /// The variant the name calls (`cuMemAlloc_v3020`); `None` if no variant of it is
        /// resolved.
        bound: Option<&'static str>,
    },
}

/// One entry of the table and its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EntryInfo {
    /// The wrapper's name: `cuMemAlloc_v3020` or `cuMemAlloc`.
    pub name: &'static str,
    /// A variant or an unversioned name, with what it is bound to.
    pub kind: EntryKind,
    /// What became of it when the driver was loaded.
    pub availability: Availability,
}
