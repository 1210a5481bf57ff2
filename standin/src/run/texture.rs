//! Reading textures from host kernels: the record a texture or surface object's handle
//! points to ([`Texels`]) and [`Thread::texture_fetch`], the one hook a host kernel
//! needs to read a texture as `tex1D`/`tex2D`/`tex3D` with point filtering does.
//!
//! On the stand-in a texture or surface object's handle is the device address of its
//! [`Texels`] record (64 bytes of device memory, written when the object is created and
//! freed when it is destroyed), so a kernel reads a texture with the checked memory access
//! every host kernel has: in this copy of the stand-in or in a stand-in library it was
//! forwarded to, with no lookup of driver state. A destroyed object's record is freed
//! memory: reading through it fails the launch with CUDA_ERROR_ILLEGAL_ADDRESS.

use crate::run::kernels::{KernelError, Scalar, Thread};

/// The record at a texture or surface object's handle (its device address), read by host
/// kernels and PTX kernels: 128 bytes, native byte order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Texels {
    /// The device address of texel (0, 0, 0).
    pub(crate) base: u64,
    /// Bytes from one row to the next.
    pub(crate) pitch: u64,
    /// Rows from one slice to the next.
    pub(crate) rows: u64,
    /// Elements per row, rows, slices (each at least 1).
    pub(crate) extent: [u64; 3],
    /// Bytes of one element.
    pub(crate) element: u32,
    /// `CUaddress_mode` per dimension.
    pub(crate) address_mode: [u8; 3],
    /// Whether coordinates are normalised to [0, 1).
    pub(crate) normalized: bool,
    /// The `CUarray_format` of a channel (its value: 0x01 u8 ... 0x20 float).
    pub(crate) format: u8,
    /// Channels per element (1, 2 or 4).
    pub(crate) channels: u8,
    /// Linear filtering (else point).
    pub(crate) linear: bool,
    /// `CU_TRSF_READ_AS_INTEGER`.
    pub(crate) read_as_integer: bool,
    /// The border colour's f32 bit patterns.
    pub(crate) border: [u32; 4],
    /// Layers of a layered array (0: not layered; `extent[2]` is then 1).
    pub(crate) layers: u64,
}

/// [`Texels`]' first 4 bytes, so a host kernel given something else fails cleanly.
pub(crate) const TEXELS_MAGIC: u32 = 0x5354_5843;
/// The size of a [`Texels`] record in device memory.
pub(crate) const TEXELS_BYTES: usize = 128;

