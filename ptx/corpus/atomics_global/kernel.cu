extern "C" __global__ void atomics_global(const int* in, int* acc, unsigned long long* acc64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    atomicAdd(&acc[0], v & 0xffff);
    atomicMax(&acc[1], v);
    atomicMin(&acc[2], v);
    atomicAnd((unsigned*)&acc[3], (unsigned)v | 0x0f0f0f0fu);
    atomicOr((unsigned*)&acc[4], (unsigned)v & 0x01010101u);
    atomicXor((unsigned*)&acc[5], (unsigned)v);
    atomicInc((unsigned*)&acc[6], 100u);
    int old = acc[7], assumed;
    do { assumed = old; old = atomicCAS(&acc[7], assumed, assumed + (v & 7)); } while (old != assumed);
    atomicAdd(&acc64[0], (unsigned long long)(unsigned)v);
    atomicMax(&acc64[1], (unsigned long long)(unsigned)v * 3ull);
    atomicDec((unsigned*)&acc[8], 50u);
    atomicExch(&acc[9 + (i & 1)], 1);
}
