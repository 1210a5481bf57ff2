//! Device memory: synchronous (`cuMemAlloc`/`cuMemFree`) and stream-ordered
//! (`cuMemAllocAsync`/`cuMemFreeAsync`, which remember their deallocation stream).

use std::sync::Arc;

use crate::error::CudaError;
use crate::report::Arg;
use crate::resources::context::Context;
use crate::resources::pool::MemoryPool;
use crate::resources::stream::Stream;
use crate::scope::{cleanup_in_context, create_in_context, Undo};
use crate::sys::{CUdeviceptr, CUresult};
use crate::Driver;

/// A device allocation. Clones share it; the last one frees it (if owned): with
/// `cuMemFree` in its context, or, for a stream-ordered one, with `cuMemFreeAsync` on the
/// stream it remembers. It keeps its context, stream and pool alive.
#[derive(Clone)]
pub struct DeviceBuffer(Arc<BufferInner>);

struct BufferInner {
    context: Context,
    ptr: CUdeviceptr,
    len: usize,
    release: Release,
}

/// How a buffer is given back.
pub(crate) enum Release {
    Free,
    FreeAsync { stream: Stream, _pool: Option<MemoryPool> },
    Borrowed,
}

fn arg(ptr: &CUdeviceptr) -> Arg {
    Arg::Hex(*ptr)
}

impl DeviceBuffer {
    /// Allocates `len` bytes in `context` (`cuMemAlloc`). On error nothing is allocated.
    pub fn alloc(context: &Context, len: usize) -> Result<DeviceBuffer, CudaError> {
        let d = context.driver();
        let create = || {
            let mut ptr: CUdeviceptr = 0;
            // SAFETY: `ptr` is a valid out-pointer.
            CudaError::check(d, "cuMemAlloc", unsafe { d.p().cuMemAlloc(&mut ptr, len) })?;
            Ok(ptr)
        };
        // SAFETY: the allocation was just made and is used by nothing else.
        let undo = Undo { call: "cuMemFree", arg, run: |p: &CUdeviceptr| unsafe { d.p().cuMemFree(*p) } };
        let ptr = create_in_context(d, context.as_raw(), create, undo)?;
        Ok(DeviceBuffer::wrap(context, ptr, len, Release::Free))
    }

    /// Allocates `len` bytes ordered on `stream` (`cuMemAllocAsync`); it is freed on the
    /// same stream. On error nothing is allocated.
    pub fn alloc_async(stream: &Stream, len: usize) -> Result<DeviceBuffer, CudaError> {
        DeviceBuffer::alloc_ordered(stream, None, len)
    }

    /// `cuMemAllocAsync`, or `cuMemAllocFromPoolAsync` from `pool`.
    pub(crate) fn alloc_ordered(
        stream: &Stream,
        pool: Option<&MemoryPool>,
        len: usize,
    ) -> Result<DeviceBuffer, CudaError> {
        let context = stream.context();
        let (d, s) = (context.driver(), stream.as_raw());
        let create = || {
            let mut ptr: CUdeviceptr = 0;
            let (call, status) = match pool {
                // SAFETY: `ptr` is a valid out-pointer; stream and pool are live.
                Some(pool) => ("cuMemAllocFromPoolAsync", unsafe {
                    d.p().cuMemAllocFromPoolAsync(&mut ptr, len, pool.as_raw(), s)
                }),
                // SAFETY: as above.
                None => ("cuMemAllocAsync", unsafe { d.p().cuMemAllocAsync(&mut ptr, len, s) }),
            };
            CudaError::check(d, call, status)?;
            Ok(ptr)
        };
        // SAFETY: the allocation was just made on `s` and is used by nothing else.
        let undo = Undo { call: "cuMemFreeAsync", arg, run: |p: &CUdeviceptr| unsafe { d.p().cuMemFreeAsync(*p, s) } };
        let ptr = create_in_context(d, context.as_raw(), create, undo)?;
        let release = Release::FreeAsync { stream: stream.clone(), _pool: pool.cloned() };
        Ok(DeviceBuffer::wrap(context, ptr, len, release))
    }

