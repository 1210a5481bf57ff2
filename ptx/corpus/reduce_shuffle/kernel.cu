extern "C" __global__ void reduce_shuffle(const int* in, int* total, float* fpart, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    float f = i < n ? (float)in[i] * 0.5f : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
        f += __shfl_xor_sync(0xffffffffu, f, o);
    }
    __shared__ int warps[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) warps[w] = v;
    __syncthreads();
    if (w == 0) {
        v = lane < (blockDim.x >> 5) ? warps[lane] : 0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) atomicAdd(total, v);
    }
    if (i < n) fpart[i] = f;
}
