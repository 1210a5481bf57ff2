//! Kernel images in the forms other toolchains make them: fatbins (nvcc 13.0's, PTX
//! compressed as nvcc compresses it by default, uncompressed, and beside sm_90 machine
//! code; `scripts/probes/fatbin/`), the CUDA runtime's fatbin wrapper, and images read
//! from files (`cuModuleLoad`, `cuLibraryLoadFromFile`, `cuLinkAddFile`). Each loaded
//! kernel, `scale(x, y, n)` (y = 3x + 1), is run and its output checked.

use std::os::raw::c_void;

use super::{alloc, case, handle, read_f32, sentinel, step, with, write_f32, Case, Env, Out, SCALE_PTX};
use cudrv::sys::*;

/// `nvcc -fatbin -gencode arch=compute_90,code=compute_90 scale.cu` (nvcc 13.0): one PTX
/// member, Zstandard-compressed.
static FATBIN_ZSTD: &[u8] = include_bytes!("../../data/scale-ptx-zstd.fatbin");
/// The same with `-Xfatbin -compress-all --compress-mode=none`: the PTX uncompressed.
static FATBIN_PLAIN: &[u8] = include_bytes!("../../data/scale-ptx.fatbin");
/// `-gencode arch=compute_90,code=[sm_90,compute_90]`: sm_90 machine code and PTX.
static FATBIN_BOTH: &[u8] = include_bytes!("../../data/scale-sm90-and-ptx.fatbin");

const NO_OPTIONS: *mut CUjit_option = std::ptr::null_mut();
const NO_LIB_OPTIONS: *mut CUlibraryOption = std::ptr::null_mut();
const NO_VALUES: *mut *mut c_void = std::ptr::null_mut();

/// A fatbin copied to 8-byte-aligned memory (as a compiler places one).
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut v = vec![0u64; bytes.len().div_ceil(8)];
    for (i, b) in bytes.iter().enumerate() {
        if let Some(w) = v.get_mut(i / 8) {
            *w |= u64::from(*b) << (8 * (i % 8));
        }
    }
    v
}

/// Runs `scale` of `f` over 256 floats and answers how many outputs are wrong.
fn run_scale(e: &Env, f: CUfunction) -> Out {
    let n = 256usize;
    let x = with!(alloc(e, n * 4));
    let y = with!(alloc(e, n * 4));
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    with!(write_f32(e, x, &input));
    let (mut xp, mut yp, mut count) = (x, y, n as i32);
    let mut args: [*mut c_void; 3] = [(&raw mut xp).cast(), (&raw mut yp).cast(), (&raw mut count).cast()];
    // SAFETY: the arguments match scale's parameters and outlive the call.
    let launched = unsafe {
        e.p.cuLaunchKernel(f, 1, 1, 1, n as u32, 1, 1, 0, std::ptr::null_mut(), args.as_mut_ptr(), std::ptr::null_mut())
    };
    // SAFETY: no arguments.
    let synced = unsafe { e.p.cuCtxSynchronize() };
    let out = with!(read_f32(e, y, n));
    let wrong = out.iter().zip(&input).filter(|(o, i)| **o != 3.0 * **i + 1.0).count();
    Out::of(launched).eq("sync", format!("{synced:?}")).eq("wrong", wrong)
}

/// Loads `image` with `cuModuleLoadData` (or `cuModuleLoadFatBinary`) and runs `scale`.
fn module_run(e: &Env, image: *const c_void, fat_binary: bool) -> Out {
    let mut m: CUmodule = sentinel();
    // SAFETY: `image` is a fatbin, a wrapper of one, or NUL-terminated text.
    let st = unsafe {
        if fat_binary {
            e.p.cuModuleLoadFatBinary(&mut m, image)
        } else {
            e.p.cuModuleLoadData(&mut m, image)
        }
    };
    if st != CUresult::CUDA_SUCCESS {
        return Out::of(st).eq("module", handle(m));
    }
    let mut f = std::ptr::null_mut();
    // SAFETY: a live module, a NUL-terminated name, a valid out-pointer.
    step!(unsafe { e.p.cuModuleGetFunction(&mut f, m, c"scale".as_ptr()) });
    run_scale(e, f)
}

