//! What an embedder says of a texture or surface behind a handle ([`Texture`]: plain data,
//! no behaviour of its own but its sizes); `texture.rs` samples it.

/// An element's channel format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// 8-bit unsigned.
    #[default]
    U8,
    /// 16-bit unsigned.
    U16,
    /// 32-bit unsigned.
    U32,
    /// 8-bit signed.
    S8,
    /// 16-bit signed.
    S16,
    /// 32-bit signed.
    S32,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
}

impl Format {
    /// Bytes of one channel.
    pub fn bytes(self) -> u64 {
        match self {
            Format::U8 | Format::S8 => 1,
            Format::U16 | Format::S16 | Format::F16 => 2,
            Format::U32 | Format::S32 | Format::F32 => 4,
        }
    }
}

/// An address mode (`CUaddress_mode`'s order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Address {
    /// Repeat (normalised coordinates only; else clamp).
    Wrap,
    /// Clamp to the edge texel.
    #[default]
    Clamp,
    /// Mirrored repeat (normalised coordinates only; else clamp).
    Mirror,
    /// Outside reads the border colour.
    Border,
}

/// What a texture or surface object's handle stands for: where its texels are and how
/// they are read. The embedder answers it for a handle ([`GlobalMemory::texture`](crate::GlobalMemory::texture)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Texture {
    /// The device address of texel (0, 0, 0) of layer 0.
    pub base: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Bytes from one slice (or layer) to the next.
    pub slice: u64,
    /// Width, height, depth in elements (each at least 1; depth 1 for a layered texture).
    pub extent: [u64; 3],
    /// Layers of a layered texture; 0 if not layered.
    pub layers: u64,
    /// The channel format.
    pub format: Format,
    /// Channels per element: 1, 2 or 4.
    pub channels: u8,
    /// Address mode per dimension.
    pub address: [Address; 3],
    /// Linear filtering (else point).
    pub linear: bool,
    /// Coordinates are normalised to [0, 1).
    pub normalized: bool,
    /// 8- and 16-bit integer formats read as their integers (else as floats in [0, 1] or
    /// [-1, 1]); 32-bit integer formats always read as integers.
    pub read_as_integer: bool,
    /// The border colour, as f32 bit patterns.
    pub border: [u32; 4],
    /// Mipmap levels (1 for a plain array or linear memory).
    pub levels: u32,
}
