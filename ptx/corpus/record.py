#!/usr/bin/env python3
"""Records the H200's outputs of the kernel corpus (run on a machine with the GPU).

    pip install cuda-python        # cuda.bindings.driver
    python3 ptx/corpus/record.py [CASE...]

For each ptx/corpus/<case>/ it loads kernel.ptx with cuModuleLoadData, makes the inputs
described by case.txt (the same deterministic generator as ptx/tests/corpus.rs), launches
the kernel, and writes every `out` buffer to <case>/h200/<buffer>.bin (raw little-endian
bytes), plus <case>/h200/driver.txt (driver version, device name) and the launch's result
code (<case>/h200/result.txt: CUDA_SUCCESS or the error). printf output goes to this
process's standard output. Commit the h200/ folders: ptx/tests/corpus.rs then compares
the executor's outputs with them byte for byte.
"""
import ctypes
import os
import struct
import sys

from cuda.bindings import driver as cu

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"u8": 1, "u16": 2, "f64": 8, "u64": 8}


def check(ret):
    err = ret[0] if isinstance(ret, tuple) else ret
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {err}")
    if isinstance(ret, tuple):
        return ret[1] if len(ret) == 2 else ret[1:]
    return None


def xorshift(seed):
    x = (seed * 2654435761 + 12345) & 0xFFFFFFFF
    if x == 0:
        x = 1
    while True:
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        yield x


def generate(ty, n, gen):
    size = SIZES.get(ty, 4)
    kind = gen[0] if gen else "zero"
    seed = int(gen[1]) if len(gen) > 1 else 0
    modulo = int(gen[2]) if len(gen) > 2 else 1
    rng = xorshift(seed)
    out = bytearray()
    for i in range(n):
        x = next(rng) if kind in ("rand", "randmod") else 0
        unit = (x >> 8) / 16777216.0 * 2.0 - 1.0
        if kind == "zero":
            out += bytes(size)
        elif kind == "iota":
            out += i.to_bytes(8, "little")[:size]
        elif kind == "rand" and ty == "f32":
            out += struct.pack("<f", unit)
        elif kind == "rand" and ty == "f64":
            out += struct.pack("<d", unit)
        elif kind == "randmod":
            out += (x % modulo).to_bytes(8, "little")[:size]
        else:
            out += x.to_bytes(8, "little")[:size]
    return bytes(out)


def scalar(ty, v):
    return {
        "f32": lambda: struct.pack("<f", float(v)),
        "f64": lambda: struct.pack("<d", float(v)),
        "i32": lambda: struct.pack("<i", int(v)),
        "u32": lambda: struct.pack("<I", int(v)),
        "u64": lambda: struct.pack("<Q", int(v)),
    }[ty]()


def record(name):
    d = os.path.join(HERE, name)
    spec = open(os.path.join(d, "case.txt")).read().splitlines()
    ptx = open(os.path.join(d, "kernel.ptx"), "rb").read() + b"\0"
    kernel, grid, block, smem = None, (1, 1, 1), (1, 1, 1), 0
    bufs, params = [], []
    for line in spec:
        w = line.split()
        if not w:
            continue
        if w[0] == "kernel":
            kernel = w[1]
        elif w[0] == "grid":
            grid = tuple(int(x) for x in w[1:4])
        elif w[0] == "block":
            block = tuple(int(x) for x in w[1:4])
        elif w[0] == "smem":
            smem = int(w[1])
        elif w[0] == "scalar":
            params.append(("bytes", scalar(w[1], w[2])))
        elif w[0] == "bytes":
            data = bytes.fromhex("".join(w[2:]))
            assert len(data) == int(w[1]), line
            params.append(("bytes", data))
        elif w[0] == "buf":
            out = w[-1] == "out"
            gen = w[4:-1] if out else w[4:]
            data = generate(w[2], int(w[3]), gen)
            bufs.append({"name": w[1], "data": data, "out": out})
            params.append(("buf", len(bufs) - 1))
    module = check(cu.cuModuleLoadData(ptx))
    func = check(cu.cuModuleGetFunction(module, kernel.encode()))
    for b in bufs:
        b["ptr"] = check(cu.cuMemAlloc(max(len(b["data"]), 1)))
        check(cu.cuMemcpyHtoD(b["ptr"], b["data"], len(b["data"])))
    storage = []
    for kind, v in params:
        raw = struct.pack("<Q", int(bufs[v]["ptr"])) if kind == "buf" else v
        storage.append(ctypes.create_string_buffer(raw, len(raw)))
    argv = (ctypes.c_void_p * len(storage))(*[ctypes.addressof(s) for s in storage])
    result = cu.cuLaunchKernel(func, *grid, *block, smem, 0, ctypes.addressof(argv), 0)[0]
    if result == cu.CUresult.CUDA_SUCCESS:
        result = cu.cuCtxSynchronize()[0]
    os.makedirs(os.path.join(d, "h200"), exist_ok=True)
    with open(os.path.join(d, "h200", "result.txt"), "w") as f:
        f.write(f"{result.name if hasattr(result, 'name') else result}\n")
    if result != cu.CUresult.CUDA_SUCCESS:
        print(f"{name}: launch failed: {result}", file=sys.stderr)
        return False
    for b in bufs:
        if b["out"]:
            host = bytearray(len(b["data"]))
            check(cu.cuMemcpyDtoH(host, b["ptr"], len(host)))
            open(os.path.join(d, "h200", b["name"] + ".bin"), "wb").write(bytes(host))
    for b in bufs:
        check(cu.cuMemFree(b["ptr"]))
    check(cu.cuModuleUnload(module))
    return True


def main():
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    version = check(cu.cuDriverGetVersion())
    devname = check(cu.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
    names = sys.argv[1:] or sorted(
        n for n in os.listdir(HERE) if os.path.exists(os.path.join(HERE, n, "kernel.ptx"))
    )
    ok = True
    for n in names:
        os.makedirs(os.path.join(HERE, n, "h200"), exist_ok=True)
        with open(os.path.join(HERE, n, "h200", "driver.txt"), "w") as f:
            f.write(f"driver {version}, {devname}\n")
        good = record(n)
        ok &= good
        print(("recorded " if good else "FAILED ") + n, flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
