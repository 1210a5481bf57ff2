//! Texture and surface objects: `cuTexObjectCreate`, `cuTexObjectDestroy`,
//! `cuTexObjectGetResourceDesc`, `cuTexObjectGetTextureDesc`,
//! `cuTexObjectGetResourceViewDesc`, `cuSurfObjectCreate`, `cuSurfObjectDestroy`,
//! `cuSurfObjectGetResourceDesc`.
//!
//! An object is its descriptors (`model/array.rs`); its handle is the device address of a
//! 64-byte record of where its texels are (`run/texture.rs`), through which host kernels
//! read it (`Thread::texture_fetch`). No sampling is computed otherwise. A resource view
//! given to `cuTexObjectCreate` is kept (`cuTexObjectGetResourceViewDesc` reads it back;
//! an object made without one answers CUDA_ERROR_INVALID_VALUE, as `cuda.h` says) and
//! otherwise ignored.
//!
//! Checked as the H200 checks (conformance cases `array.tex_*`, `array.surf_*`): a
//! resource of an unknown type, an unknown array, linear or pitched memory that is not
//! live, not aligned to 512 bytes (texture alignment) or of no bytes, a pitch that is not
//! a multiple of 32 (texture pitch alignment; a pitch below the row is accepted), an
//! unknown format or channel count, an address or filter mode out of range: all
//! CUDA_ERROR_INVALID_VALUE. A surface may be made over any array (the H200 does not ask
//! for `CUDA_ARRAY3D_SURFACE_LDST`). Destroying an unknown, destroyed or zero handle
//! succeeds and does nothing; `cuTexObjectGetTextureDesc` reads the border colour back as
//! zeros.

use cudrv::sys::*;

use crate::array;
use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::array::{format_bytes, Object, Resource, Sampling};
use crate::model::memory::{AllocationKind, Owner};
use crate::run::lock::lock;
use crate::run::texture::{Texels, TEXELS_BYTES};
use crate::world::World;

/// The alignment a linear texture's address needs (`CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`).
const TEXTURE_ALIGNMENT: u64 = 512;
/// The alignment a pitched texture's pitch needs (`..._TEXTURE_PITCH_ALIGNMENT`).
const TEXTURE_PITCH_ALIGNMENT: usize = 32;

/// The resource and where its texels are, checked.
fn resource(w: &World, d: &CUDA_RESOURCE_DESC, surface: bool) -> Result<(Resource, Texels), CUresult> {
    let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
    if d.flags != 0 {
        return Err(invalid);
    }
    let element = |format: CUarray_format, channels: u32| match (format_bytes(format), channels) {
        (Some(b), 1 | 2 | 4) => Ok(b * channels as usize),
        _ => Err(invalid),
    };
    let live = |ptr: u64, bytes: usize| -> Result<(), CUresult> {
        if ptr == 0 || bytes == 0 || ptr % TEXTURE_ALIGNMENT != 0 {
            return Err(invalid);
        }
        lock(&w.memory).check_device(ptr, bytes)
    };
    match d.resType {
        CUresourcetype::CU_RESOURCE_TYPE_ARRAY => {
            // SAFETY: the member `resType` names; plain data.
            let h = unsafe { d.res.array.hArray };
            let a = array::find(w, h).map_err(|_| invalid)?;
            let (rows, slices) = a.desc.rows_slices();
            // A cube map's faces are layers (6 per cube).
            let layered = a.desc.flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP) != 0;
            let texels = Texels {
                base: a.address,
                pitch: a.desc.row_bytes() as u64,
                rows: rows as u64,
                extent: [a.desc.width as u64, rows as u64, if layered { 1 } else { slices as u64 }],
                element: a.desc.element_bytes() as u32,
                layers: if layered { slices as u64 } else { 0 },
                ..texel_format(a.desc.format, a.desc.channels)
            };
            Ok((Resource::Array { array: from_ptr(h) }, texels))
        }
        _ if surface => Err(invalid),
        CUresourcetype::CU_RESOURCE_TYPE_LINEAR => {
            // SAFETY: as above.
            let l = unsafe { d.res.linear };
            let e = element(l.format, l.numChannels)?;
            live(l.devPtr, l.sizeInBytes)?;
            let n = (l.sizeInBytes / e) as u64;
            let texels = Texels {
                base: l.devPtr,
                pitch: 0,
                rows: 1,
                extent: [n, 1, 1],
                element: e as u32,
                ..texel_format(l.format, l.numChannels)
            };
            let r = Resource::Linear { ptr: l.devPtr, format: l.format, channels: l.numChannels, bytes: l.sizeInBytes };
            Ok((r, texels))
        }
        CUresourcetype::CU_RESOURCE_TYPE_PITCH2D => {
            // SAFETY: as above.
            let p = unsafe { d.res.pitch2D };
            let e = element(p.format, p.numChannels)?;
            p.width.checked_mul(e).ok_or(invalid)?;
            if p.width == 0 || p.height == 0 || p.pitchInBytes % TEXTURE_PITCH_ALIGNMENT != 0 {
                return Err(invalid);
            }
            live(p.devPtr, p.pitchInBytes.checked_mul(p.height).ok_or(invalid)?)?;
            let texels = Texels {
                base: p.devPtr,
                pitch: p.pitchInBytes as u64,
                rows: p.height as u64,
                extent: [p.width as u64, p.height as u64, 1],
                element: e as u32,
                ..texel_format(p.format, p.numChannels)
            };
            let r = Resource::Pitch2D {
                ptr: p.devPtr,
                format: p.format,
                channels: p.numChannels,
                width: p.width,
                height: p.height,
                pitch: p.pitchInBytes,
            };
            Ok((r, texels))
        }
        _ => Err(invalid),
    }
}

