//! Host-implemented kernels: a registry of Rust (or C) implementations by kernel name,
//! and the run of one over a launch's grid.
//!
//! A kernel of a PTX module or library with an implementation here runs it instead of its
//! PTX (`image.rs`: a registered name wins); the module binds the implementations it was
//! loaded with, so registering or unregistering a name later changes only modules loaded
//! later. None is registered until a program registers one.
//!
//! A launch runs the implementation once per thread, sequentially, block by block (x
//! fastest), on the launching thread, with no stand-in lock held. Device memory is host
//! memory (`memory.rs`); every access an implementation makes goes through [`Thread`],
//! which checks the range against the live allocations: an access outside every live
//! allocation (or across the end of one) is refused, ends the launch and fails it with
//! CUDA_ERROR_ILLEGAL_ADDRESS, and the context becomes sticky-failed.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_uint, c_void, CStr, CString, OsStr, OsString};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use cudrv::sys::{CUdeviceptr, CUresult};

use crate::run::backing::Backing;
use crate::run::lock::lock;

/// The kind of one kernel parameter: how many bytes `cuLaunchKernel` passes for it, and
/// how [`Thread`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A device pointer (8 bytes; PTX `.u64`).
    Ptr,
    /// `int` (PTX `.s32`/`.u32`/`.b32`).
    I32,
    /// `unsigned int`.
    U32,
    /// `long long`.
    I64,
    /// `unsigned long long`.
    U64,
    /// `float` (PTX `.f32`, or `.b32`/`.u32`).
    F32,
    /// `double`.
    F64,
    /// Any other parameter (a struct passed by value): its size and alignment in bytes.
    Bytes {
        /// Its size in bytes.
        size: usize,
        /// Its alignment in bytes (0 is taken as 1).
        align: usize,
    },
}

impl Param {
    /// Its size in bytes.
    pub fn size(&self) -> usize {
        match *self {
            Param::I32 | Param::U32 | Param::F32 => 4,
            Param::Ptr | Param::I64 | Param::U64 | Param::F64 => 8,
            Param::Bytes { size, .. } => size,
        }
    }

    /// Its alignment in bytes (in the `extra` buffer of `cuLaunchKernel`); at least 1.
    pub fn align(&self) -> usize {
        match *self {
            Param::Bytes { align, .. } => align.max(1),
            p => p.size(),
        }
    }
}

/// Three dimensions, as CUDA's `dim3`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The first dimension.
    pub x: u32,
    /// The second dimension.
    pub y: u32,
    /// The third dimension.
    pub z: u32,
}

impl Dim3 {
    fn from_array([x, y, z]: [u32; 3]) -> Dim3 {
        Dim3 { x, y, z }
    }
}

/// Why a host kernel stopped: the status its launch fails with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelError {
    /// A memory access outside every live allocation: CUDA_ERROR_ILLEGAL_ADDRESS, and the
    /// context becomes sticky-failed, as after a faulting kernel on a GPU.
    IllegalAddress,
    /// A parameter read with a size other than the one registered, or one past the
    /// layout: CUDA_ERROR_INVALID_VALUE (a mistake in the implementation or its layout;
    /// the context stays usable).
    Param,
    /// The implementation gave up (or panicked): CUDA_ERROR_LAUNCH_FAILED, sticky.
    Failed,
}

impl KernelError {
    /// The status the launch fails with.
    pub fn status(self) -> CUresult {
        match self {
            KernelError::IllegalAddress => CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
            KernelError::Param => CUresult::CUDA_ERROR_INVALID_VALUE,
            KernelError::Failed => CUresult::CUDA_ERROR_LAUNCH_FAILED,
        }
    }

    /// Whether it leaves the context sticky-failed.
    pub fn is_sticky(self) -> bool {
        !matches!(self, KernelError::Param)
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KernelError::IllegalAddress => "illegal memory access in a host kernel",
            KernelError::Param => "kernel parameter read with the wrong size or index",
            KernelError::Failed => "host kernel failed",
        })
    }
}

impl std::error::Error for KernelError {}

mod sealed {
    pub trait Sealed {}
}

/// A plain number a kernel can read and write: `u8`..`u64`, `i8`..`i64`, `f32`, `f64`
/// (native byte order, as on the GPU).
pub trait Scalar: sealed::Sealed + Copy {
    /// Its size in bytes.
    const SIZE: usize;
    #[doc(hidden)]
    fn from_bytes(bytes: &[u8]) -> Option<Self>;
    #[doc(hidden)]
    fn put(self, out: &mut [u8]);
}

