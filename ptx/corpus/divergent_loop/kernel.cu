extern "C" __global__ void divergent_loop(const unsigned* in, unsigned* steps, unsigned* peak, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = (in[i] % 10000u) + 1u;
    unsigned s = 0; unsigned long long m = x;
    while (x != 1) {
        if (x & 1) x = 3 * x + 1; else x >>= 1;
        if (x > m) m = x;
        ++s;
        if (s > 100000) break;
    }
    steps[i] = s;
    peak[i] = (unsigned)(m % 4294967291ull);
}
