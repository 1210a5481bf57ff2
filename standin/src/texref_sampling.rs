//! How a texture reference samples (deprecated): `cuTexRefSet`/`cuTexRefGet` of
//! `AddressMode`, `FilterMode`, `MipmapFilterMode`, `MipmapLevelBias`,
//! `MipmapLevelClamp`, `MaxAnisotropy`, `BorderColor`, `Flags` and `Format`.
//!
//! Each is kept as set and read back (`model/legacy.rs`); what it binds is `texref.rs`.
//! Checked as driver 580.159.04 answers (conformance `texref.*` and the probes of
//! docs/driver-facts.md, issue 29; CUDA_ERROR_INVALID_VALUE): a dimension outside 0..=2; a
//! mipmap filter mode above `CU_TR_FILTER_MODE_LINEAR`; flags beyond the low six bits
//! (`CU_TRSF_SEAMLESS_CUBEMAP`, 0x40, is a texture object's alone); 3 or more than 4
//! channels (0 and negative counts are accepted); a NULL colour or out-pointer
//! (`cuTexRefGetFormat` ignores a NULL one). Not checked: the filter mode (any value is
//! kept), the format (any value is kept), the maximum anisotropy (kept, read back as the
//! same bits), and the address mode: one above `CU_TR_ADDRESS_MODE_BORDER` is accepted
//! and changes nothing. A reference that is not one is CUDA_ERROR_INVALID_HANDLE; no
//! current context is needed.

use std::ffi::{c_int, c_uint};

use cudrv::sys::*;

use crate::entry::{non_null, status, write};
use crate::model::legacy::TexRef;
use crate::texref::with_texref;
use crate::world::World;

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

/// The flags a texture reference takes: the low six bits (the `CU_TRSF_*` flags but
/// `CU_TRSF_SEAMLESS_CUBEMAP`, and bits 0x4 and 0x8, which driver 580.159.04 accepts and
/// reads back).
const FLAGS: c_uint = CU_TRSF_SEAMLESS_CUBEMAP - 1;

/// Sets a field of reference `h`.
fn set(w: &World, h: CUtexref, f: impl FnOnce(&mut TexRef) -> Result<(), CUresult>) -> CUresult {
    status(with_texref(w, h, f))
}

/// Writes a value read from reference `h` to `out` (NULL: CUDA_ERROR_INVALID_VALUE).
fn get<T>(w: &World, out: *mut T, h: CUtexref, f: impl FnOnce(&TexRef) -> T) -> CUresult {
    status(non_null(out).and_then(|()| write(out, with_texref(w, h, |t| Ok(f(t)))?)))
}

/// The dimension `dim` as an index (0..=2).
fn dimension(dim: c_int) -> Result<usize, CUresult> {
    usize::try_from(dim).ok().filter(|&d| d < 3).ok_or(INVALID)
}

