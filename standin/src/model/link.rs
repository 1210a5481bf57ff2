//! Link states (`cuLinkCreate`).

use crate::model::image::Image;

/// A link state.
pub(crate) struct Link {
    pub(crate) image: Image,
    /// Every image `cuLinkComplete` returned (each stays valid until destroy).
    pub(crate) outputs: Vec<Box<[u8]>>,
}