    /// Adopts an allocation made with `cuMemAlloc`: the last clone frees it.
    ///
    /// # Safety
    /// `ptr` must be a live `cuMemAlloc` allocation of `len` bytes in `context` that
    /// nothing else frees.
    pub unsafe fn from_raw(context: &Context, ptr: CUdeviceptr, len: usize) -> DeviceBuffer {
        DeviceBuffer::wrap(context, ptr, len, Release::Free)
    }

    /// Uses memory someone else owns; cudrv never frees it.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid device memory of `context` while this handle is used.
    pub unsafe fn borrowed(context: &Context, ptr: CUdeviceptr, len: usize) -> DeviceBuffer {
        DeviceBuffer::wrap(context, ptr, len, Release::Borrowed)
    }

    fn wrap(context: &Context, ptr: CUdeviceptr, len: usize, release: Release) -> DeviceBuffer {
        DeviceBuffer(Arc::new(BufferInner { context: context.clone(), ptr, len, release }))
    }

    /// The device address.
    pub fn as_raw(&self) -> CUdeviceptr {
        self.0.ptr
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The context it belongs to.
    pub fn context(&self) -> &Context {
        &self.0.context
    }

    /// The stream a stream-ordered allocation is freed on.
    pub fn deallocation_stream(&self) -> Option<&Stream> {
        match &self.0.release {
            Release::FreeAsync { stream, .. } => Some(stream),
            _ => None,
        }
    }

    fn driver(&self) -> &'static Driver {
        self.0.context.driver()
    }

    fn check_len(&self, call: &'static str, n: usize) -> Result<(), CudaError> {
        if n > self.0.len {
            let e = CudaError::new(self.driver(), call, CUresult::CUDA_ERROR_INVALID_VALUE);
            return Err(
                e.with_note(format!("{n} bytes do not fit in a buffer of {} bytes; nothing was copied", self.0.len))
            );
        }
        Ok(())
    }

    /// Copies `src` to the start of the buffer (`cuMemcpyHtoD`, synchronous).
    pub fn copy_from_host(&self, src: &[u8]) -> Result<(), CudaError> {
        self.check_len("cuMemcpyHtoD", src.len())?;
        let (d, ptr) = (self.driver(), self.0.ptr);
        // SAFETY: `src` is readable for its length, which fits in the buffer.
        let copy =
            || CudaError::check(d, "cuMemcpyHtoD", unsafe { d.p().cuMemcpyHtoD(ptr, src.as_ptr().cast(), src.len()) });
        self.0.context.run(copy)
    }

    /// Copies the start of the buffer into `dst` (`cuMemcpyDtoH`, synchronous).
    pub fn copy_to_host(&self, dst: &mut [u8]) -> Result<(), CudaError> {
        self.check_len("cuMemcpyDtoH", dst.len())?;
        let (d, ptr) = (self.driver(), self.0.ptr);
        let copy = || {
            // SAFETY: `dst` is writable for its length, which fits in the buffer.
            let status = unsafe { d.p().cuMemcpyDtoH(dst.as_mut_ptr().cast(), ptr, dst.len()) };
            CudaError::check(d, "cuMemcpyDtoH", status)
        };
        self.0.context.run(copy)
    }

    /// Sets every byte to `value` (`cuMemsetD8`, synchronous).
    pub fn fill(&self, value: u8) -> Result<(), CudaError> {
        let (d, ptr, len) = (self.driver(), self.0.ptr, self.0.len);
        // SAFETY: the range is this live allocation.
        self.0.context.run(|| CudaError::check(d, "cuMemsetD8", unsafe { d.p().cuMemsetD8(ptr, value, len) }))
    }
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        let (d, ptr) = (self.context.driver(), self.ptr);
        match &self.release {
            Release::Borrowed => {}
            Release::Free => {
                // SAFETY: we own the allocation and this is its last handle.
                let free = || unsafe { d.p().cuMemFree(ptr) };
                cleanup_in_context(d, Some(self.context.as_raw()), "cuMemFree", Arg::Hex(ptr), free, || {});
            }
            Release::FreeAsync { stream, .. } => {
                let s = stream.as_raw();
                // SAFETY: as above; the stream is live (we hold it).
                let free = || unsafe { d.p().cuMemFreeAsync(ptr, s) };
                let ctx = Some(stream.context().as_raw());
                cleanup_in_context(d, ctx, "cuMemFreeAsync", Arg::Hex(ptr), free, || {});
            }
        }
    }
}
