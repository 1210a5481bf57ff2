//! Texture and surface objects (`cuTexObjectCreate`, `cuSurfObjectCreate`): handles a
//! kernel reads (textures) or reads and writes (surfaces) memory through, over an
//! [`Array`] or over linear or pitched device memory ([`TextureResource`]), with typed
//! texture descriptors ([`TextureDesc`]: address modes, filtering, read mode, normalised
//! coordinates). Their descriptors read back (`cuTexObjectGetResourceDesc`,
//! `cuTexObjectGetTextureDesc`, `cuSurfObjectGetResourceDesc`); they are destroyed through
//! the one handle core (`cuTexObjectDestroy`, `cuSurfObjectDestroy`).
//!
//! An object keeps what it reads alive (a clone of the array's or the allocation's
//! handle), and its destroy waits for its context's work first (`cuCtxSynchronize`: the
//! kernels that may read it are launches cudrv does not see), so it is never destroyed,
//! nor is its memory freed, under a kernel that uses it. Passed to a launch
//! ([`crate::Launch::arg`]) it is the 8-byte handle; over device memory, the launch
//! records that memory's use on its stream as for a buffer argument.

use std::ffi::c_void;

use crate::call;
use crate::error::{CudaError, Error, InvalidArgument};
use crate::resources::array::{Array, ArrayFormat};
use crate::resources::context::Context;
use crate::resources::flags::ArrayFlags;
use crate::resources::handle::{handle_type, kind, Handle, Ownership};
use crate::resources::kernel_arg::sealed::ArgUse;
use crate::resources::kernel_arg::KernelArg;
use crate::resources::memory::{DeviceMemory, DeviceRepr};
use crate::resources::pitched::PitchedBuffer;
use crate::resources::view::DeviceSlice;
use crate::sys::{
    CUaddress_mode, CUarray, CUcontext, CUdeviceptr, CUfilter_mode, CUresourcetype, CUsurfObject, CUtexObject,
    CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC, CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_READ_AS_INTEGER,
};
use crate::table::Call;

/// What a texture coordinate outside the texture reads (`CUaddress_mode`). Wrap and mirror
/// apply only with normalised coordinates (the driver clamps otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// Repeats the texture.
    Wrap,
    /// The nearest edge texel.
    Clamp,
    /// Repeats the texture, mirrored.
    Mirror,
    /// The border colour ([`TextureDesc::border_color`]).
    Border,
}

impl AddressMode {
    fn to_raw(self) -> CUaddress_mode {
        match self {
            AddressMode::Wrap => CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
            AddressMode::Clamp => CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
            AddressMode::Mirror => CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
            AddressMode::Border => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
        }
    }

    fn from_raw(raw: CUaddress_mode) -> AddressMode {
        match raw {
            CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP => AddressMode::Wrap,
            CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR => AddressMode::Mirror,
            CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER => AddressMode::Border,
            _ => AddressMode::Clamp,
        }
    }
}

/// How a texture read between texels is computed (`CUfilter_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterMode {
    /// The nearest texel.
    Point,
    /// Linear interpolation of the nearest texels (float results only).
    Linear,
}

/// What a texture read returns for integer formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadMode {
    /// The element's own type (`CU_TRSF_READ_AS_INTEGER`).
    ElementType,
    /// Integers as floats normalised to [0, 1] or [-1, 1].
    NormalizedFloat,
}

/// How a texture object reads (`CUDA_TEXTURE_DESC`). [`Default`]: clamp in every
/// dimension, point filtering, element type, unnormalised coordinates, a black border.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TextureDesc {
    /// Per dimension (x, y, z).
    pub address_mode: [AddressMode; 3],
    /// Filtering.
    pub filter_mode: FilterMode,
    /// What integer formats read as.
    pub read_mode: ReadMode,
    /// Coordinates in [0, 1) instead of texels.
    pub normalized_coords: bool,
    /// What [`AddressMode::Border`] reads.
    pub border_color: [f32; 4],
}

impl Default for TextureDesc {
    fn default() -> TextureDesc {
        TextureDesc {
            address_mode: [AddressMode::Clamp; 3],
            filter_mode: FilterMode::Point,
            read_mode: ReadMode::ElementType,
            normalized_coords: false,
            border_color: [0.0; 4],
        }
    }
}

