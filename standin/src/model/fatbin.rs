//! Binary kernel images: fatbins (what `nvcc -fatbin` writes, and what the CUDA runtime
//! registers) and cubins. The stand-in runs PTX only: from a
//! fatbin it takes the PTX member for the newest architecture the device runs (sm_90),
//! decompressing it if nvcc compressed it (Zstandard, nvcc 13's default); an image with no
//! PTX the device can run is refused with CUDA_ERROR_NO_BINARY_FOR_GPU and an error log
//! that says why and how to build one that runs.
//!
//! The layout (little-endian; nvcc 13.0's output, checked against the H200's driver with
//! `scripts/probes/fatbin/`): a 16-byte header (magic `0xBA55ED50`, version 1, header size
//! 16, then the size of what follows as a u64), then members, each a header (its own size at
//! byte 4: 64 for ELF, 80 for PTX) and its payload (size at byte 8). A member's header has
//! its kind at byte 0 (1 PTX, 2 ELF), its compressed size at 16, its architecture at 28
//! (90 for sm_90/compute_90), its flags at 40 (`0x8000`: Zstandard-compressed, `0x2000`:
//! LZ4, an older nvcc's `-Xfatbin -compress-all`) and its uncompressed size at 56.

use cudrv::sys::CUresult;

use super::zstd;

/// Why a binary image gives no PTX: the status, and the JIT error log that says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unusable {
    pub(crate) code: CUresult,
    pub(crate) log: String,
}

impl Unusable {
    fn new(code: CUresult, log: impl Into<String>) -> Unusable {
        Unusable { code, log: log.into() }
    }
}

/// The first word of a fatbin.
pub(crate) const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The first bytes of an ELF file (a cubin).
pub(crate) const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// A fatbin larger than this is refused before it is read.
pub(crate) const MAX_FATBIN: u64 = 1 << 30;

const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
const FLAG_ZSTD: u64 = 0x8000;
const FLAG_LZ4: u64 = 0x2000;

/// How to build an image the stand-in runs.
pub(crate) const BUILD_HINT: &str = "the stand-in runs PTX only: build with \
     -gencode arch=compute_90,code=compute_90 (or code=[sm_90,compute_90]), or compile to PTX with NVRTC";

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// The whole size of the fatbin whose 16-byte header is `header`, if it is one.
pub(crate) fn size_from_header(header: &[u8]) -> Option<u64> {
    if u32_at(header, 0)? != FATBIN_MAGIC {
        return None;
    }
    let header_size = u64::from(u16_at(header, 6)?);
    u64_at(header, 8)?.checked_add(header_size)
}

/// One member of a fatbin.
struct Member<'a> {
    kind: u16,
    arch: u32,
    flags: u64,
    compressed: usize,
    uncompressed: usize,
    payload: &'a [u8],
}

