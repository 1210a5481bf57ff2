#!/usr/bin/env python3
"""Compiles kernels.cu to kernels.ptx with NVRTC 13.0 (pip install nvidia-cuda-nvrtc==13.0.88).

    python3 scripts/probes/texture/build.py
"""
import ctypes, glob, os, sys

here = os.path.dirname(os.path.abspath(__file__))
libdir = None
for p in sys.path:
    c = glob.glob(os.path.join(p, "nvidia", "cu13", "lib"))
    if c:
        libdir = c[0]
        break
if libdir is None:
    sys.exit("NVRTC not found: pip install nvidia-cuda-nvrtc==13.0.88")
ctypes.CDLL(os.path.join(libdir, "libnvrtc-builtins.so.13.0"), mode=ctypes.RTLD_GLOBAL)
nvrtc = ctypes.CDLL(os.path.join(libdir, "libnvrtc.so.13"))
src = open(os.path.join(here, "kernels.cu"), "rb").read()
prog = ctypes.c_void_p()
assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=compute_90", b"-default-device"]
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t()
nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value)
nvrtc.nvrtcGetProgramLog(prog, log)
if rc != 0:
    sys.exit(log.value.decode())
nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n))
ptx = ctypes.create_string_buffer(n.value)
nvrtc.nvrtcGetPTX(prog, ptx)
open(os.path.join(here, "kernels.ptx"), "w").write(ptx.value.decode())