impl TextureDesc {
    fn to_raw(self) -> CUDA_TEXTURE_DESC {
        let mut flags = 0;
        if self.read_mode == ReadMode::ElementType {
            flags |= CU_TRSF_READ_AS_INTEGER;
        }
        if self.normalized_coords {
            flags |= CU_TRSF_NORMALIZED_COORDINATES;
        }
        CUDA_TEXTURE_DESC {
            addressMode: self.address_mode.map(AddressMode::to_raw),
            filterMode: match self.filter_mode {
                FilterMode::Point => CUfilter_mode::CU_TR_FILTER_MODE_POINT,
                FilterMode::Linear => CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
            },
            flags,
            borderColor: self.border_color,
            ..CUDA_TEXTURE_DESC::default()
        }
    }

    fn from_raw(d: &CUDA_TEXTURE_DESC) -> TextureDesc {
        TextureDesc {
            address_mode: d.addressMode.map(AddressMode::from_raw),
            filter_mode: if d.filterMode == CUfilter_mode::CU_TR_FILTER_MODE_LINEAR {
                FilterMode::Linear
            } else {
                FilterMode::Point
            },
            read_mode: if d.flags & CU_TRSF_READ_AS_INTEGER != 0 {
                ReadMode::ElementType
            } else {
                ReadMode::NormalizedFloat
            },
            normalized_coords: d.flags & CU_TRSF_NORMALIZED_COORDINATES != 0,
            border_color: d.borderColor,
        }
    }
}

/// What keeps a texture's memory alive.
#[derive(Clone)]
enum Keep {
    Array(Array),
    Memory(Handle<DeviceMemory>),
}

/// What a texture object reads: an array, or linear or pitched device memory seen as
/// elements of `channels` values of a format. Holds a clone of the array's or the
/// allocation's handle, which the objects made from it keep.
#[derive(Clone)]
pub struct TextureResource {
    keep: Keep,
    shape: Shape,
}

/// The resource as `CUDA_RESOURCE_DESC` describes it (without the array handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Array,
    Linear { ptr: CUdeviceptr, format: ArrayFormat, channels: u32, bytes: usize },
    Pitch2D { ptr: CUdeviceptr, format: ArrayFormat, channels: u32, width: usize, height: usize, pitch: usize },
}

impl std::fmt::Debug for TextureResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.keep, self.shape) {
            (Keep::Array(a), _) => write!(f, "TextureResource({a:?})"),
            (_, shape) => write!(f, "TextureResource({shape:?})"),
        }
    }
}

/// Checks that `T` is one element of `channels` values of `format`.
fn check_element<T>(what: &'static str, format: ArrayFormat, channels: u32) -> Result<(), InvalidArgument> {
    if !matches!(channels, 1 | 2 | 4) {
        return Err(InvalidArgument::new(what, format!("channels: {channels} (1, 2 or 4)")));
    }
    let element = format.bytes() * channels as usize;
    if element != size_of::<T>() {
        let why = format!("an element of {channels} x {format:?} is {element} bytes, a value of T {}", size_of::<T>());
        return Err(InvalidArgument::new(what, why));
    }
    Ok(())
}

impl TextureResource {
    /// An array (`CU_RESOURCE_TYPE_ARRAY`).
    pub fn array(array: &Array) -> TextureResource {
        TextureResource { keep: Keep::Array(array.clone()), shape: Shape::Array }
    }

    /// Linear device memory of `T` (`CU_RESOURCE_TYPE_LINEAR`), each value one element of
    /// `channels` values of `format` (checked: [`InvalidArgument`]; so is memory of no
    /// bytes). The driver requires the address to be aligned to the device's texture
    /// alignment (a buffer's start is).
    pub fn linear<T: DeviceRepr>(
        memory: &(impl DeviceSlice<T> + ?Sized),
        format: ArrayFormat,
        channels: u32,
    ) -> Result<TextureResource, InvalidArgument> {
        let what = "TextureResource::linear";
        check_element::<T>(what, format, channels)?;
        let v = memory.as_view();
        if v.as_raw() == 0 {
            return Err(InvalidArgument::new(what, "memory of no bytes"));
        }
        let shape = Shape::Linear { ptr: v.as_raw(), format, channels, bytes: v.len() * size_of::<T>() };
        Ok(TextureResource { keep: Keep::Memory(v.allocation().clone()), shape })
    }

