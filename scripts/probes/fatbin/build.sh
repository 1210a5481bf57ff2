#!/usr/bin/env bash
# Builds scale.cu into every image form nvcc 13.0 makes (on a machine with the CUDA
# toolkit), then loads each with load.c: scripts/probes/fatbin/build.sh OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
cd "$out"
nvcc --version | tail -2
nvcc -ptx -arch=compute_90 "$here/scale.cu" -o scale.ptx
nvcc -cubin -arch=sm_90 "$here/scale.cu" -o scale.cubin
nvcc -fatbin -gencode arch=compute_90,code=compute_90 "$here/scale.cu" -o ptx_only.fatbin
nvcc -fatbin -gencode arch=compute_90,code=sm_90 "$here/scale.cu" -o sass_only.fatbin
nvcc -fatbin -gencode arch=compute_90,code=[sm_90,compute_90] "$here/scale.cu" -o both.fatbin
nvcc -fatbin -gencode arch=compute_80,code=compute_80 -gencode arch=compute_90,code=compute_90 "$here/scale.cu" -o two_ptx.fatbin
nvcc -fatbin -gencode arch=compute_90,code=compute_90 -Xfatbin -compress-all "$here/scale.cu" -o ptx_compressed.fatbin
for mode in default size speed balance none; do
  nvcc -fatbin -gencode arch=compute_90,code=compute_90 -Xfatbin -compress-all --compress-mode=$mode "$here/scale.cu" -o ptx_$mode.fatbin 2>&1 | tail -1 || true
done
nvcc -fatbin -gencode arch=compute_100,code=compute_100 "$here/scale.cu" -o ptx_sm100_only.fatbin
gcc -O1 -o load "$here/load.c" -ldl
ls -la
./load *.ptx *.cubin *.fatbin