macro_rules! scalar {
    ($($t:ty)*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn from_bytes(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_ne_bytes(bytes.try_into().ok()?))
            }
            fn put(self, out: &mut [u8]) {
                let bytes = self.to_ne_bytes();
                if let Some(o) = out.get_mut(..bytes.len()) {
                    o.copy_from_slice(&bytes);
                }
            }
        }
    )*};
}
scalar!(u8 i8 u16 i16 u32 i32 u64 i64 f32 f64);

/// A kernel implemented in Rust.
type RustBody = Box<dyn Fn(&Thread<'_>) -> Result<(), KernelError> + Send + Sync>;

/// The body of a kernel.
enum Body {
    Rust(RustBody),
    C { f: CudrvStandinKernel, user_data: UserData },
}

/// The `user_data` of a C kernel.
struct UserData(*mut c_void);

// SAFETY: the registering program's contract (`cudrv_standin_register_kernel`): the
// kernel may be called with it from any thread.
unsafe impl Send for UserData {}
// SAFETY: as above; the stand-in only passes the pointer on.
unsafe impl Sync for UserData {}

/// One registered kernel.
pub(crate) struct HostKernel {
    pub(crate) params: Vec<Param>,
    body: Body,
}

impl HostKernel {
    /// The size of each parameter.
    pub(crate) fn param_sizes(&self) -> Vec<usize> {
        self.params.iter().map(Param::size).collect()
    }
}

impl fmt::Debug for HostKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostKernel").field("params", &self.params).finish_non_exhaustive()
    }
}

static REGISTRY: Mutex<BTreeMap<String, Arc<HostKernel>>> = Mutex::new(BTreeMap::new());

/// Registers `f` as the implementation of the kernel `name` (a PTX `.entry` name: the
/// mangled name for a C++ kernel), with the layout of its parameters, for modules and
/// libraries loaded from now on in this process. Replaces an earlier implementation of
/// the same name, the stand-in's own included; returns whether there was one.
///
/// `f` runs once per thread of a launch; it may call the driver (no stand-in lock is
/// held), and should return the error of a refused memory access (`?`): the launch fails
/// with it anyway. A panic in `f` is caught and fails the launch with
/// CUDA_ERROR_LAUNCH_FAILED.
///
/// # When the driver is the stand-in library
///
/// When `CUDRV_LIBCUDA` names a stand-in library (`libcudrv_standin.so`), as it does in
/// every cell of `cudrv-matrix --stand-in`, the kernel is registered with that library
/// too, so that it runs whichever driver the process uses: this in-process stand-in
/// ([`crate::install`], [`StandIn`](crate::StandIn)) or that library, loaded by
/// `cudrv::init()`/`cudrv::driver()`, before or after this call. The library is opened
/// here if cudrv has not opened it yet (the system loader gives cudrv the same copy; it
/// stays loaded), and its launches run `f` through the library's checked memory access.
/// There, a [`Param::Bytes`] parameter is aligned as its size (up to 8) in a launch's
/// `extra` buffer. When `CUDRV_LIBCUDA` names anything else (a real driver, which is
/// opened to find out and stays loaded, as cudrv keeps it; nothing; a file that cannot
/// be loaded), only this process's in-process stand-in knows the kernel; a stand-in
/// library opened any other way (a `cudrv::Driver::load` of another path, a C program's
/// `dlopen`) has a registry of its own, which [`cudrv_standin_register_kernel`] fills: a
/// module loaded there with a kernel it does not know fails with
/// CUDA_ERROR_INVALID_IMAGE.
pub fn register_kernel<F>(name: &str, params: &[Param], f: F) -> bool
where
    F: Fn(&Thread<'_>) -> Result<(), KernelError> + Send + Sync + 'static,
{
    let kernel = Arc::new(HostKernel { params: params.to_vec(), body: Body::Rust(Box::new(f)) });
    forward(name, Some(&kernel));
    lock(&REGISTRY).insert(name.to_string(), kernel).is_some()
}

/// Removes the implementation of `name` (the stand-in's own included), for modules
/// loaded from now on; returns whether there was one. Also removes it from the stand-in
/// library `CUDRV_LIBCUDA` names, as [`register_kernel`] registers it there.
pub fn unregister_kernel(name: &str) -> bool {
    forward(name, None);
    remove(name)
}

/// The names of every kernel registered in this process's in-process stand-in, in order.
pub fn registered_kernels() -> Vec<String> {
    lock(&REGISTRY).keys().cloned().collect()
}

fn insert(name: &str, params: Vec<Param>, body: Body) -> bool {
    lock(&REGISTRY).insert(name.to_string(), Arc::new(HostKernel { params, body })).is_some()
}

fn remove(name: &str) -> bool {
    lock(&REGISTRY).remove(name).is_some()
}

/// The implementation of `name`, if one is registered.
pub(crate) fn find(name: &str) -> Option<Arc<HostKernel>> {
    lock(&REGISTRY).get(name).cloned()
}

/// One launch in progress: its shape, its parameter values and the allocations its
/// threads have touched (kept alive until it ends).
struct Launch<'m> {
    /// The memory the kernel runs on: the start, size and memory of the live allocation
    /// containing an address.
    memory: Memory<'m>,
    grid: [u32; 3],
    block: [u32; 3],
    params: Vec<Vec<u8>>,
    /// `(start, end, memory)` of each allocation touched so far, the last one touched
    /// first.
    seen: Mutex<Vec<(u64, u64, Arc<Backing>)>>,
    /// The first refused access or parameter read (see [`fault_code`]; 0: none): the
    /// launch fails with it whatever the implementation returns.
    fault: AtomicU8,
}

