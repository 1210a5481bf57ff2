#!/usr/bin/env bash
# fetch-headers.sh PIP_SPEC DEST [HEADER...]: puts the HEADERs (default: cuda.h and
# cudaTypedefs.h) from an NVIDIA CUDA wheel on PyPI (e.g. nvidia-cuda-runtime==13.5.37)
# into DEST, unless all are already there.
set -euo pipefail
spec="$1"
dest="$2"
shift 2
headers=("$@")
[ ${#headers[@]} -gt 0 ] || headers=(cuda.h cudaTypedefs.h)
missing=0
for h in "${headers[@]}"; do
  [ -f "$dest/$h" ] || missing=1
done
[ $missing -eq 1 ] || exit 0
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$wheels" "$spec"
mkdir -p "$dest"
python3 - "$wheels" "$dest" "${headers[@]}" <<'PY'
import glob, sys, zipfile
wheel_dir, out, wanted = sys.argv[1], sys.argv[2], set(sys.argv[3:])
wheel = zipfile.ZipFile(sorted(glob.glob(wheel_dir + "/*.whl"))[0])
found = set()
for name in wheel.namelist():
    base = name.rsplit("/", 1)[-1]
    if name.endswith("/include/" + base) and base in wanted:
        open(out + "/" + base, "wb").write(wheel.read(name))
        found.add(base)
if found != wanted:
    sys.exit(f"{sorted(wanted - found)} not found in {wheel.filename}")
PY
