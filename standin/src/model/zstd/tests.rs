//! Test vectors made by the zstd CLI (testdata/gen.sh), a real nvcc 13 fatbin member, and
//! corrupted inputs.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)] // a test fails by panicking

use super::{decompress, ZstdError, ZstdErrorKind};

const TEXT: &[u8] = include_bytes!("testdata/text.txt");
const RANDOM: &[u8] = include_bytes!("testdata/random.bin");
const EMPTY: &[u8] = include_bytes!("testdata/empty.zst");
const SHORT: &[u8] = include_bytes!("testdata/short.zst");
const TEXT_1_NOCHECK: &[u8] = include_bytes!("testdata/text-1-nocheck.zst");
const TEXT_3: &[u8] = include_bytes!("testdata/text-3.zst");
const TEXT_19_NOSIZE: &[u8] = include_bytes!("testdata/text-19-nosize.zst");
const TEXT_22_LONG_STREAM: &[u8] = include_bytes!("testdata/text-22-long-stream.zst");
const RANDOM_ZST: &[u8] = include_bytes!("testdata/random.zst");
const RUN: &[u8] = include_bytes!("testdata/run.zst");
const MULTI_19: &[u8] = include_bytes!("testdata/multi-19.zst");
const MULTI_1: &[u8] = include_bytes!("testdata/multi-1.zst");
/// A frame built by testdata/crafted.py (block forms the CLI did not make for the other
/// vectors), and its content as compressed by the CLI.
const CRAFTED: &[u8] = include_bytes!("testdata/crafted.zst");
const CRAFTED_OUT: &[u8] = include_bytes!("testdata/crafted.out.zst");
/// A fatbin of nvcc 13 with one PTX member compressed with zstd, and the same PTX
/// uncompressed (`nvcc -fatbin`, `--compress-mode=none` for the second).
const PTX_ONLY: &[u8] = include_bytes!("testdata/ptx_only.fatbin");
const PTX_NONE: &[u8] = include_bytes!("testdata/ptx_none.fatbin");

const LIMIT: usize = 1 << 20;

/// The input of run.zst: 200000 times 'a'.
fn run() -> Vec<u8> {
    vec![b'a'; 200_000]
}

/// The input of the multi-*.zst vectors: 150 copies of text.txt, each after its number.
fn multi() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..150 {
        v.extend_from_slice(format!("{i:05} ").as_bytes());
        v.extend_from_slice(TEXT);
    }
    v
}

/// Every vector with the content it decompresses to.
fn vectors() -> Vec<(&'static str, &'static [u8], Vec<u8>)> {
    vec![
        ("empty", EMPTY, Vec::new()),
        ("short", SHORT, b"hello, zstd\n".to_vec()),
        ("text-1-nocheck", TEXT_1_NOCHECK, TEXT.to_vec()),
        ("text-3", TEXT_3, TEXT.to_vec()),
        ("text-19-nosize", TEXT_19_NOSIZE, TEXT.to_vec()),
        ("text-22-long-stream", TEXT_22_LONG_STREAM, TEXT.to_vec()),
        ("random", RANDOM_ZST, RANDOM.to_vec()),
        ("run", RUN, run()),
        ("multi-19", MULTI_19, multi()),
        ("multi-1", MULTI_1, multi()),
        ("ptx", ptx_member(), ptx_text().to_vec()),
        ("crafted", CRAFTED, crafted()),
    ]
}

/// The content of crafted.zst.
fn crafted() -> Vec<u8> {
    let out = decompress(CRAFTED_OUT, LIMIT).unwrap();
    assert_eq!(out.len(), 103_145);
    assert!(out.starts_with(b"Raw literals, 12-bit size. Raw, 20-bit. bbbb"));
    // The sequences: literals, then matches at repeat offsets 8, 1, 4, 3 and 1.
    assert!(out.ends_with(b"00111100ab1111cdddddefddefghfghhhhend\n"));
    out
}

fn u32_at(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// The compressed PTX member of ptx_only.fatbin: after the 16-byte fatbin header and the
/// 80-byte entry header, whose bytes 16..20 give the compressed size (374: the payload
/// of 376 bytes is padded to 8).
fn ptx_member() -> &'static [u8] {
    let start = 16 + u32_at(PTX_ONLY, 16 + 4);
    let compressed = u32_at(PTX_ONLY, 16 + 16);
    assert_eq!((start, compressed), (96, 374));
    &PTX_ONLY[start..start + compressed]
}

