extern "C" __global__ void shuffles(const float* in, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[t];
    float* o = out + t * 5;
    o[0] = __shfl_sync(0xffffffffu, v, (threadIdx.x * 7) & 31);
    o[1] = __shfl_up_sync(0xffffffffu, v, 3);
    o[2] = __shfl_down_sync(0xffffffffu, v, 5, 16);
    o[3] = __shfl_xor_sync(0xffffffffu, v, 9, 16);
    o[4] = __shfl_sync(0xffffffffu, v, 2, 8);
}
