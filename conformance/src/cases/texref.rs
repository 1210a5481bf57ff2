//! Texture and surface references (deprecated) and texture objects' resource views:
//! `cuTexRefCreate`/`Destroy`, every `cuTexRefSet*`/`cuTexRefGet*`, `cuModuleGetTexRef`,
//! `cuModuleGetSurfRef`, `cuSurfRefSetArray`/`GetArray`, `cuTexObjectGetResourceViewDesc`.
//! Pending: not yet recorded on the H200 (the stand-in answers in `standin/src/texref.rs`,
//! `texref_sampling.rs` and `texture.rs`).
//!
//! Not called: a destroyed or made-up reference handle, and `cuTexRefDestroy` of a
//! module's reference (the driver reads or frees through them; `cuda.h` says a module's
//! reference is destroyed with its module).

use super::{alloc, case, handle, number, sentinel, step, with, Case, Env, Out, UNTOUCHED};
use cudrv::sys::*;

/// A module declaring texture reference `tex_a` and surface reference `surf_a`, with one
/// empty kernel.
const REFS_PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\n\
    .global .texref tex_a;\n.global .surfref surf_a;\n\n\
    .visible .entry refs_kernel()\n{\n\tret;\n}\n\0";

/// A fresh texture reference of `cuTexRefCreate`.
fn texref(e: &Env) -> Result<CUtexref, Out> {
    let mut t = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    super::made("cuTexRefCreate", unsafe { e.p.cuTexRefCreate(&mut t) }, t)
}

/// The module of [`REFS_PTX`].
fn refs_module(e: &Env) -> Result<CUmodule, Out> {
    let mut m = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX and a valid out-pointer.
    super::made("cuModuleLoadData", unsafe { e.p.cuModuleLoadData(&mut m, REFS_PTX.as_ptr().cast()) }, m)
}

/// A `w` x `h` array of floats with `flags`.
fn array(e: &Env, w: usize, h: usize, flags: u32) -> Result<CUarray, Out> {
    let mut a = std::ptr::null_mut();
    let d = CUDA_ARRAY3D_DESCRIPTOR {
        Width: w,
        Height: h,
        Depth: 0,
        Format: CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
        Flags: flags,
    };
    // SAFETY: a valid out-pointer and descriptor.
    super::made("cuArray3DCreate", unsafe { e.p.cuArray3DCreate(&mut a, &d) }, a)
}

/// Everything a reference reports of how it samples, as fields.
unsafe fn sampling(e: &Env, t: CUtexref, out: Out) -> Out {
    let (mut fmt, mut ch) = (CUarray_format(UNTOUCHED as u32), -1);
    let mut am = [CUaddress_mode(99); 3];
    let (mut fm, mut mfm) = (CUfilter_mode(99), CUfilter_mode(99));
    let (mut flags, mut aniso) = (UNTOUCHED as u32, -1);
    let (mut bias, mut lo, mut hi) = (-9.0f32, -9.0f32, -9.0f32);
    let mut border = [-9.0f32; 4];
    // SAFETY: valid out-pointers and a live reference, throughout.
    let st = unsafe {
        [
            e.p.cuTexRefGetFormat(&mut fmt, &mut ch, t),
            e.p.cuTexRefGetAddressMode(&mut am[0], t, 0),
            e.p.cuTexRefGetAddressMode(&mut am[1], t, 1),
            e.p.cuTexRefGetAddressMode(&mut am[2], t, 2),
            e.p.cuTexRefGetFilterMode(&mut fm, t),
            e.p.cuTexRefGetMipmapFilterMode(&mut mfm, t),
            e.p.cuTexRefGetFlags(&mut flags, t),
            e.p.cuTexRefGetMaxAnisotropy(&mut aniso, t),
            e.p.cuTexRefGetMipmapLevelBias(&mut bias, t),
            e.p.cuTexRefGetMipmapLevelClamp(&mut lo, &mut hi, t),
            e.p.cuTexRefGetBorderColor(border.as_mut_ptr(), t),
        ]
    };
    out.eq("gets", format!("{:?}", st.map(|s| s.0)))
        .eq("format", fmt.0)
        .eq("channels", ch)
        .eq("address_mode", format!("{:?}", am.map(|m| m.0)))
        .eq("filter", fm.0)
        .eq("mipmap_filter", mfm.0)
        .eq("flags", flags)
        .eq("max_anisotropy", aniso)
        .eq("bias", bias)
        .eq("clamp", format!("{lo},{hi}"))
        .eq("border", format!("{border:?}"))
}