/// The PTX text of ptx_none.fatbin with its NUL terminator: the first 748 bytes (the
/// uncompressed size in ptx_only.fatbin's entry header, bytes 56..60) of its member of
/// 752 bytes at 96, NUL-padded.
fn ptx_text() -> &'static [u8] {
    let len = u32_at(PTX_ONLY, 16 + 56);
    assert_eq!(len, 748);
    let member = &PTX_NONE[96..96 + 752];
    assert_eq!(member.iter().position(|&b| b == 0), Some(len - 1));
    assert!(member[len..].iter().all(|&b| b == 0));
    &member[..len]
}

#[test]
fn cli_vectors_decompress_to_their_input() {
    for (name, input, expected) in vectors() {
        let out = decompress(input, LIMIT).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out == expected, "{name}: {} bytes, expected {}", out.len(), expected.len());
        // An exact limit is enough.
        assert_eq!(decompress(input, expected.len()).unwrap(), expected, "{name}");
    }
}

#[test]
fn nvcc_ptx_member_decompresses_to_the_uncompressed_ptx() {
    let text = decompress(ptx_member(), LIMIT).unwrap();
    assert_eq!(text, ptx_text());
    assert!(text.windows(22).any(|w| w == b".visible .entry scale("));
    // With its padding the member is not one frame: the fatbin reader must use the
    // compressed size of the entry header.
    let padded = &PTX_ONLY[96..96 + 376];
    assert_eq!(decompress(padded, LIMIT), Err(ZstdError { kind: ZstdErrorKind::Truncated, offset: 374 }));
}

#[test]
fn concatenated_and_skippable_frames() {
    let mut input = Vec::new();
    input.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    input.extend_from_slice(SHORT);
    input.extend_from_slice(EMPTY);
    input.extend_from_slice(&[0x5f, 0x2a, 0x4d, 0x18, 0, 0, 0, 0]);
    input.extend_from_slice(TEXT_3);
    input.extend_from_slice(RUN);
    let mut expected = b"hello, zstd\n".to_vec();
    expected.extend_from_slice(TEXT);
    expected.extend_from_slice(&run());
    assert_eq!(decompress(&input, LIMIT).unwrap(), expected);
    // Only skippable frames: nothing.
    assert_eq!(decompress(&input[..11], LIMIT).unwrap(), b"");
    // A skippable frame longer than the input.
    let err = decompress(&input[..10], LIMIT).unwrap_err();
    assert_eq!(err, ZstdError { kind: ZstdErrorKind::Truncated, offset: 0 });
    // The limit counts the output of all frames.
    let err = decompress(&input, expected.len() - 1).unwrap_err();
    assert_eq!(err.kind, ZstdErrorKind::LimitExceeded);
    // Anything after a frame must be a frame.
    let mut trailing = SHORT.to_vec();
    trailing.extend_from_slice(b"junk");
    let err = decompress(&trailing, LIMIT).unwrap_err();
    assert_eq!(err, ZstdError { kind: ZstdErrorKind::UnknownMagic(u32::from_le_bytes(*b"junk")), offset: SHORT.len() });
}

#[test]
fn limit_is_enforced() {
    // A declared content size over the limit is refused at the frame's start.
    assert_eq!(decompress(RUN, 199_999), Err(ZstdError { kind: ZstdErrorKind::LimitExceeded, offset: 0 }));
    assert_eq!(decompress(TEXT_3, 100).unwrap_err().kind, ZstdErrorKind::LimitExceeded);
    // Without a content size, decoding stops where the output would pass the limit.
    assert_eq!(decompress(MULTI_1, 200_000).unwrap_err().kind, ZstdErrorKind::LimitExceeded);
    assert_eq!(decompress(TEXT_22_LONG_STREAM, TEXT.len() - 1).unwrap_err().kind, ZstdErrorKind::LimitExceeded);
}

