//! Texture and surface references (deprecated): `cuTexRefCreate`, `cuTexRefDestroy`,
//! `cuModuleGetTexRef`, `cuModuleGetSurfRef`, what a reference reads
//! (`cuTexRefSetAddress`, `cuTexRefSetAddress2D`, `cuTexRefSetArray`,
//! `cuTexRefSetMipmappedArray` and their `Get` forms) and `cuSurfRefSetArray`/`GetArray`.
//! How a reference samples is `texref_sampling.rs`.
//!
//! A reference is a record of the world (`model/legacy.rs`); a module's references are
//! its PTX's `.global .texref NAME;` and `.global .surfref NAME;` declarations, one handle
//! per name for the module's life. [`texture_reference`] gives a module reference's state
//! (what it is bound to and how it samples) to code that reads it.
//!
//! Checked as driver 580.159.04 answers (conformance `texref.*` and the probes of
//! docs/driver-facts.md, issue 29; CUDA_ERROR_INVALID_VALUE unless said).
//! `cuTexRefCreate` needs a current context (CUDA_ERROR_INVALID_CONTEXT); every other call
//! on an existing reference needs none. A reference that is not one (NULL, destroyed) is
//! CUDA_ERROR_INVALID_HANDLE, as is an array or mipmapped array that is not one; a NULL
//! out-pointer or descriptor is CUDA_ERROR_INVALID_VALUE.
//!
//! `cuTexRefSetAddress` checks no memory (address 0, an unmapped address, a range past its
//! allocation are all accepted): it binds the address rounded down to the 512-byte texture
//! alignment and returns the rest as the offset (the out-pointer may be NULL), then
//! refuses more than 2^32 - 1 texels (a bound between the 2^28 + 1 texels accepted and the
//! 2^38 refused; not probed closer). `cuTexRefSetAddress2D` refuses an address not aligned
//! to 512 bytes, a pitch not a multiple of 32, above `MAXIMUM_TEXTURE2D_LINEAR_PITCH` or
//! below a row's bytes, a width or height above the 2D linear limits (0 is accepted), and
//! 3 or more than 4 channels (any format value is accepted and set). `cuTexRefSetArray` and
//! `cuTexRefSetMipmappedArray` take flags 0 or `CU_TRSA_OVERRIDE_FORMAT` (which alone
//! sets the reference's format to the array's). `cuTexRefGetAddress` of a reference not
//! bound to linear memory writes 0 and is CUDA_ERROR_INVALID_VALUE; a `GetArray` of
//! another binding is CUDA_ERROR_INVALID_VALUE with nothing written. A module reference's
//! name the module lacks is CUDA_ERROR_NOT_FOUND, a module that is not one
//! CUDA_ERROR_INVALID_HANDLE. A surface reference takes flags 0 and an array made with
//! `CUDA_ARRAY3D_SURFACE_LDST`.

use std::ffi::{c_char, c_uint};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::array::format_bytes;
use crate::model::legacy::{Binding, SurfRef, TexRef};
use crate::run::lock::lock;
use crate::world::World;

/// The alignment of a texture's base address (`CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`).
const TEXTURE_ALIGNMENT: u64 = 512;
/// `..._TEXTURE_PITCH_ALIGNMENT`.
const PITCH_ALIGNMENT: usize = 32;
/// The most texels `cuTexRefSetAddress` binds (see the module's documentation).
const MAX_1D_LINEAR: usize = u32::MAX as usize;
/// `..._MAXIMUM_TEXTURE2D_LINEAR_WIDTH`, `_HEIGHT` (texels) and `_PITCH` (bytes).
const MAX_2D_LINEAR: (usize, usize, usize) = (131072, 65000, 2_097_120);

const INVALID: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const HANDLE: CUresult = CUresult::CUDA_ERROR_INVALID_HANDLE;

