extern "C" __global__ void printf_assert(const int* in, int* out) {
    int t = threadIdx.x;
    if (t < 3) printf("thread %d: in=%d hex=%08x f=%.3f s=%s\n", t, in[t], (unsigned)in[t], (double)in[t] * 0.001, "ok");
    out[t] = in[t] + 1;
}