/// [`Launch::fault`]'s encoding.
fn fault_code(e: KernelError) -> u8 {
    match e {
        KernelError::IllegalAddress => 1,
        KernelError::Param => 2,
        KernelError::Failed => 3,
    }
}

/// [`fault_code`] decoded.
fn fault_of(code: u8) -> Option<KernelError> {
    match code {
        0 => None,
        1 => Some(KernelError::IllegalAddress),
        2 => Some(KernelError::Param),
        _ => Some(KernelError::Failed),
    }
}

/// How a launch finds device memory: the start, size and memory of the live allocation
/// containing an address (CUDA_ERROR_ILLEGAL_ADDRESS outside every one).
pub(crate) type Memory<'m> = &'m (dyn Fn(u64) -> Result<(u64, usize, Arc<Backing>), CUresult> + Sync);

impl Launch<'_> {
    fn fail(&self, e: KernelError) -> KernelError {
        let _ = self.fault.compare_exchange(0, fault_code(e), Ordering::AcqRel, Ordering::Acquire);
        e
    }

    fn fault(&self) -> Option<KernelError> {
        fault_of(self.fault.load(Ordering::Acquire))
    }

    /// A host pointer to `len` bytes of device memory at `address`, valid while the
    /// launch lasts; [`KernelError::IllegalAddress`] unless the whole range is inside one
    /// live allocation.
    fn memory(&self, address: u64, len: usize) -> Result<*mut u8, KernelError> {
        let illegal = KernelError::IllegalAddress;
        let end = u64::try_from(len).ok().and_then(|l| address.checked_add(l)).ok_or(illegal)?;
        let mut seen = lock(&self.seen);
        let at = match seen.iter().position(|&(start, stop, _)| (start..stop).contains(&address)) {
            Some(i) => i,
            None => {
                let (start, size, backing) = (self.memory)(address).map_err(|_| illegal)?;
                let stop = u64::try_from(size).ok().and_then(|s| start.checked_add(s)).ok_or(illegal)?;
                seen.push((start, stop, backing));
                seen.len() - 1
            }
        };
        if at != 0 {
            seen.swap(0, at);
        }
        let (start, stop, backing) = seen.first().ok_or(illegal)?;
        if end > *stop {
            return Err(illegal);
        }
        let offset = usize::try_from(address - start).map_err(|_| illegal)?;
        // SAFETY: start <= address and end <= stop: inside the allocation, whose memory
        // `seen` keeps alive.
        Ok(unsafe { backing.as_ptr().add(offset) })
    }

    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), KernelError> {
        let p = self.memory(address, out.len()).map_err(|e| self.fail(e))?;
        // SAFETY: `p` has `out.len()` bytes (checked); `out` is ours.
        unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn write(&self, address: u64, bytes: &[u8]) -> Result<(), KernelError> {
        let p = self.memory(address, bytes.len()).map_err(|e| self.fail(e))?;
        // SAFETY: as in `read`, the other way.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }
}

/// What one thread of a host kernel sees: the launch's shape, its own indices, its
/// parameters, and checked access to device memory.
pub struct Thread<'a> {
    site: Site<'a>,
    block_idx: Dim3,
    thread_idx: Dim3,
}