impl Texels {
    /// The record as it lies in device memory.
    pub(crate) fn to_bytes(self) -> [u8; TEXELS_BYTES] {
        let mut b = [0u8; TEXELS_BYTES];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(d) = b.get_mut(at..at + bytes.len()) {
                d.copy_from_slice(bytes);
            }
        };
        put(0, &TEXELS_MAGIC.to_ne_bytes());
        put(4, &self.element.to_ne_bytes());
        put(8, &self.base.to_ne_bytes());
        put(16, &self.pitch.to_ne_bytes());
        put(24, &self.rows.to_ne_bytes());
        put(32, &self.extent[0].to_ne_bytes());
        put(40, &self.extent[1].to_ne_bytes());
        put(48, &self.extent[2].to_ne_bytes());
        put(56, &self.address_mode);
        put(59, &[u8::from(self.normalized)]);
        put(64, &[self.format, self.channels, u8::from(self.linear), u8::from(self.read_as_integer)]);
        for (k, c) in self.border.iter().enumerate() {
            put(68 + 4 * k, &c.to_ne_bytes());
        }
        put(88, &self.layers.to_ne_bytes());
        b
    }

    /// The record read back from device memory; `None` without the magic number.
    pub(crate) fn from_bytes(b: &[u8; TEXELS_BYTES]) -> Option<Texels> {
        let u64_at = |at: usize| b.get(at..at + 8).and_then(|s| s.try_into().ok()).map(u64::from_ne_bytes);
        let u32_at = |at: usize| b.get(at..at + 4).and_then(|s| s.try_into().ok()).map(u32::from_ne_bytes);
        if u32_at(0)? != TEXELS_MAGIC {
            return None;
        }
        Some(Texels {
            element: u32_at(4)?,
            base: u64_at(8)?,
            pitch: u64_at(16)?,
            rows: u64_at(24)?,
            extent: [u64_at(32)?, u64_at(40)?, u64_at(48)?],
            address_mode: [*b.get(56)?, *b.get(57)?, *b.get(58)?],
            normalized: *b.get(59)? != 0,
            format: *b.get(64)?,
            channels: *b.get(65)?,
            linear: *b.get(66)? != 0,
            read_as_integer: *b.get(67)? != 0,
            border: [u32_at(68)?, u32_at(72)?, u32_at(76)?, u32_at(80)?],
            layers: u64_at(88)?,
        })
    }

    /// The state the PTX executor samples with (`tex`, `tld4`, `txq`, `suld`, `sust`,
    /// `suq`); `None` for a format it does not know.
    pub(crate) fn to_ptx(self) -> Option<cudrv_ptx::Texture> {
        use cudrv_ptx::{Address, Format};
        let format = match self.format {
            0x01 => Format::U8,
            0x02 => Format::U16,
            0x03 => Format::U32,
            0x08 => Format::S8,
            0x09 => Format::S16,
            0x0a => Format::S32,
            0x10 => Format::F16,
            0x20 => Format::F32,
            _ => return None,
        };
        let address = self.address_mode.map(|m| match m {
            0 => Address::Wrap,
            2 => Address::Mirror,
            3 => Address::Border,
            _ => Address::Clamp,
        });
        Some(cudrv_ptx::Texture {
            base: self.base,
            pitch: self.pitch,
            slice: self.pitch.wrapping_mul(self.rows),
            extent: self.extent.map(|e| e.max(1)),
            layers: self.layers,
            format,
            channels: self.channels,
            address,
            linear: self.linear,
            normalized: self.normalized,
            read_as_integer: self.read_as_integer,
            border: self.border,
            levels: 1,
        })
    }

    /// The device address of the element at texel coordinates `c` (point filtering:
    /// `floor` of each unnormalised coordinate, after scaling normalised ones), with the
    /// address mode of each dimension; `None` for a coordinate outside the texture in
    /// border mode (which reads 0).
    pub(crate) fn address(&self, c: [f32; 3]) -> Option<u64> {
        let mut index = [0u64; 3];
        for d in 0..3 {
            let n = self.extent.get(d).copied().unwrap_or(1).max(1);
            let mut x = c.get(d).copied().unwrap_or(0.0);
            if self.normalized {
                x *= n as f32;
            }
            let i = x.floor() as i64;
            let n_i = i64::try_from(n).unwrap_or(i64::MAX);
            let mode = self.address_mode.get(d).copied().unwrap_or(1);
            let inside = (0..n_i).contains(&i);
            let at = match mode {
                // Wrap and mirror apply to normalised coordinates only (else: clamp).
                0 if self.normalized => i.rem_euclid(n_i),
                2 if self.normalized => {
                    let m = i.rem_euclid(2 * n_i);
                    if m < n_i {
                        m
                    } else {
                        2 * n_i - 1 - m
                    }
                }
                3 if !inside => return None,
                _ => i.clamp(0, n_i - 1),
            };
            *index.get_mut(d)? = u64::try_from(at).ok()?;
        }
        let [x, y, z] = index;
        let row = z.checked_mul(self.rows)?.checked_add(y)?;
        self.base.checked_add(row.checked_mul(self.pitch)?)?.checked_add(x.checked_mul(u64::from(self.element))?)
    }
}

impl Thread<'_> {
    /// The value of type `T` at the start of the element a texture (or surface) object
    /// `tex` reads at coordinates `coords` (x, y, z; unused ones 0), as `tex1D<T>` /
    /// `tex2D<T>` / `tex3D<T>` read it with point filtering and element-type reads: the
    /// element `floor(coords)` (normalised coordinates scaled first), with the object's
    /// address mode per dimension; in border mode a coordinate outside reads 0. Linear
    /// filtering and normalised-float reads are not computed (the nearest element's value
    /// is returned). A handle that is not a live texture or surface object fails the
    /// launch ([`KernelError::IllegalAddress`]).
    pub fn texture_fetch<T: Scalar>(&self, tex: u64, coords: [f32; 3]) -> Result<T, KernelError> {
        let mut record = [0u8; TEXELS_BYTES];
        self.read(tex, &mut record)?;
        let texels = Texels::from_bytes(&record).ok_or(KernelError::IllegalAddress)?;
        let mut bytes = [0u8; 8];
        let bytes = bytes.get_mut(..T::SIZE).ok_or(KernelError::Param)?;
        if let Some(address) = texels.address(coords) {
            self.read(address, bytes)?;
        }
        T::from_bytes(bytes).ok_or(KernelError::Param)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn texels_round_trip_and_address_modes_apply() {
        let t = Texels {
            base: 1000,
            pitch: 16,
            rows: 2,
            extent: [4, 2, 1],
            element: 4,
            address_mode: [1, 3, 1],
            normalized: false,
            format: 0x20,
            channels: 1,
            linear: true,
            read_as_integer: false,
            border: [1, 2, 3, 4],
            layers: 0,
        };
        let back = Texels::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back, t);
        assert_eq!(t.address([1.5, 1.5, 0.5]), Some(1000 + 16 + 4));
        assert_eq!(t.address([9.0, 0.5, 0.5]), Some(1000 + 12), "x clamps");
        assert_eq!(t.address([0.5, 2.5, 0.5]), None, "y is border");
        let wrap = Texels { normalized: true, address_mode: [0, 0, 0], ..t };
        assert_eq!(wrap.address([1.25, 0.0, 0.0]), Some(1000 + 4), "1.25 wraps to texel 1 of 4");
    }
}
