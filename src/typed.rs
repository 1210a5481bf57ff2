//! Typed calls, cudrv's own: for every entry point whose arguments are opaque handles,
//! plain values and single in- or out-values (as cuda.h documents them), a safe method
//! that takes each handle as a [`Live`], each in-value by reference, and returns the
//! out-values: `driver.typed().cuStreamGetFlags(stream.live())? -> c_uint`. The safe
//! layer calls these, so its own `unsafe` blocks are the calls with a real precondition
//! (device or host pointers, arrays, callbacks). The generator decides which entry points
//! qualify from cuda.h alone (`gen/src/typed.rs`).

#![allow(non_snake_case, dead_code, clippy::all, clippy::undocumented_unsafe_blocks)]

use std::marker::PhantomData;

use crate::driver::Driver;

/// A raw handle that is live for `'a`: issued by the driver and not destroyed until `'a`
/// ends, so the driver may use it (a handle it issued and since destroyed is memory it
/// may have freed). The safe layer's handle core hands these out for the handles it owns
/// or borrows.
/// `repr(transparent)`: a slice of them is an array of raw handles.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct Live<'a, H> {
    raw: H,
    life: PhantomData<&'a ()>,
}

impl<'a, H: Copy> Live<'a, H> {
    /// # Safety
    /// `raw` is a handle the driver issued and will not have destroyed before `'a` ends,
    /// or a value every function it is passed to documents as accepted in its place (the
    /// null context or stream, `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD`).
    #[inline(always)]
    pub(crate) unsafe fn new(raw: H) -> Live<'a, H> {
        Live { raw, life: PhantomData }
    }

    /// The raw handle.
    #[inline(always)]
    pub(crate) fn raw(self) -> H {
        self.raw
    }

    /// The same object as another handle type, live as long.
    ///
    /// # Safety
    /// `to(raw)` is a handle the driver takes for the same object (a `CUkernel` where a
    /// `CUfunction` is taken: the driver documents the cast).
    #[inline(always)]
    pub(crate) unsafe fn cast<U>(self, to: impl FnOnce(H) -> U) -> Live<'a, U> {
        Live { raw: to(self.raw), life: PhantomData }
    }
}

/// The typed calls of one [`Driver`]; see the [module documentation](self).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Typed(pub(crate) &'static Driver);

impl Driver {
    /// The typed calls of this driver.
    #[inline(always)]
    pub(crate) fn typed(&'static self) -> Typed {
        Typed(self)
    }
}

/// A query's answer (`cuStreamQuery`, `cuEventQuery`): success is `true`, NOT_READY is
/// `false`, anything else the error.
#[inline(always)]
pub(crate) fn ready(answer: Result<(), CudaError>) -> Result<bool, CudaError> {
    success_unless(answer, CUresult::CUDA_ERROR_NOT_READY)
}

/// Success is `true`, the error `code` is `false` (an answer that is not a failure: the
/// peer access was already enabled, the work is not done yet), any other error the error.
#[inline(always)]
pub(crate) fn success_unless(answer: Result<(), CudaError>, code: CUresult) -> Result<bool, CudaError> {
    match answer {
        Ok(()) => Ok(true),
        Err(e) if e.code() == code => Ok(false),
        Err(e) => Err(e),
    }
}

include!("generated/typed.rs");
