//! Host-implemented kernels: PTX modules and libraries whose entries have host
//! implementations registered run them over the grid instead of their PTX; an entry with
//! none runs its PTX; memory accesses outside every allocation fail the launch and stick.

mod common;

use std::ffi::{c_uint, c_void, CStr, CString};

use common::{cdylib, driver, driver_alone, launch_kernel, new_context, ok};
use cudrv::sys::{CUcontext, CUdeviceptr, CUfunction, CUlaunchConfig, CUmodule, CUresult, CUstream};
use cudrv::Driver;
use cudrv_standin::{
    cudrv_standin_register_kernel, register_kernel, registered_kernels, unregister_kernel, CudrvStandinThread, Dim3,
    KernelError, Param,
};

const ILLEGAL: CUresult = CUresult::CUDA_ERROR_ILLEGAL_ADDRESS;
const INVALID_IMAGE: CUresult = CUresult::CUDA_ERROR_INVALID_IMAGE;

/// PTX text as nvcc writes it: comments, `.version`, `.target`, and one empty `.entry`
/// per `(name, parameter types)`.
fn ptx(entries: &[(&str, &[&str])]) -> CString {
    let mut s = String::from(
        "//\n// Generated for the stand-in's tests\n//\n\n.version 8.0\n.target sm_90\n.address_size 64\n",
    );
    for (name, params) in entries {
        s.push_str(&format!("\n\t// .globl\t{name}\n.visible .entry {name}(\n"));
        let decls: Vec<String> =
            params.iter().enumerate().map(|(i, t)| format!("\t.param {t} {name}_param_{i}")).collect();
        s.push_str(&decls.join(",\n"));
        s.push_str("\n)\n{\n\tret;\n}\n");
    }
    CString::new(s).unwrap()
}

/// Registers host implementations of `vector_add(const float* a, const float* b, float*
/// c, int n)`, `saxpy(float a, const float* x, float* y, int n)` and `scale_f32(float* x,
/// float s, int n)` (the stand-in registers none itself: their PTX would run).
fn builtins() {
    register_kernel("vector_add", &[Param::Ptr, Param::Ptr, Param::Ptr, Param::I32], |t| {
        let (a, b, c, n) = (t.ptr(0)?, t.ptr(1)?, t.ptr(2)?, t.param::<i32>(3)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store(c, i, t.load::<f32>(a, i)? + t.load::<f32>(b, i)?)?;
        }
        Ok(())
    });
    register_kernel("saxpy", &[Param::F32, Param::Ptr, Param::Ptr, Param::I32], |t| {
        let (a, x, y, n) = (t.param::<f32>(0)?, t.ptr(1)?, t.ptr(2)?, t.param::<i32>(3)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store(y, i, a * t.load::<f32>(x, i)? + t.load::<f32>(y, i)?)?;
        }
        Ok(())
    });
    register_kernel("scale_f32", &[Param::Ptr, Param::F32, Param::I32], |t| {
        let (x, s, n) = (t.ptr(0)?, t.param::<f32>(1)?, t.param::<i32>(2)?);
        let i = t.global_x();
        if i < u64::try_from(n).unwrap_or(0) {
            t.store(x, i, t.load::<f32>(x, i)? * s)?;
        }
        Ok(())
    });
}

const VECTOR_ADD: (&str, &[&str]) = ("vector_add", &[".u64", ".u64", ".u64", ".u32"]);
const SAXPY: (&str, &[&str]) = ("saxpy", &[".f32", ".u64", ".u64", ".u32"]);
const SCALE: (&str, &[&str]) = ("scale_f32", &[".u64", ".f32", ".u32"]);

fn load(d: &Driver, image: &CStr) -> Result<CUmodule, CUresult> {
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image.
    match unsafe { d.p().cuModuleLoadData(&mut m, image.as_ptr().cast()) } {
        CUresult::CUDA_SUCCESS => Ok(m),
        e => Err(e),
    }
}

fn load_ex(d: &Driver, image: &CStr) -> CUresult {
    let mut m = std::ptr::null_mut();
    // SAFETY: a NUL-terminated image; no options.
    let r = unsafe {
        d.p().cuModuleLoadDataEx(&mut m, image.as_ptr().cast(), 0, std::ptr::null_mut(), std::ptr::null_mut())
    };
    if r == CUresult::CUDA_SUCCESS {
        // SAFETY: the module just loaded.
        ok(unsafe { d.p().cuModuleUnload(m) });
    }
    r
}