/// The status of `set` on a fresh reference (destroyed afterwards).
unsafe fn on_fresh(e: &Env, set: impl FnOnce(CUtexref) -> CUresult) -> Out {
    let t = with!(texref(e));
    let st = set(t);
    // SAFETY: a live reference of this case.
    step!(unsafe { e.p.cuTexRefDestroy(t) });
    Out::of(st)
}

/// The address a reference gives back, as it relates to `d`.
unsafe fn address_of(e: &Env, t: CUtexref, d: CUdeviceptr) -> (CUresult, &'static str) {
    let mut back = UNTOUCHED;
    // SAFETY: a valid out-pointer and a live reference.
    let st = unsafe { e.p.cuTexRefGetAddress(&mut back, t) };
    let what = match back {
        UNTOUCHED => "untouched",
        b if b == d => "same",
        b if b == d & !511 => "aligned_down",
        _ => "other",
    };
    (st, what)
}

fn create_and_settings() -> Vec<Case> {
    vec![
        case!("texref.create_defaults", Ctx, |e| {
            let t = with!(texref(e));
            let out = sampling(e, t, Out::of(CUresult::CUDA_SUCCESS));
            out.eq("destroy", e.p.cuTexRefDestroy(t))
        }),
        case!("texref.create_null", Ctx, |e| { Out::of(e.p.cuTexRefCreate(std::ptr::null_mut())) }),
        case!("texref.create_no_context", Init, |e| {
            let mut t: CUtexref = sentinel();
            let st = e.p.cuTexRefCreate(&mut t);
            Out::of(st).eq("texref", handle(t))
        }),
        case!("texref.destroy_null", Ctx, |e| { Out::of(e.p.cuTexRefDestroy(std::ptr::null_mut())) }),
        case!("texref.settings_round_trip", Ctx, |e| {
            let t = with!(texref(e));
            let mut border = [0.25f32, 0.5, 0.75, 1.0];
            let st = [
                e.p.cuTexRefSetFormat(t, CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, 4),
                e.p.cuTexRefSetAddressMode(t, 0, CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP),
                e.p.cuTexRefSetAddressMode(t, 1, CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER),
                e.p.cuTexRefSetAddressMode(t, 2, CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR),
                e.p.cuTexRefSetFilterMode(t, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR),
                e.p.cuTexRefSetMipmapFilterMode(t, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR),
                e.p.cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_READ_AS_INTEGER),
                e.p.cuTexRefSetMaxAnisotropy(t, 4),
                e.p.cuTexRefSetMipmapLevelBias(t, 0.5),
                e.p.cuTexRefSetMipmapLevelClamp(t, 1.0, 4.0),
                e.p.cuTexRefSetBorderColor(t, border.as_mut_ptr()),
            ];
            let out = sampling(e, t, Out::of(CUresult::CUDA_SUCCESS).eq("sets", format!("{:?}", st.map(|s| s.0))));
            step!(e.p.cuTexRefDestroy(t));
            out
        }),
        case!("texref.max_anisotropy_large", Ctx, |e| {
            let t = with!(texref(e));
            let st = e.p.cuTexRefSetMaxAnisotropy(t, 64);
            let mut back = -1;
            let get = e.p.cuTexRefGetMaxAnisotropy(&mut back, t);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("get", get).eq("value", back)
        }),
        case!("texref.address_mode_dim_3", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetAddressMode(t, 3, CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP))
        }),
        case!("texref.address_mode_dim_negative", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetAddressMode(t, -1, CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP))
        }),
        case!("texref.address_mode_4", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetAddressMode(t, 0, CUaddress_mode(4)))
        }),
        case!("texref.get_address_mode_dim_3", Ctx, |e| {
            let mut m = CUaddress_mode(99);
            on_fresh(e, |t| e.p.cuTexRefGetAddressMode(&mut m, t, 3)).eq("mode", m.0)
        }),
        case!("texref.filter_mode_2", Ctx, |e| { on_fresh(e, |t| e.p.cuTexRefSetFilterMode(t, CUfilter_mode(2))) }),
        case!("texref.mipmap_filter_mode_2", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetMipmapFilterMode(t, CUfilter_mode(2)))
        }),
        case!("texref.flags_unknown", Ctx, |e| { on_fresh(e, |t| e.p.cuTexRefSetFlags(t, 0x100)) }),
        case!("texref.flags_srgb_seamless", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetFlags(t, CU_TRSF_SRGB | CU_TRSF_SEAMLESS_CUBEMAP))
        }),
        case!("texref.format_three_channels", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetFormat(t, CUarray_format::CU_AD_FORMAT_FLOAT, 3))
        }),
        case!("texref.format_unknown", Ctx, |e| { on_fresh(e, |t| e.p.cuTexRefSetFormat(t, CUarray_format(0x7), 1)) }),
        case!("texref.border_null", Ctx, |e| { on_fresh(e, |t| e.p.cuTexRefSetBorderColor(t, std::ptr::null_mut())) }),
        case!("texref.get_filter_null", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefGetFilterMode(std::ptr::null_mut(), t))
        }),
        case!("texref.get_clamp_null", Ctx, |e| {
            let mut hi = 0.0f32;
            on_fresh(e, |t| e.p.cuTexRefGetMipmapLevelClamp(std::ptr::null_mut(), &mut hi, t))
        }),
        case!("texref.get_format_null_outs", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefGetFormat(std::ptr::null_mut(), std::ptr::null_mut(), t))
        }),
        case!("texref.null_reference", Ctx, |e| {
            let mut fm = CUfilter_mode(99);
            let null = std::ptr::null_mut();
            Out::of(e.p.cuTexRefSetFilterMode(null, CUfilter_mode::CU_TR_FILTER_MODE_POINT))
                .eq("get", e.p.cuTexRefGetFilterMode(&mut fm, null))
                .eq("set_format", e.p.cuTexRefSetFormat(null, CUarray_format::CU_AD_FORMAT_FLOAT, 1))
        }),
    ]
}