/// A file of this process holding `bytes` (removed when dropped).
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Option<TempFile> {
        let path = std::env::temp_dir().join(format!("cudrv-conformance-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).ok()?;
        Some(TempFile(path))
    }

    fn c_path(&self) -> std::ffi::CString {
        std::ffi::CString::new(self.0.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The PTX of `scale` (the fatbins' kernel), as nvcc wrote it into the plain fatbin.
fn scale_ptx() -> Vec<u8> {
    let payload = FATBIN_PLAIN.get(96..).unwrap_or_default();
    payload.split(|&b| b == 0).next().unwrap_or_default().to_vec()
}

pub fn pending() -> Vec<Case> {
    vec![
        case!("image.fatbin_zstd", Ctx, |e| {
            let image = aligned(FATBIN_ZSTD);
            module_run(e, image.as_ptr().cast(), false)
        }),
        case!("image.fatbin_plain", Ctx, |e| {
            let image = aligned(FATBIN_PLAIN);
            module_run(e, image.as_ptr().cast(), false)
        }),
        case!("image.fatbin_sm90_and_ptx", Ctx, |e| {
            let image = aligned(FATBIN_BOTH);
            module_run(e, image.as_ptr().cast(), false)
        }),
        case!("image.fatbin_load_fat_binary", Ctx, |e| {
            let image = aligned(FATBIN_ZSTD);
            module_run(e, image.as_ptr().cast(), true)
        }),
        case!("image.fatbin_wrapper", Ctx, |e| {
            let image = aligned(FATBIN_ZSTD);
            // The CUDA runtime's wrapper: magic, version, the fatbin's address, no file name.
            let wrapper: [u64; 3] = [0x0000_0001_4662_43B1, image.as_ptr() as u64, 0];
            module_run(e, wrapper.as_ptr().cast(), true)
        }),
        case!("image.fatbin_wrapper_load_data", Ctx, |e| {
            let image = aligned(FATBIN_ZSTD);
            let wrapper: [u64; 3] = [0x0000_0001_4662_43B1, image.as_ptr() as u64, 0];
            module_run(e, wrapper.as_ptr().cast(), false)
        }),
        case!("image.fatbin_truncated_member", Ctx, |e| {
            // The header claims the whole size, the member's payload is cut short.
            let mut bytes = FATBIN_ZSTD.to_vec();
            if let Some(size) = bytes.get_mut(8) {
                *size = size.wrapping_sub(200);
            }
            let image = aligned(&bytes);
            module_run(e, image.as_ptr().cast(), false)
        }),
        case!("image.ptx_from_fatbin_text", Ctx, |e| {
            let mut ptx = scale_ptx();
            ptx.push(0);
            module_run(e, ptx.as_ptr().cast(), false)
        }),
        case!("image.module_load_ptx_file", Ctx, |e| {
            let Some(file) = TempFile::new("scale.ptx", &scale_ptx()) else {
                return Out::setup_failed("write a temporary file", CUresult::CUDA_ERROR_UNKNOWN);
            };
            let mut m: CUmodule = sentinel();
            let st = e.p.cuModuleLoad(&mut m, file.c_path().as_ptr());
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("module", handle(m));
            }
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"scale".as_ptr()));
            run_scale(e, f)
        }),
        case!("image.module_load_fatbin_file", Ctx, |e| {
            let Some(file) = TempFile::new("scale.fatbin", FATBIN_ZSTD) else {
                return Out::setup_failed("write a temporary file", CUresult::CUDA_ERROR_UNKNOWN);
            };
            let mut m: CUmodule = sentinel();
            let st = e.p.cuModuleLoad(&mut m, file.c_path().as_ptr());
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("module", handle(m));
            }
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"scale".as_ptr()));
            run_scale(e, f)
        }),
        case!("image.module_load_missing_file", Ctx, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoad(&mut m, c"/nonexistent/cudrv-conformance.ptx".as_ptr())).eq("module", handle(m))
        }),
        case!("image.module_load_null_path", Ctx, |e| {
            let mut m: CUmodule = sentinel();
            Out::of(e.p.cuModuleLoad(&mut m, std::ptr::null())).eq("module", handle(m))
        }),
        case!("image.library_load_from_file", Ctx, |e| {
            let Some(file) = TempFile::new("lib.fatbin", FATBIN_ZSTD) else {
                return Out::setup_failed("write a temporary file", CUresult::CUDA_ERROR_UNKNOWN);
            };
            let mut l: CUlibrary = sentinel();
            let st = e.p.cuLibraryLoadFromFile(
                &mut l,
                file.c_path().as_ptr(),
                NO_OPTIONS,
                NO_VALUES,
                0,
                NO_LIB_OPTIONS,
                NO_VALUES,
                0,
            );
            if st != CUresult::CUDA_SUCCESS {
                return Out::of(st).eq("library", handle(l));
            }
            let mut k = std::ptr::null_mut();
            step!(e.p.cuLibraryGetKernel(&mut k, l, c"scale".as_ptr()));
            let mut f = std::ptr::null_mut();
            step!(e.p.cuKernelGetFunction(&mut f, k));
            run_scale(e, f)
        }),
        case!("image.library_load_missing_file", Ctx, |e| {
            let mut l: CUlibrary = sentinel();
            let path = c"/nonexistent/cudrv-conformance.fatbin".as_ptr();
            Out::of(e.p.cuLibraryLoadFromFile(&mut l, path, NO_OPTIONS, NO_VALUES, 0, NO_LIB_OPTIONS, NO_VALUES, 0))
                .eq("library", handle(l))
        }),
        case!("image.link_add_file_ptx", Ctx, |e| {
            let Some(file) = TempFile::new("link.ptx", &scale_ptx()) else {
                return Out::setup_failed("write a temporary file", CUresult::CUDA_ERROR_UNKNOWN);
            };
            let mut link = std::ptr::null_mut();
            step!(e.p.cuLinkCreate(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut link));
            let st = e.p.cuLinkAddFile(
                link,
                CUjitInputType::CU_JIT_INPUT_PTX,
                file.c_path().as_ptr(),
                0,
                NO_OPTIONS,
                NO_VALUES,
            );
            let _ = e.p.cuLinkDestroy(link);
            Out::of(st)
        }),
        case!("image.link_add_missing_file", Ctx, |e| {
            let mut link = std::ptr::null_mut();
            step!(e.p.cuLinkCreate(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut link));
            let path = c"/nonexistent/cudrv-conformance.ptx".as_ptr();
            let st = e.p.cuLinkAddFile(link, CUjitInputType::CU_JIT_INPUT_PTX, path, 0, NO_OPTIONS, NO_VALUES);
            let _ = e.p.cuLinkDestroy(link);
            Out::of(st)
        }),
        case!("image.func_get_name_null_function", Ctx, |e| {
            let mut name: *const std::os::raw::c_char = sentinel::<std::os::raw::c_char>();
            let st = e.p.cuFuncGetName(&mut name, std::ptr::null_mut());
            Out::of(st).eq("name", handle(name.cast_mut()))
        }),
        case!("image.kernel_get_name_null_kernel", Ctx, |e| {
            let mut name: *const std::os::raw::c_char = sentinel::<std::os::raw::c_char>();
            let st = e.p.cuKernelGetName(&mut name, std::ptr::null_mut());
            Out::of(st).eq("name", handle(name.cast_mut()))
        }),
        case!("image.func_get_name_null_out", Ctx, |e| {
            let mut m = std::ptr::null_mut();
            step!(e.p.cuModuleLoadData(&mut m, SCALE_PTX.as_ptr().cast()));
            let mut f = std::ptr::null_mut();
            step!(e.p.cuModuleGetFunction(&mut f, m, c"scale_f32".as_ptr()));
            Out::of(e.p.cuFuncGetName(std::ptr::null_mut(), f))
        }),
        case!("image.export_table_unknown", Init, |e| {
            let id = CUuuid { bytes: [0x5a; 16] };
            let mut table: *const c_void = 0x1234 as *const c_void;
            let st = e.p.cuGetExportTable(&mut table, &id);
            Out::of(st).eq(
                "table",
                if table.is_null() {
                    "null"
                } else if table as usize == 0x1234 {
                    "untouched"
                } else {
                    "set"
                },
            )
        }),
    ]
}
