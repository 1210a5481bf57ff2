#!/usr/bin/env bash
# fetch-headers.sh PIP_SPEC DEST: puts cuda.h and cudaTypedefs.h from an NVIDIA CUDA
# runtime wheel on PyPI (e.g. nvidia-cuda-runtime==13.5.37) into DEST, unless already there.
set -euo pipefail
spec="$1"
dest="$2"
if [ -f "$dest/cuda.h" ] && [ -f "$dest/cudaTypedefs.h" ]; then
  exit 0
fi
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$wheels" "$spec"
mkdir -p "$dest"
python3 - "$wheels" "$dest" <<'PY'
import glob, sys, zipfile
wheel_dir, out = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(sorted(glob.glob(wheel_dir + "/*.whl"))[0])
found = 0
for name in wheel.namelist():
    base = name.rsplit("/", 1)[-1]
    if name.endswith("/include/" + base) and base in ("cuda.h", "cudaTypedefs.h"):
        open(out + "/" + base, "wb").write(wheel.read(name))
        found += 1
if found != 2:
    sys.exit("cuda.h and cudaTypedefs.h not both found in " + wheel.filename)
PY
