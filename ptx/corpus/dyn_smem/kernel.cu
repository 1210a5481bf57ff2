extern "C" __global__ void dyn_smem(const int* in, int* out, int n) {
    extern __shared__ int s[];
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = in[base + t];
    __syncthreads();
    out[base + t] = s[blockDim.x - 1 - t] * 3 + s[(t + 1) % blockDim.x];
}