/// The state of texture reference `name` of `module`, if the program asked for it
/// (`cuModuleGetTexRef`): what it is bound to and how it samples (for code reading it).
#[allow(dead_code)] // for the texture instructions of the PTX executor
pub(crate) fn texture_reference(w: &World, module: u64, name: &str) -> Option<TexRef> {
    let l = lock(&w.legacy);
    let h = *l.module_refs.get(&(module, false, name.to_string()))?;
    l.texrefs.get(h).ok().copied()
}

/// Runs `f` on texture reference `h` (no current context needed); on error nothing
/// changes.
pub(crate) fn with_texref<R>(
    w: &World,
    h: CUtexref,
    f: impl FnOnce(&mut TexRef) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    let mut l = lock(&w.legacy);
    let mut t = *l.texrefs.get(from_ptr(h))?;
    let r = f(&mut t)?;
    *l.texrefs.get_mut(from_ptr(h))? = t;
    Ok(r)
}

pub(crate) unsafe fn cu_tex_ref_create(w: &World, out: *mut CUtexref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        w.contexts.current()?;
        let h = lock(&w.legacy).texrefs.insert(TexRef::new(None));
        write(out, to_ptr(h))
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_destroy(w: &World, h: CUtexref) -> CUresult {
    let mut l = lock(&w.legacy);
    let r = l.texrefs.get(from_ptr(h)).and_then(|t| match t.module {
        Some(_) => Err(INVALID),
        None => Ok(()),
    });
    status(r.and_then(|()| l.texrefs.remove(from_ptr(h)).map(|_| ())))
}

/// The bytes of one texel of a reference's format (0 for a format of no known size).
fn texel_bytes(format: CUarray_format, channels: usize) -> usize {
    format_bytes(format).unwrap_or(0).saturating_mul(channels)
}

/// Binds linear memory; `offset` gets the address's byte offset from the texture
/// alignment (before the texel count is checked, as the driver writes it).
fn set_address(
    w: &World,
    h: CUtexref,
    dptr: u64,
    bytes: usize,
    offset: impl FnOnce(u64) -> Result<(), CUresult>,
) -> Result<(), CUresult> {
    with_texref(w, h, |_| Ok(()))?;
    offset(dptr % TEXTURE_ALIGNMENT)?;
    with_texref(w, h, |t| {
        let texel = texel_bytes(t.format, usize::try_from(t.channels).unwrap_or(0)).max(1);
        if bytes / texel > MAX_1D_LINEAR {
            return Err(INVALID);
        }
        t.binding = Binding::Linear { ptr: dptr - dptr % TEXTURE_ALIGNMENT, bytes };
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_set_address(
    w: &World,
    offset: *mut usize,
    h: CUtexref,
    dptr: CUdeviceptr,
    bytes: usize,
) -> CUresult {
    status(set_address(w, h, dptr, bytes, |o| match offset.is_null() {
        true => Ok(()),
        false => write(offset, usize::try_from(o).unwrap_or(0)),
    }))
}

pub(crate) unsafe fn cu_tex_ref_set_address_v1(
    w: &World,
    offset: *mut c_uint,
    h: CUtexref,
    dptr: CUdeviceptr_v1,
    bytes: c_uint,
) -> CUresult {
    status(set_address(w, h, u64::from(dptr), bytes as usize, |o| match offset.is_null() {
        true => Ok(()),
        false => write(offset, u32::try_from(o).unwrap_or(0)),
    }))
}

/// Binds pitched memory of `desc`'s shape and format.
fn set_address_2d(
    w: &World,
    h: CUtexref,
    desc: Option<CUDA_ARRAY_DESCRIPTOR>,
    dptr: u64,
    pitch: usize,
) -> Result<(), CUresult> {
    with_texref(w, h, |_| Ok(()))?;
    let d = desc.ok_or(INVALID)?;
    let (max_w, max_h, max_pitch) = MAX_2D_LINEAR;
    let row = d.Width.saturating_mul(texel_bytes(d.Format, d.NumChannels as usize));
    let shape_ok = d.Width <= max_w && d.Height <= max_h && row <= pitch;
    let channels_ok = d.NumChannels != 3 && d.NumChannels <= 4;
    if !shape_ok || !channels_ok || dptr % TEXTURE_ALIGNMENT != 0 || pitch % PITCH_ALIGNMENT != 0 || pitch > max_pitch {
        return Err(INVALID);
    }
    with_texref(w, h, |t| {
        t.format = d.Format;
        t.channels = i32::try_from(d.NumChannels).unwrap_or(0);
        t.binding = Binding::Pitch2D { ptr: dptr, width: d.Width, height: d.Height, pitch };
        Ok(())
    })
}

pub(crate) unsafe fn cu_tex_ref_set_address_2d(
    w: &World,
    h: CUtexref,
    desc: *const CUDA_ARRAY_DESCRIPTOR,
    dptr: CUdeviceptr,
    pitch: usize,
) -> CUresult {
    // SAFETY: `desc` is NULL or points to a readable `CUDA_ARRAY_DESCRIPTOR` (the call's
    // contract with the program); it is only read, and copied.
    let d = unsafe { desc.as_ref() }.copied();
    status(set_address_2d(w, h, d, dptr, pitch))
}

pub(crate) unsafe fn cu_tex_ref_set_address_2d_v1(
    w: &World,
    h: CUtexref,
    desc: *const CUDA_ARRAY_DESCRIPTOR_v1,
    dptr: CUdeviceptr_v1,
    pitch: c_uint,
) -> CUresult {
    // SAFETY: `desc` is NULL or points to a readable `CUDA_ARRAY_DESCRIPTOR_v1` (the
    // call's contract with the program); it is only read, and copied.
    let d = unsafe { desc.as_ref() }.map(|d| CUDA_ARRAY_DESCRIPTOR {
        Width: d.Width as usize,
        Height: d.Height as usize,
        Format: d.Format,
        NumChannels: d.NumChannels,
    });
    status(set_address_2d(w, h, d, u64::from(dptr), pitch as usize))
}

pub(crate) unsafe fn cu_tex_ref_set_array(w: &World, h: CUtexref, array: CUarray, flags: c_uint) -> CUresult {
    let r = with_texref(w, h, |_| Ok(())).and_then(|()| {
        if flags & !CU_TRSA_OVERRIDE_FORMAT != 0 {
            return Err(INVALID);
        }
        let desc = lock(&w.arrays).arrays.get(from_ptr(array)).map_err(|_| HANDLE)?.desc;
        with_texref(w, h, |t| {
            if flags & CU_TRSA_OVERRIDE_FORMAT != 0 {
                t.format = desc.format;
                t.channels = i32::try_from(desc.channels).unwrap_or(0);
            }
            t.binding = Binding::Array(from_ptr(array));
            Ok(())
        })
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_set_mipmapped_array(
    w: &World,
    h: CUtexref,
    mipmap: CUmipmappedArray,
    flags: c_uint,
) -> CUresult {
    let r = with_texref(w, h, |_| Ok(())).and_then(|()| {
        if flags & !CU_TRSA_OVERRIDE_FORMAT != 0 {
            return Err(INVALID);
        }
        let desc = lock(&w.arrays).mipmaps.get(from_ptr(mipmap)).map_err(|_| HANDLE)?.desc;
        with_texref(w, h, |t| {
            if flags & CU_TRSA_OVERRIDE_FORMAT != 0 {
                t.format = desc.format;
                t.channels = i32::try_from(desc.channels).unwrap_or(0);
            }
            t.binding = Binding::Mipmap(from_ptr(mipmap));
            Ok(())
        })
    });
    status(r)
}

/// The address a reference is bound to (linear or pitched memory), if it is.
fn address(w: &World, h: CUtexref) -> Result<Option<u64>, CUresult> {
    with_texref(w, h, |t| match t.binding {
        Binding::Linear { ptr, .. } | Binding::Pitch2D { ptr, .. } => Ok(Some(ptr)),
        _ => Ok(None),
    })
}

/// `cuTexRefGetAddress`: a reference bound to no memory gets 0 written and
/// CUDA_ERROR_INVALID_VALUE (driver 580.159.04, conformance `texref.get_unbound`).
pub(crate) unsafe fn cu_tex_ref_get_address(w: &World, out: *mut CUdeviceptr, h: CUtexref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let a = address(w, h)?;
        write(out, a.unwrap_or(0))?;
        a.map(|_| ()).ok_or(INVALID)
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_get_address_v1(w: &World, out: *mut CUdeviceptr_v1, h: CUtexref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let a = address(w, h)?;
        write(out, u32::try_from(a.unwrap_or(0)).map_err(|_| INVALID)?)?;
        a.map(|_| ()).ok_or(INVALID)
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_get_array(w: &World, out: *mut CUarray, h: CUtexref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let a = with_texref(w, h, |t| match t.binding {
            Binding::Array(a) => Ok(a),
            _ => Err(INVALID),
        })?;
        write(out, to_ptr(a))
    });
    status(r)
}

pub(crate) unsafe fn cu_tex_ref_get_mipmapped_array(w: &World, out: *mut CUmipmappedArray, h: CUtexref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let m = with_texref(w, h, |t| match t.binding {
            Binding::Mipmap(m) => Ok(m),
            _ => Err(INVALID),
        })?;
        write(out, to_ptr(m))
    });
    status(r)
}

/// The handle of reference `name` of `module` (`surface`: a surface reference).
fn module_ref(w: &World, module: CUmodule, name: *const c_char, surface: bool) -> Result<u64, CUresult> {
    w.contexts.current()?;
    let name = crate::module::name_of(name)?;
    let found = {
        let s = lock(&w.modules);
        let image = &s.modules.get(from_ptr(module))?.image;
        let names = if surface { &image.surfrefs } else { &image.texrefs };
        names.contains(&name)
    };
    if !found {
        return Err(CUresult::CUDA_ERROR_NOT_FOUND);
    }
    Ok(lock(&w.legacy).module_ref(from_ptr(module), surface, &name))
}

pub(crate) unsafe fn cu_module_get_tex_ref(
    w: &World,
    out: *mut CUtexref,
    module: CUmodule,
    name: *const c_char,
) -> CUresult {
    status(non_null(out).and_then(|()| write(out, to_ptr(module_ref(w, module, name, false)?))))
}

pub(crate) unsafe fn cu_module_get_surf_ref(
    w: &World,
    out: *mut CUsurfref,
    module: CUmodule,
    name: *const c_char,
) -> CUresult {
    status(non_null(out).and_then(|()| write(out, to_ptr(module_ref(w, module, name, true)?))))
}

/// Runs `f` on surface reference `h` (as a texture reference, no current context needed).
fn with_surfref<R>(
    w: &World,
    h: CUsurfref,
    f: impl FnOnce(&mut SurfRef) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    f(lock(&w.legacy).surfrefs.get_mut(from_ptr(h))?)
}

pub(crate) unsafe fn cu_surf_ref_set_array(w: &World, h: CUsurfref, array: CUarray, flags: c_uint) -> CUresult {
    let r = with_surfref(w, h, |_| Ok(())).and_then(|()| {
        let desc = lock(&w.arrays).arrays.get(from_ptr(array)).map_err(|_| HANDLE)?.desc;
        if flags != 0 || desc.flags & CUDA_ARRAY3D_SURFACE_LDST == 0 {
            return Err(INVALID);
        }
        with_surfref(w, h, |s| {
            s.array = Some(from_ptr(array));
            Ok(())
        })
    });
    status(r)
}

pub(crate) unsafe fn cu_surf_ref_get_array(w: &World, out: *mut CUarray, h: CUsurfref) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let a = with_surfref(w, h, |s| s.array.ok_or(INVALID))?;
        write(out, to_ptr(a))
    });
    status(r)
}
