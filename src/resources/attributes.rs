//! Function and kernel attributes (`cuFuncGetAttribute`/`cuFuncSetAttribute`,
//! `cuKernelGetAttribute`/`cuKernelSetAttribute` per device), cache configuration, names
//! (`cuFuncGetName`/`cuKernelGetName`, 12.3+) and parameter layout
//! (`cuFuncGetParamInfo`/`cuKernelGetParamInfo`, 12.4+).

use std::ffi::{c_char, c_int, CStr};

use crate::device::Device;
use crate::error::{CudaError, Error};
use crate::resources::context::Context;
use crate::resources::library::Kernel;
use crate::resources::module::Function;
use crate::resources::values::{CacheConfig, FunctionAttribute, FunctionAttributes, ParamInfo};
use crate::sys::CUresult;
use crate::Driver;

/// At most this many parameters are asked for (a kernel's parameters fit in 32 764 bytes,
/// each at least one byte): a driver that never answered INVALID_VALUE stops here.
const MAX_PARAMS: usize = 32_764;

/// The parameters of a function: `count` of them where the driver says how many (13.2+),
/// else asked one index at a time until the driver answers `CUDA_ERROR_INVALID_VALUE`
/// (the first index past the last parameter; compute-sanitizer reports that answer as
/// an API error).
fn params_of(
    count: Result<usize, Error>,
    get: impl Fn(usize) -> Result<ParamInfo, Error>,
) -> Result<Vec<ParamInfo>, Error> {
    if let Ok(n) = count {
        return (0..n).map(get).collect();
    }
    let mut out = Vec::new();
    for i in 0..MAX_PARAMS {
        match get(i) {
            Ok(info) => out.push(info),
            Err(e) if e.answered(CUresult::CUDA_ERROR_INVALID_VALUE) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// All the attributes of [`FunctionAttributes`], read with `get`.
fn read_all(get: impl Fn(FunctionAttribute) -> Result<i32, Error>) -> Result<FunctionAttributes, Error> {
    let size = |a| get(a).map(|v| usize::try_from(v).unwrap_or(0));
    let count = |a| get(a).map(|v| u32::try_from(v).unwrap_or(0));
    let version = |a| count(a).map(|v| (v / 10, v % 10));
    let carveout = get(FunctionAttribute::PreferredSharedMemoryCarveout)?;
    Ok(FunctionAttributes {
        max_threads_per_block: count(FunctionAttribute::MaxThreadsPerBlock)?,
        shared_size_bytes: size(FunctionAttribute::SharedSizeBytes)?,
        const_size_bytes: size(FunctionAttribute::ConstSizeBytes)?,
        local_size_bytes: size(FunctionAttribute::LocalSizeBytes)?,
        num_regs: count(FunctionAttribute::NumRegs)?,
        ptx_version: version(FunctionAttribute::PtxVersion)?,
        binary_version: version(FunctionAttribute::BinaryVersion)?,
        max_dynamic_shared_size_bytes: size(FunctionAttribute::MaxDynamicSharedSizeBytes)?,
        preferred_shared_memory_carveout: u32::try_from(carveout).ok(),
    })
}

/// A size given as bytes, as the driver's `int`; larger than `i32::MAX` becomes
/// `i32::MAX`, which the driver refuses as beyond any device's limit.
fn int_of(bytes: usize) -> c_int {
    c_int::try_from(bytes).unwrap_or(c_int::MAX)
}

/// The string the driver returned through `get` (driver-owned, NUL-terminated), copied.
fn name_of(name: Result<*const c_char, CudaError>) -> Result<String, CudaError> {
    let name = name?;
    if name.is_null() {
        return Ok(String::new());
    }
    // SAFETY: the driver returned a NUL-terminated string that lives as long as the
    // function's module (which the handle keeps alive while we copy it).
    Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

impl Function {
    #[inline(always)]
    fn driver(&self) -> &'static Driver {
        self.0.driver()
    }

    /// Runs the call `f`, which names the function (and so its context): first as it is,
    /// with no context check (one driver call: these calls do not use the current
    /// context); only if the driver answers `CUDA_ERROR_INVALID_CONTEXT` again with the
    /// function's context current.
    #[inline(always)]
    fn run<T>(&self, f: impl FnMut() -> Result<T, CudaError>) -> Result<T, CudaError> {
        crate::scope::retry_in(self.driver(), || self.module().context().as_raw(), f)
    }

    /// The value of `attribute` (`cuFuncGetAttribute`). A read-only attribute (one the
    /// driver never changes for a loaded function: registers, static sizes, versions,
    /// maximum threads per block, cache mode) is asked of the driver once per handle and
    /// its clones, then remembered; a settable one is asked each time. On error nothing is
    /// remembered.
    #[inline]
    pub fn attribute(&self, attribute: FunctionAttribute) -> Result<i32, Error> {
        Ok(self
            .0
            .owner()
            .fixed
            .get(attribute, || self.run(|| self.driver().typed().cuFuncGetAttribute(attribute.raw(), self.live())))?)
    }

    /// Sets `attribute` (`cuFuncSetAttribute`): the driver refuses a read-only attribute or
    /// a value out of range with `CUDA_ERROR_INVALID_VALUE`. On error nothing changed.
    #[inline]
    pub fn set_attribute(&self, attribute: FunctionAttribute, value: i32) -> Result<(), Error> {
        let t = self.driver().typed();
        Ok(self.run(|| t.cuFuncSetAttribute(self.live(), attribute.raw(), value))?)
    }

    /// Its attributes, read together (one `cuFuncGetAttribute` each, the read-only ones
    /// only the first time: see [`Function::attribute`]).
    pub fn attributes(&self) -> Result<FunctionAttributes, Error> {
        read_all(|a| self.attribute(a))
    }

    /// Lets launches ask for up to `bytes` of dynamic shared memory per block
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): needed above 48 KiB.
    #[inline]
    pub fn set_max_dynamic_shared_size_bytes(&self, bytes: usize) -> Result<(), Error> {
        self.set_attribute(FunctionAttribute::MaxDynamicSharedSizeBytes, int_of(bytes))
    }

    /// Sets the preferred shared-memory carveout, in percent of the most the device has
    /// (`None`: no preference, -1). A hint; the driver may choose otherwise.
    pub fn set_preferred_shared_memory_carveout(&self, percent: Option<u32>) -> Result<(), Error> {
        let value = percent.map_or(-1, |p| c_int::try_from(p).unwrap_or(c_int::MAX));
        self.set_attribute(FunctionAttribute::PreferredSharedMemoryCarveout, value)
    }

    /// Allows (or forbids) launches with a non-portable cluster size (more than 8 blocks).
    pub fn set_non_portable_cluster_size_allowed(&self, allowed: bool) -> Result<(), Error> {
        self.set_attribute(FunctionAttribute::NonPortableClusterSizeAllowed, c_int::from(allowed))
    }

    /// The cluster dimensions it was compiled for (`__cluster_dims__`), `(0, 0, 0)` if none.
    pub fn required_cluster_dims(&self) -> Result<(u32, u32, u32), Error> {
        let dim = |a| self.attribute(a).map(|v| u32::try_from(v).unwrap_or(0));
        Ok((
            dim(FunctionAttribute::RequiredClusterWidth)?,
            dim(FunctionAttribute::RequiredClusterHeight)?,
            dim(FunctionAttribute::RequiredClusterDepth)?,
        ))
    }

    /// Sets its cache preference (`cuFuncSetCacheConfig`). A hint, ignored by devices with
    /// a fixed split.
    pub fn set_cache_config(&self, config: CacheConfig) -> Result<(), Error> {
        let t = self.driver().typed();
        Ok(self.run(|| t.cuFuncSetCacheConfig(self.live(), config.raw()))?)
    }

    /// Its name as the module has it (`cuFuncGetName`, driver 12.3+: on an older one the
    /// error says which version it needs). Mangled for C++ kernels not declared `extern "C"`.
    pub fn name(&self) -> Result<String, Error> {
        Ok(name_of(self.driver().typed().cuFuncGetName(self.live()))?)
    }

    /// Where parameter `index` lies in the parameter buffer (`cuFuncGetParamInfo`, driver
    /// 12.4+). An index past the last parameter is `CUDA_ERROR_INVALID_VALUE`.
    pub fn param_info(&self, index: usize) -> Result<ParamInfo, Error> {
        let t = self.driver().typed();
        let (offset, size) = self.run(|| t.cuFuncGetParamInfo(self.live(), index))?;
        Ok(ParamInfo { offset, size })
    }

    /// How many parameters the function takes (`cuFuncGetParamCount`, driver 13.2+: on an
    /// older one the error says which version it needs).
    pub fn param_count(&self) -> Result<usize, Error> {
        Ok(self.run(|| self.driver().typed().cuFuncGetParamCount(self.live()))?)
    }

    /// Every parameter's place: [`Function::param_count`] of them on driver 13.2+, else
    /// `cuFuncGetParamInfo` for index 0, 1, ... up to the first that the driver answers
    /// with `CUDA_ERROR_INVALID_VALUE` (that last answer is an API error to
    /// compute-sanitizer). Its length is the number of parameters. Driver 12.4+.
    pub fn params(&self) -> Result<Vec<ParamInfo>, Error> {
        params_of(self.param_count(), |i| self.param_info(i))
    }
}

impl Kernel {
    /// The value of `attribute` on `device` (`cuKernelGetAttribute`).
    pub fn attribute(&self, attribute: FunctionAttribute, device: &Device) -> Result<i32, Error> {
        let t = self.library().driver().typed();
        Ok(t.cuKernelGetAttribute(attribute.raw(), self.live(), device.as_raw())?)
    }

    /// Sets `attribute` on `device` (`cuKernelSetAttribute`); the driver refuses a
    /// read-only attribute or a value out of range. On error nothing changed.
    pub fn set_attribute(&self, attribute: FunctionAttribute, value: i32, device: &Device) -> Result<(), Error> {
        let t = self.library().driver().typed();
        Ok(t.cuKernelSetAttribute(attribute.raw(), value, self.live(), device.as_raw())?)
    }

    /// Its attributes on `device`, read together (one `cuKernelGetAttribute` each).
    pub fn attributes(&self, device: &Device) -> Result<FunctionAttributes, Error> {
        read_all(|a| self.attribute(a, device))
    }

    /// Lets launches on `device` ask for up to `bytes` of dynamic shared memory per block.
    pub fn set_max_dynamic_shared_size_bytes(&self, bytes: usize, device: &Device) -> Result<(), Error> {
        self.set_attribute(FunctionAttribute::MaxDynamicSharedSizeBytes, int_of(bytes), device)
    }

    /// Sets the preferred shared-memory carveout on `device` (`None`: no preference).
    pub fn set_preferred_shared_memory_carveout(&self, percent: Option<u32>, device: &Device) -> Result<(), Error> {
        let value = percent.map_or(-1, |p| c_int::try_from(p).unwrap_or(c_int::MAX));
        self.set_attribute(FunctionAttribute::PreferredSharedMemoryCarveout, value, device)
    }

    /// Sets its cache preference on `device` (`cuKernelSetCacheConfig`).
    pub fn set_cache_config(&self, config: CacheConfig, device: &Device) -> Result<(), Error> {
        let t = self.library().driver().typed();
        Ok(t.cuKernelSetCacheConfig(self.live(), config.raw(), device.as_raw())?)
    }

    /// Its name (`cuKernelGetName`, driver 12.3+).
    pub fn name(&self) -> Result<String, Error> {
        Ok(name_of(self.library().driver().typed().cuKernelGetName(self.live()))?)
    }

    /// Where parameter `index` lies (`cuKernelGetParamInfo`, driver 12.4+), asked with
    /// `context` current: the driver answers `CUDA_ERROR_INVALID_CONTEXT` without one (any
    /// context will do; driver-facts.md).
    pub fn param_info(&self, context: &Context, index: usize) -> Result<ParamInfo, Error> {
        let t = self.library().driver().typed();
        let (offset, size) = context.run(|| t.cuKernelGetParamInfo(self.live(), index))?;
        Ok(ParamInfo { offset, size })
    }

    /// How many parameters the kernel takes (`cuKernelGetParamCount`, driver 13.2+), with
    /// `context` current.
    pub fn param_count(&self, context: &Context) -> Result<usize, Error> {
        let t = self.library().driver().typed();
        context.run(|| t.cuKernelGetParamCount(self.live()))
    }

    /// Every parameter's place, as [`Function::params`], with `context` current. Driver 12.4+.
    pub fn params(&self, context: &Context) -> Result<Vec<ParamInfo>, Error> {
        params_of(self.param_count(context), |i| self.param_info(context, i))
    }
}