    /// A pitched buffer (`CU_RESOURCE_TYPE_PITCH2D`), each value one element of
    /// `channels` values of `format` (checked; so is a buffer of no bytes).
    pub fn pitched<T: DeviceRepr>(
        buffer: &PitchedBuffer<T>,
        format: ArrayFormat,
        channels: u32,
    ) -> Result<TextureResource, InvalidArgument> {
        let what = "TextureResource::pitched";
        check_element::<T>(what, format, channels)?;
        if buffer.as_raw() == 0 {
            return Err(InvalidArgument::new(what, "a pitched buffer of no bytes"));
        }
        let shape = Shape::Pitch2D {
            ptr: buffer.as_raw(),
            format,
            channels,
            width: buffer.width(),
            height: buffer.height(),
            pitch: buffer.pitch(),
        };
        Ok(TextureResource { keep: Keep::Memory(buffer.allocation().clone()), shape })
    }

    fn context(&self) -> &Context {
        match &self.keep {
            Keep::Array(a) => a.context(),
            Keep::Memory(m) => m.owner().context(),
        }
    }

    fn to_raw(&self) -> CUDA_RESOURCE_DESC {
        let mut d = CUDA_RESOURCE_DESC::default();
        match (&self.keep, self.shape) {
            (Keep::Array(a), _) => {
                d.resType = CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
                d.res.array.hArray = a.as_raw();
            }
            (_, Shape::Linear { ptr, format, channels, bytes }) => {
                d.resType = CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
                d.res.linear.devPtr = ptr;
                d.res.linear.format = format.to_raw();
                d.res.linear.numChannels = channels;
                d.res.linear.sizeInBytes = bytes;
            }
            (_, Shape::Pitch2D { ptr, format, channels, width, height, pitch }) => {
                d.resType = CUresourcetype::CU_RESOURCE_TYPE_PITCH2D;
                d.res.pitch2D.devPtr = ptr;
                d.res.pitch2D.format = format.to_raw();
                d.res.pitch2D.numChannels = channels;
                d.res.pitch2D.width = width;
                d.res.pitch2D.height = height;
                d.res.pitch2D.pitchInBytes = pitch;
            }
            (Keep::Memory(_), Shape::Array) => {}
        }
        d
    }
}

/// A resource as the driver reports it for a texture or surface object
/// (`cuTexObjectGetResourceDesc`, `cuSurfObjectGetResourceDesc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceDesc {
    /// An array, by its raw handle.
    Array(CUarray),
    /// Linear memory.
    Linear {
        /// Its address.
        address: CUdeviceptr,
        /// The format of each channel (`None`: one cudrv does not name).
        format: Option<ArrayFormat>,
        /// Channels per element.
        channels: u32,
        /// Its size.
        size_bytes: usize,
    },
    /// Pitched 2D memory.
    Pitch2D {
        /// Its address.
        address: CUdeviceptr,
        /// The format of each channel.
        format: Option<ArrayFormat>,
        /// Channels per element.
        channels: u32,
        /// Elements per row.
        width: usize,
        /// Rows.
        height: usize,
        /// Bytes from one row to the next.
        pitch: usize,
    },
    /// Another resource type (a mipmapped array), by its `CUresourcetype` value.
    Other(u32),
}