fn bindings() -> Vec<Case> {
    vec![
        case!("texref.set_address_allocation", Ctx, |e| {
            let t = with!(texref(e));
            let d = with!(alloc(e, 4096));
            let mut off = UNTOUCHED as usize;
            let st = e.p.cuTexRefSetAddress(&mut off, t, d, 4096);
            let (get, what) = address_of(e, t, d);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("offset", number(off as u64)).eq("get", get).eq("address", what)
        }),
        case!("texref.set_address_offset_4", Ctx, |e| {
            let t = with!(texref(e));
            let d = with!(alloc(e, 4096));
            let mut off = UNTOUCHED as usize;
            let st = e.p.cuTexRefSetAddress(&mut off, t, d + 4, 1024);
            let (get, what) = address_of(e, t, d + 4);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("offset", number(off as u64)).eq("get", get).eq("address", what)
        }),
        case!("texref.set_address_null_offset", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            on_fresh(e, |t| e.p.cuTexRefSetAddress(std::ptr::null_mut(), t, d, 4096))
        }),
        case!("texref.set_address_past_allocation", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            let mut off = 0usize;
            on_fresh(e, |t| e.p.cuTexRefSetAddress(&mut off, t, d, 8192))
        }),
        case!("texref.set_address_zero", Ctx, |e| {
            let mut off = 0usize;
            on_fresh(e, |t| e.p.cuTexRefSetAddress(&mut off, t, 0, 4096))
        }),
        case!("texref.set_address_too_many_texels", Ctx, |e| {
            let d = with!(alloc(e, 4096));
            let mut off = 0usize;
            on_fresh(e, |t| {
                let f = e.p.cuTexRefSetFormat(t, CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8, 1);
                if f != CUresult::CUDA_SUCCESS {
                    return f;
                }
                e.p.cuTexRefSetAddress(&mut off, t, d, (1 << 28) + 1)
            })
        }),
        case!("texref.get_unbound", Ctx, |e| {
            let t = with!(texref(e));
            let (mut d, mut a, mut m) = (UNTOUCHED, sentinel(), sentinel());
            let st = e.p.cuTexRefGetAddress(&mut d, t);
            let arr = e.p.cuTexRefGetArray(&mut a, t);
            let mip = e.p.cuTexRefGetMipmappedArray(&mut m, t);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("address", number(d)).eq("array", arr).eq("mipmapped", mip).eq("array_out", handle(a))
        }),
        case!("texref.set_address_2d", Ctx, |e| {
            let t = with!(texref(e));
            let (mut d, mut pitch) = (0u64, 0usize);
            step!(e.p.cuMemAllocPitch(&mut d, &mut pitch, 256, 8, 4));
            let desc = CUDA_ARRAY_DESCRIPTOR {
                Width: 64,
                Height: 8,
                Format: CUarray_format::CU_AD_FORMAT_FLOAT,
                NumChannels: 2,
            };
            let st = e.p.cuTexRefSetAddress2D(t, &desc, d, pitch);
            let (get, what) = address_of(e, t, d);
            let (mut fmt, mut ch) = (CUarray_format(0), 0);
            let format = e.p.cuTexRefGetFormat(&mut fmt, &mut ch, t);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st)
                .eq("get", get)
                .eq("address", what)
                .eq("get_format", format)
                .eq("format", fmt.0)
                .eq("channels", ch)
        }),
        case!("texref.set_address_2d_errors", Ctx, |e| {
            let t = with!(texref(e));
            let (mut d, mut pitch) = (0u64, 0usize);
            step!(e.p.cuMemAllocPitch(&mut d, &mut pitch, 256, 8, 4));
            let desc = CUDA_ARRAY_DESCRIPTOR {
                Width: 64,
                Height: 8,
                Format: CUarray_format::CU_AD_FORMAT_FLOAT,
                NumChannels: 1,
            };
            let bad = |f: &dyn Fn(&mut CUDA_ARRAY_DESCRIPTOR)| {
                let mut x = desc;
                f(&mut x);
                e.p.cuTexRefSetAddress2D(t, &x, d, pitch)
            };
            let out = Out::of(e.p.cuTexRefSetAddress2D(t, &desc, d + 4, pitch))
                .eq("pitch_unaligned", e.p.cuTexRefSetAddress2D(t, &desc, d, pitch + 4))
                .eq("null_desc", e.p.cuTexRefSetAddress2D(t, std::ptr::null(), d, pitch))
                .eq("zero_width", bad(&|x| x.Width = 0))
                .eq("three_channels", bad(&|x| x.NumChannels = 3))
                .eq("unknown_format", bad(&|x| x.Format = CUarray_format(0x7)))
                .eq("too_wide", bad(&|x| x.Width = 131073))
                .eq("pitch_too_big", e.p.cuTexRefSetAddress2D(t, &desc, d, 2_097_152));
            step!(e.p.cuTexRefDestroy(t));
            out
        }),
        case!("texref.set_array", Ctx, |e| {
            let t = with!(texref(e));
            let a = with!(array(e, 16, 16, 0));
            let st = e.p.cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT);
            let mut back = sentinel();
            let get = e.p.cuTexRefGetArray(&mut back, t);
            let mut d = UNTOUCHED;
            let address = e.p.cuTexRefGetAddress(&mut d, t);
            let (mut fmt, mut ch) = (CUarray_format(0), 0);
            let format = e.p.cuTexRefGetFormat(&mut fmt, &mut ch, t);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st)
                .eq("get", get)
                .eq("same", back == a)
                .eq("get_address", address)
                .eq("get_format", format)
                .eq("format", fmt.0)
                .eq("channels", ch)
        }),
        case!("texref.set_array_flags_0", Ctx, |e| {
            let a = with!(array(e, 16, 16, 0));
            on_fresh(e, |t| e.p.cuTexRefSetArray(t, a, 0))
        }),
        case!("texref.set_array_null", Ctx, |e| {
            on_fresh(e, |t| e.p.cuTexRefSetArray(t, std::ptr::null_mut(), CU_TRSA_OVERRIDE_FORMAT))
        }),
        case!("texref.set_address_after_array", Ctx, |e| {
            let t = with!(texref(e));
            let a = with!(array(e, 16, 16, 0));
            let d = with!(alloc(e, 4096));
            step!(e.p.cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
            let mut off = 0usize;
            let st = e.p.cuTexRefSetAddress(&mut off, t, d, 4096);
            let mut back = sentinel();
            let get = e.p.cuTexRefGetArray(&mut back, t);
            step!(e.p.cuTexRefDestroy(t));
            Out::of(st).eq("get_array", get)
        }),
        case!("texref.set_mipmapped_array", Ctx, |e| {
            let t = with!(texref(e));
            let mut m = std::ptr::null_mut();
            let d = CUDA_ARRAY3D_DESCRIPTOR {
                Width: 16,
                Height: 16,
                Depth: 0,
                Format: CUarray_format::CU_AD_FORMAT_FLOAT,
                NumChannels: 1,
                Flags: 0,
            };
            step!(e.p.cuMipmappedArrayCreate(&mut m, &d, 2));
            let st = e.p.cuTexRefSetMipmappedArray(t, m, CU_TRSA_OVERRIDE_FORMAT);
            let mut back = sentinel();
            let get = e.p.cuTexRefGetMipmappedArray(&mut back, t);
            let flags0 = e.p.cuTexRefSetMipmappedArray(t, m, 0);
            step!(e.p.cuTexRefDestroy(t));
            step!(e.p.cuMipmappedArrayDestroy(m));
            Out::of(st).eq("get", get).eq("same", back == m).eq("flags_0", flags0)
        }),
    ]
}

