//! The state of the driver's legacy (deprecated) entry points: each function's launch
//! configuration (`cuFuncSetBlockShape`, `cuFuncSetSharedSize`, `cuParamSet*`), texture
//! references (`cuTexRefCreate`, `cuModuleGetTexRef`), surface references
//! (`cuModuleGetSurfRef`) and contexts' attach counts (`cuCtxAttach`).

use std::collections::BTreeMap;

use cudrv::sys::{CUaddress_mode, CUarray_format, CUresult};

use crate::model::handles::{self, Registry};

/// The bytes a legacy parameter buffer holds (`cuParamSetSize`, the end of what a
/// `cuParamSet*` writes): the 32764 bytes a kernel's parameters may take since CUDA 12.1
/// (driver 580.159.04: conformance `legacy_launch.param_set_size_limits`, 32764 accepted
/// and 32768 not; docs/driver-facts.md, issue 29).
pub(crate) const PARAM_BUFFER_BYTES: usize = 32764;

/// A function's launch configuration, as the legacy calls set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LaunchConfig {
    /// `cuFuncSetBlockShape` (1 x 1 x 1 until set: driver 580.159.04 launches one thread
    /// per block then, docs/driver-facts.md).
    pub(crate) block: [u32; 3],
    /// `cuFuncSetSharedSize`.
    pub(crate) shared: u32,
    /// `cuParamSetSize`.
    pub(crate) size: usize,
    /// The bytes set by `cuParamSeti`/`f`/`v` (grown as they write).
    pub(crate) buffer: Vec<u8>,
}

impl Default for LaunchConfig {
    /// A block of one thread, no dynamic shared memory, no parameters.
    fn default() -> LaunchConfig {
        LaunchConfig { block: [1; 3], shared: 0, size: 0, buffer: Vec::new() }
    }
}

impl LaunchConfig {
    /// Writes `bytes` at `offset` of the parameter buffer: CUDA_ERROR_INVALID_VALUE (and
    /// nothing written) for an end past [`PARAM_BUFFER_BYTES`] or a negative offset. No
    /// bytes is no write and always succeeds (driver 580.159.04 takes any offset then).
    /// The real driver crashes (SIGSEGV) writing bytes at a negative offset; this answers
    /// CUDA_ERROR_INVALID_VALUE instead.
    pub(crate) fn set_bytes(&mut self, offset: i32, bytes: &[u8]) -> Result<(), CUresult> {
        let invalid = CUresult::CUDA_ERROR_INVALID_VALUE;
        if bytes.is_empty() {
            return Ok(());
        }
        let start = usize::try_from(offset).map_err(|_| invalid)?;
        let end = start.checked_add(bytes.len()).filter(|&e| e <= PARAM_BUFFER_BYTES).ok_or(invalid)?;
        if self.buffer.len() < end {
            self.buffer.resize(end, 0);
        }
        self.buffer.get_mut(start..end).ok_or(invalid)?.copy_from_slice(bytes);
        Ok(())
    }

    /// The parameter bytes a launch passes to a kernel whose parameters take `kernel`
    /// bytes: the first `size` bytes of the buffer, then zeros up to `kernel` (a kernel
    /// reads a parameter past the size as 0: driver 580.159.04).
    pub(crate) fn params(&self, kernel: usize) -> Vec<u8> {
        let mut b = self.buffer.clone();
        b.resize(self.size, 0);
        if b.len() < kernel {
            b.resize(kernel, 0);
        }
        b
    }
}

/// What a texture reference reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Binding {
    /// Nothing bound yet.
    #[default]
    None,
    /// Linear memory (`cuTexRefSetAddress`).
    Linear { ptr: u64, bytes: usize },
    /// Pitched memory (`cuTexRefSetAddress2D`).
    Pitch2D { ptr: u64, width: usize, height: usize, pitch: usize },
    /// A CUDA array (`cuTexRefSetArray`).
    Array(u64),
    /// A mipmapped array (`cuTexRefSetMipmappedArray`).
    Mipmap(u64),
}

/// One texture reference: what it reads and how. A new one (`cuTexRefCreate`, or a
/// module's) reads back as driver 580.159.04 answers (conformance `texref.create_defaults`,
/// `texref.module_get_texref`): one `CU_AD_FORMAT_FLOAT` channel, `CU_TR_ADDRESS_MODE_CLAMP`
/// in every dimension, and every other setting 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TexRef {
    pub(crate) binding: Binding,
    pub(crate) format: CUarray_format,
    pub(crate) channels: i32,
    pub(crate) address_mode: [u32; 3],
    pub(crate) filter_mode: u32,
    pub(crate) mipmap_filter_mode: u32,
    pub(crate) mipmap_level_bias: f32,
    pub(crate) mipmap_level_clamp: [f32; 2],
    pub(crate) max_anisotropy: u32,
    pub(crate) flags: u32,
    pub(crate) border_color: [f32; 4],
    /// The module that declares it (`cuModuleGetTexRef`), `None` for `cuTexRefCreate`'s.
    pub(crate) module: Option<u64>,
}