fn members(fatbin: &[u8]) -> Result<Vec<Member<'_>>, Unusable> {
    let bad = |what: &str| Unusable::new(CUresult::CUDA_ERROR_INVALID_IMAGE, format!("a malformed fatbin: {what}"));
    let mut out = Vec::new();
    let mut at = 0usize;
    // Containers follow one another (a file may hold several).
    while at < fatbin.len() {
        let container = fatbin.get(at..).unwrap_or_default();
        if u32_at(container, 0) != Some(FATBIN_MAGIC) {
            if out.is_empty() {
                return Err(bad("no fatbin header"));
            }
            break;
        }
        let header_size = usize::from(u16_at(container, 6).ok_or_else(|| bad("truncated header"))?);
        let body = u64_at(container, 8).and_then(|n| usize::try_from(n).ok()).ok_or_else(|| bad("truncated header"))?;
        // The size the container's header gives is not trusted (as by the H200:
        // `image.fatbin_truncated_member`): it ends at the end of the image at most, and a
        // member starting inside it is read by its own sizes, also past that end.
        let end = header_size.saturating_add(body).min(container.len());
        let mut m = header_size;
        while m < end {
            let h = container.get(m..).ok_or_else(|| bad("a member past the end"))?;
            let kind = u16_at(h, 0).ok_or_else(|| bad("truncated member"))?;
            let member_header = u32_at(h, 4).and_then(|n| usize::try_from(n).ok()).ok_or_else(|| bad("member"))?;
            let size = u64_at(h, 8).and_then(|n| usize::try_from(n).ok()).ok_or_else(|| bad("member"))?;
            if member_header < 64 {
                return Err(bad("a member header shorter than 64 bytes"));
            }
            let payload_end = member_header.checked_add(size).ok_or_else(|| bad("member size"))?;
            let payload = h.get(member_header..payload_end).ok_or_else(|| bad("a member past the end"))?;
            out.push(Member {
                kind,
                arch: u32_at(h, 28).unwrap_or(0),
                flags: u64_at(h, 40).unwrap_or(0),
                compressed: u32_at(h, 16).and_then(|n| usize::try_from(n).ok()).unwrap_or(0),
                uncompressed: u64_at(h, 56).and_then(|n| usize::try_from(n).ok()).unwrap_or(0),
                payload,
            });
            m = m.checked_add(payload_end).ok_or_else(|| bad("member size"))?;
        }
        at = at.checked_add(end.max(m)).ok_or_else(|| bad("size"))?;
    }
    Ok(out)
}

/// The PTX text of `fatbin` for a device of architecture `device_arch` (90 for sm_90): the
/// PTX member of the newest architecture not above it, decompressed.
///
/// Errors: CUDA_ERROR_INVALID_IMAGE for a malformed fatbin or a member that does not
/// decompress; CUDA_ERROR_NO_BINARY_FOR_GPU when no PTX member fits, with an error log that
/// names what the fatbin holds (empty when it holds only PTX for newer devices, as the
/// H200's driver answers).
pub(crate) fn ptx(fatbin: &[u8], device_arch: u32) -> Result<String, Unusable> {
    let members = members(fatbin)?;
    let chosen = members.iter().filter(|m| m.kind == KIND_PTX && m.arch <= device_arch).max_by_key(|m| m.arch);
    let Some(m) = chosen else {
        let elf: Vec<String> =
            members.iter().filter(|m| m.kind == KIND_ELF).map(|m| format!("sm_{}", m.arch)).collect();
        let log = if elf.is_empty() {
            String::new()
        } else {
            format!("cudrv stand-in: the fatbin holds machine code only ({}) and no PTX for sm_{device_arch} or older; {BUILD_HINT}", elf.join(", "))
        };
        return Err(Unusable::new(CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU, log));
    };
    let undecodable = |why: String| {
        Unusable::new(
            CUresult::CUDA_ERROR_INVALID_IMAGE,
            format!("cudrv stand-in: the fatbin's PTX for compute_{}: {why}", m.arch),
        )
    };
    let bytes = if m.flags & FLAG_ZSTD != 0 {
        let data = m.payload.get(..m.compressed).unwrap_or(m.payload);
        zstd::decompress(data, m.uncompressed.max(1)).map_err(|e| undecodable(format!("{e}")))?
    } else if m.flags & FLAG_LZ4 != 0 {
        return Err(undecodable(format!(
            "compressed with LZ4 (an older nvcc's -Xfatbin -compress-all), which the stand-in does not read; rebuild with nvcc 12.8 or newer, or without -compress-all; {BUILD_HINT}"
        )));
    } else {
        m.payload.to_vec()
    };
    let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8(text.to_vec()).map_err(|_| undecodable("not text".to_string()))
}

/// The refusal of a cubin (an ELF image: machine code only).
pub(crate) fn cubin_refused() -> Unusable {
    Unusable::new(
        CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU,
        format!(
            "cudrv stand-in: the image is a cubin (machine code, ELF), which the stand-in cannot run; {BUILD_HINT}"
        ),
    )
}