/// A record with only the element's format and channels set.
fn texel_format(format: CUarray_format, channels: u32) -> Texels {
    Texels { format: format.0 as u8, channels: channels as u8, ..Texels::default() }
}

/// Makes an object: its record in device memory (its handle), then its registry entry.
fn create(
    w: &World,
    out: *mut u64,
    res: *const CUDA_RESOURCE_DESC,
    tex: Option<&CUDA_TEXTURE_DESC>,
    view: Option<CUDA_RESOURCE_VIEW_DESC>,
) -> Result<(), CUresult> {
    non_null(out)?;
    non_null(res)?;
    let c = w.contexts.current()?;
    // SAFETY: non-null; the caller's descriptor.
    let (resource, mut texels) = resource(w, unsafe { &*res }, tex.is_none())?;
    let sampling = match tex {
        Some(t) => {
            if t.addressMode.iter().any(|m| m.0 > 3) || t.filterMode.0 > 1 || t.mipmapFilterMode.0 > 1 {
                return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            texels.address_mode = t.addressMode.map(|m| m.0 as u8);
            texels.normalized = t.flags & CU_TRSF_NORMALIZED_COORDINATES != 0;
            texels.read_as_integer = t.flags & CU_TRSF_READ_AS_INTEGER != 0;
            texels.linear = t.filterMode.0 == 1;
            texels.border = t.borderColor.map(f32::to_bits);
            Some(Sampling {
                address_mode: t.addressMode.map(|m| m.0),
                filter_mode: t.filterMode.0,
                flags: t.flags,
                max_anisotropy: t.maxAnisotropy,
                border_color: t.borderColor,
            })
        }
        // A surface clamps (its accesses out of range are the kernel's mistake).
        None => {
            texels.address_mode = [1; 3];
            None
        }
    };
    let record = texels.to_bytes();
    let handle = {
        let mut m = lock(&w.memory);
        let address = m.alloc(TEXELS_BYTES, AllocationKind::TextureObject, None, Owner::of(&c))?;
        m.copy_to_device(address, record.as_ptr(), TEXELS_BYTES)?;
        address
    };
    let object = Object { resource, sampling, view };
    {
        let mut a = lock(&w.arrays);
        match sampling {
            Some(_) => a.textures.insert_at(handle, object),
            None => a.surfaces.insert_at(handle, object),
        }
    }
    write(out, handle)
}

pub(crate) unsafe fn cu_tex_object_create(
    w: &World,
    out: *mut CUtexObject,
    res: *const CUDA_RESOURCE_DESC,
    tex: *const CUDA_TEXTURE_DESC,
    view: *const CUDA_RESOURCE_VIEW_DESC,
) -> CUresult {
    let r = non_null(tex).and_then(|()| {
        // SAFETY: non-null; the caller's descriptor.
        let tex = unsafe { &*tex };
        // SAFETY: NULL or the caller's descriptor.
        let view = unsafe { view.as_ref() }.copied();
        create(w, out, res, Some(tex), view)
    });
    status(r)
}

pub(crate) unsafe fn cu_surf_object_create(
    w: &World,
    out: *mut CUsurfObject,
    res: *const CUDA_RESOURCE_DESC,
) -> CUresult {
    status(create(w, out, res, None, None))
}

/// Destroys an object of `surface`'s kind: its record's memory is freed. An unknown,
/// destroyed or zero handle succeeds and does nothing, as on the H200.
fn destroy(w: &World, h: u64, surface: bool) -> Result<(), CUresult> {
    let removed = {
        let mut a = lock(&w.arrays);
        let registry = if surface { &mut a.surfaces } else { &mut a.textures };
        registry.remove(h).is_ok()
    };
    if removed {
        lock(&w.memory).free(h)
    } else {
        Ok(())
    }
}

pub(crate) unsafe fn cu_tex_object_destroy(w: &World, h: CUtexObject) -> CUresult {
    status(destroy(w, h, false))
}

pub(crate) unsafe fn cu_surf_object_destroy(w: &World, h: CUsurfObject) -> CUresult {
    status(destroy(w, h, true))
}

/// The live object `h` of `surface`'s kind.
fn find(w: &World, h: u64, surface: bool) -> Result<Object, CUresult> {
    let a = lock(&w.arrays);
    let registry = if surface { &a.surfaces } else { &a.textures };
    registry.get(h).copied()
}

fn resource_desc(o: &Object) -> CUDA_RESOURCE_DESC {
    let mut d = CUDA_RESOURCE_DESC::default();
    match o.resource {
        Resource::Array { array } => {
            d.resType = CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
            d.res.array.hArray = to_ptr(array);
        }
        Resource::Linear { ptr, format, channels, bytes } => {
            d.resType = CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            d.res.linear = CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                devPtr: ptr,
                format,
                numChannels: channels,
                sizeInBytes: bytes,
            };
        }
        Resource::Pitch2D { ptr, format, channels, width, height, pitch } => {
            d.resType = CUresourcetype::CU_RESOURCE_TYPE_PITCH2D;
            d.res.pitch2D = CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_4 {
                devPtr: ptr,
                format,
                numChannels: channels,
                width,
                height,
                pitchInBytes: pitch,
            };
        }
    }
    d
}

