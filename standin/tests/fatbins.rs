//! Fatbins as nvcc 13.0 builds them (`conformance/data/`, from `scripts/probes/fatbin/`):
//! the stand-in runs their PTX member, Zstandard-compressed (nvcc's default) or not, also
//! from files; an image of machine code only is
//! refused with CUDA_ERROR_NO_BINARY_FOR_GPU and an error log saying how to build one
//! that runs.

mod common;

use std::ffi::{c_void, CStr};

use common::{driver, new_context, ok};
use cudrv::sys::{CUfunction, CUjit_option, CUmodule, CUresult};
use cudrv::Driver;

static ZSTD: &[u8] = include_bytes!("../../conformance/data/scale-ptx-zstd.fatbin");
static PLAIN: &[u8] = include_bytes!("../../conformance/data/scale-ptx.fatbin");
static BOTH: &[u8] = include_bytes!("../../conformance/data/scale-sm90-and-ptx.fatbin");

/// `bytes` in 8-byte-aligned memory, as a compiler places a fatbin.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut v = vec![0u64; bytes.len().div_ceil(8) + 1];
    // SAFETY: `v` holds at least `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), bytes.len()) };
    v
}

/// Loads `image` with `cuModuleLoadDataEx`, answering the module or the status and the
/// error log.
fn load(d: &Driver, image: *const c_void) -> Result<CUmodule, (CUresult, String)> {
    let mut log = vec![0u8; 4096];
    let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let mut m = std::ptr::null_mut();
    // SAFETY: the image is a fatbin, a wrapper of one or NUL-terminated bytes; the options
    // name a live buffer of the given size.
    let st = unsafe { d.p().cuModuleLoadDataEx(&mut m, image, 2, options.as_mut_ptr(), values.as_mut_ptr()) };
    if st == CUresult::CUDA_SUCCESS {
        return Ok(m);
    }
    let text = CStr::from_bytes_until_nul(&log).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
    Err((st, text))
}

/// Runs `scale(x, y, n)` (y = 3x + 1) of `m` over 256 floats and returns y.
fn run_scale(d: &Driver, m: CUmodule) -> Vec<f32> {
    let p = d.p();
    let mut f: CUfunction = std::ptr::null_mut();
    // SAFETY: a live module, a NUL-terminated name, a valid out-pointer.
    ok(unsafe { p.cuModuleGetFunction(&mut f, m, c"scale".as_ptr()) });
    let n = 256usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (mut x, mut y) = (0, 0);
    // SAFETY: valid out-pointers, then copies within the allocations.
    unsafe {
        ok(p.cuMemAlloc(&mut x, n * 4));
        ok(p.cuMemAlloc(&mut y, n * 4));
        ok(p.cuMemcpyHtoD(x, input.as_ptr().cast(), n * 4));
    }
    let mut count = n as i32;
    let mut args = [(&raw mut x).cast::<c_void>(), (&raw mut y).cast(), (&raw mut count).cast()];
    let mut out = vec![0f32; n];
    // SAFETY: arguments matching scale's parameters; a copy into `out`.
    unsafe {
        ok(p.cuLaunchKernel(
            f,
            1,
            1,
            1,
            n as u32,
            1,
            1,
            0,
            std::ptr::null_mut(),
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        ));
        ok(p.cuCtxSynchronize());
        ok(p.cuMemcpyDtoH(out.as_mut_ptr().cast(), y, n * 4));
        ok(p.cuMemFree(x));
        ok(p.cuMemFree(y));
    }
    out
}

fn expected() -> Vec<f32> {
    (0..256).map(|i| 3.0 * i as f32 + 1.0).collect()
}

