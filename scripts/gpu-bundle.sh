#!/usr/bin/env bash
# gpu-bundle.sh [DIR]: builds, in release, everything scripts/gpu-suite.sh runs on a GPU
# machine (which has no cargo) and copies the stripped binaries into DIR (default
# gpu-bin/, which git ignores): the examples, cudrv-info, cudrv-matrix with the stand-in
# library beside it, cudrv-conformance, the benchmarks (side_by_side, peer_copy), and libcudadevrt.a if
# CUDRV_CUDADEVRT names it. Carry DIR to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-gpu-bin}"
examples="device_query vector_add saxpy_streams graph_replay graph_memory_uses host_callback ipc version_fallback multi_gpu handles_check real_driver_check dependable_check kernel_features views cross_stream virtual_memory array_texture managed_memory vmm_ipc split_reduction green_contexts ipc_event big_shared jit_link matmul_occupancy graph_explicit graph_conditional"
args=()
for e in $examples; do args+=(--example "$e"); done
cargo build --release --quiet "${args[@]}" -p cudrv
cargo build --release --quiet -p cudrv-info -p cudrv-matrix -p cudrv-standin -p cudrv-conformance
# Where cargo put them: $CARGO_TARGET_DIR, build.target-dir, else ./target.
target=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
benches=$(cargo bench --quiet -p cudrv-bench --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["bench"] and m.get("executable"):
        print(m["target"]["name"], m["executable"])')
rm -rf "$dir"
mkdir -p "$dir"
release="$target/release"
for e in $examples; do cp "$release/examples/$e" "$dir/"; done
cp "$release/cudrv-info" "$release/cudrv-matrix" "$release/cudrv-conformance" "$release/libcudrv_standin.so" "$dir/"
while read -r name exe; do cp "$exe" "$dir/$name"; done <<< "$benches"
strip "$dir"/*
# The device runtime library graph_conditional links its kernel with (cudaGraphSetConditional):
# CUDRV_CUDADEVRT names it (pip install nvidia-cuda-runtime==13.0.96 has nvidia/cu13/lib/libcudadevrt.a).
if [ -n "${CUDRV_CUDADEVRT:-}" ]; then cp "$CUDRV_CUDADEVRT" "$dir/libcudadevrt.a"; fi
du -sh "$dir"
