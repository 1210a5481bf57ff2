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
/// `kernel NAME`, `kernel NAME params SIZE...` (a kernel whose parameters, of these
/// sizes, each aligned as its size up to 8, `cuFuncGetParamInfo` reports; without
/// `params` it answers CUDA_ERROR_NOT_SUPPORTED), `global NAME SIZE` or
/// `managed NAME SIZE` (a managed global, for `cuLibraryGetManaged`); blank lines are
/// ignored:
///
/// ```text
/// cudrv-fake-image
/// kernel add params 8 4
/// kernel fault
/// global counter 4
/// ```
///
/// `cuModuleLoadData`, `cuModuleLoadDataEx`, `cuLibraryLoadData` and `cuLinkAddData`
/// accept it (with any `CU_JIT_INPUT_*` type), and PTX text whose kernels all have host
/// implementations ([`crate::register_kernel`]); PTX with an instruction that is not a PTX
/// instruction is CUDA_ERROR_INVALID_PTX, anything else CUDA_ERROR_INVALID_IMAGE (each with
/// an error log saying why). `cuLinkComplete` returns one holding every kernel added. The
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

/// Why an image was refused: the status, and the JIT error log that says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) code: CUresult,
    pub(crate) log: String,
}

impl Refused {
    fn new(code: CUresult, log: impl Into<String>) -> Refused {
        Refused { code, log: log.into() }
    }

    fn image(log: impl Into<String>) -> Refused {
        Refused::new(CUresult::CUDA_ERROR_INVALID_IMAGE, log)
    }
}

impl From<Refused> for CUresult {
    fn from(r: Refused) -> CUresult {
        r.code
    }
}

/// A global variable of an image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Global {
    pub(crate) name: String,
    pub(crate) size: usize,
    /// A `__managed__` variable.
    pub(crate) managed: bool,
    /// Its initial bytes (the rest is zero).
    pub(crate) init: Vec<u8>,
}

/// The symbols of an image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Image {
    /// Kernel names, in order, without duplicates.
    pub(crate) kernels: Vec<String>,
    /// The offset and size of each parameter of a kernel, where the image says.
    pub(crate) params: BTreeMap<String, Vec<(usize, usize)>>,
    /// Global variables.
    pub(crate) globals: Vec<Global>,
    /// The host implementation of each kernel of a PTX image (none for a fake image).
    pub(crate) code: BTreeMap<String, Code>,
}

/// The layout of parameters of these sizes, each aligned as its size (up to 8).
fn natural_layout(sizes: &[usize]) -> Option<Vec<(usize, usize)>> {
    let mut offset = 0usize;
    let mut out = Vec::with_capacity(sizes.len());
    for &size in sizes {
        let align = size.clamp(1, 8).next_power_of_two().min(8);
        offset = offset.checked_next_multiple_of(align)?;
        out.push((offset, size));
        offset = offset.checked_add(size)?;
    }
    Some(out)
}