#[test]
fn nvcc_fatbins_run_their_ptx_compressed_or_not() {
    let d = driver();
    let _ctx = new_context(&d);
    for (what, bytes) in [("zstd", ZSTD), ("plain", PLAIN), ("sm_90 and PTX", BOTH)] {
        let image = aligned(bytes);
        let m = load(&d, image.as_ptr().cast()).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!(run_scale(&d, m), expected(), "{what}");
    }
    // The CUDA runtime's wrapper (magic, version, the fatbin's address) is not a driver
    // API image: the H200 refuses it (conformance image.fatbin_wrapper).
    let image = aligned(ZSTD);
    let wrapper: [u64; 3] = [0x0000_0001_4662_43B1, image.as_ptr() as u64, 0];
    let mut m = std::ptr::null_mut();
    // SAFETY: 24 readable bytes, the first of them not text.
    let st = unsafe { d.p().cuModuleLoadFatBinary(&mut m, wrapper.as_ptr().cast()) };
    assert_eq!((st, m), (CUresult::CUDA_ERROR_INVALID_IMAGE, std::ptr::null_mut()));
}

#[test]
fn machine_code_only_is_refused_with_a_log_that_says_how_to_build() {
    let d = driver();
    let _ctx = new_context(&d);
    // The sm_90 member alone: a fatbin of machine code only (header, then the ELF member
    // of 64 + 3840 bytes).
    let mut sass = BOTH.get(..16 + 64 + 3840).unwrap().to_vec();
    sass.splice(8..16, ((64u64 + 3840).to_le_bytes()).iter().copied());
    let image = aligned(&sass);
    let (st, log) = load(&d, image.as_ptr().cast()).unwrap_err();
    assert_eq!(st, CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert!(log.contains("sm_90") && log.contains("code=compute_90"), "{log}");
    // The ELF member itself: a cubin.
    let cubin = aligned(BOTH.get(16 + 64..16 + 64 + 3840).unwrap());
    let (st, log) = load(&d, cubin.as_ptr().cast()).unwrap_err();
    assert_eq!(st, CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert!(log.contains("cubin") && log.contains("PTX only"), "{log}");
    // A fatbin whose header says less than its member holds: the member is read past it,
    // as the H200 does (image.fatbin_truncated_member); one whose compressed PTX is
    // damaged is refused.
    let mut short = ZSTD.to_vec();
    short[8] = short[8].wrapping_sub(200);
    assert!(load(&d, aligned(&short).as_ptr().cast()).is_ok());
    let mut damaged = ZSTD.to_vec();
    for b in damaged.iter_mut().skip(96 + 40).take(8) {
        *b ^= 0x5a;
    }
    let (st, log) = load(&d, aligned(&damaged).as_ptr().cast()).unwrap_err();
    assert_eq!(st, CUresult::CUDA_ERROR_INVALID_IMAGE, "{log}");
}

#[test]
fn images_load_from_files() {
    let d = driver();
    let p = d.p();
    let _ctx = new_context(&d);
    let dir = tempfile::tempdir().unwrap();
    let fatbin = dir.path().join("scale.fatbin");
    std::fs::write(&fatbin, ZSTD).unwrap();
    let ptx = dir.path().join("scale.ptx");
    let text: Vec<u8> = PLAIN[96..].iter().copied().take_while(|&b| b != 0).collect();
    std::fs::write(&ptx, &text).unwrap();
    for path in [&fatbin, &ptx] {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        let mut m = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path and a valid out-pointer.
        ok(unsafe { p.cuModuleLoad(&mut m, c.as_ptr()) });
        assert_eq!(run_scale(&d, m), expected(), "{}", path.display());
        let mut lib = std::ptr::null_mut();
        let (no_jit, no_lib, no_values) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: as above; no options.
        ok(unsafe { p.cuLibraryLoadFromFile(&mut lib, c.as_ptr(), no_jit, no_values, 0, no_lib, no_values, 0) });
        let mut k = std::ptr::null_mut();
        // SAFETY: a live library, a NUL-terminated name.
        ok(unsafe { p.cuLibraryGetKernel(&mut k, lib, c"scale".as_ptr()) });
    }
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path.
    let st = unsafe { p.cuModuleLoad(&mut m, c"/nonexistent/x.ptx".as_ptr()) };
    assert_eq!((st, m), (CUresult::CUDA_ERROR_FILE_NOT_FOUND, std::ptr::null_mut()));
}
