//! The images the stand-in loads: its fake image format (see [`FAKE_IMAGE_MAGIC`]), and
//! PTX text, whose kernels run on the PTX executor (`cudrv-ptx`) unless a host
//! implementation of the same name is registered (`kernels.rs`: a registered name wins);
//! a fatbin runs its PTX (`fatbin.rs`). An image with no PTX (a cubin, a fatbin of machine
//! code only) is refused with CUDA_ERROR_NO_BINARY_FOR_GPU and a log saying why.
//!
//! PTX is gated as the emulated driver's JIT gates it (`ptx.rs`): a `.version` newer than
//! the driver's PTX ISA is CUDA_ERROR_UNSUPPORTED_PTX_VERSION, a `.target` above the
//! device's sm_90 CUDA_ERROR_INVALID_PTX. PTX the executor cannot load (a parse error, an
//! instruction outside what it runs) is CUDA_ERROR_INVALID_PTX with an error log naming
//! the line and the instruction, unless every kernel of it has a host implementation.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudrv::sys::CUresult;

use crate::model::device::DEVICE_CC;
use crate::model::{fatbin, ptx};
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

/// PTX the executor runs: the loaded module, shared by every module and library made from
/// the image (each binds its own globals at launch), and its text (a link's output
/// carries it).
#[derive(Clone)]
pub(crate) struct Ptx {
    pub(crate) module: Arc<cudrv_ptx::Module>,
    pub(crate) text: Arc<str>,
}

impl PartialEq for Ptx {
    fn eq(&self, other: &Ptx) -> bool {
        Arc::ptr_eq(&self.module, &other.module)
    }
}

impl Eq for Ptx {}

impl fmt::Debug for Ptx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ptx").field("kernels", &self.module.kernels()).finish_non_exhaustive()
    }
}

/// What runs a kernel of an image (compared by identity).
#[derive(Clone, Debug)]
pub(crate) enum Code {
    /// A registered host implementation.
    Host(Arc<HostKernel>),
    /// The PTX executor, with part `usize` of the image's PTX ([`Image::ptx`]).
    Ptx(usize),
}

