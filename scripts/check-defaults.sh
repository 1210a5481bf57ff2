#!/usr/bin/env bash
# check-defaults.sh: regenerates the table from the CUDA 11.8, 12.9, 13.0 and 13.5 headers
# and checks what every unversioned name binds against what the C preprocessor and the C
# compiler (gcc, not libclang) make of cuda.h for that header:
#
# - normal mode, and per-thread mode (CUDA_API_PER_THREAD_DEFAULT_STREAM): the name's
#   default variant is the one cuda.h's macros select (`cuMemAlloc` -> `cuMemAlloc_v2`, the
#   2nd-oldest version), with exactly the prototype C code calling the name gets
#   (`__builtin_types_compatible_p` against the variant's PFN typedef);
# - the other candidates are older variants with the identical type, never newer ones;
# - the premise that the exported name `sym_vK` is the K-th oldest version holds for the
#   header: cuda.h (with __CUDA_API_VERSION_INTERNAL) declares exactly sym, sym_v2, ...,
#   sym_vN for the N typedefs, each with the K-th typedef's type.
#
#   scripts/check-defaults.sh            all four headers
#   scripts/check-defaults.sh SPEC...    only these pip specs
#
# Needs gcc, python3, pip (the headers come from the NVIDIA wheels, kept in .headers/)
# and libclang (for the generator). No CUDA toolkit or GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then
  specs=(nvidia-cuda-runtime-cu11==11.8.89 nvidia-cuda-runtime-cu12==12.9.79
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-runtime==13.5.37)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --quiet -p cudrv-gen
# Where cargo put it: $CARGO_TARGET_DIR, build.target-dir, else ./target.
target=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
status=0
for spec in "${specs[@]}"; do
  include=".headers/${spec#*==}/include"
  scripts/fetch-headers.sh "$spec" "$include"
  out="$work/${spec#*==}"
  "$target/debug/cudrv-gen" --include "$include" --out "$out" --no-standin >/dev/null
  if ! python3 - "$include" "$out/table.rs" "$work" "$spec" <<'PY'; then
import collections, os, re, subprocess, sys

inc, table, work, spec = sys.argv[1:5]
text = open(table).read()
variants = re.findall(r'VariantSpec \{ ident: "(\w+)", symbol: c"(\w+)", version: (\d+), per_thread: (true|false) \}', text)
variants = [(i, s, int(v), p == "true") for i, s, v, p in variants]
names = re.findall(
    r'NameSpec \{ name: "(\w+)", candidates: &\[([\d, ]*)\], per_thread_candidates: &\[([\d, ]*)\], declared: (true|false) \}',
    text)
if not variants or not names:
    sys.exit(f"{table}: no variants or names found")
idx = lambda s: [variants[int(i)][0] for i in s.split(",") if i.strip()]
names = {n: (idx(c), idx(p), d == "true") for n, c, p, d in names}

def gcc_e(src, *defs):
    args = ["gcc", "-E", "-P", "-I", inc, "-x", "c", "-"] + [f"-D{d}" for d in defs]
    return subprocess.run(args, input=src, capture_output=True, text=True, check=True).stdout

HEAD = "#include <cuda.h>\n#include <cudaTypedefs.h>\n"

# What each name expands to, in both modes, and cudaTypedefs.h's PFN_<name> macro if any.
probe = HEAD + "#define CUDRV_CHECK(n) @@ #n n PFN_##n\n" + "".join(f"CUDRV_CHECK({n})\n" for n in names)
def expansions(*defs):
    out = {}
    for m in re.finditer(r'@@ "(\w+)" (\w+) (\w+)', gcc_e(probe, *defs)):
        out[m.group(1)] = (m.group(2), m.group(3))
    missing = set(names) - set(out)
    if missing:
        sys.exit(f"the preprocessor did not expand {sorted(missing)[:5]}")
    return out
normal, per_thread = expansions(), expansions("CUDA_API_PER_THREAD_DEFAULT_STREAM")

# Every typedef and every exported name, as cudaTypedefs.h and cuda.h declare them with
# __CUDA_API_VERSION_INTERNAL (old versions included).
internal = gcc_e(HEAD, "__CUDA_API_VERSION_INTERNAL")
typedefs = collections.defaultdict(list)  # (symbol, suffix) -> versions, oldest first
for sym, ver, suf in re.findall(r"\(\s*\*\s*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)", internal):
    typedefs[(sym, suf or "")].append(int(ver))
for k in typedefs:
    typedefs[k].sort()
exported = set(re.findall(r"\bCUresult\s+(\w+)\s*\(", internal))
symbols = {s for s, _ in typedefs}

def split_k(e):
    """`cuMemAlloc_v2` -> (`cuMemAlloc`, 2), `cuMemAlloc` -> (`cuMemAlloc`, 1)."""
    if e in symbols:
        return e, 1
    m = re.fullmatch(r"(\w+)_v(\d+)", e)
    if m and m.group(1) in symbols:
        return m.group(1), int(m.group(2))
    return None, None

errors, asserts, notes = [], [], []
def same_type(a, b, why, mode="internal"):
    asserts.append((a, b, why, mode))

# The premise: exported names sym, sym_v2.. sym_vN <-> the N typedefs, oldest first.
for (sym, suf), versions in sorted(typedefs.items()):
    if suf:
        continue
    ks = sorted(k for e in exported for s, k in [split_k(e)] if s == sym and (e == sym or e not in symbols))
    if ks != list(range(1, len(versions) + 1)):
        errors.append(f"{sym}: cuda.h declares exported names {ks}, cudaTypedefs.h has {len(versions)} versions")
        continue
    for k, v in enumerate(versions, 1):
        same_type(f"&{sym}" if k == 1 else f"&{sym}_v{k}", f"PFN_{sym}_v{v}", "exported name vs its typedef")