fn load_library(d: &Driver, image: &CStr) -> Result<cudrv::sys::CUlibrary, CUresult> {
    let mut lib = std::ptr::null_mut();
    use std::ptr::null_mut as null;
    // SAFETY: a NUL-terminated image; no options.
    match unsafe { d.p().cuLibraryLoadData(&mut lib, image.as_ptr().cast(), null(), null(), 0, null(), null(), 0) } {
        CUresult::CUDA_SUCCESS => Ok(lib),
        e => Err(e),
    }
}

fn function(d: &Driver, m: CUmodule, name: &str) -> Result<CUfunction, CUresult> {
    let name = CString::new(name).unwrap();
    let mut f = std::ptr::null_mut();
    // SAFETY: valid out-pointer and name.
    match unsafe { d.p().cuModuleGetFunction(&mut f, m, name.as_ptr()) } {
        CUresult::CUDA_SUCCESS => Ok(f),
        e => Err(e),
    }
}

/// Launches `f` with a pointer to each of `args` as its parameters.
fn launch(
    d: &Driver,
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    s: CUstream,
    args: &[*const c_void],
) -> CUresult {
    let mut params: Vec<*mut c_void> = args.iter().map(|a| a.cast_mut()).collect();
    launch_kernel(d, f, grid, block, 0, s, &mut params)
}

fn arg<T>(v: &T) -> *const c_void {
    (v as *const T).cast()
}

fn alloc_with(d: &Driver, data: &[f32]) -> CUdeviceptr {
    let mut p = 0;
    let bytes = std::mem::size_of_val(data);
    // SAFETY: valid out-pointer; `data` has `bytes` bytes.
    unsafe {
        ok(d.p().cuMemAlloc(&mut p, bytes));
        ok(d.p().cuMemcpyHtoD(p, data.as_ptr().cast(), bytes));
    }
    p
}

fn read_back<T: Copy + Default>(d: &Driver, p: CUdeviceptr, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    // SAFETY: `out` has room for n values.
    ok(unsafe { d.p().cuMemcpyDtoH(out.as_mut_ptr().cast(), p, n * std::mem::size_of::<T>()) });
    out
}

fn free(d: &Driver, ptrs: &[CUdeviceptr]) {
    for &p in ptrs {
        // SAFETY: allocations of the test.
        ok(unsafe { d.p().cuMemFree(p) });
    }
}

