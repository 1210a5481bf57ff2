//! Error names and descriptions.

use std::os::raw::c_char;

use super::{case, sentinel, text, Case, Out};
use cudrv::sys::*;

pub fn cases() -> Vec<Case> {
    vec![
        case!("errors.name_invalid_value", Bare, |e| {
            let mut s: *const c_char = sentinel();
            let st = e.p.cuGetErrorName(CUresult::CUDA_ERROR_INVALID_VALUE, &mut s);
            Out::of(st).eq("name", text(s))
        }),
        case!("errors.name_success", Bare, |e| {
            let mut s: *const c_char = sentinel();
            Out::of(e.p.cuGetErrorName(CUresult::CUDA_SUCCESS, &mut s)).eq("name", text(s))
        }),
        case!("errors.name_unknown_code", Bare, |e| {
            let mut s: *const c_char = sentinel();
            Out::of(e.p.cuGetErrorName(CUresult(9999), &mut s)).eq("name", text(s))
        }),
        case!("errors.name_null_out", Bare, |e| {
            Out::of(e.p.cuGetErrorName(CUresult::CUDA_ERROR_INVALID_VALUE, std::ptr::null_mut()))
        }),
        case!("errors.string_invalid_value", Bare, |e| {
            let mut s: *const c_char = sentinel();
            let st = e.p.cuGetErrorString(CUresult::CUDA_ERROR_INVALID_VALUE, &mut s);
            Out::of(st).eq("text", text(s))
        }),
        case!("errors.string_out_of_memory", Bare, |e| {
            let mut s: *const c_char = sentinel();
            let st = e.p.cuGetErrorString(CUresult::CUDA_ERROR_OUT_OF_MEMORY, &mut s);
            Out::of(st).eq("text", text(s))
        }),
        case!("errors.string_unknown_code", Bare, |e| {
            let mut s: *const c_char = sentinel();
            Out::of(e.p.cuGetErrorString(CUresult(9999), &mut s)).eq("text", text(s))
        }),
        case!("errors.string_null_out", Bare, |e| {
            Out::of(e.p.cuGetErrorString(CUresult::CUDA_ERROR_INVALID_VALUE, std::ptr::null_mut()))
        }),
    ]
}