impl ResourceDesc {
    fn from_raw(d: &CUDA_RESOURCE_DESC) -> ResourceDesc {
        // SAFETY: the union member read is the one `resType` names; each is plain data.
        unsafe {
            match d.resType {
                CUresourcetype::CU_RESOURCE_TYPE_ARRAY => ResourceDesc::Array(d.res.array.hArray),
                CUresourcetype::CU_RESOURCE_TYPE_LINEAR => ResourceDesc::Linear {
                    address: d.res.linear.devPtr,
                    format: ArrayFormat::from_raw(d.res.linear.format),
                    channels: d.res.linear.numChannels,
                    size_bytes: d.res.linear.sizeInBytes,
                },
                CUresourcetype::CU_RESOURCE_TYPE_PITCH2D => ResourceDesc::Pitch2D {
                    address: d.res.pitch2D.devPtr,
                    format: ArrayFormat::from_raw(d.res.pitch2D.format),
                    channels: d.res.pitch2D.numChannels,
                    width: d.res.pitch2D.width,
                    height: d.res.pitch2D.height,
                    pitch: d.res.pitch2D.pitchInBytes,
                },
                other => ResourceDesc::Other(other.0),
            }
        }
    }
}

/// What a texture or surface object keeps alive.
pub(crate) struct ObjectOwner {
    context: Context,
    keep: Keep,
}

impl ObjectOwner {
    /// A description of the object as the driver reports it: `get` (the texture's or the
    /// surface's query) writes it through its out-pointer, in the object's context.
    fn read<D>(&self, get: impl FnOnce(crate::typed::Typed) -> Result<D, CudaError>) -> Result<D, Error> {
        self.context.run(|| get(self.context.driver().typed()))
    }
}

/// Releases an object: every kernel of its context first, then `destroy`.
///
/// # Safety
/// `destroy` releases the object once.
unsafe fn release_object(
    owner: &ObjectOwner,
    destroy: impl FnOnce(crate::Pc) -> Result<(), CudaError>,
) -> Result<(), CudaError> {
    let pc = owner.context.driver().pc();
    // The object's context is current (release_context). If the wait fails the object is
    // leaked (reported), never destroyed under a kernel.
    owner.context.driver().typed().cuCtxSynchronize()?;
    destroy(pc)
}