/// Where the launch a [`Thread`] belongs to runs: in this copy of the stand-in, or in a
/// stand-in library this copy registered the kernel with ([`register_kernel`]), which
/// passes its C thread record.
#[derive(Clone, Copy)]
enum Site<'a> {
    Here(&'a Launch<'a>),
    Library(&'a Forwarded<'a>),
}

impl Thread<'_> {
    /// `gridDim`.
    pub fn grid_dim(&self) -> Dim3 {
        Dim3::from_array(self.grid())
    }

    /// `blockDim`.
    pub fn block_dim(&self) -> Dim3 {
        Dim3::from_array(self.block())
    }

    /// `blockIdx`.
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// `threadIdx`.
    pub fn thread_idx(&self) -> Dim3 {
        self.thread_idx
    }

    /// `blockIdx.x * blockDim.x + threadIdx.x`, without overflow.
    pub fn global_x(&self) -> u64 {
        u64::from(self.block_idx.x) * u64::from(self.block()[0]) + u64::from(self.thread_idx.x)
    }

    /// The number of parameters.
    pub fn param_count(&self) -> usize {
        match self.site {
            Site::Here(launch) => launch.params.len(),
            Site::Library(f) => f.param_count(),
        }
    }

    /// The bytes of parameter `index`; [`KernelError::Param`] past the layout.
    pub fn param_bytes(&self, index: usize) -> Result<&[u8], KernelError> {
        let bytes = match self.site {
            Site::Here(launch) => launch.params.get(index).map(Vec::as_slice),
            Site::Library(f) => f.param_bytes(index),
        };
        bytes.ok_or_else(|| self.fail(KernelError::Param))
    }

    /// Parameter `index` as a `T`; [`KernelError::Param`] past the layout or if its size
    /// is not `T`'s.
    pub fn param<T: Scalar>(&self, index: usize) -> Result<T, KernelError> {
        T::from_bytes(self.param_bytes(index)?).ok_or_else(|| self.fail(KernelError::Param))
    }

    /// Parameter `index` as a device pointer (8 bytes).
    pub fn ptr(&self, index: usize) -> Result<CUdeviceptr, KernelError> {
        self.param::<u64>(index)
    }

    /// Element `index` of the `T` array at device address `base`: `base[index]`.
    pub fn load<T: Scalar>(&self, base: CUdeviceptr, index: u64) -> Result<T, KernelError> {
        let address = element(base, index, T::SIZE).ok_or_else(|| self.fail(KernelError::IllegalAddress))?;
        let mut bytes = [0u8; 8];
        let bytes = bytes.get_mut(..T::SIZE).ok_or(KernelError::Param)?;
        self.read(address, bytes)?;
        T::from_bytes(bytes).ok_or(KernelError::Param)
    }

    /// Sets element `index` of the `T` array at `base`: `base[index] = value`.
    pub fn store<T: Scalar>(&self, base: CUdeviceptr, index: u64, value: T) -> Result<(), KernelError> {
        let address = element(base, index, T::SIZE).ok_or_else(|| self.fail(KernelError::IllegalAddress))?;
        let mut bytes = [0u8; 8];
        let bytes = bytes.get_mut(..T::SIZE).ok_or(KernelError::Param)?;
        value.put(bytes);
        self.write(address, bytes)
    }

    /// `cudaGraphSetConditional(handle, value)`: sets a graph condition (the stand-in keeps
    /// its value in 4 bytes of device memory at the handle's value).
    pub fn set_conditional(&self, handle: u64, value: u32) -> Result<(), KernelError> {
        self.store::<u32>(handle, 0, value)
    }

    /// Copies `out.len()` bytes of device memory at `address` into `out`.
    pub fn read(&self, address: CUdeviceptr, out: &mut [u8]) -> Result<(), KernelError> {
        match self.site {
            Site::Here(launch) => launch.read(address, out),
            Site::Library(f) => f.read(address, out),
        }
    }

    /// Copies `bytes` to device memory at `address`.
    pub fn write(&self, address: CUdeviceptr, bytes: &[u8]) -> Result<(), KernelError> {
        match self.site {
            Site::Here(launch) => launch.write(address, bytes),
            Site::Library(f) => f.write(address, bytes),
        }
    }

    fn grid(&self) -> [u32; 3] {
        match self.site {
            Site::Here(launch) => launch.grid,
            Site::Library(f) => f.record().grid_dim,
        }
    }

    fn block(&self) -> [u32; 3] {
        match self.site {
            Site::Here(launch) => launch.block,
            Site::Library(f) => f.record().block_dim,
        }
    }

    /// Records `e` as the launch's failure (the first one wins) and returns it.
    fn fail(&self, e: KernelError) -> KernelError {
        match self.site {
            Site::Here(launch) => launch.fail(e),
            Site::Library(f) => f.fail(e),
        }
    }
}

