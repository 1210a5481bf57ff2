#!/bin/sh
# The instruction suite on a GPU: the suite's forms (the gzipped PTX given as the first
# argument, written by `cargo run -p cudrv-ptx --example instruction_suite | gzip >
# suite.ptx.gz` on a machine with Rust), the approximate instructions over every f32
# input, and what ptxas makes of them. Results in $OUT (default /tmp/suite-out).
#
#   sh scripts/probes/instructions/gpu.sh suite.ptx.gz
set -u
OUT=${OUT:-/tmp/suite-out}
mkdir -p "$OUT"
here=$(dirname "$0")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
gcc -O2 -o /tmp/suite-run "$here/run.c" -ldl
gunzip -c "${1:?usage: gpu.sh SUITE.ptx.gz}" > /tmp/suite.ptx
( time /tmp/suite-run /tmp/suite.ptx > "$OUT/instruction-suite.txt" 2> "$OUT/instruction-suite.log" ) 2> "$OUT/suite-time.txt"
nvcc -O3 -arch=sm_90 -o /tmp/approx "$here/approx.cu" && OUT="$OUT" timeout 200 /tmp/approx > "$OUT/approx.txt" 2>&1
nvcc -arch=sm_90 -cubin -o /tmp/sass.cubin "$here/sass.cu" && cuobjdump -sass /tmp/sass.cubin > "$OUT/approx-sass.txt" 2>&1
wc -l "$OUT"/*.txt