#[test]
fn registered_host_kernels_run_over_the_grid() {
    builtins();
    let d = driver();
    let ctx = new_context(&d);
    let m = load(&d, &ptx(&[VECTOR_ADD, SAXPY, SCALE])).unwrap();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let (pa, pb, pc) = (alloc_with(&d, &a), alloc_with(&d, &b), alloc_with(&d, &vec![-1.0; n]));
    let count = n as i32;

    // 4 blocks of 256 threads: the last 24 threads are past n and write nothing.
    let add = function(&d, m, "vector_add").unwrap();
    ok(launch(&d, add, [4, 1, 1], [256, 1, 1], std::ptr::null_mut(), &[arg(&pa), arg(&pb), arg(&pc), arg(&count)]));
    let c: Vec<f32> = read_back(&d, pc, n);
    assert!(c.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32), "{:?}", &c[..8]);

    // saxpy: y = 0.5 x + y, on a stream, over part of the array only.
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuStreamCreate(&mut s, 0) });
    let (alpha, half) = (0.5f32, 500i32);
    let saxpy = function(&d, m, "saxpy").unwrap();
    ok(launch(&d, saxpy, [8, 1, 1], [128, 1, 1], s, &[arg(&alpha), arg(&pa), arg(&pc), arg(&half)]));
    // SAFETY: the stream just made.
    ok(unsafe { d.p().cuStreamSynchronize(s) });
    let y: Vec<f32> = read_back(&d, pc, n);
    assert!(y.iter().enumerate().all(|(i, &v)| v == if i < 500 { 3.5 * i as f32 } else { 3.0 * i as f32 }));

    // scale_f32 with its parameters in an `extra` buffer (8-byte pointer, then float,
    // then int: 16 bytes).
    let scale = function(&d, m, "scale_f32").unwrap();
    let mut buffer = [0u8; 16];
    buffer[..8].copy_from_slice(&pa.to_ne_bytes());
    buffer[8..12].copy_from_slice(&(-2.0f32).to_ne_bytes());
    buffer[12..].copy_from_slice(&(n as i32).to_ne_bytes());
    let mut size = buffer.len();
    let mut extra = [
        std::ptr::without_provenance_mut(1), // CU_LAUNCH_PARAM_BUFFER_POINTER
        buffer.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(2), // CU_LAUNCH_PARAM_BUFFER_SIZE
        (&mut size as *mut usize).cast(),
        std::ptr::null_mut(), // CU_LAUNCH_PARAM_END
    ];
    // SAFETY: an `extra` list with a buffer holding every parameter.
    ok(unsafe { d.p().cuLaunchKernel(scale, 1, 1, 1, 1000, 1, 1, 0, s, std::ptr::null_mut(), extra.as_mut_ptr()) });
    let x: Vec<f32> = read_back(&d, pa, n);
    assert!(x.iter().enumerate().all(|(i, &v)| v == -2.0 * i as f32));
    // A buffer too small for the parameters is refused, as are both forms at once or
    // neither; nothing runs.
    // SAFETY: as above, with a size less than the layout needs (written through the
    // pointer the list holds).
    let small = unsafe {
        *extra[3].cast::<usize>() = 12;
        d.p().cuLaunchKernel(scale, 1, 1, 1, 1000, 1, 1, 0, s, std::ptr::null_mut(), extra.as_mut_ptr())
    };
    assert_eq!(small, CUresult::CUDA_ERROR_INVALID_VALUE);
    let mut params = [arg(&pa).cast_mut(), arg(&alpha).cast_mut(), arg(&count).cast_mut()];
    // SAFETY: valid lists; the launch refuses them together.
    let both = unsafe { d.p().cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, s, params.as_mut_ptr(), extra.as_mut_ptr()) };
    assert_eq!(both, CUresult::CUDA_ERROR_INVALID_VALUE);
    // SAFETY: no parameters at all for a kernel that has some: refused before any read.
    let neither =
        unsafe { d.p().cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, s, std::ptr::null_mut(), std::ptr::null_mut()) };
    assert_eq!(neither, CUresult::CUDA_ERROR_INVALID_VALUE);
    // Launch limits (driver-facts.md).
    let args = [arg(&pa), arg(&alpha), arg(&count)];
    assert_eq!(launch(&d, scale, [1, 1, 1], [1025, 1, 1], s, &args), CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(launch(&d, scale, [1, 1, 1], [1, 1, 65], s, &args), CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(launch(&d, scale, [1, 65536, 1], [1, 1, 1], s, &args), CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(read_back::<f32>(&d, pa, n), x, "no refused launch ran");

    free(&d, &[pa, pb, pc]);
    // SAFETY: handles of the test.
    unsafe {
        ok(d.p().cuStreamDestroy(s));
        ok(d.p().cuModuleUnload(m));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

#[test]
fn a_registered_kernel_sees_its_grid_block_and_indices() {
    builtins();
    let name = "standin_test_index_3d";
    register_kernel(name, &[Param::Ptr, Param::U32], |t| {
        let (out, tag) = (t.ptr(0)?, t.param::<u32>(1)?);
        let (g, b, bi, ti) = (t.grid_dim(), t.block_dim(), t.block_idx(), t.thread_idx());
        if g != (Dim3 { x: 3, y: 2, z: 2 }) || b != (Dim3 { x: 4, y: 2, z: 1 }) || t.param_count() != 2 {
            return Err(KernelError::Failed);
        }
        let x = u64::from(bi.x * b.x + ti.x);
        let y = u64::from(bi.y * b.y + ti.y);
        let z = u64::from(bi.z);
        let index = (z * 4 + y) * 12 + x;
        t.store::<u32>(out, index, tag + (x * 10000 + y * 100 + z) as u32)
    });
    assert!(registered_kernels().iter().any(|k| k == name));
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let m = load(&d, &ptx(&[(name, &[".u64", ".u32"])])).unwrap();
    let f = function(&d, m, name).unwrap();
    let cells = 12 * 4 * 2;
    let mut out = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut out, cells * 4) });
    let tag = 7u32;
    ok(launch(&d, f, [3, 2, 2], [4, 2, 1], std::ptr::null_mut(), &[arg(&out), arg(&tag)]));
    let got: Vec<u32> = read_back(&d, out, cells);
    let want: Vec<u32> = (0..cells as u32).map(|i| 7 + (i % 12) * 10000 + (i / 12 % 4) * 100 + i / 48).collect();
    assert_eq!(got, want);

    // cuLaunchKernelEx takes its shape and stream from the configuration.
    let config = CUlaunchConfig {
        gridDimX: 3,
        gridDimY: 2,
        gridDimZ: 2,
        blockDimX: 4,
        blockDimY: 2,
        blockDimZ: 1,
        ..Default::default()
    };
    let tag2 = 1_000_000u32;
    let mut params = [arg(&out).cast_mut(), arg(&tag2).cast_mut()];
    // SAFETY: a valid configuration and parameter list.
    ok(unsafe { d.p().cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) });
    let got: Vec<u32> = read_back(&d, out, cells);
    assert!(got.iter().zip(&want).all(|(g, w)| *g == w + 999_993));
    // A shape the kernel does not expect: the kernel fails, as a GPU kernel faults: the
    // launch succeeds, the context sticks, and the next synchronisation reports it.
    ok(launch(&d, f, [1, 1, 1], [4, 2, 1], std::ptr::null_mut(), &[arg(&out), arg(&tag)]));
    // SAFETY: plain calls; handles of the test.
    unsafe {
        assert_eq!(d.p().cuCtxSynchronize(), CUresult::CUDA_ERROR_LAUNCH_FAILED);
        ok(d.p().cuCtxDestroy(ctx));
    }
    assert!(unregister_kernel(name));
    assert!(!unregister_kernel(name));
}

