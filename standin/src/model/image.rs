//! The images the stand-in loads: its fake image format (see [`FAKE_IMAGE_MAGIC`]), and
//! PTX text whose every `.entry` has a host implementation (`kernels.rs`). Cubins and
//! fatbins are refused.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::model::ptx;
use crate::run::kernels::{self, HostKernel};

/// The name of the kernel of a fake image that faults: launching it makes its context
/// sticky-failed with CUDA_ERROR_ILLEGAL_ADDRESS, as a kernel's illegal access does.
pub const FAULT_KERNEL: &str = "fault";

/// The first line of every fake image.
///
/// A fake image is NUL-terminated text: this line, then one line per symbol,
/// `kernel NAME` or `global NAME SIZE` (blank lines are ignored):
///
/// ```text
/// cudrv-fake-image
/// kernel add
/// kernel fault
/// global counter 4
/// ```
///
/// `cuModuleLoadData`, `cuModuleLoadDataEx`, `cuLibraryLoadData` and `cuLinkAddData`
/// accept it (with any `CU_JIT_INPUT_*` type); the first three also accept PTX text whose
/// kernels all have host implementations ([`crate::register_kernel`]); anything else is
/// CUDA_ERROR_INVALID_IMAGE. `cuLinkComplete` returns one holding every kernel added. The
/// kernels of a fake image run nothing, except that launching one named
/// [`FAULT_KERNEL`] makes its context sticky-failed. [`fake_image`] makes one.
pub const FAKE_IMAGE_MAGIC: &str = "cudrv-fake-image";

/// A host implementation bound to an image (compared by identity).
#[derive(Clone)]
pub(crate) struct Code(pub(crate) Arc<HostKernel>);

impl PartialEq for Code {
    fn eq(&self, other: &Code) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Code {}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The symbols of an image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Image {
    /// Kernel names, in order, without duplicates.
    pub(crate) kernels: Vec<String>,
    /// Global variables and their sizes.
    pub(crate) globals: Vec<(String, usize)>,
    /// The host implementation of each kernel of a PTX image (none for a fake image).
    pub(crate) code: BTreeMap<String, Code>,
}

impl Image {
    /// Parses image text (without its NUL).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Image, CUresult> {
        let bad = CUresult::CUDA_ERROR_INVALID_IMAGE;
        let text = std::str::from_utf8(bytes).map_err(|_| bad)?;
        let mut lines = text.lines();
        if lines.next().map(str::trim_end) != Some(FAKE_IMAGE_MAGIC) {
            return Err(bad);
        }
        let mut image = Image::default();
        for line in lines {
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => {}
                ["kernel", name] => image.add_kernel(name),
                ["global", name, size] => {
                    let size = size.parse().map_err(|_| bad)?;
                    image.globals.push(((*name).to_string(), size));
                }
                _ => return Err(bad),
            }
        }
        Ok(image)
    }

    /// Reads and parses the NUL-terminated image at `p`: a fake image, or PTX text whose
    /// every `.entry` has a host implementation with the parameter sizes the PTX declares
    /// (CUDA_ERROR_INVALID_IMAGE otherwise). Bytes are read only while they are text (no
    /// control character but white space), so a binary image (a cubin, a fatbin) is left
    /// after its first few bytes.
    ///
    /// # Safety
    /// `p` is null or points to readable memory up to a NUL byte or up to its first byte
    /// that is a control character other than white space.
    pub(crate) unsafe fn read(p: *const c_void) -> Result<Image, CUresult> {
        if p.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let p = p.cast::<u8>();
        let mut len = 0usize;
        loop {
            // SAFETY: every byte before this one was text other than NUL, so the caller's
            // buffer goes on.
            match unsafe { *p.add(len) } {
                0 => break,
                b'\t' | b'\n' | b'\r' | 0x0c => {}
                b if b < 0x20 || b == 0x7f => return Err(CUresult::CUDA_ERROR_INVALID_IMAGE),
                _ => {}
            }
            len = len.checked_add(1).ok_or(CUresult::CUDA_ERROR_INVALID_IMAGE)?;
        }
        // SAFETY: the `len` bytes just read.
        let bytes = unsafe { std::slice::from_raw_parts(p, len) };
        Image::parse_any(bytes)
    }

    /// A fake image, or PTX with host implementations (see [`Image::read`]).
    fn parse_any(bytes: &[u8]) -> Result<Image, CUresult> {
        let bad = CUresult::CUDA_ERROR_INVALID_IMAGE;
        let text = std::str::from_utf8(bytes).map_err(|_| bad)?;
        if text.lines().next().map(str::trim_end) == Some(FAKE_IMAGE_MAGIC) {
            return Image::parse(bytes);
        }
        let entries = ptx::entries(text).ok_or(bad)?;
        let mut image = Image::default();
        for e in entries {
            let code = kernels::find(&e.name).ok_or(bad)?;
            if e.param_sizes.as_ref().is_some_and(|sizes| *sizes != code.param_sizes()) {
                return Err(bad);
            }
            image.add_kernel(&e.name);
            image.code.insert(e.name, Code(code));
        }
        Ok(image)
    }

    fn add_kernel(&mut self, name: &str) {
        if !self.kernels.iter().any(|k| k == name) {
            self.kernels.push(name.to_string());
        }
    }

    /// Adds another image's symbols (linking).
    pub(crate) fn merge(&mut self, other: Image) {
        for k in &other.kernels {
            self.add_kernel(k);
        }
        self.globals.extend(other.globals);
    }

    /// The image as NUL-terminated text.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut text = format!("{FAKE_IMAGE_MAGIC}\n");
        for k in &self.kernels {
            text.push_str(&format!("kernel {k}\n"));
        }
        for (g, size) in &self.globals {
            text.push_str(&format!("global {g} {size}\n"));
        }
        let mut bytes = text.into_bytes();
        bytes.push(0);
        bytes
    }
}

/// A fake image with these kernels, NUL-terminated: what tests pass to
/// `cuModuleLoadData`, `cuLibraryLoadData` and `cuLinkAddData`.
pub fn fake_image(kernels: &[&str]) -> Vec<u8> {
    Image { kernels: kernels.iter().map(|k| (*k).to_string()).collect(), ..Image::default() }.to_bytes()
}
