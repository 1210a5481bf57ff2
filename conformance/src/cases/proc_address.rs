//! `cuGetProcAddress` asked directly (the `_v2` form, with the symbol status).

use std::ffi::CStr;
use std::os::raw::c_void;

use super::{case, handle, sentinel, Case, Out, UNTOUCHED};
use cudrv::sys::*;

/// Asks for `symbol` at `version` with `flags`; reports the pointer and the symbol status.
fn ask(e: &super::Env, symbol: &CStr, version: i32, flags: u64) -> Out {
    let mut f: *mut c_void = sentinel();
    let mut q = CUdriverProcAddressQueryResult(UNTOUCHED as u32);
    // SAFETY: a NUL-terminated name and valid out-pointers.
    let st = unsafe { e.p.cuGetProcAddress(symbol.as_ptr(), &mut f, version, flags, &mut q) };
    Out::of(st).eq("pfn", handle(f)).eq("symbol_status", super::number32(q.0))
}

const DEFAULT: u64 = CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_DEFAULT.0 as u64;
const PER_THREAD: u64 = CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.0 as u64;

pub fn cases() -> Vec<Case> {
    vec![
        case!("proc_address.mem_alloc_12000", Bare, |e| { ask(e, c"cuMemAlloc", 12000, DEFAULT) }),
        case!("proc_address.mem_alloc_3020", Bare, |e| { ask(e, c"cuMemAlloc", 3020, DEFAULT) }),
        case!("proc_address.mem_alloc_2000", Bare, |e| { ask(e, c"cuMemAlloc", 2000, DEFAULT) }),
        case!("proc_address.mem_alloc_1000", Bare, |e| { ask(e, c"cuMemAlloc", 1000, DEFAULT) }),
        case!("proc_address.unknown_symbol", Bare, |e| { ask(e, c"cuNoSuchFunction", 12000, DEFAULT) }),
        case!("proc_address.versioned_name", Bare, |e| { ask(e, c"cuMemAlloc_v2", 12000, DEFAULT) }),
        case!("proc_address.kernel_count_at_12030", Bare, |e| { ask(e, c"cuLibraryGetKernelCount", 12030, DEFAULT) }),
        case!("proc_address.negative_version", Bare, |e| { ask(e, c"cuMemAlloc", -2, DEFAULT) }),
        case!("proc_address.int_min_version", Bare, |e| { ask(e, c"cuMemAlloc", i32::MIN, DEFAULT) }),
        case!("proc_address.zero_version", Bare, |e| { ask(e, c"cuMemAlloc", 0, DEFAULT) }),
        case!("proc_address.per_thread_stream_query", Bare, |e| { ask(e, c"cuStreamQuery", 12000, PER_THREAD) }),
        case!("proc_address.unknown_flags", Bare, |e| { ask(e, c"cuMemAlloc", 12000, 1 << 40) }),
        case!("proc_address.itself", Bare, |e| { ask(e, c"cuGetProcAddress", 12000, DEFAULT) }),
        case!("proc_address.null_symbol", Bare, |e| {
            let mut f: *mut c_void = sentinel();
            let mut q = CUdriverProcAddressQueryResult(UNTOUCHED as u32);
            Out::of(e.p.cuGetProcAddress(std::ptr::null(), &mut f, 12000, DEFAULT, &mut q)).eq("pfn", handle(f))
        }),
        case!("proc_address.null_pfn", Bare, |e| {
            let mut q = CUdriverProcAddressQueryResult(UNTOUCHED as u32);
            Out::of(e.p.cuGetProcAddress(c"cuMemAlloc".as_ptr(), std::ptr::null_mut(), 12000, DEFAULT, &mut q))
        }),
        case!("proc_address.null_status", Bare, |e| {
            let mut f: *mut c_void = sentinel();
            let st = e.p.cuGetProcAddress(c"cuMemAlloc".as_ptr(), &mut f, 12000, DEFAULT, std::ptr::null_mut());
            Out::of(st).eq("pfn", handle(f))
        }),
    ]
}
