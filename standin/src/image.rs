//! The fake image format the stand-in loads in place of cubins, PTX and fatbins (see
//! [`FAKE_IMAGE_MAGIC`]).

use std::ffi::c_void;

use cudrv::sys::CUresult;

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
/// `cuModuleLoadData`, `cuLibraryLoadData` and `cuLinkAddData` accept it (with any
/// `CU_JIT_INPUT_*` type); anything else is CUDA_ERROR_INVALID_IMAGE. `cuLinkComplete`
/// returns one holding every kernel added. Launching a kernel named
/// [`crate::FAULT_KERNEL`] makes its context sticky-failed. [`fake_image`] makes one.
pub const FAKE_IMAGE_MAGIC: &str = "cudrv-fake-image";

/// The symbols of an image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Image {
    /// Kernel names, in order, without duplicates.
    pub(crate) kernels: Vec<String>,
    /// Global variables and their sizes.
    pub(crate) globals: Vec<(String, usize)>,
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

    /// Reads and parses the NUL-terminated image at `p`. Only as many bytes are read as
    /// needed to tell a foreign image (a cubin, PTX) from a fake one: the first byte that
    /// differs from the magic line ends the read.
    ///
    /// # Safety
    /// `p` is null or points to readable memory up to a NUL byte or up to the first byte
    /// that differs from [`FAKE_IMAGE_MAGIC`].
    pub(crate) unsafe fn read(p: *const c_void) -> Result<Image, CUresult> {
        if p.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let p = p.cast::<u8>();
        for (i, &m) in FAKE_IMAGE_MAGIC.as_bytes().iter().enumerate() {
            // SAFETY: every byte before this one matched the magic, so none was NUL and
            // the caller's buffer goes on.
            if unsafe { *p.add(i) } != m {
                return Err(CUresult::CUDA_ERROR_INVALID_IMAGE);
            }
        }
        // SAFETY: it starts like a fake image, which the program NUL-terminates.
        let text = unsafe { std::ffi::CStr::from_ptr(p.cast()) };
        Image::parse(text.to_bytes())
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
    Image { kernels: kernels.iter().map(|k| (*k).to_string()).collect(), globals: Vec::new() }.to_bytes()
}
