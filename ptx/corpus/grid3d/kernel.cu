extern "C" __global__ void grid3d(unsigned* out) {
    unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    unsigned block = bx + gridDim.x * (by + gridDim.y * bz);
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned idx = block * (blockDim.x * blockDim.y * blockDim.z) + t;
    out[idx] = (bx << 24) | (by << 20) | (bz << 16) | (threadIdx.x << 8) | (threadIdx.y << 4) | threadIdx.z;
}
