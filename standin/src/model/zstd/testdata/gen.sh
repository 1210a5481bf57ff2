#!/bin/sh
# Regenerates the zstd test vectors with the zstd CLI (v1.5.4 made the committed ones).
# text.txt and random.bin are fixed inputs; the large inputs are rebuilt by the tests.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty"
zstd -q -f -3 "$tmp/empty" -o empty.zst
printf 'hello, zstd\n' >"$tmp/short"
zstd -q -f -3 "$tmp/short" -o short.zst
zstd -q -f -1 --no-check text.txt -o text-1-nocheck.zst
zstd -q -f -3 text.txt -o text-3.zst
zstd -q -f -19 --no-content-size text.txt -o text-19-nosize.zst
# From a pipe: no content size, a window descriptor instead.
zstd -q -f --ultra -22 --long <text.txt >text-22-long-stream.zst
zstd -q -f -3 random.bin -o random.zst
# 200000 times 'a': two RLE blocks.
python3 -c "import sys; sys.stdout.write('a' * 200000)" >"$tmp/run"
zstd -q -f -3 "$tmp/run" -o run.zst
# 150 copies of text.txt, each after its number: three blocks and more.
python3 -c "
import sys
t = open('text.txt').read()
sys.stdout.write(''.join('%05d %s' % (i, t) for i in range(150)))" >"$tmp/multi"
zstd -q -f -19 "$tmp/multi" -o multi-19.zst
zstd -q -f -1 --no-check --no-content-size "$tmp/multi" -o multi-1.zst
# Block forms the CLI does not make for these inputs, built by crafted.py and checked
# with the reference decoder; its content is stored compressed by the CLI.
python3 crafted.py bare >"$tmp/bare.zst"
zstd -q -d -c "$tmp/bare.zst" >"$tmp/crafted"
python3 crafted.py full <"$tmp/crafted" >crafted.zst
zstd -q -t crafted.zst
zstd -q -f -19 "$tmp/crafted" -o crafted.out.zst