impl PartialEq for Code {
    fn eq(&self, other: &Code) -> bool {
        match (self, other) {
            (Code::Host(a), Code::Host(b)) => Arc::ptr_eq(a, b),
            (Code::Ptx(a), Code::Ptx(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Code {}

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

impl From<fatbin::Unusable> for Refused {
    fn from(u: fatbin::Unusable) -> Refused {
        Refused { code: u.code, log: u.log }
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
    /// Initialiser items that are other globals' addresses: (byte offset in `init`, the
    /// global's name, added offset).
    pub(crate) relocations: Vec<(usize, String, i64)>,
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
    /// What runs each kernel of a PTX image (none for a fake image).
    pub(crate) code: BTreeMap<String, Code>,
    /// The PTX modules the executor runs (one per PTX text; a link may add several).
    pub(crate) ptx: Vec<Ptx>,
    /// Texture references (`.global .texref NAME;`), for `cuModuleGetTexRef`.
    pub(crate) texrefs: Vec<String>,
    /// Surface references (`.global .surfref NAME;`), for `cuModuleGetSurfRef`.
    pub(crate) surfrefs: Vec<String>,
}

/// A size or offset `cudrv-ptx` gives (64 bits) as a `usize` (saturating: it always fits
/// on the 64-bit hosts the stand-in runs on).
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
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
    /// Parses fake image text (without its NUL). A line `ptx LEN` is followed by a PTX
    /// text of LEN bytes (a link's output carries the PTX it linked), parsed without
    /// version gating (it was gated when it was added).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Image, Refused> {
        let text = std::str::from_utf8(bytes).map_err(|_| Refused::image("the image is not text"))?;
        let mut rest = text;
        let next_line = |rest: &mut &str| -> Option<String> {
            if rest.is_empty() {
                return None;
            }
            let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
            *rest = after;
            Some(line.trim_end().to_string())
        };
        if next_line(&mut rest).as_deref() != Some(FAKE_IMAGE_MAGIC) {
            return Err(Refused::image("not a stand-in fake image, nor PTX"));
        }
        let mut image = Image::default();
        let mut number = 1;
        while let Some(line) = next_line(&mut rest) {
            number += 1;
            let bad = || Refused::image(format!("fake image, line {number}: cannot read {line:?}"));
            match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => {}
                ["ptx", len] => {
                    let len: usize = len.parse().map_err(|_| bad())?;
                    let ptx = rest.get(..len).ok_or_else(bad)?;
                    rest = rest.get(len..).unwrap_or("");
                    number += ptx.lines().count();
                    image.merge(Image::parse_ptx(ptx, None)?);
                }
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
                        image.code.insert((*name).to_string(), Code::Host(code));
                    }
                }
                [kind @ ("global" | "managed"), name, size] => {
                    let size = size.parse().map_err(|_| bad())?;
                    let managed = *kind == "managed";
                    let name = (*name).to_string();
                    if !image.globals.iter().any(|g| g.name == name) {
                        image.globals.push(Global { name, size, managed, init: Vec::new(), relocations: Vec::new() });
                    }
                }
                _ => return Err(bad()),
            }
        }
        Ok(image)
    }

    /// Reads and parses the NUL-terminated image at `p`: a fake image, or PTX text (see
    /// [`Image::parse_any`]; `max_isa` is the emulated driver's newest PTX ISA). Bytes are
    /// read only while they are text (no control character but white space), so a binary
    /// image (a cubin, a fatbin) is left after its first few bytes.
    ///
    /// # Safety
    /// `p` is null or points to readable memory up to a NUL byte or up to its first byte
    /// that is a control character other than white space.
    pub(crate) unsafe fn read(p: *const c_void, max_isa: (u32, u32)) -> Result<Image, Refused> {
        if p.is_null() {
            return Err(Refused::new(CUresult::CUDA_ERROR_INVALID_VALUE, ""));
        }
        let p = p.cast::<u8>();
        // SAFETY: the caller's image, as this function's contract says.
        if let Some(binary) = unsafe { read_binary(p) } {
            return Image::from_bytes(&binary?, max_isa);
        }
        let binary = || Refused::image("a binary image the stand-in does not know (not a fatbin, nor a cubin)");
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
        Image::parse_any(bytes, max_isa)
    }

    /// An image read whole (from a file, or a fatbin from memory): a fatbin's PTX (see
    /// [`fatbin::ptx`]), a cubin refused, else a fake image or PTX text up to its first NUL
    /// ([`Image::parse_any`]).
    pub(crate) fn from_bytes(bytes: &[u8], max_isa: (u32, u32)) -> Result<Image, Refused> {
        if bytes.starts_with(&fatbin::FATBIN_MAGIC.to_le_bytes()) {
            let text = fatbin::ptx(bytes, device_arch()).map_err(Refused::from)?;
            return Image::parse_any(text.as_bytes(), max_isa);
        }
        if bytes.starts_with(&fatbin::ELF_MAGIC) {
            return Err(fatbin::cubin_refused().into());
        }
        let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
        Image::parse_any(text, max_isa)
    }

    /// A fake image, or PTX text gated for a driver whose newest PTX ISA is `max_isa`
    /// ([`ptx::gate`]) and loaded by [`Image::parse_ptx`].
    pub(crate) fn parse_any(bytes: &[u8], max_isa: (u32, u32)) -> Result<Image, Refused> {
        let text = std::str::from_utf8(bytes).map_err(|_| Refused::image("the image is not text"))?;
        if text.lines().next().map(str::trim_end) == Some(FAKE_IMAGE_MAGIC) {
            return Image::parse(bytes);
        }
        Image::parse_ptx(text, Some(max_isa))
    }

    /// PTX text (gated first when `max_isa` is given, [`ptx::gate`]): each kernel runs its
    /// registered host implementation if there is one (whose parameter sizes must be those
    /// the PTX declares: CUDA_ERROR_INVALID_IMAGE otherwise), else on the PTX executor.
    /// Kernels, parameter layouts, globals and references are what `cudrv-ptx` reads of the
    /// text: the loaded module's declarations, or, when the executor cannot load it (an
    /// instruction it does not run), [`cudrv_ptx::Declarations::read`] (the same front end,
    /// bodies not decoded). Such PTX is CUDA_ERROR_INVALID_PTX, with a log naming the line
    /// and the instruction, unless every kernel it declares has a host implementation; PTX
    /// the parser refuses declares nothing and is CUDA_ERROR_INVALID_PTX too.
    pub(crate) fn parse_ptx(text: &str, max_isa: Option<(u32, u32)>) -> Result<Image, Refused> {
        let header =
            cudrv_ptx::Header::read(text).ok_or_else(|| Refused::image("not a stand-in fake image, nor PTX"))?;
        if let Some((code, log)) = max_isa.and_then(|max| ptx::gate(&header, max)) {
            return Err(Refused::new(code, log));
        }
        if ptx::unsupported_suq(text) {
            // facts (H200, issue 29): suq other than width/height/depth: 801, empty log.
            return Err(Refused::new(CUresult::CUDA_ERROR_NOT_SUPPORTED, ""));
        }
        let hidden = ptx::kernels_with_unavailable_txq(text);
        // The same text loaded again (by any context or module of the process) while a
        // module of it lives is that module: translated and compiled once.
        let (module, error) = match cudrv_ptx::Module::load_shared(text) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        };
        let invalid_ptx = || Refused::new(CUresult::CUDA_ERROR_INVALID_PTX, refusal_log(error.as_ref()));
        let read;
        let decls = match &module {
            Some(m) => m.declarations(),
            None => {
                read = cudrv_ptx::Declarations::read(text).map_err(|_| invalid_ptx())?;
                &read
            }
        };
        let mut image = Image::default();
        if let Some(m) = &module {
            image.ptx.push(Ptx { module: Arc::clone(m), text: Arc::from(text) });
        }
        let ptx_part = module.as_ref().map(|_| 0);
        for k in &decls.kernels {
            if hidden.contains(&k.name) {
                // facts (H200, issue 29): the module loads; cuModuleGetFunction: 500.
                continue;
            }
            let layout: Vec<(usize, usize)> = k.params.iter().map(|p| (to_usize(p.offset), to_usize(p.size))).collect();
            let code = match (kernels::find(&k.name), ptx_part) {
                (Some(host), _) => {
                    let sizes: Vec<usize> = layout.iter().map(|&(_, size)| size).collect();
                    if sizes != host.param_sizes() {
                        return Err(Refused::image(format!(
                            "cudrv stand-in: kernel '{}' declares parameters of {sizes:?} bytes, its host implementation {:?}",
                            k.name,
                            host.param_sizes()
                        )));
                    }
                    Code::Host(host)
                }
                (None, Some(part)) => Code::Ptx(part),
                (None, None) => return Err(invalid_ptx()),
            };
            image.add_kernel(&k.name);
            image.params.insert(k.name.clone(), layout);
            image.code.insert(k.name.clone(), code);
        }
        for r in &decls.references {
            let list = match r.kind {
                cudrv_ptx::ReferenceKind::Texture => &mut image.texrefs,
                cudrv_ptx::ReferenceKind::Surface => &mut image.surfrefs,
                cudrv_ptx::ReferenceKind::Sampler => continue,
            };
            if !list.contains(&r.name) {
                list.push(r.name.clone());
            }
        }
        image.globals = decls
            .globals
            .iter()
            .map(|g| Global {
                name: g.name.clone(),
                size: to_usize(g.size),
                managed: g.managed,
                init: g.init.clone(),
                relocations: g
                    .relocations
                    .iter()
                    .filter_map(|&(off, target, add)| {
                        let target = decls.globals.get(usize::try_from(target).ok()?)?.name.clone();
                        Some((usize::try_from(off).ok()?, target, add))
                    })
                    .collect(),
            })
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

    /// Adds another image's symbols, code and PTX (linking). A kernel or global already
    /// here keeps its first definition.
    pub(crate) fn merge(&mut self, other: Image) {
        let offset = self.ptx.len();
        for k in &other.kernels {
            self.add_kernel(k);
        }
        for (k, layout) in other.params {
            self.params.entry(k).or_insert(layout);
        }
        for (k, code) in other.code {
            let code = match code {
                Code::Ptx(i) => Code::Ptx(i + offset),
                host => host,
            };
            self.code.entry(k).or_insert(code);
        }
        self.ptx.extend(other.ptx);
        for g in other.globals {
            if !self.globals.iter().any(|h| h.name == g.name) {
                self.globals.push(g);
            }
        }
    }

    /// The image as NUL-terminated text: its PTX texts (`ptx LEN` and the text), then its
    /// kernels and globals.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut text = format!("{FAKE_IMAGE_MAGIC}\n");
        for p in &self.ptx {
            text.push_str(&format!("ptx {}\n{}\n", p.text.len(), p.text));
        }
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

/// The device's architecture as fatbins name it (90 for sm_90).
fn device_arch() -> u32 {
    DEVICE_CC.0.unsigned_abs() * 10 + DEVICE_CC.1.unsigned_abs()
}

/// The binary image at `p` (a fatbin, or a cubin), copied whole; `None` if `p` does not
/// start with one of their magic numbers (text). A cubin is refused at once (the stand-in
/// runs PTX only). The CUDA runtime's fatbin wrapper is not an image the driver API loads
/// (the H200 answers CUDA_ERROR_INVALID_IMAGE): it is refused as any unknown binary.
///
/// # Safety
/// `p` points to the caller's image: readable up to a NUL byte or a byte that is not the
/// next of a magic number, and, once a magic number matched, readable as that image (a
/// fatbin's whole size as its header and its members' headers give it).
unsafe fn read_binary(p: *const u8) -> Option<Result<Vec<u8>, Refused>> {
    let starts_with = |magic: [u8; 4]| {
        magic.iter().enumerate().all(|(i, &m)| {
            // SAFETY: every byte before this one matched a magic byte (none is NUL), so the
            // caller's image goes on.
            unsafe { *p.add(i) == m }
        })
    };
    if starts_with(fatbin::ELF_MAGIC) {
        return Some(Err(fatbin::cubin_refused().into()));
    }
    if !starts_with(fatbin::FATBIN_MAGIC.to_le_bytes()) {
        return None;
    }
    // SAFETY: a fatbin starts with its 16-byte header.
    let header = unsafe { std::slice::from_raw_parts(p, 16) };
    let size = fatbin::size_from_header(header)?;
    if size > fatbin::MAX_FATBIN {
        return Some(Err(Refused::image(format!("a fatbin of {size} bytes, more than the stand-in reads"))));
    }
    let header_size = u64::from(u16::from_le_bytes([*header.get(6)?, *header.get(7)?]));
    // The members are read by their own sizes, past the size the header gives if they say
    // so (as the H200 reads them: `image.fatbin_truncated_member`).
    let mut end = header_size;
    while end < size {
        // SAFETY: a member starting inside the fatbin starts with its 16 first header bytes.
        let member = unsafe { std::slice::from_raw_parts(p.add(usize::try_from(end).ok()?), 16) };
        let word = |at: usize, n: usize| {
            member.get(at..at + n).map(|b| b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
        };
        let (member_header, payload) = (word(4, 4)?, word(8, 8)?);
        if member_header == 0 {
            break;
        }
        end = end.checked_add(member_header)?.checked_add(payload)?;
        if end > fatbin::MAX_FATBIN {
            return Some(Err(Refused::image(format!(
                "a fatbin member ending at {end} bytes, more than the stand-in reads"
            ))));
        }
    }
    let size = usize::try_from(size.max(end)).ok()?;
    // SAFETY: the fatbin's header and its members' headers give its whole size.
    Some(Ok(unsafe { std::slice::from_raw_parts(p, size) }.to_vec()))
}

/// The JIT error log for PTX the executor could not load: ptxas's words for a word that is
/// no instruction (driver-facts.md), else the executor's error with its line.
fn refusal_log(error: Option<&cudrv_ptx::PtxError>) -> String {
    const ABORTED: &str = "ptxas fatal   : Ptx assembly aborted due to errors";
    let Some(e) = error else { return String::new() };
    let opcode = e.instruction.split('.').next().unwrap_or("");
    if !opcode.is_empty()
        && !opcode.starts_with(['.', '%', '$'])
        && !cudrv_ptx::instructions::is_ptx_instruction(opcode)
    {
        return format!(
            "ptxas application ptx input, line {}; error   : Not a name of any known instruction: '{opcode}'\n{ABORTED}",
            e.line
        );
    }
    if e.instruction.is_empty() {
        format!("ptxas application ptx input, line {}; error   : {} (cudrv stand-in)\n{ABORTED}", e.line, e.message)
    } else {
        format!(
            "ptxas application ptx input, line {}; error   : '{}': {} (cudrv stand-in: not run by its PTX executor)\n{ABORTED}",
            e.line, e.instruction, e.message
        )
    }
}

/// A fake image with these kernels, NUL-terminated: what tests pass to
/// `cuModuleLoadData`, `cuLibraryLoadData` and `cuLinkAddData`.
pub fn fake_image(kernels: &[&str]) -> Vec<u8> {
    Image { kernels: kernels.iter().map(|k| (*k).to_string()).collect(), ..Image::default() }.to_bytes()
}