/// `base + index * size`, if it does not overflow.
fn element(base: u64, index: u64, size: usize) -> Option<u64> {
    base.checked_add(index.checked_mul(u64::try_from(size).ok()?)?)
}

/// Runs `kernel` over the grid with these parameter values (one per parameter, of its
/// size), thread after thread, stopping at the first failure.
pub(crate) fn run(
    memory: Memory<'_>,
    kernel: &HostKernel,
    grid: [u32; 3],
    block: [u32; 3],
    params: Vec<Vec<u8>>,
) -> Result<(), KernelError> {
    let launch = Launch { memory, grid, block, params, seen: Mutex::new(Vec::new()), fault: AtomicU8::new(0) };
    let param_ptrs: Vec<*const c_void> = launch.params.iter().map(|p| p.as_ptr().cast()).collect();
    let mut c_thread = CudrvStandinThread {
        grid_dim: grid,
        block_dim: block,
        block_idx: [0; 3],
        thread_idx: [0; 3],
        num_params: c_uint::try_from(param_ptrs.len()).unwrap_or(0),
        params: param_ptrs.as_ptr(),
        read: c_read,
        write: c_write,
        reserved: (&launch as *const Launch).cast(),
    };
    for bz in 0..grid[2] {
        for by in 0..grid[1] {
            for bx in 0..grid[0] {
                for tz in 0..block[2] {
                    for ty in 0..block[1] {
                        for tx in 0..block[0] {
                            let (b, t) = ([bx, by, bz], [tx, ty, tz]);
                            let r = match &kernel.body {
                                Body::Rust(f) => {
                                    let thread = Thread {
                                        site: Site::Here(&launch),
                                        block_idx: Dim3::from_array(b),
                                        thread_idx: Dim3::from_array(t),
                                    };
                                    catch_unwind(AssertUnwindSafe(|| f(&thread))).unwrap_or(Err(KernelError::Failed))
                                }
                                Body::C { f, user_data } => {
                                    c_thread.block_idx = b;
                                    c_thread.thread_idx = t;
                                    // SAFETY: the program registered `f` with `user_data`
                                    // for this; the thread record and what it points to
                                    // live until the call returns.
                                    match unsafe { f(&c_thread, user_data.0) } {
                                        CUresult::CUDA_SUCCESS => Ok(()),
                                        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => Err(KernelError::IllegalAddress),
                                        CUresult::CUDA_ERROR_INVALID_VALUE => Err(KernelError::Param),
                                        _ => Err(KernelError::Failed),
                                    }
                                }
                            };
                            if let Some(fault) = launch.fault() {
                                return Err(fault);
                            }
                            r?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// What a kernel registered through [`cudrv_standin_register_kernel`] gets for each
/// thread (C layout; see the crate docs for the C declaration).
#[repr(C)]
pub struct CudrvStandinThread {
    /// `gridDim` (x, y, z).
    pub grid_dim: [c_uint; 3],
    /// `blockDim`.
    pub block_dim: [c_uint; 3],
    /// `blockIdx`.
    pub block_idx: [c_uint; 3],
    /// `threadIdx`.
    pub thread_idx: [c_uint; 3],
    /// The number of parameters.
    pub num_params: c_uint,
    /// `params[i]` points to the bytes of parameter `i` (of its registered size).
    pub params: *const *const c_void,
    /// Copies `n` bytes of device memory at `src` to `dst`: CUDA_SUCCESS, or
    /// CUDA_ERROR_ILLEGAL_ADDRESS (nothing copied; the launch fails with it).
    pub read: unsafe extern "C" fn(
        thread: *const CudrvStandinThread,
        src: CUdeviceptr,
        dst: *mut c_void,
        n: usize,
    ) -> CUresult,
    /// Copies `n` bytes from `src` to device memory at `dst`, checked as `read`.
    pub write: unsafe extern "C" fn(
        thread: *const CudrvStandinThread,
        dst: CUdeviceptr,
        src: *const c_void,
        n: usize,
    ) -> CUresult,
    /// The stand-in's own.
    reserved: *const c_void,
}

/// A kernel implemented in C: called once per thread with its record and the
/// `user_data` it was registered with; returns CUDA_SUCCESS, or the status to fail the
/// launch with (CUDA_ERROR_ILLEGAL_ADDRESS and any other error but
/// CUDA_ERROR_INVALID_VALUE leave the context sticky-failed).
pub type CudrvStandinKernel =
    unsafe extern "C" fn(thread: *const CudrvStandinThread, user_data: *mut c_void) -> CUresult;

/// The launch behind a thread record, if it is one the stand-in made.
///
/// # Safety
/// `t` is null or the record passed to a running C kernel.
unsafe fn launch_of<'a>(t: *const CudrvStandinThread) -> Option<&'a Launch<'a>> {
    // SAFETY: the caller passes the record it was given, whose `reserved` is the
    // running launch.
    unsafe { t.as_ref().and_then(|t| t.reserved.cast::<Launch>().as_ref()) }
}

unsafe extern "C" fn c_read(t: *const CudrvStandinThread, src: CUdeviceptr, dst: *mut c_void, n: usize) -> CUresult {
    // SAFETY: the kernel passes its own record.
    let Some(launch) = (unsafe { launch_of(t) }) else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    if n == 0 {
        return CUresult::CUDA_SUCCESS;
    }
    if dst.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the kernel passes `n` writable bytes at `dst`.
    let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), n) };
    match launch.read(src, out) {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err(e) => e.status(),
    }
}

unsafe extern "C" fn c_write(t: *const CudrvStandinThread, dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    // SAFETY: the kernel passes its own record.
    let Some(launch) = (unsafe { launch_of(t) }) else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    if n == 0 {
        return CUresult::CUDA_SUCCESS;
    }
    if src.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the kernel passes `n` readable bytes at `src`.
    let bytes = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), n) };
    match launch.write(dst, bytes) {
        Ok(()) => CUresult::CUDA_SUCCESS,
        Err(e) => e.status(),
    }
}

