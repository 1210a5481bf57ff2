extern "C" __global__ void bitonic_sort(unsigned int* keys) {
    __shared__ unsigned int s[1024];
    unsigned int t = threadIdx.x;
    s[t] = keys[blockIdx.x * 1024 + t];
    __syncthreads();
    for (unsigned int k = 2; k <= 1024; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = t ^ j;
            if (ixj > t) {
                bool up = (t & k) == 0;
                unsigned int a = s[t], b = s[ixj];
                if ((a > b) == up) { s[t] = b; s[ixj] = a; }
            }
            __syncthreads();
        }
    }
    keys[blockIdx.x * 1024 + t] = s[t];
}