/// A kind of texture or surface object: an integer handle of its context, destroyed by
/// `$destroy` after the context's kernels (`release_object`).
macro_rules! object_kind {
    ($(#[$doc:meta])* $kind:ident: $raw:ty = $name:literal, $destroy:ident) => {
        kind!(
            $(#[$doc])*
            $kind: $raw = $name, owner ObjectOwner, driver |o| o.context.driver(), release {
                fn release_call(_: &ObjectOwner, _: Ownership) -> Call {
                    call::$destroy
                }
                fn release_context(owner: &ObjectOwner) -> Option<CUcontext> {
                    Some(owner.context.as_raw())
                }
                unsafe fn release(owner: &ObjectOwner, raw: $raw, _: Ownership) -> Result<(), CudaError> {
                    // SAFETY: released once, from the last clone, after its context's kernels.
                    unsafe { release_object(owner, |pc| pc.$destroy(raw)) }
                }
            }
        );
    };
}

/// What texture and surface objects answer alike (inside the `impl`): their context, and
/// their resource as the driver reports it through `$get_resource`.
macro_rules! object_queries {
    ($get_resource:ident) => {
        /// The context it belongs to.
        pub fn context(&self) -> &Context {
            &self.0.owner().context
        }

        #[doc = concat!("Its resource, as the driver reports it (`", stringify!($get_resource), "`).")]
        pub fn resource_desc(&self) -> Result<ResourceDesc, Error> {
            let d = self.0.owner().read(|t| t.$get_resource(self.live()))?;
            Ok(ResourceDesc::from_raw(&d))
        }
    };
}

object_kind!(
    /// The kind of a texture object.
    TextureKind: CUtexObject = "TextureObject", cuTexObjectDestroy
);
object_kind!(
    /// The kind of a surface object.
    SurfaceKind: CUsurfObject = "SurfaceObject", cuSurfObjectDestroy
);

/// A texture object (`cuTexObjectCreate`): what a kernel's `tex1D`/`tex2D`/`tex3D` reads.
/// Clones share it; the last one destroys it (`cuTexObjectDestroy`, after its context's
/// kernels). It keeps the array or allocation it reads alive.
#[derive(Clone)]
pub struct TextureObject(pub(crate) Handle<TextureKind>);
handle_type!(TextureObject: TextureKind => CUtexObject);

/// A surface object (`cuSurfObjectCreate`) over an array made with
/// [`ArrayFlags::SURFACE_LDST`]: what a kernel's `surf2Dread`/`surf2Dwrite` use. Clones
/// share it; the last one destroys it (`cuSurfObjectDestroy`, after its context's
/// kernels). It keeps its array alive.
#[derive(Clone)]
pub struct SurfaceObject(pub(crate) Handle<SurfaceKind>);
handle_type!(SurfaceObject: SurfaceKind => CUsurfObject);

impl TextureObject {
    /// Creates a texture object reading `resource` as `desc` says, in the resource's
    /// context (`cuTexObjectCreate`, no resource view). On error nothing is created.
    pub fn new(resource: &TextureResource, desc: &TextureDesc) -> Result<TextureObject, Error> {
        let context = resource.context();
        let (res, tex, pc) = (resource.to_raw(), desc.to_raw(), context.driver().pc());
        let owner = ObjectOwner { context: context.clone(), keep: resource.keep.clone() };
        let handle = Handle::create_out(owner, context.as_raw(), |raw| {
            // SAFETY: valid descriptors; the resource is live (its handle is held).
            unsafe { pc.cuTexObjectCreate(raw, &res, &tex, std::ptr::null()) }
        })?;
        Ok(TextureObject(handle))
    }

    object_queries!(cuTexObjectGetResourceDesc);

    /// How it reads, as the driver reports it (`cuTexObjectGetTextureDesc`). Driver 580
    /// reports the border colour as zeros whatever it was made with (docs/driver-facts.md).
    pub fn texture_desc(&self) -> Result<TextureDesc, Error> {
        let d = self.0.owner().read(|t| t.cuTexObjectGetTextureDesc(self.live()))?;
        Ok(TextureDesc::from_raw(&d))
    }
}

impl SurfaceObject {
    /// Creates a surface object over `array` (`cuSurfObjectCreate`). An array made without
    /// [`ArrayFlags::SURFACE_LDST`] is refused before any driver call. On error nothing is
    /// created.
    pub fn new(array: &Array) -> Result<SurfaceObject, Error> {
        if !array.desc().flags.contains(ArrayFlags::SURFACE_LDST) {
            let why = "the array was not made with ArrayFlags::SURFACE_LDST";
            return Err(InvalidArgument::new("SurfaceObject::new", why).into());
        }
        let context = array.context();
        let res = TextureResource::array(array).to_raw();
        let pc = context.driver().pc();
        let owner = ObjectOwner { context: context.clone(), keep: Keep::Array(array.clone()) };
        let handle = Handle::create_out(owner, context.as_raw(), |raw| {
            // SAFETY: a valid descriptor of a live array.
            unsafe { pc.cuSurfObjectCreate(raw, &res) }
        })?;
        Ok(SurfaceObject(handle))
    }

    object_queries!(cuSurfObjectGetResourceDesc);
}

/// The allocation an object over device memory reads (a launch records its use).
fn memory_use(owner: &ObjectOwner) -> Option<ArgUse<'_>> {
    match &owner.keep {
        Keep::Memory(m) => Some(ArgUse(m)),
        Keep::Array(_) => None,
    }
}

// SAFETY: the parameter is the 8-byte handle, kept in the object's core while it lives.
unsafe impl KernelArg for TextureObject {
    fn param(&self) -> *mut c_void {
        (self.0.raw_ref() as *const u64).cast_mut().cast()
    }
    fn memory_use(&self) -> Option<ArgUse<'_>> {
        memory_use(self.0.owner())
    }
    fn param_size(&self) -> usize {
        size_of::<CUtexObject>()
    }
    fn param_context(&self) -> Option<&Context> {
        Some(self.context())
    }
}

// SAFETY: the parameter is the 8-byte surface handle, kept in the object's core while it
// lives.
unsafe impl KernelArg for SurfaceObject {
    fn param(&self) -> *mut c_void {
        (self.0.raw_ref() as *const u64).cast_mut().cast()
    }
    fn param_size(&self) -> usize {
        size_of::<CUsurfObject>()
    }
    fn param_context(&self) -> Option<&Context> {
        Some(self.context())
    }
}