#[test]
fn an_entry_without_implementation_runs_its_ptx_and_mismatches_are_refused() {
    builtins();
    let d = driver();
    let ctx = new_context(&d);
    // An entry nobody registered runs its PTX (here an empty kernel).
    let unknown = ptx(&[VECTOR_ADD, ("standin_test_nobody_registered_this", &[".u64"])]);
    assert!(load(&d, &unknown).is_ok());
    ok(load_ex(&d, &unknown));
    let lib = load_library(&d, &unknown).unwrap();
    let mut k = std::ptr::null_mut();
    // SAFETY: valid out-pointer and name; the library just loaded.
    unsafe {
        ok(d.p().cuLibraryGetKernel(&mut k, lib, c"standin_test_nobody_registered_this".as_ptr()));
        ok(d.p().cuLibraryUnload(lib));
    }
    // Parameters that do not match the registered layout: refused too.
    let mismatch = ptx(&[("scale_f32", &[".u64", ".f64", ".u32"])]);
    assert_eq!(load(&d, &mismatch), Err(INVALID_IMAGE));
    let short = ptx(&[("vector_add", &[".u64", ".u64", ".u64"])]);
    assert_eq!(load(&d, &short), Err(INVALID_IMAGE));
    // Not PTX: no `.target`, or `.version` not first; or binary.
    // A cubin: machine code, which the stand-in cannot run (fatbins.rs).
    let cubin = b"\x7fELF\x02\x01\x01\0";
    assert_eq!(load(&d, CStr::from_bytes_until_nul(cubin).unwrap()), Err(CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU));
    for bad in [&b".version 8.0\n\0"[..], b"ret;\n.version 8.0\n.target sm_90\n\0"] {
        assert_eq!(load(&d, CStr::from_bytes_until_nul(bad).unwrap()), Err(INVALID_IMAGE));
    }
    // PTX without entries has nothing to implement.
    let empty = ptx(&[]);
    let m = load(&d, &empty).unwrap();
    assert_eq!(function(&d, m, "vector_add"), Err(CUresult::CUDA_ERROR_NOT_FOUND));
    ok(load_ex(&d, &ptx(&[VECTOR_ADD])));

    // A module binds the implementations it was loaded with.
    let name = "standin_test_bound_at_load";
    register_kernel(name, &[Param::Ptr], |t| t.store::<u8>(t.ptr(0)?, 0, 42));
    let image = ptx(&[(name, &[".u64"])]);
    let bound = load(&d, &image).unwrap();
    assert!(unregister_kernel(name));
    // Loaded now, the module runs its PTX (an empty kernel).
    let unbound = load(&d, &image).unwrap();
    let mut p = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut p, 1) });
    // SAFETY: 1 byte of the allocation.
    ok(unsafe { d.p().cuMemsetD8(p, 0, 1) });
    ok(launch(&d, function(&d, unbound, name).unwrap(), [1, 1, 1], [1, 1, 1], std::ptr::null_mut(), &[arg(&p)]));
    // SAFETY: the context's work.
    ok(unsafe { d.p().cuCtxSynchronize() });
    assert_eq!(read_back::<u8>(&d, p, 1), [0]);
    ok(launch(&d, function(&d, bound, name).unwrap(), [1, 1, 1], [1, 1, 1], std::ptr::null_mut(), &[arg(&p)]));
    assert_eq!(read_back::<u8>(&d, p, 1), [42]);
    free(&d, &[p]);
    // SAFETY: handles of the test.
    unsafe {
        ok(d.p().cuModuleUnload(m));
        ok(d.p().cuModuleUnload(bound));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

/// PTX whose kernel `name(u64 out, u32 n)` has an instruction the PTX executor does not
/// run (an `mma`), with the globals `counter` (`.u32 = 7`) and `table` (`.f32[4]`).
fn tensor_ptx(name: &str, body: &str) -> CString {
    CString::new(format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .global .align 4 .u32 counter = 7;\n\
         .global .align 4 .f32 table[4];\n.visible .entry {name}(.param .u64 out, .param .u32 n)\n{{\n\
         .reg .b32 %r<8>;\n{body}\nret;\n}}\n"
    ))
    .unwrap()
}

