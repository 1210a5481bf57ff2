//! Kernel launches: a builder with typed arguments, and launch attributes (cluster
//! dimensions, cooperative launch) through `cuLaunchKernelEx` where the driver has it.

use std::ffi::c_void;

use crate::error::{CudaError, Error};
use crate::resources::event::Event;
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::launch_attr::{self, LaunchAttribute};
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::resources::params::{self, Check, Foreign, Target};
use crate::resources::peer;
use crate::resources::stream::Stream;
use crate::sys::{CUfunction, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchConfig};

/// Grid and block dimensions and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

/// A raw struct shaped as a launch (`CUlaunchConfig`, `CUDA_KERNEL_NODE_PARAMS`): the
/// [`LaunchConfig`]'s grid, block and shared memory in the driver's field names, and the
/// other fields as given.
macro_rules! launch_shaped {
    ($raw:ident, $config:expr, { $($field:ident: $value:expr),* $(,)? }) => {{
        let config: $crate::resources::launch::LaunchConfig = $config;
        $raw {
            gridDimX: config.grid.0,
            gridDimY: config.grid.1,
            gridDimZ: config.grid.2,
            blockDimX: config.block.0,
            blockDimY: config.block.1,
            blockDimZ: config.block.2,
            sharedMemBytes: config.shared_mem_bytes,
            $($field: $value),*
        }
    }};
}
pub(crate) use launch_shaped;

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory.
    pub const fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig { grid, block, shared_mem_bytes: 0 }
    }

    /// One thread per element for `n` elements: blocks of 256 threads (fewer for small
    /// `n`), as many as needed in x.
    pub const fn for_num_elems(n: u32) -> LaunchConfig {
        const THREADS: u32 = 256;
        let block = if n < THREADS {
            if n == 0 {
                1
            } else {
                n
            }
        } else {
            THREADS
        };
        let grid = n.div_ceil(block);
        LaunchConfig::new((if grid == 0 { 1 } else { grid }, 1, 1), (block, 1, 1))
    }

    /// The same with `bytes` of dynamic shared memory per block.
    pub const fn shared_mem(mut self, bytes: u32) -> LaunchConfig {
        self.shared_mem_bytes = bytes;
        self
    }

    /// [`LaunchConfig::shared_mem`].
    #[deprecated(since = "0.2.0", note = "use `LaunchConfig::shared_mem` (a setter is named after what it sets)")]
    pub const fn with_shared_mem(self, bytes: u32) -> LaunchConfig {
        self.shared_mem(bytes)
    }
}

const INLINE_ARGS: usize = 16;

/// A launch being built: the function, the stream, the arguments (borrowed until the
/// launch) and attributes. Made by [`crate::Function::builder`] or [`crate::Kernel::builder`].
pub struct Launch<'a> {
    stream: &'a Stream,
    function: CUfunction,
    target: Target<'a>,
    inline: [*mut c_void; INLINE_ARGS],
    count: usize,
    spilled: Vec<*mut c_void>,
    /// Each argument's size (0: unknown), for the checks (`params.rs`): the first
    /// [`INLINE_ARGS`] here, all of them in `spilled_sizes` past that.
    sizes: [u32; INLINE_ARGS],
    spilled_sizes: Vec<u32>,
    /// The first argument of a context the stream's cannot reach.
    foreign: Foreign,
    cluster: Option<(u32, u32, u32)>,
    cooperative: bool,
    /// Why a buffer argument's use on the stream could not be recorded (the launch is
    /// refused with it).
    failed: Option<CudaError>,
    /// Attributes from [`Launch::attribute`] (`launch_attr.rs`), with the driver version
    /// each needs and its name (for the error).
    attrs: Vec<(CUlaunchAttribute, u32, &'static str)>,
}

impl std::fmt::Debug for Launch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch")
            .field("stream", self.stream)
            .field("function", &self.function)
            .field("args", &self.count)
            .field("cluster", &self.cluster)
            .field("cooperative", &self.cooperative)
            .finish()
    }
}

/// Puts `value` at `index` of the inline array; from the first index past it, every value
/// is in `spilled` instead (the inline ones copied there first), so one of the two holds
/// them all in order.
#[inline(always)]
fn put_at<T: Copy, const N: usize>(inline: &mut [T; N], spilled: &mut Vec<T>, index: usize, value: T) {
    match inline.get_mut(index) {
        Some(slot) if spilled.is_empty() => *slot = value,
        _ => {
            if spilled.is_empty() {
                spilled.extend_from_slice(inline);
            }
            spilled.push(value);
        }
    }
}

