//! CUDA arrays, texture and surface objects, pitched allocations and the rows of 2D/3D
//! copies: the rules that concern only themselves.
//!
//! An array is an object with backing device memory (an allocation of kind
//! [`AllocationKind::Array`](crate::model::memory::AllocationKind::Array), `memory.rs`)
//! laid out as `depth` slices of `height` rows of `width` elements, one row right after the
//! other (row pitch: `width * element bytes`). A 2D/3D copy is cut into its rows, each a
//! plain copy between host memory, device memory and arrays' backing memory.
//!
//! A texture or surface object is an object with its descriptors, whose handle is the
//! device address of a small block of device memory (kind
//! [`AllocationKind::TextureObject`](crate::model::memory::AllocationKind::TextureObject))
//! holding a [`Texels`](crate::run::texture::Texels) record: where its texels are and how
//! coordinates map to them. Host kernels read a texture through that record
//! (`run/texture.rs`), with the checked memory access every host kernel has, so no kernel
//! needs the world.

use cudrv::sys::{CUarray_format, CUresult, CUDA_ARRAY3D_CUBEMAP, CUDA_ARRAY3D_LAYERED, CUDA_ARRAY3D_SURFACE_LDST};

use crate::model::handles::Registry;

/// The alignment of a pitched allocation's rows (`cuMemAllocPitch`): the pitch is the row's
/// bytes rounded up to it. TO BE CHECKED on the H200 (conformance case
/// `mem_alloc_pitch_pitch`); 512 bytes is what recent NVIDIA GPUs are reported to give.
pub(crate) const PITCH_ALIGNMENT: usize = 512;

/// The `CUDA_ARRAY3D_*` flags the stand-in accepts.
const KNOWN_FLAGS: u32 =
    CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP | cudrv::sys::CUDA_ARRAY3D_TEXTURE_GATHER;

/// The bytes of one channel of `format`; `None` for a format the stand-in does not know.
pub(crate) fn format_bytes(format: CUarray_format) -> Option<usize> {
    match format {
        CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8 | CUarray_format::CU_AD_FORMAT_SIGNED_INT8 => Some(1),
        CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16
        | CUarray_format::CU_AD_FORMAT_SIGNED_INT16
        | CUarray_format::CU_AD_FORMAT_HALF => Some(2),
        CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32
        | CUarray_format::CU_AD_FORMAT_SIGNED_INT32
        | CUarray_format::CU_AD_FORMAT_FLOAT => Some(4),
        _ => None,
    }
}

/// An array's shape and element, as `CUDA_ARRAY3D_DESCRIPTOR` gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Desc {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) depth: usize,
    pub(crate) format: CUarray_format,
    pub(crate) channels: u32,
    pub(crate) flags: u32,
}

impl Desc {
    /// Checks the descriptor as a real driver does (CUDA_ERROR_INVALID_VALUE): a known
    /// format, 1, 2 or 4 channels, a width, a height for a 3D array, known flags, a layered
    /// array's layers, a cubemap's six square faces.
    pub(crate) fn check(&self) -> Result<(), CUresult> {
        let invalid = Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        let layered = self.flags & CUDA_ARRAY3D_LAYERED != 0;
        if format_bytes(self.format).is_none() || !matches!(self.channels, 1 | 2 | 4) || self.width == 0 {
            return invalid;
        }
        if self.flags & !KNOWN_FLAGS != 0 || (layered && self.depth == 0) {
            return invalid;
        }
        if self.depth > 0 && self.height == 0 && !layered {
            return invalid;
        }
        if self.flags & CUDA_ARRAY3D_CUBEMAP != 0 {
            let faces = if layered { self.depth > 0 && self.depth % 6 == 0 } else { self.depth == 6 };
            if self.width != self.height || !faces {
                return invalid;
            }
        }
        Ok(())
    }

    /// The bytes of one element.
    pub(crate) fn element_bytes(&self) -> usize {
        format_bytes(self.format).unwrap_or(0) * self.channels as usize
    }

    /// Bytes of one row (the array's row pitch).
    pub(crate) fn row_bytes(&self) -> usize {
        self.width.saturating_mul(self.element_bytes())
    }

    /// Rows per slice and slices (a height or depth of 0 is 1).
    pub(crate) fn rows_slices(&self) -> (usize, usize) {
        (self.height.max(1), self.depth.max(1))
    }

    /// The bytes of its backing memory; `None` if that overflows.
    pub(crate) fn bytes(&self) -> Option<usize> {
        let (rows, slices) = self.rows_slices();
        self.row_bytes().checked_mul(rows)?.checked_mul(slices)
    }