#[test]
fn unsupported_and_invalid_headers_are_refused() {
    assert_eq!(decompress(&[], LIMIT), Err(ZstdError { kind: ZstdErrorKind::Truncated, offset: 0 }));
    assert_eq!(decompress(b"\x28\xb5\x2f", LIMIT).unwrap_err().kind, ZstdErrorKind::Truncated);
    assert_eq!(decompress(b"PTX text", LIMIT).unwrap_err().kind, ZstdErrorKind::UnknownMagic(0x2058_5450));
    let magic = [0x28, 0xb5, 0x2f, 0xfd];
    let frame = |rest: &[u8]| [&magic[..], rest].concat();
    // Single segment, a one-byte dictionary id 7, content size 0, an empty last raw block.
    let dict = frame(&[0x21, 7, 0, 1, 0, 0]);
    assert_eq!(decompress(&dict, LIMIT), Err(ZstdError { kind: ZstdErrorKind::Dictionary(7), offset: 4 }));
    // The same with dictionary id 0: no dictionary.
    assert_eq!(decompress(&frame(&[0x21, 0, 0, 1, 0, 0]), LIMIT).unwrap(), b"");
    // The reserved bit of the frame header descriptor.
    assert!(matches!(decompress(&frame(&[0x28, 0, 1, 0, 0]), LIMIT).unwrap_err().kind, ZstdErrorKind::Corrupt(_)));
    // The reserved block type.
    let err = decompress(&frame(&[0x20, 0, 7, 0, 0]), LIMIT).unwrap_err();
    assert!(matches!(err.kind, ZstdErrorKind::Corrupt(_)) && err.offset == 6, "{err}");
    // A raw block larger than the declared content: the window of a single segment.
    let err = decompress(&frame(&[0x20, 1, 0x11, 0, 0, b'a', b'b']), LIMIT).unwrap_err();
    assert!(matches!(err.kind, ZstdErrorKind::Corrupt(_)), "{err}");
    // An RLE block of 3 bytes and a content size of 2.
    let err = decompress(&frame(&[0x20, 2, 0x1b, 0, 0, b'a']), LIMIT).unwrap_err();
    assert!(matches!(err.kind, ZstdErrorKind::Corrupt(_)), "{err}");
    // A content size that does not match.
    let err = decompress(&frame(&[0x20, 2, 0x0b, 0, 0, b'a']), LIMIT).unwrap_err();
    assert_eq!(err.kind, ZstdErrorKind::ContentSize { declared: 2, actual: 1 });
}

#[test]
fn checksum_is_verified() {
    let mut bad = SHORT.to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let err = decompress(&bad, LIMIT).unwrap_err();
    assert!(matches!(err.kind, ZstdErrorKind::Checksum { .. }) && err.offset == last - 3, "{err}");
}

/// A reproducible xorshift64.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn every_truncation_is_an_error() {
    for (name, input, _) in vectors() {
        if input.len() > 1200 {
            continue;
        }
        for len in 0..input.len() {
            assert!(decompress(&input[..len], LIMIT).is_err(), "{name} cut at {len}");
        }
    }
    for len in (0..MULTI_19.len()).step_by(7) {
        assert!(decompress(&MULTI_19[..len], LIMIT).is_err(), "multi-19 cut at {len}");
    }
}

#[test]
fn flipped_bytes_never_panic() {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let mut errors = 0;
    let mut total = 0;
    for (name, input, expected) in vectors() {
        let rounds = if expected.len() > 100_000 { 60 } else { 600 };
        let checked = [
            "empty",
            "short",
            "text-3",
            "text-19-nosize",
            "text-22-long-stream",
            "random",
            "run",
            "multi-19",
            "crafted",
        ]
        .contains(&name);
        for _ in 0..rounds {
            let mut bad = input.to_vec();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(bad.len());
                bad[at] ^= 1 << rng.below(8);
            }
            let got = decompress(&bad, LIMIT);
            total += 1;
            match got {
                Err(_) => errors += 1,
                // A frame with a checksum gives its content or an error.
                Ok(out) if checked => assert!(out == expected, "{name}: a corrupted frame passed its checksum"),
                Ok(out) => assert!(out.len() <= LIMIT),
            }
        }
    }
    // Most flips break something (the count shows the test reaches the decoder's checks).
    assert!(errors * 10 > total * 8, "{errors} errors in {total}");
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = XorShift(29);
    let magic = [0x28, 0xb5, 0x2f, 0xfd];
    for _ in 0..3000 {
        let len = rng.below(64);
        let mut input = magic.to_vec();
        // Plausible headers: single segment with a small content size, then a block
        // header of a compressed block, then noise.
        input.extend_from_slice(&[0x20, 200]);
        let size = len as u32;
        let block = (size << 3) | 0b101;
        input.extend_from_slice(&block.to_le_bytes()[..3]);
        input.extend((0..len).map(|_| rng.next() as u8));
        let _ = decompress(&input, LIMIT);
        let _ = decompress(&input[4..], LIMIT);
    }
}