const MMA: &str =
    "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r1,%r2,%r3,%r4}, {%r1,%r2}, {%r1}, {%r1,%r2,%r3,%r4};";

#[test]
fn ptx_the_executor_cannot_load_runs_where_every_kernel_has_a_host_implementation() {
    let name = "standin_test_tensor_kernel";
    register_kernel(name, &[Param::Ptr, Param::U32], |t| t.store::<u32>(t.ptr(0)?, t.global_x(), t.param::<u32>(1)?));
    let d = driver();
    let ctx = new_context(&d);
    // Its kernels, parameter layout and globals come from cudrv-ptx's declarations (the
    // executor does not load the body).
    let m = load(&d, &tensor_ptx(name, MMA)).unwrap();
    let f = function(&d, m, name).unwrap();
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: valid out-pointers; the function just looked up.
    ok(unsafe { d.p().cuFuncGetParamInfo(f, 1, &mut offset, &mut size) });
    assert_eq!((offset, size), (8, 4));
    let (mut counter, mut bytes) = (0, 0usize);
    // SAFETY: valid out-pointers and names; the module just loaded.
    unsafe {
        ok(d.p().cuModuleGetGlobal(&mut counter, &mut bytes, m, c"counter".as_ptr()));
        assert_eq!(bytes, 4);
        let mut table = 0;
        ok(d.p().cuModuleGetGlobal(&mut table, &mut bytes, m, c"table".as_ptr()));
        assert_eq!(bytes, 16);
    }
    assert_eq!(read_back::<u32>(&d, counter, 1), [7]);
    let mut out = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut out, 4 * 32) });
    let n = 9u32;
    ok(launch(&d, f, [1, 1, 1], [32, 1, 1], std::ptr::null_mut(), &[arg(&out), arg(&n)]));
    // SAFETY: plain call.
    ok(unsafe { d.p().cuCtxSynchronize() });
    assert_eq!(read_back::<u32>(&d, out, 32), [9; 32]);
    // A kernel without a host implementation beside it: the executor's refusal.
    let both = tensor_ptx(name, MMA).into_string().unwrap()
        + ".visible .entry standin_test_no_host(.param .u64 p)\n{\nret;\n}\n";
    assert_eq!(load(&d, &CString::new(both).unwrap()), Err(CUresult::CUDA_ERROR_INVALID_PTX));
    // Parameters the host implementation does not take: refused as ever.
    let other =
        CString::new(tensor_ptx(name, MMA).into_string().unwrap().replace(".param .u32 n", ".param .u64 n")).unwrap();
    assert_eq!(load(&d, &other), Err(INVALID_IMAGE));
    // PTX the parser refuses declares no kernel: refused, host implementations or not.
    assert_eq!(load(&d, &tensor_ptx(name, "mov.u32 %r1, {{;")), Err(CUresult::CUDA_ERROR_INVALID_PTX));
    assert!(unregister_kernel(name));
    // Unregistered: the executor's refusal.
    assert_eq!(load(&d, &tensor_ptx(name, MMA)), Err(CUresult::CUDA_ERROR_INVALID_PTX));
    // SAFETY: the context made above.
    ok(unsafe { d.p().cuCtxDestroy(ctx) });
}