    /// Whether its depth counts layers or cubemap faces (which mipmap levels keep) rather
    /// than slices (which they halve).
    fn depth_is_layers(&self) -> bool {
        self.flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP) != 0
    }

    /// The levels a mipmapped array of this shape gets when `asked` are asked for: clamped
    /// to `1..=1 + floor(log2(largest extent))`, as the CUDA documentation says, the
    /// extents being the width, height and (not for layers or faces) depth.
    pub(crate) fn mipmap_levels(&self, asked: u32) -> u32 {
        let depth = if self.depth_is_layers() { 0 } else { self.depth };
        let largest = self.width.max(self.height).max(depth).max(1);
        asked.clamp(1, largest.ilog2() + 1)
    }

    /// The shape of mipmap level `level` of a mipmapped array of this shape: each extent
    /// halved per level (at least 1; an extent of 0 stays 0), layers and faces kept.
    pub(crate) fn level(&self, level: u32) -> Desc {
        let halve = |n: usize| if n == 0 { 0 } else { n.checked_shr(level).unwrap_or(0).max(1) };
        let depth = if self.depth_is_layers() { self.depth } else { halve(self.depth) };
        Desc { width: halve(self.width), height: halve(self.height), depth, ..*self }
    }
}

/// One live array.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Array {
    pub(crate) desc: Desc,
    /// The device address of its backing memory.
    pub(crate) address: u64,
    /// For a level of a mipmapped array: that mipmapped array (which owns it).
    pub(crate) mipmap: Option<u64>,
}

/// One live mipmapped array: its level 0's shape and its levels, arrays of
/// [`Arrays::arrays`] it owns (destroyed with it).
#[derive(Clone, Debug)]
pub(crate) struct Mipmap {
    pub(crate) desc: Desc,
    pub(crate) levels: Vec<u64>,
}

/// What a texture or surface object reads, as its `CUDA_RESOURCE_DESC` said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resource {
    Array { array: u64 },
    Linear { ptr: u64, format: CUarray_format, channels: u32, bytes: usize },
    Pitch2D { ptr: u64, format: CUarray_format, channels: u32, width: usize, height: usize, pitch: usize },
}

/// How a texture reads, as its `CUDA_TEXTURE_DESC` said (the fields the stand-in keeps).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Sampling {
    pub(crate) address_mode: [u32; 3],
    pub(crate) filter_mode: u32,
    pub(crate) flags: u32,
    pub(crate) max_anisotropy: u32,
    pub(crate) border_color: [f32; 4],
}

/// One live texture (`sampling` is `Some`) or surface object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Object {
    pub(crate) resource: Resource,
    pub(crate) sampling: Option<Sampling>,
    /// The resource view a texture object was made with, as given.
    pub(crate) view: Option<cudrv::sys::CUDA_RESOURCE_VIEW_DESC>,
}

/// A world's arrays, mipmapped arrays, and texture and surface objects.
pub(crate) struct Arrays {
    pub(crate) arrays: Registry<Array>,
    pub(crate) mipmaps: Registry<Mipmap>,
    pub(crate) textures: Registry<Object>,
    pub(crate) surfaces: Registry<Object>,
}