impl TexRef {
    /// A reference with nothing bound and the settings of a new one.
    pub(crate) fn new(module: Option<u64>) -> TexRef {
        TexRef {
            binding: Binding::None,
            format: CUarray_format::CU_AD_FORMAT_FLOAT,
            channels: 1,
            address_mode: [CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP.0; 3],
            filter_mode: 0,
            mipmap_filter_mode: 0,
            mipmap_level_bias: 0.0,
            mipmap_level_clamp: [0.0; 2],
            max_anisotropy: 0,
            flags: 0,
            border_color: [0.0; 4],
            module,
        }
    }
}

/// One surface reference (a module's `.surfref`): the array bound to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SurfRef {
    pub(crate) array: Option<u64>,
    pub(crate) module: u64,
}

/// A world's legacy state.
pub(crate) struct Legacy {
    /// Each function's launch configuration, by function handle.
    pub(crate) launch: BTreeMap<u64, LaunchConfig>,
    /// Texture references (created, and those of modules).
    pub(crate) texrefs: Registry<TexRef>,
    /// Surface references of modules.
    pub(crate) surfrefs: Registry<SurfRef>,
    /// The handle of each module reference asked for: (module, surface?, name).
    pub(crate) module_refs: BTreeMap<(u64, bool, String), u64>,
    /// The usage count each context gained through `cuCtxAttach`, by context.
    pub(crate) attached: BTreeMap<u64, u32>,
}

impl Legacy {
    /// None.
    pub(crate) const fn new() -> Legacy {
        Legacy {
            launch: BTreeMap::new(),
            texrefs: Registry::new("texture reference", CUresult::CUDA_ERROR_INVALID_HANDLE),
            surfrefs: Registry::new("surface reference", CUresult::CUDA_ERROR_INVALID_HANDLE),
            module_refs: BTreeMap::new(),
            attached: BTreeMap::new(),
        }
    }

    /// The handle of reference `name` of `module` (`surface`: a surface reference), made
    /// on the first call; the same handle afterwards.
    pub(crate) fn module_ref(&mut self, module: u64, surface: bool, name: &str) -> u64 {
        let key = (module, surface, name.to_string());
        if let Some(&h) = self.module_refs.get(&key) {
            return h;
        }
        let h = handles::fresh();
        if surface {
            self.surfrefs.insert_at(h, SurfRef { array: None, module });
        } else {
            self.texrefs.insert_at(h, TexRef::new(Some(module)));
        }
        self.module_refs.insert(key, h);
        h
    }

    /// Forgets the references of `module` (it was unloaded) and the launch
    /// configurations of functions that are gone.
    pub(crate) fn unload_module(&mut self, module: u64) {
        let gone: Vec<(u64, bool, String)> = self.module_refs.keys().filter(|k| k.0 == module).cloned().collect();
        for k in gone {
            if let Some(h) = self.module_refs.remove(&k) {
                let _ = if k.1 { self.surfrefs.remove(h).map(|_| ()) } else { self.texrefs.remove(h).map(|_| ()) };
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test fails by panicking
mod tests {
    use super::*;

    #[test]
    fn parameters_are_written_at_their_offsets_and_cut_to_the_size() {
        let mut c = LaunchConfig::default();
        c.set_bytes(8, &7u32.to_le_bytes()).unwrap();
        c.set_bytes(0, &[1, 2]).unwrap();
        c.size = 12;
        assert_eq!(c.params(0), [1, 2, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0]);
        c.size = 4;
        assert_eq!(c.params(0), [1, 2, 0, 0]);
        // Past the size, a kernel reads zeros (not the bytes set there).
        assert_eq!(c.params(12), [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(c.set_bytes(-1, &[0]), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(c.set_bytes(PARAM_BUFFER_BYTES as i32 - 3, &[0; 4]), Err(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert_eq!(c.set_bytes(PARAM_BUFFER_BYTES as i32 - 4, &[0; 4]), Ok(()));
        // No bytes: any offset (driver 580.159.04).
        assert_eq!(c.set_bytes(-1, &[]), Ok(()));
        assert_eq!(c.set_bytes(40000, &[]), Ok(()));
    }

    #[test]
    fn a_new_configuration_is_one_thread_and_a_new_reference_one_float_clamped() {
        assert_eq!(LaunchConfig::default().block, [1, 1, 1]);
        let t = TexRef::new(None);
        assert_eq!((t.format, t.channels, t.address_mode), (CUarray_format::CU_AD_FORMAT_FLOAT, 1, [1; 3]));
    }

    #[test]
    fn a_module_reference_keeps_its_handle_until_the_module_goes() {
        let mut l = Legacy::new();
        let t = l.module_ref(5, false, "t");
        assert_eq!(l.module_ref(5, false, "t"), t);
        let s = l.module_ref(5, true, "t");
        assert_ne!(s, t);
        assert_eq!(l.texrefs.get(t).unwrap().module, Some(5));
        l.unload_module(5);
        assert!(l.texrefs.get(t).is_err());
        assert!(l.surfrefs.get(s).is_err());
    }
}