#[test]
fn a_library_from_ptx_launches_its_kernels() {
    builtins();
    let d = driver();
    let lib = load_library(&d, &ptx(&[SAXPY])).unwrap();
    let mut k = std::ptr::null_mut();
    // SAFETY: valid out-pointer and name.
    ok(unsafe { d.p().cuLibraryGetKernel(&mut k, lib, c"saxpy".as_ptr()) });
    let ctx = new_context(&d);
    let (px, py) = (alloc_with(&d, &[1.0, 2.0, 3.0]), alloc_with(&d, &[10.0, 20.0, 30.0]));
    let (alpha, n) = (2.0f32, 3i32);
    let args = [arg(&alpha), arg(&px), arg(&py), arg(&n)];
    // A kernel launches as a function, and through its function.
    ok(launch(&d, k as CUfunction, [1, 1, 1], [32, 1, 1], std::ptr::null_mut(), &args));
    let mut f = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the kernel just got.
    ok(unsafe { d.p().cuKernelGetFunction(&mut f, k) });
    ok(launch(&d, f, [1, 1, 1], [32, 1, 1], std::ptr::null_mut(), &args));
    assert_eq!(read_back::<f32>(&d, py, 3), [14.0, 28.0, 42.0]);
    free(&d, &[px, py]);
    // SAFETY: handles of the test.
    unsafe {
        ok(d.p().cuLibraryUnload(lib));
        ok(d.p().cuCtxDestroy(ctx));
    }
}

/// A C kernel: `out[i] = i * user` (u32) for `i < n`, through the record's accessors.
unsafe extern "C" fn c_iota(t: *const CudrvStandinThread, user: *mut c_void) -> CUresult {
    // SAFETY: the stand-in passes a valid record, with two parameters of 8 and 4 bytes.
    unsafe {
        let t = &*t;
        let out = *(*t.params).cast::<u64>();
        let n = *(*t.params.add(1)).cast::<u32>();
        let i = t.block_idx[0] * t.block_dim[0] + t.thread_idx[0];
        if i >= n {
            return CUresult::CUDA_SUCCESS;
        }
        let v = i * (user as usize as u32);
        (t.write)(t, out + u64::from(i) * 4, (&v as *const u32).cast(), 4)
    }
}

