#!/usr/bin/env bash
# peer-suite.sh: runs another project's own tests on the stand-in: cudarc's `driver` and
# `nvrtc` unit tests (the newest crates.io release of 0.19, and 0.19.4, the last with the
# eager loader that resolves every name it binds at load), with NVRTC from PyPI
# (nvidia-cuda-nvrtc==13.0.88) and the stand-in's cdylib as libcuda.so. No GPU.
#
#   scripts/peer-suite.sh [VERSION...]     default: the newest 0.19.x and 0.19.4
#
# cudarc's ignored tests ("must be executed by itself", "with multiple gpus") run too, each in
# a process of its own, with two emulated devices (CUDRV_STANDIN_DEVICES=2).
#
# Every test must pass except those listed, with the reason, in scripts/peer-suite.known
# (`VERSION TEST  REASON`, `*` for every version). An unlisted failure fails the run; a
# listed test that passes is reported (a timing test may pass by chance) but does not.
# Needs cargo (with the crates.io index), python3 and pip.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
NVRTC_WHEEL="nvidia-cuda-nvrtc==13.0.88"
FEATURES="std,driver,nvrtc,f16,cuda-13000,dynamic-loading"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The stand-in, as libcuda.so (cudarc's first candidate) and libcuda.so.1. Release: cudarc's
# slow_worker kernel runs 10^6 iterations, minutes in a debug build of the PTX executor.
cargo build --quiet --release -p cudrv-standin --lib
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
mkdir -p "$work/lib"
cp "$target/release/libcudrv_standin.so" "$work/lib/libcuda.so"
ln -s libcuda.so "$work/lib/libcuda.so.1"

# NVRTC from PyPI: libnvrtc.so.13 and its builtins, libnvrtc.so for cudarc's first candidate.
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$work/wheel" "$NVRTC_WHEEL"
python3 - "$work/wheel" "$work/lib" <<'PY'
import glob, os, sys, zipfile
wheel = zipfile.ZipFile(sorted(glob.glob(sys.argv[1] + "/*.whl"))[0])
for name in wheel.namelist():
    base = os.path.basename(name)
    if base in ("libnvrtc.so.13", "libnvrtc-builtins.so.13.0"):
        with open(os.path.join(sys.argv[2], base), "wb") as f:
            f.write(wheel.read(name))
PY
ln -s libnvrtc.so.13 "$work/lib/libnvrtc.so"

# The versions: the newest 0.19.x as cargo resolves it, and 0.19.4.
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  mkdir -p "$work/resolve/src"
  printf '[package]\nname = "resolve"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ncudarc = { version = "0.19", default-features = false }\n[workspace]\n' \
    >"$work/resolve/Cargo.toml"
  touch "$work/resolve/src/lib.rs"
  (cd "$work/resolve" && cargo generate-lockfile --quiet)
  newest=$(grep -A1 '^name = "cudarc"' "$work/resolve/Cargo.lock" | sed -n 's/^version = "\(.*\)"/\1/p')
  versions=("$newest" 0.19.4)
fi

status=0
for version in "${versions[@]}"; do
  # cudarc's source as crates.io ships it, built as its own package.
  mkdir -p "$work/get-$version/src"
  printf '[package]\nname = "get"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ncudarc = { version = "=%s", default-features = false }\n[workspace]\n' \
    "$version" >"$work/get-$version/Cargo.toml"
  touch "$work/get-$version/src/lib.rs"
  (cd "$work/get-$version" && cargo fetch --quiet)
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"cudarc-$version" | head -1)
  cp -r "$src" "$work/cudarc-$version"
  start=$SECONDS
  bin=$(cd "$work/cudarc-$version" && CARGO_TARGET_DIR="$work/target" cargo test --quiet --no-default-features \
    --features "$FEATURES" --lib --no-run --message-format json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cudarc":
        print(m["executable"])')
  log="$work/cudarc-$version.log"
  export LD_LIBRARY_PATH="$work/lib" CUDRV_STANDIN_VERSION=13.0
  (cd "$work/cudarc-$version" && "$bin" driver:: nvrtc:: --test-threads 2 >"$log" 2>&1) || true
  # The ignored ones, each by itself (their reason: a process of their own, or two GPUs).
  for test in $("$bin" driver:: nvrtc:: --ignored --list 2>/dev/null | sed -n 's/: test$//p'); do
    (cd "$work/cudarc-$version" && CUDRV_STANDIN_DEVICES=2 "$bin" --ignored --exact "$test" 2>&1 |
      sed 's/^test \(.*\) \.\.\. /test \1 ... /' >>"$log") || true
  done
  unset LD_LIBRARY_PATH CUDRV_STANDIN_VERSION
  python3 - "$log" "$version" "$root/scripts/peer-suite.known" "$((SECONDS - start))" <<'PY' || status=1
import re, sys
log, version, known_file, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
results = {}
for test, result in re.findall(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", open(log).read(), re.M):
    if results.get(test) in (None, "ignored"):  # an ignored test's own run replaces "ignored"
        results[test] = result
known = {}
for line in open(known_file):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    v, test, reason = line.split(None, 2)
    if v in ("*", version):
        known[test] = reason
failed = sorted(t for t, r in results.items() if r == "FAILED")
unexpected = [t for t in failed if t not in known]
now_pass = sorted(t for t in known if results.get(t) == "ok")
passed = sum(1 for r in results.values() if r == "ok")
print(f"cudarc {version}: {passed} passed, {len(failed)} failed ({len(failed) - len(unexpected)} listed), "
      f"{sum(1 for r in results.values() if r == 'ignored')} ignored, of {len(results)}; {seconds} s")
for t in now_pass:
    print(f"  listed but passed: {t}")
if not results:
    print(open(log).read()[-4000:])
    sys.exit(f"cudarc {version}: no test ran")
if unexpected:
    print(open(log).read()[-8000:])
    sys.exit(f"cudarc {version}: unlisted failures: {' '.join(unexpected)}")
PY
done
exit $status
