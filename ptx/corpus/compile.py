#!/usr/bin/env python3
"""Compiles every ptx/corpus/<case>/kernel.cu to kernel.ptx with NVRTC 13.0.

    pip install nvidia-cuda-nvrtc==13.0.88
    python3 ptx/corpus/compile.py [CASE...]

Options: --gpu-architecture=compute_90 -std=c++17, plus the words of <case>/options if
present (e.g. --use_fast_math). The PTX is committed, so CI needs no NVRTC.
"""
import ctypes
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_nvrtc():
    import nvidia

    for base in nvidia.__path__:
        lib = os.path.join(base, "cu13", "lib")
        if os.path.exists(os.path.join(lib, "libnvrtc.so.13")):
            # The builtins library must be loaded first (it is not on the loader's path).
            ctypes.CDLL(os.path.join(lib, "libnvrtc-builtins.so.13.0"), mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(os.path.join(lib, "libnvrtc.so.13"))
    raise SystemExit("libnvrtc.so.13 not found: pip install nvidia-cuda-nvrtc==13.0.88")


def compile_case(nvrtc, case_dir):
    src = open(os.path.join(case_dir, "kernel.cu")).read()
    opts = ["--gpu-architecture=compute_90", "-std=c++17"]
    optfile = os.path.join(case_dir, "options")
    if os.path.exists(optfile):
        opts += open(optfile).read().split()
    prog = ctypes.c_void_p()
    rc = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"kernel.cu", 0, None, None)
    assert rc == 0, rc
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        raise SystemExit(f"{case_dir}: compile failed:\n{log.value.decode()}")
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    header = f"// NVRTC {major.value}.{minor.value} (nvidia-cuda-nvrtc 13.0.88), options: {' '.join(opts)}\n"
    with open(os.path.join(case_dir, "kernel.ptx"), "w") as f:
        f.write(header + ptx.value.decode())


def main():
    nvrtc = load_nvrtc()
    names = sys.argv[1:] or sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(HERE, "*", "kernel.cu")))
    for n in names:
        compile_case(nvrtc, os.path.join(HERE, n))
        print("compiled", n)


if __name__ == "__main__":
    main()