#[test]
fn a_kernel_registered_through_the_c_function_runs() {
    builtins();
    let name = c"standin_test_c_iota";
    let sizes = [8usize, 4];
    // SAFETY: a NUL-terminated name, two sizes, a kernel that uses its user data as a
    // number.
    unsafe {
        ok(cudrv_standin_register_kernel(
            name.as_ptr(),
            sizes.as_ptr(),
            2,
            Some(c_iota),
            std::ptr::without_provenance_mut(3),
        ));
        let zero = [8usize, 0];
        assert_eq!(
            cudrv_standin_register_kernel(c"x".as_ptr(), zero.as_ptr(), 2, Some(c_iota), std::ptr::null_mut()),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cudrv_standin_register_kernel(std::ptr::null(), sizes.as_ptr(), 2, Some(c_iota), std::ptr::null_mut()),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
    }
    let (_world, d) = driver_alone();
    let ctx = new_context(&d);
    let m = load(&d, &ptx(&[("standin_test_c_iota", &[".u64", ".u32"])])).unwrap();
    let f = function(&d, m, "standin_test_c_iota").unwrap();
    let mut out = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut out, 40) });
    let n = 10u32;
    ok(launch(&d, f, [2, 1, 1], [8, 1, 1], std::ptr::null_mut(), &[arg(&out), arg(&n)]));
    assert_eq!(read_back::<u32>(&d, out, 10), (0..10).map(|i| i * 3).collect::<Vec<_>>());
    // Past the allocation: the accessor refuses, and the kernel faults (reported at the
    // next synchronisation, the launch succeeds).
    let n = 11u32;
    ok(launch(&d, f, [2, 1, 1], [8, 1, 1], std::ptr::null_mut(), &[arg(&out), arg(&n)]));
    // SAFETY: a NUL-terminated name; removing it; handles of the test.
    unsafe {
        assert_eq!(d.p().cuCtxSynchronize(), ILLEGAL);
        ok(cudrv_standin_register_kernel(name.as_ptr(), std::ptr::null(), 0, None, std::ptr::null_mut()));
        assert_eq!(
            cudrv_standin_register_kernel(name.as_ptr(), std::ptr::null(), 0, None, std::ptr::null_mut()),
            CUresult::CUDA_ERROR_NOT_FOUND
        );
        ok(d.p().cuCtxDestroy(ctx));
    }
}

/// Loads and launches `vector_add` over `n` elements of buffers of `len` floats in a new
/// context; returns the launch's status and the context.
fn vector_add_over(d: &Driver, len: usize, n: i32) -> (CUresult, CUcontext, [CUdeviceptr; 3]) {
    let ctx = new_context(d);
    let m = load(d, &ptx(&[VECTOR_ADD])).unwrap();
    let f = function(d, m, "vector_add").unwrap();
    let p = [alloc_with(d, &vec![1.0; len]), alloc_with(d, &vec![2.0; len]), alloc_with(d, &vec![0.0; len])];
    let r = launch(
        d,
        f,
        [(n as u32).div_ceil(64), 1, 1],
        [64, 1, 1],
        std::ptr::null_mut(),
        &[arg(&p[0]), arg(&p[1]), arg(&p[2]), arg(&n)],
    );
    (r, ctx, p)
}

#[test]
fn an_access_past_an_allocation_faults_at_the_next_synchronisation_and_sticks() {
    builtins();
    let (_world, d) = driver_alone();
    let p = d.p();
    let (r, ctx, _ptrs) = vector_add_over(&d, 256, 300);
    // As on a GPU: the launch succeeds, the fault shows at the next synchronisation.
    ok(r);
    // SAFETY: valid out-pointers; handles of the test.
    unsafe {
        // Sticky, as after a faulting kernel on a GPU.
        assert_eq!(p.cuCtxSynchronize(), ILLEGAL);
        assert_eq!(p.cuCtxSynchronize(), ILLEGAL);
        let mut more = 0;
        assert_eq!(p.cuMemAlloc(&mut more, 4), ILLEGAL);
        ok(p.cuCtxDestroy(ctx));
    }

    // A kernel that ignores the refusal fails all the same (in a world of its own: the
    // first fault fails the whole world, as on the H200).
    let (_world, d) = driver_alone();
    let p = d.p();
    let fresh = new_context(&d);
    let name = "standin_test_ignores_errors";
    register_kernel(name, &[Param::Ptr], |t| {
        let _ = t.store::<u32>(t.ptr(0)?, 1 << 40, 1);
        Ok(())
    });
    let m = load(&d, &ptx(&[(name, &[".u64"])])).unwrap();
    let f = function(&d, m, name).unwrap();
    let mut ok_ptr = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { p.cuMemAlloc(&mut ok_ptr, 4) });
    ok(launch(&d, f, [1, 1, 1], [1, 1, 1], std::ptr::null_mut(), &[arg(&ok_ptr)]));
    // SAFETY: handles of the test.
    unsafe {
        assert_eq!(p.cuStreamSynchronize(std::ptr::null_mut()), ILLEGAL);
        ok(p.cuCtxDestroy(fresh));
    }
    unregister_kernel(name);
}