pub(crate) unsafe fn cu_tex_object_get_resource_desc(
    w: &World,
    out: *mut CUDA_RESOURCE_DESC,
    h: CUtexObject,
) -> CUresult {
    status(non_null(out).and_then(|()| write(out, resource_desc(&find(w, h, false)?))))
}

pub(crate) unsafe fn cu_surf_object_get_resource_desc(
    w: &World,
    out: *mut CUDA_RESOURCE_DESC,
    h: CUsurfObject,
) -> CUresult {
    status(non_null(out).and_then(|()| write(out, resource_desc(&find(w, h, true)?))))
}

pub(crate) unsafe fn cu_tex_object_get_texture_desc(
    w: &World,
    out: *mut CUDA_TEXTURE_DESC,
    h: CUtexObject,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        let s = find(w, h, false)?.sampling.unwrap_or_default();
        let d = CUDA_TEXTURE_DESC {
            addressMode: s.address_mode.map(CUaddress_mode),
            filterMode: CUfilter_mode(s.filter_mode),
            flags: s.flags,
            maxAnisotropy: s.max_anisotropy,
            // The H200 reads the border colour back as zeros (array.tex_object_texture_desc).
            ..CUDA_TEXTURE_DESC::default()
        };
        write(out, d)
    });
    status(r)
}

/// `cuTexObjectGetResourceViewDesc`: the view the object was made with; for one made
/// without a view, success with nothing written (as the H200 answers,
/// texref.tex_object_view_none); CUDA_ERROR_INVALID_VALUE for an object that is not one
/// or a NULL out-pointer.
pub(crate) unsafe fn cu_tex_object_get_resource_view_desc(
    w: &World,
    out: *mut CUDA_RESOURCE_VIEW_DESC,
    h: CUtexObject,
) -> CUresult {
    let r = non_null(out).and_then(|()| match find(w, h, false)?.view {
        Some(view) => write(out, view),
        None => Ok(()),
    });
    status(r)
}
