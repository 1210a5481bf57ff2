//! Link states (`cuLinkCreate`), and where a JIT call's options ask for its logs and wall
//! time.

use std::time::Instant;

use crate::model::image::Image;

/// Where the options of a JIT call (`cuModuleLoadDataEx`, `cuLibraryLoadData`,
/// `cuLinkCreate`) want their answers: addresses in the program's memory, kept as numbers
/// (the program keeps them valid for the call, or, for a link, until `cuLinkDestroy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct JitSlots {
    /// The info log buffer and its capacity, and the value slot of its size.
    pub(crate) info: Option<(usize, usize)>,
    pub(crate) info_size_slot: Option<usize>,
    /// The error log buffer and its capacity, and the value slot of its size.
    pub(crate) error: Option<(usize, usize)>,
    pub(crate) error_size_slot: Option<usize>,
    /// The value slot of `CU_JIT_WALL_TIME`.
    pub(crate) wall_slot: Option<usize>,
    /// `CU_JIT_LOG_VERBOSE` was set.
    pub(crate) verbose: bool,
}

/// A link state.
pub(crate) struct Link {
    pub(crate) image: Image,
    /// Every image `cuLinkComplete` returned (each stays valid until destroy).
    pub(crate) outputs: Vec<Box<[u8]>>,
    /// Where `cuLinkCreate`'s options want the logs and wall time.
    pub(crate) jit: JitSlots,
    /// The info log so far.
    pub(crate) info: String,
    /// When the link began (its wall time ends at `cuLinkComplete`).
    pub(crate) started: Instant,
}