/// The stand-in's build, for a copy that forwards kernels to this library
/// (`register_kernel`): forwarding needs both to be the same version of this crate, since
/// the kernel reads this library's thread record with its own layout.
const ABI: &CStr =
    match CStr::from_bytes_with_nul(concat!("cudrv-standin ", env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => c"cudrv-standin",
    };

/// This library's build (`cudrv-standin X.Y.Z`), checked by a copy of the stand-in before
/// it forwards kernels here.
#[doc(hidden)]
#[no_mangle]
pub extern "C" fn cudrv_standin_abi() -> *const c_char {
    ABI.as_ptr()
}

/// Registers a kernel implemented in C (for a program that loads the stand-in as
/// `libcuda.so.1`; look it up with `dlsym`): `kernel` runs for each thread of a launch
/// of `name`, with `user_data`; `param_sizes` holds the size in bytes of each of its
/// `num_params` parameters (alignment: the size, up to 8). A null `kernel` removes the
/// implementation of `name`.
///
/// Returns CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE for a null, empty or non-UTF-8 name,
/// or null `param_sizes` with parameters, or a size of 0; CUDA_ERROR_NOT_FOUND when
/// removing a name that has no implementation. Nothing changes on error.
///
/// # Safety
/// `name` is null or NUL-terminated; `param_sizes` is null or holds `num_params` sizes;
/// `kernel` may be called with `user_data` from any thread that launches, until it is
/// replaced or removed (and while launches of modules loaded before that run).
#[no_mangle]
pub unsafe extern "C" fn cudrv_standin_register_kernel(
    name: *const c_char,
    param_sizes: *const usize,
    num_params: c_uint,
    kernel: Option<CudrvStandinKernel>,
    user_data: *mut c_void,
) -> CUresult {
    if name.is_null() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    if name.is_empty() {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let Some(f) = kernel else {
        return if remove(name) { CUresult::CUDA_SUCCESS } else { CUresult::CUDA_ERROR_NOT_FOUND };
    };
    let Ok(n) = usize::try_from(num_params) else {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    };
    let sizes: &[usize] = match n {
        0 => &[],
        _ if param_sizes.is_null() => return CUresult::CUDA_ERROR_INVALID_VALUE,
        // SAFETY: non-null, with `num_params` sizes (the caller's contract).
        n => unsafe { std::slice::from_raw_parts(param_sizes, n) },
    };
    if sizes.contains(&0) {
        return CUresult::CUDA_ERROR_INVALID_VALUE;
    }
    let params = sizes.iter().map(|&size| Param::Bytes { size, align: size.min(8).next_power_of_two() }).collect();
    insert(name, params, Body::C { f, user_data: UserData(user_data) });
    CUresult::CUDA_SUCCESS
}

// Forwarding: a kernel registered from Rust runs in the stand-in library `CUDRV_LIBCUDA`
// names as well (see `register_kernel`). The library gets `run_forwarded` as a C kernel,
// with this copy's `HostKernel` as its `user_data`; `run_forwarded` runs the Rust body
// with a `Thread` whose memory access goes through the library's thread record.

/// The type of `cudrv_standin_register_kernel`.
type RegisterFn = unsafe extern "C" fn(
    name: *const c_char,
    param_sizes: *const usize,
    num_params: c_uint,
    kernel: Option<CudrvStandinKernel>,
    user_data: *mut c_void,
) -> CUresult;

/// Each `CUDRV_LIBCUDA` value looked at, with the registration function of the stand-in
/// library it names (`None`: not a stand-in library, this copy, or nothing loadable).
static LIBRARIES: Mutex<Vec<(OsString, Option<RegisterFn>)>> = Mutex::new(Vec::new());

/// The registration function of the stand-in library `CUDRV_LIBCUDA` names, if it names
/// one other than this copy, of this very build (`cudrv_standin_abi`); opened (and kept
/// loaded) on first use.
fn library_register() -> Option<RegisterFn> {
    let path = std::env::var_os(cudrv::ENV_LIBCUDA).filter(|v| !v.is_empty())?;
    let mut libraries = lock(&LIBRARIES);
    if let Some((_, f)) = libraries.iter().find(|(p, _)| *p == path) {
        return *f;
    }
    let f = open_register(&path);
    libraries.push((path, f));
    f
}

fn open_register(path: &OsStr) -> Option<RegisterFn> {
    // As cudrv's loader: a path must name a regular file (dlopen of a FIFO waits for a
    // writer for ever); a bare name is left to the system loader's search.
    if path.as_encoded_bytes().contains(&b'/') && !Path::new(path).is_file() {
        return None;
    }
    // SAFETY: `CUDRV_LIBCUDA` names the driver library cudrv's process-wide driver loads
    // (cudrv::driver() trusts it to be a CUDA driver or the stand-in), and the system
    // loader gives both opens one copy: opening it runs its initialisers, as that load does.
    let library = unsafe { libloading::Library::new(path) }.ok()?;
    // Only a library of this very build: the forwarded kernel reads its thread record.
    // SAFETY: a stand-in library exports it with this signature (a static string).
    let abi = unsafe { library.get::<extern "C" fn() -> *const c_char>(b"cudrv_standin_abi\0") }.map(|s| *s).ok();
    // SAFETY: the function returns a NUL-terminated static string.
    let same_build = abi.is_some_and(|abi| unsafe { CStr::from_ptr(abi()) } == ABI);
    // SAFETY: a stand-in library of this build exports it with this signature.
    let f = unsafe { library.get::<RegisterFn>(b"cudrv_standin_register_kernel\0") }
        .map(|s| *s)
        .ok()
        .filter(|_| same_build);
    // Never closed, as cudrv never closes a driver: its registry holds kernels of this copy.
    std::mem::forget(library);
    let own: RegisterFn = cudrv_standin_register_kernel;
    f.filter(|&f| f as usize != own as usize)
}

/// Registers `kernel` (or, with `None`, removes `name`) with the stand-in library
/// `CUDRV_LIBCUDA` names, if any. Its answer changes nothing here: a kernel it refuses
/// (a parameter of size 0) fails there as an unknown one does.
fn forward(name: &str, kernel: Option<&Arc<HostKernel>>) {
    let Some(register) = library_register() else { return };
    let Ok(name) = CString::new(name) else { return };
    let Some(kernel) = kernel else {
        // SAFETY: a NUL-terminated name; a null kernel removes it.
        let _ = unsafe { register(name.as_ptr(), std::ptr::null(), 0, None, std::ptr::null_mut()) };
        return;
    };
    let sizes = kernel.param_sizes();
    let Ok(n) = c_uint::try_from(sizes.len()) else { return };
    // The library may call `run_forwarded` with it for the rest of the process (modules
    // loaded before a replacement keep the kernel they bound): never freed once taken.
    let user_data = Arc::into_raw(Arc::clone(kernel)).cast_mut().cast::<c_void>();
    // SAFETY: a NUL-terminated name, `n` sizes; `run_forwarded` may be called with
    // `user_data` from any thread, for ever.
    let status = unsafe { register(name.as_ptr(), sizes.as_ptr(), n, Some(run_forwarded), user_data) };
    if status != CUresult::CUDA_SUCCESS {
        // SAFETY: refused, so the library kept nothing: this is the only owner of the
        // reference taken above.
        drop(unsafe { Arc::from_raw(user_data.cast_const().cast::<HostKernel>()) });
    }
}

/// The C kernel a stand-in library runs for a kernel [`forward`]ed to it: the Rust body of
/// `user_data` (a [`HostKernel`] of this copy) for the thread `record` describes.
unsafe extern "C" fn run_forwarded(record: *const CudrvStandinThread, user_data: *mut c_void) -> CUresult {
    let ran = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `forward` registered this function with a `HostKernel` that is never
        // freed; the library passes the record of the running thread, valid for the call.
        let (kernel, record) = unsafe { (user_data.cast_const().cast::<HostKernel>().as_ref(), record.as_ref()) };
        let (Some(kernel), Some(record)) = (kernel, record) else { return Err(KernelError::Param) };
        let Body::Rust(f) = &kernel.body else { return Err(KernelError::Failed) };
        let forwarded = Forwarded { record, params: &kernel.params, fault: AtomicU8::new(0) };
        let thread = Thread {
            site: Site::Library(&forwarded),
            block_idx: Dim3::from_array(record.block_idx),
            thread_idx: Dim3::from_array(record.thread_idx),
        };
        let r = f(&thread);
        forwarded.fault().map_or(r, Err)
    }));
    match ran {
        Ok(Ok(())) => CUresult::CUDA_SUCCESS,
        Ok(Err(e)) => e.status(),
        Err(_) => CUresult::CUDA_ERROR_LAUNCH_FAILED,
    }
}