impl Image {
    /// Parses fake image text (without its NUL).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Image, Refused> {
        let text = std::str::from_utf8(bytes).map_err(|_| Refused::image("the image is not text"))?;
        let mut lines = text.lines();
        if lines.next().map(str::trim_end) != Some(FAKE_IMAGE_MAGIC) {
            return Err(Refused::image("not a stand-in fake image, nor PTX"));
        }
        let mut image = Image::default();
        for (i, line) in lines.enumerate() {
            let bad = || Refused::image(format!("fake image, line {}: cannot read {line:?}", i + 2));
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => {}
                ["kernel", name] => image.add_kernel(name),
                ["kernel", name, "params", sizes @ ..] => {
                    let sizes: Vec<usize> =
                        sizes.iter().map(|s| s.parse()).collect::<Result<_, _>>().map_err(|_| bad())?;
                    image.add_kernel(name);
                    image.params.insert((*name).to_string(), natural_layout(&sizes).ok_or_else(bad)?);
                }
                // A kernel a link took from PTX with a host implementation: bound again by
                // name (the implementation registered now).
                ["host", name] => {
                    if let Some(code) = kernels::find(name) {
                        image.code.insert((*name).to_string(), Code(code));
                    }
                }
                [kind @ ("global" | "managed"), name, size] => {
                    let size = size.parse().map_err(|_| bad())?;
                    let managed = *kind == "managed";
                    image.globals.push(Global { name: (*name).to_string(), size, managed, init: Vec::new() });
                }
                _ => return Err(bad()),
            }
        }
        Ok(image)
    }

    /// Reads and parses the NUL-terminated image at `p`: a fake image, or PTX text whose
    /// every `.entry` has a host implementation with the parameter sizes the PTX declares
    /// (CUDA_ERROR_INVALID_IMAGE otherwise; CUDA_ERROR_INVALID_PTX for PTX with an
    /// instruction that is not one). Bytes are read only while they are text (no
    /// control character but white space), so a binary image (a cubin, a fatbin) is left
    /// after its first few bytes.
    ///
    /// # Safety
    /// `p` is null or points to readable memory up to a NUL byte or up to its first byte
    /// that is a control character other than white space.
    pub(crate) unsafe fn read(p: *const c_void) -> Result<Image, Refused> {
        if p.is_null() {
            return Err(Refused::new(CUresult::CUDA_ERROR_INVALID_VALUE, ""));
        }
        let binary = || Refused::image("a binary image (cubin or fatbin): the stand-in loads only text");
        let p = p.cast::<u8>();
        let mut len = 0usize;
        loop {
            // SAFETY: every byte before this one was text other than NUL, so the caller's
            // buffer goes on.
            match unsafe { *p.add(len) } {
                0 => break,
                b'\t' | b'\n' | b'\r' | 0x0c => {}
                b if b < 0x20 || b == 0x7f => return Err(binary()),
                _ => {}
            }
            len = len.checked_add(1).ok_or_else(binary)?;
        }
        // SAFETY: the `len` bytes just read.
        let bytes = unsafe { std::slice::from_raw_parts(p, len) };
        Image::parse_any(bytes)
    }

    /// A fake image, or PTX with host implementations (see [`Image::read`]).
    pub(crate) fn parse_any(bytes: &[u8]) -> Result<Image, Refused> {
        let text = std::str::from_utf8(bytes).map_err(|_| Refused::image("the image is not text"))?;
        if text.lines().next().map(str::trim_end) == Some(FAKE_IMAGE_MAGIC) {
            return Image::parse(bytes);
        }
        let entries = ptx::entries(text).ok_or_else(|| Refused::image("not a stand-in fake image, nor PTX"))?;
        let mut image = Image::default();
        for e in entries {
            let Some(code) = kernels::find(&e.name) else {
                if let Some((line, word)) = ptx::unknown_instruction(text) {
                    return Err(Refused::new(
                        CUresult::CUDA_ERROR_INVALID_PTX,
                        format!(
                            "ptxas application ptx input, line {line}; error   : Not a name of any known \
                             instruction: '{word}'\nptxas fatal   : Ptx assembly aborted due to errors"
                        ),
                    ));
                }
                return Err(Refused::image(format!(
                    "cudrv stand-in: kernel '{}' has no host implementation (see cudrv_standin::register_kernel)",
                    e.name
                )));
            };
            if e.param_sizes.as_ref().is_some_and(|sizes| *sizes != code.param_sizes()) {
                return Err(Refused::image(format!(
                    "cudrv stand-in: kernel '{}' declares parameters of {:?} bytes, its host implementation {:?}",
                    e.name,
                    e.param_sizes.unwrap_or_default(),
                    code.param_sizes()
                )));
            }
            image.add_kernel(&e.name);
            if let Some(layout) = e.layout {
                image.params.insert(e.name.clone(), layout);
            }
            image.code.insert(e.name, Code(code));
        }
        image.globals = ptx::globals(text)
            .into_iter()
            .map(|g| Global { name: g.name, size: g.size, managed: g.managed, init: g.init })
            .collect();
        Ok(image)
    }

    /// The info log of loading this image with `CU_JIT_LOG_VERBOSE` (or without).
    pub(crate) fn info_log(&self, verbose: bool) -> String {
        if !verbose {
            return String::new();
        }
        let mut log = String::new();
        for k in &self.kernels {
            log.push_str(&format!("ptxas info    : Compiling entry function '{k}' for 'sm_90' (cudrv stand-in)\n"));
        }
        let gmem: usize = self.globals.iter().map(|g| g.size).sum();
        log.push_str(&format!("ptxas info    : {gmem} bytes gmem\n"));
        log
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
        self.params.extend(other.params);
        self.code.extend(other.code);
        for g in other.globals {
            if !self.globals.iter().any(|h| h.name == g.name) {
                self.globals.push(g);
            }
        }
    }

    /// The image as NUL-terminated text.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut text = format!("{FAKE_IMAGE_MAGIC}\n");
        for k in &self.kernels {
            match self.params.get(k) {
                Some(layout) => {
                    let sizes: Vec<String> = layout.iter().map(|(_, size)| size.to_string()).collect();
                    text.push_str(&format!("kernel {k} params {}\n", sizes.join(" ")));
                }
                None => text.push_str(&format!("kernel {k}\n")),
            }
            if self.code.contains_key(k) {
                text.push_str(&format!("host {k}\n"));
            }
        }
        for g in &self.globals {
            let kind = if g.managed { "managed" } else { "global" };
            text.push_str(&format!("{kind} {} {}\n", g.name, g.size));
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