fn modules() -> Vec<Case> {
    vec![
        case!("texref.module_get_texref", Ctx, |e| {
            let m = with!(refs_module(e));
            let (mut t, mut again) = (sentinel(), sentinel());
            let st = e.p.cuModuleGetTexRef(&mut t, m, c"tex_a".as_ptr());
            let st2 = e.p.cuModuleGetTexRef(&mut again, m, c"tex_a".as_ptr());
            let out = Out::of(st).eq("texref", handle(t)).eq("again", st2).eq("same", t == again);
            let out = if st == CUresult::CUDA_SUCCESS { sampling(e, t, out) } else { out };
            step!(e.p.cuModuleUnload(m));
            out
        }),
        case!("texref.module_get_texref_errors", Ctx, |e| {
            let m = with!(refs_module(e));
            let mut t: CUtexref = sentinel();
            let missing = e.p.cuModuleGetTexRef(&mut t, m, c"nope".as_ptr());
            let missing_out = handle(t);
            let surf_name = e.p.cuModuleGetTexRef(&mut t, m, c"surf_a".as_ptr());
            let null_name = e.p.cuModuleGetTexRef(&mut t, m, std::ptr::null());
            let null_out = e.p.cuModuleGetTexRef(std::ptr::null_mut(), m, c"tex_a".as_ptr());
            let null_module = e.p.cuModuleGetTexRef(&mut t, std::ptr::null_mut(), c"tex_a".as_ptr());
            step!(e.p.cuModuleUnload(m));
            Out::of(missing)
                .eq("missing_out", missing_out)
                .eq("surfref_name", surf_name)
                .eq("null_name", null_name)
                .eq("null_out", null_out)
                .eq("null_module", null_module)
        }),
        case!("texref.module_texref_is_no_global", Ctx, |e| {
            let m = with!(refs_module(e));
            let (mut d, mut n) = (UNTOUCHED, UNTOUCHED as usize);
            let st = e.p.cuModuleGetGlobal(&mut d, &mut n, m, c"tex_a".as_ptr());
            step!(e.p.cuModuleUnload(m));
            Out::of(st).eq("bytes", number(n as u64))
        }),
        case!("texref.module_texref_bind_array", Ctx, |e| {
            let m = with!(refs_module(e));
            let a = with!(array(e, 16, 16, 0));
            let mut t = std::ptr::null_mut();
            step!(e.p.cuModuleGetTexRef(&mut t, m, c"tex_a".as_ptr()));
            let st = e.p.cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT);
            let mut back = sentinel();
            let get = e.p.cuTexRefGetArray(&mut back, t);
            step!(e.p.cuModuleUnload(m));
            Out::of(st).eq("get", get).eq("same", back == a)
        }),
        case!("texref.module_get_surfref", Ctx, |e| {
            let m = with!(refs_module(e));
            let a = with!(array(e, 16, 16, CUDA_ARRAY3D_SURFACE_LDST));
            let mut s: CUsurfref = sentinel();
            let st = e.p.cuModuleGetSurfRef(&mut s, m, c"surf_a".as_ptr());
            let out = Out::of(st).eq("surfref", handle(s));
            if st != CUresult::CUDA_SUCCESS {
                step!(e.p.cuModuleUnload(m));
                return out;
            }
            let mut back = sentinel();
            let unbound = e.p.cuSurfRefGetArray(&mut back, s);
            let set = e.p.cuSurfRefSetArray(s, a, 0);
            let get = e.p.cuSurfRefGetArray(&mut back, s);
            step!(e.p.cuModuleUnload(m));
            out.eq("get_unbound", unbound).eq("set", set).eq("get", get).eq("same", back == a)
        }),
        case!("texref.module_get_surfref_errors", Ctx, |e| {
            let m = with!(refs_module(e));
            let mut s: CUsurfref = sentinel();
            let missing = e.p.cuModuleGetSurfRef(&mut s, m, c"nope".as_ptr());
            let tex_name = e.p.cuModuleGetSurfRef(&mut s, m, c"tex_a".as_ptr());
            let null_out = e.p.cuModuleGetSurfRef(std::ptr::null_mut(), m, c"surf_a".as_ptr());
            step!(e.p.cuModuleUnload(m));
            Out::of(missing).eq("texref_name", tex_name).eq("null_out", null_out)
        }),
        case!("texref.surfref_set_array_errors", Ctx, |e| {
            let m = with!(refs_module(e));
            let plain = with!(array(e, 16, 16, 0));
            let ldst = with!(array(e, 16, 16, CUDA_ARRAY3D_SURFACE_LDST));
            let mut s = std::ptr::null_mut();
            step!(e.p.cuModuleGetSurfRef(&mut s, m, c"surf_a".as_ptr()));
            let out = Out::of(e.p.cuSurfRefSetArray(s, plain, 0))
                .eq("flags_1", e.p.cuSurfRefSetArray(s, ldst, 1))
                .eq("null_array", e.p.cuSurfRefSetArray(s, std::ptr::null_mut(), 0))
                .eq("null_surfref", e.p.cuSurfRefSetArray(std::ptr::null_mut(), ldst, 0))
                .eq("get_null_out", e.p.cuSurfRefGetArray(std::ptr::null_mut(), s));
            step!(e.p.cuModuleUnload(m));
            out
        }),
    ]
}

