//! A `.managed` module global (`__managed__`) is managed memory, as NVIDIA's `uvmlite`
//! sample uses it: `cuPointerGetAttribute(IS_MANAGED)` answers 1 for its address, the host
//! reads and writes it through that address, and kernels see the host's writes.

mod common;

use std::ffi::c_void;

use common::{driver, new_context, ok};
use cudrv::sys::{CUpointer_attribute, CUresult};

const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.global .attribute(.managed) .align 4 .u32 counter;
.global .align 4 .u32 plain;
.visible .entry bump()
{
    .reg .b32 %r<3>;
    ld.global.u32 %r1, [counter];
    add.s32 %r2, %r1, 1;
    st.global.u32 [counter], %r2;
    st.global.u32 [plain], %r2;
    ret;
}
\0";

#[test]
fn a_managed_global_is_managed_memory_the_host_reads_and_writes() {
    let d = driver();
    let _c = new_context(&d);
    let p = d.p();
    let mut m = std::ptr::null_mut();
    let mut f = std::ptr::null_mut();
    let (mut counter, mut plain, mut size) = (0u64, 0u64, 0usize);
    // SAFETY: valid out-pointers, NUL-terminated PTX and names.
    unsafe {
        ok(p.cuModuleLoadData(&mut m, PTX.as_ptr().cast()));
        ok(p.cuModuleGetFunction(&mut f, m, c"bump".as_ptr()));
        ok(p.cuModuleGetGlobal(&mut counter, &mut size, m, c"counter".as_ptr()));
        ok(p.cuModuleGetGlobal(&mut plain, std::ptr::null_mut(), m, c"plain".as_ptr()));
    }
    assert_eq!(size, 4);
    let is_managed = |address: u64| {
        let mut v = 7u32;
        // SAFETY: a 4-byte out-value for IS_MANAGED.
        let st = unsafe {
            p.cuPointerGetAttribute(
                (&mut v as *mut u32).cast::<c_void>(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
                address,
            )
        };
        assert_eq!(st, CUresult::CUDA_SUCCESS);
        v
    };
    assert_eq!(is_managed(counter), 1);
    assert_eq!(is_managed(plain), 0);
    let host = counter as *mut u32;
    // SAFETY: managed memory is host memory at its address (4 bytes, aligned); no kernel
    // runs while the host touches it.
    unsafe { host.write_volatile(41) };
    // SAFETY: the kernel takes no parameters.
    unsafe {
        ok(p.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()));
        ok(p.cuCtxSynchronize());
    }
    // SAFETY: as above; the kernel has finished.
    assert_eq!(unsafe { host.read_volatile() }, 42);
    // SAFETY: plain call.
    unsafe { ok(p.cuModuleUnload(m)) };
}
