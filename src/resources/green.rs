//! Green contexts (driver 12.4+): a device's streaming multiprocessors as a resource
//! ([`SmResource`]), split into groups, and a [`GreenContext`] per group, whose work runs
//! only on the group's SMs. Every entry goes through gating: on an older driver the error
//! says which version it needs.
//!
//! A green context is used through its [`Context`] ([`GreenContext::context`],
//! `cuCtxFromGreenCtx`): streams, memory, modules and launches take it as any context.
//! That context is the green context's handle in cudrv's one handle core: the last clone
//! (the green context's own, or one held by a stream or buffer made in it) destroys the
//! green context (`cuGreenCtxDestroy`).

use crate::error::{Error, InvalidArgument};
use crate::resources::context::Context;
use crate::resources::flags::StreamFlags;
use crate::resources::handle::Handle;
use crate::resources::stream::Stream;
use crate::sys::{
    CUcontext, CUdevResource, CUdevResourceDesc, CUdevResourceType, CUdevSmResource, CUgreenCtx,
    CUgreenCtxCreate_flags, CUresult,
};
use crate::Device;

const SM: CUdevResourceType = CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM;

/// A set of streaming multiprocessors (`CUdevResource` of type SM): all of a device's
/// ([`SmResource::of_device`]), a group of a split ([`SmResource::split`]), or a green
/// context's ([`GreenContext::sm_resource`]).
#[derive(Clone, Copy)]
pub struct SmResource {
    raw: CUdevResource,
}

impl std::fmt::Debug for SmResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmResource").field("sm_count", &self.sm_count()).finish_non_exhaustive()
    }
}

/// A split of an [`SmResource`]: groups of equal size and what is left.
#[derive(Clone, Debug)]
pub struct SmSplit {
    /// The groups, each with the same number of SMs.
    pub groups: Vec<SmResource>,
    /// The SMs in no group (possibly none).
    pub remainder: SmResource,
}

impl SmResource {
    /// Every SM of `device` (`cuDeviceGetDevResource`).
    pub fn of_device(device: &Device) -> Result<SmResource, Error> {
        Ok(SmResource { raw: device.driver().typed().cuDeviceGetDevResource(device.as_raw(), SM)? })
    }

    /// The `sm` member of the resource's union.
    fn sm(&self) -> &CUdevSmResource {
        // SAFETY: an SM resource (of a device, a green context or a split): the driver
        // wrote the `sm` member; an older driver leaves the fields it does not know zero
        // (plain integers: any bits are a value).
        unsafe { &self.raw.__bindgen_anon_1.sm }
    }

    /// The number of SMs.
    pub fn sm_count(&self) -> u32 {
        self.sm().smCount
    }

    /// The smallest group a split of it can make (driver 13.0+; 0 where the driver does
    /// not report it).
    pub fn min_partition_size(&self) -> u32 {
        self.sm().minSmPartitionSize
    }

    /// The alignment of a group's SM count (driver 13.0+; 0 where the driver does not
    /// report it).
    pub fn coscheduled_alignment(&self) -> u32 {
        self.sm().smCoscheduledAlignment
    }

    /// The raw resource.
    pub fn as_raw(&self) -> &CUdevResource {
        &self.raw
    }

    /// How many groups of at least `min_count` SMs a split would make
    /// (`cuDevSmResourceSplitByCount` with no result array).
    pub fn split_count(&self, device: &Device, min_count: u32) -> Result<u32, Error> {
        let mut n = 0;
        // SAFETY: a null result array asks for the count only; `n` is a valid out-pointer.
        unsafe {
            device.driver().pc().cuDevSmResourceSplitByCount(
                std::ptr::null_mut(),
                &mut n,
                &self.raw,
                std::ptr::null_mut(),
                0,
                min_count,
            )
        }?;
        Ok(n)
    }

    /// Splits it into at most `groups` groups of at least `min_count` SMs each
    /// (`cuDevSmResourceSplitByCount`): the driver rounds `min_count` up to its
    /// granularity (on an H200, a multiple of 8) and may make fewer groups. `device` is
    /// the device the resource is of (for its driver). A group can be split again only
    /// through a green context made of it.
    ///
    /// On error nothing is split. `groups` must be 1 to [`SmResource::sm_count`] (a group
    /// has at least one SM, so a split cannot make more groups than the resource has
    /// SMs): 0 or more is an [`InvalidArgument`] naming `groups` and the limit, made
    /// before any driver call or host allocation. `min_count` goes to the driver as it is
    /// (one it cannot meet is its `CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION`).
    pub fn split(&self, device: &Device, groups: u32, min_count: u32) -> Result<SmSplit, crate::Error> {
        const WHAT: &str = "SmResource::split";
        let sms = self.sm_count();
        if groups == 0 || groups > sms {
            let why = format!("groups {groups}: a split of {sms} SMs makes 1 to {sms} groups (one SM at least each)");
            return Err(InvalidArgument::new(WHAT, why).into());
        }
        let mut result: Vec<CUdevResource> = Vec::new();
        let len = groups as usize;
        result.try_reserve_exact(len).map_err(|e| InvalidArgument::new(WHAT, format!("groups {groups}: {e}")))?;
        result.resize(len, CUdevResource::default());
        let mut remainder = CUdevResource::default();
        let mut n = groups;
        // SAFETY: `result` holds `n` resources; the other pointers are valid.
        unsafe {
            device.driver().pc().cuDevSmResourceSplitByCount(
                result.as_mut_ptr(),
                &mut n,
                &self.raw,
                &mut remainder,
                0,
                min_count,
            )
        }?;
        result.truncate(n as usize);
        Ok(SmSplit {
            groups: result.into_iter().map(|raw| SmResource { raw }).collect(),
            remainder: SmResource { raw: remainder },
        })
    }
}

