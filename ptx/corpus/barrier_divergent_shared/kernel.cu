extern "C" __global__ void barrier_divergent_shared(const float* in, float* out) {
    __shared__ float s[512];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 512 + t];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < (t & 7) + 1; ++k) acc += s[(t * 13 + k * 29) & 511];
    __syncthreads();
    s[t] = acc;
    __syncthreads();
    int cnt = __syncthreads_count(acc > 0.0f);
    out[blockIdx.x * 512 + t] = s[511 - t] + (float)cnt + (__syncthreads_or(t == 500) ? 0.5f : 0.0f);
}