impl<'a> Launch<'a> {
    pub(crate) fn new(stream: &'a Stream, function: CUfunction, target: Target<'a>) -> Launch<'a> {
        Launch {
            stream,
            function,
            target,
            inline: [std::ptr::null_mut(); INLINE_ARGS],
            count: 0,
            spilled: Vec::new(),
            sizes: [0; INLINE_ARGS],
            spilled_sizes: Vec::new(),
            foreign: None,
            cluster: None,
            cooperative: false,
            failed: None,
            attrs: Vec::new(),
        }
    }

    /// Pushes the next kernel argument: a plain value (`&n`), a device buffer (`&buf`) or
    /// a view of one (`&buf.slice(8..)?`), passed as its device address. It stays borrowed until the builder is dropped.
    /// A buffer or view records its use on the launch's stream (its free waits for it).
    #[inline]
    pub fn arg<A: KernelArg + ?Sized>(&mut self, arg: &'a A) -> &mut Launch<'a> {
        if let Some(ArgUse(mem)) = arg.memory_use() {
            if let Err(e) = mem.owner().used_on(self.stream) {
                self.failed.get_or_insert(e);
            }
        }
        let p = arg.param();
        let size = u32::try_from(arg.param_size()).unwrap_or(u32::MAX);
        put_at(&mut self.sizes, &mut self.spilled_sizes, self.count, size);
        if let (None, Some(c)) = (self.foreign, arg.param_context()) {
            if !peer::usable_in(self.stream.context(), c.as_raw()) {
                self.foreign = Some((self.count, c.as_raw()));
            }
        }
        put_at(&mut self.inline, &mut self.spilled, self.count, p);
        self.count += 1;
        self
    }

    /// Launches with thread-block clusters of `dims` blocks (`cuLaunchKernelEx`, driver
    /// 11.6+; clusters need compute capability 9.0).
    pub fn cluster(&mut self, dims: (u32, u32, u32)) -> &mut Launch<'a> {
        self.cluster = Some(dims);
        self
    }

    /// Launches cooperatively, so blocks may synchronise with each other
    /// (`cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`).
    pub fn cooperative(&mut self, on: bool) -> &mut Launch<'a> {
        self.cooperative = on;
        self
    }

    /// Launches the kernel with `config` and the arguments pushed so far. Without
    /// attributes this is one `cuLaunchKernel`; with them, one `cuLaunchKernelEx`, and on a
    /// driver without it the error (`CUDA_ERROR_NOT_FOUND`) says which version it needs.
    ///
    /// Before the launch, with no driver call after a handle's first launch, it checks
    /// (see `docs/kernels.md`, "Launch checks"): that the function (of a module) and every
    /// buffer argument belong to the stream's context (or, for a buffer, a context whose
    /// memory it can reach through peer access enabled with
    /// [`Context::enable_peer_access`](crate::Context::enable_peer_access)); and, where the driver reports the kernel's
    /// parameter layout (12.4+), that there are as many arguments as parameters and each
    /// has its parameter's size. A failed check is [`Error::InvalidArgument`] naming the
    /// kernel and what differs, and nothing is launched.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameters in number, order and type, and
    /// the kernel must only touch memory that stays valid until it completes.
    #[inline]
    pub unsafe fn launch(&mut self, config: LaunchConfig) -> Result<(), Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone().into());
        }
        let sizes = match self.sizes.get(..self.count) {
            Some(sizes) if self.spilled_sizes.is_empty() => sizes,
            _ => &self.spilled_sizes,
        };
        let (target, context, foreign) = (self.target, self.stream.context(), self.foreign);
        params::check(Check { what: "Launch::launch", target, context, sizes, foreign })?;
        if !self.attrs.is_empty() {
            let version = self.stream.context().driver().version_code();
            for &(_, needs, name) in &self.attrs {
                launch_attr::check_version(name, needs, version)?;
            }
        }
        // SAFETY: forwarded from the caller.
        Ok(unsafe { self.launch_unchecked(config) }?)
    }

    /// The launch itself, after the checks.
    ///
    /// # Safety
    /// As [`Launch::launch`].
    #[inline]
    unsafe fn launch_unchecked(&mut self, config: LaunchConfig) -> Result<(), CudaError> {
        let params = if self.spilled.is_empty() { self.inline.as_mut_ptr() } else { self.spilled.as_mut_ptr() };
        let params = if self.count == 0 { std::ptr::null_mut() } else { params };
        if self.cluster.is_some() || self.cooperative || !self.attrs.is_empty() {
            // SAFETY: forwarded from the caller.
            return unsafe { self.launch_ex(config, params) };
        }
        let (pc, s, f) = (self.stream.context().driver().pc(), self.stream.as_raw(), self.function);
        let (g, b) = (config.grid, config.block);
        let shared = config.shared_mem_bytes;
        let null = std::ptr::null_mut();
        // The stream names the context (docs/driver-facts.md: driver 13.0 launches on an
        // explicit stream right with no context, or another one, current).
        self.run_named(|| {
            // SAFETY: the handles are live; the caller vouches for the parameters.
            unsafe { pc.cuLaunchKernel(f, g.0, g.1, g.2, b.0, b.1, b.2, shared, s, params, null) }
        })
    }

    #[cold]
    unsafe fn launch_ex(&mut self, config: LaunchConfig, params: *mut *mut c_void) -> Result<(), CudaError> {
        let (pc, f) = (self.stream.context().driver().pc(), self.function);
        self.with_raw_config(config, |launch| {
            // SAFETY: the configuration and attributes live across the call; the caller
            // vouches for the parameters.
            self.run_named(|| unsafe { pc.cuLaunchKernelEx(launch, f, params, std::ptr::null_mut()) })
        })
    }

    /// Adds a raw attribute that needs driver `needs` (`launch_attr.rs`).
    pub(crate) fn push_attribute(&mut self, raw: CUlaunchAttribute, needs: u32, name: &'static str) {
        self.attrs.push((raw, needs, name));
    }

    /// Runs `op`, a call naming the stream and the function, in the stream's context:
    /// [`Stream::run_named`] for a module's function (which names its context); with the
    /// context current for a library kernel (resolved in the current context).
    #[inline(always)]
    pub(crate) fn run_named<T>(&self, op: impl FnMut() -> Result<T, CudaError>) -> Result<T, CudaError> {
        match self.target {
            Target::Function(_) => self.stream.run_named(op),
            Target::Kernel(_) => self.stream.run(op),
        }
    }

    /// The function being launched.
    pub(crate) fn function(&self) -> CUfunction {
        self.function
    }

    /// The stream it launches on.
    pub(crate) fn stream(&self) -> &'a Stream {
        self.stream
    }

    /// Runs `f` with the `CUlaunchConfig` this builder would launch with (`config`, its
    /// stream and its attributes), which lives only during `f`.
    pub(crate) fn with_raw_config<T>(&self, config: LaunchConfig, f: impl FnOnce(&CUlaunchConfig) -> T) -> T {
        let mut attrs: [CUlaunchAttribute; 2] = Default::default();
        let mut n = 0;
        if let (Some((x, y, z)), Some(a)) = (self.cluster, attrs.get_mut(n)) {
            a.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            a.value.clusterDim.x = x;
            a.value.clusterDim.y = y;
            a.value.clusterDim.z = z;
            n += 1;
        }
        if let (true, Some(a)) = (self.cooperative, attrs.get_mut(n)) {
            a.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            a.value.cooperative = 1;
            n += 1;
        }
        let mut all: Vec<CUlaunchAttribute>;
        let (ptr, n) = if self.attrs.is_empty() {
            (attrs.as_mut_ptr(), n)
        } else {
            all = attrs.get(..n).unwrap_or(&[]).to_vec();
            all.extend(self.attrs.iter().map(|(a, _, _)| *a));
            (all.as_mut_ptr(), all.len())
        };
        let launch = launch_shaped!(CUlaunchConfig, config, {
            hStream: self.stream.as_raw(),
            attrs: ptr,
            numAttrs: u32::try_from(n).unwrap_or(0),
        });
        f(&launch)
    }
}

