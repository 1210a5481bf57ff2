//! Registration of host memory (issue 18, item 5). Recorded on the H200
//! (`expected/h200-driver-13000.txt`).

use super::{case, number, step, Case, Out, UNTOUCHED};
use cudrv::sys::*;

/// A page-aligned host buffer of `pages` pages, leaked (the case's process ends soon).
fn pages(pages: usize) -> *mut std::ffi::c_void {
    let v: &'static mut [u8] = Box::leak(vec![0u8; (pages + 1) * 4096].into_boxed_slice());
    let p = v.as_mut_ptr();
    // SAFETY: rounding up within the buffer, which has one page to spare.
    unsafe { p.add(p.align_offset(4096)) }.cast()
}

pub fn cases() -> Vec<Case> {
    vec![
        case!("host_register.register_unregister", Ctx, |e| {
            let p = pages(1);
            step!(e.p.cuMemHostRegister(p, 4096, 0));
            Out::of(e.p.cuMemHostUnregister(p))
        }),
        case!("host_register.twice", Ctx, |e| {
            let p = pages(1);
            step!(e.p.cuMemHostRegister(p, 4096, 0));
            Out::of(e.p.cuMemHostRegister(p, 4096, 0))
        }),
        case!("host_register.size_zero", Ctx, |e| { Out::of(e.p.cuMemHostRegister(pages(1), 0, 0)) }),
        case!("host_register.null", Ctx, |e| { Out::of(e.p.cuMemHostRegister(std::ptr::null_mut(), 4096, 0)) }),
        case!("host_register.unknown_flag", Ctx, |e| { Out::of(e.p.cuMemHostRegister(pages(1), 4096, 1 << 20)) }),
        case!("host_register.unregister_unknown", Ctx, |e| { Out::of(e.p.cuMemHostUnregister(pages(1))) }),
        case!("host_register.unregister_inside", Ctx, |e| {
            let p = pages(2);
            step!(e.p.cuMemHostRegister(p, 8192, 0));
            Out::of(e.p.cuMemHostUnregister(p.cast::<u8>().add(4096).cast()))
        }),
        case!("host_register.device_pointer_devicemap", Ctx, |e| {
            let p = pages(1);
            step!(e.p.cuMemHostRegister(p, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
            let mut d = UNTOUCHED;
            let st = e.p.cuMemHostGetDevicePointer(&mut d, p, 0);
            Out::of(st).eq("same_as_host", d == p as u64).info("dptr", number(d))
        }),
        case!("host_register.no_context", Init, |e| { Out::of(e.p.cuMemHostRegister(pages(1), 4096, 0)) }),
    ]
}