impl Arrays {
    /// None.
    pub(crate) const fn new() -> Arrays {
        Arrays {
            arrays: Registry::new("array", CUresult::CUDA_ERROR_INVALID_HANDLE),
            mipmaps: Registry::new("mipmapped array", CUresult::CUDA_ERROR_INVALID_HANDLE),
            textures: Registry::new("texture object", CUresult::CUDA_ERROR_INVALID_VALUE),
            surfaces: Registry::new("surface object", CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    }
}

/// The pitch `cuMemAllocPitch` gives a row of `width` bytes.
pub(crate) fn pitch_of(width: usize) -> Option<usize> {
    width.checked_next_multiple_of(PITCH_ALIGNMENT)
}

/// An array end's extent (row bytes, rows, slices) and the copy's offset in it (x in
/// bytes, row, slice).
pub(crate) type ArrayBounds = ((usize, usize, usize), (usize, usize, usize));

/// One end of a 2D/3D copy, resolved: where its byte (0, 0, 0) is, its pitch and rows
/// per slice, and (for checks) the extent it may be addressed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Side {
    /// Host or device memory (an array's backing memory is device memory).
    pub(crate) host: bool,
    /// The address of the first byte copied.
    pub(crate) start: u64,
    pub(crate) pitch: usize,
    pub(crate) rows: usize,
    /// For an array: its row bytes, rows and slices, and the offset's x, y and z, checked
    /// against them.
    pub(crate) array: Option<ArrayBounds>,
}

/// The rows of a copy of `depth` slices of `height` rows of `width` bytes: `(dst, src)`
/// addresses of each row. CUDA_ERROR_INVALID_VALUE for a pitch below the width (plus the x
/// offset: the "extent past the pitch"), a region past an array's extent, or addresses that
/// overflow.
pub(crate) fn rows(
    dst: Side,
    src: Side,
    width: usize,
    height: usize,
    depth: usize,
    x: (usize, usize),
) -> Result<Vec<(u64, u64)>, CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    for (side, x) in [(dst, x.0), (src, x.1)] {
        match side.array {
            Some(((row_bytes, rows, slices), (ax, ay, az))) => {
                let fits = |o: usize, n: usize, max: usize| o.checked_add(n).is_some_and(|e| e <= max);
                if !(fits(ax, width, row_bytes) && fits(ay, height, rows) && fits(az, depth, slices)) {
                    return Err(invalid);
                }
            }
            None => {
                if x.checked_add(width).is_none_or(|e| e > side.pitch) {
                    return Err(invalid);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(height.saturating_mul(depth).min(1 << 20));
    let at = |s: &Side, y: usize, z: usize| -> Option<u64> {
        let row = z.checked_mul(s.rows)?.checked_add(y)?;
        s.start.checked_add(u64::try_from(row.checked_mul(s.pitch)?).ok()?)
    };
    for z in 0..depth {
        for y in 0..height {
            out.push((at(&dst, y, z).ok_or(invalid)?, at(&src, y, z).ok_or(invalid)?));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    fn desc(width: usize, height: usize, depth: usize, channels: u32, flags: u32) -> Desc {
        Desc { width, height, depth, format: CUarray_format::CU_AD_FORMAT_FLOAT, channels, flags }
    }

    #[test]
    fn descriptors_are_checked_as_a_driver_does() {
        assert_eq!(desc(4, 0, 0, 1, 0).check(), Ok(()));
        assert_eq!(desc(0, 4, 0, 1, 0).check(), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(desc(4, 4, 0, 3, 0).check(), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(desc(4, 0, 2, 1, 0).check(), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(desc(4, 4, 6, 1, CUDA_ARRAY3D_CUBEMAP).check(), Ok(()));
        assert_eq!(desc(4, 5, 6, 1, CUDA_ARRAY3D_CUBEMAP).check(), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        let bad_format = Desc { format: CUarray_format(77), ..desc(4, 4, 0, 1, 0) };
        assert_eq!(bad_format.check(), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(desc(3, 2, 2, 2, 0).bytes(), Some(3 * 8 * 2 * 2));
    }

    #[test]
    fn mipmap_levels_halve_the_extents_and_keep_layers() {
        let d = desc(64, 16, 0, 1, 0);
        assert_eq!(d.mipmap_levels(0), 1, "at least one level");
        assert_eq!(d.mipmap_levels(3), 3);
        assert_eq!(d.mipmap_levels(99), 7, "64 wide: 64, 32, ..., 1");
        assert_eq!((d.level(2).width, d.level(2).height, d.level(2).depth), (16, 4, 0));
        assert_eq!((d.level(6).width, d.level(6).height), (1, 1));
        let layered = desc(8, 8, 5, 1, CUDA_ARRAY3D_LAYERED);
        assert_eq!(layered.mipmap_levels(99), 4, "the layers are no extent");
        assert_eq!((layered.level(1).width, layered.level(1).depth), (4, 5));
        let volume = desc(4, 4, 32, 1, 0);
        assert_eq!(volume.mipmap_levels(99), 6);
        assert_eq!((volume.level(3).width, volume.level(3).height, volume.level(3).depth), (1, 1, 4));
    }

    #[test]
    fn rows_refuse_a_width_past_the_pitch_and_past_an_array() {
        let host = Side { host: true, start: 100, pitch: 8, rows: 3, array: None };
        let arr = Side { host: false, start: 5000, pitch: 8, rows: 2, array: Some(((8, 2, 1), (0, 0, 0))) };
        assert_eq!(rows(arr, host, 8, 2, 1, (0, 0)).unwrap(), vec![(5000, 100), (5008, 108)]);
        assert_eq!(rows(arr, host, 8, 3, 1, (0, 0)), Err(CUresult::CUDA_ERROR_INVALID_VALUE), "3 rows in 2");
        assert_eq!(rows(arr, host, 8, 1, 1, (0, 4)), Err(CUresult::CUDA_ERROR_INVALID_VALUE), "x + width > pitch");
    }
}