impl<'a> Launch<'a> {
    /// Adds a launch attribute: the launch goes through `cuLaunchKernelEx`. An attribute
    /// the driver is too old for makes the launch an [`crate::Error::InvalidArgument`]
    /// naming the version it needs, before any driver call.
    pub fn attribute(&mut self, attr: LaunchAttribute) -> &mut Launch<'a> {
        self.push_attribute(attr.raw(), attr.needs(), attr.name());
        self
    }

    /// Programmatic dependent launch: `event` is recorded when every block of this kernel
    /// has triggered (or, with `trigger_at_block_start`, started), so a kernel waiting on
    /// it may start early (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT`, driver 11.8+). The
    /// event stays borrowed until the builder is dropped.
    pub fn programmatic_event(&mut self, event: &'a Event, trigger_at_block_start: bool) -> &mut Launch<'a> {
        self.push_attribute(launch_attr::programmatic_event(event, trigger_at_block_start), 11080, "ProgrammaticEvent");
        self
    }
}

impl Function {
    /// Starts a launch of it on `stream` (`cuLaunchKernel`): push its arguments with
    /// [`Launch::arg`], then [`Launch::launch`].
    pub fn builder<'a>(&'a self, stream: &'a Stream) -> Launch<'a> {
        Launch::new(stream, self.as_raw(), Target::Function(self))
    }
}

impl Kernel {
    /// Starts a launch of it on `stream` (`cuLaunchKernel` with the kernel handle, which
    /// the driver resolves for the stream's context): push its arguments with
    /// [`Launch::arg`], then [`Launch::launch`].
    pub fn builder<'a>(&'a self, stream: &'a Stream) -> Launch<'a> {
        Launch::new(stream, self.as_raw().cast::<crate::sys::CUfunc_st>() as CUfunction, Target::Kernel(self))
    }
}