def ident_of(sym, version, suffix=""):
    return f"{sym}_v{version}{suffix}"

pfn_disagree = []
for name, (cands, pt_cands, declared) in sorted(names.items()):
    e, pfn_macro = normal[name]
    e_pt, pfn_macro_pt = per_thread[name]
    sym, k = split_k(e)
    if sym is None or k > len(typedefs[(sym, "")]):
        if declared:
            errors.append(f"{name}: cuda.h maps it to {e}, which is no variant's, but the table says declared")
        continue
    want = ident_of(sym, typedefs[(sym, "")][k - 1])
    if not declared:
        errors.append(f"{name}: cuda.h binds it to {want} ({e}), the table says not declared")
        continue
    if not cands or cands[0] != want:
        errors.append(f"{name}: cuda.h binds {e} = {want}; the table's default is {cands[:1]}")
        continue
    same_type(f"&{name}", f"PFN_{want}", "the default has cuda.h's prototype", "normal")
    if pfn_macro.startswith("PFN_") and pfn_macro != f"PFN_{name}" and pfn_macro != f"PFN_{want}":
        pfn_disagree.append(f"{name} ({pfn_macro[4:]}, cuda.h: {want})")
    want_v = typedefs[(sym, "")][k - 1]
    for c in cands[1:]:
        csym, cver = re.fullmatch(r"(\w+)_v(\d+)", c).groups()
        if csym != sym or int(cver) >= want_v:
            errors.append(f"{name}: candidate {c} is not an older variant of {want}")
        same_type(f"PFN_{c}", f"PFN_{want}", f"candidate {c} of {name}")
    # Per-thread mode.
    if e_pt == e:
        if pt_cands:
            errors.append(f"{name}: cuda.h maps it to {e} in both modes, the table has per-thread candidates {pt_cands}")
        continue
    m = re.fullmatch(r"(\w+)(_ptds|_ptsz)", e_pt)
    if not m or m.group(1) != e:
        errors.append(f"{name}: per-thread mode maps it to {e_pt}, not a per-thread form of {e}")
        continue
    suf = m.group(2)
    later = [v for v in typedefs[(sym, "")] if v > want_v]
    twins = [v for v in typedefs.get((sym, suf), []) if want_v <= v < (later[0] if later else 1 << 31)]
    if not twins:
        if pt_cands:
            errors.append(f"{name}: cudaTypedefs.h has no {suf} typedef for {e_pt}, the table has {pt_cands}")
        else:
            notes.append(f"{name} -> {e_pt} (no {suf} typedef: binds {want} in both modes)")
        continue
    want_pt = ident_of(sym, twins[0], suf)
    if not pt_cands or pt_cands[0] != want_pt:
        errors.append(f"{name}: per-thread mode binds {e_pt} = {want_pt}; the table's is {pt_cands[:1]}")
        continue
    same_type(f"&{name}", f"PFN_{want_pt}", "per-thread: the default has cuda.h's prototype", "per-thread")
    if pfn_macro_pt.startswith("PFN_") and pfn_macro_pt != f"PFN_{name}" and pfn_macro_pt != f"PFN_{want_pt}":
        pfn_disagree.append(f"{name} per-thread ({pfn_macro_pt[4:]}, cuda.h: {want_pt})")
    for c in pt_cands[1:]:
        if not c.endswith(suf) or int(re.search(r"_v(\d+)_pt", c).group(1)) >= twins[0]:
            errors.append(f"{name}: per-thread candidate {c} is not an older variant of {want_pt}")
        same_type(f"PFN_{c}", f"PFN_{want_pt}", f"per-thread candidate {c} of {name}")

# The compiler checks the types: one translation unit per mode.
def compile_checks(items, *defs):
    src = HEAD + "".join(
        f'_Static_assert(__builtin_types_compatible_p(__typeof__({a}), {b}), "{a} is not {b}: {why}");\n'
        for a, b, why, _ in items)
    path = os.path.join(work, "check.c")
    open(path, "w").write(src)
    r = subprocess.run(["gcc", "-fsyntax-only", "-fmax-errors=0", "-I", inc, path] + [f"-D{d}" for d in defs],
                       capture_output=True, text=True)
    failed = re.findall(r'static assertion failed: "(.*?)"', r.stderr)
    if r.returncode != 0 and not failed:
        sys.exit("gcc failed:\n" + r.stderr[:2000])
    return failed
# Typedef against typedef in internal mode (which declares the older typedefs too).
errors += compile_checks([a for a in asserts if a[3] == "internal"], "__CUDA_API_VERSION_INTERNAL")
errors += compile_checks([a for a in asserts if a[3] == "normal"])
errors += compile_checks([a for a in asserts if a[3] == "per-thread"], "CUDA_API_PER_THREAD_DEFAULT_STREAM")

print(f"check-defaults: {spec}: {len(names)} names, {len(asserts)} type checks; "
      f"{len(errors)} error(s)")
for n in notes:
    print(f"  note: {n}")
if pfn_disagree:
    print(f"  note: cudaTypedefs.h's PFN_<name> macro names another variant than cuda.h for {len(pfn_disagree)}: "
          + ", ".join(pfn_disagree[:6]) + (" ..." if len(pfn_disagree) > 6 else ""))
for e in errors:
    print(f"  ERROR: {e}")
sys.exit(1 if errors else 0)
PY
    status=1
  fi
done
if [ "$status" -ne 0 ]; then
  echo "check-defaults.sh: some unversioned names do not bind what cuda.h binds" >&2
fi
exit "$status"
