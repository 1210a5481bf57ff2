extern "C" __global__ void scan(const int* in, int* out, int n) {
    __shared__ int buf[2][1024];
    int t = threadIdx.x, p = 0;
    buf[0][t] = t < n ? in[t] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int v = buf[p][t];
        if (t >= off) v += buf[p][t - off];
        buf[1 - p][t] = v;
        p = 1 - p;
        __syncthreads();
    }
    if (t < n) out[t] = buf[p][t];
}