/// A green context: a context whose work runs on a set of SMs only (driver 12.4+).
/// Clones share it; the last clone of it or of its [`Context`] destroys it.
#[derive(Clone, Debug)]
pub struct GreenContext(Context);

impl GreenContext {
    /// Creates a green context on `device` with the SMs of `resources` (one resource of
    /// each type: an SM group from [`SmResource::split`]): `cuDevResourceGenerateDesc`,
    /// `cuGreenCtxCreate` (with its default stream) and `cuCtxFromGreenCtx`. The calling
    /// thread's context is unchanged. On error nothing is created; no resources, or more
    /// than the driver's count takes (`u32::MAX`), is an [`InvalidArgument`] made before
    /// any driver call.
    pub fn new(device: &Device, resources: &[SmResource]) -> Result<GreenContext, crate::Error> {
        if resources.is_empty() {
            return Err(InvalidArgument::new("GreenContext::new", "no resource given").into());
        }
        let driver = device.driver();
        let pc = driver.pc();
        let count = resources.len();
        let n = u32::try_from(count).map_err(|_| {
            InvalidArgument::new(
                "GreenContext::new",
                format!("{count} resources: the driver takes at most {}", u32::MAX),
            )
        })?;
        let mut raws: Vec<CUdevResource> = Vec::new();
        raws.try_reserve_exact(count)
            .map_err(|e| InvalidArgument::new("GreenContext::new", format!("{count} resources: {e}")))?;
        raws.extend(resources.iter().map(|r| r.raw));
        let mut desc: CUdevResourceDesc = std::ptr::null_mut();
        // SAFETY: `raws` holds `n` resources; `desc` is a valid out-pointer.
        unsafe { pc.cuDevResourceGenerateDesc(&mut desc, raws.as_mut_ptr(), n) }?;
        let mut green: CUgreenCtx = std::ptr::null_mut();
        let flags = CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0;
        // SAFETY: `green` is a valid out-pointer; `desc` came from the driver.
        unsafe { pc.cuGreenCtxCreate(&mut green, desc, device.as_raw(), flags) }?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer; `green` is live.
        if let Err(mut e) = unsafe { pc.cuCtxFromGreenCtx(&mut ctx, green) } {
            // SAFETY: made above, used by nothing else.
            let undo = unsafe { driver.p().cuGreenCtxDestroy(green) };
            e.add_note(match undo {
                CUresult::CUDA_SUCCESS => "the new green context was destroyed again".to_string(),
                s => format!("destroying the new green context failed too ({}); it is leaked", driver.status_text(s)),
            });
            return Err(e.into());
        }
        Ok(GreenContext(Context::wrap_green(driver, ctx, device.as_raw(), green, true)))
    }

    /// Uses a green context someone else owns; cudrv never destroys it.
    ///
    /// # Safety
    /// `raw` must be a live green context on `device` while this handle and what is made
    /// from it are used.
    pub unsafe fn borrowed(device: &Device, raw: CUgreenCtx) -> Result<GreenContext, Error> {
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: `ctx` is a valid out-pointer; `raw` is live (the caller's contract).
        unsafe { device.driver().pc().cuCtxFromGreenCtx(&mut ctx, raw) }?;
        Ok(GreenContext(Context::wrap_green(device.driver(), ctx, device.as_raw(), raw, false)))
    }

    /// The raw green context.
    pub fn as_raw(&self) -> CUgreenCtx {
        self.0.green_raw()
    }

    /// Its context (`cuCtxFromGreenCtx`), for everything a context is used for; each
    /// clone keeps the green context alive.
    pub fn context(&self) -> &Context {
        &self.0
    }

    /// The SMs it runs on (`cuGreenCtxGetDevResource`).
    pub fn sm_resource(&self) -> Result<SmResource, Error> {
        Ok(SmResource { raw: self.0.driver().typed().cuGreenCtxGetDevResource(self.0.green_live(), SM)? })
    }

    /// Creates a stream in it (`cuGreenCtxStreamCreate`, driver 12.5+; a green context's
    /// streams are always non-blocking) with `priority` (see
    /// [`Context::stream_priority_range`]). On error nothing is created.
    pub fn stream(&self, priority: i32) -> Result<Stream, Error> {
        let t = self.0.driver().typed();
        let flags = StreamFlags::NON_BLOCKING.bits();
        let create = || t.cuGreenCtxStreamCreate(self.0.green_live(), flags, priority);
        Ok(Handle::create_in(self.0.clone(), self.0.as_raw(), create).map(Stream)?)
    }
}