/// A texture object over a 16 x 16 float array, made with `view` (or none).
unsafe fn view_case(e: &Env, view: Option<CUDA_RESOURCE_VIEW_DESC>) -> Out {
    let a = with!(array(e, 16, 16, 0));
    let mut r = CUDA_RESOURCE_DESC { resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY, ..Default::default() };
    r.res.array.hArray = a;
    let td = CUDA_TEXTURE_DESC::default();
    let mut t: CUtexObject = 0;
    let vp = view.as_ref().map_or(std::ptr::null(), |v| v as *const CUDA_RESOURCE_VIEW_DESC);
    // SAFETY: valid descriptors and out-pointer.
    step!(unsafe { e.p.cuTexObjectCreate(&mut t, &r, &td, vp) });
    let mut back = CUDA_RESOURCE_VIEW_DESC { width: 77, ..Default::default() };
    // SAFETY: a valid out-pointer and a live object.
    let st = unsafe { e.p.cuTexObjectGetResourceViewDesc(&mut back, t) };
    // SAFETY: a live object, not used afterwards.
    let null_out = unsafe { e.p.cuTexObjectGetResourceViewDesc(std::ptr::null_mut(), t) };
    // SAFETY: as above.
    step!(unsafe { e.p.cuTexObjectDestroy(t) });
    Out::of(st)
        .eq("format", back.format.0)
        .eq("width", back.width)
        .eq("height", back.height)
        .eq("depth", back.depth)
        .eq("mip_levels", format!("{},{}", back.firstMipmapLevel, back.lastMipmapLevel))
        .eq("layers", format!("{},{}", back.firstLayer, back.lastLayer))
        .eq("null_out", null_out)
}

fn views() -> Vec<Case> {
    vec![
        case!("texref.tex_object_view_none", Ctx, |e| { view_case(e, None) }),
        case!("texref.tex_object_view_round_trip", Ctx, |e| {
            let v = CUDA_RESOURCE_VIEW_DESC {
                format: CUresourceViewFormat::CU_RES_VIEW_FORMAT_FLOAT_1X32,
                width: 16,
                height: 16,
                ..Default::default()
            };
            view_case(e, Some(v))
        }),
        case!("texref.tex_object_view_zero_handle", Ctx, |e| {
            let mut back = CUDA_RESOURCE_VIEW_DESC::default();
            Out::of(e.p.cuTexObjectGetResourceViewDesc(&mut back, 0))
        }),
    ]
}

pub fn cases() -> Vec<Case> {
    [create_and_settings(), bindings(), modules(), views()].concat()
}
