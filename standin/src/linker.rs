//! The linker: `cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`, `cuLinkDestroy` over fake
//! images (`image.rs`). The linked image holds every kernel added; it is owned by the link
//! state and stays valid until `cuLinkDestroy`.

use std::ffi::{c_char, c_uint, c_void};

use cudrv::sys::*;

use crate::entry::{from_ptr, non_null, status, to_ptr, write};
use crate::model::image::Image;
use crate::model::link::Link;
use crate::run::lock::lock;
use crate::world::World;

/// `cuLinkCreate`: the options are ignored.
pub(crate) unsafe fn cu_link_create(
    w: &World,
    _num_options: c_uint,
    _options: *mut CUjit_option,
    _values: *mut *mut c_void,
    state: *mut CUlinkState,
) -> CUresult {
    let r = non_null(state).and_then(|()| {
        w.contexts.current()?;
        let h = lock(&w.links).insert(Link { image: Image::default(), outputs: Vec::new() });
        write(state, to_ptr(h))
    });
    status(r)
}

/// `cuLinkAddData`: any `CU_JIT_INPUT_*` type; the data must be a fake image
/// (CUDA_ERROR_INVALID_IMAGE otherwise).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cu_link_add_data(
    w: &World,
    state: CUlinkState,
    input_type: CUjitInputType,
    data: *mut c_void,
    size: usize,
    _name: *const c_char,
    _num_options: c_uint,
    _options: *mut CUjit_option,
    _values: *mut *mut c_void,
) -> CUresult {
    let r = non_null(data).and_then(|()| {
        if input_type.0 >= CUjitInputType::CU_JIT_NUM_INPUT_TYPES.0 || size == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the program passes `size` readable bytes at `data`.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        let image = Image::parse(bytes)?;
        lock(&w.links).get_mut(from_ptr(state))?.image.merge(image);
        Ok(())
    });
    status(r)
}

/// `cuLinkComplete`: a fake image of everything added, and its size (with its NUL).
pub(crate) unsafe fn cu_link_complete(
    w: &World,
    state: CUlinkState,
    out: *mut *mut c_void,
    size: *mut usize,
) -> CUresult {
    let r = non_null(out).and_then(|()| {
        non_null(size)?;
        let mut links = lock(&w.links);
        let link = links.get_mut(from_ptr(state))?;
        let bytes = link.image.to_bytes().into_boxed_slice();
        let (p, n) = (bytes.as_ptr(), bytes.len());
        link.outputs.push(bytes);
        write(out, p.cast_mut().cast())?;
        write(size, n)
    });
    status(r)
}

/// `cuLinkDestroy`: twice: CUDA_ERROR_INVALID_HANDLE and a double destroy in the ledger.
pub(crate) unsafe fn cu_link_destroy(w: &World, state: CUlinkState) -> CUresult {
    status(lock(&w.links).remove(from_ptr(state)).map(drop))
}
