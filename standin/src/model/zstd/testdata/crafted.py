#!/usr/bin/env python3
"""Writes crafted.zst: one frame, built by hand, of the block forms the zstd CLI does not
produce for small inputs: raw and RLE literals with every size format, Huffman literals
with directly written weights in 4 streams with 14- and 18-bit sizes, treeless literals,
empty sequence sections, RLE sequence codes, repeated offset tables and every repeat
offset case; with an 8-byte content size, a 2-byte dictionary id of 0 (no dictionary) and
a checksum. gen.sh checks it with `zstd -d` and stores its content as crafted.out.zst."""

import sys

M = 2**64 - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def xxh64(data):
    def rnd(acc, lane):
        return rotl((acc + lane * P2) & M, 31) * P1 & M

    def merge(h, v):
        return ((h ^ rnd(0, v)) * P1 + P4) & M

    n, i = len(data), 0
    if n >= 32:
        v = [(P1 + P2) & M, P2, 0, (-P1) & M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little"))
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for x in v:
            h = merge(h, x)
    else:
        h = P5
    h = (h + n) & M
    while i + 8 <= n:
        h ^= rnd(0, int.from_bytes(data[i:i + 8], "little"))
        h = (rotl(h, 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h ^= int.from_bytes(data[i:i + 4], "little") * P1 & M
        h = (rotl(h, 23) * P2 + P3) & M
        i += 4
    while i < n:
        h ^= data[i] * P5 & M
        h = rotl(h, 11) * P1 & M
        i += 1
    h ^= h >> 33
    h = h * P2 & M
    h ^= h >> 29
    h = h * P3 & M
    return h ^ (h >> 32)


def backward(fields):
    """A backward bitstream whose reader gets `fields` ((value, bits) pairs) in order."""
    v = 1
    for value, bits in fields:
        v = (v << bits) | value
    return v.to_bytes((v.bit_length() + 7) // 8, "little")


def block(content, last=False):
    return (len(content) << 3 | 2 << 1 | int(last)).to_bytes(3, "little") + content


def raw_literals(data, fmt):
    n = len(data)
    size = {0: 1, 1: 2, 3: 3}[fmt]
    head = ((n << 4 | fmt << 2) if fmt else n << 3).to_bytes(size, "little")
    return head + data


def rle_literals(byte, n, fmt):
    size = {0: 1, 1: 2, 3: 3}[fmt]
    head = ((n << 4 | fmt << 2 | 1) if fmt else n << 3 | 1).to_bytes(size, "little")
    return head + bytes([byte])


# Huffman: '0' and '1' with codes 0 and 1 (weights 1 and 1: 0x30 written, 0x31 implied).
WEIGHTS = bytes([176]) + bytes(24) + bytes([0x10])  # 49 weights: 0x30 is the 49th, in a high nibble


def huffman_literals(bits, fmt, treeless):
    n = len(bits)
    seg = (n + 3) // 4
    parts = [bits[0:seg], bits[seg:2 * seg], bits[2 * seg:3 * seg], bits[3 * seg:]]
    streams = [backward([(b, 1) for b in p]) for p in parts]
    jump = b"".join(len(s).to_bytes(2, "little") for s in streams[:3])
    body = (b"" if treeless else WEIGHTS) + jump + b"".join(streams)
    c = len(body)
    kind = 3 if treeless else 2
    width = {1: 10, 2: 14, 3: 18}[fmt]
    fields = kind | fmt << 2 | n << 4 | c << (4 + width)
    return fields.to_bytes({1: 3, 2: 4, 3: 5}[fmt], "little") + body


def text_bits(n):
    return [(i * 7 >> 2) & 1 for i in range(n)]


blocks = [
    raw_literals(b"Raw literals, 12-bit size. ", 1) + b"\0",
    raw_literals(b"Raw, 20-bit. ", 3) + b"\0",
    rle_literals(ord("b"), 20, 0) + b"\0",
    rle_literals(ord("c"), 1000, 1) + b"\0",
    rle_literals(ord("d"), 100000, 3) + b"\0",
    huffman_literals(text_bits(2000), 2, False) + b"\0",
    huffman_literals(text_bits(40), 1, True) + b"\0",
    huffman_literals(text_bits(15), 3, True) + b"\0",
    # Three sequences: 2 literals then 4 bytes at offset values 3, 2, 3 (reps 8, 1, 4).
    raw_literals(b"abcdefgh", 0) + bytes([3, 0x54, 2, 1, 1]) + backward([(1, 1), (0, 1), (1, 1)]),
    # Two sequences without literals, offset table repeated: offset values 3 and 2
    # (rep1 - 1 = 3, then rep3 = 1), 3 bytes each; then the literals.
    raw_literals(b"end\n", 0) + bytes([2, 0x74, 0, 0]) + backward([(1, 1), (0, 1)]),
]

content_blocks = b"".join(block(b, i == len(blocks) - 1) for i, b in enumerate(blocks))
# The content, as the reference decoder gives it, comes from stdin (gen.sh decodes the
# frame without a checksum first); the frame is then written with its checksum.
if sys.argv[1] == "bare":
    sys.stdout.buffer.write(b"\x28\xb5\x2f\xfd" + bytes([0b00_0_0_0_0_10, 0x38]) + bytes(2) + content_blocks)
else:
    content = sys.stdin.buffer.read()
    desc = 0b11_0_0_0_1_10  # 8-byte content size, window descriptor, checksum, 2-byte dictionary id
    header = bytes([desc, 0x38]) + bytes(2) + len(content).to_bytes(8, "little")
    checksum = (xxh64(content) & 0xFFFFFFFF).to_bytes(4, "little")
    sys.stdout.buffer.write(b"\x28\xb5\x2f\xfd" + header + content_blocks + checksum)