/// One thread of a forwarded kernel, run by a stand-in library: its record, the kernel's
/// parameter layout (as registered there), and the first failure seen.
struct Forwarded<'a> {
    record: &'a CudrvStandinThread,
    params: &'a [Param],
    fault: AtomicU8,
}

// SAFETY: the record is only read, while the library's call of the kernel lasts (a
// `Thread` borrows it no longer); what its pointers reach, the parameter bytes, is not
// written during the call, and the library's `read`/`write` may be called from any thread
// (the stand-in's lock what they touch), as `Launch`'s methods may be.
unsafe impl Sync for Forwarded<'_> {}

impl Forwarded<'_> {
    fn record(&self) -> &CudrvStandinThread {
        self.record
    }

    fn param_count(&self) -> usize {
        usize::try_from(self.record.num_params).map_or(0, |n| n.min(self.params.len()))
    }

    fn param_bytes(&self, index: usize) -> Option<&[u8]> {
        if index >= self.param_count() || self.record.params.is_null() {
            return None;
        }
        let size = self.params.get(index)?.size();
        // SAFETY: `params` holds `num_params` pointers (index is below it).
        let p = unsafe { *self.record.params.add(index) };
        if p.is_null() {
            return None;
        }
        // SAFETY: the library passes each parameter's bytes, of the size registered with
        // it (this layout's), valid for the call.
        Some(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), size) })
    }

    fn read(&self, address: CUdeviceptr, out: &mut [u8]) -> Result<(), KernelError> {
        // SAFETY: the library's own record and function; `out` has `out.len()` bytes.
        let status = unsafe { (self.record.read)(self.record, address, out.as_mut_ptr().cast(), out.len()) };
        self.checked(status)
    }

    fn write(&self, address: CUdeviceptr, bytes: &[u8]) -> Result<(), KernelError> {
        // SAFETY: as in `read`, the other way.
        let status = unsafe { (self.record.write)(self.record, address, bytes.as_ptr().cast(), bytes.len()) };
        self.checked(status)
    }

    fn checked(&self, status: CUresult) -> Result<(), KernelError> {
        match status {
            CUresult::CUDA_SUCCESS => Ok(()),
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => Err(self.fail(KernelError::IllegalAddress)),
            CUresult::CUDA_ERROR_INVALID_VALUE => Err(self.fail(KernelError::Param)),
            _ => Err(self.fail(KernelError::Failed)),
        }
    }

    fn fail(&self, e: KernelError) -> KernelError {
        let _ = self.fault.compare_exchange(0, fault_code(e), Ordering::AcqRel, Ordering::Acquire);
        e
    }

    fn fault(&self) -> Option<KernelError> {
        fault_of(self.fault.load(Ordering::Acquire))
    }
}