#[test]
fn freed_memory_and_a_panic_fault_the_kernel_too() {
    builtins();
    let (world, d) = driver_alone();
    let p = d.p();
    let ctx = new_context(&d);
    let m = load(&d, &ptx(&[SCALE])).unwrap();
    let scale = function(&d, m, "scale_f32").unwrap();
    let x = alloc_with(&d, &[1.0; 4]);
    free(&d, &[x]);
    let (s, n) = (2.0f32, 4i32);
    ok(launch(&d, scale, [1, 1, 1], [4, 1, 1], std::ptr::null_mut(), &[arg(&x), arg(&s), arg(&n)]));
    assert!(world.ledger().use_after_free.contains(&x));
    // SAFETY: handles of the test.
    unsafe {
        assert_eq!(p.cuCtxSynchronize(), ILLEGAL);
        ok(p.cuCtxDestroy(ctx));
    }

    let name = "standin_test_panics";
    register_kernel(name, &[], |_| panic!("a kernel that panics"));
    let (_world, d) = driver_alone();
    let p = d.p();
    let ctx = new_context(&d);
    let m = load(&d, &ptx(&[(name, &[])])).unwrap();
    let f = function(&d, m, name).unwrap();
    ok(launch(&d, f, [1, 1, 1], [1, 1, 1], std::ptr::null_mut(), &[]));
    // SAFETY: handles of the test.
    unsafe {
        assert_eq!(p.cuCtxSynchronize(), CUresult::CUDA_ERROR_LAUNCH_FAILED);
        ok(p.cuCtxDestroy(ctx));
    }
    unregister_kernel(name);
}

#[test]
fn a_program_that_loads_the_cdylib_registers_through_dlsym() {
    builtins();
    let path = cdylib();
    let d = unsafe { Driver::load_from(&path) }.unwrap();
    // SAFETY: the stand-in's library, loaded above already; its exported function has
    // this signature.
    let register = unsafe {
        let lib = libloading::Library::new(&path).unwrap();
        let f = *lib
            .get::<unsafe extern "C" fn(
                *const std::ffi::c_char,
                *const usize,
                c_uint,
                Option<cudrv_standin::CudrvStandinKernel>,
                *mut c_void,
            ) -> CUresult>(b"cudrv_standin_register_kernel\0")
            .unwrap();
        std::mem::forget(lib);
        f
    };
    let sizes = [8usize, 4];
    // SAFETY: as in the in-process test.
    ok(unsafe {
        register(c"standin_test_dl_iota".as_ptr(), sizes.as_ptr(), 2, Some(c_iota), std::ptr::without_provenance_mut(5))
    });
    // SAFETY: plain call.
    ok(unsafe { d.p().cuInit(0) });
    let ctx = new_context(&d);
    let image = ptx(&[("standin_test_dl_iota", &[".u64", ".u32"])]);
    let m = load(&d, &image).unwrap();
    let f = function(&d, m, "standin_test_dl_iota").unwrap();
    let mut out = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { d.p().cuMemAlloc(&mut out, 16) });
    let n = 4u32;
    ok(launch(&d, f, [1, 1, 1], [4, 1, 1], std::ptr::null_mut(), &[arg(&out), arg(&n)]));
    assert_eq!(read_back::<u32>(&d, out, 4), [0, 5, 10, 15]);
    // The library's registry is its own: the in-process stand-in does not know the name,
    // and runs the PTX (an empty kernel: it writes nothing).
    let local = driver();
    let local_ctx = new_context(&local);
    let lm = load(&local, &image).unwrap();
    let lf = function(&local, lm, "standin_test_dl_iota").unwrap();
    let mut lout = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { local.p().cuMemAlloc(&mut lout, 16) });
    // SAFETY: the 16 bytes of the allocation.
    ok(unsafe { local.p().cuMemsetD32(lout, 0, 4) });
    ok(launch(&local, lf, [1, 1, 1], [4, 1, 1], std::ptr::null_mut(), &[arg(&lout), arg(&n)]));
    // SAFETY: the context's work.
    ok(unsafe { local.p().cuCtxSynchronize() });
    assert_eq!(read_back::<u32>(&local, lout, 4), [0, 0, 0, 0]);
    // SAFETY: handles of the test.
    unsafe {
        ok(local.p().cuCtxDestroy(local_ctx));
        ok(d.p().cuCtxDestroy(ctx));
    }
}