pub(crate) unsafe fn cu_tex_ref_set_address_mode(w: &World, h: CUtexref, dim: c_int, am: CUaddress_mode) -> CUresult {
    set(w, h, |t| {
        let d = dimension(dim)?;
        if am.0 <= CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER.0 {
            *t.address_mode.get_mut(d).ok_or(INVALID)? = am.0;
        }
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_address_mode(
    w: &World,
    out: *mut CUaddress_mode,
    h: CUtexref,
    dim: c_int,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let d = dimension(dim)?;
        let m = with_texref(w, h, |t| t.address_mode.get(d).copied().ok_or(INVALID))?;
        write(out, CUaddress_mode(m))
    });
    status(r)
}

/// `cuTexRefSetFilterMode`: any value is kept (driver 580.159.04 reads 99 back).
pub(crate) unsafe fn cu_tex_ref_set_filter_mode(w: &World, h: CUtexref, fm: CUfilter_mode) -> CUresult {
    set(w, h, |t| {
        t.filter_mode = fm.0;
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_filter_mode(w: &World, out: *mut CUfilter_mode, h: CUtexref) -> CUresult {
    get(w, out, h, |t| CUfilter_mode(t.filter_mode))
}

pub(crate) unsafe fn cu_tex_ref_set_mipmap_filter_mode(w: &World, h: CUtexref, fm: CUfilter_mode) -> CUresult {
    set(w, h, |t| {
        if fm.0 > CUfilter_mode::CU_TR_FILTER_MODE_LINEAR.0 {
            return Err(INVALID);
        }
        t.mipmap_filter_mode = fm.0;
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_mipmap_filter_mode(w: &World, out: *mut CUfilter_mode, h: CUtexref) -> CUresult {
    get(w, out, h, |t| CUfilter_mode(t.mipmap_filter_mode))
}

pub(crate) unsafe fn cu_tex_ref_set_mipmap_level_bias(w: &World, h: CUtexref, bias: f32) -> CUresult {
    set(w, h, |t| {
        t.mipmap_level_bias = bias;
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_mipmap_level_bias(w: &World, out: *mut f32, h: CUtexref) -> CUresult {
    get(w, out, h, |t| t.mipmap_level_bias)
}

pub(crate) unsafe fn cu_tex_ref_set_mipmap_level_clamp(w: &World, h: CUtexref, min: f32, max: f32) -> CUresult {
    set(w, h, |t| {
        t.mipmap_level_clamp = [min, max];
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_mipmap_level_clamp(
    w: &World,
    min: *mut f32,
    max: *mut f32,
    h: CUtexref,
) -> CUresult {
    let r = non_null(min).and_then(|()| non_null(max)).and_then(|()| {
        let [lo, hi] = with_texref(w, h, |t| Ok(t.mipmap_level_clamp))?;
        write(min, lo)?;
        write(max, hi)
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_set_max_anisotropy(w: &World, h: CUtexref, max: c_uint) -> CUresult {
    set(w, h, |t| {
        t.max_anisotropy = max;
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_max_anisotropy(w: &World, out: *mut c_int, h: CUtexref) -> CUresult {
    get(w, out, h, |t| c_int::from_ne_bytes(t.max_anisotropy.to_ne_bytes()))
}

pub(crate) unsafe fn cu_tex_ref_set_border_color(w: &World, h: CUtexref, color: *mut f32) -> CUresult {
    set(w, h, |t| {
        non_null(color)?;
        // SAFETY: `color` is non-null (checked above) and, as `cuTexRefSetBorderColor`
        // requires, points to four readable floats (RGBA); read unaligned, as the
        // program's floats need only a float's alignment.
        t.border_color = unsafe { color.cast::<[f32; 4]>().read_unaligned() };
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_border_color(w: &World, out: *mut f32, h: CUtexref) -> CUresult {
    get(w, out.cast::<[f32; 4]>(), h, |t| t.border_color)
}

pub(crate) unsafe fn cu_tex_ref_set_flags(w: &World, h: CUtexref, flags: c_uint) -> CUresult {
    set(w, h, |t| {
        if flags & !FLAGS != 0 {
            return Err(INVALID);
        }
        t.flags = flags;
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_get_flags(w: &World, out: *mut c_uint, h: CUtexref) -> CUresult {
    get(w, out, h, |t| t.flags)
}

pub(crate) unsafe fn cu_tex_ref_set_format(w: &World, h: CUtexref, fmt: CUarray_format, channels: c_int) -> CUresult {
    set(w, h, |t| {
        if channels == 3 || channels > 4 {
            return Err(INVALID);
        }
        t.format = fmt;
        t.channels = channels;
        Ok(())
    })
}

/// `cuTexRefGetFormat`: either out-pointer may be NULL (it is ignored).
pub(crate) unsafe fn cu_tex_ref_get_format(
    w: &World,
    format: *mut CUarray_format,
    channels: *mut c_int,
    h: CUtexref,
) -> CUresult {
    let r = with_texref(w, h, |t| Ok((t.format, t.channels))).and_then(|(f, c)| {
        if !format.is_null() {
            write(format, f)?;
        }
        if !channels.is_null() {
            write(channels, c)?;
        }
        Ok(())
    });
    status(r)
}
