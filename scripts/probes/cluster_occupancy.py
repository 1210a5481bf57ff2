#!/usr/bin/env python3
"""Records what the real driver answers for cluster occupancy (cuOccupancyMaxActiveClusters,
cuOccupancyMaxPotentialClusterSize) over cluster sizes, block sizes and dynamic shared
memory, for the `scale_f32` kernel of examples/kernels. Needs cuda-bindings and a GPU.
The stand-in's cluster model (standin/src/occupancy.rs) is fitted to and checked against
this table (docs/gpu-runs/h200/cluster-occupancy.txt).

usage: python3 scripts/probes/cluster_occupancy.py examples/kernels/scale_f32.ptx
"""
import sys
from cuda.bindings import driver as cu


def ok(r):
    err = r[0]
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(err))
    return r[1] if len(r) == 2 else r[1:]


def main():
    ptx = open(sys.argv[1], "rb").read() + b"\0"
    ok((cu.cuInit(0)[0], None))
    dev = ok(cu.cuDeviceGet(0))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    ok((cu.cuCtxSetCurrent(ctx)[0], None))
    sms = ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
    print(f"# multiprocessors {sms}")
    mod = ok(cu.cuModuleLoadData(ptx))
    f = ok(cu.cuModuleGetFunction(mod, b"scale_f32"))
    cu.cuFuncSetAttribute(f, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024)
    print("# nonportable cluster block smem blocks_per_sm active_clusters potential_size")
    for nonportable in (0, 1):
        cu.cuFuncSetAttribute(f, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, nonportable)
        sizes = range(1, 17) if nonportable else range(1, 9)
        for c in sizes:
            for block in (32, 64, 96, 128, 192, 256, 288, 320, 384, 512, 640, 768, 1024):
                for smem in (0, 8192, 24576, 49152, 120 * 1024):
                    attr = cu.CUlaunchAttribute()
                    attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                    attr.value.clusterDim.x = c
                    attr.value.clusterDim.y = 1
                    attr.value.clusterDim.z = 1
                    cfg = cu.CUlaunchConfig()
                    cfg.gridDimX = c * 16
                    cfg.gridDimY = 1
                    cfg.gridDimZ = 1
                    cfg.blockDimX = block
                    cfg.blockDimY = 1
                    cfg.blockDimZ = 1
                    cfg.sharedMemBytes = smem
                    cfg.attrs = [attr]
                    cfg.numAttrs = 1
                    r = cu.cuOccupancyMaxActiveClusters(f, cfg)
                    s = cu.cuOccupancyMaxPotentialClusterSize(f, cfg)
                    b = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, block, smem)
                    act = r[1] if r[0] == cu.CUresult.CUDA_SUCCESS else r[0].name
                    pot = s[1] if s[0] == cu.CUresult.CUDA_SUCCESS else s[0].name
                    bps = b[1] if b[0] == cu.CUresult.CUDA_SUCCESS else b[0].name
                    print(nonportable, c, block, smem, bps, act, pot)


main()
